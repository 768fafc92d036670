// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// The device gathers' kernels: one `__global__` shell that runs a gather body (gather_kernels.hpp)
// over its block's row groups, and the launch policy that launches it on the dataset's stream.
// Needs nvcc; epoch.hpp includes it only then.

#if !defined(__CUDACC__)
#error "resident/detail/cuda/gather.cuh holds kernels: compile this file with nvcc"
#endif

#include <cuda_runtime_api.h>

#include <cstdint>

#include "resident/detail/cuda/error.hpp"
#include "resident/detail/gather/gather_kernels.hpp"

namespace resident::detail {

/// Reaches memory at its own address, which lies in the global space (device memory, or mapped
/// page-locked host memory): row addresses pass through block memory, after which the compiler
/// no longer knows their space and would load through generic addresses.
struct GlobalAddress {
  template <class T>
  __host__ __device__ T* operator()(T* pointer) const noexcept {
#if defined(__CUDA_ARCH__)
    __builtin_assume(__isGlobal(pointer));
#endif
    return pointer;
  }
};

/// Each block takes every `gridDim.x`-th group of rows: its first threads locate the group's
/// rows (into block memory), then the rows' threads copy them; `run_blocks` is this loop on
/// the host.
template <class Body>
__global__ void __launch_bounds__(gather_threads) gather_kernel(Body body) {
  __shared__ typename Body::Shared shared;
  const GatherShape& shape = body.shape();
  for (std::uint64_t group = blockIdx.x; group < shape.groups(); group += gridDim.x) {
    body.locate(group, threadIdx.x, shared);
    __syncthreads();
    body.work(group, threadIdx.x, shared);
    __syncthreads();  // the next group's locates overwrite the block memory
  }
}

/// @brief Launches the gathers as CUDA kernels on the dataset's stream.
template <>
struct KernelLaunch<true> {
  using reach_type = GlobalAddress;
  static constexpr std::uint64_t max_blocks = max_gather_blocks;

  /// @throws CudaError when the launch fails.
  template <class Body>
  static void run(const Body& body, cudaStream_t stream) {
    gather_kernel<Body>
        <<<static_cast<unsigned>(body.shape().blocks), gather_threads, 0, stream>>>(body);
    RESIDENT_CUDA_TRY(cudaGetLastError());
  }
};

}  // namespace resident::detail
