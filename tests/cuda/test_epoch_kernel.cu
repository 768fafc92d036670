// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// Gathering epochs on the device: the same properties as on the host, the same orders, and
// conversions bitwise equal to the host's.
#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <optional>
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

TEST_F(DeviceEpoch, WaitAndReleaseCheckTheBatch) {
  resident::testing::check_wait_and_release(CudaSpace{0});
}

// Keeps a stream busy for about `cycles` clock cycles (~50 ms for 10^8), so that work queued
// behind it on that stream runs late, as it can on a loaded GPU.
__global__ void spin(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}
constexpr long long kBusy = 100'000'000;

// A batch gathered on the dataset's stream and read on another stream: `wait` orders the
// read after the gather, `release` orders the next gather into the slot after the read.
class CrossStream : public DeviceEpoch {
 protected:
  void SetUp() override {
    DeviceEpoch::SetUp();
    if (IsSkipped()) return;
    ids_.resize(64);
    std::iota(ids_.begin(), ids_.end(), std::int64_t{0});
    ASSERT_EQ(cudaStreamCreateWithFlags(&consumer_, cudaStreamNonBlocking), cudaSuccess);
    ASSERT_EQ(cudaMallocHost(&pinned_, 16 * sizeof(std::int64_t)), cudaSuccess);
    const HostTensor<const std::int64_t> ids(ids_.data(), {64});
    device_.emplace(CudaSpace{0}, options(), ids);
    host_.emplace(HostSpace{}, options(), ids);
  }
  void TearDown() override {
    device_.reset();
    if (pinned_ != nullptr) (void)cudaFreeHost(pinned_);
    if (consumer_ != nullptr) (void)cudaStreamDestroy(consumer_);
  }
  static resident::DatasetOptions options() {
    return resident::testing::epoch_options(16, Remainder::drop, 2);
  }
  // Copies `view` into the pinned buffer on the consumer stream (asynchronously).
  void copy_on_consumer(const resident::BatchView<const std::int64_t>& view) {
    ASSERT_EQ(
        cudaMemcpyAsync(pinned_, view.data(), view.bytes(), cudaMemcpyDeviceToHost, consumer_),
        cudaSuccess);
  }
  std::vector<std::int64_t> copied() const { return {pinned_, pinned_ + 16}; }

  std::vector<std::int64_t> ids_;
  cudaStream_t consumer_ = nullptr;
  std::int64_t* pinned_ = nullptr;
  std::optional<DeviceDataset<CudaSpace, std::int64_t>> device_;
  std::optional<DeviceDataset<HostSpace, std::int64_t>> host_;
};

TEST_F(CrossStream, AReadOnAnotherStreamWaitsForTheGather) {
  const resident::EpochOptions order{5, 0, Shuffle::samples};
  const auto expected = resident::testing::record_epoch(*host_, order).batches;
  auto epoch = device_->epoch(order);
  spin<<<1, 1, 0, device_->stream()>>>(kBusy);  // the gather below runs ~50 ms late
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  const auto [view] = epoch.batch(1);
  epoch.wait(1, consumer_);
  copy_on_consumer(view);
  ASSERT_EQ(cudaStreamSynchronize(consumer_), cudaSuccess);
  EXPECT_EQ(copied(), expected[1]) << "the consumer read the slot before the gather wrote it";
  epoch.release(1, consumer_);
}

TEST_F(CrossStream, TheNextGatherIntoASlotWaitsForItsRelease) {
  const resident::EpochOptions order{5, 0, Shuffle::samples};
  const auto expected = resident::testing::record_epoch(*host_, order).batches;
  auto epoch = device_->epoch(order);
  const auto [view] = epoch.batch(0);
  epoch.wait(0, consumer_);
  spin<<<1, 1, 0, consumer_>>>(kBusy);  // the consumer reads batch 0 ~50 ms late
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  copy_on_consumer(view);
  epoch.release(0, consumer_);
  (void)epoch.batch(1);
  (void)epoch.batch(2);  // into batch 0's slot (ring depth 2): must wait for the read
  ASSERT_EQ(cudaStreamSynchronize(device_->stream()), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(consumer_), cudaSuccess);
  EXPECT_EQ(copied(), expected[0]) << "batch 2 overwrote batch 0 before the consumer read it";
}

}  // namespace
