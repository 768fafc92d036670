// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// One sample's augmentation: the draws, keyed by (seed, epoch, row, op), and where each output
// element comes from (source_element, cut_out). The device maps each element with them; the
// host copies whole lines (augment_row.hpp) and is tested against them, so the batches of both
// are bitwise equal.

#include <cstddef>
#include <cstdint>

#include "resident/augment.hpp"
#include "resident/config.hpp"
#include "resident/detail/dataset/part_interleave.hpp"
#include "resident/detail/philox.hpp"

namespace resident::detail {

/// What an epoch's augmentation draws are keyed by besides the row: the epoch's seed and
/// number, and the offset that turns a stored row into the row of the caller's whole data.
struct AugmentKey {
  std::uint64_t seed = 0;
  std::uint64_t epoch = 0;
  std::uint64_t first_row = 0;  ///< Row of the caller's data that stored row 0 is.
  /// Nonzero where stored row `r` is row `r % cycle` of the caller's data: a rank without rows
  /// of its own, whose padding repeats the caller's first rows (`first_row` is then 0).
  std::uint64_t cycle = 0;
  /// A mixture's: its data's rows to positions of its epoch, which key the draws (the identity
  /// for every other dataset).
  PartInterleave interleave{};
};

/// Op numbers in the generator's counter: each op has its own stream.
enum class AugmentOp : std::uint32_t { crop = 0, flip = 1, cutout = 2 };

/// One sample's draws: the shift, the flip and the cutout square (rows and columns
/// `[top, bottom) x [left, right)`, empty without a cutout).
struct SampleDraws {
  std::int64_t shift_y = 0;
  std::int64_t shift_x = 0;
  bool flip = false;
  std::int64_t top = 0;
  std::int64_t bottom = 0;
  std::int64_t left = 0;
  std::int64_t right = 0;
};

RESIDENT_HOST_DEVICE constexpr PhiloxWords augment_words(const AugmentKey& key, std::uint64_t row,
                                                         AugmentOp op) noexcept {
  // The counter holds the epoch's low 32 bits; its high bits move the key (by an odd
  // multiplier, so that no two of them give the same key for one seed).
  return philox4x32(
      PhiloxWords{{static_cast<std::uint32_t>(row), static_cast<std::uint32_t>(row >> 32),
                   static_cast<std::uint32_t>(key.epoch), static_cast<std::uint32_t>(op)}},
      key.seed ^ ((key.epoch >> 32) * 0x9E3779B97F4A7C15ULL));
}

/// @brief The draws of stored row `row` (`key.first_row + row` of the caller's data; of a
/// mixture, that row's position).
RESIDENT_HOST_DEVICE constexpr SampleDraws draw_sample(const Augmentation& augmentation,
                                                       const AugmentKey& key,
                                                       std::uint64_t row) noexcept {
  const std::uint64_t global_row =
      key.interleave.position(key.cycle != 0 ? row % key.cycle : key.first_row + row);
  SampleDraws draws;
  if (augmentation.crop.pad != 0) {
    const PhiloxWords words = augment_words(key, global_row, AugmentOp::crop);
    const auto offsets = static_cast<std::uint32_t>(2 * augmentation.crop.pad + 1);
    const auto pad = static_cast<std::int64_t>(augmentation.crop.pad);
    draws.shift_y = static_cast<std::int64_t>(below(words.word[0], offsets)) - pad;
    draws.shift_x = static_cast<std::int64_t>(below(words.word[1], offsets)) - pad;
  }
  if (augmentation.flip.p > 0.0) {
    const PhiloxWords words = augment_words(key, global_row, AugmentOp::flip);
    // p in [0, 1] as a threshold on 32 bits: exact in double, the same on every compiler.
    const auto threshold = static_cast<std::uint64_t>(augmentation.flip.p * 4294967296.0);
    draws.flip = words.word[0] < threshold;
  }
  if (augmentation.cutout.size != 0) {
    const PhiloxWords words = augment_words(key, global_row, AugmentOp::cutout);
    const auto height = static_cast<std::int64_t>(augmentation.image.height);
    const auto width = static_cast<std::int64_t>(augmentation.image.width);
    const auto size = static_cast<std::int64_t>(augmentation.cutout.size);
    const auto centre_y = static_cast<std::int64_t>(
        below(words.word[0], static_cast<std::uint32_t>(augmentation.image.height)));
    const auto centre_x = static_cast<std::int64_t>(
        below(words.word[1], static_cast<std::uint32_t>(augmentation.image.width)));
    // Clipped at the edges (no std::min/max: this runs on the device too).
    const std::int64_t top = centre_y - size / 2;
    const std::int64_t left = centre_x - size / 2;
    draws.top = top < 0 ? 0 : top;
    draws.bottom = top + size > height ? height : top + size;
    draws.left = left < 0 ? 0 : left;
    draws.right = left + size > width ? width : left + size;
  }
  return draws;
}

/// Where coordinate `at` of an extent `n` reads from after a shift: itself inside, its mirror
/// about the edge under `Fill::reflect` (a shift is below `n`, so one reflection suffices),
/// -1 (a zero) under `Fill::zeros`.
RESIDENT_HOST_DEVICE constexpr std::int64_t shifted_source(std::int64_t at, std::int64_t n,
                                                           Fill fill) noexcept {
  if (at >= 0 && at < n) return at;
  if (fill == Fill::zeros) return -1;
  return at < 0 ? -at : 2 * (n - 1) - at;
}

/// Channel, line and column of one element of an image.
struct PixelOf {
  std::int32_t channel = 0;
  std::int32_t y = 0;
  std::int32_t x = 0;
};

/// Where element `element` of an image lies. In 32 bits (`Augmentation::check` bounds images
/// below 2^31 elements): on the device, 64-bit division costs several times as much.
RESIDENT_HOST_DEVICE constexpr PixelOf pixel_of(const ImageLayout& image,
                                                std::size_t element) noexcept {
  const auto e = static_cast<std::uint32_t>(element);
  const auto height = static_cast<std::uint32_t>(image.height);
  const auto width = static_cast<std::uint32_t>(image.width);
  const auto channels = static_cast<std::uint32_t>(image.channels);
  if (image.order == ImageLayout::Order::chw) {
    const std::uint32_t line = e / width;
    return {static_cast<std::int32_t>(line / height), static_cast<std::int32_t>(line % height),
            static_cast<std::int32_t>(e - line * width)};
  }
  const std::uint32_t pixel = e / channels;
  const std::uint32_t y = pixel / width;
  return {static_cast<std::int32_t>(e - pixel * channels), static_cast<std::int32_t>(y),
          static_cast<std::int32_t>(pixel - y * width)};
}

/// The element of the stored row that output element `element` (in the output layout) holds
/// after the crop and the flip, or -1 where it holds a zero.
RESIDENT_HOST_DEVICE constexpr std::int64_t source_element(const Augmentation& augmentation,
                                                           const SampleDraws& draws,
                                                           std::size_t element) noexcept {
  const ImageLayout& image = augmentation.image;
  const auto height = static_cast<std::int64_t>(image.height);
  const auto width = static_cast<std::int64_t>(image.width);
  const auto channels = static_cast<std::int64_t>(image.channels);
  const PixelOf at = pixel_of(augmentation.output_image(), element);
  const std::int64_t source_y =
      shifted_source(at.y + draws.shift_y, height, augmentation.crop.fill);
  const std::int64_t source_x = shifted_source(
      (draws.flip ? width - 1 - at.x : at.x) + draws.shift_x, width, augmentation.crop.fill);
  if (source_y < 0 || source_x < 0) return -1;
  return image.order == ImageLayout::Order::chw
             ? (at.channel * height + source_y) * width + source_x
             : (source_y * width + source_x) * channels + at.channel;
}

/// Whether output element `element` lies in the cutout square (`image`: the output layout).
RESIDENT_HOST_DEVICE constexpr bool cut_out(const ImageLayout& image, const SampleDraws& draws,
                                            std::size_t element) noexcept {
  if (draws.top == draws.bottom) return false;
  const PixelOf at = pixel_of(image, element);
  return at.y >= draws.top && at.y < draws.bottom && at.x >= draws.left && at.x < draws.right;
}

}  // namespace resident::detail
