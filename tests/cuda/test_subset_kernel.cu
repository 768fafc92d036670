// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// The subsets' cases compiled by nvcc, so that they run the device gather kernels, through the
// row map, on CudaSpace (the host build skips those instances).

#include "test_subset.cpp"
