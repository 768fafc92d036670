// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// Devices: every operation of a dataset on CudaSpace{d} runs on device d whichever device the
// caller has current, leaves the caller's device current, and creates no context on a device
// the program never used (a thread that never used CUDA reports device 0 without having it).
#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <thread>
#include <vector>

#include "resident/resident.hpp"
#include "support/epoch_checks.hpp"
#include "support/spaces.hpp"

namespace {

using resident::CudaSpace;
using resident::DeviceDataset;
using resident::HostSpace;
using resident::HostTensor;
using resident::Remainder;
using resident::Shuffle;

class TwoDevices : public resident::testing::OnTwoDevices {
 protected:
  [[nodiscard]] HostTensor<const std::int64_t> ids() const { return {ids_.data(), {100}}; }
  std::vector<std::int64_t> ids_ = [] {
    std::vector<std::int64_t> ids(100);
    std::iota(ids.begin(), ids.end(), std::int64_t{0});
    return ids;
  }();
};

TEST_F(TwoDevices, GathersOnTheDatasetsDeviceAndLeaveTheCallersCurrent) {
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  const auto options = resident::testing::epoch_options(16, Remainder::pad);
  DeviceDataset<CudaSpace, std::int64_t> device(CudaSpace{1}, options, ids());
  DeviceDataset<HostSpace, std::int64_t> host(HostSpace{}, options, ids());
  for (const Shuffle shuffle : {Shuffle::none, Shuffle::samples}) {
    EXPECT_EQ(resident::testing::record_epoch(device, {4, 1, shuffle}).batches,
              resident::testing::record_epoch(host, {4, 1, shuffle}).batches);
  }
  auto zero_copy = device.epoch({0, 0, Shuffle::none});
  EXPECT_EQ(
      resident::testing::read_back(device.space(), device.stream(), zero_copy.batch_indices(6)),
      (std::vector<std::int64_t>{96, 97, 98, 99, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}));
  int current = -1;
  ASSERT_EQ(cudaGetDevice(&current), cudaSuccess);
  EXPECT_EQ(current, 0);
}

TEST_F(TwoDevices, AThreadThatNeverUsedCudaCreatesNoContextOnDeviceZero) {
  if (resident::detail::primary_context_active(0))
    GTEST_SKIP() << "skipped: device 0's context exists already in this process; run the test "
                    "in a process of its own (as ctest does)";
  std::thread worker([this] {
    const auto options = resident::testing::epoch_options(16, Remainder::pad);
    DeviceDataset<CudaSpace, std::int64_t> preloaded(CudaSpace{1}, options, ids());
    (void)resident::testing::record_epoch(preloaded, {2, 0, Shuffle::samples});
    resident::StreamingDataset<CudaSpace, std::int64_t> streamed(CudaSpace{1}, options, ids());
    for (auto [view] : streamed.epoch({2, 0, Shuffle::batches}))
      (void)resident::testing::read_back(streamed.space(), streamed.stream(), view);
  });
  worker.join();
  EXPECT_FALSE(resident::detail::primary_context_active(0))
      << "work on device 1 from a fresh thread created a context on device 0";
}

}  // namespace
