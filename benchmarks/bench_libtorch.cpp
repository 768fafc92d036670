// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// One shuffled epoch of CIFAR-shaped data (50,000 rows of 3x32x32 uint8 pixels and an int64
// label, batches of 512) through libtorch's own loader and through resident, on the host, in
// the same iteration, alternating: `ratio_to_libtorch` is libtorch's epoch seconds over
// resident's.
// - libtorch: a map-style dataset of the two tensors (`get(i)` returns `{x[i], y[i]}`; libtorch's
//   `TensorDataset` holds one tensor), `transforms::Stack<>` to batch them, and
//   `make_data_loader` with a `RandomSampler`: the C++ twin of `DataLoader(shuffle=True)`.
// - resident: `DeviceDataset<HostSpace, uint8, int64>` epochs with `Shuffle::samples` (every
//   batch gathered into the ring by the copy team) or `Shuffle::batches` (zero-copy views), each
//   batch taken as tensors with `resident::to_tensors(epoch, k)` (sharing the memory they lie
//   in), as a training loop takes them.
// Each side touches its batch (the first pixel of every row is summed), so that nothing is
// optimised away. Built with RESIDENT_WITH_TORCH; a ctest smoke test runs it briefly.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "resident/resident.hpp"
#include "resident/torch.hpp"

namespace {

using Clock = std::chrono::steady_clock;

constexpr std::int64_t kRows = 50000;
constexpr std::int64_t kBatch = 512;

// libtorch's map-style dataset of features and labels.
struct Pairs : torch::data::datasets::Dataset<Pairs> {
  Pairs(torch::Tensor features, torch::Tensor labels)
      : x(std::move(features)), y(std::move(labels)) {}
  torch::data::Example<> get(std::size_t index) override {
    return {x[static_cast<std::int64_t>(index)], y[static_cast<std::int64_t>(index)]};
  }
  [[nodiscard]] torch::optional<std::size_t> size() const override {
    return static_cast<std::size_t>(x.size(0));
  }
  torch::Tensor x, y;
};

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Both loaders over the same seeded values: resident's from host vectors, libtorch's from
// tensors over the same bytes.
struct Data {
  std::vector<std::uint8_t> pixels = std::vector<std::uint8_t>(kRows * 3 * 32 * 32);
  std::vector<std::int64_t> labels = std::vector<std::int64_t>(kRows);
  Data() {
    for (std::size_t i = 0; i < pixels.size(); ++i)
      pixels[i] = static_cast<std::uint8_t>(i * 2654435761u >> 11);
    for (std::size_t i = 0; i < labels.size(); ++i) labels[i] = static_cast<std::int64_t>(i % 10);
  }
};

void BM_LibtorchEpoch(benchmark::State& state) {
  const bool zero_copy = state.range(0) == 1;
  const Data data;
  resident::DatasetOptions options;
  options.batch_size = static_cast<std::size_t>(kBatch);
  resident::DeviceDataset ds(resident::HostSpace{}, options,
                             resident::HostTensor<const std::uint8_t>(
                                 data.pixels.data(), {static_cast<std::size_t>(kRows), 3, 32, 32}),
                             resident::HostTensor<const std::int64_t>(
                                 data.labels.data(), {static_cast<std::size_t>(kRows)}));
  auto loader = torch::data::make_data_loader<torch::data::samplers::RandomSampler>(
      Pairs(torch::from_blob(const_cast<std::uint8_t*>(data.pixels.data()),  // NOLINT: read only
                             {kRows, 3, 32, 32}, torch::kUInt8),
            torch::from_blob(const_cast<std::int64_t*>(data.labels.data()),  // NOLINT: read only
                             {kRows}, torch::kInt64))
          .map(torch::data::transforms::Stack<>()),
      torch::data::DataLoaderOptions().batch_size(static_cast<std::size_t>(kBatch)));

  double libtorch_seconds = 0;
  double resident_seconds = 0;
  std::int64_t touched = 0;
  std::uint64_t epoch_number = 0;
  for (auto _ : state) {
    auto start = Clock::now();
    for (auto& batch : *loader) touched += batch.data[0][0][0][0].item<std::uint8_t>();
    libtorch_seconds += seconds_since(start);

    start = Clock::now();
    auto epoch = ds.epoch(
        {7, epoch_number++, zero_copy ? resident::Shuffle::batches : resident::Shuffle::samples});
    for (std::size_t k = 0; k < epoch.size(); ++k) {
      const auto [images, labels] = resident::to_tensors(epoch, k);
      touched += images[0][0][0][0].item<std::uint8_t>() + labels.size(0);
    }
    const double seconds = seconds_since(start);
    resident_seconds += seconds;
    state.SetIterationTime(seconds);
  }
  benchmark::DoNotOptimize(touched);
  const auto iterations = static_cast<double>(state.iterations());
  state.counters["libtorch_epoch_s"] = libtorch_seconds / iterations;
  state.counters["ratio_to_libtorch"] = libtorch_seconds / resident_seconds;
  state.SetLabel(zero_copy ? "resident Shuffle::batches, zero-copy"
                           : "resident Shuffle::samples, gathered");
}

}  // namespace

BENCHMARK(BM_LibtorchEpoch)
    ->Arg(0)
    ->Arg(1)
    ->ArgName("zero_copy")
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
