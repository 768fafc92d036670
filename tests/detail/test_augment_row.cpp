// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// One row's augmentation (detail/gather/augment_row.hpp): the host's line runs and its 16-byte
// masked line copies (SSE2, and SSSE3 where the CPU has it) give the pixels of the device's
// element map, for every layout, pad, fill, element size and line width.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "resident/augment.hpp"
#include "resident/detail/gather/augment_row.hpp"
#include "support/augment_checks.hpp"

namespace {

using resident::augment;
using resident::Augmentation;
using resident::Cutout;
using resident::Fill;
using resident::ImageLayout;
using resident::RandomCrop;
using resident::RandomFlip;
using resident::detail::draw_sample;
using resident::testing::random_images;

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

// An image moved into the other element order (OutputLayout) holds each (c, y, x) where that
// order puts it: every count of channels (three bytes take the shuffled blocks of 16 pixels,
// and the pixels after them), image sizes below, at and past a block, and element sizes.
template <class T>
void check_relayout() {
  for (std::size_t channels = 1; channels <= 5; ++channels)
    for (const auto& [height, width] : std::vector<std::pair<std::size_t, std::size_t>>{
             {1, 1}, {1, 15}, {4, 4}, {3, 11}, {8, 8}, {7, 9}}) {
      for (const ImageLayout from :
           {ImageLayout::chw(channels, height, width), ImageLayout::hwc(height, width, channels)}) {
        const ImageLayout to{from.order == ImageLayout::Order::chw ? ImageLayout::Order::hwc
                                                                   : ImageLayout::Order::chw,
                             channels, height, width};
        std::vector<T> image(from.elements());
        for (std::size_t e = 0; e < image.size(); ++e) image[e] = static_cast<T>(e * 7 + 3);
        std::vector<T> moved(image.size(), T{});
        resident::detail::relayout_image(from, to.order, image.data(), moved.data());
        for (std::size_t c = 0; c < channels; ++c)
          for (std::size_t y = 0; y < height; ++y)
            for (std::size_t x = 0; x < width; ++x)
              ASSERT_EQ(moved[resident::testing::element_of(to, c, y, x)],
                        image[resident::testing::element_of(from, c, y, x)])
                  << from.describe() << " into " << to.describe() << " at " << c << "," << y << ","
                  << x << ", " << sizeof(T) << "-byte elements";
        std::vector<T> same(image.size(), T{});
        resident::detail::relayout_image(from, from.order, image.data(), same.data());
        ASSERT_EQ(same, image) << "the same order is a copy";
      }
    }
}

TEST(Relayout, EveryChannelCountSizeAndElementTypeLandsWhereTheOrderPutsIt) {
  check_relayout<std::uint8_t>();
  check_relayout<std::uint16_t>();
  check_relayout<float>();
  check_relayout<double>();
}

}  // namespace
