// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// @brief `CudaSpace`: datasets in the global memory of one CUDA device. Uses the runtime API
/// only, so a g++ translation unit that links `CUDA::cudart` can use it; declared only when
/// `RESIDENT_HAS_CUDA` is 1.

#include "resident/config.hpp"

#if RESIDENT_HAS_CUDA
#include <cuda_runtime_api.h>

#include <cstddef>
#include <new>
#include <string>

#include "resident/detail/cuda/chunk_transport.hpp"
#include "resident/detail/cuda/device.hpp"
#include "resident/detail/cuda/error.hpp"
#include "resident/detail/cuda/resources.hpp"
#include "resident/detail/cuda/ring_fences.hpp"
#include "resident/detail/cuda/upload.hpp"
#include "resident/detail/gather/kernel_gather.hpp"
#include "resident/error.hpp"
#include "resident/shard.hpp"
#include "resident/space_traits.hpp"

namespace resident {

/// @brief Global memory of CUDA device `device_id()`: `cudaMalloc` for the dataset's one
/// allocation, `cudaMemGetInfo` for capacity, `cudaMemcpyAsync` on a stream for copies.
/// @note Constructing a `CudaSpace` touches no driver; every operation first checks that the
/// device exists and throws `CudaError` saying so plainly when there is no usable device or
/// driver. Each operation makes its device current for its duration only.
class CudaSpace {
 public:
  using memory_space = CudaSpace;    ///< Kokkos-style self-name; see `is_memory_space_v`.
  using stream_type = cudaStream_t;  ///< Copies and gathers are ordered on a CUDA stream.
  static constexpr bool device_accessible = true;  ///< Kernels on its device read it.

  /// @brief Device `device_id` (default 0); nothing is checked until the space is used.
  constexpr explicit CudaSpace(int device_id = 0) noexcept : device_id_(device_id) {}

  /// @brief The device of a rank: `shard.local_rank` (so each rank on a node takes its own
  /// GPU), or device 0 where the process sees a single device (launchers that set
  /// `CUDA_VISIBLE_DEVICES` per rank).
  /// @throws InvalidArgument for a shard `validate` refuses (a rank or local rank outside
  /// `[0, world_size)`), when no device is visible, or when the local rank is not below the
  /// devices visible (more ranks per node than GPUs).
  [[nodiscard]] static CudaSpace for_shard(const Shard& shard = shard_from_env()) {
    validate(shard);
    return CudaSpace(detail::device_for_local_rank(shard.local_rank, device_count()));
  }

  /// @brief The device's number among those this process sees (`CUDA_VISIBLE_DEVICES`
  /// renumbers them); not checked until the space is used.
  [[nodiscard]] constexpr int device_id() const noexcept { return device_id_; }
  /// @brief "cuda:" and the device id, e.g. "cuda:0".
  [[nodiscard]] std::string name() const { return "cuda:" + std::to_string(device_id_); }

  /// @brief Number of CUDA devices this process can use; 0 without a driver or device.
  [[nodiscard]] static int device_count() noexcept {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) {
      (void)cudaGetLastError();
      return 0;
    }
    return count;
  }

  /// @brief Throws `CudaError` unless this space's device exists and its driver works.
  void ensure_usable() const {
    const int count = detail::usable_device_count(name() + " requested");
    if (device_id_ < 0 || device_id_ >= count) {
      throw CudaError(
          static_cast<int>(cudaErrorInvalidDevice), "cudaGetDeviceCount", __FILE__, __LINE__,
          "resident: " + name() + " requested but this machine has " + std::to_string(count) +
              " CUDA device(s); pass a device id from 0 to count - 1 "
              "(CUDA_VISIBLE_DEVICES renumbers them)");
    }
  }

  /// @brief Free and total bytes of the device (`cudaMemGetInfo`).
  [[nodiscard]] Capacity capacity() const {
    ensure_usable();
    const detail::CudaDeviceScope scope(device_id_);
    Capacity capacity;
    RESIDENT_CUDA_TRY(cudaMemGetInfo(&capacity.free_bytes, &capacity.total_bytes));
    return capacity;
  }

  /// @brief 512 MiB: room for the CUDA context's growth, cuBLAS workspaces and a small
  /// model; set `DatasetOptions::reserve_bytes` to your model's footprint for anything larger.
  [[nodiscard]] std::size_t default_reserve_bytes() const noexcept {
    return std::size_t{512} << 20;
  }

  /// @brief `bytes` of device memory (256-byte aligned, as `cudaMalloc` guarantees); null for 0.
  /// @throws CapacityError when the device is out of memory, CudaError on any other failure.
  [[nodiscard]] void* allocate(std::size_t bytes) const {
    if (bytes == 0) return nullptr;
    ensure_usable();
    const detail::CudaDeviceScope scope(device_id_);
    void* pointer = nullptr;
    const cudaError_t status = cudaMalloc(&pointer, bytes);
    if (status == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();
      Capacity now;
      (void)cudaMemGetInfo(&now.free_bytes, &now.total_bytes);
      throw CapacityError(name(), bytes, now.free_bytes, now.total_bytes, 0);
    }
    if (status != cudaSuccess) detail::throw_cuda_error(status, "cudaMalloc", __FILE__, __LINE__);
    return pointer;
  }

  /// @brief Releases memory from `allocate`; never throws (see `detail::assert_released`).
  void deallocate(void* pointer, std::size_t /*bytes*/) const noexcept {
    if (pointer == nullptr) return;
    const detail::CudaDeviceScope scope(device_id_, std::nothrow);
    detail::assert_released(cudaFree(pointer));
  }

  /// @brief A non-blocking stream on this device (it does not serialise with stream 0).
  [[nodiscard]] stream_type create_stream() const {
    ensure_usable();
    const detail::CudaDeviceScope scope(device_id_);
    return detail::create_stream().release();
  }

  /// @brief Destroys a stream from `create_stream` (nothing for null); never throws (see
  /// `detail::assert_released`).
  void destroy_stream(stream_type stream) const noexcept {
    if (stream == nullptr) return;
    const detail::CudaDeviceScope scope(device_id_, std::nothrow);
    detail::assert_released(cudaStreamDestroy(stream));
  }

  /// @brief Waits on the host until the work enqueued on `stream` is done
  /// (`cudaStreamSynchronize`).
  /// @throws CudaError when the wait fails, or reports an earlier asynchronous error.
  void synchronize(stream_type stream) const {
    const detail::CudaDeviceScope scope(device_id_);
    RESIDENT_CUDA_TRY(cudaStreamSynchronize(stream));
  }

  /// @brief Enqueues a host-to-device copy on `stream`.
  void copy_from_host(void* destination, const void* source, std::size_t bytes,
                      stream_type stream) const {
    if (bytes == 0) return;
    const detail::CudaDeviceScope scope(device_id_);
    RESIDENT_CUDA_TRY(cudaMemcpyAsync(destination, source, bytes, cudaMemcpyHostToDevice, stream));
  }

  /// @brief Enqueues a device-to-host copy on `stream`.
  void copy_to_host(void* destination, const void* source, std::size_t bytes,
                    stream_type stream) const {
    if (bytes == 0) return;
    const detail::CudaDeviceScope scope(device_id_);
    RESIDENT_CUDA_TRY(cudaMemcpyAsync(destination, source, bytes, cudaMemcpyDeviceToHost, stream));
  }

  friend constexpr bool operator==(const CudaSpace& a, const CudaSpace& b) noexcept {
    return a.device_id_ == b.device_id_;
  }
  friend constexpr bool operator!=(const CudaSpace& a, const CudaSpace& b) noexcept {
    return !(a == b);
  }

 private:
  int device_id_;
};

/// @brief `CudaSpace`'s engines: uploads staged through page-locked buffers (or copied
/// directly from page-locked sources), chunks streamed on a copy stream ordered by events,
/// gathers by kernels ordered against consumer streams by events, and the device made current
/// around each operation.
template <>
struct space_traits<CudaSpace> : default_space_traits<CudaSpace> {
  using upload_engine = detail::CudaUpload;            ///< See `default_space_traits`.
  using chunk_transport = detail::CudaChunkTransport;  ///< See `default_space_traits`.
  using ring_fences = detail::CudaRingFences;          ///< See `default_space_traits`.
  using gather_engine = detail::KernelGather;          ///< See `default_space_traits`.
  static constexpr bool takes_caller_stream = true;    ///< See `default_space_traits`.
  static constexpr int dlpack_device_type = 2;         ///< `kDLCUDA`.
  /// @brief The space's device.
  static constexpr int dlpack_device_id(const CudaSpace& space) noexcept {
    return space.device_id();
  }
  /// @brief Makes the space's device current for the scope (see `detail::CudaDeviceScope`).
  static detail::CudaDeviceScope device_scope(const CudaSpace& space) {
    return detail::CudaDeviceScope(space.device_id());
  }
  /// @brief Refuses a stream the runtime does not know (destroyed, or not a stream) and a
  /// stream of another device than the space's: their copies and events would fail half-way.
  /// @throws InvalidArgument naming the stream's device and the space's.
  static void check_caller_stream(const CudaSpace& space, cudaStream_t stream) {
    const detail::CudaDeviceScope scope(space.device_id());  // cudaStreamPerThread's device
    int device = -1;
    const cudaError_t status = cudaStreamGetDevice(stream, &device);
    if (status != cudaSuccess) {
      (void)cudaGetLastError();
      throw InvalidArgument(
          "resident: DatasetOptions::stream is not a stream the CUDA runtime knows (" +
          std::string(cudaGetErrorName(status)) + "): expected a live stream of " + space.name() +
          "; pass a stream that outlives the dataset (not one already destroyed), or leave the "
          "option unset and the dataset makes its own");
    }
    if (device != space.device_id())
      throw InvalidArgument(
          "resident: DatasetOptions::stream belongs to cuda:" + std::to_string(device) +
          ", but the dataset's space is " + space.name() + "; pass a stream made on device " +
          std::to_string(space.device_id()) +
          " (cudaSetDevice first, then cudaStreamCreate), or leave the option "
          "unset and the dataset makes its own");
  }
};

}  // namespace resident

#endif  // RESIDENT_HAS_CUDA
