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

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

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
  // The counter holds the epoch's low 32 bits; its high bits move the key (by an odd
  // multiplier, so that no two of them give the same key for one seed).
  return philox4x32(
      PhiloxWords{{static_cast<std::uint32_t>(row), static_cast<std::uint32_t>(row >> 32),
                   static_cast<std::uint32_t>(key.epoch), static_cast<std::uint32_t>(op)}},
      key.seed ^ ((key.epoch >> 32) * 0x9E3779B97F4A7C15ULL));
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

/// The element of the stored row that output element `element` holds after the crop and the
/// flip, or -1 where it holds a zero.
RESIDENT_HOST_DEVICE constexpr std::int64_t source_element(const Augmentation& augmentation,
                                                           const SampleDraws& draws,
                                                           std::size_t element) noexcept {
  const ImageLayout& image = augmentation.image;
  const auto height = static_cast<std::int64_t>(image.height);
  const auto width = static_cast<std::int64_t>(image.width);
  const auto channels = static_cast<std::int64_t>(image.channels);
  const PixelOf at = pixel_of(image, element);
  const std::int64_t source_y =
      shifted_source(at.y + draws.shift_y, height, augmentation.crop.fill);
  const std::int64_t source_x = shifted_source(
      (draws.flip ? width - 1 - at.x : at.x) + draws.shift_x, width, augmentation.crop.fill);
  if (source_y < 0 || source_x < 0) return -1;
  return image.order == ImageLayout::Order::chw
             ? (at.channel * height + source_y) * width + source_x
             : (source_y * width + source_x) * channels + at.channel;
}

/// Whether output element `element` lies in the cutout square.
RESIDENT_HOST_DEVICE constexpr bool cut_out(const ImageLayout& image, const SampleDraws& draws,
                                            std::size_t element) noexcept {
  if (draws.top == draws.bottom) return false;
  const PixelOf at = pixel_of(image, element);
  return at.y >= draws.top && at.y < draws.bottom && at.x >= draws.left && at.x < draws.right;
}

/// Copies a run of `bytes` (part of one line of an image: a few to hundreds of bytes) in
/// fixed-size moves, the last one overlapping the one before: a call to memcpy costs more than
/// the copy at these sizes, and its size dispatch would run on every line. (A plain byte loop
/// would be turned back into that call.)
inline void copy_run(std::byte* to, const std::byte* from, std::size_t bytes) noexcept {
  if (bytes >= 16) {
    std::size_t at = 0;
    for (; at + 16 <= bytes; at += 16) std::memcpy(to + at, from + at, 16);
    if (at != bytes) std::memcpy(to + bytes - 16, from + bytes - 16, 16);
  } else if (bytes >= 8) {
    std::memcpy(to, from, 8);
    std::memcpy(to + bytes - 8, from + bytes - 8, 8);
  } else if (bytes >= 4) {
    std::memcpy(to, from, 4);
    std::memcpy(to + bytes - 4, from + bytes - 4, 4);
  } else if (bytes != 0) {
    to[0] = from[0];
    to[bytes / 2] = from[bytes / 2];
    to[bytes - 1] = from[bytes - 1];
  }
}

/// Zeros a run of `bytes`, as `copy_run` copies one.
inline void zero_run(std::byte* to, std::size_t bytes) noexcept {
  if (bytes >= 16) {
    std::size_t at = 0;
    for (; at + 16 <= bytes; at += 16) std::memset(to + at, 0, 16);
    if (at != bytes) std::memset(to + bytes - 16, 0, 16);
  } else if (bytes >= 8) {
    std::memset(to, 0, 8);
    std::memset(to + bytes - 8, 0, 8);
  } else if (bytes >= 4) {
    std::memset(to, 0, 4);
    std::memset(to + bytes - 4, 0, 4);
  } else if (bytes != 0) {
    to[0] = std::byte{0};
    to[bytes / 2] = std::byte{0};
    to[bytes - 1] = std::byte{0};
  }
}

#if defined(__SSE2__)
/// The 16 bytes of `v` in reverse order (SSE2 has no byte shuffle: dwords, then words, then the
/// bytes of each word).
inline __m128i reverse_bytes(__m128i v) noexcept {
  v = _mm_shuffle_epi32(v, _MM_SHUFFLE(0, 1, 2, 3));
  v = _mm_shufflelo_epi16(v, _MM_SHUFFLE(2, 3, 0, 1));
  v = _mm_shufflehi_epi16(v, _MM_SHUFFLE(2, 3, 0, 1));
  return _mm_or_si128(_mm_slli_epi16(v, 8), _mm_srli_epi16(v, 8));
}
#endif

/// `to[i] = last[-i]` for `count` elements: a mirrored run of a line.
template <class T>
void copy_mirrored(T* to, const T* last, std::size_t count) noexcept {
#if defined(__SSE2__)
  if constexpr (sizeof(T) == 1) {
    if (count >= 16) {
      const auto block = [&](std::size_t at) {
        const __m128i v =
            _mm_loadu_si128(reinterpret_cast<const __m128i*>(last - at - 15));    // NOLINT
        _mm_storeu_si128(reinterpret_cast<__m128i*>(to + at), reverse_bytes(v));  // NOLINT
      };
      std::size_t at = 0;
      for (; at + 16 <= count; at += 16) block(at);
      if (at != count) block(count - 16);
      return;
    }
  }
#endif
  for (std::size_t i = 0; i < count; ++i) to[i] = *(last - i);
}

/// @brief Copies whole lines shifted by a column offset, zeroing the columns whose source is
/// outside the frame as it goes: each 16-byte move is ANDed with the mask of the columns it
/// covers. (Copying the run and then zeroing its border columns line by line costs several
/// times as much: the small border stores stall behind the wide ones.) The masks repeat every
/// `period` bytes, the least common multiple of 16 and the line's bytes; `period` is 0 where
/// that is not worth it (no SSE2, no zero border, a period past `max_period`).
struct ColumnMasks {
  static constexpr std::size_t max_period = 1024;
  std::size_t period = 0;
  // Filled up to `period` only (no zeroing of the rest on every image).
  alignas(16) std::uint8_t
      mask[max_period];  // NOLINT(modernize-avoid-c-arrays, cppcoreguidelines-pro-type-member-init)

  /// Lines of `line_bytes` (0: none), pixels of `pixel_bytes`, columns `[first, last)` kept.
  // cppcheck-suppress uninitMemberVar ; `mask` is written up to `period`, the bytes it reads.
  ColumnMasks(std::size_t line_bytes, std::size_t pixel_bytes, std::size_t first,
              std::size_t last) noexcept {
#if defined(__SSE2__)
    if (line_bytes == 0 || (first == 0 && last * pixel_bytes == line_bytes)) return;
    std::size_t divisor = 16;  // gcd(16, line_bytes)
    while (line_bytes % divisor != 0) divisor /= 2;
    const std::size_t least_common = 16 / divisor * line_bytes;
    if (least_common > max_period) return;
    period = least_common;
    for (std::size_t b = 0; b < period; ++b) {
      const std::size_t column = b % line_bytes / pixel_bytes;
      mask[b] = column >= first && column < last ? 0xFF : 0;
    }
#else
    (void)line_bytes, (void)pixel_bytes, (void)first, (void)last;
#endif
  }

  /// `to[b] = from[b] & mask[b % period]` for `bytes` bytes (`period != 0`).
  void copy(std::byte* to, const std::byte* from, std::size_t bytes) const noexcept {
#if defined(__SSE2__)
    std::size_t at = 0;
    std::size_t phase = 0;
    for (; at + 16 <= bytes; at += 16) {
      const __m128i value = _mm_loadu_si128(reinterpret_cast<const __m128i*>(from + at));  // NOLINT
      const __m128i keep =
          _mm_load_si128(reinterpret_cast<const __m128i*>(mask + phase));                 // NOLINT
      _mm_storeu_si128(reinterpret_cast<__m128i*>(to + at), _mm_and_si128(value, keep));  // NOLINT
      phase = phase + 16 == period ? 0 : phase + 16;
    }
    for (; at < bytes; ++at, ++phase) to[at] = from[at] & std::byte{mask[phase]};
#else
    (void)to, (void)from, (void)bytes;
#endif
  }
};

/// @brief One image's crop and flip on the host, a line at a time: `to` gets `from` shifted,
/// mirrored and filled as `source_element` says, element for element. The columns whose source
/// is inside the frame are one run per line, copied or mirrored straight from the stored line;
/// the at most `pad` columns on one side that are not are zeroed as one run, or reflected pixel
/// by pixel. (Staging the line in a padded buffer would cost a failed store-to-load forward on
/// every shifted read.)
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
  const std::int64_t shift = draws.shift_x;
  // Columns whose source is inside the frame; the others lie before or after them.
  const std::int64_t inside_first = std::clamp<std::int64_t>(draws.flip ? shift : -shift, 0, width);
  const std::int64_t inside_last =
      std::clamp<std::int64_t>(draws.flip ? width + shift : width - shift, inside_first, width);
  const auto columns = [&](std::int64_t first, std::int64_t last) {
    return static_cast<std::size_t>(last - first) * pixel;
  };
  const auto at = [&](std::int64_t x) { return static_cast<std::size_t>(x) * pixel; };
  const auto fill_border = [&](const T* from_line, T* to_line, std::int64_t first,
                               std::int64_t last) {
    if (fill == Fill::zeros) {
      zero_run(reinterpret_cast<std::byte*>(to_line + at(first)),  // NOLINT: bytes
               columns(first, last) * sizeof(T));
      return;
    }
    for (std::int64_t x = first; x < last; ++x) {
      const std::int64_t source_x =
          shifted_source((draws.flip ? width - 1 - x : x) + shift, width, fill);
      for (std::size_t c = 0; c < pixel; ++c) to_line[at(x) + c] = from_line[at(source_x) + c];
    }
  };
  // Line y of plane p, from the stored line its shift (or reflection) names.
  const auto augment_line = [&](std::size_t p, std::int64_t y) {
    T* to_line = to + p * plane + static_cast<std::size_t>(y) * line;
    const std::int64_t source_y = shifted_source(y + draws.shift_y, height, fill);
    if (source_y < 0) {
      zero_run(reinterpret_cast<std::byte*>(to_line), line * sizeof(T));  // NOLINT: bytes
      return;
    }
    const T* from_line = from + p * plane + static_cast<std::size_t>(source_y) * line;
    fill_border(from_line, to_line, 0, inside_first);
    if (inside_first == inside_last) {
      // No column's source is in the frame (a zero-filled shift of W or more): all border.
    } else if (!draws.flip) {
      copy_run(reinterpret_cast<std::byte*>(to_line + at(inside_first)),                  // NOLINT
               reinterpret_cast<const std::byte*>(from_line + at(inside_first + shift)),  // NOLINT
               columns(inside_first, inside_last) * sizeof(T));
    } else if (pixel == 1) {
      copy_mirrored(to_line + inside_first, from_line + (width - 1 - inside_first + shift),
                    static_cast<std::size_t>(inside_last - inside_first));
    } else {
      // Interleaved pixels keep their channel order: mirrored pixel by pixel.
      for (std::int64_t x = inside_first; x < inside_last; ++x)
        for (std::size_t c = 0; c < pixel; ++c)
          to_line[at(x) + c] = from_line[at(width - 1 - x + shift) + c];
    }
    fill_border(from_line, to_line, inside_last, width);
  };
  const ColumnMasks masks(
      fill == Fill::zeros && !draws.flip && inside_first < inside_last ? line * sizeof(T) : 0,
      pixel * sizeof(T), static_cast<std::size_t>(inside_first),
      static_cast<std::size_t>(inside_last));
  for (std::size_t p = 0; p < planes; ++p) {
    if (draws.flip || inside_first == inside_last) {
      for (std::int64_t y = 0; y < height; ++y) augment_line(p, y);
      continue;
    }
    // Unmirrored, the lines whose source is in the frame are one run of the stored plane
    // shifted by `shift_y` lines and `shift` pixels: one copy, whose wrapped border columns
    // are then filled line by line. Lines out of the frame go one by one.
    const std::int64_t first_line = std::clamp<std::int64_t>(-draws.shift_y, 0, height);
    const std::int64_t last_line =
        std::clamp<std::int64_t>(height - draws.shift_y, first_line, height);
    for (std::int64_t y = 0; y < first_line; ++y) augment_line(p, y);
    for (std::int64_t y = last_line; y < height; ++y) augment_line(p, y);
    if (first_line == last_line) continue;
    T* to_plane = to + p * plane;
    const T* from_plane = from + p * plane;
    if (masks.period != 0 && last_line - first_line > 2) {
      // The first and last lines exactly (a shifted run of them would read past the plane),
      // the lines between as one masked run.
      augment_line(p, first_line);
      augment_line(p, last_line - 1);
      const std::size_t middle = static_cast<std::size_t>(first_line + 1) * line;
      masks.copy(reinterpret_cast<std::byte*>(to_plane + middle),  // NOLINT: bytes
                 reinterpret_cast<const std::byte*>(               // NOLINT: bytes
                     from_plane + static_cast<std::ptrdiff_t>(middle) +
                     static_cast<std::ptrdiff_t>(draws.shift_y * static_cast<std::int64_t>(line)) +
                     static_cast<std::ptrdiff_t>(shift * static_cast<std::int64_t>(pixel))),
                 static_cast<std::size_t>(last_line - first_line - 2) * line * sizeof(T));
      continue;
    }
    const std::size_t begin = static_cast<std::size_t>(first_line) * line + at(inside_first);
    const std::size_t end = static_cast<std::size_t>(last_line - 1) * line + at(inside_last);
    const std::ptrdiff_t offset =
        static_cast<std::ptrdiff_t>(draws.shift_y * static_cast<std::int64_t>(line)) +
        static_cast<std::ptrdiff_t>(shift * static_cast<std::int64_t>(pixel));
    copy_run(reinterpret_cast<std::byte*>(to_plane + begin),  // NOLINT: bytes
             reinterpret_cast<const std::byte*>(              // NOLINT: bytes
                 from_plane + static_cast<std::ptrdiff_t>(begin) + offset),
             (end - begin) * sizeof(T));
    if (inside_first == 0 && inside_last == width) continue;
    for (std::int64_t y = first_line; y < last_line; ++y) {
      T* to_line = to_plane + static_cast<std::size_t>(y) * line;
      const T* from_line = from_plane + static_cast<std::size_t>(y + draws.shift_y) * line;
      fill_border(from_line, to_line, 0, inside_first);
      fill_border(from_line, to_line, inside_last, width);
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
      // Zero bytes are the zero of every element type a batch holds.
      zero_run(reinterpret_cast<std::byte*>(  // NOLINT: bytes
                   to + p * plane + y * line + static_cast<std::size_t>(draws.left) * pixel),
               columns * sizeof(T));
}

}  // namespace resident::detail
