// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// The permutation computed in device code gives the host's order, index for index.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "resident/resident.hpp"
#include "support/spaces.hpp"

namespace {

using resident::CudaSpace;
using resident::Permutation;

__global__ void permute(Permutation permutation, std::uint64_t* out) {
  const std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x;
  if (i < permutation.size()) out[i] = permutation(i);
}

class PermutationKernel : public ::testing::Test {
 protected:
  void SetUp() override { resident::testing::skip_unless_usable<CudaSpace>(); }
};

TEST_F(PermutationKernel, DeviceOrderEqualsHostOrder) {
  for (const std::uint64_t n : {1, 7, 1000, 65537}) {
    const Permutation permutation(n, 42, 3);
    std::uint64_t* device = nullptr;
    RESIDENT_CUDA_TRY(cudaMalloc(&device, n * sizeof(std::uint64_t)));
    permute<<<static_cast<unsigned>((n + 255) / 256), 256>>>(permutation, device);
    RESIDENT_CUDA_TRY(cudaGetLastError());
    std::vector<std::uint64_t> got(n);
    RESIDENT_CUDA_TRY(
        cudaMemcpy(got.data(), device, n * sizeof(std::uint64_t), cudaMemcpyDeviceToHost));
    RESIDENT_CUDA_TRY(cudaFree(device));
    for (std::uint64_t i = 0; i < n; ++i) ASSERT_EQ(got[i], permutation(i)) << "n " << n;
  }
}

}  // namespace
