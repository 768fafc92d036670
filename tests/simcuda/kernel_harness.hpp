// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// The simulated runtime's kernel launches: a gather kernel's blocks run, block by block and
// phase by phase (`run_blocks`), on the host thread of the stream it was launched on, in order
// with the stream's copies, reaching device memory where the simulation keeps it. The build
// over the simulated runtime includes this header first in every unit (and sets
// RESIDENT_KERNELS), so that gathering epochs on CudaSpace run the kernels' own logic.

#include <cuda_runtime_api.h>

#include <cstdint>
#include <type_traits>

#include "resident/detail/cuda/error.hpp"
#include "resident/detail/gather/gather_kernels.hpp"
#include "simcuda/simcuda.hpp"

namespace resident::detail {

/// Reaches device memory through the simulation's own mapping of it (host code cannot touch
/// device addresses there).
struct SimulatedReach {
  template <class T>
  [[nodiscard]] T* operator()(T* pointer) const noexcept {
    return static_cast<T*>(resident::testing::simcuda::reach(pointer));
  }
};

/// @brief Gather kernels on a simulated stream.
template <>
struct KernelLaunch<true> {
  using reach_type = SimulatedReach;
  static constexpr std::uint64_t max_blocks = max_gather_blocks;

  /// On a CUDA stream, in order with its work; on a test space's host stream, at once.
  template <class Body, class Stream>
  static void run(const Body& body, Stream stream) {
    if constexpr (std::is_same_v<Stream, cudaStream_t>)
      RESIDENT_CUDA_TRY(resident::testing::simcuda::enqueue(stream, [body] { run_blocks(body); }));
    else
      run_blocks(body);
  }
};

}  // namespace resident::detail
