// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// No `#pragma once`: this header only defines macros, each where it is not defined yet, so
// that including it again works out one that was undefined in between (as a test of the
// detection does).

/// @file
/// @brief The two detection macros of resident: one marks code that nvcc compiles for both
/// host and device, the other answers "is the CUDA runtime available to link?". Neither
/// changes what a class of resident is: a g++ translation unit and an nvcc one see every class
/// alike (see docs/design.md, "nvcc and g++ in one program").

/// @brief `__host__ __device__` when compiled by a CUDA compiler, empty otherwise.
#if !defined(RESIDENT_HOST_DEVICE)
#if defined(__CUDACC__)
#define RESIDENT_HOST_DEVICE __host__ __device__
#else
#define RESIDENT_HOST_DEVICE
#endif
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
