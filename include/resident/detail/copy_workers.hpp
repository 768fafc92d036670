// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "resident/detail/checked_math.hpp"
#include "resident/detail/function_ref.hpp"
#include "resident/detail/io/bus_faults.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <emmintrin.h>
#endif
#if defined(__linux__)
#include <sched.h>
#endif

namespace resident::detail {

/// Uploads below this many bytes stay on the calling thread: starting threads costs more than
/// the copy.
inline constexpr std::size_t parallel_upload_threshold = std::size_t{4} << 20;

/// @brief The cores this process may run on: the CPUs of its affinity mask where the system
/// says (Linux: `taskset`, a cgroup's cpuset, a job scheduler's binding), else the hardware
/// threads; at least 1. More copy threads than that only take turns on the same cores.
inline unsigned usable_cores() noexcept {
#if defined(__linux__)
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) == 0) {
    const int count = CPU_COUNT(&set);
    if (count > 0) return static_cast<unsigned>(count);
  }
#endif
  return std::max(std::thread::hardware_concurrency(), 1u);
}

/// @brief Threads an upload of `bytes` uses: `requested`, at most the usable cores (0: the
/// usable cores, at most 8), and 1 for small uploads.
inline unsigned upload_thread_count(unsigned requested, std::size_t bytes) noexcept {
  if (bytes < parallel_upload_threshold) return 1;
  const unsigned cores = usable_cores();
  // More threads than the cores never speed a copy, and a huge request would start threads
  // until the system refuses.
  if (requested != 0) return std::min(requested, cores);
  return std::min(cores, 8u);
}

/// Bytes of the blocks a gather's threads claim (whole rows, at least one). Measured with
/// bench_epoch on 2 cores, CIFAR batches of 512 rows (1.5 MiB), three rounds: blocks of 64 KiB
/// gathered quiet epochs in 9.11 to 9.19 ms and, with one core kept busy by another process,
/// in 16.2 to 16.6 ms; 128 KiB: 9.44 to 10.2 and 17.0 to 17.4; 256 KiB: 9.77 to 10.9 and 16.8
/// to 17.2; two halves: 9.17 to 9.42 and 15.9 to 17.4. Blocks of 16 KiB were 15 % slower
/// quiet (each block restarts the prefetch of its first rows).
inline constexpr std::size_t gather_block_bytes = std::size_t{64} << 10;

/// Gathered batches (all fields together) at least this large are split across threads by
/// default: two blocks of `gather_block_bytes`, the least a team can share. A batch is gathered
/// again every step, so the team lives for the whole epoch and its start-up is paid once; what
/// each batch pays is the hand-off, a few microseconds (`CopyWorkers`). Measured with
/// bench_epoch's BM_HostGatherTeam on 2 cores, one thread against two, three rounds: CIFAR
/// batches of 64 rows (192 KiB) gather 1.39 to 1.76 times faster on two threads, of 128 rows
/// 1.50 to 1.80 times, of 512 rows 1.59 to 1.85 times; with one core kept busy by another
/// process, 0.97 to 1.02 times (the asking thread gathers most blocks), never slower.
inline constexpr std::size_t parallel_gather_threshold = std::size_t{128} << 10;

/// @brief Threads an epoch gathering batches of `batch_bytes` uses: `requested`, at most the
/// usable cores; 0: 1 for small batches, else the usable cores, at most 8. Never more threads
/// than a batch has blocks of `gather_block_bytes`: the others would never get one.
inline unsigned gather_thread_count(unsigned requested, std::size_t batch_bytes) noexcept {
  const unsigned cores = usable_cores();
  unsigned threads = requested != 0                            ? std::min(requested, cores)
                     : batch_bytes < parallel_gather_threshold ? 1u
                                                               : std::min(cores, 8u);
  const std::size_t blocks = std::max<std::size_t>(1, batch_bytes / gather_block_bytes);
  if (blocks < threads) threads = static_cast<unsigned>(blocks);
  return threads;
}

/// Bytes of the blocks an upload's threads claim: a large page (2 MiB), so that two threads do
/// not fault the same fresh page at once (the second would wait for the kernel to clear it),
/// and a multiple of a cache line, so that no two threads write one line. Within the noise of
/// 256 KiB to 4 MiB in bench_upload on 2 cores, where faulting fresh memory dominates.
inline constexpr std::size_t upload_copy_block_bytes = std::size_t{2} << 20;

/// @brief Rows in a block of about `block_bytes`: at least one.
inline std::size_t rows_per_block(std::size_t block_bytes, std::size_t row_bytes) noexcept {
  return row_bytes == 0 ? block_bytes : std::max<std::size_t>(block_bytes / row_bytes, 1);
}

/// One step of a spin wait: tells the core that this is a spin (cheaper for a sibling
/// hyper-thread, and no memory-order mis-speculation when the awaited store lands).
inline void spin_pause() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

/// @brief A fixed team of threads that runs a function over the blocks of a range, the
/// calling thread among them. Memory bandwidth, not one core, bounds a copy, so a few threads
/// copy several times faster.
///
/// Blocks are claimed, not assigned: every thread takes the next unclaimed block until none is
/// left, so a thread that the system delays (another process on its core, an interrupt) holds
/// back only the block it has claimed, never a fixed share of the range. A worker that wakes
/// after the caller has claimed everything takes nothing and costs the call nothing.
///
/// The hand-off costs microseconds, not a condition-variable round trip: a worker that ran out
/// of blocks spins for `spin_budget` on the next call before it sleeps, so that the batches of
/// an epoch, which follow each other closely, reach an awake team. A caller that computes
/// between calls for longer than that finds the workers asleep and pays one wake-up (tens of
/// microseconds), which the claiming hides: the caller starts on the blocks at once.
class CopyWorkers {
  using Clock = std::chrono::steady_clock;

 public:
  /// How long an idle worker spins for the next call before it sleeps.
  static constexpr std::chrono::microseconds spin_budget{50};

  /// @param threads team size including the calling thread; when the system refuses a thread,
  /// the team is smaller (never an error: one thread still does all the work).
  explicit CopyWorkers(unsigned threads) {
    for (unsigned index = 1; index < threads; ++index) {
      try {
        workers_.emplace_back([this] { serve(); });
      } catch (const std::system_error&) {
        break;
      }
    }
  }

  ~CopyWorkers() {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      stopping_.store(true);
    }
    wake_.notify_all();
    for (auto& worker : workers_) worker.join();
  }

  CopyWorkers(const CopyWorkers&) = delete;
  CopyWorkers& operator=(const CopyWorkers&) = delete;

  [[nodiscard]] unsigned size() const noexcept {
    return static_cast<unsigned>(workers_.size()) + 1;
  }

  /// @brief Runs `function(first, last)` over `[begin, end)` cut into blocks of `block`
  /// elements from `begin` (the last one shorter), each block once, on the team's threads as
  /// they claim them, and returns when all are done; rethrows the first exception a block
  /// threw. A team of one, or a range of one block, runs `function(begin, end)` once on the
  /// calling thread.
  template <class Function>
  void for_each_block(std::size_t begin, std::size_t end, std::size_t block, Function&& function) {
    if (begin >= end) return;
    block = std::max<std::size_t>(block, 1);
    // Block indices fit the claim word's low half (ranges of over 4 billion blocks take
    // longer blocks).
    block = std::max(block, (end - begin - 1) / max_blocks + 1);
    const std::size_t blocks = ceil_div(end - begin, block);
    if (workers_.empty() || blocks == 1) {  // nothing to share: no hand-off at all
      function(begin, end);
      return;
    }
    // The claim word is closed: no thread reads the job until it is opened again.
    job_ = Job{begin, end, block, FunctionRef<void(std::size_t, std::size_t)>(function)};
    error_ = nullptr;
    done_.store(0, std::memory_order_relaxed);
    blocks_.store(blocks, std::memory_order_relaxed);
    const std::uint64_t generation = claim_generation(claim_.load(std::memory_order_relaxed)) + 1;
    // Opens the job. Sequentially consistent with the workers' `sleepers_` increment: either
    // this call sees a worker that went to sleep and wakes it, or that worker sees the job.
    claim_.store(claim_word(generation, 0));
    if (sleepers_.load() != 0) {
      { const std::lock_guard<std::mutex> lock(mutex_); }
      wake_.notify_all();
    }
    run_blocks();
    // What is left are the blocks other threads claimed and still run: a short spin, then
    // yields, which give the core to a worker that waits behind this thread.
    for (unsigned spins = 0; done_.load(std::memory_order_acquire) != blocks; ++spins) {
      if (spins < 256)
        spin_pause();
      else
        std::this_thread::yield();
    }
    claim_.store(claim_word(generation, closed), std::memory_order_release);
    if (error_) std::rethrow_exception(error_);
  }

 private:
  // The claim word: the call's generation in the high half, the next unclaimed block in the
  // low half, or `closed` between calls. Claiming is a compare-and-swap of the whole word, so
  // a thread that read an earlier call's word can never claim a block of a later call.
  static constexpr std::uint64_t closed = 0xffffffffu;
  static constexpr std::size_t max_blocks = 0xfffffff0u;
  static constexpr std::uint64_t claim_word(std::uint64_t generation, std::uint64_t next) noexcept {
    return generation << 32 | next;
  }
  static constexpr std::uint64_t claim_generation(std::uint64_t word) noexcept {
    return word >> 32;
  }
  static constexpr std::uint64_t claim_next(std::uint64_t word) noexcept {
    return word & 0xffffffffu;
  }

  // One for_each_block call: written while the claim word is closed, read by a thread only
  // after it claimed a block, and the call does not return before that block is done.
  struct Job {
    std::size_t begin = 0;
    std::size_t end = 0;
    std::size_t block = 0;
    FunctionRef<void(std::size_t, std::size_t)> function;  // the caller's, alive for the call
  };

  // Claims and runs blocks of the open call until none is left.
  void run_blocks() noexcept {
    for (;;) {
      std::uint64_t word = claim_.load(std::memory_order_acquire);
      for (;;) {
        // `blocks_` is read before the claim: a later call changes it only after closing
        // this call's word, and then the compare-and-swap fails.
        if (claim_next(word) >= blocks_.load(std::memory_order_acquire)) return;  // or closed
        if (claim_.compare_exchange_weak(word, word + 1, std::memory_order_acq_rel,
                                         std::memory_order_acquire))
          break;
      }
      const std::size_t first = job_.begin + job_.block * claim_next(word);
      try {
        job_.function(first, std::min(job_.end, first + job_.block));
      } catch (...) {
        const std::lock_guard<std::mutex> lock(mutex_);
        if (!error_) error_ = std::current_exception();
      }
      done_.fetch_add(1, std::memory_order_release);
    }
  }

  // Waits for a generation other than `seen` (or stopping): spins for `spin_budget`, then
  // sleeps until woken. The spin yields its core at every turn rather than pausing on it: a
  // worker that shares its core with another process then uses little of the core's time
  // while it waits, so the system lets it run when it has a block, rather than taking the core
  // away in the middle of one (which the caller then waits for). Measured with bench_epoch on
  // 2 cores, one kept busy by another process (CIFAR batches of 512 rows): epochs of 16.3 to
  // 17.1 ms with a yielding spin, 17.9 to 18.7 ms with a pausing one, 15.9 to 16.4 ms with no
  // spin; on the quiet machine the yielding spin is as fast as the pausing one, and 4 % faster
  // than none (the workers are awake when the next batch comes).
  std::uint64_t await_generation(std::uint64_t seen) {
    const auto generation = [this] { return claim_generation(claim_.load()); };
    const auto spin_until = Clock::now() + spin_budget;
    for (unsigned spins = 1;; ++spins) {
      const std::uint64_t now = claim_generation(claim_.load(std::memory_order_acquire));
      if (now != seen || stopping_.load(std::memory_order_relaxed)) return now;
      std::this_thread::yield();
      if (spins % 16 == 0 && Clock::now() > spin_until) break;
    }
    std::unique_lock<std::mutex> lock(mutex_);
    sleepers_.fetch_add(1);
    wake_.wait(lock, [&] { return stopping_.load() || generation() != seen; });
    sleepers_.fetch_sub(1);
    return generation();
  }

  void serve() {
    deliver_bus_faults();  // blocks may read files' mappings: see bus_faults.hpp
    std::uint64_t seen = 0;
    for (;;) {
      seen = await_generation(seen);
      if (stopping_.load()) return;
      run_blocks();
    }
  }

  std::vector<std::thread> workers_;
  std::mutex mutex_;  // guards error_, and the sleep of workers with `wake_`
  std::condition_variable wake_;
  // The claim word and the count of blocks done change with every block, each on its own cache
  // line, away from what the threads only read.
  alignas(64) std::atomic<std::uint64_t> claim_{claim_word(0, closed)};
  alignas(64) std::atomic<std::size_t> done_{0};  // blocks of the open call that have run
  alignas(64) Job job_;
  std::atomic<std::size_t> blocks_{0};  // of the open call
  std::atomic<unsigned> sleepers_{0};
  std::atomic<bool> stopping_{false};
  std::exception_ptr error_;
};

}  // namespace resident::detail
