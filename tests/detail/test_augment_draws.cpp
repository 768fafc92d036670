// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// The augmentations' draws (detail/gather/augment_draws.hpp): flips at their probability within
// a binomial bound, crop offsets and cutout centres uniform by a chi-square test, and draws
// keyed by seed, epoch, row and op, each op drawing words of its own.
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "resident/augment.hpp"
#include "resident/detail/gather/augment_draws.hpp"

namespace {

using resident::augment;
using resident::Augmentation;
using resident::Cutout;
using resident::ImageLayout;
using resident::RandomCrop;
using resident::RandomFlip;
using resident::detail::AugmentKey;
using resident::detail::draw_sample;

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

}  // namespace
