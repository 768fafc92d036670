// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// Augmented epochs: each op against a plain reference at every batch size, shuffle and sharding
// on every space (converted, in either output order, and at its extremes too), padding rows, and
// the layouts and Normalize channels an augmented field refuses or takes. The draws, one row's
// pixels and the generator are tested on their own in tests/detail/.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <numeric>
#include <string>
#include <vector>

#include "resident/resident.hpp"
#include "support/augment_checks.hpp"

namespace {

using resident::augment;
using resident::Augmentation;
using resident::convert;
using resident::Cutout;
using resident::DatasetOptions;
using resident::DeviceDataset;
using resident::Fill;
using resident::HostSpace;
using resident::HostTensor;
using resident::ImageLayout;
using resident::InvalidArgument;
using resident::Normalize;
using resident::RandomCrop;
using resident::RandomFlip;
using resident::Remainder;
using resident::Shuffle;
using resident::testing::image_shape;
using resident::testing::random_images;

DatasetOptions batches_of(std::size_t batch, Remainder remainder = Remainder::partial) {
  DatasetOptions options;
  options.batch_size = batch;
  options.remainder = remainder;
  options.reserve_bytes = 0;
  return options;
}

// On every space that gathers (the device's kernels where this unit can launch them, the
// test engine's blocks), so that the host's line copies and the kernels' element map agree.
template <class Space>
using Everywhere = resident::testing::OverGatheringSpaces<Space>;
TYPED_TEST_SUITE(Everywhere, resident::testing::GatherSpaceTypes, resident::testing::SpaceName);

TYPED_TEST(Everywhere, EveryOpMatchesTheReferenceAtEveryBatchSizeShuffleAndSharding) {
  resident::testing::check_augmentation_matches_reference(this->space_);
}

TYPED_TEST(Everywhere, NormalizedAugmentedBatchesInEitherOrderEqualTheReferenceBitForBit) {
  resident::testing::check_augmented_conversion(this->space_, Shuffle::none);
  resident::testing::check_augmented_conversion(this->space_, Shuffle::samples);
}

TEST(Augment, ExtremeOpsMatchTheReference) {
  // A pad wider than the image (rows of zeros only), a cutout larger than it (all zeros), a
  // flip that always happens, and a 1x1 image.
  for (const ImageLayout layout :
       {ImageLayout::chw(2, 3, 4), ImageLayout::hwc(3, 4, 2), ImageLayout::chw(1, 1, 1)}) {
    const std::size_t n = 9;
    const auto images = random_images(n, layout.elements(), 3);
    std::vector<std::int64_t> ids(n);
    std::iota(ids.begin(), ids.end(), std::int64_t{0});
    DeviceDataset<HostSpace, std::uint8_t, std::int64_t> ds(
        HostSpace{}, batches_of(4, Remainder::pad),
        HostTensor<const std::uint8_t>(images.data(), image_shape(n, layout)),
        HostTensor<const std::int64_t>(ids.data(), {n}));
    for (const auto& augmented :
         {augment<0>(layout, RandomCrop{9}), augment<0>(layout, RandomFlip{1.0}),
          augment<0>(layout, Cutout{10}), augment<0>(layout, RandomCrop{1}, Cutout{1}),
          augment<0>(layout)}) {
      const resident::EpochOptions options{1, 1, Shuffle::none};
      auto epoch = ds.epoch(options, augmented);
      resident::testing::expect_rows_match_reference(ds, epoch, augmented.augmentation, options,
                                                     images, resident::testing::Same{},
                                                     layout.describe());
    }
  }
}

TEST(Augment, PaddingRowsHoldTheAugmentedRowTheyName) {
  const ImageLayout layout = ImageLayout::chw(1, 4, 4);
  constexpr std::size_t n = 10;
  const auto images = random_images(n, layout.elements(), 5);
  std::vector<std::int64_t> ids(n);
  std::iota(ids.begin(), ids.end(), std::int64_t{0});
  DeviceDataset<HostSpace, std::uint8_t, std::int64_t> ds(
      HostSpace{}, batches_of(4, Remainder::pad),
      HostTensor<const std::uint8_t>(images.data(), image_shape(n, layout)),
      HostTensor<const std::int64_t>(ids.data(), {n}));
  const auto augmented = augment<0>(layout, RandomCrop{2}, RandomFlip{}, Cutout{2});
  for (const Shuffle shuffle : {Shuffle::none, Shuffle::samples}) {
    auto epoch = ds.epoch({4, 0, shuffle}, augmented);
    ASSERT_EQ(epoch.size(), 3u);
    const auto [pixels, rows] = epoch.batch(2);
    EXPECT_EQ(pixels.rows(), 4u);
    EXPECT_EQ(pixels.valid_rows(), 2u);
    const auto indices = epoch.batch_indices(2);
    for (std::size_t r = 0; r < 4; ++r) {
      const auto row = static_cast<std::size_t>(indices.data()[r]);
      EXPECT_EQ(rows.data()[r], static_cast<std::int64_t>(row));
      const auto expected = resident::testing::reference_row<std::uint8_t, std::uint8_t>(
          augmented.augmentation, {4, 0, 0}, row, images.data() + row * 16,
          resident::testing::Same{});
      EXPECT_EQ(std::memcmp(pixels.data() + r * 16, expected.data(), 16), 0) << "position " << r;
    }
  }
}

TEST(Augment, AugmentedEpochsGatherUnderEveryShuffle) {
  const ImageLayout layout = ImageLayout::hwc(2, 2, 1);
  std::vector<std::uint8_t> images(std::size_t{32} * 4, 1);
  DeviceDataset<HostSpace, std::uint8_t> ds(
      HostSpace{}, batches_of(8), HostTensor<const std::uint8_t>(images.data(), {32, 2, 2, 1}));
  for (const Shuffle shuffle : {Shuffle::none, Shuffle::batches, Shuffle::samples}) {
    auto epoch = ds.epoch({0, 0, shuffle}, augment<0>(layout, RandomFlip{}));
    EXPECT_TRUE(epoch.gathers());
    const auto [view] = epoch.batch(0);
    EXPECT_NE(view.data(), std::get<0>(ds.batch(0)).data()) << "a copy, not the stored rows";
  }
  EXPECT_GT(ds.ring_bytes(), 0u);
}

TEST(Augment, RefusesALayoutOrOpThatDoesNotFitTheField) {
  std::vector<std::uint8_t> images(std::size_t{4} * 48);
  DeviceDataset<HostSpace, std::uint8_t> ds(
      HostSpace{}, batches_of(2), HostTensor<const std::uint8_t>(images.data(), {4, 3, 4, 4}));
  const auto refused = [&](const resident::FieldAugmentation<0>& augmented,
                           const std::string& says) {
    try {
      (void)ds.epoch({}, augmented);
      ADD_FAILURE() << "accepted; expected a refusal saying " << says;
    } catch (const InvalidArgument& error) {
      EXPECT_NE(std::string(error.what()).find(says), std::string::npos) << error.what();
    }
  };
  refused(augment<0>(ImageLayout::chw(3, 4, 5), RandomFlip{}), "rows have 48");
  refused(augment<0>(ImageLayout::chw(3, 0, 16), RandomFlip{}), "zero extent");
  refused(augment<0>(ImageLayout::chw(3, 4, 4), RandomCrop{4, Fill::reflect}),
          "pad below the image's height and width");
  refused(augment<0>(ImageLayout::chw(3, 4, 4), RandomFlip{1.5}), "p in [0, 1]");
  refused(augment<0>(ImageLayout::chw(3, 4, 4), RandomFlip{-0.1}), "p in [0, 1]");
  refused(augment<0>(ImageLayout::chw(3, 4, 4), RandomCrop{std::size_t{1} << 30}), "at most");
  // The dataset is untouched by the refusals: a valid epoch still serves it.
  auto epoch = ds.epoch({}, augment<0>(ImageLayout::chw(3, 4, 4), RandomCrop{3, Fill::reflect}));
  EXPECT_EQ(epoch.size(), 2u);
}

TEST(Augment, NormalizeTakesTheChannelsFromTheLayout) {
  const auto chw = Normalize::mean_std({0.5f, 0.4f}, {0.2f, 0.1f}, ImageLayout::chw(2, 3, 3));
  EXPECT_EQ(chw.channel_stride(), 9u);
  const auto hwc = Normalize::mean_std({0.5f, 0.4f}, {0.2f, 0.1f}, ImageLayout::hwc(3, 3, 2));
  EXPECT_EQ(hwc.channel_stride(), 1u);
  EXPECT_THROW((void)Normalize::mean_std({0.5f}, {0.2f}, ImageLayout::chw(3, 2, 2)),
               InvalidArgument);
}

// A Normalize of another count of channels than the images the augmentation of its field
// declares is refused when the epoch is made, saying both and what to give.
TEST(Augment, RefusesANormalizeWhoseChannelsContradictTheDeclaredLayout) {
  constexpr std::size_t n = 4;
  std::vector<std::uint8_t> images(n * 768);
  DeviceDataset<HostSpace, std::uint8_t> ds(
      HostSpace{}, batches_of(2), HostTensor<const std::uint8_t>(images.data(), {n, 768}));
  const auto four = Normalize::mean_std({0.1f, 0.2f, 0.3f, 0.4f}, {1, 1, 1, 1}, 1);  // fits 768
  for (const ImageLayout layout : {ImageLayout::chw(3, 16, 16), ImageLayout::hwc(16, 16, 3)}) {
    try {
      (void)ds.epoch({}, convert<0>(four), augment<0>(layout, RandomFlip{}));
      ADD_FAILURE() << "accepted 4 channels on " << layout.describe();
    } catch (const InvalidArgument& error) {
      const std::string message = error.what();
      EXPECT_NE(message.find("4 channels"), std::string::npos) << message;
      EXPECT_NE(message.find(layout.describe() + ", of 3 channels"), std::string::npos) << message;
      EXPECT_NE(message.find("give one mean and std per channel"), std::string::npos) << message;
    }
  }
  // One scale and offset for every element fits any layout; a conversion of another field is
  // not the augmentation's business.
  EXPECT_NO_THROW(
      (void)ds.epoch({}, convert<0>(Normalize(2, 1)), augment<0>(ImageLayout::chw(3, 16, 16))));
  EXPECT_NO_THROW((void)ds.epoch({}, convert<0>(Normalize::mean_std({0.5f}, {0.5f}, 1)),
                                 augment<0>(ImageLayout::hwc(16, 16, 3))));
}

// A Normalize laid out for CHW rows on images declared HWC (and the reverse) normalizes every
// element with the channel the declared layout gives it.
TEST(Augment, NormalizeTakesItsChannelLayoutFromTheDeclaredImages) {
  constexpr std::size_t n = 6;
  const std::initializer_list<float> mean = {0.49f, 0.48f, 0.45f};
  const std::initializer_list<float> deviation = {0.25f, 0.24f, 0.26f};
  const ImageLayout hwc = ImageLayout::hwc(16, 16, 3);
  const ImageLayout chw = ImageLayout::chw(3, 16, 16);
  struct Case {
    ImageLayout declared;
    ImageLayout normalize_for;
  };
  for (const Case c : {Case{hwc, chw}, Case{chw, hwc}, Case{hwc, hwc}, Case{chw, chw}}) {
    const auto images = random_images(n, 768, 21);
    DeviceDataset<HostSpace, std::uint8_t> ds(
        HostSpace{}, batches_of(4),
        HostTensor<const std::uint8_t>(images.data(), image_shape(n, c.declared)));
    const auto given = Normalize::mean_std(mean, deviation, c.normalize_for, 1.0f / 255);
    const auto right = Normalize::mean_std(mean, deviation, c.declared, 1.0f / 255);
    auto epoch = ds.epoch({0, 0, Shuffle::none}, convert<0>(given), augment<0>(c.declared));
    std::size_t wrong = 0;
    for (std::size_t k = 0; k < epoch.size(); ++k) {
      const auto [x] = epoch.batch(k);
      for (std::size_t r = 0; r < x.valid_rows(); ++r)
        for (std::size_t e = 0; e < 768; ++e) {
          const std::size_t row = k * 4 + r;
          wrong += x.row(r)[e] == right(images[row * 768 + e], e) ? 0 : 1;
        }
    }
    EXPECT_EQ(wrong, 0u) << "Normalize for " << c.normalize_for.describe() << " on images "
                         << c.declared.describe();
  }
}

}  // namespace
