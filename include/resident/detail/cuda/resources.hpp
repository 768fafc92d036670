// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// Owners of the CUDA resources resident makes besides allocations of a space (see
// resources.hpp): page-locked host memory, events and streams. Each is released by its
// owner's destructor, so a constructor that fails half-way releases what it had made.

#include "resident/config.hpp"

#if RESIDENT_HAS_CUDA
#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>
#include <vector>

#include "resident/detail/cuda/device.hpp"
#include "resident/detail/cuda/error.hpp"
#include "resident/detail/resources.hpp"

namespace resident::detail {

struct FreePinned {
  void operator()(std::byte* memory) const noexcept { assert_released(cudaFreeHost(memory)); }
};
/// @brief Page-locked host memory from `cudaMallocHost`.
using PinnedBuffer = std::unique_ptr<std::byte, FreePinned>;

/// @brief `bytes` of page-locked host memory (`bytes` > 0).
/// @throws CudaError when the memory cannot be page-locked.
inline PinnedBuffer allocate_pinned(std::size_t bytes) {
  void* memory = nullptr;
  RESIDENT_CUDA_TRY(cudaMallocHost(&memory, bytes));
  return PinnedBuffer(static_cast<std::byte*>(memory));
}

struct DestroyEvent {
  void operator()(cudaEvent_t event) const noexcept { assert_released(cudaEventDestroy(event)); }
};
/// @brief A CUDA event, of the device current when it was made.
using CudaEvent = std::unique_ptr<CUevent_st, DestroyEvent>;

/// @brief A new event; without timing by default (the cheapest to record and wait on).
inline CudaEvent create_event(unsigned int flags = cudaEventDisableTiming) {
  cudaEvent_t event = nullptr;
  RESIDENT_CUDA_TRY(cudaEventCreateWithFlags(&event, flags));
  return CudaEvent(event);
}

/// @brief `count` events without timing; none is left behind when making one fails.
inline std::vector<CudaEvent> create_events(std::size_t count) {
  return make_owners(count, [] { return create_event(); });
}

struct DestroyStream {
  void operator()(cudaStream_t stream) const noexcept {
    assert_released(cudaStreamDestroy(stream));
  }
};
/// @brief A CUDA stream, of the device current when it was made.
using CudaStream = std::unique_ptr<CUstream_st, DestroyStream>;

/// @brief A non-blocking stream (it does not serialise with stream 0).
inline CudaStream create_stream() {
  cudaStream_t stream = nullptr;
  RESIDENT_CUDA_TRY(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  return CudaStream(stream);
}

}  // namespace resident::detail

#endif  // RESIDENT_HAS_CUDA
