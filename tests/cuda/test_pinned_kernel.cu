// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// Kernels reading a CudaHostPinnedSpace dataset in place, over the bus: zero-copy batches and
// the batches a Shuffle::samples epoch gathered with the host's copy threads. Every batch's sum,
// computed on the device from the mapped memory, must equal the host's.
#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <vector>

#include "resident/resident.hpp"
#include "support/spaces.hpp"

namespace {

using resident::BatchView;
using resident::CudaHostPinnedSpace;
using resident::DeviceDataset;
using resident::HostTensor;
using resident::Shuffle;

__global__ void sum_rows(BatchView<const std::int64_t> ids, unsigned long long* sum) {
  unsigned long long local = 0;
  for (std::size_t row = threadIdx.x; row < ids.valid_rows(); row += blockDim.x)
    local += static_cast<unsigned long long>(ids.data()[row]);
  atomicAdd(sum, local);
}

class PinnedKernel : public ::testing::Test {
 protected:
  void SetUp() override { resident::testing::skip_unless_usable<CudaHostPinnedSpace>(); }
};

TEST_F(PinnedKernel, KernelsReadZeroCopyAndGatheredBatchesInPlace) {
  constexpr std::size_t n = 10000, batch = 128;
  std::vector<std::int64_t> ids(n);
  std::iota(ids.begin(), ids.end(), std::int64_t{0});
  resident::DatasetOptions options;
  options.batch_size = batch;
  DeviceDataset<CudaHostPinnedSpace, std::int64_t> ds(
      CudaHostPinnedSpace{}, options, HostTensor<const std::int64_t>(ids.data(), {n}));
  unsigned long long* sum = nullptr;
  ASSERT_EQ(cudaMallocManaged(&sum, sizeof(unsigned long long)), cudaSuccess);
  for (const Shuffle shuffle : {Shuffle::none, Shuffle::samples}) {
    auto epoch = ds.epoch({11, 2, shuffle});
    for (std::size_t k = 0; k < epoch.size(); ++k) {
      const auto [view] = epoch.batch(k);
      unsigned long long expected = 0;
      for (std::size_t row = 0; row < view.valid_rows(); ++row)
        expected += static_cast<unsigned long long>(view.data()[row]);  // host reads it too
      *sum = 0;
      sum_rows<<<1, 256>>>(view, sum);
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      ASSERT_EQ(*sum, expected) << "batch " << k << (shuffle == Shuffle::none ? "" : " gathered");
    }
  }
  (void)cudaFree(sum);
}

}  // namespace
