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
//   batch gathered into the ring by the copy team; with a conversion to float on the way in the
//   third case, which libtorch does per stacked batch) or `Shuffle::batches` (zero-copy views),
//   each batch taken as tensors with `resident::to_tensors(epoch, k)` (sharing the memory they lie
//   in), as a training loop takes them.
// Each side touches its batch (its first pixel and its label count), so that nothing is
// optimised away. `ratio_to_memcpy` is one core's in-order memcpy of the epoch's pixels over
// resident's epoch: the memory system's pace on this machine, measured in the same run. Built with
// RESIDENT_WITH_TORCH; a ctest smoke test runs it briefly.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
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

// The cases: what resident serves, and the same epoch's work on libtorch's side.
enum class Case : std::int64_t {
  samples = 0,    // Shuffle::samples: every batch gathered (the twin of RandomSampler)
  batches = 1,    // Shuffle::batches: zero-copy views of the rows, whole batches shuffled
  normalize = 2,  // Shuffle::samples with the pixels converted to float while gathering; libtorch
                  // converts each stacked batch (`.to(kFloat32).mul_`), its fastest form
};

constexpr float kScale = 1.0f / 255;

void BM_LibtorchEpoch(benchmark::State& state) {
  const auto mode = static_cast<Case>(state.range(0));
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

  // Each side's batch is touched: its first pixel and its label count.
  double touched = 0;
  const auto touch = [&touched](const torch::Tensor& images, const torch::Tensor& labels) {
    touched += images[0][0][0][0].item<double>() + static_cast<double>(labels.size(0));
  };
  double libtorch_seconds = 0;
  double resident_seconds = 0;
  double copy_seconds = 0;
  std::vector<std::uint8_t> slot(static_cast<std::size_t>(kBatch) * 3 * 32 * 32);
  std::uint64_t epoch_number = 0;
  for (auto _ : state) {
    auto start = Clock::now();
    for (auto& batch : *loader)
      touch(mode == Case::normalize ? batch.data.to(torch::kFloat32).mul_(kScale) : batch.data,
            batch.target);
    libtorch_seconds += seconds_since(start);

    start = Clock::now();
    const resident::EpochOptions order{
        7, epoch_number++,
        mode == Case::batches ? resident::Shuffle::batches : resident::Shuffle::samples};
    const auto serve = [&touch](auto&& epoch) {
      for (std::size_t k = 0; k < epoch.size(); ++k) {
        const auto [images, labels] = resident::to_tensors(epoch, k);
        touch(images, labels);
      }
    };
    if (mode == Case::normalize)
      serve(ds.epoch(order, resident::convert<0>(resident::Normalize{kScale, 0})));
    else
      serve(ds.epoch(order));
    const double seconds = seconds_since(start);
    resident_seconds += seconds;
    state.SetIterationTime(seconds);

    // The memory system's pace, in the same run: one core copies the epoch's pixels in order
    // into one batch's buffer, as a ring slot would take them.
    start = Clock::now();
    for (std::size_t at = 0; at < data.pixels.size(); at += slot.size()) {
      std::memcpy(slot.data(), data.pixels.data() + at,
                  std::min(slot.size(), data.pixels.size() - at));
      benchmark::ClobberMemory();
    }
    copy_seconds += seconds_since(start);
  }
  benchmark::DoNotOptimize(touched);
  const auto iterations = static_cast<double>(state.iterations());
  state.counters["libtorch_epoch_s"] = libtorch_seconds / iterations;
  state.counters["ratio_to_libtorch"] = libtorch_seconds / resident_seconds;
  state.counters["ratio_to_memcpy"] = copy_seconds / resident_seconds;
  state.SetLabel(mode == Case::batches     ? "Shuffle::batches, zero-copy"
                 : mode == Case::normalize ? "Shuffle::samples, to float while gathered"
                                           : "Shuffle::samples, gathered");
}

}  // namespace

BENCHMARK(BM_LibtorchEpoch)
    ->Arg(static_cast<std::int64_t>(Case::samples))
    ->Arg(static_cast<std::int64_t>(Case::batches))
    ->Arg(static_cast<std::int64_t>(Case::normalize))
    ->ArgName("case")
    // A fixed count: the manual time is resident's alone, so a minimum time would run
    // thousands of libtorch epochs beside the zero-copy ones.
    ->Iterations(10)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
