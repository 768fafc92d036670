// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// The device gathers' kernels: one `__global__` shell that runs a gather body (gather_kernels.hpp)
// over its block's row groups, the launch policy that launches it on the dataset's stream, and
// the definitions of the two function templates through which `KernelGather` reaches them
// (kernel_gather.hpp, which declares them and then includes this file, only under nvcc).

#if !defined(__CUDACC__)
#error "resident/detail/cuda/gather.cuh holds kernels: compile this file with nvcc"
#endif

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "resident/detail/cuda/error.hpp"
#include "resident/detail/gather/gather_kernels.hpp"

namespace resident::detail {

/// Reaches memory at its own address, which lies in the global space (device memory, or mapped
/// page-locked host memory): row addresses pass through block memory, after which the compiler
/// no longer knows their space and would load through generic addresses. The count of elements
/// reached (see `SameAddress`) goes unused: a device checks no bounds.
struct GlobalAddress {
  template <class T>
  __host__ __device__ T* operator()(T* pointer, std::uint64_t /*count*/) const noexcept {
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
struct CudaKernelLaunch {
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

template <class Stream>
constexpr void expect_cuda_stream() noexcept {
  static_assert(std::is_same_v<Stream, cudaStream_t>,
                "kernels run on CUDA streams: a space whose streams are not CUDA streams names a "
                "gather engine that needs no kernels (space_traits<S>::gather_engine)");
}

template <class Source, class Out, class Op, class Order, class Stream>
void gather_field_kernels(const Source& source, Out* destination, std::size_t row_elements,
                          const Order& order, std::size_t rows, const Op& op,
                          const Augmentation* augmentation, const AugmentKey& key,
                          std::int64_t* indices, Stream stream) {
  expect_cuda_stream<Stream>();
  device_gather<CudaKernelLaunch>(source, destination, row_elements, order, rows, op, augmentation,
                                  key, indices, stream);
}

template <class Order, class Stream>
void fill_indices_kernels(const Order& order, std::size_t rows, std::int64_t* indices,
                          Stream stream) {
  expect_cuda_stream<Stream>();
  device_fill_indices<CudaKernelLaunch>(order, rows, indices, stream);
}

}  // namespace resident::detail
