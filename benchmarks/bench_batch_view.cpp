// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// What a batch costs and what the one upload costs, each next to a baseline measured in the
// same run: batch(i) against collating the same batch by memcpy, the upload against a plain
// std::memcpy of the same bytes (into fresh memory, as a naive copy does, and into memory
// already touched, the DRAM limit). bench_upload has every size, and the GPU upload.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "resident/resident.hpp"
#include "support/upload_benchmarks.hpp"

namespace {

using resident::DatasetOptions;
using resident::DeviceDataset;
using resident::HostSpace;
using resident::HostTensor;

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

BENCHMARK(resident::bench::BM_HostUploadVsMemcpy)
    ->Name("BM_HostUploadVsMemcpy")
    ->Arg(64 << 20)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
