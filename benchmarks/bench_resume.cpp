// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// What resuming costs: the time from an `EpochState` to the first batch of the rest of the
// epoch, resumed at batch 0, at the middle batch and at the last, against resuming at batch 0
// measured in the same iterations. A preloaded dataset of 1 GiB (Shuffle::samples: a gather):
// ratio_to_start about 1, whatever the position. A stream of the same rows (Shuffle::batches,
// whole-epoch order): the first batch waits for its one chunk, as at the start; chunk_copy_ms
// is a memcpy of one chunk's bytes, the physical floor. Read ratio_to_start.

#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "resident/resident.hpp"

namespace resident::bench {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::size_t row_bytes = 3072;  // a CIFAR-10 image, uint8
constexpr std::size_t rows = (std::size_t{1} << 30) / row_bytes;
constexpr std::size_t batch_rows = 256;
constexpr std::size_t chunk_batches = 16;

const std::vector<std::uint8_t>& data() {
  static const std::vector<std::uint8_t> bytes = [] {
    std::vector<std::uint8_t> made(rows * row_bytes);
    for (std::size_t i = 0; i < made.size(); ++i) made[i] = static_cast<std::uint8_t>(i * 131);
    return made;
  }();
  return bytes;
}

HostTensor<const std::uint8_t> tensor() { return {data().data(), {rows, row_bytes}}; }

DatasetOptions options() {
  DatasetOptions made;
  made.batch_size = batch_rows;
  made.reserve_bytes = 0;
  made.streaming.chunk_batches = chunk_batches;
  made.streaming.order = StreamOrder::whole_epoch;
  return made;
}

// The state of `ds`'s epoch before batch `k`.
template <class Dataset>
EpochState state_before(Dataset& ds, const EpochOptions& epoch, std::size_t k) {
  return ds.epoch(epoch).state(k);
}

// Seconds from the state to the first batch of the rest of the epoch, its first byte read.
template <class Dataset>
double first_batch_seconds(Dataset& ds, const EpochOptions& epoch, const EpochState& state,
                           std::uint64_t& sink) {
  const auto start = Clock::now();
  auto rest = ds.resume(epoch, state);
  const auto [batch] = rest.batch(0);
  sink += batch.data()[0];
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Resumes at batch 0 and at the batch `where` names (0 start, 1 middle, 2 last) in turn.
template <class Dataset>
void resume_at(benchmark::State& run, Dataset& ds, const EpochOptions& epoch) {
  const std::size_t batches = ds.num_batches();
  const std::size_t k = run.range(0) == 0 ? 0 : run.range(0) == 1 ? batches / 2 : batches - 1;
  const EpochState start = state_before(ds, epoch, 0), at = state_before(ds, epoch, k);
  std::uint64_t sink = 0;
  double from_start = 0, from_k = 0;
  for (auto _ : run) {
    from_start += first_batch_seconds(ds, epoch, start, sink);
    from_k += first_batch_seconds(ds, epoch, at, sink);
  }
  benchmark::DoNotOptimize(sink);
  const auto iterations = static_cast<double>(run.iterations());
  run.counters["batch"] = static_cast<double>(k);
  run.counters["first_batch_ms"] = 1e3 * from_k / iterations;
  run.counters["at_start_ms"] = 1e3 * from_start / iterations;
  run.counters["ratio_to_start"] = from_k / from_start;
}

void BM_ResumePreloaded(benchmark::State& run) {
  static DeviceDataset<HostSpace, std::uint8_t> ds(HostSpace{}, options(), tensor());
  resume_at(run, ds, {1, 0, Shuffle::samples});
}
BENCHMARK(BM_ResumePreloaded)->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);

void BM_ResumeStreamed(benchmark::State& run) {
  static StreamingDataset<HostSpace, std::uint8_t> ds(HostSpace{}, options(), tensor());
  resume_at(run, ds, {1, 0, Shuffle::batches});
  // The floor: one chunk's bytes copied once.
  const std::size_t chunk = chunk_batches * batch_rows * row_bytes;
  std::vector<std::uint8_t> into(chunk);
  const auto start = Clock::now();
  std::memcpy(into.data(), data().data(), chunk);
  benchmark::DoNotOptimize(into.data());
  run.counters["chunk_copy_ms"] = 1e3 * std::chrono::duration<double>(Clock::now() - start).count();
}
BENCHMARK(BM_ResumeStreamed)->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace resident::bench

BENCHMARK_MAIN();
