// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <vector>

#include "resident/dlpack.hpp"
#include "resident/resident.hpp"
#include "support/spaces.hpp"

#if __has_include(<dlpack/dlpack.h>)
namespace {

using resident::DeviceDataset;
using resident::HostSpace;
using resident::HostTensor;

TEST(DLPack, ExportOutlivesTheDatasetAndReleasesOnDelete) {
  const HostSpace space = HostSpace::with_budget(1 << 20);
  std::vector<float> features(std::size_t{10} * 3);
  std::iota(features.begin(), features.end(), 0.0f);
  std::vector<std::int32_t> labels(10, 7);
  resident::DLPackTensor* field = nullptr;
  resident::DLPackTensor* batch = nullptr;
  {
    resident::DatasetOptions options;
    options.batch_size = 4;
    const DeviceDataset<HostSpace, float, std::int32_t> ds(
        space, options, HostTensor<const float>(features.data(), {10, 3}),
        HostTensor<const std::int32_t>(labels.data(), {10}));
    field = resident::to_dlpack(ds, ds.field<0>());
    batch = resident::to_dlpack(ds, std::get<1>(ds.batch(2)));
  }  // the dataset is gone; its memory is not
  EXPECT_GT(space.used_bytes(), 0u);

  const DLTensor& f = field->dl_tensor;
  EXPECT_EQ(f.device.device_type, kDLCPU);
  EXPECT_EQ(f.ndim, 2);
  EXPECT_EQ(f.shape[0], 10);
  EXPECT_EQ(f.shape[1], 3);
  EXPECT_EQ(f.strides, nullptr);
  EXPECT_EQ(f.dtype.code, kDLFloat);
  EXPECT_EQ(f.dtype.bits, 32);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(f.data) % 256, 0u);
  EXPECT_EQ(f.byte_offset, 0u);
  const auto* values = static_cast<const float*>(f.data);
  EXPECT_EQ(std::vector<float>(values, values + 30), features);

  const DLTensor& b = batch->dl_tensor;
  EXPECT_EQ(b.ndim, 1);
  EXPECT_EQ(b.shape[0], 2);  // the short last batch: rows 8 and 9
  EXPECT_EQ(b.dtype.code, kDLInt);
  // `data` is the view's own first element: consumers that ignore `byte_offset` (PyTorch)
  // must not alias the start of the allocation.
  EXPECT_EQ(b.byte_offset, 0u);
  const auto* ids = static_cast<const std::int32_t*>(b.data);
  EXPECT_EQ(ids[0], 7);
  EXPECT_EQ(ids[1], 7);

  field->deleter(field);
  EXPECT_GT(space.used_bytes(), 0u);  // the batch export still holds the storage
  batch->deleter(batch);
  EXPECT_EQ(space.used_bytes(), 0u);
}

TEST(DLPack, RefusesViewsOutsideTheDatasetsAllocation) {
  std::vector<std::int64_t> ids(16);
  std::iota(ids.begin(), ids.end(), std::int64_t{0});
  resident::DatasetOptions options;
  options.batch_size = 4;
  DeviceDataset<HostSpace, std::int64_t> ds(HostSpace{}, options,
                                            HostTensor<const std::int64_t>(ids.data(), {16}));
  auto epoch = ds.epoch({0, 0, resident::Shuffle::samples});
  const auto [gathered] = epoch.batch(0);
  EXPECT_THROW((void)resident::to_dlpack(ds, gathered), resident::InvalidArgument);
  const resident::BatchView<const std::int64_t> foreign(ids.data(), 16, resident::Shape{});
  EXPECT_THROW((void)resident::to_dlpack(ds, foreign), resident::InvalidArgument);
}

#if RESIDENT_HAS_CUDA
// A consumer (torch.from_dlpack) places the tensor by its device: a dataset on CudaSpace{1}
// exports kDLCUDA device 1, and the export keeps the device memory until its deleter runs.
TEST(DLPack, ACudaSpaceExportNamesItsDeviceAndHoldsItsMemory) {
  const resident::testing::WithDevices two(2);
  resident::testing::skip_unless_usable<resident::CudaSpace>();
  if (::testing::Test::IsSkipped()) return;
  if (resident::CudaSpace::device_count() < 2)
    GTEST_SKIP() << "skipped: fewer than two CUDA devices: this machine has "
                 << resident::CudaSpace::device_count();
  std::vector<std::int64_t> ids(16);
  std::iota(ids.begin(), ids.end(), std::int64_t{0});
  resident::DatasetOptions options;
  options.batch_size = 4;
  resident::DLPackTensor* field = nullptr;
  {
    const DeviceDataset<resident::CudaSpace, std::int64_t> ds(
        resident::CudaSpace{1}, options, HostTensor<const std::int64_t>(ids.data(), {16}));
    field = resident::to_dlpack(ds, ds.field<0>());
  }
  const DLTensor& f = field->dl_tensor;
  EXPECT_EQ(f.device.device_type, kDLCUDA);
  EXPECT_EQ(f.device.device_id, 1);
  EXPECT_EQ(f.shape[0], 16);
  std::vector<std::int64_t> back(16);
  ASSERT_EQ(
      cudaMemcpy(back.data(), f.data, back.size() * sizeof(std::int64_t), cudaMemcpyDeviceToHost),
      cudaSuccess)
      << "the export's memory went with the dataset";
  EXPECT_EQ(back, ids);
#if RESIDENT_TEST_SIMULATED_CUDA
  EXPECT_GT(resident::testing::simcuda::device_bytes_used(1), 0u);
#endif
  field->deleter(field);
#if RESIDENT_TEST_SIMULATED_CUDA
  EXPECT_EQ(resident::testing::simcuda::device_bytes_used(1), 0u);
#endif
}
#endif

}  // namespace
#else
TEST(DLPack, NotBuilt) {
  GTEST_SKIP() << "skipped: no DLPack header (install libdlpack-dev; .ci/run does)";
}
#endif
