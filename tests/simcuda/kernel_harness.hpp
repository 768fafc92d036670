// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// The simulated runtime's kernels: the definitions of the two function templates through which
// `KernelGather` reaches a gather's kernels (detail/gather/kernel_gather.hpp), whose blocks run
// here block by block and phase by phase (`run_blocks`) on the host thread of the stream they
// were launched on, in order with the stream's copies, reaching device memory where the
// simulation keeps it. The build over the simulated runtime includes this header first in
// every unit, as nvcc units of a real build include detail/cuda/gather.cuh, so that gathering
// epochs on CudaSpace run the kernels' own logic.

/// Defined in every unit that has the harness's kernels: the test support's `kernels_compiled`.
#define RESIDENT_TEST_KERNEL_HARNESS 1

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <type_traits>

#include "resident/detail/cuda/error.hpp"
#include "resident/detail/gather/gather_kernels.hpp"
#include "resident/detail/gather/kernel_gather.hpp"
#include "simcuda/simcuda.hpp"

namespace resident::detail {

/// Reaches device memory through the simulation's own mapping of it (host code cannot touch
/// device addresses there), checking that the `count` elements the body touches lie in one
/// live allocation and that the first is aligned to its type: a kernel that strays out of its
/// memory, or reads a word at an address not aligned to it, stops the test, naming the
/// address, where on a device it would read a neighbour's bytes, fault at random, or fault
/// with "misaligned address".
struct SimulatedReach {
  template <class T>
  [[nodiscard]] T* operator()(T* pointer, std::uint64_t count) const noexcept {
    if (reinterpret_cast<std::uintptr_t>(pointer) % alignof(T) != 0) {  // NOLINT: an address
      std::fprintf(stderr,
                   "simcuda: a kernel reached %zu-byte elements at %p, an address not aligned "
                   "to them; a device faults there (misaligned address)\n",
                   sizeof(T), static_cast<const void*>(pointer));
      std::abort();
    }
    return static_cast<T*>(
        resident::testing::simcuda::reach(pointer, static_cast<std::size_t>(count) * sizeof(T)));
  }
};

/// @brief Gather kernels on a simulated stream: on a CUDA stream, in order with its work; on a
/// test space's host stream, at once.
struct SimulatedKernelLaunch {
  using reach_type = SimulatedReach;
  static constexpr std::uint64_t max_blocks = max_gather_blocks;

  template <class Body, class Stream>
  static void run(const Body& body, Stream stream) {
    if constexpr (std::is_same_v<Stream, cudaStream_t>)
      RESIDENT_CUDA_TRY(resident::testing::simcuda::enqueue(stream, [body] { run_blocks(body); }));
    else
      run_blocks(body);
  }
};

template <class Source, class Out, class Op, class Order, class Stream>
void gather_field_kernels(const Source& source, Out* destination, std::size_t row_elements,
                          const Order& order, std::size_t rows, const Op& op,
                          const Augmentation* augmentation, const AugmentKey& key,
                          std::int64_t* indices, Stream stream) {
  device_gather<SimulatedKernelLaunch>(source, destination, row_elements, order, rows, op,
                                       augmentation, key, indices, stream);
}

template <class Order, class Stream>
void fill_indices_kernels(const Order& order, std::size_t rows, std::int64_t* indices,
                          Stream stream) {
  device_fill_indices<SimulatedKernelLaunch>(order, rows, indices, stream);
}

}  // namespace resident::detail
