// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// A simulated CUDA runtime: the entry points resident and its tests call, on host threads and
// host memory, for tests on machines without a GPU (see simcuda.hpp for what it models).
// Linked instead of the CUDA runtime; never part of the library.

#include "simcuda/simcuda.hpp"

#include <cuda.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace sim = resident::testing::simcuda;

namespace {

using Clock = std::chrono::steady_clock;

[[noreturn]] void die(const std::string& why) {
  std::fprintf(stderr, "simcuda: %s\n", why.c_str());
  std::fflush(stderr);
  std::abort();
}

std::uint64_t env_number(const char* name, std::uint64_t fallback) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return fallback;
  return std::strtoull(text, nullptr, 10);
}

/// One device's memory: a file of `capacity` bytes mapped twice, once without access (the
/// addresses handed out, which host code cannot dereference, as on a device) and once readable
/// and writable (how the streams reach it). First fit, in 256-byte units (cudaMalloc's
/// alignment).
class Heap {
 public:
  static constexpr std::size_t alignment = 256;

  explicit Heap(std::size_t capacity) : capacity_(round_up(capacity, page())) {
    fd_ = ::memfd_create("simcuda-device", 0);
    if (fd_ < 0 || ::ftruncate(fd_, static_cast<off_t>(capacity_)) != 0)
      die("cannot make the device memory file: " + std::string(std::strerror(errno)));
    void* fenced = ::mmap(nullptr, capacity_, PROT_NONE, MAP_SHARED, fd_, 0);
    void* open = ::mmap(nullptr, capacity_, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
    if (fenced == MAP_FAILED || open == MAP_FAILED) die("cannot map the device memory");
    base_ = static_cast<std::byte*>(fenced);
    alias_ = static_cast<std::byte*>(open);
    free_[0] = capacity_;
  }
  ~Heap() {
    ::munmap(base_, capacity_);
    ::munmap(alias_, capacity_);
    ::close(fd_);
  }
  Heap(const Heap&) = delete;
  Heap& operator=(const Heap&) = delete;

  [[nodiscard]] std::size_t capacity() const { return capacity_; }
  [[nodiscard]] std::size_t used() const { return used_; }
  /// What an allocation of `bytes` takes.
  [[nodiscard]] static std::size_t taken(std::size_t bytes) { return round_up(bytes, alignment); }

  /// A device address of `bytes`, or null when no free run is large enough.
  std::byte* allocate(std::size_t bytes, std::uint64_t id) {
    const std::size_t size = round_up(bytes, alignment);
    for (auto run = free_.begin(); run != free_.end(); ++run) {
      if (run->second < size) continue;
      const std::size_t offset = run->first;
      const std::size_t left = run->second - size;
      free_.erase(run);
      if (left != 0) free_[offset + size] = left;
      live_[offset] = {size, bytes, id};
      used_ += size;
      return base_ + offset;
    }
    return nullptr;
  }
  /// Frees the allocation starting at `pointer`; false when there is none.
  bool release(const void* pointer) {
    if (!contains_address(pointer)) return false;
    const std::size_t offset = offset_of(pointer);
    const auto found = live_.find(offset);
    if (found == live_.end()) return false;
    std::size_t start = offset;
    std::size_t size = found->second.size;
    used_ -= size;
    std::memset(alias_ + offset, 0xDD, size);  // freed memory reads as garbage
    live_.erase(found);
    // Merges with the free runs on either side.
    auto next = free_.lower_bound(start);
    if (next != free_.end() && next->first == start + size) {
      size += next->second;
      next = free_.erase(next);
    }
    if (next != free_.begin()) {
      auto before = std::prev(next);
      if (before->first + before->second == start) {
        start = before->first;
        size += before->second;
        free_.erase(before);
      }
    }
    free_[start] = size;
    return true;
  }
  /// Keeps the allocation at `pointer` taken but makes it nobody's (id 0): a memory pool's
  /// cached block, which work still using it reaches after its free.
  void cache(const void* pointer) {
    Live& block = live_.at(offset_of(pointer));
    block.id = 0;
    std::memset(alias_ + offset_of(pointer), 0xDD, block.size);  // freed memory reads as garbage
  }
  /// Hands the cached block at `pointer` out again, for `bytes`, as allocation `id`.
  void reuse(const void* pointer, std::size_t bytes, std::uint64_t id) {
    Live& block = live_.at(offset_of(pointer));
    block.requested = bytes;
    block.id = id;
  }
  [[nodiscard]] bool contains_address(const void* pointer) const {
    const auto* byte = static_cast<const std::byte*>(pointer);
    return byte >= base_ && byte < base_ + capacity_;
  }
  /// Whether `[pointer, pointer + bytes)` shares a byte with this device's memory.
  [[nodiscard]] bool overlaps(const void* pointer, std::size_t bytes) const {
    const auto first = reinterpret_cast<std::uintptr_t>(pointer);  // NOLINT: an address
    const auto base = reinterpret_cast<std::uintptr_t>(base_);     // NOLINT: an address
    return bytes != 0 && first < base + capacity_ && (first >= base || base - first < bytes);
  }
  /// The id of the live allocation holding `[pointer, pointer + bytes)`, if one does.
  [[nodiscard]] std::optional<std::uint64_t> holder(const void* pointer, std::size_t bytes) const {
    if (!contains_address(pointer)) return std::nullopt;
    const std::size_t offset = offset_of(pointer);
    auto found = live_.upper_bound(offset);
    if (found == live_.begin()) return std::nullopt;
    --found;
    if (found->second.id == 0 || bytes > found->second.requested ||
        offset - found->first > found->second.requested - bytes)
      return std::nullopt;
    return found->second.id;
  }
  /// Whether `pointer` lies in a block a memory pool keeps (freed, and not handed out since).
  [[nodiscard]] bool cached_at(const void* pointer) const {
    if (!contains_address(pointer)) return false;
    const std::size_t offset = offset_of(pointer);
    auto found = live_.upper_bound(offset);
    if (found == live_.begin()) return false;
    --found;
    return found->second.id == 0 && offset < found->first + found->second.size;
  }
  /// The live allocation (its start and the bytes asked for) whose bytes lie nearest to
  /// `pointer`: the one it runs past, or the one it falls short of (an address just past one
  /// allocation and at the start of the next is the next's). A `pointer` below this device's
  /// memory (a range that runs into it) is nearest to its first allocation.
  [[nodiscard]] std::optional<std::pair<const std::byte*, std::size_t>> nearest(
      const void* pointer) const {
    const std::size_t offset = contains_address(pointer) ? offset_of(pointer) : 0;
    std::optional<std::pair<const std::byte*, std::size_t>> best;
    std::size_t best_distance = 0;
    for (const auto& [start, block] : live_) {
      if (block.id == 0) continue;
      const std::size_t end = start + block.requested;
      const std::size_t distance =
          offset < start ? start - offset : (offset >= end ? offset - end + 1 : 0);
      if (!best || distance < best_distance) {
        best = std::make_pair(base_ + start, block.requested);
        best_distance = distance;
      }
    }
    return best;
  }
  [[nodiscard]] bool live(std::uint64_t id) const {
    if (id == 0) return false;  // a pool's cached block
    return std::any_of(live_.begin(), live_.end(),
                       [&](const auto& entry) { return entry.second.id == id; });
  }
  [[nodiscard]] std::byte* alias(const void* pointer) const { return alias_ + offset_of(pointer); }

 private:
  struct Live {
    std::size_t size;       // rounded up
    std::size_t requested;  // what the caller asked for: reads beyond it are out of bounds
    std::uint64_t id;       // 0: freed into a memory pool, which keeps it (see `cache`)
  };
  static std::size_t page() { return static_cast<std::size_t>(::sysconf(_SC_PAGESIZE)); }
  static std::size_t round_up(std::size_t bytes, std::size_t unit) {
    return (bytes + unit - 1) / unit * unit;
  }
  [[nodiscard]] std::size_t offset_of(const void* pointer) const {
    return static_cast<std::size_t>(static_cast<const std::byte*>(pointer) - base_);
  }

  std::size_t capacity_;
  int fd_ = -1;
  std::byte* base_ = nullptr;
  std::byte* alias_ = nullptr;
  std::map<std::size_t, std::size_t> free_;  // offset -> bytes
  std::map<std::size_t, Live> live_;         // offset -> allocation
  std::size_t used_ = 0;
};

/// A stream: a host thread that runs its operations in order, each after a random delay.
class StreamState : public std::enable_shared_from_this<StreamState> {
 public:
  StreamState(int device, unsigned max_delay_us, unsigned delay_one_in, std::uint64_t seed)
      : device_(device),
        max_delay_us_(max_delay_us),
        delay_one_in_(std::max(delay_one_in, 1u)),
        random_(seed) {
    worker_ = std::thread([this] { run(); });
  }
  ~StreamState() {
    if (!worker_.joinable()) return;  // retired: the thread itself is destroying this
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    changed_.notify_all();
    worker_.join();
  }
  /// `cudaStreamDestroy`: returns at once; the thread finishes the work queued, then ends (the
  /// memory that work uses must outlive it, as on a device).
  void retire() {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
      keep_ = shared_from_this();
    }
    changed_.notify_all();
    worker_.detach();
  }
  StreamState(const StreamState&) = delete;
  StreamState& operator=(const StreamState&) = delete;

  [[nodiscard]] int device() const { return device_; }

  void push(std::function<void()> work) {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      queue_.push_back(std::move(work));
      ++enqueued_;
    }
    changed_.notify_all();
  }
  /// Waits until the work queued before the call is done.
  void synchronize() {
    std::unique_lock<std::mutex> lock(mutex_);
    const std::uint64_t target = enqueued_;
    changed_.wait(lock, [&] { return done_ >= target; });
  }
  [[nodiscard]] bool idle() {
    const std::lock_guard<std::mutex> lock(mutex_);
    return done_ == enqueued_;
  }

 private:
  void run() {
    std::shared_ptr<StreamState> self;  // released last, after the lock (see `retire`)
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      changed_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) {  // stopped, and nothing left
        self = std::move(keep_);
        return;
      }
      std::function<void()> work = std::move(queue_.front());
      queue_.pop_front();
      const bool delayed = max_delay_us_ != 0 && random_() % delay_one_in_ == 0;
      const unsigned delay = delayed ? static_cast<unsigned>(random_() % max_delay_us_) + 1 : 0;
      lock.unlock();
      if (delay != 0) std::this_thread::sleep_for(std::chrono::microseconds(delay));
      work();
      lock.lock();
      ++done_;
      changed_.notify_all();
    }
  }

  int device_;
  unsigned max_delay_us_;
  unsigned delay_one_in_;
  std::mt19937_64 random_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::function<void()>> queue_;
  std::uint64_t enqueued_ = 0, done_ = 0;
  bool stop_ = false;
  std::shared_ptr<StreamState> keep_;  // set when retired: the thread keeps this alive
  std::thread worker_;
};

/// An event: the generation last recorded and the generation its stream has reached.
struct EventState {
  int device;
  bool timing;
  std::mutex mutex;
  std::condition_variable reached;
  std::uint64_t recorded = 0, completed = 0;
  Clock::time_point at{};

  void wait_for(std::uint64_t generation) {
    std::unique_lock<std::mutex> lock(mutex);
    reached.wait(lock, [&] { return completed >= generation; });
  }
};

/// A stream-ordered memory pool: a device's default pool, or one `cudaMemPoolCreate` made. Its
/// blocks are taken from the device's heap; a free its stream reaches puts the block in the
/// cache (reserved, no longer used) that the pool's next allocations take from first, and the
/// release threshold decides how much of the cache the pool keeps (applied as each free is
/// reached, where a device applies it at the next synchronisation).
struct PoolState {
  PoolState(int on, bool is_default, std::size_t most) noexcept
      : device(on), default_pool(is_default), max_size(most) {}

  int device;
  bool default_pool;
  std::size_t max_size;  // reserved bytes at most; 0: the device's
  std::uint64_t release_threshold = 0;
  int reuse_follow_event_dependencies = 1;  // kept for the attributes; reuse needs no order here
  int reuse_allow_opportunistic = 1;
  int reuse_allow_internal_dependencies = 1;
  std::multimap<std::size_t, std::byte*> cached;  // bytes taken -> block
  std::size_t reserved = 0, used = 0;             // bytes taken from the heap; handed out
  std::size_t reserved_high = 0, used_high = 0;
  bool destroyed = false;  // its handle is gone; it gives every block back as it returns
};

/// A block a pool holds, as `State::pool_blocks` keeps it.
struct PoolBlock {
  enum Use { in_use, freeing, cached } use;  // freeing: `cudaFreeAsync`'d, not yet reached
  std::size_t size;                          // bytes taken from the heap
  std::shared_ptr<PoolState> pool;
};

}  // namespace

// The runtime's handles are pointers to these (declared, never defined, by the CUDA headers).
struct CUstream_st {
  std::shared_ptr<StreamState> state;
};
struct CUevent_st {
  std::shared_ptr<EventState> state;
};
struct CUmemPoolHandle_st {
  std::shared_ptr<PoolState> state;
};

namespace {

/// Page-locked host memory: from `cudaMallocHost`/`cudaHostAlloc` (owned) or registered.
struct PinnedRange {
  std::size_t bytes;
  bool owned;
  std::uint64_t id;
};

/// The whole machine. Never destroyed: datasets of static lifetime release into it at exit.
struct State {
  std::mutex mutex;
  sim::Machine settings;
  std::vector<std::unique_ptr<Heap>> heaps;
  std::vector<bool> contexts;  // primary context made (a device set or used on some thread)
  std::map<const std::byte*, PinnedRange> pinned;
  std::set<cudaStream_t> streams;
  std::set<cudaEvent_t> events;
  std::vector<std::shared_ptr<StreamState>> legacy;   // stream 0 of each device
  std::set<cudaMemPool_t> pools;                      // live pool handles, default pools included
  std::vector<cudaMemPool_t> default_pools;           // each device's, never destroyed
  std::vector<cudaMemPool_t> current_pools;           // each device's `cudaMallocAsync` pool
  std::map<const std::byte*, PoolBlock> pool_blocks;  // every block a pool holds
  std::uint64_t next_id = 1;  // of allocations and pinned ranges; 0 is a pool's cached block
  std::uint64_t streams_made = 0;

  State() {
    settings.devices = static_cast<int>(env_number("RESIDENT_SIMCUDA_DEVICES", 1));
    settings.device_bytes =
        static_cast<std::size_t>(env_number("RESIDENT_SIMCUDA_DEVICE_BYTES", std::size_t{1} << 30));
    settings.max_delay_us =
        static_cast<unsigned>(env_number("RESIDENT_SIMCUDA_DELAY_US", settings.max_delay_us));
    settings.delay_one_in =
        static_cast<unsigned>(env_number("RESIDENT_SIMCUDA_DELAY_ONE_IN", settings.delay_one_in));
    settings.seed = env_number("RESIDENT_SIMCUDA_SEED", 1);
    build();
  }
  void build() {
    heaps.clear();
    legacy.clear();
    for (int device = 0; device < settings.devices; ++device)
      heaps.push_back(std::make_unique<Heap>(settings.device_bytes));
    contexts.assign(static_cast<std::size_t>(std::max(settings.devices, 0)), false);
    legacy.resize(heaps.size());
    // Default pools outlive a rebuild (a test may keep their handles); every device's current
    // pool is its default again.
    for (std::size_t device = default_pools.size(); device < heaps.size(); ++device) {
      auto pool = std::make_shared<PoolState>(static_cast<int>(device), true, 0);
      auto* made = new CUmemPoolHandle_st{std::move(pool)};  // NOLINT: the handle, kept forever
      default_pools.push_back(made);
      pools.insert(made);
    }
    current_pools.assign(default_pools.begin(),
                         default_pools.begin() + static_cast<std::ptrdiff_t>(heaps.size()));
  }
  std::shared_ptr<StreamState> new_stream(int device) {
    return std::make_shared<StreamState>(device, settings.max_delay_us, settings.delay_one_in,
                                         settings.seed * 1000003 + streams_made++);
  }
};

State& state() {
  static State* const instance = new State();  // NOLINT: never destroyed, see State
  return *instance;
}

std::atomic<std::size_t> calls_made{0};

/// The failure `fail_call` armed. While nothing is armed a call reads `failure_armed` alone, so
/// that calls from different threads do not synchronise through the mutex (which would hide
/// their races from ThreadSanitizer).
struct Failure {
  std::mutex mutex;
  std::string only;           // the entry point to fail; empty: any
  std::size_t remaining = 0;  // the calls (of `only`) to let through first
  cudaError_t error = cudaSuccess;
  bool fired = false;
};
std::atomic<bool> failure_armed{false};

Failure& failure() {
  static Failure* const instance = new Failure();  // NOLINT: never destroyed, as State
  return *instance;
}

thread_local cudaError_t last_error = cudaSuccess;
thread_local int current_device = 0;

/// Returns `status`, remembering an error for `cudaGetLastError`.
cudaError_t result(cudaError_t status) {
  if (status != cudaSuccess) last_error = status;
  return status;
}

/// Counts the call of entry point `call`; the injected error when it is the one armed to fail.
std::optional<cudaError_t> injected(const char* call) {
  calls_made.fetch_add(1);
  if (!failure_armed.load()) return std::nullopt;
  Failure& armed = failure();
  const std::lock_guard<std::mutex> lock(armed.mutex);
  if (!failure_armed.load() || (!armed.only.empty() && armed.only != call)) return std::nullopt;
  if (armed.remaining > 0) {
    --armed.remaining;
    return std::nullopt;
  }
  failure_armed = false;
  armed.fired = true;
  return result(armed.error);
}

/// A place a copy reads or writes, resolved when the copy is enqueued.
struct Place {
  enum Kind { device, pinned, pageable } kind;
  std::byte* reach;  // the host address the streams use
  std::uint64_t id;  // of the allocation or pinned range (0 for pageable)
};

/// Where `[pointer, pointer + bytes)` lies; nothing for a range that starts in device memory
/// but is not within one live allocation. The caller holds the machine's mutex.
std::optional<Place> locate(State& m, const void* pointer, std::size_t bytes) {
  for (const auto& heap : m.heaps) {
    if (!heap->contains_address(pointer)) continue;
    const auto id = heap->holder(pointer, bytes);
    if (!id) return std::nullopt;
    return Place{Place::device, heap->alias(pointer), *id};
  }
  const auto* byte = static_cast<const std::byte*>(pointer);
  auto found = m.pinned.upper_bound(byte);
  if (found != m.pinned.begin()) {
    --found;
    if (byte + bytes <= found->first + found->second.bytes)
      return Place{Place::pinned, const_cast<std::byte*>(byte), found->second.id};  // NOLINT
  }
  return Place{Place::pageable, const_cast<std::byte*>(byte), 0};  // NOLINT
}

/// Whether the allocation or range `place` named when enqueued still exists (caller locks).
bool still_there(State& m, const Place& place) {
  if (place.kind == Place::pageable) return true;
  if (place.kind == Place::device)
    return std::any_of(m.heaps.begin(), m.heaps.end(),
                       [&](const auto& heap) { return heap->live(place.id); });
  return std::any_of(m.pinned.begin(), m.pinned.end(),
                     [&](const auto& range) { return range.second.id == place.id; });
}

/// Stops the program when stream work reaches memory freed since it was enqueued: on a device
/// this is a use-after-free that corrupts or faults at random.
void check_alive(const Place& place, const char* what) {
  State& m = state();
  const std::lock_guard<std::mutex> lock(m.mutex);
  if (!still_there(m, place))
    die(std::string("stream work ") + what +
        " memory that was freed after the work was enqueued (a free that is not ordered after "
        "the stream's use of the memory)");
}

/// The stream state of a handle (stream 0 is the current device's legacy stream); null for a
/// handle that does not exist. The caller holds the machine's mutex.
std::shared_ptr<StreamState> stream_state(State& m, cudaStream_t stream) {
  if (stream == nullptr || stream == cudaStreamLegacy || stream == cudaStreamPerThread) {
    if (current_device < 0 || static_cast<std::size_t>(current_device) >= m.legacy.size())
      return nullptr;
    auto& legacy = m.legacy[static_cast<std::size_t>(current_device)];
    if (!legacy) legacy = m.new_stream(current_device);
    return legacy;
  }
  if (m.streams.count(stream) == 0) return nullptr;
  return stream->state;
}

std::shared_ptr<EventState> event_state(State& m, cudaEvent_t event) {
  if (event == nullptr || m.events.count(event) == 0) return nullptr;
  return event->state;
}

/// `stream_state` and `event_state`, under the machine's mutex.
std::shared_ptr<StreamState> find_stream(cudaStream_t stream) {
  State& m = state();
  const std::lock_guard<std::mutex> lock(m.mutex);
  return stream_state(m, stream);
}
std::shared_ptr<EventState> find_event(cudaEvent_t event) {
  State& m = state();
  const std::lock_guard<std::mutex> lock(m.mutex);
  return event_state(m, event);
}

/// Removes `handle` from the live handles of its kind; false for one that is not live.
template <class Handle>
bool forget(std::set<Handle> State::*live, Handle handle) {
  State& m = state();
  const std::lock_guard<std::mutex> lock(m.mutex);
  return handle != nullptr && (m.*live).erase(handle) != 0;
}

/// The generation recorded last on `event` (0: never recorded).
std::uint64_t last_record(EventState& event) {
  const std::lock_guard<std::mutex> lock(event.mutex);
  return event.recorded;
}

bool device_exists(const State& m, int device) {
  return device >= 0 && static_cast<std::size_t>(device) < m.heaps.size();
}

CUresult CUDAAPI primary_context_state(CUdevice device, unsigned int* flags, int* active) {
  State& m = state();
  const std::lock_guard<std::mutex> lock(m.mutex);
  if (!device_exists(m, device)) return CUDA_ERROR_INVALID_DEVICE;
  if (flags != nullptr) *flags = 0;
  if (active != nullptr) *active = m.contexts[static_cast<std::size_t>(device)] ? 1 : 0;
  return CUDA_SUCCESS;
}

/// The pool of a handle; null for one that does not exist. The caller holds the machine's mutex.
std::shared_ptr<PoolState> pool_state(State& m, cudaMemPool_t pool) {
  if (pool == nullptr || m.pools.count(pool) == 0) return nullptr;
  return pool->state;
}

/// Gives `pool`'s cached blocks back to its device, largest first, as long as the pool keeps
/// `keep` reserved bytes or more (what `cudaMemPoolTrimTo` promises). The caller locks.
void trim(State& m, PoolState& pool, std::uint64_t keep) {
  if (!device_exists(m, pool.device)) return;  // a pool of a device gone holds no blocks
  Heap& heap = *m.heaps[static_cast<std::size_t>(pool.device)];
  auto block = pool.cached.end();
  while (block != pool.cached.begin()) {
    --block;
    if (pool.reserved - block->first < keep) continue;
    pool.reserved -= block->first;
    m.pool_blocks.erase(block->second);
    heap.release(block->second);
    block = pool.cached.erase(block);
  }
}

/// A block of `bytes` from `pool`: the smallest cached block that holds them, else new memory
/// from the device, after giving the pool's cache back where the device or the pool's maximum
/// is short of room (as the driver does before it reports a pool out of memory). Null where
/// there is no room. The caller locks.
std::byte* pool_take(State& m, const std::shared_ptr<PoolState>& pool, std::size_t bytes) {
  Heap& heap = *m.heaps[static_cast<std::size_t>(pool->device)];
  const std::uint64_t id = m.next_id++;
  std::byte* block = nullptr;
  std::size_t size = Heap::taken(bytes);
  if (const auto cached = pool->cached.lower_bound(size); cached != pool->cached.end()) {
    size = cached->first;
    block = cached->second;
    pool->cached.erase(cached);
    heap.reuse(block, bytes, id);
    m.pool_blocks.at(block).use = PoolBlock::in_use;
  } else {
    const auto fits = [&] {
      return pool->max_size == 0 || pool->reserved + size <= pool->max_size;
    };
    if (fits()) block = heap.allocate(bytes, id);
    if (block == nullptr) {
      trim(m, *pool, 0);
      if (fits()) block = heap.allocate(bytes, id);
    }
    if (block == nullptr) return nullptr;
    pool->reserved += size;
    m.pool_blocks.emplace(block, PoolBlock{PoolBlock::in_use, size, pool});
  }
  pool->used += size;
  pool->reserved_high = std::max(pool->reserved_high, pool->reserved);
  pool->used_high = std::max(pool->used_high, pool->used);
  std::memset(heap.alias(block), 0xA5, bytes);  // fresh memory is not zeroed on a device
  return block;
}

/// A stream reached the free of pool block `block`: the block goes to its pool's cache, which
/// keeps what the release threshold allows (nothing, for a destroyed pool).
void free_reached(const std::byte* block) {
  State& m = state();
  const std::lock_guard<std::mutex> lock(m.mutex);
  const auto found = m.pool_blocks.find(block);
  if (found == m.pool_blocks.end() || found->second.use != PoolBlock::freeing)
    die("a stream reached the free of a block its pool does not hold");
  const std::shared_ptr<PoolState> pool = found->second.pool;  // outlives the entry's trim
  m.heaps[static_cast<std::size_t>(pool->device)]->cache(block);
  found->second.use = PoolBlock::cached;
  pool->used -= found->second.size;
  pool->cached.emplace(found->second.size, const_cast<std::byte*>(block));  // NOLINT: its own
  trim(m, *pool, pool->destroyed ? 0 : pool->release_threshold);
}

/// `cudaMallocAsync` (`handle` null: the current pool of the stream's device) and
/// `cudaMallocFromPoolAsync`. The memory is taken at once: work the stream runs later finds it
/// allocated, as the allocation's stream order promises.
cudaError_t allocate_async(void** pointer, std::size_t bytes, cudaMemPool_t handle,
                           cudaStream_t stream) {
  if (pointer == nullptr) return result(cudaErrorInvalidValue);
  *pointer = nullptr;
  State& m = state();
  const std::lock_guard<std::mutex> lock(m.mutex);
  const std::shared_ptr<StreamState> queue = stream_state(m, stream);
  if (!queue) return result(cudaErrorInvalidResourceHandle);
  const std::shared_ptr<PoolState> pool =
      handle != nullptr ? pool_state(m, handle)
                        : m.current_pools[static_cast<std::size_t>(queue->device())]->state;
  if (!pool || !device_exists(m, pool->device)) return result(cudaErrorInvalidValue);
  m.contexts[static_cast<std::size_t>(pool->device)] = true;
  if (bytes == 0) return cudaSuccess;
  std::byte* block = pool_take(m, pool, bytes);
  if (block == nullptr) return result(cudaErrorMemoryAllocation);
  *pointer = block;
  return cudaSuccess;
}

/// What `reach` says of `bytes` at `pointer` that are not within one live allocation of `heap`.
std::string outside(const Heap& heap, const void* pointer, std::size_t bytes) {
  char text[256];  // NOLINT(modernize-avoid-c-arrays): snprintf's buffer
  std::snprintf(text, sizeof text,
                "a kernel reached %zu bytes at %p, which do not lie within one live device "
                "allocation",
                bytes, pointer);
  std::string why = text;
  if (heap.cached_at(pointer)) why += " (the address is in a block freed to a memory pool)";
  if (const auto near = heap.nearest(pointer)) {
    std::snprintf(text, sizeof text, "; the nearest allocation is %p, of %zu bytes (up to %p)",
                  static_cast<const void*>(near->first), near->second,
                  static_cast<const void*>(near->first + near->second));
    why += text;
  } else {
    why += "; no device allocation is live";
  }
  return why;
}

/// Enqueues a copy on `stream`; `wait`: returns once it is done (the synchronous calls).
cudaError_t copy(void* destination, const void* source, std::size_t bytes, cudaMemcpyKind kind,
                 cudaStream_t stream, bool wait) {
  State& m = state();
  std::shared_ptr<StreamState> queue;
  std::optional<Place> to, from;
  {
    const std::lock_guard<std::mutex> lock(m.mutex);
    queue = stream_state(m, stream);
    if (!queue) return result(cudaErrorInvalidResourceHandle);
    if (bytes == 0) return cudaSuccess;
    to = locate(m, destination, bytes);
    from = locate(m, source, bytes);
  }
  if (!to || !from || destination == nullptr || source == nullptr)
    return result(cudaErrorInvalidValue);
  const bool to_device = to->kind == Place::device;
  const bool from_device = from->kind == Place::device;
  const bool fits = kind == cudaMemcpyDefault ||
                    (kind == cudaMemcpyHostToDevice && to_device && !from_device) ||
                    (kind == cudaMemcpyDeviceToHost && !to_device && from_device) ||
                    (kind == cudaMemcpyDeviceToDevice && to_device && from_device) ||
                    (kind == cudaMemcpyHostToHost && !to_device && !from_device);
  if (!fits) return result(cudaErrorInvalidValue);
  if (from->kind == Place::pageable) {
    // The driver stages pageable memory when the copy is enqueued: the caller may reuse it
    // as soon as the call returns.
    auto staged = std::make_shared<std::vector<std::byte>>(from->reach, from->reach + bytes);
    const Place target = *to;
    queue->push([staged, target] {
      check_alive(target, "wrote");
      std::memcpy(target.reach, staged->data(), staged->size());
    });
    if (wait || to->kind == Place::pageable) queue->synchronize();
    return cudaSuccess;
  }
  const Place target = *to, origin = *from;
  queue->push([target, origin, bytes] {
    check_alive(origin, "read");
    check_alive(target, "wrote");
    std::memcpy(target.reach, origin.reach, bytes);
  });
  // Into pageable memory the copy is complete when the call returns.
  if (wait || to->kind == Place::pageable) queue->synchronize();
  return cudaSuccess;
}

cudaError_t memset_on(void* destination, int value, std::size_t bytes, cudaStream_t stream,
                      bool wait) {
  State& m = state();
  std::shared_ptr<StreamState> queue;
  std::optional<Place> to;
  {
    const std::lock_guard<std::mutex> lock(m.mutex);
    queue = stream_state(m, stream);
    if (!queue) return result(cudaErrorInvalidResourceHandle);
    if (bytes == 0) return cudaSuccess;
    to = locate(m, destination, bytes);
  }
  if (!to || to->kind == Place::pageable) return result(cudaErrorInvalidValue);
  const Place target = *to;
  queue->push([target, value, bytes] {
    check_alive(target, "wrote");
    std::memset(target.reach, value, bytes);
  });
  if (wait) queue->synchronize();
  return cudaSuccess;
}

cudaError_t host_allocate(void** pointer, std::size_t bytes) {
  if (pointer == nullptr) return result(cudaErrorInvalidValue);
  *pointer = nullptr;
  if (bytes == 0) return cudaSuccess;
  State& m = state();
  const std::lock_guard<std::mutex> lock(m.mutex);
  if (m.heaps.empty()) return result(cudaErrorNoDevice);
  const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  void* memory = std::aligned_alloc(page, (bytes + page - 1) / page * page);
  if (memory == nullptr) return result(cudaErrorMemoryAllocation);
  m.pinned[static_cast<std::byte*>(memory)] = {bytes, true, m.next_id++};
  *pointer = memory;
  return cudaSuccess;
}

const char* error_name(cudaError_t error) {
  switch (error) {
    case cudaSuccess:
      return "cudaSuccess";
    case cudaErrorInvalidValue:
      return "cudaErrorInvalidValue";
    case cudaErrorMemoryAllocation:
      return "cudaErrorMemoryAllocation";
    case cudaErrorInitializationError:
      return "cudaErrorInitializationError";
    case cudaErrorCudartUnloading:
      return "cudaErrorCudartUnloading";
    case cudaErrorInsufficientDriver:
      return "cudaErrorInsufficientDriver";
    case cudaErrorNoDevice:
      return "cudaErrorNoDevice";
    case cudaErrorInvalidDevice:
      return "cudaErrorInvalidDevice";
    case cudaErrorInvalidDevicePointer:
      return "cudaErrorInvalidDevicePointer";
    case cudaErrorInvalidResourceHandle:
      return "cudaErrorInvalidResourceHandle";
    case cudaErrorNotReady:
      return "cudaErrorNotReady";
    case cudaErrorIllegalAddress:
      return "cudaErrorIllegalAddress";
    case cudaErrorLaunchFailure:
      return "cudaErrorLaunchFailure";
    case cudaErrorHostMemoryAlreadyRegistered:
      return "cudaErrorHostMemoryAlreadyRegistered";
    case cudaErrorHostMemoryNotRegistered:
      return "cudaErrorHostMemoryNotRegistered";
    case cudaErrorNotSupported:
      return "cudaErrorNotSupported";
    default:
      return "cudaErrorUnknown";
  }
}

const char* error_text(cudaError_t error) {
  switch (error) {
    case cudaSuccess:
      return "no error";
    case cudaErrorInvalidValue:
      return "invalid argument";
    case cudaErrorMemoryAllocation:
      return "out of memory";
    case cudaErrorInitializationError:
      return "initialization error";
    case cudaErrorCudartUnloading:
      return "driver shutting down";
    case cudaErrorInsufficientDriver:
      return "CUDA driver version is insufficient for CUDA runtime version";
    case cudaErrorNoDevice:
      return "no CUDA-capable device is detected";
    case cudaErrorInvalidDevice:
      return "invalid device ordinal";
    case cudaErrorInvalidDevicePointer:
      return "invalid device pointer";
    case cudaErrorInvalidResourceHandle:
      return "invalid resource handle";
    case cudaErrorNotReady:
      return "device not ready";
    case cudaErrorIllegalAddress:
      return "an illegal memory access was encountered";
    case cudaErrorLaunchFailure:
      return "unspecified launch failure";
    case cudaErrorHostMemoryAlreadyRegistered:
      return "part or all of the requested memory range is already mapped";
    case cudaErrorHostMemoryNotRegistered:
      return "pointer does not correspond to a registered memory region";
    case cudaErrorNotSupported:
      return "operation not supported";
    default:
      return "unknown error";
  }
}

}  // namespace

// ---- the controls ----------------------------------------------------------------------------

namespace resident::testing::simcuda {

void configure(const Machine& settings) {
  ::State& m = state();
  std::vector<std::shared_ptr<StreamState>> retired;
  {
    const std::lock_guard<std::mutex> lock(m.mutex);
    const bool same_devices =
        settings.devices == m.settings.devices && settings.device_bytes == m.settings.device_bytes;
    m.settings = settings;
    if (same_devices) return;  // the delays: streams made from now on take them
    for (cudaMemPool_t pool : m.pools) trim(m, *pool->state, 0);
    for (const auto& heap : m.heaps)
      if (heap->used() != 0) die("configure: device memory is still allocated");
    retired = m.legacy;  // joined below, outside the lock
    m.build();
  }
}

Machine machine() {
  State& m = ::state();
  const std::lock_guard<std::mutex> lock(m.mutex);
  return m.settings;
}

void fail_call(std::size_t count, cudaError_t error, const char* only) {
  Failure& armed = failure();
  const std::lock_guard<std::mutex> lock(armed.mutex);
  armed.only = only != nullptr ? only : "";
  armed.remaining = count;
  armed.error = error;
  armed.fired = false;
  failure_armed = true;
}

void disarm() {
  Failure& armed = failure();
  const std::lock_guard<std::mutex> lock(armed.mutex);
  failure_armed = false;
}

bool failure_fired() {
  Failure& armed = failure();
  const std::lock_guard<std::mutex> lock(armed.mutex);
  return armed.fired;
}

std::size_t calls() { return calls_made.load(); }

std::size_t device_bytes_used(int device) {
  State& m = ::state();
  const std::lock_guard<std::mutex> lock(m.mutex);
  return device_exists(m, device) ? m.heaps[static_cast<std::size_t>(device)]->used() : 0;
}

std::size_t pinned_bytes() {
  State& m = ::state();
  const std::lock_guard<std::mutex> lock(m.mutex);
  std::size_t bytes = 0;
  for (const auto& [first, range] : m.pinned)
    if (range.owned) bytes += range.bytes;
  return bytes;
}

std::size_t live_streams() {
  State& m = ::state();
  const std::lock_guard<std::mutex> lock(m.mutex);
  return m.streams.size();
}

std::size_t live_events() {
  State& m = ::state();
  const std::lock_guard<std::mutex> lock(m.mutex);
  return m.events.size();
}

bool is_device_pointer(const void* pointer) {
  State& m = ::state();
  const std::lock_guard<std::mutex> lock(m.mutex);
  return std::any_of(m.heaps.begin(), m.heaps.end(),
                     [&](const auto& heap) { return heap->contains_address(pointer); });
}

void* reach(const void* device) {
  State& m = ::state();
  const std::lock_guard<std::mutex> lock(m.mutex);
  for (const auto& heap : m.heaps)
    if (heap->contains_address(device)) return heap->alias(device);
  return const_cast<void*>(device);  // NOLINT: host memory is reached where it is
}

void* reach(const void* device, std::size_t bytes) {
  State& m = ::state();
  const std::lock_guard<std::mutex> lock(m.mutex);
  for (const auto& heap : m.heaps) {
    if (heap->contains_address(device)) {
      // Zero bytes touch nothing (an empty row may start at its allocation's end).
      if (bytes == 0 || heap->holder(device, bytes)) return heap->alias(device);
      die(outside(*heap, device, bytes));
    }
    if (heap->overlaps(device, bytes)) die(outside(*heap, device, bytes));
  }
  return const_cast<void*>(device);  // NOLINT: host memory is reached where it is
}

void peek(void* destination, const void* source, std::size_t bytes) {
  std::memcpy(destination, reach(source), bytes);
}

cudaError_t enqueue(cudaStream_t stream, std::function<void()> work) {
  const std::shared_ptr<StreamState> queue = find_stream(stream);
  if (!queue) return result(cudaErrorInvalidResourceHandle);
  queue->push(std::move(work));
  return cudaSuccess;
}

}  // namespace resident::testing::simcuda

// ---- the runtime's entry points --------------------------------------------------------------

extern "C" {

cudaError_t CUDARTAPI cudaGetLastError(void) {
  const cudaError_t error = last_error;
  last_error = cudaSuccess;
  return error;
}

cudaError_t CUDARTAPI cudaPeekAtLastError(void) { return last_error; }

const char* CUDARTAPI cudaGetErrorString(cudaError_t error) { return error_text(error); }

const char* CUDARTAPI cudaGetErrorName(cudaError_t error) { return error_name(error); }

cudaError_t CUDARTAPI cudaGetDeviceCount(int* count) {
  if (auto error = injected(__func__)) return *error;
  if (count == nullptr) return result(cudaErrorInvalidValue);
  State& m = state();
  const std::lock_guard<std::mutex> lock(m.mutex);
  *count = static_cast<int>(m.heaps.size());
  return m.heaps.empty() ? result(cudaErrorNoDevice) : cudaSuccess;
}

cudaError_t CUDARTAPI cudaGetDevice(int* device) {
  if (auto error = injected(__func__)) return *error;
  if (device == nullptr) return result(cudaErrorInvalidValue);
  State& m = state();
  const std::lock_guard<std::mutex> lock(m.mutex);
  if (m.heaps.empty()) return result(cudaErrorNoDevice);
  *device = current_device;
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaSetDevice(int device) {
  if (auto error = injected(__func__)) return *error;
  State& m = state();
  const std::lock_guard<std::mutex> lock(m.mutex);
  if (m.heaps.empty()) return result(cudaErrorNoDevice);
  if (!device_exists(m, device)) return result(cudaErrorInvalidDevice);
  current_device = device;
  m.contexts[static_cast<std::size_t>(device)] = true;
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaDeviceSynchronize(void) {
  if (auto error = injected(__func__)) return *error;
  State& m = state();
  std::vector<std::shared_ptr<StreamState>> streams;
  {
    const std::lock_guard<std::mutex> lock(m.mutex);
    if (!device_exists(m, current_device)) return result(cudaErrorNoDevice);
    for (cudaStream_t stream : m.streams)
      if (stream->state->device() == current_device) streams.push_back(stream->state);
    if (auto legacy = m.legacy[static_cast<std::size_t>(current_device)]) streams.push_back(legacy);
  }
  for (const auto& stream : streams) stream->synchronize();
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaMalloc(void** pointer, size_t bytes) {
  if (auto error = injected(__func__)) return *error;
  if (pointer == nullptr) return result(cudaErrorInvalidValue);
  *pointer = nullptr;
  State& m = state();
  const std::lock_guard<std::mutex> lock(m.mutex);
  if (!device_exists(m, current_device)) return result(cudaErrorNoDevice);
  m.contexts[static_cast<std::size_t>(current_device)] = true;
  if (bytes == 0) return cudaSuccess;
  Heap& heap = *m.heaps[static_cast<std::size_t>(current_device)];
  std::byte* memory = heap.allocate(bytes, m.next_id++);
  if (memory == nullptr) return result(cudaErrorMemoryAllocation);
  std::memset(heap.alias(memory), 0xA5, bytes);  // fresh memory is not zeroed on a device
  *pointer = memory;
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaFree(void* pointer) {
  if (auto error = injected(__func__)) return *error;
  if (pointer == nullptr) return cudaSuccess;
  State& m = state();
  const std::lock_guard<std::mutex> lock(m.mutex);
  // A pool's block goes back through `cudaFreeAsync` only, as on a device.
  if (m.pool_blocks.count(static_cast<const std::byte*>(pointer)) != 0)
    return result(cudaErrorInvalidValue);
  for (const auto& heap : m.heaps)
    if (heap->release(pointer)) return cudaSuccess;
  return result(cudaErrorInvalidValue);
}

cudaError_t CUDARTAPI cudaMallocAsync(void** pointer, size_t bytes, cudaStream_t stream) {
  if (auto error = injected(__func__)) return *error;
  return allocate_async(pointer, bytes, nullptr, stream);
}

cudaError_t CUDARTAPI cudaMallocFromPoolAsync(void** pointer, size_t bytes, cudaMemPool_t pool,
                                              cudaStream_t stream) {
  if (auto error = injected(__func__)) return *error;
  if (pool == nullptr) return result(cudaErrorInvalidValue);
  return allocate_async(pointer, bytes, pool, stream);
}

cudaError_t CUDARTAPI cudaFreeAsync(void* pointer, cudaStream_t stream) {
  if (auto error = injected(__func__)) return *error;
  if (pointer == nullptr) return cudaSuccess;
  const auto* block = static_cast<const std::byte*>(pointer);
  State& m = state();
  std::shared_ptr<StreamState> queue;
  {
    const std::lock_guard<std::mutex> lock(m.mutex);
    queue = stream_state(m, stream);
    if (!queue) return result(cudaErrorInvalidResourceHandle);
    const auto found = m.pool_blocks.find(block);
    // Not a pool's block, or one already freed: `cudaFree`'s memory is not the pools'.
    if (found == m.pool_blocks.end() || found->second.use != PoolBlock::in_use)
      return result(cudaErrorInvalidValue);
    found->second.use = PoolBlock::freeing;
  }
  // The block stays allocated for the work queued before the free: it returns when the stream
  // reaches the free.
  queue->push([block] { free_reached(block); });
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaMemPoolCreate(cudaMemPool_t* pool, const cudaMemPoolProps* properties) {
  if (auto error = injected(__func__)) return *error;
  if (pool == nullptr || properties == nullptr ||
      properties->allocType != cudaMemAllocationTypePinned)
    return result(cudaErrorInvalidValue);
  // Device memory only: the simulation has no pools of host memory, nor shareable handles.
  if (properties->location.type != cudaMemLocationTypeDevice ||
      properties->handleTypes != cudaMemHandleTypeNone)
    return result(cudaErrorNotSupported);
  State& m = state();
  const std::lock_guard<std::mutex> lock(m.mutex);
  if (!device_exists(m, properties->location.id)) return result(cudaErrorInvalidValue);
  auto fresh = std::make_shared<PoolState>(properties->location.id, false, properties->maxSize);
  auto* made = new CUmemPoolHandle_st{std::move(fresh)};  // NOLINT: the handle
  m.pools.insert(made);
  *pool = made;
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaMemPoolDestroy(cudaMemPool_t pool) {
  if (auto error = injected(__func__)) return *error;
  State& m = state();
  const std::lock_guard<std::mutex> lock(m.mutex);
  const std::shared_ptr<PoolState> destroyed = pool_state(m, pool);
  if (!destroyed || destroyed->default_pool) return result(cudaErrorInvalidValue);
  m.pools.erase(pool);
  for (std::size_t device = 0; device < m.current_pools.size(); ++device)
    if (m.current_pools[device] == pool) m.current_pools[device] = m.default_pools[device];
  // Blocks still in use, or whose frees no stream has reached, come back later: their pool
  // lives on in them until then, and gives each back to the device as it comes.
  destroyed->destroyed = true;
  trim(m, *destroyed, 0);
  delete pool;  // NOLINT: the handle
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaMemPoolTrimTo(cudaMemPool_t pool, size_t keep) {
  if (auto error = injected(__func__)) return *error;
  State& m = state();
  const std::lock_guard<std::mutex> lock(m.mutex);
  const std::shared_ptr<PoolState> trimmed = pool_state(m, pool);
  if (!trimmed) return result(cudaErrorInvalidValue);
  trim(m, *trimmed, keep);
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaMemPoolSetAttribute(cudaMemPool_t pool, enum cudaMemPoolAttr attribute,
                                              void* value) {
  if (auto error = injected(__func__)) return *error;
  if (value == nullptr) return result(cudaErrorInvalidValue);
  State& m = state();
  const std::lock_guard<std::mutex> lock(m.mutex);
  const std::shared_ptr<PoolState> set = pool_state(m, pool);
  if (!set) return result(cudaErrorInvalidValue);
  // Each attribute has its value's type: read as the attribute says.
  const auto flag = [&](int& kept) { kept = *static_cast<const int*>(value); };
  const auto number = [&] { return *static_cast<const cuuint64_t*>(value); };
  switch (attribute) {
    case cudaMemPoolReuseFollowEventDependencies:
      flag(set->reuse_follow_event_dependencies);
      return cudaSuccess;
    case cudaMemPoolReuseAllowOpportunistic:
      flag(set->reuse_allow_opportunistic);
      return cudaSuccess;
    case cudaMemPoolReuseAllowInternalDependencies:
      flag(set->reuse_allow_internal_dependencies);
      return cudaSuccess;
    case cudaMemPoolAttrReleaseThreshold:
      set->release_threshold = number();
      return cudaSuccess;
    // The high watermarks can only be reset (to zero, which restarts them at the current).
    case cudaMemPoolAttrReservedMemHigh:
      if (number() != 0) return result(cudaErrorInvalidValue);
      set->reserved_high = set->reserved;
      return cudaSuccess;
    case cudaMemPoolAttrUsedMemHigh:
      if (number() != 0) return result(cudaErrorInvalidValue);
      set->used_high = set->used;
      return cudaSuccess;
    default:
      return result(cudaErrorInvalidValue);
  }
}

cudaError_t CUDARTAPI cudaMemPoolGetAttribute(cudaMemPool_t pool, enum cudaMemPoolAttr attribute,
                                              void* value) {
  if (auto error = injected(__func__)) return *error;
  if (value == nullptr) return result(cudaErrorInvalidValue);
  State& m = state();
  const std::lock_guard<std::mutex> lock(m.mutex);
  const std::shared_ptr<PoolState> got = pool_state(m, pool);
  if (!got) return result(cudaErrorInvalidValue);
  const auto flag = [&](int kept) {
    *static_cast<int*>(value) = kept;
    return cudaSuccess;
  };
  const auto number = [&](std::uint64_t kept) {
    *static_cast<cuuint64_t*>(value) = kept;
    return cudaSuccess;
  };
  switch (attribute) {
    case cudaMemPoolReuseFollowEventDependencies:
      return flag(got->reuse_follow_event_dependencies);
    case cudaMemPoolReuseAllowOpportunistic:
      return flag(got->reuse_allow_opportunistic);
    case cudaMemPoolReuseAllowInternalDependencies:
      return flag(got->reuse_allow_internal_dependencies);
    case cudaMemPoolAttrReleaseThreshold:
      return number(got->release_threshold);
    case cudaMemPoolAttrReservedMemCurrent:
      return number(got->reserved);
    case cudaMemPoolAttrReservedMemHigh:
      return number(got->reserved_high);
    case cudaMemPoolAttrUsedMemCurrent:
      return number(got->used);
    case cudaMemPoolAttrUsedMemHigh:
      return number(got->used_high);
    default:
      return result(cudaErrorInvalidValue);
  }
}

cudaError_t CUDARTAPI cudaDeviceGetDefaultMemPool(cudaMemPool_t* pool, int device) {
  if (auto error = injected(__func__)) return *error;
  if (pool == nullptr) return result(cudaErrorInvalidValue);
  State& m = state();
  const std::lock_guard<std::mutex> lock(m.mutex);
  if (!device_exists(m, device)) return result(cudaErrorInvalidDevice);
  *pool = m.default_pools[static_cast<std::size_t>(device)];
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaDeviceGetMemPool(cudaMemPool_t* pool, int device) {
  if (auto error = injected(__func__)) return *error;
  if (pool == nullptr) return result(cudaErrorInvalidValue);
  State& m = state();
  const std::lock_guard<std::mutex> lock(m.mutex);
  if (!device_exists(m, device)) return result(cudaErrorInvalidDevice);
  *pool = m.current_pools[static_cast<std::size_t>(device)];
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaDeviceSetMemPool(int device, cudaMemPool_t pool) {
  if (auto error = injected(__func__)) return *error;
  State& m = state();
  const std::lock_guard<std::mutex> lock(m.mutex);
  if (!device_exists(m, device)) return result(cudaErrorInvalidDevice);
  const std::shared_ptr<PoolState> chosen = pool_state(m, pool);
  if (!chosen || chosen->device != device) return result(cudaErrorInvalidValue);
  m.current_pools[static_cast<std::size_t>(device)] = pool;
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaMallocHost(void** pointer, size_t bytes) {
  if (auto error = injected(__func__)) return *error;
  return host_allocate(pointer, bytes);
}

cudaError_t CUDARTAPI cudaHostAlloc(void** pointer, size_t bytes, unsigned int /*flags*/) {
  if (auto error = injected(__func__)) return *error;
  return host_allocate(pointer, bytes);
}

cudaError_t CUDARTAPI cudaFreeHost(void* pointer) {
  if (auto error = injected(__func__)) return *error;
  if (pointer == nullptr) return cudaSuccess;
  State& m = state();
  const std::lock_guard<std::mutex> lock(m.mutex);
  const auto found = m.pinned.find(static_cast<std::byte*>(pointer));
  if (found == m.pinned.end() || !found->second.owned) return result(cudaErrorInvalidValue);
  m.pinned.erase(found);
  std::free(pointer);  // NOLINT: from aligned_alloc
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaHostRegister(void* pointer, size_t bytes, unsigned int /*flags*/) {
  if (auto error = injected(__func__)) return *error;
  if (pointer == nullptr || bytes == 0) return result(cudaErrorInvalidValue);
  State& m = state();
  const std::lock_guard<std::mutex> lock(m.mutex);
  if (m.heaps.empty()) return result(cudaErrorNoDevice);
  const auto* first = static_cast<const std::byte*>(pointer);
  auto next = m.pinned.lower_bound(first);
  if (next != m.pinned.end() && next->first < first + bytes)
    return result(cudaErrorHostMemoryAlreadyRegistered);
  if (next != m.pinned.begin()) {
    const auto before = std::prev(next);
    if (before->first + before->second.bytes > first)
      return result(cudaErrorHostMemoryAlreadyRegistered);
  }
  m.pinned[first] = {bytes, false, m.next_id++};
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaHostUnregister(void* pointer) {
  if (auto error = injected(__func__)) return *error;
  State& m = state();
  const std::lock_guard<std::mutex> lock(m.mutex);
  const auto found = m.pinned.find(static_cast<std::byte*>(pointer));
  if (found == m.pinned.end() || found->second.owned)
    return result(cudaErrorHostMemoryNotRegistered);
  m.pinned.erase(found);
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaPointerGetAttributes(cudaPointerAttributes* attributes,
                                               const void* pointer) {
  if (auto error = injected(__func__)) return *error;
  if (attributes == nullptr) return result(cudaErrorInvalidValue);
  *attributes = cudaPointerAttributes{};
  State& m = state();
  const std::lock_guard<std::mutex> lock(m.mutex);
  for (std::size_t device = 0; device < m.heaps.size(); ++device) {
    if (!m.heaps[device]->contains_address(pointer)) continue;
    attributes->type = cudaMemoryTypeDevice;
    attributes->device = static_cast<int>(device);
    attributes->devicePointer = const_cast<void*>(pointer);  // NOLINT: the API's type
    return cudaSuccess;
  }
  const std::optional<Place> place = locate(m, pointer, 1);
  if (place && place->kind == Place::pinned) {
    attributes->type = cudaMemoryTypeHost;
    attributes->device = current_device;
    attributes->devicePointer = const_cast<void*>(pointer);  // NOLINT: the API's type
    attributes->hostPointer = const_cast<void*>(pointer);    // NOLINT: the API's type
    return cudaSuccess;
  }
  attributes->type = cudaMemoryTypeUnregistered;
  attributes->device = -2;
  attributes->hostPointer = const_cast<void*>(pointer);  // NOLINT: the API's type
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaMemGetInfo(size_t* free, size_t* total) {
  if (auto error = injected(__func__)) return *error;
  if (free == nullptr || total == nullptr) return result(cudaErrorInvalidValue);
  State& m = state();
  const std::lock_guard<std::mutex> lock(m.mutex);
  if (!device_exists(m, current_device)) return result(cudaErrorNoDevice);
  const Heap& heap = *m.heaps[static_cast<std::size_t>(current_device)];
  *total = heap.capacity();
  *free = heap.capacity() - heap.used();
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned int /*flags*/) {
  if (auto error = injected(__func__)) return *error;
  if (stream == nullptr) return result(cudaErrorInvalidValue);
  State& m = state();
  const std::lock_guard<std::mutex> lock(m.mutex);
  if (!device_exists(m, current_device)) return result(cudaErrorNoDevice);
  m.contexts[static_cast<std::size_t>(current_device)] = true;
  auto* made = new CUstream_st{m.new_stream(current_device)};  // NOLINT: the handle
  m.streams.insert(made);
  *stream = made;
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaStreamCreate(cudaStream_t* stream) {
  return cudaStreamCreateWithFlags(stream, cudaStreamDefault);
}

cudaError_t CUDARTAPI cudaStreamDestroy(cudaStream_t stream) {
  if (auto error = injected(__func__)) return *error;
  if (!forget(&State::streams, stream)) return result(cudaErrorInvalidResourceHandle);
  stream->state->retire();
  delete stream;  // NOLINT: the handle
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaStreamSynchronize(cudaStream_t stream) {
  if (auto error = injected(__func__)) return *error;
  const std::shared_ptr<StreamState> queue = find_stream(stream);
  if (!queue) return result(cudaErrorInvalidResourceHandle);
  queue->synchronize();
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaStreamGetDevice(cudaStream_t stream, int* device) {
  if (auto error = injected("cudaStreamGetDevice")) return *error;
  if (device == nullptr) return result(cudaErrorInvalidValue);
  const std::shared_ptr<StreamState> queue = find_stream(stream);
  if (!queue) return result(cudaErrorInvalidResourceHandle);
  *device = queue->device();
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaStreamQuery(cudaStream_t stream) {
  if (auto error = injected(__func__)) return *error;
  const std::shared_ptr<StreamState> queue = find_stream(stream);
  if (!queue) return result(cudaErrorInvalidResourceHandle);
  return queue->idle() ? cudaSuccess : cudaErrorNotReady;
}

cudaError_t CUDARTAPI cudaEventCreateWithFlags(cudaEvent_t* event, unsigned int flags) {
  if (auto error = injected(__func__)) return *error;
  if (event == nullptr) return result(cudaErrorInvalidValue);
  State& m = state();
  const std::lock_guard<std::mutex> lock(m.mutex);
  if (!device_exists(m, current_device)) return result(cudaErrorNoDevice);
  auto fresh = std::make_shared<EventState>();
  fresh->device = current_device;
  fresh->timing = (flags & cudaEventDisableTiming) == 0;
  auto* made = new CUevent_st{std::move(fresh)};  // NOLINT: the handle
  m.events.insert(made);
  *event = made;
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaEventCreate(cudaEvent_t* event) {
  return cudaEventCreateWithFlags(event, cudaEventDefault);
}

cudaError_t CUDARTAPI cudaEventDestroy(cudaEvent_t event) {
  if (auto error = injected(__func__)) return *error;
  if (!forget(&State::events, event)) return result(cudaErrorInvalidResourceHandle);
  delete event;  // NOLINT: the handle; work queued on its state keeps the state
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
  if (auto error = injected(__func__)) return *error;
  const std::shared_ptr<StreamState> queue = find_stream(stream);
  const std::shared_ptr<EventState> recorded = find_event(event);
  // An event is recorded on streams of its own device only.
  if (!queue || !recorded || recorded->device != queue->device())
    return result(cudaErrorInvalidResourceHandle);
  std::uint64_t generation = 0;
  {
    const std::lock_guard<std::mutex> lock(recorded->mutex);
    generation = ++recorded->recorded;
  }
  queue->push([recorded, generation] {
    {
      const std::lock_guard<std::mutex> lock(recorded->mutex);
      recorded->completed = std::max(recorded->completed, generation);
      recorded->at = Clock::now();
    }
    recorded->reached.notify_all();
  });
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event,
                                          unsigned int /*flags*/) {
  if (auto error = injected(__func__)) return *error;
  const std::shared_ptr<StreamState> queue = find_stream(stream);
  const std::shared_ptr<EventState> awaited = find_event(event);
  if (!queue || !awaited) return result(cudaErrorInvalidResourceHandle);
  const std::uint64_t generation = last_record(*awaited);  // the record made before this call
  if (generation != 0) queue->push([awaited, generation] { awaited->wait_for(generation); });
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaEventSynchronize(cudaEvent_t event) {
  if (auto error = injected(__func__)) return *error;
  const std::shared_ptr<EventState> awaited = find_event(event);
  if (!awaited) return result(cudaErrorInvalidResourceHandle);
  awaited->wait_for(last_record(*awaited));
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaEventQuery(cudaEvent_t event) {
  if (auto error = injected(__func__)) return *error;
  const std::shared_ptr<EventState> awaited = find_event(event);
  if (!awaited) return result(cudaErrorInvalidResourceHandle);
  const std::lock_guard<std::mutex> lock(awaited->mutex);
  return awaited->completed >= awaited->recorded ? cudaSuccess : cudaErrorNotReady;
}

cudaError_t CUDARTAPI cudaEventElapsedTime(float* milliseconds, cudaEvent_t start,
                                           cudaEvent_t end) {
  if (auto error = injected(__func__)) return *error;
  if (milliseconds == nullptr) return result(cudaErrorInvalidValue);
  const std::shared_ptr<EventState> first = find_event(start);
  const std::shared_ptr<EventState> last = find_event(end);
  if (!first || !last || !first->timing || !last->timing)
    return result(cudaErrorInvalidResourceHandle);
  const std::lock_guard<std::mutex> lock_first(first->mutex);
  const std::lock_guard<std::mutex> lock_last(last->mutex);
  if (first->completed == 0 || last->completed == 0 || first->completed < first->recorded ||
      last->completed < last->recorded)
    return result(cudaErrorNotReady);
  *milliseconds = std::chrono::duration<float, std::milli>(last->at - first->at).count();
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaMemcpyAsync(void* destination, const void* source, size_t bytes,
                                      cudaMemcpyKind kind, cudaStream_t stream) {
  if (auto error = injected(__func__)) return *error;
  return copy(destination, source, bytes, kind, stream, false);
}

cudaError_t CUDARTAPI cudaMemcpy(void* destination, const void* source, size_t bytes,
                                 cudaMemcpyKind kind) {
  if (auto error = injected(__func__)) return *error;
  return copy(destination, source, bytes, kind, nullptr, true);
}

cudaError_t CUDARTAPI cudaMemsetAsync(void* destination, int value, size_t bytes,
                                      cudaStream_t stream) {
  if (auto error = injected(__func__)) return *error;
  return memset_on(destination, value, bytes, stream, false);
}

cudaError_t CUDARTAPI cudaMemset(void* destination, int value, size_t bytes) {
  if (auto error = injected(__func__)) return *error;
  return memset_on(destination, value, bytes, nullptr, true);
}

cudaError_t CUDARTAPI cudaGetDriverEntryPointByVersion(const char* symbol, void** function,
                                                       unsigned int /*version*/,
                                                       unsigned long long /*flags*/,
                                                       cudaDriverEntryPointQueryResult* status) {
  if (auto error = injected(__func__)) return *error;
  if (symbol == nullptr || function == nullptr) return result(cudaErrorInvalidValue);
  const bool known = std::strcmp(symbol, "cuDevicePrimaryCtxGetState") == 0;
  *function = known ? reinterpret_cast<void*>(&primary_context_state) : nullptr;
  if (status != nullptr)
    *status = known ? cudaDriverEntryPointSuccess : cudaDriverEntryPointSymbolNotFound;
  return cudaSuccess;
}

}  // extern "C"
