// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// One sample's crop and flip on the host, a whole line at a time, and its cutout: the element
// map of augment_draws.hpp, which the device follows element by element, done as copies.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__SSE2__) && defined(__GNUC__) && defined(__x86_64__)
#include <tmmintrin.h>
#endif

#include "resident/augment.hpp"
#include "resident/detail/gather/augment_draws.hpp"

namespace resident::detail {

/// Covers a run of `bytes` (part of one line of an image: a few to hundreds of bytes) with
/// `move(at, size)` calls of a fixed `size` (a `std::integral_constant` of 16, 8, 4 or 1), the
/// last one overlapping the one before: a call to memcpy or memset costs more than the move at
/// these sizes, and its size dispatch would run on every line. (A plain byte loop would be
/// turned back into that call.)
template <class Move>
void in_fixed_moves(std::size_t bytes, Move&& move) noexcept {
  using Sixteen = std::integral_constant<std::size_t, 16>;
  if (bytes >= 16) {
    std::size_t at = 0;
    for (; at + 16 <= bytes; at += 16) move(at, Sixteen{});
    if (at != bytes) move(bytes - 16, Sixteen{});
  } else if (bytes >= 8) {
    move(0, std::integral_constant<std::size_t, 8>{});
    move(bytes - 8, std::integral_constant<std::size_t, 8>{});
  } else if (bytes >= 4) {
    move(0, std::integral_constant<std::size_t, 4>{});
    move(bytes - 4, std::integral_constant<std::size_t, 4>{});
  } else if (bytes != 0) {
    move(0, std::integral_constant<std::size_t, 1>{});
    move(bytes / 2, std::integral_constant<std::size_t, 1>{});
    move(bytes - 1, std::integral_constant<std::size_t, 1>{});
  }
}

/// Copies a run of `bytes` in fixed-size moves (see `in_fixed_moves`).
inline void copy_run(std::byte* to, const std::byte* from, std::size_t bytes) noexcept {
  in_fixed_moves(bytes, [&](std::size_t at, auto size) { std::memcpy(to + at, from + at, size); });
}

/// Zeros a run of `bytes` in fixed-size moves (see `in_fixed_moves`).
inline void zero_run(std::byte* to, std::size_t bytes) noexcept {
  in_fixed_moves(bytes, [&](std::size_t at, auto size) { std::memset(to + at, 0, size); });
}

#if defined(__SSE2__)
/// The elements of `Bytes` bytes in `v` in reverse order (SSE2 has no byte shuffle: dwords,
/// then words, then the bytes of each word, as far as the element size needs).
template <std::size_t Bytes>
__m128i reverse_elements(__m128i v) noexcept {
  static_assert(Bytes == 1 || Bytes == 2 || Bytes == 4 || Bytes == 8);
  if constexpr (Bytes == 8) return _mm_shuffle_epi32(v, _MM_SHUFFLE(1, 0, 3, 2));
  v = _mm_shuffle_epi32(v, _MM_SHUFFLE(0, 1, 2, 3));
  if constexpr (Bytes == 4) return v;
  v = _mm_shufflelo_epi16(v, _MM_SHUFFLE(2, 3, 0, 1));
  v = _mm_shufflehi_epi16(v, _MM_SHUFFLE(2, 3, 0, 1));
  if constexpr (Bytes == 2) return v;
  return _mm_or_si128(_mm_slli_epi16(v, 8), _mm_srli_epi16(v, 8));
}

/// Whether 16 bytes hold a whole number of elements of `Bytes` that `reverse_elements` reverses.
constexpr bool reversible(std::size_t bytes) noexcept {
  return bytes == 1 || bytes == 2 || bytes == 4 || bytes == 8;
}
#endif

#if defined(__SSE2__) && defined(__GNUC__) && defined(__x86_64__)
/// Whether this CPU has SSSE3's byte shuffle, which reverses 16 bytes in one instruction where
/// SSE2 takes six (every x86-64 CPU since about 2008 has it; the build targets plain x86-64).
inline bool cpu_has_ssse3() noexcept {
  static const bool has = __builtin_cpu_supports("ssse3") != 0;
  return has;
}

/// `count` mirrored lines of `bytes` (`Blocks` blocks of 16, the last ending at the line's end)
/// under the masks at `mask`, elements of `Bytes`, as `MaskedLines` does them but with SSSE3's
/// byte shuffle. (No lambdas: they would not inherit the target.)
template <std::size_t Bytes, std::size_t Blocks>
__attribute__((target("ssse3"))) void mirrored_lines_ssse3(std::byte* to, const std::byte* from,
                                                           const std::uint8_t* mask,
                                                           std::size_t bytes,
                                                           std::size_t count) noexcept {
  alignas(16) std::uint8_t order_bytes[16];  // NOLINT(modernize-avoid-c-arrays)
  for (std::size_t b = 0; b < 16; ++b)
    order_bytes[b] = static_cast<std::uint8_t>(16 - Bytes - b / Bytes * Bytes + b % Bytes);
  const __m128i order = _mm_load_si128(reinterpret_cast<const __m128i*>(order_bytes));  // NOLINT
  std::size_t at[Blocks];  // NOLINT(modernize-avoid-c-arrays)
  __m128i keep[Blocks];    // NOLINT(modernize-avoid-c-arrays)
  for (std::size_t k = 0; k < Blocks; ++k) {
    at[k] = k + 1 < Blocks ? 16 * k : bytes - 16;
    keep[k] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(mask + at[k]));  // NOLINT
  }
  for (std::size_t l = 0; l < count; ++l, to += bytes, from += bytes) {
    for (std::size_t k = 0; k < Blocks; ++k) {
      const __m128i value =
          _mm_loadu_si128(reinterpret_cast<const __m128i*>(from + (bytes - at[k] - 16)));  // NOLINT
      _mm_storeu_si128(reinterpret_cast<__m128i*>(to + at[k]),                             // NOLINT
                       _mm_and_si128(_mm_shuffle_epi8(value, order), keep[k]));
    }
  }
}
#endif

/// `to[i] = last[-i]` for `count` elements: a mirrored run of a line.
template <class T>
void copy_mirrored(T* to, const T* last, std::size_t count) noexcept {
#if defined(__SSE2__)
  if constexpr (reversible(sizeof(T))) {
    constexpr std::size_t block = 16 / sizeof(T);
    if (count >= block) {
      const auto mirror = [&](std::size_t at) {
        const __m128i v =
            _mm_loadu_si128(reinterpret_cast<const __m128i*>(last - at - (block - 1)));  // NOLINT
        _mm_storeu_si128(reinterpret_cast<__m128i*>(to + at),                            // NOLINT
                         reverse_elements<sizeof(T)>(v));
      };
      std::size_t at = 0;
      for (; at + block <= count; at += block) mirror(at);
      if (at != count) mirror(count - block);
      return;
    }
  }
#endif
  for (std::size_t i = 0; i < count; ++i) to[i] = *(last - i);
}

/// @brief The crop and flip of one image's lines under `Fill::zeros` as 16-byte moves: each
/// block of an output line is one unaligned load of the stored line at the shift (reversed
/// when mirrored) ANDed with the mask of the columns whose source is in the frame, so a line
/// costs a few instructions per 16 bytes and no branch per border. A load reaches up to the
/// shift's bytes before or after the stored line, into its neighbours, whose bytes the mask
/// drops; `reads_within` tells the lines where that would leave the row (at most the first and
/// the last), which go the exact way. `usable` is false where this does not apply: no SSE2,
/// `Fill::reflect`, lines shorter than 16 bytes or longer than `max_line_bytes`, interleaved
/// pixels mirrored (their channels keep their order), no column in the frame.
/// (Measured on CIFAR images in cache, one core: runs and border fills per line took 0.57 µs
/// an image unmirrored and 1.48 µs mirrored; these copies take about 0.3 µs either way.)
template <class T>
class MaskedLines {
 public:
  static constexpr std::size_t max_line_bytes = 1024;  ///< The mask's room.

  /// Lines of `line_bytes`, pixels of `pixel` elements, the output's columns
  /// `[inside_first, inside_last)` read from the frame, `shift` columns and `flip` as drawn.
  /// `allow_ssse3`: false keeps to SSE2 (the tests run both ways).
  // cppcheck-suppress uninitMemberVar ; `mask_` is written up to `line_bytes_`, all it reads.
  MaskedLines(std::size_t line_bytes, std::size_t pixel, std::int64_t inside_first,
              std::int64_t inside_last, std::int64_t shift, bool flip, Fill fill,
              bool allow_ssse3) noexcept {
#if defined(__SSE2__)
    if constexpr (reversible(sizeof(T))) {
      if (fill != Fill::zeros || line_bytes < 16 || line_bytes > max_line_bytes ||
          inside_first == inside_last || (flip && pixel != 1))
        return;
      const std::size_t pixel_bytes = pixel * sizeof(T);
      const auto first = static_cast<std::size_t>(inside_first) * pixel_bytes;
      const auto last = static_cast<std::size_t>(inside_last) * pixel_bytes;
      std::memset(mask_, 0, first);
      std::memset(mask_ + first, 0xFF, last - first);
      std::memset(mask_ + last, 0, line_bytes - last);
      line_bytes_ = line_bytes;
      flip_ = flip;
      shift_bytes_ = static_cast<std::ptrdiff_t>(shift) * static_cast<std::ptrdiff_t>(pixel_bytes);
#if defined(__GNUC__) && defined(__x86_64__)
      ssse3_ = allow_ssse3 && cpu_has_ssse3();
#endif
    }
#else
    (void)line_bytes, (void)pixel, (void)inside_first, (void)inside_last, (void)shift, (void)flip,
        (void)fill, (void)allow_ssse3;
#endif
  }

  [[nodiscard]] bool usable() const noexcept { return line_bytes_ != 0; }

  /// Whether the loads of the line at `line`, which reach the shift's bytes past either end of
  /// it, stay inside the row `[row, row_end)`.
  [[nodiscard]] bool reads_within(const std::byte* line, const std::byte* row,
                                  const std::byte* row_end) const noexcept {
    const std::ptrdiff_t reach = shift_bytes_ < 0 ? -shift_bytes_ : shift_bytes_;
    return line - row >= reach &&
           row_end - line >= static_cast<std::ptrdiff_t>(line_bytes_) + reach;
  }

  /// Writes `count` consecutive output lines from `to` on from as many stored lines from
  /// `from` on (`usable()`, and `reads_within` for the first and the last).
  void lines(std::byte* to, const std::byte* from, std::size_t count) const noexcept {
    if (flip_)
      lines_of<true>(to, from + shift_bytes_, count);
    else
      lines_of<false>(to, from + shift_bytes_, count);
  }

 private:
  /// Lines of up to four blocks (16 to 64 bytes: MNIST's 28, CIFAR's 32) with the block count
  /// known to the compiler, which unrolls them: the loop over blocks would cost more than the
  /// blocks.
  template <bool Flip>
  void lines_of(std::byte* to, const std::byte* from, std::size_t count) const noexcept {
    switch ((line_bytes_ + 15) / 16) {
      case 1:
        return lines_of<Flip, 1>(to, from, count);
      case 2:
        return lines_of<Flip, 2>(to, from, count);
      case 3:
        return lines_of<Flip, 3>(to, from, count);
      case 4:
        return lines_of<Flip, 4>(to, from, count);
      default:
        return masked_copy<Flip, 0>(to, from, mask_, line_bytes_, count);
    }
  }

  template <bool Flip, std::size_t Blocks>
  void lines_of(std::byte* to, const std::byte* from, std::size_t count) const noexcept {
#if defined(__SSE2__) && defined(__GNUC__) && defined(__x86_64__)
    if constexpr (Flip && reversible(sizeof(T))) {
      if (ssse3_)
        return mirrored_lines_ssse3<sizeof(T), Blocks>(to, from, mask_, line_bytes_, count);
    }
#endif
    masked_copy<Flip, Blocks>(to, from, mask_, line_bytes_, count);
  }

  /// The lines' blocks (`Blocks` a line, 0: any), from arguments rather than members: a store
  /// through `std::byte*` may alias any member, which would reload them all after every block.
  template <bool Flip, std::size_t Blocks>
  static void masked_copy(std::byte* to, const std::byte* from, const std::uint8_t* mask,
                          std::size_t bytes, std::size_t count) noexcept {
#if defined(__SSE2__)
    if constexpr (reversible(sizeof(T))) {
      const auto block = [&](std::size_t at, __m128i keep) {
        // Mirrored, output bytes [at, at + 16) are the stored bytes [L - at - 16, L - at),
        // reversed element by element.
        const std::byte* source = Flip ? from + (bytes - at - 16) : from + at;
        __m128i value = _mm_loadu_si128(reinterpret_cast<const __m128i*>(source));  // NOLINT
        if constexpr (Flip) value = reverse_elements<sizeof(T)>(value);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(to + at),  // NOLINT
                         _mm_and_si128(value, keep));
      };
      const auto mask_at = [&](std::size_t at) {
        return _mm_loadu_si128(reinterpret_cast<const __m128i*>(mask + at));  // NOLINT
      };
      // The last block ends at the line's end, overlapping the one before where 16 does not
      // divide the line.
      if constexpr (Blocks == 0) {
        for (std::size_t l = 0; l < count; ++l, to += bytes, from += bytes) {
          std::size_t at = 0;
          for (; at + 16 < bytes; at += 16) block(at, mask_at(at));
          block(bytes - 16, mask_at(bytes - 16));
        }
      } else {
        // The masks stay in registers across the lines.
        __m128i keep[Blocks];  // NOLINT(modernize-avoid-c-arrays)
        for (std::size_t k = 0; k + 1 < Blocks; ++k) keep[k] = mask_at(16 * k);
        keep[Blocks - 1] = mask_at(bytes - 16);
        for (std::size_t l = 0; l < count; ++l, to += bytes, from += bytes) {
          for (std::size_t k = 0; k + 1 < Blocks; ++k) block(16 * k, keep[k]);
          block(bytes - 16, keep[Blocks - 1]);
        }
      }
    }
#else
    (void)to, (void)from, (void)mask, (void)bytes, (void)count;
#endif
  }

  std::size_t line_bytes_ = 0;  // 0: not usable
  bool flip_ = false;
  std::ptrdiff_t shift_bytes_ = 0;
  bool ssse3_ = false;
  alignas(16) std::uint8_t mask_[max_line_bytes];  // NOLINT(modernize-avoid-c-arrays)
};

/// @brief An image's rows as planes of lines: a plane is one channel (CHW) or the whole
/// interleaved image (HWC), a pixel of a plane one element or C; figures in elements.
struct ImagePlanes {
  std::size_t planes;  ///< C (CHW) or 1 (HWC).
  std::size_t pixel;   ///< Elements of a pixel of a plane: 1 (CHW) or C (HWC).
  std::size_t line;    ///< Elements of a line of a plane.
  std::size_t plane;   ///< Elements of a plane.
  explicit ImagePlanes(const ImageLayout& image) noexcept
      : planes(image.order == ImageLayout::Order::chw ? image.channels : 1),
        pixel(image.order == ImageLayout::Order::chw ? 1 : image.channels),
        line(image.width * pixel),
        plane(image.height * line) {}
};

/// @brief One image's crop and flip on the host, a line at a time: `to` gets `from` shifted,
/// mirrored and filled as `source_element` says, element for element. Lines go through
/// `MaskedLines` where it applies; otherwise (and at the row's edges) the columns whose source
/// is inside the frame are one run per line, copied or mirrored straight from the stored line,
/// and the at most `pad` columns on one side that are not are zeroed as one run, or reflected
/// pixel by pixel.
/// `allow_ssse3`: false keeps to SSE2 (the tests run both ways).
template <class T>
void augment_image(const Augmentation& augmentation, const SampleDraws& draws, const T* from, T* to,
                   bool allow_ssse3 = true) {
  const ImageLayout& image = augmentation.image;
  const auto height = static_cast<std::int64_t>(image.height);
  const auto width = static_cast<std::int64_t>(image.width);
  const ImagePlanes planes_of(image);
  const std::size_t planes = planes_of.planes;
  const std::size_t pixel = planes_of.pixel;
  const std::size_t line = planes_of.line;
  const std::size_t plane = planes_of.plane;
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
  // The exact way: the run in the frame, then the borders.
  const auto exact_line = [&](const T* from_line, T* to_line) {
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
  const MaskedLines<T> masked(line * sizeof(T), pixel, inside_first, inside_last, shift, draws.flip,
                              fill, allow_ssse3);
  const auto* row_begin = reinterpret_cast<const std::byte*>(from);  // NOLINT: bytes
  const std::byte* row_end = row_begin + planes * plane * sizeof(T);
  const auto line_of = [&](auto* base, std::size_t p, std::int64_t y) {
    return base + p * plane + static_cast<std::size_t>(y) * line;
  };
  const auto exact = [&](std::size_t p, std::int64_t y) {
    T* to_line = line_of(to, p, y);
    const std::int64_t source_y = shifted_source(y + draws.shift_y, height, fill);
    if (source_y < 0)
      zero_run(reinterpret_cast<std::byte*>(to_line), line * sizeof(T));  // NOLINT: bytes
    else
      exact_line(line_of(from, p, source_y), to_line);
  };
  // Lines whose source line is in the frame: `[first_line, last_line)`, reading line
  // `y + shift_y`.
  const std::int64_t first_line = std::clamp<std::int64_t>(-draws.shift_y, 0, height);
  const std::int64_t last_line =
      std::clamp<std::int64_t>(height - draws.shift_y, first_line, height);
  for (std::size_t p = 0; p < planes; ++p) {
    if (!masked.usable()) {
      for (std::int64_t y = 0; y < height; ++y) exact(p, y);
      continue;
    }
    for (std::int64_t y = 0; y < first_line; ++y) exact(p, y);
    for (std::int64_t y = last_line; y < height; ++y) exact(p, y);
    std::int64_t begin = first_line;
    std::int64_t end = last_line;
    const auto within = [&](std::int64_t y) {
      return masked.reads_within(
          reinterpret_cast<const std::byte*>(line_of(from, p, y + draws.shift_y)),  // NOLINT
          row_begin, row_end);
    };
    if (begin != end && !within(begin)) exact(p, begin++);
    if (begin != end && !within(end - 1)) exact(p, --end);
    if (begin != end)
      masked.lines(
          reinterpret_cast<std::byte*>(line_of(to, p, begin)),                          // NOLINT
          reinterpret_cast<const std::byte*>(line_of(from, p, begin + draws.shift_y)),  // NOLINT
          static_cast<std::size_t>(end - begin));
  }
}

/// `to[c][p] = from[p][c]` for `pixels` pixels of `Channels` channels: interleaved pixels into
/// channel planes. The channels a compile-time count, so that the compiler vectorises the
/// interleaved loads (a loop over a run-time count does not).
template <std::size_t Channels, class T>
void planes_of_pixels(const T* from, T* to, std::size_t pixels) noexcept {
  for (std::size_t c = 0; c < Channels; ++c) {
    T* plane = to + c * pixels;
    for (std::size_t p = 0; p < pixels; ++p) plane[p] = from[p * Channels + c];
  }
}

/// `to[p][c] = from[c][p]`: channel planes into interleaved pixels.
template <std::size_t Channels, class T>
void pixels_of_planes(const T* from, T* to, std::size_t pixels) noexcept {
  for (std::size_t p = 0; p < pixels; ++p)
    for (std::size_t c = 0; c < Channels; ++c) to[p * Channels + c] = from[c * pixels + p];
}

#if defined(__SSE2__) && defined(__GNUC__) && defined(__x86_64__)
/// The byte shuffles of three interleaved channels: `planes[c][b]` takes channel `c`'s bytes of
/// 16 pixels out of the `b`th of their 3 blocks of 16 bytes; `pixels[b][c]` puts channel `c`'s
/// bytes of 16 pixels into the `b`th block of their interleaved bytes (0x80: a zero byte).
struct ThreeChannelShuffles {
  std::uint8_t planes[3][3][16];  // NOLINT(modernize-avoid-c-arrays)
  std::uint8_t pixels[3][3][16];  // NOLINT(modernize-avoid-c-arrays)
};
constexpr ThreeChannelShuffles three_channel_shuffles() noexcept {
  ThreeChannelShuffles masks{};
  for (std::size_t c = 0; c < 3; ++c)
    for (std::size_t b = 0; b < 3; ++b)
      for (std::size_t i = 0; i < 16; ++i) {
        const std::size_t from = 3 * i + c;  // pixel i's channel c among the 48 bytes
        masks.planes[c][b][i] = static_cast<std::uint8_t>(from / 16 == b ? from % 16 : 0x80);
        const std::size_t at = 16 * b + i;  // interleaved byte: pixel at / 3, channel at % 3
        masks.pixels[b][c][i] = static_cast<std::uint8_t>(at % 3 == c ? at / 3 : 0x80);
      }
  return masks;
}
inline constexpr ThreeChannelShuffles three_channel = three_channel_shuffles();

/// Bytes of three channels, 16 pixels at a time, between interleaved pixels and planes
/// (`to_planes`) with SSSE3's byte shuffle: nine shuffles a block where the compiler's loop
/// moves a byte at a time. Returns the pixels done (a multiple of 16).
__attribute__((target("ssse3"))) inline std::size_t three_channels_ssse3(const std::uint8_t* from,
                                                                         std::uint8_t* to,
                                                                         std::size_t pixels,
                                                                         bool to_planes) noexcept {
  const auto load = [](const std::uint8_t* at) {
    return _mm_loadu_si128(reinterpret_cast<const __m128i*>(at));  // NOLINT: unaligned bytes
  };
  const auto store = [](std::uint8_t* at, __m128i value) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(at), value);  // NOLINT: unaligned bytes
  };
  const std::uint8_t(&masks)[3][3][16] = to_planes ? three_channel.planes : three_channel.pixels;
  __m128i shuffle[3][3];  // NOLINT(modernize-avoid-c-arrays)
  for (std::size_t a = 0; a < 3; ++a)
    for (std::size_t b = 0; b < 3; ++b) shuffle[a][b] = load(masks[a][b]);
  std::size_t p = 0;
  for (; p + 16 <= pixels; p += 16) {
    // In: three blocks (interleaved) or three planes' blocks; out: the other.
    const __m128i in[3] = {// NOLINT(modernize-avoid-c-arrays)
                           load(to_planes ? from + 3 * p : from + p),
                           load(to_planes ? from + 3 * p + 16 : from + pixels + p),
                           load(to_planes ? from + 3 * p + 32 : from + 2 * pixels + p)};
    for (std::size_t a = 0; a < 3; ++a) {
      const __m128i value = _mm_or_si128(_mm_or_si128(_mm_shuffle_epi8(in[0], shuffle[a][0]),
                                                      _mm_shuffle_epi8(in[1], shuffle[a][1])),
                                         _mm_shuffle_epi8(in[2], shuffle[a][2]));
      store(to_planes ? to + a * pixels + p : to + 3 * p + 16 * a, value);
    }
  }
  return p;
}
#endif

/// @brief One image of layout `image` written in element order `order` (`OutputLayout`): HWC
/// pixels into CHW planes, or back; a copy where the orders agree.
template <class T>
void relayout_image(const ImageLayout& image, ImageLayout::Order order, const T* from, T* to) {
  const std::size_t pixels = image.height * image.width;
  const std::size_t channels = image.channels;
  if (order == image.order || channels == 1) {
    std::memcpy(to, from, pixels * channels * sizeof(T));
    return;
  }
  const bool to_planes = order == ImageLayout::Order::chw;
#if defined(__SSE2__) && defined(__GNUC__) && defined(__x86_64__)
  if constexpr (sizeof(T) == 1) {
    if (channels == 3 && cpu_has_ssse3()) {
      // RGB bytes (CIFAR, ImageNet): blocks of 16 pixels shuffled, the rest below.
      const auto* in = reinterpret_cast<const std::uint8_t*>(from);  // NOLINT: bytes
      auto* out = reinterpret_cast<std::uint8_t*>(to);               // NOLINT: bytes
      const std::size_t done = three_channels_ssse3(in, out, pixels, to_planes);
      for (std::size_t c = 0; c < 3; ++c)
        for (std::size_t p = done; p < pixels; ++p) {
          if (to_planes)
            out[c * pixels + p] = in[p * 3 + c];
          else
            out[p * 3 + c] = in[c * pixels + p];
        }
      return;
    }
  }
#endif
  const auto with = [&](auto count) {
    constexpr std::size_t known = decltype(count)::value;
    if (to_planes)
      planes_of_pixels<known>(from, to, pixels);
    else
      pixels_of_planes<known>(from, to, pixels);
  };
  switch (channels) {
    case 2:
      return with(std::integral_constant<std::size_t, 2>{});
    case 3:
      return with(std::integral_constant<std::size_t, 3>{});
    case 4:
      return with(std::integral_constant<std::size_t, 4>{});
    default:
      break;
  }
  for (std::size_t c = 0; c < channels; ++c)
    for (std::size_t p = 0; p < pixels; ++p) {
      if (to_planes)
        to[c * pixels + p] = from[p * channels + c];
      else
        to[p * channels + c] = from[c * pixels + p];
    }
}

/// @brief Zeros the cutout square of one image of the batch (after any conversion; `image`: the
/// batch's layout).
template <class T>
void cut_out_image(const ImageLayout& image, const SampleDraws& draws, T* to) {
  if (draws.top == draws.bottom || draws.left == draws.right) return;
  const ImagePlanes planes(image);
  const auto columns = static_cast<std::size_t>(draws.right - draws.left) * planes.pixel;
  for (std::size_t p = 0; p < planes.planes; ++p)
    for (auto y = static_cast<std::size_t>(draws.top); y < static_cast<std::size_t>(draws.bottom);
         ++y)
      // Zero bytes are the zero of every element type a batch holds.
      zero_run(reinterpret_cast<std::byte*>(  // NOLINT: bytes
                   to + p * planes.plane + y * planes.line +
                   static_cast<std::size_t>(draws.left) * planes.pixel),
               columns * sizeof(T));
}

}  // namespace resident::detail
