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
  using Value = std::remove_cv_t<T>;
  static_assert(std::is_arithmetic_v<Value>,
                "channel_statistics reads integer or floating elements (uint8 pixels, floats)");
  const std::size_t channels = image.channels;
  RESIDENT_EXPECTS(channels >= 1 && channels <= Normalize::max_channels,
                   "channel_statistics: " + image.describe() + " has " + std::to_string(channels) +
                       " channels; Normalize takes 1 to " +
                       std::to_string(Normalize::max_channels));
  RESIDENT_EXPECTS(image.height > 0 && image.width > 0 && image.elements() == rows.row_elements(),
                   "channel_statistics: the layout " + image.describe() + " has " +
                       std::to_string(image.elements()) + " elements, but the rows have " +
                       std::to_string(rows.row_elements()) +
                       "; declare the layout of these images (C * H * W = row elements)");
  RESIDENT_EXPECTS(rows.rows() > 0,
                   "channel_statistics: the tensor has no rows; give the training images");
  RESIDENT_EXPECTS(std::isfinite(input_scale),
                   "channel_statistics: input_scale is " + std::to_string(input_scale) +
                       "; give a finite factor (e.g. 1.0f / 255 for 8-bit pixels)");
  const std::size_t pixels = image.height * image.width;
  const bool planes = image.order == ImageLayout::Order::chw;
  const auto channel_of = [&](std::size_t e) { return planes ? e / pixels : e % channels; };
  // Per image, its channels' means and squared deviations from them (two sweeps of an image
  // in cache), merged into the running figures by Chan's formula: no E[x^2] - E[x]^2, which
  // loses every digit of a deviation small against its mean.
  std::vector<double> mean(channels, 0.0), deviations(channels, 0.0);
  std::vector<double> image_sum(channels), image_deviations(channels);
  const Value* data = rows.data();
  const auto per_image = static_cast<double>(pixels);
  for (std::size_t r = 0; r < rows.rows(); ++r) {
    const Value* row = data + r * image.elements();
    std::fill(image_sum.begin(), image_sum.end(), 0.0);
    std::fill(image_deviations.begin(), image_deviations.end(), 0.0);
    for (std::size_t e = 0; e < image.elements(); ++e)
      image_sum[channel_of(e)] += static_cast<double>(row[e]);
    for (std::size_t e = 0; e < image.elements(); ++e) {
      const std::size_t c = channel_of(e);
      const double deviation = static_cast<double>(row[e]) - image_sum[c] / per_image;
      image_deviations[c] += deviation * deviation;
    }
    const double before = static_cast<double>(r) * per_image;
    const double after = before + per_image;
    for (std::size_t c = 0; c < channels; ++c) {
      const double delta = image_sum[c] / per_image - mean[c];
      mean[c] += delta * per_image / after;
      deviations[c] += image_deviations[c] + delta * delta * before * per_image / after;
    }
  }
  ChannelStatistics statistics;
  statistics.values = rows.rows() * pixels;
  const auto count = static_cast<double>(statistics.values);
  const auto scale = static_cast<double>(input_scale);
  for (std::size_t c = 0; c < channels; ++c) {
    const auto scaled_mean = static_cast<float>(mean[c] * scale);
    const auto scaled_std = static_cast<float>(std::sqrt(deviations[c] / count) * std::fabs(scale));
    RESIDENT_EXPECTS(std::isfinite(scaled_mean) && std::isfinite(scaled_std),
                     "channel_statistics: channel " + std::to_string(c) +
                         " has a mean or deviation that is not a finite float (a value that is "
                         "NaN or infinite, or figures past float's range)");
    statistics.mean.push_back(scaled_mean);
    statistics.std.push_back(scaled_std);
  }
  return statistics;
}

}  // namespace resident
