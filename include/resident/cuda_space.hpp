// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// @brief `CudaSpace`: datasets in the global memory of one CUDA device. Uses the runtime API
/// only, so a g++ translation unit that links `CUDA::cudart` can use it; declared only when
/// `RESIDENT_HAS_CUDA` is 1.

#include "resident/config.hpp"

#if RESIDENT_HAS_CUDA
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <cassert>
#include <cstddef>
#include <new>
#include <string>

#include "resident/detail/cuda_try.hpp"
#include "resident/error.hpp"
#include "resident/shard.hpp"
#include "resident/space_traits.hpp"

namespace resident {

namespace detail {

/// @brief What a device scope does on entry and on exit: the policy of `CudaDeviceScope`,
/// apart from the CUDA calls so that it can be tested without a device.
struct DeviceSwitch {
  bool enter = false;    ///< Make the target device current on entry.
  bool restore = false;  ///< Make the previous device current again on exit.
};

/// @brief The scope's policy, from the device the thread had current (`previous`, as
/// `cudaGetDevice` reports it: 0 on a thread that never chose one), whether that device's
/// primary context exists (`previous_active`), and the device to work on (`target`).
/// A device whose primary context does not exist is not restored: since CUDA 12,
/// `cudaSetDevice` creates the context, so restoring device 0 on a thread that never used
/// CUDA (every producer thread of a dataset on another device) would put a context of
/// hundreds of MiB on a GPU the program never asked for. Such a thread keeps the target
/// current, which no code of the caller's can have relied on.
constexpr DeviceSwitch plan_device_switch(int previous, bool previous_active, int target) noexcept {
  if (previous == target) return {};
  return {true, previous_active};
}

/// @brief Whether `device`'s primary context is active, asked of the driver through the
/// runtime's entry-point lookup (g++ consumers link the runtime only, never libcuda). True
/// where the driver cannot say: restoring is then the choice that keeps the caller's device.
/// The runtime's device ordinals are the driver's `CUdevice` handles.
inline bool primary_context_active(int device) noexcept {
  using GetState = CUresult (*)(CUdevice, unsigned int*, int*);
  static const GetState get_state = []() -> GetState {
    void* function = nullptr;
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
    if (cudaGetDriverEntryPointByVersion("cuDevicePrimaryCtxGetState", &function, 12000,
                                         cudaEnableDefault, &found) != cudaSuccess ||
        found != cudaDriverEntryPointSuccess) {
      (void)cudaGetLastError();
      return nullptr;
    }
    return reinterpret_cast<GetState>(function);  // NOLINT: the driver's own function type
  }();
  if (get_state == nullptr) return true;
  unsigned int flags = 0;
  int active = 0;
  if (get_state(static_cast<CUdevice>(device), &flags, &active) != CUDA_SUCCESS) return true;
  return active != 0;
}

/// @brief Makes `device` current for a scope and, where the thread had a device in use,
/// restores it after (see `plan_device_switch`), so that resident never changes which device
/// the rest of the program talks to. Every operation of resident on a device holds one,
/// kernel launches included.
class CudaDeviceScope {
 public:
  /// @throws CudaError when the device cannot be asked for or made current.
  explicit CudaDeviceScope(int device) {
    const char* call = nullptr;
    const cudaError_t status = enter(device, call);
    if (status != cudaSuccess) throw_cuda_error(status, call, __FILE__, __LINE__);
  }
  /// For releases, which never throw: where the device cannot be made current the scope does
  /// nothing, and the release is asked of the device that is current.
  CudaDeviceScope(int device, std::nothrow_t /*tag*/) noexcept {
    const char* call = nullptr;
    if (enter(device, call) != cudaSuccess) (void)cudaGetLastError();
  }
  ~CudaDeviceScope() {
    if (restore_) (void)cudaSetDevice(previous_);
  }
  CudaDeviceScope(const CudaDeviceScope&) = delete;
  CudaDeviceScope& operator=(const CudaDeviceScope&) = delete;

 private:
  // Switches to `device` as the policy says; on failure `call` names the call that failed.
  cudaError_t enter(int device, const char*& call) noexcept {
    call = "cudaGetDevice";
    if (const cudaError_t status = cudaGetDevice(&previous_); status != cudaSuccess) return status;
    const DeviceSwitch decided = plan_device_switch(
        previous_, previous_ != device && primary_context_active(previous_), device);
    call = "cudaSetDevice";
    if (decided.enter) {
      if (const cudaError_t status = cudaSetDevice(device); status != cudaSuccess) return status;
    }
    restore_ = decided.restore;
    return cudaSuccess;
  }

  int previous_ = 0;
  bool restore_ = false;
};

/// In Debug builds, stops at a release that names memory or a handle that was never ours (a
/// bug here). Every other failure is the device's: after a sticky error (an illegal address,
/// an Xid, an uncorrectable ECC error) or at shutdown (`cudaErrorCudartUnloading`, datasets of
/// static lifetime) every call fails, and releasing must stay quiet so that datasets can still
/// be destroyed.
inline void assert_released(cudaError_t status) noexcept {
  assert(status != cudaErrorInvalidValue && status != cudaErrorInvalidDevicePointer &&
         status != cudaErrorInvalidResourceHandle);
  (void)status;
  (void)cudaGetLastError();
}

}  // namespace detail

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

  [[nodiscard]] constexpr int device_id() const noexcept { return device_id_; }
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
    int count = 0;
    const cudaError_t status = cudaGetDeviceCount(&count);
    if (status != cudaSuccess) {
      (void)cudaGetLastError();
      throw CudaError(static_cast<int>(status), "cudaGetDeviceCount", __FILE__, __LINE__,
                      "resident: no usable CUDA device or driver on this machine (" + name() +
                          " requested; cudaGetDeviceCount returned " +
                          detail::describe_cuda_error(status) +
                          "); use resident::HostSpace here, or run where an NVIDIA GPU and "
                          "its driver are present");
    }
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
    cudaStream_t stream = nullptr;
    RESIDENT_CUDA_TRY(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    return stream;
  }

  void destroy_stream(stream_type stream) const noexcept {
    if (stream == nullptr) return;
    const detail::CudaDeviceScope scope(device_id_, std::nothrow);
    detail::assert_released(cudaStreamDestroy(stream));
  }

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

namespace detail {

/// @brief The device scope of an operation on `space` (see `detail::device_scope`).
inline CudaDeviceScope device_scope(const CudaSpace& space) {
  return CudaDeviceScope(space.device_id());
}

}  // namespace detail

}  // namespace resident

#endif  // RESIDENT_HAS_CUDA
