// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// The simulated CUDA runtime's controls, for tests. The simulation (simcuda.cpp, linked instead
// of the CUDA runtime where the build sets RESIDENT_SIMULATED_CUDA) exports the runtime entry
// points resident and its tests call:
// - each stream is a host thread that runs its work in order, some of it after a seeded random
//   delay;
//   events and stream waits order streams as on a device;
// - device memory is host memory that host code cannot touch (its addresses are mapped without
//   access; the streams reach it through a second mapping), of a configurable size per device;
// - page-locked memory is host memory that copies read when they run, not when they are
//   enqueued, as the copy engine does; a copy from pageable memory is staged when enqueued, as
//   the driver does;
// - `cudaFree` and `cudaFreeHost` release at once, without waiting for the streams (as a
//   stream-ordered pool would): work still queued on the memory is a use-after-free that the
//   sanitizers see;
// - stream-ordered allocation (`cudaMallocAsync`, `cudaMallocFromPoolAsync`, `cudaFreeAsync`,
//   the memory pools) takes memory at once, from the pool's cache of freed blocks or the
//   device's; a free takes effect when its stream reaches it, into the pool's cache (reserved,
//   no longer used), which gives back to the device what its release threshold does not keep;
// - any call can be made to fail (`fail_call`).

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <functional>

namespace resident::testing::simcuda {

/// @brief What a simulated machine has; `configure` applies it (streams must be idle).
struct Machine {
  int devices = 1;                                  ///< 0: no device (`cudaErrorNoDevice`)
  std::size_t device_bytes = std::size_t{1} << 30;  ///< memory of each device
  /// One stream operation in `delay_one_in` (drawn at random) first waits up to
  /// `max_delay_us`: enough over a test's thousands of operations to expose a missing order,
  /// while the others run at once (a sleep costs some 50 us however short it is asked to be).
  unsigned max_delay_us = 200;
  unsigned delay_one_in = 16;  ///< 1: every operation waits
  std::uint64_t seed = 1;      ///< of the delays
};

/// @brief Sets up the machine afresh: every device allocation must have been freed (the memory
/// pools give their cached blocks back first), unless only the delays change (they apply to the
/// streams made from then on).
/// Defaults: `Machine{}`, with `RESIDENT_SIMCUDA_DELAY_US` and `RESIDENT_SIMCUDA_SEED` from
/// the environment where set.
void configure(const Machine& machine);
/// @brief The machine as configured.
Machine machine();

/// @brief The `count`-th call from now (0: the next) of the runtime entry points, error queries
/// aside, fails with `error` without doing anything; one failure per arming. With `only` (an
/// entry point's name, "cudaEventRecord"), the `count`-th call of that entry point.
void fail_call(std::size_t count, cudaError_t error, const char* only = nullptr);
/// @brief Disarms `fail_call`.
void disarm();
/// @brief Whether the failure `fail_call` armed last was injected.
bool failure_fired();
/// @brief Calls made so far (as `fail_call` counts them).
std::size_t calls();

/// @brief Bytes allocated on `device` now (the memory pools' cached blocks included).
std::size_t device_bytes_used(int device = 0);
/// @brief Page-locked host bytes allocated now (`cudaMallocHost`, `cudaHostAlloc`).
std::size_t pinned_bytes();
/// @brief Streams and events alive now (leak checks).
std::size_t live_streams();
std::size_t live_events();

/// @brief Whether `pointer` lies in device memory (any device).
bool is_device_pointer(const void* pointer);

/// @brief Reads `bytes` of device memory at `source` into host memory at `destination`, now,
/// from the calling thread (for tests and the kernel harness; waits for no stream).
void peek(void* destination, const void* source, std::size_t bytes);
/// @brief The host address through which the simulation reaches device address `device`
/// (itself for host memory): for the kernel harness, which runs kernels on host threads.
void* reach(const void* device);
/// @brief `reach`, for a kernel body that reads or writes the `bytes` from `device` on: stops
/// the program, naming the address, the bytes and the nearest live allocation, unless they lie
/// within one live device allocation (not a block freed to a pool) or in host memory.
void* reach(const void* device, std::size_t bytes);

/// @brief Runs `work` on `stream` in order with its other work (a kernel launch, for the kernel
/// harness); `cudaErrorInvalidResourceHandle` for a stream that does not exist.
cudaError_t enqueue(cudaStream_t stream, std::function<void()> work);

}  // namespace resident::testing::simcuda
