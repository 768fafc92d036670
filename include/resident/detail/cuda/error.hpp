// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "resident/config.hpp"

#if RESIDENT_HAS_CUDA
#include <cuda_runtime_api.h>

#include <string>

#include "resident/error.hpp"

namespace resident::detail {

/// @brief "cudaErrorMemoryAllocation (out of memory)".
inline std::string describe_cuda_error(cudaError_t status) {
  return std::string(cudaGetErrorName(status)) + " (" + cudaGetErrorString(status) + ")";
}

/// @brief Throws the `CudaError` for a failed runtime call, clearing the runtime's last-error
/// slot first so that a non-sticky failure does not resurface in an unrelated later call.
[[noreturn]] inline void throw_cuda_error(cudaError_t status, const char* call, const char* file,
                                          int line) {
  (void)cudaGetLastError();
  throw CudaError(static_cast<int>(status), call, file, line,
                  std::string("resident: CUDA call ") + call + " failed at " + file + ":" +
                      std::to_string(line) + ": " + describe_cuda_error(status) +
                      "; check the device with nvidia-smi, or run under compute-sanitizer");
}

}  // namespace resident::detail

/// @brief Evaluates a CUDA runtime call once and throws `resident::CudaError` (code, call,
/// file:line) when it does not return `cudaSuccess`.
#define RESIDENT_CUDA_TRY(call)                                                         \
  do {                                                                                  \
    const cudaError_t resident_status = (call);                                         \
    if (resident_status != cudaSuccess)                                                 \
      ::resident::detail::throw_cuda_error(resident_status, #call, __FILE__, __LINE__); \
  } while (false)

#endif  // RESIDENT_HAS_CUDA
