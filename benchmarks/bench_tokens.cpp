// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// Language-model batches per second from a token stream: a `TokenDataset<Space, uint16_t>` of
// 100,000,000 tokens (200 MB of seeded splitmix64 values modulo GPT-2's vocabulary), batches of
// B = 64 windows of T = 1,024 tokens, each batch `(x, y)` with `y` the next-token targets of `x`.
// An epoch has some 1,500 batches, so an iteration is 256 consecutive batches of the epochs in
// turn (the next epoch made, inside the timed region, when one runs out): items are batches, so
// `items_per_second` is batches/s. Each batch is taken as a consumer would and touched, the
// first token of every row of `x` and of `y` summed: cheap beside a gather, and enough that a
// view is not optimised away. (`bytes_per_second` counts the bytes of the batches served; in
// the zero-copy modes these are views handed out, not bytes moved.)
//
// Modes: `Shuffle::samples` (the headline: windows in a seeded permutation, gathered into the
// ring), `Shuffle::none` and `Shuffle::batches` (views into the stream itself) at the default
// stride (= T, windows that tile the stream), and `Shuffle::samples` at stride 1: every token
// a window start, as nanoGPT samples its offsets (it draws them with replacement, an epoch
// draws each once).
//
// On the host, next to the same batches made three other ways, each measured in the same run
// and per batch (`ratio_to_<baseline>` = the baseline's seconds per batch over resident's):
// - `memcpy`: one contiguous copy of a batch's bytes (the 2 * B * T tokens of `x` and `y`) per
//   batch, from consecutive places of the dataset's own stored stream into two alternating
//   batch buffers, by one thread: the memory system's ceiling for delivering those bytes
//   (`ratio_to_memcpy`).
// - NumPy: nanoGPT's sampling in NumPy, `ix = rng.integers(len(data) - T, size=B)` and
//   `np.stack` of the slices `data[i:i+T]` and `data[i+1:i+1+T]`, over the same stream (the same
//   seed and length make the same values) in a server process (benchmarks/peers/numpy_tokens.py
//   --serve; `RESIDENT_PYTHON` names the interpreter), `ratio_to_numpy`.
// - PyTorch: nanoGPT's `get_batch` verbatim, `torch.stack` of `torch.from_numpy(slice.astype(
//   np.int64))` (benchmarks/peers/torch_tokens.py --serve; `RESIDENT_TORCH_PYTHON`, else
//   `python3` then `/usr/bin/python3`, where Debian's python3-torch lives), `ratio_to_torch`.
// A peer missing (Python, NumPy or PyTorch) leaves its ratio out, saying so once on stderr.
// The baselines are not measured in every iteration, as bench_epoch's peers are: a zero-copy
// iteration of 256 batches takes less time than a few NumPy batches. Instead each baseline runs a
// round after any iteration that leaves its measured time behind resident's, so that each
// gets about as much time as resident, spread through the run under the same conditions.
// On the GPU (compiled by nvcc, run where a device is): the same epochs timed with CUDA events
// on the dataset's stream, against a device-to-device `cudaMemcpyAsync` of each batch's bytes
// (`ratio_to_memcpy`); the peers are host-only.
#include <benchmark/benchmark.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "resident/resident.hpp"
#include "support/cuda_timer.hpp"
#include "support/peer_server.hpp"

namespace {

using resident::DatasetOptions;
using resident::EpochOptions;
using resident::HostSpace;
using resident::HostTensor;
using resident::Shuffle;
using resident::TokenDataset;
using resident::TokenOptions;
using Clock = std::chrono::steady_clock;
using resident::bench::PeerServer;

constexpr std::size_t kTokens = 100'000'000;
constexpr std::size_t kBatch = 64;      // B
constexpr std::size_t kContext = 1024;  // T
constexpr std::uint64_t kSeed = 7;      // of the stream, the shuffles and the peers' sampling
constexpr std::size_t kBatchesPerIteration = 256;
// Batches in a peer's round: enough that the request's own cost (a line each way through a
// pipe) is lost in the round's time, few enough that a PyTorch round stays short.
constexpr std::size_t kPeerBatches = 32;
// The bytes a batch delivers: x and y, B rows of T tokens each.
constexpr std::size_t kBatchBytes = 2 * kBatch * kContext * sizeof(std::uint16_t);

enum Mode : int { kNone, kBatches, kSamples };

const char* mode_name(int mode) {
  constexpr const char* names[] = {"none", "batches", "samples"};
  return names[mode];
}

Shuffle shuffle_of(int mode) {
  return mode == kNone ? Shuffle::none : mode == kBatches ? Shuffle::batches : Shuffle::samples;
}

// Token `i` of the stream: splitmix64 of its position, modulo GPT-2's vocabulary (50,257
// tokens, which fit uint16 as nanoGPT's train.bin stores them). numpy_tokens.py computes the
// same values from the same seed, so that every side reads the same stream.
std::uint16_t token(std::uint64_t i) {
  std::uint64_t z = kSeed + (i + 1) * 0x9E3779B97F4A7C15u;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
  return static_cast<std::uint16_t>((z ^ (z >> 31)) % 50257);
}

// Made once per process: Google Benchmark calls a benchmark several times while it sizes the
// iteration count, and every call uploads from these tokens.
const std::vector<std::uint16_t>& token_stream() {
  static const std::vector<std::uint16_t> tokens = [] {
    std::vector<std::uint16_t> values(kTokens);
    for (std::size_t i = 0; i < kTokens; ++i) values[i] = token(i);
    return values;
  }();
  return tokens;
}

DatasetOptions token_options() {
  DatasetOptions options;
  options.batch_size = kBatch;
  options.remainder = resident::Remainder::drop;
  options.reserve_bytes = 0;
  return options;
}

template <class Space>
TokenDataset<Space, std::uint16_t> make_dataset(const Space& space, std::size_t stride) {
  const auto& tokens = token_stream();
  return TokenDataset<Space, std::uint16_t>(
      space, token_options(), TokenOptions{kContext, stride},
      HostTensor<const std::uint16_t>(tokens.data(), resident::Shape{tokens.size()}));
}

// Consecutive batches of consecutive epochs (0, 1, ...), each made when the one before has
// served all its batches, so that an iteration can take any number of batches.
template <class Dataset>
class Batches {
 public:
  Batches(Dataset& ds, Shuffle shuffle) : ds_(ds), shuffle_(shuffle) {}

  /// Takes the next `count` batches, handing each to `consume`.
  template <class Consume>
  void next(std::size_t count, Consume&& consume) {
    for (std::size_t taken = 0; taken < count; ++taken) {
      if (!epoch_ || next_ == epoch_->size()) {
        epoch_.reset();  // its ring goes back to the dataset before the next epoch claims it
        epoch_.emplace(ds_.epoch(EpochOptions{kSeed, epochs_++, shuffle_}));
        next_ = 0;
      }
      consume(epoch_->batch(next_++));
    }
  }

 private:
  using Epoch = decltype(std::declval<Dataset&>().epoch(EpochOptions{}));
  Dataset& ds_;
  Shuffle shuffle_;
  std::optional<Epoch> epoch_;
  std::uint64_t epochs_ = 0;
  std::size_t next_ = 0;
};

// One contiguous copy of a batch's bytes per batch, from consecutive places of `source`
// (wrapping at its end) into two alternating batch buffers at `target`: `copy(to, from, bytes)`.
class ContiguousCopies {
 public:
  ContiguousCopies(const void* source, std::size_t source_bytes, void* target)
      : source_(static_cast<const std::byte*>(source)),
        source_bytes_(source_bytes),
        target_(static_cast<std::byte*>(target)) {}

  template <class Copy>
  void next(std::size_t count, Copy&& copy) {
    for (std::size_t b = 0; b < count; ++b, ++copies_) {
      if (offset_ + kBatchBytes > source_bytes_) offset_ = 0;
      copy(target_ + (copies_ % 2) * kBatchBytes, source_ + offset_, kBatchBytes);
      offset_ += kBatchBytes;
    }
  }

 private:
  const std::byte* source_;
  std::size_t source_bytes_;
  std::byte* target_;
  std::size_t offset_ = 0;
  std::size_t copies_ = 0;
};

// A baseline measured in rounds between resident's iterations: a round runs whenever the
// baseline's measured seconds are not ahead of resident's, so that both get about the same time,
// interleaved (see the file comment). `round()` returns its seconds, or nothing once the
// baseline has failed (a peer that stopped), which ends its rounds.
struct Baseline {
  double seconds = 0;
  std::size_t batches = 0;
  bool failed = false;

  template <class Round>
  void keep_up(double resident_seconds, std::size_t round_batches, Round&& round) {
    if (failed || seconds > resident_seconds) return;
    const std::optional<double> measured = round();
    if (!measured) {
      failed = true;
      return;
    }
    seconds += *measured;
    batches += round_batches;
  }
  [[nodiscard]] bool measured() const noexcept { return !failed && batches != 0; }
  [[nodiscard]] double seconds_per_batch() const { return seconds / static_cast<double>(batches); }
};

// Says once on stderr that a peer could not run.
void no_peer(const char* peer, const std::string& command) {
  static std::vector<std::string> said;
  if (std::find(said.begin(), said.end(), peer) != said.end()) return;
  said.emplace_back(peer);
  std::fprintf(stderr, "bench_tokens: no %s peer (`%s` failed); its ratio left out\n", peer,
               command.c_str());
}

std::string peer_command(const std::string& python, const char* script) {
  return python + " '" + script + "' --serve --tokens " + std::to_string(kTokens) + " --seed " +
         std::to_string(kSeed) + " --batch " + std::to_string(kBatch) + " --context " +
         std::to_string(kContext);
}

// The peers, started once per process (each makes its 200 MB stream) and kept for every
// benchmark; null where one cannot run, said once on stderr.
PeerServer* numpy_peer() {
  static const std::unique_ptr<PeerServer> server = [] {
    const char* python = std::getenv("RESIDENT_PYTHON");
    auto started = std::make_unique<PeerServer>(
        peer_command(python != nullptr ? python : "python3", RESIDENT_NUMPY_TOKENS_PEER));
    if (!started->running()) no_peer("NumPy", started->command());
    return started->running() ? std::move(started) : nullptr;
  }();
  return server.get();
}

PeerServer* torch_peer() {
  static const std::unique_ptr<PeerServer> server = [] {
    const char* chosen = std::getenv("RESIDENT_TORCH_PYTHON");
    std::vector<std::string> pythons{"python3", "/usr/bin/python3"};
    if (chosen != nullptr) pythons = {chosen};
    std::string command;
    for (const auto& python : pythons) {
      // Quiet: a python3 without PyTorch (a fresh pyenv) is expected before the system's.
      command = peer_command(python, RESIDENT_TORCH_TOKENS_PEER) + " 2>/dev/null";
      auto started = std::make_unique<PeerServer>(command);
      if (started->running()) return started;
    }
    no_peer("PyTorch", command);
    return std::unique_ptr<PeerServer>();
  }();
  return server.get();
}

// Sets the counters every benchmark reports: batches, bytes served, and each baseline's
// batches/s and ratio (its seconds per batch over resident's).
void report(benchmark::State& state, double resident_seconds,
            std::initializer_list<std::pair<const char*, const Baseline*>> baselines) {
  const double batches = static_cast<double>(state.iterations() * kBatchesPerIteration);
  state.SetItemsProcessed(static_cast<std::int64_t>(batches));
  state.SetBytesProcessed(static_cast<std::int64_t>(batches * kBatchBytes));
  const double per_batch = resident_seconds / batches;
  for (const auto& [name, baseline] : baselines) {
    if (!baseline->measured()) continue;
    state.counters[std::string(name) + "_batches_per_s"] = 1.0 / baseline->seconds_per_batch();
    state.counters[std::string("ratio_to_") + name] = baseline->seconds_per_batch() / per_batch;
  }
}

std::string label(int mode, std::size_t stride, std::size_t epoch_batches) {
  return std::string(mode_name(mode)) + ", stride " + std::to_string(stride) + ", " +
         std::to_string(epoch_batches) + " batches an epoch";
}

// Arguments: the mode (`Mode`) and the stride.
void BM_HostTokens(benchmark::State& state) {
  const int mode = static_cast<int>(state.range(0));
  const auto stride = static_cast<std::size_t>(state.range(1));
  auto ds = make_dataset(HostSpace{}, stride);
  Batches<decltype(ds)> batches(ds, shuffle_of(mode));
  std::vector<std::byte> target(2 * kBatchBytes, std::byte{1});  // touched, as the ring is
  ContiguousCopies copies(ds.tokens().data(), ds.bytes(), target.data());
  PeerServer* numpy = numpy_peer();
  PeerServer* torch = torch_peer();

  std::uint64_t sum = 0;
  const auto consume = [&sum](const auto& batch) {
    const auto& [x, y] = batch;
    for (std::size_t r = 0; r < x.rows(); ++r)
      sum += x.data()[r * x.row_elements()] + y.data()[r * y.row_elements()];
  };
  const auto copy = [](std::byte* to, const std::byte* from, std::size_t bytes) {
    std::memcpy(to, from, bytes);
    benchmark::ClobberMemory();
  };
  const auto seconds_since = [](Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
  };
  // Untimed: the first epoch's ring and copy team, the copies' first pass over their pages.
  batches.next(kBatchesPerIteration, consume);
  copies.next(kBatchesPerIteration, copy);

  double seconds = 0;
  Baseline memcpy_baseline, numpy_baseline, torch_baseline;
  for (auto _ : state) {
    const auto start = Clock::now();
    batches.next(kBatchesPerIteration, consume);
    const double iteration = seconds_since(start);
    state.SetIterationTime(iteration);
    seconds += iteration;
    memcpy_baseline.keep_up(seconds, kBatchesPerIteration, [&]() -> std::optional<double> {
      const auto copies_start = Clock::now();
      copies.next(kBatchesPerIteration, copy);
      return seconds_since(copies_start);
    });
    if (numpy != nullptr)
      numpy_baseline.keep_up(seconds, kPeerBatches,
                             [&] { return numpy->ask(std::to_string(kPeerBatches) + "\n"); });
    if (torch != nullptr)
      torch_baseline.keep_up(seconds, kPeerBatches,
                             [&] { return torch->ask(std::to_string(kPeerBatches) + "\n"); });
  }
  benchmark::DoNotOptimize(sum);
  if (numpy_baseline.failed) no_peer("NumPy", numpy->command());
  if (torch_baseline.failed) no_peer("PyTorch", torch->command());
  report(state, seconds,
         {{"memcpy", &memcpy_baseline}, {"numpy", &numpy_baseline}, {"torch", &torch_baseline}});
  state.SetLabel(label(mode, stride, ds.num_batches()));
}

#if defined(__CUDACC__)
// The same epochs on the device, timed with CUDA events on the dataset's stream (the gathers are
// kernels on it; the host only launches them), against a device-to-device copy of each batch's
// bytes from the stored stream.
void BM_CudaTokens(benchmark::State& state) {
  if (resident::CudaSpace::device_count() == 0) {
    state.SkipWithError("no CUDA device on this machine");
    return;
  }
  const int mode = static_cast<int>(state.range(0));
  const auto stride = static_cast<std::size_t>(state.range(1));
  auto ds = make_dataset(resident::CudaSpace{0}, stride);
  Batches<decltype(ds)> batches(ds, shuffle_of(mode));
  void* target = nullptr;
  RESIDENT_CUDA_TRY(cudaMalloc(&target, 2 * kBatchBytes));
  const std::unique_ptr<void, decltype(&cudaFree)> target_owner(target, &cudaFree);
  ContiguousCopies copies(ds.tokens().data(), ds.bytes(), target);
  resident::bench::CudaTimer timer;

  // The views are in device memory, which the host does not read: kept, not touched.
  const auto consume = [](const auto& batch) {
    benchmark::DoNotOptimize(std::get<0>(batch).data());
    benchmark::DoNotOptimize(std::get<1>(batch).data());
  };
  const auto copy = [&ds](std::byte* to, const std::byte* from, std::size_t bytes) {
    RESIDENT_CUDA_TRY(cudaMemcpyAsync(to, from, bytes, cudaMemcpyDeviceToDevice, ds.stream()));
  };
  batches.next(kBatchesPerIteration, consume);  // untimed: the first epoch's ring
  copies.next(kBatchesPerIteration, copy);
  RESIDENT_CUDA_TRY(cudaStreamSynchronize(ds.stream()));

  double seconds = 0;
  Baseline memcpy_baseline;
  for (auto _ : state) {
    timer.start(ds.stream());
    batches.next(kBatchesPerIteration, consume);
    const double iteration = timer.stop(ds.stream());
    state.SetIterationTime(iteration);
    seconds += iteration;
    memcpy_baseline.keep_up(seconds, kBatchesPerIteration, [&]() -> std::optional<double> {
      timer.start(ds.stream());
      copies.next(kBatchesPerIteration, copy);
      return timer.stop(ds.stream());
    });
  }
  report(state, seconds, {{"memcpy", &memcpy_baseline}});
  state.SetLabel(label(mode, stride, ds.num_batches()));
}
#endif

void register_all() {
  const auto add = [](const char* name, auto function) {
    benchmark::RegisterBenchmark(name, function)
        ->Args({kSamples, kContext})
        ->Args({kSamples, 1})
        ->Args({kNone, kContext})
        ->Args({kBatches, kContext})
        ->ArgNames({"mode", "stride"})
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
  };
  add("BM_HostTokens/u16", BM_HostTokens);
#if defined(__CUDACC__)
  add("BM_CudaTokens/u16", BM_CudaTokens);
#endif
}

}  // namespace

int main(int argc, char** argv) {
  // A peer that dies mid-run must cost its ratio (a failed write), not the run (SIGPIPE).
  (void)::signal(SIGPIPE, SIG_IGN);
  register_all();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
