// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once
// What a CUDA build of libtorch installs here, for tests/torch/cuda_path.cpp: Debian's libtorch
// is built without CUDA and ships c10/cuda's headers without this one.
#define C10_CUDA_BUILD_SHARED_LIBS
