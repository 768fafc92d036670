// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// Test support: small labelled images (3 x 4 x 4 uint8, each label its row) and the epoch with
// every transform composed on them, which the composition and subset matrices share.

#include <cstddef>
#include <cstdint>
#include <numeric>
#include <vector>

#include "resident/augment.hpp"
#include "resident/convert.hpp"
#include "resident/epoch_options.hpp"
#include "resident/host_tensor.hpp"
#include "resident/image_layout.hpp"

namespace resident::testing {

/// `rows` 3 x 4 x 4 uint8 images of varied pixels, and labels equal to the row.
struct SmallImages {
  static constexpr std::size_t pixels_per_row = std::size_t{3} * 4 * 4;

  explicit SmallImages(std::size_t rows) : pixels(rows * pixels_per_row), labels(rows) {
    for (std::size_t i = 0; i < pixels.size(); ++i)
      pixels[i] = static_cast<std::uint8_t>((i * 2654435761u) >> 13);
    std::iota(labels.begin(), labels.end(), std::int32_t{0});
  }
  /// The rows `rows` of these, copied in that order.
  [[nodiscard]] SmallImages take(const std::vector<std::size_t>& rows) const {
    SmallImages taken(0);
    for (const std::size_t row : rows) {
      const auto first = pixels.begin() + static_cast<std::ptrdiff_t>(row * pixels_per_row);
      taken.pixels.insert(taken.pixels.end(), first,
                          first + static_cast<std::ptrdiff_t>(pixels_per_row));
      taken.labels.push_back(labels[row]);
    }
    return taken;
  }
  [[nodiscard]] HostTensor<const std::uint8_t> x() const {
    return {pixels.data(), {labels.size(), 3, 4, 4}};
  }
  [[nodiscard]] HostTensor<const std::int32_t> y() const {
    return {labels.data(), {labels.size()}};
  }

  std::vector<std::uint8_t> pixels;
  std::vector<std::int32_t> labels;
};

/// An epoch of `ds` (over `SmallImages`) with every transform: the images normalized, augmented
/// (crop, flip, cutout) and served HWC, the labels cast to int64 (a conversion per field).
template <class Dataset>
auto every_transform_epoch(Dataset& ds, const EpochOptions& options) {
  return ds.epoch(options, convert<0>(Normalize{1.0f / 255, -0.5f}),
                  augment<0>(ImageLayout::chw(3, 4, 4), RandomCrop{1}, RandomFlip{}, Cutout{2},
                             OutputLayout{ImageLayout::Order::hwc}),
                  convert<1>(Cast<std::int64_t>{}));
}

}  // namespace resident::testing
