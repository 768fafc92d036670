// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// @brief Conversions applied while an epoch gathers a batch, one per field: compact storage on
/// the device (`uint8_t` pixels, `half`, `bfloat16`), `float` batches for the model
/// (`Normalize`), and the widening casts (`Cast<T>`) labels and tokens need.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <initializer_list>
#include <iterator>
#include <limits>
#include <string>
#include <tuple>
#include <type_traits>

#include "resident/config.hpp"
#include "resident/detail/checked_math.hpp"
#include "resident/detail/expects.hpp"
#include "resident/image_layout.hpp"

#if RESIDENT_HAS_CUDA
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#endif

namespace resident {

namespace detail {

/// The stored value as a float: exact for every integer type up to 16 bits, `half` and
/// `bfloat16`; the usual rounding for wider integers.
template <class T>
RESIDENT_HOST_DEVICE inline float to_float(T value) noexcept {
#if RESIDENT_HAS_CUDA
  if constexpr (std::is_same_v<T, __half>) {
    return __half2float(value);
  } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return __bfloat162float(value);
  } else
#endif
  {
    return static_cast<float>(value);
  }
}

/// `float(double(x) * double(scale) + double(offset))`: `Normalize`'s arithmetic, shared by the
/// host's and the kernels' loops so that they agree bit for bit.
RESIDENT_HOST_DEVICE inline float normalized(float x, float scale, float offset) noexcept {
  const double product = static_cast<double>(x) * static_cast<double>(scale);
  return static_cast<float>(product + static_cast<double>(offset));
}

/// @brief Floats `Normalize::mean_std` reads: a braced list, or any contiguous range of `float`
/// (`std::vector<float>`, `std::array<float, N>`, a span), read while the call runs.
class FloatSpan {
 public:
  /// A braced list: `{0.4914f, 0.4822f, 0.4465f}`. Its array lives to the end of the call that
  /// the list is an argument of, as long as this span is read.
  // cppcheck-suppress noExplicitConstructor ; a braced list must convert
  FloatSpan(std::initializer_list<float> values) noexcept  // NOLINT(google-explicit-constructor)
      : size_(values.size()) {
    data_ = values.begin();
  }
  /// Any range with `data()` of `const float*` and `size()`.
  template <
      class Range,
      class = std::enable_if_t<
          std::is_convertible_v<decltype(std::data(std::declval<const Range&>())), const float*> &&
          !std::is_same_v<std::decay_t<Range>, FloatSpan>>>
  // cppcheck-suppress noExplicitConstructor ; a std::vector or std::array must convert
  FloatSpan(const Range& values) noexcept  // NOLINT(google-explicit-constructor)
      : data_(std::data(values)), size_(std::size(values)) {}

  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] float operator[](std::size_t i) const noexcept { return data_[i]; }

 private:
  const float* data_ = nullptr;
  std::size_t size_;
};

}  // namespace detail

/// @brief `out = float(in) * scale[c] + offset[c]`, where `c` is the element's channel: one
/// scale and offset for every element, or one per channel (`mean_std`).
/// @note Computed as `float(double(float(in)) * double(scale) + double(offset))`: the input is
/// read as a `float` first (an integer above 2^24 rounds there), the double product of two
/// floats is exact, so a fused multiply-add or not gives the same double, and host and
/// device results are bitwise equal whatever the compilers contract.
class Normalize {
 public:
  static constexpr std::size_t max_channels = 8;  ///< Channels `mean_std` accepts.
  using output_type = float;                      ///< What the converted batch holds.

  /// @brief The identity: `out = float(in)`.
  constexpr Normalize() noexcept = default;

  /// @brief The same `scale` and `offset` for every element, e.g. `{1.0f / 255, 0}`.
  constexpr Normalize(float scale, float offset) noexcept {
    scale_[0] = scale;
    offset_[0] = offset;
  }

  /// @brief Per-channel `(in * input_scale - mean[c]) / std[c]`, as torchvision's Normalize
  /// after ToTensor does with `input_scale = 1/255`.
  /// @param mean each channel's mean, in units of `in * input_scale`; 1 to `max_channels` (a
  /// braced list, or any contiguous range of `float`: `std::vector`, `std::array`, a span, or
  /// what `channel_statistics` returns)
  /// @param std each channel's standard deviation, in the same units; as many as `mean`, none 0
  /// @param channel_stride elements of one channel's run in a row: `H * W` for CHW rows,
  /// 1 for HWC rows (channel = element % channels)
  /// @param input_scale factor applied to `in` first, e.g. `1.0f / 255` for 8-bit pixels
  /// @throws InvalidArgument for mismatched or too many channels, a zero std or stride, a
  /// channel span (`channels * channel_stride`) that overflows `size_t`, or a mean, std or
  /// input scale that is not finite (or whose quotient is not).
  static Normalize mean_std(detail::FloatSpan mean, detail::FloatSpan std,
                            std::size_t channel_stride, float input_scale = 1.0f) {
    RESIDENT_EXPECTS(mean.size() == std.size() && mean.size() >= 1 && mean.size() <= max_channels,
                     "Normalize::mean_std needs as many stds as means, 1 to " +
                         std::to_string(max_channels) + ", got " + std::to_string(mean.size()) +
                         " means and " + std::to_string(std.size()) + " stds");
    RESIDENT_EXPECTS(channel_stride > 0,
                     "Normalize::mean_std needs a channel stride above 0 (H*W for CHW rows, 1 "
                     "for HWC rows)");
    // The span of one image's channels is what check_row_layout divides rows by and what the
    // gathers index channels with: a span that wraps would divide by zero or put every element
    // in channel 0.
    RESIDENT_EXPECTS(channel_stride <= std::numeric_limits<std::size_t>::max() / mean.size(),
                     "Normalize::mean_std: " + std::to_string(mean.size()) + " channels of " +
                         std::to_string(channel_stride) +
                         " elements each overflow std::size_t; give channel_stride = H*W for "
                         "CHW rows or 1 for HWC rows");
    RESIDENT_EXPECTS(std::isfinite(input_scale),
                     "Normalize::mean_std: input_scale is " + std::to_string(input_scale) +
                         "; give a finite factor (e.g. 1.0f / 255 for 8-bit pixels)");
    Normalize normalize;
    normalize.channels_ = mean.size();
    normalize.channel_stride_ = channel_stride;
    for (std::size_t c = 0; c < mean.size(); ++c) {
      const float deviation = std[c];
      const float average = mean[c];
      const std::string channel = "Normalize::mean_std: channel " + std::to_string(c) + "'s ";
      RESIDENT_EXPECTS(std::isfinite(average) && std::isfinite(deviation),
                       channel + "mean " + std::to_string(average) + " and std " +
                           std::to_string(deviation) +
                           " must both be finite numbers; every batch would hold NaN or "
                           "infinity otherwise");
      RESIDENT_EXPECTS(deviation != 0.0f,
                       "Normalize::mean_std: std of channel " + std::to_string(c) +
                           " is 0; give each channel's standard deviation (above 0)");
      normalize.scale_[c] = input_scale / deviation;
      normalize.offset_[c] = -average / deviation;
      RESIDENT_EXPECTS(std::isfinite(normalize.scale_[c]) && std::isfinite(normalize.offset_[c]),
                       channel + "std " + std::to_string(deviation) +
                           " is so small that input_scale / std or mean / std overflows a float; "
                           "give the standard deviation in the units of in * input_scale");
    }
    return normalize;
  }

  /// @brief Per-channel `(in * input_scale - mean[c]) / std[c]` on images of layout `image`
  /// (the channel stride and the count of channels from the layout).
  /// @throws InvalidArgument as the other `mean_std`, and when `image` has another count of
  /// channels than `mean`.
  static Normalize mean_std(detail::FloatSpan mean, detail::FloatSpan std, const ImageLayout& image,
                            float input_scale = 1.0f) {
    RESIDENT_EXPECTS(image.channels == mean.size(),
                     "Normalize::mean_std got " + std::to_string(mean.size()) +
                         " means for images of " + std::to_string(image.channels) + " channels (" +
                         image.describe() + "); give one mean and std per channel");
    // H * W of a CHW layout may wrap; then no stride describes the images.
    const std::size_t stride =
        image.order == ImageLayout::Order::chw
            ? detail::checked_mul(image.height, image.width, "channel stride (H x W) of images")
            : 1;
    return mean_std(mean, std, stride, input_scale);
  }

  /// @brief Checks that this normalization can convert rows of `row_elements` elements: its
  /// factors and offsets are finite (`Normalize{scale, offset}` is `constexpr` and cannot
  /// refuse when made), and `channels` runs of `channel_stride` elements make whole rows (CHW:
  /// a row is C*H*W; HWC: a multiple of C). An epoch calls it when it is made, so a
  /// normalization that would fill every batch with NaN, or a layout meant for other rows, is
  /// refused instead of putting every element in one channel.
  /// @throws InvalidArgument for a factor or offset that is not finite, or when `row_elements`
  /// is not a multiple of channels x stride.
  void check_row_layout(std::size_t row_elements) const {
    for (std::size_t c = 0; c < channels_; ++c)
      RESIDENT_EXPECTS(std::isfinite(scale_[c]) && std::isfinite(offset_[c]),
                       "Normalize has scale " + std::to_string(scale_[c]) + " and offset " +
                           std::to_string(offset_[c]) + " for channel " + std::to_string(c) +
                           "; both must be finite numbers, or every converted batch holds NaN "
                           "or infinity: give finite ones (e.g. Normalize{1.0f / 255, 0})");
    if (channels_ == 1) return;
    const std::size_t span = detail::checked_mul(channels_, channel_stride_, "channel span");
    RESIDENT_EXPECTS(
        row_elements % span == 0,
        "Normalize::mean_std has " + std::to_string(channels_) + " channels of " +
            std::to_string(channel_stride_) + " elements each (" + std::to_string(span) +
            " per image), but the converted field's rows have " + std::to_string(row_elements) +
            " elements, not a multiple of that; give channel_stride = H*W for CHW "
            "rows or 1 for HWC rows of this field");
  }

  /// @brief This normalization with its channels laid out as `image` lays them out (the channel
  /// stride of `image`): an epoch that augments the field it converts calls it when it is made,
  /// so that the layout declared to the augmentation decides, whatever stride `mean_std` got.
  /// One channel fits every layout and is returned unchanged.
  /// @throws InvalidArgument when `image` has another count of channels than this one.
  [[nodiscard]] Normalize with_layout(const ImageLayout& image) const {
    if (channels_ == 1) return *this;
    RESIDENT_EXPECTS(
        image.channels == channels_,
        "Normalize::mean_std has " + std::to_string(channels_) +
            " channels, but the augmentation of the same field declares its images as " +
            image.describe() + ", of " + std::to_string(image.channels) +
            " channels; give one mean and std per channel of the declared layout (or declare "
            "the layout the images have)");
    Normalize laid_out = *this;
    laid_out.channel_stride_ = image.channel_stride();
    return laid_out;
  }

  /// @brief Channels: 1, or as many as `mean_std` was given.
  [[nodiscard]] RESIDENT_HOST_DEVICE std::size_t channels() const noexcept { return channels_; }
  /// @brief Elements of one channel's run in a row (`mean_std`'s `channel_stride`; 1 for a
  /// single channel).
  [[nodiscard]] RESIDENT_HOST_DEVICE std::size_t channel_stride() const noexcept {
    return channel_stride_;
  }
  /// @brief Channel `c`'s factor (`c < channels()`).
  [[nodiscard]] RESIDENT_HOST_DEVICE float scale(std::size_t c) const noexcept { return scale_[c]; }
  /// @brief Channel `c`'s offset, added after the factor (`c < channels()`).
  [[nodiscard]] RESIDENT_HOST_DEVICE float offset(std::size_t c) const noexcept {
    return offset_[c];
  }

  /// @brief Element `element` (index within its row) of value `value`, converted.
  template <class T>
  [[nodiscard]] RESIDENT_HOST_DEVICE float operator()(T value, std::size_t element) const noexcept {
    const std::size_t c = channels_ == 1 ? 0 : (element / channel_stride_) % channels_;
    return detail::normalized(detail::to_float(value), scale_[c], offset_[c]);
  }

 private:
  float scale_[max_channels] = {1, 1, 1, 1, 1, 1, 1, 1};  // NOLINT(modernize-avoid-c-arrays)
  float offset_[max_channels] = {};                       // NOLINT(modernize-avoid-c-arrays)
  std::size_t channels_ = 1;
  std::size_t channel_stride_ = 1;
};

namespace detail {

/// Whether `T` is `half` or `bfloat16`: floating types without C++'s conversions.
template <class T>
inline constexpr bool is_cuda_half =
#if RESIDENT_HAS_CUDA
    std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>;
#else
    false;
#endif

/// Whether every value of `From` is a value of `To`: the casts `Cast` makes.
template <class From, class To>
constexpr bool widens() noexcept {
  using from = std::numeric_limits<From>;
  using to = std::numeric_limits<To>;
  if constexpr (std::is_same_v<From, To>) {
    return true;
  } else if constexpr (is_cuda_half<From>) {
    return std::is_floating_point_v<To>;  // 11 or 8 significant bits, exponents within float's
  } else if constexpr (!std::is_arithmetic_v<From> || !std::is_arithmetic_v<To> ||
                       std::is_same_v<To, bool>) {
    return false;
  } else if constexpr (std::is_integral_v<From> && std::is_integral_v<To>) {
    return from::is_signed == to::is_signed ? to::digits >= from::digits
                                            : to::is_signed && to::digits >= from::digits;
  } else if constexpr (std::is_integral_v<From>) {
    return to::digits >= from::digits;  // to a floating type: every integer exact
  } else {
    return std::is_floating_point_v<To> && to::digits >= from::digits &&
           to::max_exponent >= from::max_exponent && to::min_exponent <= from::min_exponent;
  }
}

}  // namespace detail

/// @brief `out = T(in)`, for element types whose every value `T` holds: labels stored as
/// `uint8_t` or `int32_t` served as the `int64_t` that `cross_entropy` takes, `uint16_t` tokens
/// as `int32_t` for a libtorch without `uint16`, `half` as `float`. A cast that could change a
/// value (narrowing, signed to unsigned, float to integer) does not compile.
template <class T>
struct Cast {
  using output_type = T;  ///< What the converted batch holds.

  /// @brief Whether `Cast<T>` converts elements stored as `In` (every value of `In` is a `T`).
  template <class In>
  static constexpr bool accepts = detail::widens<In, T>();

  /// @brief Element `value`, as a `T` (its place in the row does not matter).
  template <class In>
  [[nodiscard]] RESIDENT_HOST_DEVICE T operator()(In value,
                                                  std::size_t /*element*/) const noexcept {
    if constexpr (detail::is_cuda_half<In>)
      return static_cast<T>(detail::to_float(value));
    else
      return static_cast<T>(value);
  }
};

/// @brief Field `Field` of every gathered batch is converted by `Op` (e.g. `Normalize`,
/// `Cast<std::int64_t>`); the other fields keep their stored types, unless the epoch names a
/// conversion of theirs too (one per field). Made by `convert<Field>(op)`.
template <std::size_t Field, class Op>
struct FieldConversion {
  static constexpr std::size_t field = Field;  ///< The converted field.
  Op op;                                       ///< The conversion.
};

/// @brief No conversion: batches hold the stored types.
struct NoConversion {};

/// @brief Several fields converted, each by its own op: what an epoch that names a
/// `convert<F>(op)` for more than one field holds (`Conversions` are `FieldConversion`s of
/// distinct fields, in the order given).
template <class... Conversions>
struct FieldConversions {
  std::tuple<Conversions...> conversions;  ///< One per converted field.
};

/// @brief `ds.epoch(options, resident::convert<0>(resident::Normalize{1.0f / 255, 0}))`; one per
/// field, e.g. `convert<0>(Normalize{...}), convert<1>(Cast<std::int64_t>{})`.
template <std::size_t Field, class Op>
constexpr FieldConversion<Field, Op> convert(Op op) noexcept {
  return {op};
}

}  // namespace resident
