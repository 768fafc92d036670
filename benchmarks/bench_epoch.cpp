// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// Epoch throughput per shuffle mode, next to a contiguous copy of the same bytes measured in
// the same run, just before the epochs (`ratio_to_copy`): on the host a memcpy, on the GPU a
// device-to-device cudaMemcpy, both over the bytes the epoch delivers. (Timing the copy in
// every iteration would make it dominate the zero-copy modes, whose epochs take microseconds.)
// Data: CIFAR-10-shaped uint8 images (50,000 x 3 x 32 x 32) with int32 labels, and a wider float32
// case (20,000 x 2,048); on the GPU also rows of one int32 (1,000,000 of them, with their
// labels), whose gathers put many rows in a block. Compiled by nvcc where it exists, so that the
// device gathers can launch. The host's shuffled epochs are also measured against NumPy's fancy
// indexing on the same shapes
// (`ratio_to_numpy`, from benchmarks/peers/numpy_epoch.py run as a subprocess before the epochs;
// left out, with a message, where Python or NumPy is missing).
// Augmented epochs (CIFAR rows as CHW 3x32x32: RandomCrop{4} and RandomFlip, then also Normalize
// and Cutout{8}) alternate with plain `samples` epochs of the same dataset and the same
// conversion in every iteration (`ratio_to_samples`: the plain epoch's mean time over the
// augmented one's, so the cost of the augmentation alone).
// Streamed epochs (BM_HostStreamedEpoch: CIFAR rows in a StreamingDataset of a quarter of the
// data's bytes, in whole-epoch or window order, the rows in a vector, with or without
// `StreamOptions::large_pages`, or on large pages already) alternate with the preloaded dataset's
// epoch of the same options in every iteration (`ratio_to_preloaded`: the preloaded epoch's mean
// time over the streamed one's); `made_s` and `preloaded_made_s` are the seconds each dataset
// took to make (once per run: one figure, not a mean).
// Mixed epochs (BM_HostMixedEpoch, BM_CudaMixedEpoch: the CIFAR rows split into sources of a
// quarter and three quarters, mixed by weights 0.25 and 0.75 in periods of one batch, so that the
// epoch serves every row once) alternate with the single dataset's `Shuffle::samples` epoch of
// the same rows in every iteration (`ratio_to_single`: the single epoch's mean time over the
// mixed one's, so the cost of mixing alone; 1 is free).
#include <benchmark/benchmark.h>
#include <sched.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "resident/resident.hpp"
#include "support/cuda_timer.hpp"
#include "support/peer_server.hpp"

namespace {

using resident::DatasetOptions;
using resident::DeviceDataset;
using resident::EpochOptions;
using resident::HostSpace;
using resident::HostTensor;
using resident::Shuffle;
using Clock = std::chrono::steady_clock;

constexpr std::size_t kBatch = 256;

enum Mode : int {
  kNone,
  kBatches,
  kSamples,
  kSamplesNormalize,
  kSamplesAugment,
  kSamplesAugmentNormalize
};

const char* mode_name(int mode) {
  constexpr const char* names[] = {"none",
                                   "batches",
                                   "samples",
                                   "samples+normalize",
                                   "samples+crop+flip",
                                   "samples+crop+flip+normalize+cutout"};
  return names[mode];
}

bool converts(int mode) { return mode == kSamplesNormalize || mode == kSamplesAugmentNormalize; }
bool augments(int mode) { return mode >= kSamplesAugment; }

struct Shape {
  std::size_t rows;
  std::size_t row_elements;
};
constexpr Shape kCifar{50000, 3 * 32 * 32};  // uint8 features
constexpr Shape kWide{20000, 2048};          // float32 features
constexpr Shape kLabels{1000000, 1};  // one int32 feature: rows narrower than a thread's word

DatasetOptions epoch_options(std::size_t batch = kBatch) {
  DatasetOptions options;
  options.batch_size = batch;
  options.remainder = resident::Remainder::drop;
  options.reserve_bytes = 0;
  return options;
}

template <class T>
std::vector<T> synthetic(std::size_t count) {
  std::vector<T> values(count);
  for (std::size_t i = 0; i < count; ++i) values[i] = static_cast<T>(i * 2654435761u % 251);
  return values;
}

// One epoch: every batch taken (gathered where the mode gathers), its views kept alive.
template <class Epoch>
std::size_t run_epoch(Epoch& epoch) {
  std::size_t rows = 0;
  for (auto batch : epoch) {
    benchmark::DoNotOptimize(std::get<0>(batch).data());
    rows += std::get<0>(batch).rows();
  }
  return rows;
}

// Runs the epochs; `time_epoch(ds, options)` returns one epoch's seconds and
// `time_copy(bytes)` one contiguous copy's.
template <class Space, class Feature, class TimeEpoch, class TimeCopy>
void epoch_iterations(benchmark::State& state, const Space& space, Shape shape, int mode,
                      TimeEpoch&& time_epoch, TimeCopy&& time_copy) {
  const auto x = synthetic<Feature>(shape.rows * shape.row_elements);
  const auto y = synthetic<std::int32_t>(shape.rows);
  DeviceDataset<Space, Feature, std::int32_t> ds(
      space, epoch_options(), HostTensor<const Feature>(x.data(), {shape.rows, shape.row_elements}),
      HostTensor<const std::int32_t>(y.data(), {shape.rows}));
  const std::size_t delivered_row_bytes =
      shape.row_elements * (converts(mode) ? sizeof(float) : sizeof(Feature)) +
      sizeof(std::int32_t);
  const std::size_t epoch_bytes = ds.num_batches() * kBatch * delivered_row_bytes;
  // The mean of three copies, as the epochs report their mean.
  double copy_seconds = 0;
  for (int round = 0; round < 3; ++round) copy_seconds += time_copy(epoch_bytes) / 3;
  double epoch_seconds = 0;
  double plain_seconds = 0;  // of the plain samples epochs beside augmented ones, same conversion
  std::uint64_t epoch_number = 0;
  for (auto _ : state) {
    const EpochOptions options{7, epoch_number++,
                               mode == kNone      ? Shuffle::none
                               : mode == kBatches ? Shuffle::batches
                                                  : Shuffle::samples};
    const double seconds = time_epoch(ds, options, mode);
    epoch_seconds += seconds;
    state.SetIterationTime(seconds);
    if (augments(mode))
      plain_seconds += time_epoch(ds, options, converts(mode) ? kSamplesNormalize : kSamples);
  }
  const double epochs = static_cast<double>(state.iterations());
  const double mean_epoch = epoch_seconds / epochs;
  state.SetBytesProcessed(static_cast<std::int64_t>(epochs * static_cast<double>(epoch_bytes)));
  state.counters["rows_per_s"] = static_cast<double>(ds.num_batches() * kBatch) / mean_epoch;
  state.counters["epochs_per_s"] = 1.0 / mean_epoch;
  state.counters["copy_GBps"] = static_cast<double>(epoch_bytes) / copy_seconds / 1e9;
  state.counters["ratio_to_copy"] = copy_seconds / mean_epoch;
  if (augments(mode)) state.counters["ratio_to_samples"] = plain_seconds / epochs / mean_epoch;
  state.SetLabel(std::string(mode_name(mode)) + ", rows of " +
                 std::to_string(shape.row_elements * sizeof(Feature)) + " B");
}

template <class Ds>
std::size_t any_epoch(Ds& ds, const EpochOptions& options, int mode) {
  const auto normalize = resident::convert<0>(resident::Normalize{1.0f / 255, -0.5f});
  const auto image = resident::ImageLayout::chw(3, 32, 32);
  if (mode == kSamplesNormalize) {
    auto epoch = ds.epoch(options, normalize);
    return run_epoch(epoch);
  }
  if (mode == kSamplesAugment) {
    auto epoch = ds.epoch(
        options, resident::augment<0>(image, resident::RandomCrop{4}, resident::RandomFlip{}));
    return run_epoch(epoch);
  }
  if (mode == kSamplesAugmentNormalize) {
    auto epoch = ds.epoch(options, normalize,
                          resident::augment<0>(image, resident::RandomCrop{4},
                                               resident::RandomFlip{}, resident::Cutout{8}));
    return run_epoch(epoch);
  }
  auto epoch = ds.epoch(options);
  return run_epoch(epoch);
}

// What `command` printed on stdout, or nothing where it failed.
std::optional<std::string> output_of(const std::string& command) {
  std::string output;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return std::nullopt;
  char buffer[256];
  while (std::fgets(buffer, sizeof buffer, pipe) != nullptr) output += buffer;
  if (::pclose(pipe) != 0) return std::nullopt;
  return output;
}

// The number after `"key": ` in `json`, or nothing.
std::optional<double> number_after(const std::string& json, const std::string& key) {
  const std::string quoted = "\"" + key + "\": ";
  const std::size_t at = json.find(quoted);
  if (at == std::string::npos) return std::nullopt;
  return std::strtod(json.c_str() + at + quoted.size(), nullptr);
}

// Says once on stderr that a peer could not run.
void no_peer(const char* peer, const std::string& command) {
  static std::vector<std::string> said;
  if (std::find(said.begin(), said.end(), peer) != said.end()) return;
  said.emplace_back(peer);
  std::fprintf(stderr, "bench_epoch: no %s peer (`%s` failed); its ratios left out\n", peer,
               command.c_str());
}

// Seconds of one NumPy epoch of `shape` in `mode` (a shuffled mode) with batches of `batch`
// rows, or nothing where the peer cannot run.
std::optional<double> numpy_epoch_seconds(Shape shape, const char* dtype, int mode,
                                          std::size_t batch = kBatch) {
  const char* python = std::getenv("RESIDENT_PYTHON");
  std::string command = std::string(python != nullptr ? python : "python3") + " '" +
                        RESIDENT_NUMPY_PEER + "' --rows " + std::to_string(shape.rows) +
                        " --row-elements " + std::to_string(shape.row_elements) + " --dtype " +
                        dtype + " --batch " + std::to_string(batch);
  if (mode == kSamplesNormalize) command += " --normalize 0.00392156862745098 -0.5";
  const auto output = output_of(command);
  auto seconds = output ? number_after(*output, "seconds_per_epoch") : std::nullopt;
  if (!seconds) no_peer("NumPy", command);
  return seconds;
}

// The NumPy peer as a server (numpy_epoch.py --serve): one NumPy epoch of CIFAR rows with
// batches of `batch` rows each time `epoch()` is called, so that NumPy's epochs alternate with
// resident's under the same conditions. `running()` is false, said once on stderr, where
// Python or NumPy is missing.
class NumpyServer {
 public:
  explicit NumpyServer(std::size_t batch) : server_(command(batch)) {
    if (!server_.running()) no_peer("NumPy", server_.command());
  }

  [[nodiscard]] bool running() const noexcept { return server_.running(); }

  /// Seconds of one NumPy epoch, or nothing once the server has failed.
  std::optional<double> epoch() {
    const bool was_running = server_.running();
    const std::optional<double> seconds = server_.ask("\n");
    if (!seconds && was_running) no_peer("NumPy", server_.command());
    return seconds;
  }

 private:
  static std::string command(std::size_t batch) {
    const char* python = std::getenv("RESIDENT_PYTHON");
    return std::string(python != nullptr ? python : "python3") + " '" + RESIDENT_NUMPY_PEER +
           "' --serve --rows " + std::to_string(kCifar.rows) + " --row-elements " +
           std::to_string(kCifar.row_elements) + " --dtype uint8 --batch " + std::to_string(batch);
  }

  resident::bench::PeerServer server_;
};

// Seconds of one epoch of PyTorch's two host idioms on CIFAR-shaped uint8 rows with batches of
// `batch` rows (benchmarks/peers/torch_epoch.py --device cpu): the default `DataLoader` over a
// `TensorDataset`, and `x[torch.randperm(n)]` sliced per batch. `RESIDENT_TORCH_PYTHON` names
// the interpreter; unset, `python3` and then the system's `/usr/bin/python3` (where Debian's
// python3-torch lives) are tried.
struct TorchSeconds {
  double dataloader;
  double randperm;
};
std::optional<TorchSeconds> torch_epoch_seconds(std::size_t batch) {
  const char* chosen = std::getenv("RESIDENT_TORCH_PYTHON");
  std::vector<std::string> pythons{"python3", "/usr/bin/python3"};
  if (chosen != nullptr) pythons = {chosen};
  std::string command;
  for (const auto& python : pythons) {
    command = python + " '" + RESIDENT_TORCH_PEER + "' --device cpu --rows " +
              std::to_string(kCifar.rows) + " --batch " + std::to_string(batch) + " 2>/dev/null";
    const auto output = output_of(command);
    if (!output) continue;
    const auto dataloader = number_after(*output, "torch_dataloader");
    const auto randperm = number_after(*output, "torch_randperm");
    if (dataloader && randperm) return TorchSeconds{*dataloader, *randperm};
  }
  no_peer("PyTorch", command);
  return std::nullopt;
}

template <class Feature>
void BM_HostEpoch(benchmark::State& state, Shape shape) {
  const int mode = static_cast<int>(state.range(0));
  std::optional<double> numpy_seconds;
  if (mode == kSamples || mode == kSamplesNormalize)
    numpy_seconds =
        numpy_epoch_seconds(shape, std::is_same_v<Feature, float> ? "float32" : "uint8", mode);
  std::vector<std::byte> copy_source, copy_target;
  const auto seconds_since = [](Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
  };
  epoch_iterations<HostSpace, Feature>(
      state, HostSpace{}, shape, mode,
      [&](auto& ds, const EpochOptions& options, int epoch_mode) {
        const auto start = Clock::now();
        benchmark::DoNotOptimize(any_epoch(ds, options, epoch_mode));
        return seconds_since(start);
      },
      [&](std::size_t bytes) {
        copy_source.assign(bytes, std::byte{1});
        copy_target.assign(bytes, std::byte{2});
        const auto start = Clock::now();
        std::memcpy(copy_target.data(), copy_source.data(), bytes);
        benchmark::ClobberMemory();
        return seconds_since(start);
      });
  if (numpy_seconds) {
    state.counters["numpy_epochs_per_s"] = 1.0 / *numpy_seconds;
    state.counters["ratio_to_numpy"] = *numpy_seconds * state.counters["epochs_per_s"].value;
  }
}

// CIFAR rows stored HWC (32x32x3, as NumPy and Keras hold them), normalized per channel in a
// `Shuffle::samples` epoch and served CHW (`OutputLayout`, what torch's convolutions read), with
// crop and flip or not (`range(0)`). Each iteration also runs the same epoch served HWC, as
// stored (`ratio_to_hwc`: the HWC epoch's mean time over the CHW one's, so the cost of the new
// order alone; 1 is free).
void BM_HostEpochChw(benchmark::State& state) {
  const bool crop_flip = state.range(0) != 0;
  const auto x = synthetic<std::uint8_t>(kCifar.rows * kCifar.row_elements);
  const auto y = synthetic<std::int32_t>(kCifar.rows);
  DeviceDataset<HostSpace, std::uint8_t, std::int32_t> ds(
      HostSpace{}, epoch_options(),
      HostTensor<const std::uint8_t>(x.data(), {kCifar.rows, 32, 32, 3}),
      HostTensor<const std::int32_t>(y.data(), {kCifar.rows}));
  const auto image = resident::ImageLayout::hwc(32, 32, 3);
  const auto normalize = resident::convert<0>(resident::Normalize::mean_std(
      {0.49f, 0.48f, 0.45f}, {0.25f, 0.24f, 0.26f}, image, 1.0f / 255));
  const auto timed = [&](auto&& epoch) {
    const auto start = Clock::now();
    benchmark::DoNotOptimize(run_epoch(epoch));
    return std::chrono::duration<double>(Clock::now() - start).count();
  };
  const auto augmentation = [&](auto... output) {
    return crop_flip ? resident::augment<0>(image, resident::RandomCrop{4}, resident::RandomFlip{},
                                            output...)
                     : resident::augment<0>(image, output...);
  };
  double chw_seconds = 0, hwc_seconds = 0;
  std::uint64_t epoch_number = 0;
  for (auto _ : state) {
    const EpochOptions options{7, epoch_number++, Shuffle::samples};
    const double seconds =
        timed(ds.epoch(options, normalize, augmentation(resident::OutputLayout{})));
    chw_seconds += seconds;
    state.SetIterationTime(seconds);
    hwc_seconds += crop_flip ? timed(ds.epoch(options, normalize, augmentation()))
                             : timed(ds.epoch(options, normalize));
  }
  const double epochs = static_cast<double>(state.iterations());
  state.counters["epochs_per_s"] = epochs / chw_seconds;
  state.counters["ratio_to_hwc"] = hwc_seconds / chw_seconds;
  state.SetLabel(std::string("samples+normalize") + (crop_flip ? "+crop+flip" : "") +
                 ", HWC rows served CHW");
}

// Seconds of one epoch of the memory system's limit for a shuffled gather: the rows of
// `ds`'s epoch `options` (the same row ids, computed before the clock starts) copied with
// `std::memcpy`, features and labels, into two batch buffers in turn by as many threads as the
// dataset's epochs use, each thread a fixed share of every batch, with nothing between the
// batches: no hand-off, no index, no conversion, no check.
template <class Dataset>
double raw_gather_seconds(Dataset& ds, const EpochOptions& options, std::size_t batch) {
  const std::size_t batches = ds.num_batches();
  std::vector<std::int64_t> rows;
  rows.reserve(batches * batch);
  {
    auto epoch = ds.epoch(options);
    for (std::size_t b = 0; b < batches; ++b) {
      const auto indices = epoch.batch_indices(b);
      rows.insert(rows.end(), indices.data(), indices.data() + indices.rows());
    }
  }
  const auto* features = ds.template field<0>().data();
  const auto* labels = ds.template field<1>().data();
  const std::size_t row_bytes = kCifar.row_elements;
  static std::vector<std::uint8_t> x_out(2 * batch * row_bytes);
  static std::vector<std::int32_t> y_out(2 * batch);
  x_out.resize(2 * batch * row_bytes);
  y_out.resize(2 * batch);
  const unsigned threads = resident::detail::gather_thread_count(0, batch * (row_bytes + 4));
  const auto share = [&](unsigned thread) {
    const std::size_t first = batch * thread / threads, last = batch * (thread + 1) / threads;
    for (std::size_t b = 0; b < batches; ++b) {
      const std::int64_t* ids = rows.data() + b * batch;
      std::uint8_t* x = x_out.data() + (b % 2) * batch * row_bytes;
      std::int32_t* y = y_out.data() + (b % 2) * batch;
      for (std::size_t r = first; r < last; ++r) {
        if (r + 4 < last) __builtin_prefetch(features + ids[r + 4] * row_bytes);
        std::memcpy(x + r * row_bytes, features + ids[r] * row_bytes, row_bytes);
        y[r] = labels[ids[r]];
      }
    }
  };
  const auto start = Clock::now();
  std::vector<std::thread> team;
  for (unsigned thread = 1; thread < threads; ++thread) team.emplace_back(share, thread);
  share(0);
  for (auto& thread : team) thread.join();
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  benchmark::DoNotOptimize(x_out.data());
  return seconds;
}

// A second process that keeps the machine's last core busy while it lives: the load a
// training step, another job or the system puts beside an input pipeline. It spins in user
// space, pinned to that core, and is killed when this object goes.
class BusyCore {
 public:
  BusyCore() {
    const unsigned cores = std::max(std::thread::hardware_concurrency(), 1u);
    child_ = ::fork();
    if (child_ == 0) {
      cpu_set_t set;
      CPU_ZERO(&set);
      CPU_SET(cores - 1, &set);
      (void)::sched_setaffinity(0, sizeof set, &set);
      for (volatile unsigned long spins = 0;; spins = spins + 1) {
      }
    }
    if (child_ < 0) throw std::runtime_error("bench_epoch: fork failed; no contended figures");
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // spinning before we measure
  }
  ~BusyCore() {
    (void)::kill(child_, SIGKILL);
    (void)::waitpid(child_, nullptr, 0);
  }
  BusyCore(const BusyCore&) = delete;
  BusyCore& operator=(const BusyCore&) = delete;

 private:
  pid_t child_ = -1;
};

// A `Shuffle::samples` epoch of CIFAR rows with batches of `range(0)` rows beside its peers,
// all measured under the same load in the same run: quiet (`range(1)` 0) or with one core kept
// busy by another process (1). NumPy's fancy indexing runs one epoch after each of resident's,
// in a server process, so that both see the same conditions (`ratio_to_numpy`: NumPy's mean
// epoch time over resident's). PyTorch's default `DataLoader` over a `TensorDataset` and
// `x[torch.randperm(n)]` sliced per batch, ten to twenty times slower, run once before
// (`ratio_to_torch_dataloader`, `ratio_to_torch_randperm`). `ratio_to_raw_gather` compares
// with the memory system's limit for this access pattern: the same rows in the same order
// copied by as many threads, each taking a fixed share of every batch, with no hand-off,
// conversion or bookkeeping (see `raw_gather_seconds`). Run with `--benchmark_repetitions=3`
// for three rounds.
void BM_HostEpochVsPeers(benchmark::State& state) {
  const auto batch = static_cast<std::size_t>(state.range(0));
  const bool loaded = state.range(1) != 0;
  const auto x = synthetic<std::uint8_t>(kCifar.rows * kCifar.row_elements);
  const auto y = synthetic<std::int32_t>(kCifar.rows);
  DeviceDataset<HostSpace, std::uint8_t, std::int32_t> ds(
      HostSpace{}, epoch_options(batch),
      HostTensor<const std::uint8_t>(x.data(), {kCifar.rows, kCifar.row_elements}),
      HostTensor<const std::int32_t>(y.data(), {kCifar.rows}));
  NumpyServer numpy(batch);  // made (its data too) before the load starts
  std::optional<BusyCore> load;
  if (loaded) load.emplace();
  const auto torch = torch_epoch_seconds(batch);
  double seconds = 0, numpy_seconds = 0, raw_seconds = 0;
  std::uint64_t epoch_number = 0;
  for (auto _ : state) {
    const EpochOptions options{7, epoch_number++, Shuffle::samples};
    const auto start = Clock::now();
    auto epoch = ds.epoch(options);
    benchmark::DoNotOptimize(run_epoch(epoch));
    const double epoch_seconds = std::chrono::duration<double>(Clock::now() - start).count();
    seconds += epoch_seconds;
    state.SetIterationTime(epoch_seconds);
    if (const auto peer = numpy.epoch()) numpy_seconds += *peer;
    raw_seconds += raw_gather_seconds(ds, options, batch);
  }
  const double epochs = static_cast<double>(state.iterations());
  const double mean = seconds / epochs;
  state.counters["epochs_per_s"] = 1.0 / mean;
  state.counters["ratio_to_raw_gather"] = raw_seconds / seconds;
  if (numpy.running()) state.counters["ratio_to_numpy"] = numpy_seconds / seconds;
  if (torch) {
    state.counters["ratio_to_torch_dataloader"] = torch->dataloader / mean;
    state.counters["ratio_to_torch_randperm"] = torch->randperm / mean;
  }
  state.SetLabel(std::string(loaded ? "one core busy" : "quiet") + ", batch " +
                 std::to_string(batch));
}

// The copy team's size: the same `Shuffle::samples` epoch of CIFAR rows, batches of `range(0)`
// rows, gathered by one thread and by two (`DatasetOptions::gather_threads`), alternating in
// every iteration, quiet (`range(1)` 0) or with one core busy (1). `ratio_two_to_one` is the
// one-thread epoch's time over the two-thread one's: above 1, a second thread pays.
void BM_HostGatherTeam(benchmark::State& state) {
  const auto batch = static_cast<std::size_t>(state.range(0));
  const bool loaded = state.range(1) != 0;
  const auto x = synthetic<std::uint8_t>(kCifar.rows * kCifar.row_elements);
  const auto y = synthetic<std::int32_t>(kCifar.rows);
  const auto make = [&](unsigned threads) {
    DatasetOptions options = epoch_options(batch);
    options.gather_threads = threads;
    return DeviceDataset<HostSpace, std::uint8_t, std::int32_t>(
        HostSpace{}, options,
        HostTensor<const std::uint8_t>(x.data(), {kCifar.rows, kCifar.row_elements}),
        HostTensor<const std::int32_t>(y.data(), {kCifar.rows}));
  };
  auto one = make(1);
  auto two = make(2);
  std::optional<BusyCore> load;
  if (loaded) load.emplace();
  const auto seconds_of = [](auto& ds, const EpochOptions& options) {
    const auto start = Clock::now();
    auto epoch = ds.epoch(options);
    benchmark::DoNotOptimize(run_epoch(epoch));
    return std::chrono::duration<double>(Clock::now() - start).count();
  };
  double one_seconds = 0, two_seconds = 0;
  std::uint64_t epoch_number = 0;
  for (auto _ : state) {
    const EpochOptions options{7, epoch_number++, Shuffle::samples};
    const double seconds = seconds_of(two, options);
    two_seconds += seconds;
    state.SetIterationTime(seconds);
    one_seconds += seconds_of(one, options);
  }
  state.counters["ratio_two_to_one"] = one_seconds / two_seconds;
  state.counters["batch_KiB"] =
      static_cast<double>(batch * (kCifar.row_elements + sizeof(std::int32_t))) / 1024;
  state.SetLabel(std::string(loaded ? "one core busy" : "quiet") + ", batch " +
                 std::to_string(batch));
}

// Where the caller's rows lie in BM_HostStreamedEpoch, and whether the stream advises large
// pages for them (`StreamOptions::large_pages`).
enum Rows : int {
  kVectorAsIs,  // a `std::vector`, on the system's small pages, left so
  kVector,      // a `std::vector`, with the default options (large pages advised)
  kLargePages,  // memory of `HostSpace::allocate`: 2 MiB pages where the system gives them
};

// A streamed epoch of CIFAR rows from host memory against the preloaded one, alternating.
// Arguments: the mode (none, batches, samples, samples+normalize), the order (0 whole-epoch,
// 1 window) and `Rows` (rows read in random order cost a TLB miss each on small pages; the
// preloaded dataset's own copy is on large pages).
void BM_HostStreamedEpoch(benchmark::State& state) {
  const int mode = static_cast<int>(state.range(0));
  const bool window = state.range(1) != 0;
  const auto rows = static_cast<Rows>(state.range(2));
  const bool large_pages = rows == kLargePages;
  const Shape shape = kCifar;
  const auto x = synthetic<std::uint8_t>(shape.rows * shape.row_elements);
  const auto y = synthetic<std::int32_t>(shape.rows);
  const HostSpace pages;
  const std::unique_ptr<void, std::function<void(void*)>> copy(
      large_pages ? pages.allocate(x.size()) : nullptr,
      [&](void* pointer) { pages.deallocate(pointer, x.size()); });
  if (copy) std::memcpy(copy.get(), x.data(), x.size());
  const HostTensor<const std::uint8_t> features(
      copy ? static_cast<const std::uint8_t*>(copy.get()) : x.data(),
      {shape.rows, shape.row_elements});
  const HostTensor<const std::int32_t> labels(y.data(), {shape.rows});
  auto made_at = Clock::now();
  DeviceDataset<HostSpace, std::uint8_t, std::int32_t> preloaded(HostSpace{}, epoch_options(),
                                                                 features, labels);
  state.counters["preloaded_made_s"] =
      std::chrono::duration<double>(Clock::now() - made_at).count();
  DatasetOptions options = epoch_options();
  options.streaming.order =
      window ? resident::StreamOrder::window : resident::StreamOrder::whole_epoch;
  options.streaming.large_pages = rows != kVectorAsIs;
  made_at = Clock::now();
  resident::StreamingDataset<HostSpace, std::uint8_t, std::int32_t> streamed(
      HostSpace::with_budget(x.size() / 4), options, features, labels);
  state.counters["made_s"] = std::chrono::duration<double>(Clock::now() - made_at).count();
  const auto seconds_of = [](auto& ds, const EpochOptions& epoch, int epoch_mode) {
    const auto start = Clock::now();
    benchmark::DoNotOptimize(any_epoch(ds, epoch, epoch_mode));
    return std::chrono::duration<double>(Clock::now() - start).count();
  };
  double streamed_seconds = 0, preloaded_seconds = 0;
  std::uint64_t epoch_number = 0;
  for (auto _ : state) {
    const EpochOptions epoch{7, epoch_number++,
                             mode == kNone      ? Shuffle::none
                             : mode == kBatches ? Shuffle::batches
                                                : Shuffle::samples};
    const double seconds = seconds_of(streamed, epoch, mode);
    streamed_seconds += seconds;
    state.SetIterationTime(seconds);
    preloaded_seconds += seconds_of(preloaded, epoch, mode);
  }
  const double epochs = static_cast<double>(state.iterations());
  state.counters["epochs_per_s"] = epochs / streamed_seconds;
  state.counters["preloaded_epochs_per_s"] = epochs / preloaded_seconds;
  state.counters["ratio_to_preloaded"] = preloaded_seconds / streamed_seconds;
  state.SetLabel(std::string(mode_name(mode)) +
                 (window ? ", window order" : ", whole-epoch order") +
                 (rows == kLargePages ? ", rows on large pages"
                  : rows == kVector   ? ", rows in a vector"
                                      : ", rows in a vector left on small pages") +
                 ", " + std::to_string(streamed.num_chunks()) + " chunks");
}

// The mixed epochs against the single dataset's (see the file's comment); `time_epoch(ds,
// options)` returns one epoch's seconds.
template <class Space, class TimeEpoch>
void mixed_iterations(benchmark::State& state, const Space& space, TimeEpoch&& time_epoch) {
  const auto x = synthetic<std::uint8_t>(kCifar.rows * kCifar.row_elements);
  const auto y = synthetic<std::int32_t>(kCifar.rows);
  using Images = DeviceDataset<Space, std::uint8_t, std::int32_t>;
  const auto part = [&](std::size_t first, std::size_t rows) {
    return Images(space, epoch_options(),
                  HostTensor<const std::uint8_t>(x.data() + first * kCifar.row_elements,
                                                 {rows, kCifar.row_elements}),
                  HostTensor<const std::int32_t>(y.data() + first, {rows}));
  };
  Images single = part(0, kCifar.rows);
  const std::size_t quarter = kCifar.rows / 4;
  const Images first = part(0, quarter);
  const Images rest = part(quarter, kCifar.rows - quarter);
  resident::Mixture<Space, std::uint8_t, std::int32_t> mixed(
      {first, rest}, {resident::MixtureShare::weight(0.25), resident::MixtureShare::weight(0.75)},
      {kBatch, kCifar.rows}, epoch_options());
  double mixed_seconds = 0, single_seconds = 0;
  std::uint64_t epoch_number = 0;
  for (auto _ : state) {
    const EpochOptions options{7, epoch_number++, Shuffle::samples};
    const double seconds = time_epoch(mixed, options);
    mixed_seconds += seconds;
    state.SetIterationTime(seconds);
    single_seconds += time_epoch(single, options);
  }
  const double epochs = static_cast<double>(state.iterations());
  state.counters["epochs_per_s"] = epochs / mixed_seconds;
  state.counters["ratio_to_single"] = single_seconds / mixed_seconds;
  state.SetLabel("samples, 2 sources (0.25, 0.75), periods of one batch");
}

void BM_HostMixedEpoch(benchmark::State& state) {
  mixed_iterations(state, HostSpace{}, [](auto& ds, const EpochOptions& options) {
    auto epoch = ds.epoch(options);
    const auto start = Clock::now();
    benchmark::DoNotOptimize(run_epoch(epoch));
    return std::chrono::duration<double>(Clock::now() - start).count();
  });
}

#if defined(__CUDACC__)
void BM_CudaMixedEpoch(benchmark::State& state) {
  if (resident::CudaSpace::device_count() == 0) {
    state.SkipWithError("no CUDA device on this machine");
    return;
  }
  resident::bench::CudaTimer timer;
  mixed_iterations(state, resident::CudaSpace{0}, [&](auto& ds, const EpochOptions& options) {
    auto epoch = ds.epoch(options);
    timer.start(ds.stream());
    benchmark::DoNotOptimize(run_epoch(epoch));
    return timer.stop(ds.stream());
  });
}

template <class Feature>
void BM_CudaEpoch(benchmark::State& state, Shape shape) {
  if (resident::CudaSpace::device_count() == 0) {
    state.SkipWithError("no CUDA device on this machine");
    return;
  }
  const int mode = static_cast<int>(state.range(0));
  void* from = nullptr;
  void* to = nullptr;
  std::size_t allocated = 0;
  resident::bench::CudaTimer timer;
  epoch_iterations<resident::CudaSpace, Feature>(
      state, resident::CudaSpace{0}, shape, mode,
      [&](auto& ds, const EpochOptions& options, int epoch_mode) {
        timer.start(ds.stream());
        benchmark::DoNotOptimize(any_epoch(ds, options, epoch_mode));
        return timer.stop(ds.stream());
      },
      [&](std::size_t bytes) {
        if (allocated != bytes) {
          (void)cudaFree(from);
          (void)cudaFree(to);
          RESIDENT_CUDA_TRY(cudaMalloc(&from, bytes));
          RESIDENT_CUDA_TRY(cudaMalloc(&to, bytes));
          allocated = bytes;
        }
        return timer.copy(to, from, bytes);
      });
  (void)cudaFree(from);
  (void)cudaFree(to);
}
#endif

void register_all() {
  const auto add = [](const char* name, auto function, Shape shape, int last_mode) {
    auto* bench = benchmark::RegisterBenchmark(name, function, shape);
    for (int mode = kNone; mode <= last_mode; ++mode) bench->Arg(mode);
    bench->ArgName("mode")->UseManualTime()->Unit(benchmark::kMillisecond);
  };
  add("BM_HostEpoch/cifar_u8", BM_HostEpoch<std::uint8_t>, kCifar, kSamplesAugmentNormalize);
  add("BM_HostEpoch/wide_f32", BM_HostEpoch<float>, kWide, kSamples);
  benchmark::RegisterBenchmark("BM_HostEpochChw/cifar_u8", BM_HostEpochChw)
      ->Arg(0)
      ->Arg(1)
      ->ArgName("crop_flip")
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("BM_HostMixedEpoch/cifar_u8", BM_HostMixedEpoch)
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("BM_HostEpochVsPeers/cifar_u8", BM_HostEpochVsPeers)
      ->ArgsProduct({{512}, {0, 1}})
      ->ArgNames({"batch", "load"})
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("BM_HostGatherTeam/cifar_u8", BM_HostGatherTeam)
      ->ArgsProduct({{32, 64, 128, 256, 512}, {0, 1}})
      ->ArgNames({"batch", "load"})
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("BM_HostStreamedEpoch/cifar_u8", BM_HostStreamedEpoch)
      ->ArgsProduct({{kNone, kBatches, kSamples, kSamplesNormalize},
                     {0, 1},
                     {kVectorAsIs, kVector, kLargePages}})
      ->ArgNames({"mode", "window", "rows"})
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond);
#if defined(__CUDACC__)
  add("BM_CudaEpoch/cifar_u8", BM_CudaEpoch<std::uint8_t>, kCifar, kSamplesAugmentNormalize);
  add("BM_CudaEpoch/wide_f32", BM_CudaEpoch<float>, kWide, kSamples);
  add("BM_CudaEpoch/labels_i32", BM_CudaEpoch<std::int32_t>, kLabels, kSamples);
  benchmark::RegisterBenchmark("BM_CudaMixedEpoch/cifar_u8", BM_CudaMixedEpoch)
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond);
#endif
}

}  // namespace

int main(int argc, char** argv) {
  register_all();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
