// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// Gathering epochs on the device: the same properties as on the host, the same orders, and
// conversions bitwise equal to the host's.
#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
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

class DeviceEpoch : public ::testing::Test {
 protected:
  void SetUp() override { resident::testing::skip_unless_usable<CudaSpace>(); }
};

TEST_F(DeviceEpoch, EveryRowOnceUnderEveryShuffle) {
  resident::testing::check_every_row_once(CudaSpace{0},
                                          {Shuffle::none, Shuffle::batches, Shuffle::samples});
}

TEST_F(DeviceEpoch, ShuffledEpochsOfAllRanksCoverTheRowsWithEqualBatches) {
  resident::testing::check_ranks_cover_the_epoch(CudaSpace{0}, {Shuffle::samples});
}

TEST_F(DeviceEpoch, GatherMatchesAReferenceGather) {
  resident::testing::check_gather_matches_reference(CudaSpace{0});
}

TEST_F(DeviceEpoch, ConversionMatchesTheHostReferenceBitForBit) {
  resident::testing::check_conversion_bitwise(CudaSpace{0}, Shuffle::none);
  resident::testing::check_conversion_bitwise(CudaSpace{0}, Shuffle::samples);
}

TEST_F(DeviceEpoch, GatheredViewLivesForRingDepthBatches) {
  resident::testing::check_ring_lifetime(CudaSpace{0});
}

TEST_F(DeviceEpoch, SameOrderAsTheHost) {
  std::vector<std::int64_t> ids(1000);
  std::iota(ids.begin(), ids.end(), std::int64_t{0});
  const auto options = resident::testing::epoch_options(64, Remainder::pad);
  DeviceDataset<CudaSpace, std::int64_t> device(CudaSpace{0}, options,
                                                HostTensor<const std::int64_t>(ids.data(), {1000}));
  DeviceDataset<HostSpace, std::int64_t> host(HostSpace{}, options,
                                              HostTensor<const std::int64_t>(ids.data(), {1000}));
  for (const Shuffle shuffle : {Shuffle::none, Shuffle::batches, Shuffle::samples}) {
    EXPECT_EQ(resident::testing::record_epoch(device, {9, 3, shuffle}).batches,
              resident::testing::record_epoch(host, {9, 3, shuffle}).batches);
  }
}

TEST_F(DeviceEpoch, BatchIndicesOfAZeroCopyEpochNameTheRows) {
  std::vector<std::int64_t> ids(20);
  std::iota(ids.begin(), ids.end(), std::int64_t{0});
  DeviceDataset<CudaSpace, std::int64_t> ds(CudaSpace{0},
                                            resident::testing::epoch_options(8, Remainder::partial),
                                            HostTensor<const std::int64_t>(ids.data(), {20}));
  auto epoch = ds.epoch({0, 0, Shuffle::none});
  EXPECT_EQ(resident::testing::read_back(ds.space(), ds.stream(), epoch.batch_indices(2)),
            (std::vector<std::int64_t>{16, 17, 18, 19}));
}

TEST_F(DeviceEpoch, HalfStorageConvertsToTheHostsFloats) {
  constexpr std::size_t n = 40;
  std::vector<__half> halves(n * 2);
  for (std::size_t i = 0; i < halves.size(); ++i)
    halves[i] = __float2half(static_cast<float>(i) * 0.25f);
  const auto options = resident::testing::epoch_options(8, Remainder::drop);
  const HostTensor<const __half> tensor(halves.data(), {n, 2});
  DeviceDataset<CudaSpace, __half> device(CudaSpace{0}, options, tensor);
  DeviceDataset<HostSpace, __half> host(HostSpace{}, options, tensor);
  const auto normalize = resident::convert<0>(resident::Normalize{2, 1});
  auto on_device = device.epoch({0, 0, Shuffle::samples}, normalize);
  auto on_host = host.epoch({0, 0, Shuffle::samples}, normalize);
  for (std::size_t k = 0; k < on_device.size(); ++k) {
    const auto [x] = on_device.batch(k);
    const auto [reference] = on_host.batch(k);
    EXPECT_EQ(resident::testing::read_back(device.space(), device.stream(), x),
              std::vector<float>(reference.begin(), reference.end()));
  }
}

}  // namespace
