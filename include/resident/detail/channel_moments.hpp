// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// The running figures behind `channel_statistics`: each channel's mean and summed squared
// deviation over the images added so far, image by image, whichever memory they are read from.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

#include "resident/convert.hpp"
#include "resident/detail/expects.hpp"
#include "resident/image_layout.hpp"

namespace resident::detail {

/// @brief Refuses what `channel_statistics` cannot measure: a layout of no channel or more
/// than `Normalize` takes, or other than `row_elements` elements; no row; a scale not finite.
inline void check_channel_input(const ImageLayout& image, std::size_t row_elements,
                                std::size_t rows, float input_scale) {
  const std::size_t channels = image.channels;
  RESIDENT_EXPECTS(channels >= 1 && channels <= Normalize::max_channels,
                   "channel_statistics: " + image.describe() + " has " + std::to_string(channels) +
                       " channels; Normalize takes 1 to " +
                       std::to_string(Normalize::max_channels));
  RESIDENT_EXPECTS(image.height > 0 && image.width > 0 && image.elements() == row_elements,
                   "channel_statistics: the layout " + image.describe() + " has " +
                       std::to_string(image.elements()) + " elements, but the rows have " +
                       std::to_string(row_elements) +
                       "; declare the layout of these images (C * H * W = row elements)");
  RESIDENT_EXPECTS(rows > 0, "channel_statistics: the field has no rows; give the training images");
  RESIDENT_EXPECTS(std::isfinite(input_scale),
                   "channel_statistics: input_scale is " + std::to_string(input_scale) +
                       "; give a finite factor (e.g. 1.0f / 255 for 8-bit pixels)");
}

/// @brief Each channel's mean and summed squared deviation over whole images: per image, its
/// channels' means and squared deviations from them (two sweeps of an image in cache), merged
/// into the running figures by Chan's formula, with no E[x^2] - E[x]^2, which loses every digit
/// of a deviation small against its mean. Images come in any number of calls of `add`: the
/// figures depend on the images and their order alone.
class ChannelMoments {
 public:
  explicit ChannelMoments(const ImageLayout& image)
      : image_(image),
        mean_(image.channels, 0.0),
        deviations_(image.channels, 0.0),
        image_sum_(image.channels),
        image_deviations_(image.channels) {}

  /// @brief Adds `count` images (rows of the layout) from `images`.
  template <class Value>
  void add(const Value* images, std::size_t count) {
    const std::size_t pixels = image_.height * image_.width;
    const auto per_image = static_cast<double>(pixels);
    for (std::size_t r = 0; r < count; ++r, ++images_) {
      const Value* row = images + r * image_.elements();
      std::fill(image_sum_.begin(), image_sum_.end(), 0.0);
      std::fill(image_deviations_.begin(), image_deviations_.end(), 0.0);
      for (std::size_t e = 0; e < image_.elements(); ++e)
        image_sum_[channel_of(e)] += static_cast<double>(row[e]);
      for (std::size_t e = 0; e < image_.elements(); ++e) {
        const std::size_t c = channel_of(e);
        const double deviation = static_cast<double>(row[e]) - image_sum_[c] / per_image;
        image_deviations_[c] += deviation * deviation;
      }
      const double before = static_cast<double>(images_) * per_image;
      const double after = before + per_image;
      for (std::size_t c = 0; c < image_.channels; ++c) {
        const double delta = image_sum_[c] / per_image - mean_[c];
        mean_[c] += delta * per_image / after;
        deviations_[c] += image_deviations_[c] + delta * delta * before * per_image / after;
      }
    }
  }
  /// Images added.
  [[nodiscard]] std::size_t images() const noexcept { return images_; }
  /// Channel `c`'s mean, in the units of the values.
  [[nodiscard]] double mean(std::size_t c) const noexcept { return mean_[c]; }
  /// Channel `c`'s population variance, in the units of the values squared.
  [[nodiscard]] double variance(std::size_t c) const noexcept {
    return deviations_[c] / static_cast<double>(images_ * image_.height * image_.width);
  }

 private:
  [[nodiscard]] std::size_t channel_of(std::size_t e) const noexcept {
    return image_.order == ImageLayout::Order::chw ? e / (image_.height * image_.width)
                                                   : e % image_.channels;
  }

  ImageLayout image_;
  std::vector<double> mean_, deviations_;
  std::vector<double> image_sum_, image_deviations_;  // of the image being added
  std::size_t images_ = 0;
};

}  // namespace resident::detail
