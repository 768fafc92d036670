// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// One sample's augmentation: the draws, keyed by (seed, epoch, row, op), and where each output
// element comes from. The host copies rows a line segment at a time (augment_row); the device
// maps each element (source_element); both follow the same draws and the same geometry, so the
// batches are bitwise equal.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "resident/augment.hpp"
#include "resident/config.hpp"
#include "resident/detail/philox.hpp"

namespace resident::detail {

/// What an epoch's augmentation draws are keyed by besides the row: the epoch's seed and
/// number, and the offset that turns a stored row into the row of the caller's whole data.
struct AugmentKey {
  std::uint64_t seed = 0;
  std::uint64_t epoch = 0;
  std::uint64_t first_row = 0;  ///< Row of the caller's data that stored row 0 is.
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
  // Epochs past 2^32 move the op word by 16 per wrap, past every op number.
  const auto op_word =
      static_cast<std::uint32_t>(op) + 16U * static_cast<std::uint32_t>(key.epoch >> 32);
  return philox4x32(
      PhiloxWords{{static_cast<std::uint32_t>(row), static_cast<std::uint32_t>(row >> 32),
                   static_cast<std::uint32_t>(key.epoch), op_word}},
      key.seed);
}

/// @brief The draws of stored row `row` (`key.first_row + row` of the caller's data).
RESIDENT_HOST_DEVICE constexpr SampleDraws draw_sample(const Augmentation& augmentation,
                                                       const AugmentKey& key,
                                                       std::uint64_t row) noexcept {
  const std::uint64_t global_row = key.first_row + row;
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

/// The element of the stored row that output element `element` holds after the crop and the
/// flip, or -1 where it holds a zero.
RESIDENT_HOST_DEVICE constexpr std::int64_t source_element(const Augmentation& augmentation,
                                                           const SampleDraws& draws,
                                                           std::size_t element) noexcept {
  const ImageLayout& image = augmentation.image;
  const auto height = static_cast<std::int64_t>(image.height);
  const auto width = static_cast<std::int64_t>(image.width);
  const auto channels = static_cast<std::int64_t>(image.channels);
  const auto e = static_cast<std::int64_t>(element);
  std::int64_t channel = 0;
  std::int64_t y = 0;
  std::int64_t x = 0;
  if (image.order == ImageLayout::Order::chw) {
    channel = e / (height * width);
    y = e / width % height;
    x = e % width;
  } else {
    channel = e % channels;
    y = e / (width * channels);
    x = e / channels % width;
  }
  const std::int64_t source_y = shifted_source(y + draws.shift_y, height, augmentation.crop.fill);
  const std::int64_t source_x = shifted_source((draws.flip ? width - 1 - x : x) + draws.shift_x,
                                               width, augmentation.crop.fill);
  if (source_y < 0 || source_x < 0) return -1;
  return image.order == ImageLayout::Order::chw
             ? (channel * height + source_y) * width + source_x
             : (source_y * width + source_x) * channels + channel;
}

/// Whether output element `element` lies in the cutout square.
RESIDENT_HOST_DEVICE constexpr bool cut_out(const ImageLayout& image, const SampleDraws& draws,
                                            std::size_t element) noexcept {
  if (draws.top == draws.bottom) return false;
  const auto e = static_cast<std::int64_t>(element);
  const auto height = static_cast<std::int64_t>(image.height);
  const auto width = static_cast<std::int64_t>(image.width);
  const auto channels = static_cast<std::int64_t>(image.channels);
  const std::int64_t y =
      image.order == ImageLayout::Order::chw ? e / width % height : e / (width * channels);
  const std::int64_t x = image.order == ImageLayout::Order::chw ? e % width : e / channels % width;
  return y >= draws.top && y < draws.bottom && x >= draws.left && x < draws.right;
}

/// @brief One image's crop and flip on the host, a line segment at a time: `to` gets `from`
/// shifted, mirrored and filled as `source_element` says, element for element.
template <class T>
void augment_image(const Augmentation& augmentation, const SampleDraws& draws, const T* from,
                   T* to) {
  const ImageLayout& image = augmentation.image;
  const bool planar = image.order == ImageLayout::Order::chw;
  const auto height = static_cast<std::int64_t>(image.height);
  const auto width = static_cast<std::int64_t>(image.width);
  // A plane is one channel (CHW) or the whole interleaved image (HWC); a pixel of a plane is
  // one element or C.
  const std::size_t planes = planar ? image.channels : 1;
  const std::size_t pixel = planar ? 1 : image.channels;
  const std::size_t line = image.width * pixel;
  const std::size_t plane = image.height * line;
  const Fill fill = augmentation.crop.fill;
  // Columns whose source is inside the frame: the rest (at most pad each side) go one by one.
  const std::int64_t inside_first =
      std::clamp<std::int64_t>(draws.flip ? draws.shift_x : -draws.shift_x, 0, width);
  const std::int64_t inside_last = std::clamp<std::int64_t>(
      draws.flip ? width + draws.shift_x : width - draws.shift_x, inside_first, width);
  const auto column_source = [&](std::int64_t x) {
    return shifted_source((draws.flip ? width - 1 - x : x) + draws.shift_x, width, fill);
  };
  const auto copy_pixel = [&](const T* from_line, T* to_pixel, std::int64_t source_x) {
    if (source_x < 0)
      std::fill_n(to_pixel, pixel, T{});
    else
      std::memcpy(to_pixel, from_line + static_cast<std::size_t>(source_x) * pixel,
                  pixel * sizeof(T));
  };
  for (std::size_t p = 0; p < planes; ++p) {
    for (std::int64_t y = 0; y < height; ++y) {
      T* to_line = to + p * plane + static_cast<std::size_t>(y) * line;
      const std::int64_t source_y = shifted_source(y + draws.shift_y, height, fill);
      if (source_y < 0) {
        std::fill_n(to_line, line, T{});
        continue;
      }
      const T* from_line = from + p * plane + static_cast<std::size_t>(source_y) * line;
      for (std::int64_t x = 0; x < inside_first; ++x)
        copy_pixel(from_line, to_line + static_cast<std::size_t>(x) * pixel, column_source(x));
      if (!draws.flip) {
        std::memcpy(to_line + static_cast<std::size_t>(inside_first) * pixel,
                    from_line + static_cast<std::size_t>(inside_first + draws.shift_x) * pixel,
                    static_cast<std::size_t>(inside_last - inside_first) * pixel * sizeof(T));
      } else if (pixel == 1) {
        const T* source = from_line + (width - 1 - inside_first + draws.shift_x);
        T* target = to_line + inside_first;
        const auto count = static_cast<std::size_t>(inside_last - inside_first);
        for (std::size_t i = 0; i < count; ++i) target[i] = *(source - i);
      } else {
        for (std::int64_t x = inside_first; x < inside_last; ++x)
          std::memcpy(to_line + static_cast<std::size_t>(x) * pixel,
                      from_line + static_cast<std::size_t>(width - 1 - x + draws.shift_x) * pixel,
                      pixel * sizeof(T));
      }
      for (std::int64_t x = inside_last; x < width; ++x)
        copy_pixel(from_line, to_line + static_cast<std::size_t>(x) * pixel, column_source(x));
    }
  }
}

/// @brief Zeros the cutout square of one image of the batch (after any conversion).
template <class T>
void cut_out_image(const ImageLayout& image, const SampleDraws& draws, T* to) {
  if (draws.top == draws.bottom || draws.left == draws.right) return;
  const bool planar = image.order == ImageLayout::Order::chw;
  const std::size_t planes = planar ? image.channels : 1;
  const std::size_t pixel = planar ? 1 : image.channels;
  const std::size_t line = image.width * pixel;
  const std::size_t plane = image.height * line;
  const auto columns = static_cast<std::size_t>(draws.right - draws.left) * pixel;
  for (std::size_t p = 0; p < planes; ++p)
    for (auto y = static_cast<std::size_t>(draws.top); y < static_cast<std::size_t>(draws.bottom);
         ++y)
      std::fill_n(to + p * plane + y * line + static_cast<std::size_t>(draws.left) * pixel, columns,
                  T{});
}

}  // namespace resident::detail
