// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// The question resident exists to answer, measured: the same training step (the MLP's first
// layer, a GEMM of batch x 3072 by 3072 x 256) fed by different input pipelines, timed over one
// epoch each in the same iteration. Read the steps_per_s_* counters and the ratio_* counters.
//
// Host: (a) collate: per step, a fresh buffer gathered from the shuffled rows (what a
// hand-written loader does); (c) resident zero-copy views; (d) resident Shuffle::samples.
// GPU: (a) per-step cudaMemcpy from pageable memory; (b) per-step copies from pinned memory
// prefetched on a second stream (the best streaming practice); (c) resident zero-copy; (d)
// resident Shuffle::samples (an on-device gather per batch).

#include <benchmark/benchmark.h>
#include <cblas.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "resident/resident.hpp"
#include "support/cuda_timer.hpp"
#if defined(__CUDACC__) && RESIDENT_HAS_CUDA
#include <cublas_v2.h>
#endif

namespace resident::bench {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::size_t inputs = 3072;  // a CIFAR-10 image, as floats
constexpr std::size_t hidden = 256;
constexpr std::size_t batch_rows = 256;
constexpr std::size_t batches = 32;  // one epoch: 8192 rows, 96 MiB of features
constexpr std::size_t rows = batch_rows * batches;

std::vector<float> features() {
  std::vector<float> data(rows * inputs);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>(i % 251) / 251.0f;
  return data;
}

DatasetOptions options() {
  DatasetOptions result;
  result.batch_size = batch_rows;
  result.remainder = Remainder::drop;
  result.reserve_bytes = 0;
  return result;
}

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// steps/s of each pipeline (`names[0]` the per-step copy, then `pinned` where measured,
/// `resident` and `samples`) and the ratios: resident over the per-step copy, over pinned
/// prefetching, and sample-shuffled over plain resident.
void report(benchmark::State& state, const char* const names[], const double seconds[],
            std::size_t count) {
  const double steps = static_cast<double>(batches) * static_cast<double>(state.iterations());
  for (std::size_t i = 0; i < count; ++i)
    state.counters[std::string("steps_per_s_") + names[i]] = steps / seconds[i];
  const auto rate = [&](const char* name) {
    return state.counters[std::string("steps_per_s_") + name].value;
  };
  state.counters[std::string("ratio_resident_to_") + names[0]] = rate("resident") / rate(names[0]);
  if (count == 4) state.counters["ratio_resident_to_pinned"] = rate("resident") / rate("pinned");
  state.counters["ratio_samples_to_resident"] = rate("samples") / rate("resident");
}

void host_step(const float* x, const float* weights, float* out) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, batch_rows, hidden, inputs, 1.0f, x,
              inputs, weights, hidden, 0.0f, out, hidden);
}

/// Host pipelines, one epoch each per iteration.
void BM_HostPreloadVsCollate(benchmark::State& state) {
  const std::vector<float> data = features();
  const std::vector<float> weights(inputs * hidden, 0.01f);
  std::vector<float> out(batch_rows * hidden);
  DeviceDataset<HostSpace, float> ds(HostSpace{}, options(),
                                     HostTensor<const float>(data.data(), {rows, inputs}));
  double seconds[3] = {};
  std::uint64_t epoch = 0;
  for (auto _ : state) {
    const Permutation order(rows, 1, epoch++);
    auto start = Clock::now();
    for (std::size_t k = 0; k < batches; ++k) {
      auto collated = std::make_unique<float[]>(batch_rows * inputs);  // fresh, as a loader's
      for (std::size_t r = 0; r < batch_rows; ++r)
        std::memcpy(collated.get() + r * inputs, data.data() + order(k * batch_rows + r) * inputs,
                    inputs * sizeof(float));
      host_step(collated.get(), weights.data(), out.data());
    }
    seconds[0] += seconds_since(start);
    start = Clock::now();
    for (std::size_t k = 0; k < batches; ++k)
      host_step(std::get<0>(ds.batch(k)).data(), weights.data(), out.data());
    seconds[1] += seconds_since(start);
    start = Clock::now();
    for (auto [x] : ds.epoch({1, epoch, Shuffle::samples}))
      host_step(x.data(), weights.data(), out.data());
    seconds[2] += seconds_since(start);
    benchmark::DoNotOptimize(out.data());
  }
  const char* names[] = {"collate", "resident", "samples"};
  report(state, names, seconds, 3);
}
BENCHMARK(BM_HostPreloadVsCollate)->Unit(benchmark::kMillisecond);

#if defined(__CUDACC__) && RESIDENT_HAS_CUDA
/// GPU pipelines, one epoch each per iteration, timed with CUDA events on the compute stream.
void BM_CudaPreloadVsStream(benchmark::State& state) {
  if (CudaSpace::device_count() == 0) {
    state.SkipWithError("no CUDA device on this machine");
    return;
  }
  const std::vector<float> data = features();
  const std::size_t batch_bytes = batch_rows * inputs * sizeof(float);
  DeviceDataset<CudaSpace, float> ds(CudaSpace{0}, options(),
                                     HostTensor<const float>(data.data(), {rows, inputs}));
  cudaStream_t compute = ds.stream(), copy = nullptr;
  RESIDENT_CUDA_TRY(cudaStreamCreateWithFlags(&copy, cudaStreamNonBlocking));
  float *weights = nullptr, *out = nullptr, *staged[2] = {}, *pinned = nullptr;
  RESIDENT_CUDA_TRY(cudaMalloc(&weights, inputs * hidden * sizeof(float)));
  RESIDENT_CUDA_TRY(cudaMemset(weights, 0, inputs * hidden * sizeof(float)));
  RESIDENT_CUDA_TRY(cudaMalloc(&out, batch_rows * hidden * sizeof(float)));
  for (auto& buffer : staged) RESIDENT_CUDA_TRY(cudaMalloc(&buffer, batch_bytes));
  RESIDENT_CUDA_TRY(cudaMallocHost(&pinned, data.size() * sizeof(float)));
  std::memcpy(pinned, data.data(), data.size() * sizeof(float));
  cudaEvent_t copied[2], consumed[2];
  for (int i = 0; i < 2; ++i) {
    RESIDENT_CUDA_TRY(cudaEventCreateWithFlags(&copied[i], cudaEventDisableTiming));
    RESIDENT_CUDA_TRY(cudaEventCreateWithFlags(&consumed[i], cudaEventDisableTiming));
  }
  cublasHandle_t blas = nullptr;
  cublasCreate(&blas);
  cublasSetStream(blas, compute);
  const float one = 1.0f, zero = 0.0f;
  const auto step = [&](const float* x) {  // row-major out = x * weights
    cublasSgemm(blas, CUBLAS_OP_N, CUBLAS_OP_N, hidden, batch_rows, inputs, &one, weights, hidden,
                x, inputs, &zero, out, hidden);
  };
  CudaTimer timer;
  double seconds[4] = {};
  std::uint64_t epoch = 0;
  for (auto _ : state) {
    timer.start(compute);  // (a) a blocking copy from pageable memory before each step
    for (std::size_t k = 0; k < batches; ++k) {
      RESIDENT_CUDA_TRY(cudaMemcpyAsync(staged[0], data.data() + k * batch_rows * inputs,
                                        batch_bytes, cudaMemcpyHostToDevice, compute));
      step(staged[0]);
    }
    seconds[0] += timer.stop(compute);
    timer.start(compute);  // (b) pinned, double-buffered, copies on their own stream
    for (std::size_t k = 0; k <= batches; ++k) {
      if (k < batches) {
        RESIDENT_CUDA_TRY(cudaStreamWaitEvent(copy, consumed[k % 2], 0));
        RESIDENT_CUDA_TRY(cudaMemcpyAsync(staged[k % 2], pinned + k * batch_rows * inputs,
                                          batch_bytes, cudaMemcpyHostToDevice, copy));
        RESIDENT_CUDA_TRY(cudaEventRecord(copied[k % 2], copy));
      }
      if (k > 0) {
        const std::size_t j = k - 1;
        RESIDENT_CUDA_TRY(cudaStreamWaitEvent(compute, copied[j % 2], 0));
        step(staged[j % 2]);
        RESIDENT_CUDA_TRY(cudaEventRecord(consumed[j % 2], compute));
      }
    }
    seconds[1] += timer.stop(compute);
    timer.start(compute);  // (c) resident, zero-copy
    for (std::size_t k = 0; k < batches; ++k) step(std::get<0>(ds.batch(k)).data());
    seconds[2] += timer.stop(compute);
    timer.start(compute);  // (d) resident, sample-shuffled: a gather per batch
    for (auto [x] : ds.epoch({1, epoch++, Shuffle::samples})) step(x.data());
    seconds[3] += timer.stop(compute);
  }
  const char* names[] = {"pageable", "pinned", "resident", "samples"};
  report(state, names, seconds, 4);
  cublasDestroy(blas);
  for (int i = 0; i < 2; ++i) {
    (void)cudaEventDestroy(copied[i]);
    (void)cudaEventDestroy(consumed[i]);
    (void)cudaFree(staged[i]);
  }
  (void)cudaFreeHost(pinned);
  (void)cudaFree(out);
  (void)cudaFree(weights);
  (void)cudaStreamDestroy(copy);
}
BENCHMARK(BM_CudaPreloadVsStream)->Unit(benchmark::kMillisecond);
#endif

}  // namespace
}  // namespace resident::bench

BENCHMARK_MAIN();
