// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// @brief `CudaHostPinnedSpace`: datasets in page-locked, mapped host memory that CUDA kernels
/// read directly over the bus (Kokkos' name for the same space). The middle ground when the
/// data fits in host memory but not in the device's: uploaded once at host-memory speed,
/// served as zero-copy views that both host code and kernels can read. Declared only when
/// `RESIDENT_HAS_CUDA` is 1.

#include "resident/config.hpp"

#if RESIDENT_HAS_CUDA
#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>
#include <string>

#include "resident/detail/cuda/device.hpp"
#include "resident/detail/cuda/error.hpp"
#include "resident/detail/cuda/pinned_chunk_transport.hpp"
#include "resident/detail/cuda/resources.hpp"
#include "resident/detail/cuda/ring_fences.hpp"
#include "resident/error.hpp"
#include "resident/host_space.hpp"
#include "resident/space_traits.hpp"

namespace resident {

/// @brief Page-locked host memory from `cudaHostAlloc` (mapped and portable: with unified
/// addressing its pointers are valid in kernels on every device, as in host code).
///
/// Host code writes and reads it as ordinary memory: uploads, streamed chunks and the gathers
/// of `Shuffle::samples` epochs are the host's copy threads, complete when they return. Kernels
/// read batches over PCIe or NVLink-C2C, at the bus's bandwidth rather than the device
/// memory's: the space for data that does not fit on the device, read once per epoch.
///
/// Its streams are CUDA streams (`stream_type` is `cudaStream_t`, made on the device current
/// when the dataset is made), because kernels read its batches asynchronously while the host
/// writes the next ones: a host write into a gather-ring slot or a chunk slot first waits, on
/// the host, for the reads of what the slot held. Reads on the dataset's `stream()` are covered
/// as they are enqueued (a slot is rewritten only once the work enqueued on the stream before
/// the next batch was asked for is done); reads on another stream need `Epoch::wait` and
/// `Epoch::release`, as on `CudaSpace`.
/// @note Capacity is the host's available memory (or a budget, as for `HostSpace`):
/// page-locking takes it from the rest of the machine, hence the larger default reserve.
/// Every allocation needs a CUDA driver and device; without one, `CudaError` says so.
/// Thread-safe: datasets may be created and destroyed in one space from many threads.
class CudaHostPinnedSpace : public detail::HostMemorySpace<CudaHostPinnedSpace, cudaStream_t> {
 public:
  using memory_space = CudaHostPinnedSpace;        ///< See `is_memory_space_v`.
  static constexpr bool device_accessible = true;  ///< Kernels read it (mapped memory).

  /// @brief The whole host: capacity is the memory the OS reports available.
  CudaHostPinnedSpace() = default;

  /// @brief "cuda_host_pinned".
  [[nodiscard]] std::string name() const { return "cuda_host_pinned"; }

  /// @brief Throws `CudaError` unless a CUDA device and its driver are usable: page-locked
  /// memory is the driver's.
  void ensure_usable() const {
    (void)detail::usable_device_count(name() + " needs a CUDA device to page-lock host memory");
  }

  /// @brief No reserve inside a budget; 1 GiB of the machine's memory otherwise, since
  /// page-locked memory cannot be swapped or reclaimed by the OS.
  [[nodiscard]] std::size_t default_reserve_bytes() const noexcept {
    return budget_ ? 0 : std::size_t{1} << 30;
  }

  /// @brief `bytes` of page-locked, mapped host memory (at least 256-byte aligned: it is
  /// page-aligned); null for 0 bytes.
  /// @throws CapacityError when the budget or the driver cannot supply them; CudaError
  /// without a usable device or on any other failure.
  [[nodiscard]] void* allocate(std::size_t bytes) const {
    if (bytes == 0) return nullptr;
    ensure_usable();
    return allocate_within_budget(bytes, name(), [bytes]() -> void* {
      void* pointer = nullptr;
      const cudaError_t status =
          cudaHostAlloc(&pointer, bytes, cudaHostAllocMapped | cudaHostAllocPortable);
      if (status == cudaSuccess) return pointer;
      if (status != cudaErrorMemoryAllocation)
        detail::throw_cuda_error(status, "cudaHostAlloc", __FILE__, __LINE__);
      (void)cudaGetLastError();
      return nullptr;
    });
  }

  /// @brief Releases memory from `allocate(bytes)`; never throws (see
  /// `detail::assert_released`).
  void deallocate(void* pointer, std::size_t bytes) const noexcept {
    if (pointer == nullptr) return;
    detail::assert_released(cudaFreeHost(pointer));
    give_back(bytes);
  }

  /// @brief A non-blocking stream on the device current now: the stream a dataset's kernels
  /// read its batches on.
  /// @throws CudaError without a usable device, or when the stream cannot be made.
  [[nodiscard]] stream_type create_stream() const {
    ensure_usable();
    return detail::create_stream().release();
  }
  /// @brief Destroys a stream from `create_stream` (nothing for null); never throws.
  void destroy_stream(stream_type stream) const noexcept {
    if (stream != nullptr) detail::assert_released(cudaStreamDestroy(stream));
  }
  /// @brief Waits on the host until the work enqueued on `stream` is done (the copies of this
  /// space complete when they return: what is waited for is the kernels' reads).
  /// @throws CudaError when the wait fails.
  void synchronize(stream_type stream) const { RESIDENT_CUDA_TRY(cudaStreamSynchronize(stream)); }

  /// @brief Copies `bytes` of this space into host memory once the work enqueued on `stream`
  /// is done (kernels may be writing the memory: the copy is ordered on the stream, as the
  /// space concept says); done when it returns.
  /// @throws CudaError when the wait fails.
  void copy_to_host(void* destination, const void* source, std::size_t bytes,
                    stream_type stream) const {
    synchronize(stream);
    HostMemorySpace::copy_to_host(destination, source, bytes, stream);
  }
};

/// @brief `CudaHostPinnedSpace`'s engines: the host's (copy-team uploads and gathers, files
/// read straight into its memory), each write into a slot after the kernels' reads of it;
/// exported to DLPack as `kDLCUDAHost`.
template <>
struct space_traits<CudaHostPinnedSpace> : default_space_traits<CudaHostPinnedSpace> {
  /// @brief The host's loads, each first waiting for the reads of what its slot held.
  using chunk_transport = detail::PinnedChunkTransport<CudaHostPinnedSpace>;
  /// @brief Host gathers, each first waiting for the reads of what its slot held.
  using ring_fences = detail::PinnedRingFences;
  /// @brief The host's copy threads gather: the memory is host memory, and a kernel would
  /// read every row over the bus twice.
  using gather_engine = detail::HostGather;
  static constexpr bool host_writable = true;   ///< See `default_space_traits`.
  static constexpr int dlpack_device_type = 3;  ///< `kDLCUDAHost`.
};

}  // namespace resident

#endif  // RESIDENT_HAS_CUDA
