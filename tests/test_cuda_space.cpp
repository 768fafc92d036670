// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// CudaSpace through the runtime API from a g++ translation unit: its behaviour both with and
// without a usable device (each machine runs the half that applies and skips the other).
#include <gtest/gtest.h>

#include <string>

#include "resident/cuda_space.hpp"
#include "resident/error.hpp"
#include "resident/shard.hpp"
#include "resident/space_traits.hpp"
#include "support/spaces.hpp"

#if RESIDENT_HAS_CUDA
namespace {

using resident::CudaError;
using resident::CudaSpace;

static_assert(resident::is_memory_space_v<CudaSpace>);
static_assert(resident::is_device_accessible_v<CudaSpace>);

bool has_device() { return CudaSpace::device_count() > 0; }

// Tests that need a device: skipped without one (failed under RESIDENT_REQUIRE_CUDA).
class CudaSpaceOnDevice : public ::testing::Test {
 protected:
  void SetUp() override { resident::testing::skip_unless_usable<CudaSpace>(); }
};

TEST(CudaSpace, NamesItsDevice) {
  EXPECT_EQ(CudaSpace{}.name(), "cuda:0");
  EXPECT_EQ(CudaSpace{3}.name(), "cuda:3");
  EXPECT_EQ(CudaSpace{3}.device_id(), 3);
  EXPECT_EQ(CudaSpace{0}, CudaSpace{});
  EXPECT_EQ(CudaSpace{}.default_reserve_bytes(), std::size_t{512} << 20);
}

// The device scope's policy: switch only to another device; restore the caller's device only
// where its primary context exists, since restoring one that does not (device 0 on a thread
// that never used CUDA) would create a context on a GPU the program never asked for.
TEST(CudaDeviceScope, SwitchesToAnotherDeviceOnly) {
  using resident::detail::plan_device_switch;
  for (const bool active : {false, true}) {
    const auto same = plan_device_switch(1, active, 1);
    EXPECT_FALSE(same.enter);
    EXPECT_FALSE(same.restore);
  }
  EXPECT_TRUE(plan_device_switch(0, true, 1).enter);
  EXPECT_TRUE(plan_device_switch(0, false, 1).enter);
}

TEST(CudaDeviceScope, RestoresOnlyADeviceWhoseContextExists) {
  using resident::detail::plan_device_switch;
  EXPECT_TRUE(plan_device_switch(0, true, 1).restore);    // the caller was using device 0
  EXPECT_FALSE(plan_device_switch(0, false, 1).restore);  // a fresh thread: 0 is only a default
  EXPECT_TRUE(plan_device_switch(2, true, 0).restore);
  EXPECT_FALSE(plan_device_switch(2, false, 0).restore);
}

TEST(CudaSpace, WithoutDeviceEveryUseThrowsAPlainCudaError) {
  [[maybe_unused]] const resident::testing::WithoutDevices none;
  if (has_device())
    GTEST_SKIP() << "skipped: a CUDA device is present: the test checks a machine without one";
  const CudaSpace space{0};
  for (const auto& use : {+[](const CudaSpace& s) { (void)s.capacity(); },
                          +[](const CudaSpace& s) { (void)s.allocate(1024); },
                          +[](const CudaSpace& s) { (void)s.create_stream(); }}) {
    try {
      use(space);
      FAIL() << "no error without a device";
    } catch (const CudaError& error) {
      EXPECT_NE(std::string(error.what()).find("no usable CUDA device or driver"),
                std::string::npos)
          << error.what();
      EXPECT_NE(error.code(), 0);
    }
  }
}

TEST_F(CudaSpaceOnDevice, DeviceIdPastTheCountThrowsCudaError) {
  try {
    (void)CudaSpace{CudaSpace::device_count()}.capacity();
    FAIL() << "a device past the count was accepted";
  } catch (const CudaError& error) {
    EXPECT_NE(std::string(error.what()).find("requested but this machine has"), std::string::npos)
        << error.what();
  }
}

TEST_F(CudaSpaceOnDevice, CapacityAndAllocationOnTheDevice) {
  const CudaSpace space{0};
  const auto capacity = space.capacity();
  EXPECT_GT(capacity.total_bytes, 0u);
  EXPECT_LE(capacity.free_bytes, capacity.total_bytes);
  void* block = space.allocate(1000);
  EXPECT_NE(block, nullptr);
  space.deallocate(block, 1000);
}

TEST_F(CudaSpaceOnDevice, AllocationBeyondTheDeviceIsACapacityError) {
  const CudaSpace space{0};
  const std::size_t too_much = space.capacity().total_bytes * 2;
  try {
    (void)space.allocate(too_much);
    FAIL() << "allocated twice the device's memory";
  } catch (const resident::CapacityError& error) {
    EXPECT_EQ(error.needed_bytes(), too_much);
    EXPECT_EQ(error.space_name(), "cuda:0");
  }
  void* block = space.allocate(16);  // the failure left no sticky error behind
  space.deallocate(block, 16);
}

TEST(Shard, CudaSpaceForShardRefusesWhatItCannotServe) {
  using resident::CudaSpace;
  // Shards that are not shards, whatever the machine.
  for (const resident::Shard bad :
       {resident::Shard{0, 1, -1}, resident::Shard{0, 1, 5}, resident::Shard{3, 2, 0},
        resident::Shard{-1, 2, 0}, resident::Shard{0, 0, 0}})
    EXPECT_THROW((void)CudaSpace::for_shard(bad), resident::InvalidArgument)
        << bad.rank << "/" << bad.world_size << "/" << bad.local_rank;
  const int devices = CudaSpace::device_count();
  if (devices == 0) {
    // No device: no rank can be served, rank 0 no more than rank 3.
    EXPECT_THROW((void)CudaSpace::for_shard({3, 4, 3}), resident::InvalidArgument);
    EXPECT_THROW((void)CudaSpace::for_shard({0, 1, 0}), resident::InvalidArgument);
  } else {
    EXPECT_EQ(CudaSpace::for_shard({0, 1, 0}).device_id(), 0);
    EXPECT_EQ(CudaSpace::for_shard({devices - 1, devices, devices - 1}).device_id(),
              devices == 1 ? 0 : devices - 1);
  }
}

}  // namespace
#endif
