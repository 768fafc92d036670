// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// @brief The memory spaces: `HostSpace` always, `CudaSpace` and `CudaHostPinnedSpace` when the
/// CUDA runtime is available, and the traits that describe them.

#include "resident/cuda_host_pinned_space.hpp"
#include "resident/cuda_space.hpp"
#include "resident/host_space.hpp"
#include "resident/space_traits.hpp"
