// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// Kernels reading resident batches: through to_mdspan in device code, and through Thrust on
// the raw pointers. Compiled by nvcc everywhere; run where a device exists, skipped elsewhere.
#include <gtest/gtest.h>
#include <thrust/execution_policy.h>
#include <thrust/reduce.h>

#include <cstdint>
#include <numeric>
#include <vector>

#include "resident/resident.hpp"
#include "support/spaces.hpp"

namespace {

using resident::BatchView;
using resident::CudaSpace;
using resident::DeviceDataset;
using resident::HostTensor;

// One thread per row: the row's sum through the mdspan, plus its label, so that both fields
// of a batch are read by device code.
__global__ void row_sums(BatchView<const float> features, BatchView<const std::int32_t> labels,
                         float* sums) {
  const auto grid = features.to_mdspan<3>();
  const auto label = labels.to_mdspan<1>();
  const std::size_t row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= grid.extent(0)) return;
  float sum = 0.0f;
  for (std::size_t i = 0; i < grid.extent(1); ++i)
    for (std::size_t j = 0; j < grid.extent(2); ++j) sum += grid(row, i, j);
  sums[row] = sum + static_cast<float>(label(row));
}

class BatchViewKernel : public ::testing::Test {
 protected:
  void SetUp() override { resident::testing::skip_unless_usable<CudaSpace>(); }
};

TEST_F(BatchViewKernel, KernelReadsBatchThroughMdspan) {
  constexpr std::size_t rows = 1000, height = 4, width = 3, batch = 128;
  std::vector<float> pixels(rows * height * width);
  std::iota(pixels.begin(), pixels.end(), 0.0f);
  std::vector<std::int32_t> labels(rows);
  std::iota(labels.begin(), labels.end(), 0);
  resident::DatasetOptions options;
  options.batch_size = batch;
  options.reserve_bytes = 0;
  const DeviceDataset<CudaSpace, float, std::int32_t> ds(
      CudaSpace{0}, options, HostTensor<const float>(pixels.data(), {rows, height, width}),
      HostTensor<const std::int32_t>(labels.data(), {rows}));

  float* sums = nullptr;
  RESIDENT_CUDA_TRY(cudaMalloc(&sums, batch * sizeof(float)));
  for (std::size_t i = 0; i < ds.num_batches(); ++i) {
    const auto [x, y] = ds.batch(i);
    row_sums<<<1, batch, 0, ds.stream()>>>(x, y, sums);
    RESIDENT_CUDA_TRY(cudaGetLastError());
    std::vector<float> got(x.rows());
    RESIDENT_CUDA_TRY(cudaMemcpyAsync(got.data(), sums, got.size() * sizeof(float),
                                      cudaMemcpyDeviceToHost, ds.stream()));
    RESIDENT_CUDA_TRY(cudaStreamSynchronize(ds.stream()));
    for (std::size_t r = 0; r < x.rows(); ++r) {
      const std::size_t row = i * batch + r;
      const float* first = pixels.data() + row * height * width;
      const float expected =
          std::accumulate(first, first + height * width, 0.0f) + static_cast<float>(labels[row]);
      ASSERT_EQ(got[r], expected) << "batch " << i << " row " << r;
    }
  }
  RESIDENT_CUDA_TRY(cudaFree(sums));
}

TEST_F(BatchViewKernel, ThrustReducesABatchInPlace) {
  std::vector<std::int32_t> values(4096);
  std::iota(values.begin(), values.end(), 1);
  resident::DatasetOptions options;
  options.batch_size = 1024;
  options.reserve_bytes = 0;
  const DeviceDataset<CudaSpace, std::int32_t> ds(
      CudaSpace{0}, options, HostTensor<const std::int32_t>(values.data(), {4096}));
  const auto [batch] = ds.batch(2);  // values 2049 ..= 3072
  const long long sum =
      thrust::reduce(thrust::cuda::par.on(ds.stream()), batch.begin(), batch.end(), 0LL);
  EXPECT_EQ(sum, (2049LL + 3072LL) * 1024 / 2);
}

}  // namespace
