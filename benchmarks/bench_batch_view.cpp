// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// What a batch costs and what the one upload costs, each next to a baseline measured in the
// same run: batch(i) against collating the same batch by memcpy, the upload against a plain
// std::memcpy of the same bytes (into fresh memory, as a naive copy does, and into memory
// already touched, the DRAM limit) and, on a GPU, against pinned cudaMemcpy.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "resident/resident.hpp"

namespace {

using resident::DatasetOptions;
using resident::DeviceDataset;
using resident::HostSpace;
using resident::HostTensor;
using Clock = std::chrono::steady_clock;

constexpr std::size_t kRows = 60000;
constexpr std::size_t kFeatures = 64;
constexpr std::size_t kBatch = 256;

DatasetOptions batch_options() {
  DatasetOptions options;
  options.batch_size = kBatch;
  options.reserve_bytes = 0;
  return options;
}

struct Tabular {
  std::vector<float> x = std::vector<float>(kRows * kFeatures, 1.0f);
  std::vector<std::int32_t> y = std::vector<std::int32_t>(kRows, 3);
};

double seconds(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Bytes/s of the upload, and for each baseline (timed over the same iterations) its GB/s and
// the ratio upload / baseline: above 1 means the upload beats it.
void report_upload(benchmark::State& state, std::size_t bytes, double upload_seconds,
                   std::initializer_list<std::pair<const char*, double>> baselines) {
  const double total = static_cast<double>(bytes) * static_cast<double>(state.iterations());
  state.SetBytesProcessed(static_cast<std::int64_t>(total));
  state.counters["upload_GBps"] = total / upload_seconds / 1e9;
  for (const auto& [name, baseline_seconds] : baselines) {
    state.counters[std::string(name) + "_GBps"] = total / baseline_seconds / 1e9;
    state.counters["upload_vs_" + std::string(name)] = baseline_seconds / upload_seconds;
  }
}

// batch(i) of a features+labels dataset: the per-step cost of the input pipeline.
void BM_BatchViewIndex(benchmark::State& state) {
  const Tabular data;
  const DeviceDataset<HostSpace, float, std::int32_t> ds(
      HostSpace{}, batch_options(), HostTensor<const float>(data.x.data(), {kRows, kFeatures}),
      HostTensor<const std::int32_t>(data.y.data(), {kRows}));
  std::size_t index = 0;
  for (auto _ : state) {
    auto batch = ds.batch(index);
    benchmark::DoNotOptimize(batch);
    index = index + 1 == ds.num_batches() ? 0 : index + 1;
  }
  state.counters["batches_per_s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_BatchViewIndex);

// Baseline: collating the same batch into a reused buffer, what a copying loader does.
void BM_BatchCollateCopy(benchmark::State& state) {
  const Tabular data;
  std::vector<float> x_batch(kBatch * kFeatures);
  std::vector<std::int32_t> y_batch(kBatch);
  const std::size_t batches = kRows / kBatch;
  std::size_t index = 0;
  for (auto _ : state) {
    std::memcpy(x_batch.data(), data.x.data() + index * kBatch * kFeatures,
                x_batch.size() * sizeof(float));
    std::memcpy(y_batch.data(), data.y.data() + index * kBatch,
                y_batch.size() * sizeof(std::int32_t));
    benchmark::DoNotOptimize(x_batch.data());
    benchmark::DoNotOptimize(y_batch.data());
    benchmark::ClobberMemory();
    index = index + 1 == batches ? 0 : index + 1;
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) *
                          static_cast<std::int64_t>(kBatch * (kFeatures * 4 + 4)));
}
BENCHMARK(BM_BatchCollateCopy);

// The host upload (capacity check, allocation, copy, release) against std::memcpy of the same
// bytes, both measured in every iteration; the ratios are the figures to read.
void BM_HostUploadVsMemcpy(benchmark::State& state) {
  const auto bytes = static_cast<std::size_t>(state.range(0));
  std::vector<std::uint8_t> source(bytes);
  std::iota(source.begin(), source.end(), std::uint8_t{0});
  std::vector<std::uint8_t> warm(bytes, 1);  // touched once: no page faults in the copy
  const HostTensor<const std::uint8_t> tensor(source.data(), {bytes});
  // One untimed round first: in a VM the first touch of memory the guest handed back to the
  // hypervisor costs several times a copy, once per process (seen here: 0.3-0.6 GB/s for the
  // first 256 MiB, 5 GB/s after), which would otherwise be the only iteration timed.
  { const DeviceDataset<HostSpace, std::uint8_t> ds(HostSpace{}, batch_options(), tensor); }
  std::free(std::memcpy(std::malloc(bytes), source.data(), bytes));
  double upload = 0, fresh = 0, touched = 0;
  for (auto _ : state) {
    auto start = Clock::now();
    {
      const DeviceDataset<HostSpace, std::uint8_t> ds(HostSpace{}, batch_options(), tensor);
      benchmark::DoNotOptimize(ds.field<0>().data());
    }
    const double upload_seconds = seconds(start);
    upload += upload_seconds;

    start = Clock::now();
    void* target = std::malloc(bytes);
    std::memcpy(target, source.data(), bytes);
    benchmark::DoNotOptimize(target);
    std::free(target);
    fresh += seconds(start);

    start = Clock::now();
    std::memcpy(warm.data(), source.data(), bytes);
    benchmark::DoNotOptimize(warm.data());
    benchmark::ClobberMemory();
    touched += seconds(start);
    state.SetIterationTime(upload_seconds);
  }
  report_upload(state, bytes, upload, {{"memcpy_fresh", fresh}, {"memcpy_warm", touched}});
}
BENCHMARK(BM_HostUploadVsMemcpy)
    ->Arg(64 << 20)
    ->Arg(256 << 20)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

#if RESIDENT_HAS_CUDA
// The CUDA upload from pageable memory against a pinned cudaMemcpy of the same bytes (the bus
// limit in practice) and a pageable one, timed with CUDA events in the same iteration.
void BM_CudaUploadVsPinnedMemcpy(benchmark::State& state) {
  if (resident::CudaSpace::device_count() == 0) {
    state.SkipWithError("no CUDA device on this machine");
    return;
  }
  const auto bytes = static_cast<std::size_t>(state.range(0));
  std::vector<std::uint8_t> source(bytes, 7);
  const HostTensor<const std::uint8_t> tensor(source.data(), {bytes});
  void* pinned = nullptr;
  void* device = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  RESIDENT_CUDA_TRY(cudaMallocHost(&pinned, bytes));
  std::memset(pinned, 7, bytes);
  RESIDENT_CUDA_TRY(cudaMalloc(&device, bytes));
  RESIDENT_CUDA_TRY(cudaEventCreate(&start));
  RESIDENT_CUDA_TRY(cudaEventCreate(&stop));
  const auto timed_copy = [&](const void* from) {
    RESIDENT_CUDA_TRY(cudaEventRecord(start));
    RESIDENT_CUDA_TRY(cudaMemcpyAsync(device, from, bytes, cudaMemcpyHostToDevice));
    RESIDENT_CUDA_TRY(cudaEventRecord(stop));
    RESIDENT_CUDA_TRY(cudaEventSynchronize(stop));
    float milliseconds = 0;
    RESIDENT_CUDA_TRY(cudaEventElapsedTime(&milliseconds, start, stop));
    return milliseconds / 1e3;
  };
  double upload = 0, pinned_copy = 0, pageable_copy = 0;
  for (auto _ : state) {
    const auto begin = Clock::now();
    {
      const DeviceDataset<resident::CudaSpace, std::uint8_t> ds(resident::CudaSpace{0},
                                                                batch_options(), tensor);
      benchmark::DoNotOptimize(ds.field<0>().data());
    }
    const double upload_seconds = seconds(begin);
    upload += upload_seconds;
    pinned_copy += timed_copy(pinned);
    pageable_copy += timed_copy(source.data());
    state.SetIterationTime(upload_seconds);
  }
  report_upload(state, bytes, upload,
                {{"pinned_memcpy", pinned_copy}, {"pageable_memcpy", pageable_copy}});
  (void)cudaEventDestroy(start);
  (void)cudaEventDestroy(stop);
  (void)cudaFree(device);
  (void)cudaFreeHost(pinned);
}
BENCHMARK(BM_CudaUploadVsPinnedMemcpy)
    ->Arg(256 << 20)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);
#endif

}  // namespace

BENCHMARK_MAIN();
