// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// The mixtures' cases compiled by nvcc, so that they run the device gather kernels, through the
// mixture's table, on CudaSpace (the host build skips those instances).

#include "test_mixture.cpp"
