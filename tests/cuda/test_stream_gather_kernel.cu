// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// The gathering streaming epochs' cases compiled by nvcc, so that they run the device gather
// kernels on CudaSpace (the host build skips those instances).

#include "test_streaming_gather.cpp"
