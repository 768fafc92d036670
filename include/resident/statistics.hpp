// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// @brief `channel_statistics`: each channel's mean and standard deviation of an image field,
/// in one pass, in the units `Normalize::mean_std` takes them.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>
#include <type_traits>
#include <vector>

#include "resident/convert.hpp"
#include "resident/detail/channel_moments.hpp"
#include "resident/detail/expects.hpp"
#include "resident/host_tensor.hpp"
#include "resident/image_layout.hpp"

namespace resident {

/// @brief Each channel's mean and (population) standard deviation, in the units of
/// `in * input_scale`: what `Normalize::mean_std(stats.mean, stats.std, image, input_scale)`
/// takes.
struct ChannelStatistics {
  std::vector<float> mean;  ///< One per channel.
  std::vector<float> std;   ///< One per channel; 0 for a channel whose every value is equal.
  std::size_t values = 0;   ///< Values per channel counted: rows x H x W.
};

namespace detail {

/// The figures of `moments`, scaled by `input_scale`, as floats.
/// @throws InvalidArgument when one is not a finite float.
inline ChannelStatistics channel_statistics_of(const ChannelMoments& moments,
                                               const ImageLayout& image, float input_scale) {
  ChannelStatistics statistics;
  statistics.values = moments.images() * image.height * image.width;
  const auto scale = static_cast<double>(input_scale);
  for (std::size_t c = 0; c < image.channels; ++c) {
    const auto scaled_mean = static_cast<float>(moments.mean(c) * scale);
    const auto scaled_std = static_cast<float>(std::sqrt(moments.variance(c)) * std::fabs(scale));
    RESIDENT_EXPECTS(std::isfinite(scaled_mean) && std::isfinite(scaled_std),
                     "channel_statistics: channel " + std::to_string(c) +
                         " has a mean or deviation that is not a finite float (a value that is "
                         "NaN or infinite, or figures past float's range)");
    statistics.mean.push_back(scaled_mean);
    statistics.std.push_back(scaled_std);
  }
  return statistics;
}

}  // namespace detail

/// @brief The per-channel mean and standard deviation of the images in `rows` (rows of layout
/// `image`, CHW or HWC; any integer or floating element type), in one pass over the rows (each
/// image summed in double while it is in cache, and merged into the running figures by Chan's
/// formula, so that neither a large dataset nor a deviation small against its mean loses
/// digits): as torchvision users compute them before `transforms.Normalize`.
/// `ds.epoch(options, convert<0>(Normalize::mean_std(s.mean, s.std, image, input_scale)))` then
/// gives each channel mean 0 and deviation 1. Compute them on the training rows only.
/// @param rows the training images, one per row
/// @param image the layout of a row's image (C x H x W elements, CHW or HWC)
/// @param input_scale factor the values are scaled by first, e.g. `1.0f / 255` for 8-bit pixels
/// @throws InvalidArgument when `image` does not describe `rows`' rows (C x H x W elements), has
/// no channel or more than `Normalize::max_channels`, when `rows` has no row, or when a value or
/// a figure is not finite.
template <class T>
[[nodiscard]] ChannelStatistics channel_statistics(const HostTensor<T>& rows,
                                                   const ImageLayout& image,
                                                   float input_scale = 1.0f) {
  static_assert(std::is_arithmetic_v<std::remove_cv_t<T>>,
                "channel_statistics reads integer or floating elements (uint8 pixels, floats)");
  detail::check_channel_input(image, rows.row_elements(), rows.rows(), input_scale);
  detail::ChannelMoments moments(image);
  moments.add(rows.data(), rows.rows());
  return detail::channel_statistics_of(moments, image, input_scale);
}

/// @brief The same figures of field `Field` of a `DeviceDataset` in any space (its stored rows:
/// this rank's part, no padding), where the host's copy may be gone: read in one pass from the
/// space's memory, 4 MiB of rows at a time copied to the host on the dataset's stream. The
/// figures are bitwise those of the host tensor's.
/// @throws what the host tensor's form throws; what the space's copies throw (CudaError).
template <std::size_t Field, class Dataset>
[[nodiscard]] ChannelStatistics channel_statistics(const Dataset& dataset, const ImageLayout& image,
                                                   float input_scale = 1.0f) {
  const auto rows = dataset.template field<Field>();
  using Value = std::remove_cv_t<typename decltype(rows)::value_type>;
  static_assert(std::is_arithmetic_v<Value>,
                "channel_statistics reads integer or floating elements (uint8 pixels, floats)");
  detail::check_channel_input(image, rows.row_elements(), rows.rows(), input_scale);
  constexpr std::size_t block_bytes = std::size_t{4} << 20;
  const std::size_t row_bytes = rows.row_elements() * sizeof(Value);
  const std::size_t block_rows =
      std::min(rows.rows(), std::max<std::size_t>(1, block_bytes / row_bytes));
  std::vector<Value> block(block_rows * rows.row_elements());
  detail::ChannelMoments moments(image);
  for (std::size_t first = 0; first < rows.rows(); first += block_rows) {
    const std::size_t count = std::min(block_rows, rows.rows() - first);
    dataset.space().copy_to_host(block.data(), rows.data() + first * rows.row_elements(),
                                 count * row_bytes, dataset.stream());
    dataset.space().synchronize(dataset.stream());
    moments.add(block.data(), count);
  }
  return detail::channel_statistics_of(moments, image, input_scale);
}

}  // namespace resident
