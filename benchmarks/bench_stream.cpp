// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// Streaming throughput against the copy it is made of, measured in the same run: on the host
// an epoch streamed from memory against memcpy and from a .npy file against a sequential read
// of it; a shuffled whole-epoch stream read in place from a file's mapping against the same
// epoch preloaded, from a cached file and from a cold one; on a GPU an epoch streamed to the device
// against pinned cudaMemcpy, and the share of time a compute kernel per batch waits for data. Read
// the ratio_* and wait_* counters.

#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "resident/resident.hpp"
#include "support/cuda_timer.hpp"

namespace resident::bench {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

constexpr std::size_t row_bytes = 3072;  // a CIFAR-10 image, uint8
constexpr std::size_t batch_rows = 256;
constexpr std::size_t host_chunk_batches = 16;    // 12 MiB chunks: a ring of 48 MiB
constexpr std::size_t device_chunk_batches = 32;  // 24 MiB chunks, copies near the bus limit

DatasetOptions stream_options(std::size_t chunk_batches) {
  DatasetOptions options;
  options.batch_size = batch_rows;
  options.remainder = Remainder::drop;
  options.reserve_bytes = 0;
  options.streaming.chunk_batches = chunk_batches;
  return options;
}

/// Reads every batch's first and last byte, as a consumer touching the batch would.
template <class Dataset>
std::uint64_t stream_epoch(Dataset& ds) {
  std::uint64_t sum = 0;
  for (auto [rows] : ds.epoch({})) sum += rows.data()[0] + rows.data()[rows.size() - 1];
  return sum;
}

void report(benchmark::State& state, std::size_t bytes, double stream_seconds, const char* baseline,
            double baseline_seconds) {
  const double total = static_cast<double>(bytes) * static_cast<double>(state.iterations());
  state.SetBytesProcessed(static_cast<std::int64_t>(total));
  state.counters["stream_GBps"] = total / stream_seconds / 1e9;
  state.counters[std::string(baseline) + "_GBps"] = total / baseline_seconds / 1e9;
  state.counters[std::string("ratio_to_") + baseline] = baseline_seconds / stream_seconds;
}

/// Times a streamed epoch and `baseline()` in each iteration; reports the epoch's bytes/s and
/// the ratio to the baseline's.
template <class Dataset, class Baseline>
void stream_against(benchmark::State& state, Dataset& ds, const char* baseline_name,
                    Baseline&& baseline) {
  benchmark::DoNotOptimize(stream_epoch(ds));  // warms the ring (and the page cache)
  double streamed = 0, baseline_total = 0;
  for (auto _ : state) {
    auto start = Clock::now();
    benchmark::DoNotOptimize(stream_epoch(ds));
    const double stream_seconds = seconds_since(start);
    streamed += stream_seconds;
    start = Clock::now();
    baseline();
    benchmark::ClobberMemory();
    baseline_total += seconds_since(start);
    state.SetIterationTime(stream_seconds);
  }
  report(state, ds.num_batches() * batch_rows * row_bytes, streamed, baseline_name, baseline_total);
}

/// The host streaming options: chunks of `host_chunk_batches`, the reader copying while it
/// waits or not.
DatasetOptions host_stream_options(bool reader_copies) {
  DatasetOptions options = stream_options(host_chunk_batches);
  options.streaming.reader_copies = reader_copies;
  return options;
}

/// An epoch streamed through a `HostSpace` budget of half the data, from host memory,
/// against one `std::memcpy` of the same bytes into memory touched before (the DRAM limit);
/// the second argument is `StreamOptions::reader_copies`.
void BM_HostStreamVsMemcpy(benchmark::State& state) {
  const auto rows = static_cast<std::size_t>(state.range(0)) / row_bytes;
  const std::size_t bytes = rows * row_bytes;
  std::vector<std::uint8_t> source(bytes);
  std::iota(source.begin(), source.end(), std::uint8_t{0});
  std::vector<std::uint8_t> target(bytes, 1);
  StreamingDataset<HostSpace, std::uint8_t> ds(
      HostSpace::with_budget(bytes / 2), host_stream_options(state.range(1) != 0),
      HostTensor<const std::uint8_t>(source.data(), {rows, row_bytes}));
  stream_against(state, ds, "memcpy", [&] { std::memcpy(target.data(), source.data(), bytes); });
}
BENCHMARK(BM_HostStreamVsMemcpy)
    ->ArgsProduct({{128 << 20, 256 << 20}, {0, 1}})
    ->ArgNames({"bytes", "reader_copies"})
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

/// An epoch streamed from a `.npy` file in window order (pread into the slots, page cache warm)
/// against a
/// sequential `read` of the same file in chunks of the same size into one buffer.
void BM_HostStreamFileVsRead(benchmark::State& state) {
  const auto rows = static_cast<std::size_t>(state.range(0)) / row_bytes;
  const std::size_t bytes = rows * row_bytes;
  const std::string path = "/tmp/resident_bench_stream_" + std::to_string(::getpid()) + ".npy";
  {
    std::vector<std::uint8_t> source(bytes);
    std::iota(source.begin(), source.end(), std::uint8_t{0});
    npy::save(path, source.data(), Shape{rows, row_bytes});
  }
  {
    DatasetOptions options = host_stream_options(state.range(1) != 0);
    options.streaming.order = StreamOrder::window;  // read with pread, a chunk at a time
    auto ds = load_streaming_dataset<HostSpace, std::uint8_t>(HostSpace::with_budget(bytes / 2),
                                                              options, path);
    const std::size_t chunk = ds.chunk_batches() * batch_rows * row_bytes;
    std::vector<std::uint8_t> buffer(chunk);
    stream_against(state, ds, "read", [&] {
      const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
      for (::ssize_t got = 1; got > 0;) got = ::read(fd, buffer.data(), buffer.size());
      ::close(fd);
    });
  }
  std::remove(path.c_str());
}
BENCHMARK(BM_HostStreamFileVsRead)
    ->ArgsProduct({{256 << 20}, {0, 1}})
    ->ArgNames({"bytes", "reader_copies"})
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

/// What a reader computes on a batch: `passes` sums over its bytes (memory-bound work, as a
/// data-parallel step's first layer is on a small CPU).
std::uint64_t compute_on(const BatchView<const std::uint8_t>& rows, int passes) {
  std::uint64_t sum = 0;
  for (int pass = 0; pass < passes; ++pass)
    sum +=
        std::accumulate(rows.data(), rows.data() + rows.size(), static_cast<std::uint64_t>(pass));
  return sum;
}

/// A reader that computes on every batch, streamed from memory with the reader copying while
/// it waits (`reader_copies:1`) or not, against the same compute over a preloaded copy of the
/// data in the same iteration (`ratio_to_preloaded` = preloaded epoch time / streamed: 1 when
/// the copies hide entirely behind the compute, and what the copies cost the reader's core
/// otherwise). 256 MiB through half that budget; `passes` sets how long the compute is.
void BM_HostStreamComputingReader(benchmark::State& state) {
  const std::size_t rows = (std::size_t{256} << 20) / row_bytes;
  const std::size_t bytes = rows * row_bytes;
  const int passes = static_cast<int>(state.range(1));
  std::vector<std::uint8_t> source(bytes);
  std::iota(source.begin(), source.end(), std::uint8_t{0});
  const HostTensor<const std::uint8_t> tensor(source.data(), {rows, row_bytes});
  StreamingDataset<HostSpace, std::uint8_t> streamed(
      HostSpace::with_budget(bytes / 2), host_stream_options(state.range(0) != 0), tensor);
  DeviceDataset<HostSpace, std::uint8_t> preloaded(HostSpace{}, stream_options(1), tensor);
  const auto epoch_of = [passes](auto& ds) {
    std::uint64_t sum = 0;
    for (auto [batch] : ds.epoch({})) sum += compute_on(batch, passes);
    return sum;
  };
  benchmark::DoNotOptimize(epoch_of(streamed));  // warms the ring
  double streamed_total = 0, preloaded_total = 0;
  for (auto _ : state) {
    auto start = Clock::now();
    benchmark::DoNotOptimize(epoch_of(streamed));
    const double seconds = seconds_since(start);
    streamed_total += seconds;
    start = Clock::now();
    benchmark::DoNotOptimize(epoch_of(preloaded));
    preloaded_total += seconds_since(start);
    state.SetIterationTime(seconds);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes * state.iterations()));
  state.counters["preloaded_ms"] = preloaded_total / static_cast<double>(state.iterations()) * 1e3;
  state.counters["ratio_to_preloaded"] = preloaded_total / streamed_total;
}
BENCHMARK(BM_HostStreamComputingReader)
    ->ArgsProduct({{0, 1}, {1, 4}})
    ->ArgNames({"reader_copies", "passes"})
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

/// A `.npy` file of `rows` CIFAR-sized rows (each byte its index mod 256), written and synced,
/// so that its pages can be dropped from the page cache (`drop_cached`); removed at the end.
struct RowFile {
  explicit RowFile(std::size_t rows)
      : path("/tmp/resident_bench_in_place_" + std::to_string(::getpid()) + ".npy") {
    std::vector<std::uint8_t> source(rows * row_bytes);
    std::iota(source.begin(), source.end(), std::uint8_t{0});
    npy::save(path, source.data(), Shape{rows, row_bytes});
  }
  ~RowFile() { std::remove(path.c_str()); }
  RowFile(const RowFile&) = delete;
  RowFile& operator=(const RowFile&) = delete;

  /// Asks the kernel to drop the file's pages from the page cache: the next read is cold, as
  /// after `echo 1 > /proc/sys/vm/drop_caches`, without needing root (clean pages only: the
  /// file was synced when written).
  void drop_cached() const {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    (void)::fdatasync(fd);
    (void)::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    ::close(fd);
  }
  std::string path;
};

/// Sums every batch's first and last byte of a sample-shuffled epoch `epoch` of `ds`.
template <class Dataset>
std::uint64_t shuffled_epoch(Dataset& ds, std::uint64_t epoch) {
  std::uint64_t sum = 0;
  for (auto [rows] : ds.epoch({1, epoch, Shuffle::samples}))
    sum += rows.data()[0] + rows.data()[rows.size() - 1];
  return sum;
}

/// Seconds that sample-shuffled epochs of `timed` and of `beside` took in `state`'s iterations,
/// in turn (epoch 0 of each warms the rings and the pages first); the iteration's time is
/// `timed`'s.
template <class Timed, class Beside>
std::pair<double, double> shuffled_in_turn(benchmark::State& state, Timed& timed, Beside& beside) {
  benchmark::DoNotOptimize(shuffled_epoch(timed, 0));
  benchmark::DoNotOptimize(shuffled_epoch(beside, 0));
  double timed_total = 0, beside_total = 0;
  std::uint64_t epoch = 1;
  for (auto _ : state) {
    auto start = Clock::now();
    benchmark::DoNotOptimize(shuffled_epoch(timed, epoch));
    const double seconds = seconds_since(start);
    timed_total += seconds;
    start = Clock::now();
    benchmark::DoNotOptimize(shuffled_epoch(beside, epoch++));
    beside_total += seconds_since(start);
    state.SetIterationTime(seconds);
  }
  return {timed_total, beside_total};
}

/// A sample-shuffled whole-epoch stream of a `.npy` file, read in place from its mapping with
/// the file's pages cached, against the same shuffled epoch of a dataset preloaded into host
/// memory from the same rows, timed in the same iterations (`ratio_to_preloaded` = preloaded
/// epoch time / streamed). 256 MiB of CIFAR-sized rows through a budget of half of them.
void BM_HostStreamInPlaceShuffledVsPreloaded(benchmark::State& state) {
  const std::size_t rows = (std::size_t{256} << 20) / row_bytes;
  const RowFile file(rows);
  DatasetOptions options = host_stream_options(true);
  options.streaming.order = StreamOrder::whole_epoch;
  auto streamed = load_streaming_dataset<HostSpace, std::uint8_t>(
      HostSpace::with_budget(rows * row_bytes / 2), options, file.path);
  auto preloaded = load_dataset<HostSpace, std::uint8_t>(HostSpace{}, options, file.path);
  const auto [streamed_total, preloaded_total] = shuffled_in_turn(state, streamed, preloaded);
  state.SetBytesProcessed(static_cast<std::int64_t>(rows * row_bytes * state.iterations()));
  state.counters["mapped_MiB"] = static_cast<double>(streamed.mapped_bytes()) / (1 << 20);
  state.counters["preloaded_ms"] = preloaded_total / static_cast<double>(state.iterations()) * 1e3;
  state.counters["ratio_to_preloaded"] = preloaded_total / streamed_total;
}
BENCHMARK(BM_HostStreamInPlaceShuffledVsPreloaded)->UseManualTime()->Unit(benchmark::kMillisecond);

/// A seeded random half of a cached `.npy` file's rows (`random_split`), streamed with the
/// same options as the whole file, against the whole file's stream in the same iterations,
/// sample-shuffled epochs both, per row (`ratio_to_whole` = the whole stream's time per row /
/// the part's): what a part's rows cost beside its dataset's, in window order (`order:0`: a
/// read for each run of consecutive rows of the part) and in whole-epoch order (`order:1`).
void BM_HostStreamedPartVsWhole(benchmark::State& state) {
  const std::size_t rows = (std::size_t{128} << 20) / row_bytes;
  const RowFile file(rows);
  DatasetOptions options = host_stream_options(true);
  options.streaming.order = state.range(0) == 0 ? StreamOrder::window : StreamOrder::whole_epoch;
  auto whole = load_streaming_dataset<HostSpace, std::uint8_t>(HostSpace{}, options, file.path);
  auto parts = random_split(whole, {rows / 2, rows - rows / 2}, 7, options);
  auto& part = parts[0];
  const auto [part_total, whole_total] = shuffled_in_turn(state, part, whole);
  const auto iterations = static_cast<double>(state.iterations());
  const double part_rows = static_cast<double>(part.num_batches() * batch_rows);
  const double whole_rows = static_cast<double>(whole.num_batches() * batch_rows);
  state.SetBytesProcessed(static_cast<std::int64_t>(part_rows * row_bytes * iterations));
  state.counters["whole_ms"] = whole_total / iterations * 1e3;
  state.counters["ratio_to_whole"] = (whole_total / whole_rows) / (part_total / part_rows);
}
BENCHMARK(BM_HostStreamedPartVsWhole)
    ->Arg(0)
    ->Arg(1)
    ->ArgName("order")
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

/// The same stream from a cold file (its pages dropped from the page cache before each
/// iteration): the time to make the dataset (`make_ms`: headers only), to its first shuffled
/// batch (`first_batch_ms`) and to the end of the epoch (the iteration's time), with the
/// background read ahead on (`read_ahead:1`) or off, against a sequential `read` of the cold
/// file in the same iteration (`ratio_to_read`: the disk's sequential speed is the limit).
void BM_HostStreamInPlaceColdFile(benchmark::State& state) {
  const std::size_t rows = (std::size_t{256} << 20) / row_bytes;
  const RowFile file(rows);
  DatasetOptions options = host_stream_options(true);
  options.streaming.order = StreamOrder::whole_epoch;
  options.streaming.read_ahead = state.range(0) != 0;
  std::vector<std::uint8_t> buffer(std::size_t{8} << 20);
  double make = 0, first = 0, epoch_total = 0, read_total = 0;
  std::uint64_t epoch = 0;
  for (auto _ : state) {
    file.drop_cached();
    auto start = Clock::now();
    auto ds = load_streaming_dataset<HostSpace, std::uint8_t>(
        HostSpace::with_budget(rows * row_bytes / 2), options, file.path);
    make += seconds_since(start);
    std::uint64_t sum = 0;
    auto shuffled = ds.epoch({1, epoch++, Shuffle::samples});
    for (std::size_t k = 0; k < shuffled.size(); ++k) {
      auto [batch] = shuffled.batch(k);
      sum += batch.data()[0];
      if (k == 0) first += seconds_since(start);
    }
    benchmark::DoNotOptimize(sum);
    const double seconds = seconds_since(start);
    epoch_total += seconds;
    state.SetIterationTime(seconds);
    file.drop_cached();
    start = Clock::now();
    const int fd = ::open(file.path.c_str(), O_RDONLY | O_CLOEXEC);
    for (::ssize_t got = 1; got > 0;) got = ::read(fd, buffer.data(), buffer.size());
    ::close(fd);
    read_total += seconds_since(start);
  }
  const auto iterations = static_cast<double>(state.iterations());
  state.SetBytesProcessed(static_cast<std::int64_t>(rows * row_bytes * state.iterations()));
  state.counters["make_ms"] = make / iterations * 1e3;
  state.counters["first_batch_ms"] = first / iterations * 1e3;
  state.counters["read_ms"] = read_total / iterations * 1e3;
  state.counters["ratio_to_read"] = read_total / epoch_total;
}
BENCHMARK(BM_HostStreamInPlaceColdFile)
    ->Arg(0)
    ->Arg(1)
    ->ArgName("read_ahead")
    ->Iterations(3)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

/// Making a whole-epoch stream of a 4 GiB `.npy` file (sparse: its pages cost nothing to
/// write) and reading its last batch: the iteration's time is the making, `first_batch_ms`
/// the batch, and `rss_MiB` what the process's resident memory grew by meanwhile.
void BM_HostStreamInPlaceMakeLargeFile(benchmark::State& state) {
  const std::size_t rows = (std::size_t{4} << 30) / row_bytes;
  const std::string path = "/tmp/resident_bench_large_" + std::to_string(::getpid()) + ".npy";
  {
    const std::string prefix = npy::detail::prefix_bytes(npy::DType::u1, Shape{rows, row_bytes});
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    const bool written =
        ::write(fd, prefix.data(), prefix.size()) == static_cast<::ssize_t>(prefix.size()) &&
        ::ftruncate(fd, static_cast<::off_t>(prefix.size() + rows * row_bytes)) == 0;
    ::close(fd);
    if (!written) {
      state.SkipWithError("cannot write a sparse 4 GiB file under /tmp");
      return;
    }
  }
  const auto resident_mib = [] {
    std::FILE* status = std::fopen("/proc/self/statm", "r");
    unsigned long pages = 0, resident_pages = 0;
    if (status != nullptr && std::fscanf(status, "%lu %lu", &pages, &resident_pages) != 2)
      resident_pages = 0;
    if (status != nullptr) std::fclose(status);
    return static_cast<double>(resident_pages) * static_cast<double>(::sysconf(_SC_PAGESIZE)) /
           (1 << 20);
  };
  DatasetOptions options = host_stream_options(true);
  options.streaming.order = StreamOrder::whole_epoch;
  double first = 0, grown = 0;
  for (auto _ : state) {
    const double before = resident_mib();
    auto start = Clock::now();
    auto ds = load_streaming_dataset<HostSpace, std::uint8_t>(
        HostSpace::with_budget(std::size_t{64} << 20), options, path);
    state.SetIterationTime(seconds_since(start));
    start = Clock::now();
    auto epoch = ds.epoch();
    auto [last] = epoch.batch(epoch.size() - 1);
    benchmark::DoNotOptimize(last.data()[0]);
    first += seconds_since(start);
    grown += resident_mib() - before;
  }
  std::remove(path.c_str());
  const auto iterations = static_cast<double>(state.iterations());
  state.counters["first_batch_ms"] = first / iterations * 1e3;
  state.counters["rss_MiB"] = grown / iterations;
}
BENCHMARK(BM_HostStreamInPlaceMakeLargeFile)
    ->Iterations(5)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

#if RESIDENT_HAS_CUDA
bool skip_without_device(benchmark::State& state) {
  if (CudaSpace::device_count() != 0) return false;
  state.SkipWithError("no CUDA device on this machine");
  return true;
}

/// An epoch streamed to the device (pinned source: `range(1) == 1`, pageable: 0), no compute,
/// against pinned `cudaMemcpy` of the same bytes timed with CUDA events (target ratio >= 0.9).
void BM_CudaStreamVsPinnedCopy(benchmark::State& state) {
  if (skip_without_device(state)) return;
  const auto rows = static_cast<std::size_t>(state.range(0)) / row_bytes;
  const std::size_t bytes = rows * row_bytes;
  const bool from_pinned = state.range(1) != 0;
  void* pinned = nullptr;
  void* device = nullptr;
  RESIDENT_CUDA_TRY(cudaMallocHost(&pinned, bytes));
  std::memset(pinned, 3, bytes);
  RESIDENT_CUDA_TRY(cudaMalloc(&device, bytes));
  std::vector<std::uint8_t> pageable(bytes, 3);
  {
    StreamingDataset<CudaSpace, std::uint8_t> ds(
        CudaSpace{0}, stream_options(device_chunk_batches),
        HostTensor<const std::uint8_t>(
            from_pinned ? static_cast<const std::uint8_t*>(pinned) : pageable.data(),
            {rows, row_bytes}));
    CudaTimer timer;
    const auto epoch_seconds = [&] {
      const auto start = Clock::now();
      for (auto [batch] : ds.epoch({})) benchmark::DoNotOptimize(batch.data());
      ds.space().synchronize(ds.stream());
      return seconds_since(start);
    };
    (void)epoch_seconds();
    double streamed = 0, copied = 0;
    for (auto _ : state) {
      const double stream_seconds = epoch_seconds();
      streamed += stream_seconds;
      copied += timer.copy(device, pinned, bytes);
      state.SetIterationTime(stream_seconds);
    }
    report(state, ds.num_batches() * batch_rows * row_bytes, streamed, "pinned", copied);
  }
  state.SetLabel(from_pinned ? "from pinned" : "from pageable");
  (void)cudaFree(device);
  (void)cudaFreeHost(pinned);
}
BENCHMARK(BM_CudaStreamVsPinnedCopy)
    ->Args({1 << 30, 1})
    ->Args({1 << 30, 0})
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

#if defined(__CUDACC__)
__global__ void spin_kernel(const std::uint8_t* batch, long long cycles, unsigned* sink) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
  if (threadIdx.x == 0 && batch[0] == 255 && batch[1] == 255) atomicAdd(sink, 1u);
}

/// A synthetic compute kernel per batch lasting `range(0)` percent of that batch's transfer
/// time at the pinned bandwidth, fed by an epoch streamed from pinned memory, against the
/// same kernels over the same batches with nothing to wait for: `wait_fraction` is the share
/// of the streamed epoch's time spent waiting for data (target < 0.05 when range(0) >= 100).
void BM_CudaStreamComputeOverlap(benchmark::State& state) {
  if (skip_without_device(state)) return;
  const std::size_t rows = (std::size_t{1} << 30) / row_bytes;
  const std::size_t bytes = rows * row_bytes;
  void* pinned = nullptr;
  void* device = nullptr;
  unsigned* sink = nullptr;
  RESIDENT_CUDA_TRY(cudaMallocHost(&pinned, bytes));
  std::memset(pinned, 1, bytes);
  RESIDENT_CUDA_TRY(cudaMalloc(&device, bytes));
  RESIDENT_CUDA_TRY(cudaMalloc(&sink, sizeof(unsigned)));
  {
    StreamingDataset<CudaSpace, std::uint8_t> ds(
        CudaSpace{0}, stream_options(device_chunk_batches),
        HostTensor<const std::uint8_t>(static_cast<const std::uint8_t*>(pinned),
                                       {rows, row_bytes}));
    CudaTimer timer;
    const double pinned_seconds = timer.copy(device, pinned, bytes);
    int clock_khz = 0;
    RESIDENT_CUDA_TRY(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
    const double batch_transfer = pinned_seconds / static_cast<double>(ds.num_batches());
    const auto cycles = static_cast<long long>(
        batch_transfer * static_cast<double>(state.range(0)) / 100.0 * clock_khz * 1e3);
    const auto run = [&](bool streamed) {
      timer.start(ds.stream());
      for (std::size_t k = 0; k < ds.num_batches(); ++k) {
        const std::uint8_t* batch =
            streamed ? std::get<0>(ds.batch(k)).data()
                     : static_cast<const std::uint8_t*>(device) + k * batch_rows * row_bytes;
        spin_kernel<<<1, 32, 0, ds.stream()>>>(batch, cycles, sink);
      }
      return timer.stop(ds.stream());
    };
    (void)run(true);
    double with_stream = 0, compute_only = 0;
    for (auto _ : state) {
      const double streamed = run(true);
      with_stream += streamed;
      compute_only += run(false);
      state.SetIterationTime(streamed);
    }
    report(state, ds.num_batches() * batch_rows * row_bytes, with_stream, "compute_only",
           compute_only);
    state.counters["wait_fraction"] = (with_stream - compute_only) / with_stream;
    state.counters["compute_to_transfer"] = static_cast<double>(state.range(0)) / 100.0;
  }
  (void)cudaFree(sink);
  (void)cudaFree(device);
  (void)cudaFreeHost(pinned);
}
BENCHMARK(BM_CudaStreamComputeOverlap)
    ->Arg(50)
    ->Arg(100)
    ->Arg(200)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);
#endif  // __CUDACC__
#endif  // RESIDENT_HAS_CUDA

}  // namespace
}  // namespace resident::bench

BENCHMARK_MAIN();
