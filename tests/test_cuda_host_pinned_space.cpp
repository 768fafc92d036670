// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// CudaHostPinnedSpace from a g++ translation unit: what it is (a space whose engines are the
// host's, exported as kDLCUDAHost), what it does without a device (refuses every allocation
// with a CudaError that says what to use instead, and leaves its budget as it was), and with
// one (a dataset uploaded into page-locked memory reads back on the host). The typed tests
// run every dataset, epoch and stream over it too (support/spaces.hpp).
#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <string>
#include <type_traits>
#include <vector>

#include "resident/cuda_host_pinned_space.hpp"
#include "resident/device_dataset.hpp"
#include "resident/plan.hpp"
#include "resident/space_traits.hpp"
#include "support/spaces.hpp"

#if RESIDENT_HAS_CUDA
namespace {

using resident::CudaError;
using resident::CudaHostPinnedSpace;
using resident::DatasetOptions;
using resident::DeviceDataset;
using resident::HostTensor;
using Traits = resident::space_traits<CudaHostPinnedSpace>;

static_assert(resident::is_memory_space_v<CudaHostPinnedSpace>);
static_assert(resident::is_device_accessible_v<CudaHostPinnedSpace>);
static_assert(std::is_same_v<CudaHostPinnedSpace::stream_type, resident::HostStream>);
static_assert(!Traits::gathers_with_kernels, "the host's copy threads gather host memory");
static_assert(Traits::host_writable, "files are read straight into it");
static_assert(Traits::dlpack_device_type == 3, "kDLCUDAHost");
static_assert(!Traits::takes_caller_stream);

bool has_device() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return count > 0;
}

DatasetOptions options(std::size_t batch) {
  DatasetOptions result;
  result.batch_size = batch;
  return result;
}

TEST(CudaHostPinnedSpace, NamesItselfAndKeepsTheHostsReserve) {
  EXPECT_EQ(CudaHostPinnedSpace{}.name(), "cuda_host_pinned");
  EXPECT_EQ(CudaHostPinnedSpace{}.default_reserve_bytes(), std::size_t{1} << 30);
  const auto budgeted = CudaHostPinnedSpace::with_budget(4096);
  EXPECT_EQ(budgeted.default_reserve_bytes(), 0u);
  EXPECT_EQ(budgeted.capacity().total_bytes, 4096u);
  EXPECT_EQ(budgeted.capacity().free_bytes, 4096u);
  EXPECT_EQ(budgeted, budgeted);
  EXPECT_NE(budgeted, CudaHostPinnedSpace::with_budget(4096));  // another budget
  EXPECT_GT(CudaHostPinnedSpace{}.capacity().total_bytes, 0u);  // the host's, device or not
}

// plan() asks only for the capacity, which is the host's: it answers without a device.
TEST(CudaHostPinnedSpace, PlansAgainstItsBudgetWithoutTouchingTheDriver) {
  std::vector<float> x(1000);
  const auto space = CudaHostPinnedSpace::with_budget(2048);
  const auto verdict =
      resident::plan(space, options(100), HostTensor<const float>(x.data(), {1000}));
  EXPECT_EQ(verdict.space_name, "cuda_host_pinned");
  EXPECT_FALSE(verdict.fits);  // 4000 bytes of floats in a 2048-byte budget
  EXPECT_EQ(verdict.total_bytes, 2048u);
  EXPECT_EQ(verdict.needed_bytes, 4000u);
}

TEST(CudaHostPinnedSpace, WithoutADeviceAllocationIsAPlainCudaErrorAndTheBudgetIsKept) {
  if (has_device())
    GTEST_SKIP() << "skipped: a CUDA device is present: the test checks a machine without one";
  const auto space = CudaHostPinnedSpace::with_budget(std::size_t{1} << 20);
  try {
    (void)space.allocate(4096);
    FAIL() << "allocate succeeded without a device";
  } catch (const CudaError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("cuda_host_pinned needs a CUDA device"), std::string::npos) << message;
    EXPECT_NE(message.find("use resident::HostSpace"), std::string::npos) << message;
  }
  EXPECT_EQ(space.used_bytes(), 0u);
  std::vector<std::int32_t> y(64);
  EXPECT_THROW((DeviceDataset<CudaHostPinnedSpace, std::int32_t>(
                   space, options(8), HostTensor<const std::int32_t>(y.data(), {64}))),
               CudaError);
  EXPECT_EQ(space.used_bytes(), 0u);
  EXPECT_NO_THROW(space.deallocate(nullptr, 0));
}

// Tests that need a device: skipped without one (failed under RESIDENT_REQUIRE_CUDA).
class CudaHostPinnedSpaceOnDevice : public ::testing::Test {
 protected:
  void SetUp() override { resident::testing::skip_unless_usable<CudaHostPinnedSpace>(); }
};

TEST_F(CudaHostPinnedSpaceOnDevice, ADatasetInPinnedMemoryIsReadableFromTheHost) {
  std::vector<std::int32_t> y(100);
  std::iota(y.begin(), y.end(), 7);
  const auto space = CudaHostPinnedSpace::with_budget(std::size_t{1} << 20);
  {
    DeviceDataset<CudaHostPinnedSpace, std::int32_t> ds(
        space, options(30), HostTensor<const std::int32_t>(y.data(), {100}));
    EXPECT_GT(space.used_bytes(), 0u);
    const auto [last] = ds.batch(3);  // rows 90..99, read in place: host memory
    ASSERT_EQ(last.rows(), 10u);
    EXPECT_EQ(last.data()[0], 97);
    EXPECT_EQ(last.data()[9], 106);
    cudaPointerAttributes attributes{};
    ASSERT_EQ(cudaPointerGetAttributes(&attributes, last.data()), cudaSuccess);
    EXPECT_EQ(attributes.type, cudaMemoryTypeHost);  // page-locked, as the driver sees it
  }
  EXPECT_EQ(space.used_bytes(), 0u);
}

}  // namespace
#endif
