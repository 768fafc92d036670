// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// CUDA-event timing for the benchmarks' GPU baselines.

#include "resident/config.hpp"

#if RESIDENT_HAS_CUDA
#include <cuda_runtime_api.h>

#include <cstddef>

#include "resident/detail/cuda/error.hpp"

namespace resident::bench {

/// Times work on a stream between two events (the device's clock, not the host's).
class CudaTimer {
 public:
  CudaTimer() {
    RESIDENT_CUDA_TRY(cudaEventCreate(&start_));
    RESIDENT_CUDA_TRY(cudaEventCreate(&stop_));
  }
  ~CudaTimer() {
    (void)cudaEventDestroy(start_);
    (void)cudaEventDestroy(stop_);
  }
  CudaTimer(const CudaTimer&) = delete;
  CudaTimer& operator=(const CudaTimer&) = delete;

  void start(cudaStream_t stream = nullptr) { RESIDENT_CUDA_TRY(cudaEventRecord(start_, stream)); }
  /// Seconds since `start`, once the work queued on `stream` before this call is done.
  double stop(cudaStream_t stream = nullptr) {
    RESIDENT_CUDA_TRY(cudaEventRecord(stop_, stream));
    RESIDENT_CUDA_TRY(cudaEventSynchronize(stop_));
    float milliseconds = 0;
    RESIDENT_CUDA_TRY(cudaEventElapsedTime(&milliseconds, start_, stop_));
    return static_cast<double>(milliseconds) / 1e3;
  }
  /// Seconds of one `cudaMemcpyAsync(destination, source, bytes)` on `stream`.
  double copy(void* destination, const void* source, std::size_t bytes,
              cudaStream_t stream = nullptr) {
    start(stream);
    RESIDENT_CUDA_TRY(cudaMemcpyAsync(destination, source, bytes, cudaMemcpyDefault, stream));
    return stop(stream);
  }

 private:
  cudaEvent_t start_ = nullptr;
  cudaEvent_t stop_ = nullptr;
};

}  // namespace resident::bench

#endif  // RESIDENT_HAS_CUDA
