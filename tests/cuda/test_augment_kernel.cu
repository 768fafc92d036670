// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// Augmented epochs on the device: the same reference checks as on the host, and batches
// bitwise equal to the host's.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <numeric>
#include <vector>

#include "resident/resident.hpp"
#include "support/augment_checks.hpp"
#include "support/spaces.hpp"

namespace {

using resident::CudaHostPinnedSpace;
using resident::CudaSpace;
using resident::DeviceDataset;
using resident::HostSpace;
using resident::HostTensor;
using resident::ImageLayout;
using resident::Shuffle;

class DeviceAugment : public ::testing::Test {
 protected:
  void SetUp() override { resident::testing::skip_unless_usable<CudaSpace>(); }
};

TEST_F(DeviceAugment, EveryOpMatchesTheReferenceAtEveryBatchSizeShuffleAndSharding) {
  resident::testing::check_augmentation_matches_reference(CudaSpace{0});
}

TEST_F(DeviceAugment, NormalizedAugmentedBatchesEqualTheReferenceBitForBit) {
  resident::testing::check_augmented_conversion(CudaSpace{0}, Shuffle::none);
  resident::testing::check_augmented_conversion(CudaSpace{0}, Shuffle::samples);
}

TEST_F(DeviceAugment, PinnedSpaceMatchesTheReference) {
  resident::testing::skip_unless_usable<CudaHostPinnedSpace>();
  resident::testing::check_augmentation_matches_reference(CudaHostPinnedSpace{});
}

// CIFAR-shaped rows, every op, Normalize: the device's batches are the host's, bit for bit.
TEST_F(DeviceAugment, BatchesEqualTheHostsBitForBit) {
  constexpr std::size_t n = 1000;
  for (const ImageLayout layout : {ImageLayout::chw(3, 32, 32), ImageLayout::hwc(32, 32, 3)}) {
    const auto images = resident::testing::random_images(n, layout.elements(), 31);
    std::vector<std::int64_t> ids(n);
    std::iota(ids.begin(), ids.end(), std::int64_t{0});
    resident::DatasetOptions options;
    options.batch_size = 128;
    options.remainder = resident::Remainder::pad;
    const auto shape = resident::testing::image_shape(n, layout);
    DeviceDataset<CudaSpace, std::uint8_t, std::int64_t> device(
        CudaSpace{0}, options, HostTensor<const std::uint8_t>(images.data(), shape),
        HostTensor<const std::int64_t>(ids.data(), {n}));
    options.reserve_bytes = 0;
    DeviceDataset<HostSpace, std::uint8_t, std::int64_t> host(
        HostSpace{}, options, HostTensor<const std::uint8_t>(images.data(), shape),
        HostTensor<const std::int64_t>(ids.data(), {n}));
    const auto normalize = resident::Normalize::mean_std({0.49f, 0.48f, 0.45f},
                                                         {0.25f, 0.24f, 0.26f}, layout, 1.0f / 255);
    const auto augmented =
        resident::augment<0>(layout, resident::RandomCrop{4, resident::Fill::reflect},
                             resident::RandomFlip{}, resident::Cutout{8});
    const resident::EpochOptions epoch_options{12, 3, Shuffle::samples};
    auto on_device = device.epoch(epoch_options, resident::convert<0>(normalize), augmented);
    auto on_host = host.epoch(epoch_options, resident::convert<0>(normalize), augmented);
    for (std::size_t k = 0; k < on_device.size(); ++k) {
      const auto got = resident::testing::read_back(device.space(), device.stream(),
                                                    std::get<0>(on_device.batch(k)));
      const auto [expected, rows] = on_host.batch(k);
      ASSERT_EQ(got.size(), expected.size());
      ASSERT_EQ(std::memcmp(got.data(), expected.data(), expected.bytes()), 0) << "batch " << k;
    }
  }
}

}  // namespace
