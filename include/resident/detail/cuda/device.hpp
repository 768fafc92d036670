// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// The current device around each CUDA operation (`CudaDeviceScope` and its policy), and the
// rule for releases that never throw. Shared by every CUDA space and its engines.

#include "resident/config.hpp"

#if RESIDENT_HAS_CUDA
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <cassert>
#include <new>
#include <string>

#include "resident/detail/cuda/error.hpp"

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

/// @brief The CUDA devices of this machine, at least one.
/// @param what the space asking and why, for the refusal ("cuda:1 requested")
/// @throws CudaError naming `what` when the runtime finds no device or no usable driver.
inline int usable_device_count(const std::string& what) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status == cudaSuccess && count > 0) return count;
  (void)cudaGetLastError();
  throw CudaError(
      static_cast<int>(status == cudaSuccess ? cudaErrorNoDevice : status), "cudaGetDeviceCount",
      __FILE__, __LINE__,
      "resident: no usable CUDA device or driver on this machine (" + what +
          "; cudaGetDeviceCount returned " +
          (status == cudaSuccess ? std::string("0 devices") : describe_cuda_error(status)) +
          "); use resident::HostSpace here, or run where an NVIDIA GPU and its "
          "driver are present");
}

}  // namespace detail

}  // namespace resident

#endif  // RESIDENT_HAS_CUDA
