// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// Augmented epochs on the host: each op against a plain reference, the distributions of the
// draws, and the pixels of a row independent of how it is served.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "resident/detail/copy_workers.hpp"
#include "resident/detail/gather/augment_row.hpp"
#include "resident/detail/gather/host_gather.hpp"
#include "resident/detail/philox.hpp"
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
using resident::detail::AugmentKey;
using resident::detail::draw_sample;
using resident::detail::PhiloxWords;
using resident::testing::image_shape;
using resident::testing::random_images;

DatasetOptions batches_of(std::size_t batch, Remainder remainder = Remainder::partial) {
  DatasetOptions options;
  options.batch_size = batch;
  options.remainder = remainder;
  options.reserve_bytes = 0;
  return options;
}

// Random123's known-answer vectors for Philox4x32-10.
TEST(Philox, MatchesTheKnownAnswers) {
  struct Vector {
    PhiloxWords counter;
    std::uint64_t key;
    PhiloxWords expected;
  };
  const Vector vectors[] = {
      {{{0, 0, 0, 0}}, 0, {{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}}},
      {{{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}},
       0xffffffffffffffffULL,
       {{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}}},
      {{{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}},
       0x299f31d0a4093822ULL,
       {{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}}},
  };
  for (const Vector& vector : vectors) {
    const PhiloxWords got = resident::detail::philox4x32(vector.counter, vector.key);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(got.word[i], vector.expected.word[i]) << "word " << i;
  }
}

TEST(Augment, EveryOpMatchesTheReferenceAtEveryBatchSizeShuffleAndSharding) {
  resident::testing::check_augmentation_matches_reference(HostSpace{});
}

TEST(Augment, NormalizedAugmentedBatchesEqualTheReferenceBitForBit) {
  resident::testing::check_augmented_conversion(HostSpace{}, Shuffle::none);
  resident::testing::check_augmented_conversion(HostSpace{}, Shuffle::samples);
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

// The same batch through host_gather with 1, 2 and 3 copy threads (granules of one row).
TEST(Augment, ThreadCountDoesNotChangeThePixels) {
  const ImageLayout layout = ImageLayout::chw(3, 16, 16);
  constexpr std::size_t n = 300;
  const auto images = random_images(n, layout.elements(), 8);
  const Augmentation augmentation =
      augment<0>(layout, RandomCrop{4, Fill::reflect}, RandomFlip{}, Cutout{6}).augmentation;
  const resident::detail::RowOrder order{resident::Permutation(n, 3, 1), n, 0};
  const AugmentKey key{3, 1, 100};
  std::vector<std::vector<std::uint8_t>> results;
  for (const std::size_t threads : {1U, 2U, 3U}) {
    std::vector<std::uint8_t> batch(n * layout.elements());
    std::vector<std::int64_t> indices(n);
    resident::detail::CopyWorkers workers(threads);
    const resident::NoConversion none;
    resident::detail::host_gather(
        order, n, indices.data(), workers,
        resident::detail::GatherField{
            resident::detail::StoredRows<std::uint8_t>{images.data(), layout.elements()},
            batch.data(), layout.elements(), none, &augmentation, key});
    results.push_back(batch);
  }
  EXPECT_EQ(results[0], results[1]);
  EXPECT_EQ(results[0], results[2]);
}

// The device maps each output element to its source (`source_element`, `cut_out`); the host
// copies runs of lines. Both must give the same pixels: checked here, where no GPU is needed.
TEST(Augment, TheDevicesElementMapEqualsTheHostsLineRuns) {
  for (const ImageLayout layout :
       {ImageLayout::chw(3, 5, 7), ImageLayout::hwc(5, 7, 3), ImageLayout::chw(1, 1, 1),
        ImageLayout::hwc(1, 9, 2), ImageLayout::chw(2, 9, 1), ImageLayout::chw(1, 32, 32)}) {
    const auto images = random_images(50, layout.elements(), 13);
    for (const Augmentation& augmentation :
         {augment<0>(layout, RandomCrop{2}, RandomFlip{}, Cutout{3}).augmentation,
          augment<0>(layout, RandomCrop{11}, RandomFlip{0.7}, Cutout{1}).augmentation,
          augment<0>(layout, RandomFlip{}, Cutout{40}).augmentation,
          augment<0>(layout, RandomCrop{std::min(layout.height, layout.width) - 1, Fill::reflect},
                     RandomFlip{})
              .augmentation}) {
      for (std::uint64_t row = 0; row < 50; ++row) {
        const auto draws = draw_sample(augmentation, {3, 8, 0}, row);
        const std::uint8_t* from = images.data() + row * layout.elements();
        std::vector<std::uint8_t> runs(layout.elements());
        resident::detail::augment_image(augmentation, draws, from, runs.data());
        resident::detail::cut_out_image(layout, draws, runs.data());
        for (std::size_t e = 0; e < layout.elements(); ++e) {
          const std::int64_t source = resident::detail::source_element(augmentation, draws, e);
          const std::uint8_t expected = resident::detail::cut_out(layout, draws, e) || source < 0
                                            ? 0
                                            : from[static_cast<std::size_t>(source)];
          ASSERT_EQ(runs[e], expected) << layout.describe() << " row " << row << " element " << e;
        }
      }
    }
  }
}

// Output element `e` of `from` augmented by `draws`, by the device's element map.
template <class T>
T mapped_element(const Augmentation& augmentation, const resident::detail::SampleDraws& draws,
                 const std::vector<T>& from, std::size_t e) {
  const std::int64_t source = resident::detail::source_element(augmentation, draws, e);
  return source < 0 ? T{} : from[static_cast<std::size_t>(source)];
}

// The host's 16-byte masked line copies (SSE2, and SSSE3 where the CPU has it) against the
// element map, for elements of 1, 2, 4 and 8 bytes and lines of every block count: under 16
// bytes (copied exactly), 16 to 64 (unrolled), longer, and past the masks' room. Each image
// is an allocation of its own, so that a load past the row is an AddressSanitizer error.
template <class T>
void check_masked_lines(std::uint64_t seed) {
  std::vector<ImageLayout> layouts;
  for (const std::size_t line_bytes : {8U, 16U, 24U, 28U, 32U, 40U, 48U, 56U, 64U, 72U, 96U, 1104U})
    if (line_bytes % sizeof(T) == 0) {
      const std::size_t width = line_bytes / sizeof(T);
      layouts.push_back(ImageLayout::chw(2, 5, width));
      if (width % 3 == 0) layouts.push_back(ImageLayout::hwc(5, width / 3, 3));
    }
  std::mt19937_64 random(seed);
  for (const ImageLayout& layout : layouts) {
    for (const std::size_t pad :
         {std::size_t{1}, std::size_t{3}, layout.width / 2, layout.width + 1}) {
      for (const Fill fill : {Fill::zeros, Fill::reflect}) {
        if (fill == Fill::reflect && (pad >= layout.width || pad >= layout.height)) continue;
        const Augmentation augmentation =
            augment<0>(layout, RandomCrop{pad, fill}, RandomFlip{}).augmentation;
        for (std::uint64_t row = 0; row < 24; ++row) {
          std::vector<T> from(layout.elements());
          for (T& value : from) value = static_cast<T>(random() % 251 + 1);  // never 0
          const auto draws = draw_sample(augmentation, {seed, 2, 0}, row);
          for (const bool ssse3 : {false, true}) {
            std::vector<T> to(layout.elements(), T{});
            resident::detail::augment_image(augmentation, draws, from.data(), to.data(), ssse3);
            for (std::size_t e = 0; e < layout.elements(); ++e)
              ASSERT_EQ(to[e], mapped_element(augmentation, draws, from, e))
                  << sizeof(T) << "-byte elements, " << layout.describe() << ", pad " << pad
                  << (fill == Fill::zeros ? " zeros" : " reflect") << ", shift " << draws.shift_y
                  << "," << draws.shift_x << (draws.flip ? " flipped" : "")
                  << (ssse3 ? ", SSSE3" : ", SSE2") << ", element " << e;
          }
        }
      }
    }
  }
}

TEST(Augment, MaskedLineCopiesEqualTheElementMapForEveryElementSizeAndLineWidth) {
  check_masked_lines<std::uint8_t>(1);
  check_masked_lines<std::uint16_t>(2);
  check_masked_lines<float>(3);
  check_masked_lines<double>(4);
}

TEST(AugmentDraws, FlipFrequencyIsWithinABinomialBound) {
  constexpr std::size_t samples = 100000;
  for (const double p : {0.5, 0.25}) {
    Augmentation augmentation = augment<0>(ImageLayout::chw(1, 8, 8), RandomFlip{p}).augmentation;
    std::size_t flips = 0;
    for (std::uint64_t row = 0; row < samples; ++row)
      flips += draw_sample(augmentation, {17, 3, 0}, row).flip ? 1 : 0;
    const double mean = p * samples;
    const double deviation = std::sqrt(samples * p * (1 - p));
    // Five standard deviations: a fair coin fails it once in about 3.5 million seeds.
    EXPECT_LT(std::abs(static_cast<double>(flips) - mean), 5 * deviation)
        << flips << " flips of " << samples << " at p = " << p;
  }
  const Augmentation never = augment<0>(ImageLayout::chw(1, 8, 8), RandomFlip{0.0}).augmentation;
  const Augmentation always = augment<0>(ImageLayout::chw(1, 8, 8), RandomFlip{1.0}).augmentation;
  for (std::uint64_t row = 0; row < 1000; ++row) {
    EXPECT_FALSE(draw_sample(never, {1, 1, 0}, row).flip);
    EXPECT_TRUE(draw_sample(always, {1, 1, 0}, row).flip);
  }
}

// Pearson's statistic of `counts` against a uniform distribution.
double chi_square(const std::vector<std::size_t>& counts, std::size_t samples) {
  const double expected = static_cast<double>(samples) / static_cast<double>(counts.size());
  double statistic = 0;
  for (const std::size_t count : counts)
    statistic += (static_cast<double>(count) - expected) * (static_cast<double>(count) - expected) /
                 expected;
  return statistic;
}

TEST(AugmentDraws, CropOffsetsAreUniformByChiSquare) {
  constexpr std::size_t samples = 100000;
  constexpr std::size_t pad = 4;
  constexpr std::size_t offsets = 2 * pad + 1;
  const Augmentation augmentation =
      augment<0>(ImageLayout::chw(3, 32, 32), RandomCrop{pad}).augmentation;
  std::vector<std::size_t> joint(offsets * offsets);
  for (std::uint64_t row = 0; row < samples; ++row) {
    const auto draws = draw_sample(augmentation, {2026, 7, 0}, row);
    ASSERT_LE(std::abs(draws.shift_y), static_cast<std::int64_t>(pad));
    ASSERT_LE(std::abs(draws.shift_x), static_cast<std::int64_t>(pad));
    ++joint[static_cast<std::size_t>(draws.shift_y + pad) * offsets +
            static_cast<std::size_t>(draws.shift_x + pad)];
  }
  // 80 degrees of freedom: the 0.999 quantile is 124.84.
  EXPECT_LT(chi_square(joint, samples), 124.84);
}

TEST(AugmentDraws, CutoutCentresAreUniformByChiSquare) {
  constexpr std::size_t samples = 100000;
  const Augmentation augmentation = augment<0>(ImageLayout::hwc(6, 10, 3), Cutout{1}).augmentation;
  std::vector<std::size_t> centres(60);
  for (std::uint64_t row = 0; row < samples; ++row) {
    const auto draws = draw_sample(augmentation, {5, 0, 0}, row);
    ASSERT_EQ(draws.bottom - draws.top, 1);
    ASSERT_EQ(draws.right - draws.left, 1);
    ++centres[static_cast<std::size_t>(draws.top * 10 + draws.left)];
  }
  // 59 degrees of freedom: the 0.999 quantile is 98.32.
  EXPECT_LT(chi_square(centres, samples), 98.32);
}

TEST(AugmentDraws, KeyedBySeedEpochRowAndOp) {
  const Augmentation augmentation =
      augment<0>(ImageLayout::chw(1, 32, 32), RandomCrop{8}, RandomFlip{}, Cutout{4}).augmentation;
  const auto same = [&](const AugmentKey& a, std::uint64_t row_a, const AugmentKey& b,
                        std::uint64_t row_b) {
    std::size_t equal = 0;
    for (std::uint64_t r = 0; r < 1000; ++r) {
      const auto x = draw_sample(augmentation, a, row_a + r);
      const auto y = draw_sample(augmentation, b, row_b + r);
      equal += x.shift_y == y.shift_y && x.shift_x == y.shift_x && x.flip == y.flip &&
                       x.top == y.top && x.left == y.left
                   ? 1
                   : 0;
    }
    return equal;
  };
  EXPECT_EQ(same({1, 2, 0}, 0, {1, 2, 0}, 0), 1000u);
  // The stored row plus the key's first row is what counts (a rank's part of the data).
  EXPECT_EQ(same({1, 2, 100}, 0, {1, 2, 0}, 100), 1000u);
  EXPECT_LT(same({1, 2, 0}, 0, {1, 3, 0}, 0), 5u);
  EXPECT_LT(same({1, 2, 0}, 0, {9, 2, 0}, 0), 5u);
  EXPECT_LT(same({1, 2, 0}, 0, {1, 2, 0}, 1), 5u);
  EXPECT_LT(same({1, 2, 0}, 0, {1, 2 + (std::uint64_t{1} << 32), 0}, 0), 5u);
  // Each op draws its own words: crop and cutout are not the same numbers rescaled.
  std::size_t tied = 0;
  for (std::uint64_t r = 0; r < 1000; ++r) {
    const auto draws = draw_sample(augmentation, {1, 2, 0}, r);
    tied += draws.shift_y + 8 == (draws.top + 2) * 17 / 32 ? 1 : 0;
  }
  EXPECT_LT(tied, 200u);
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
