// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// @brief The two detection macros of resident, kept apart on purpose: one answers "is nvcc
/// compiling this translation unit?", the other "is the CUDA runtime available to link?".
/// A g++ translation unit can use `CudaSpace` (runtime API only) without being able to launch
/// kernels.

/// @brief `__host__ __device__` when compiled by a CUDA compiler, empty otherwise.
#if defined(__CUDACC__)
#define RESIDENT_HOST_DEVICE __host__ __device__
#else
#define RESIDENT_HOST_DEVICE
#endif

/// @brief 1 when the CUDA runtime API is available (CudaSpace is declared), 0 otherwise.
/// The CMake target defines it from `RESIDENT_ENABLE_CUDA`; without CMake it follows the
/// include path.
#if !defined(RESIDENT_HAS_CUDA)
#if __has_include(<cuda_runtime_api.h>)
#define RESIDENT_HAS_CUDA 1
#else
#define RESIDENT_HAS_CUDA 0
#endif
#endif
