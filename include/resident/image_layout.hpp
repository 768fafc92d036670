// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// @brief `ImageLayout`: how an image field's rows hold their pixels, declared once for the
/// augmentations and `Normalize::mean_std`.

#include <cstddef>
#include <string>

#include "resident/config.hpp"

namespace resident {

/// @brief How an image field's rows hold their pixels: `C x H x W` (channel planes, as
/// PyTorch tensors) or `H x W x C` (interleaved, as decoded images and NumPy arrays).
struct ImageLayout {
  /// @brief Element order of a row.
  enum class Order {
    chw,  ///< Channel planes: element `(c * H + y) * W + x`.
    hwc,  ///< Interleaved: element `(y * W + x) * C + c`.
  };
  Order order = Order::chw;  ///< Element order.
  std::size_t channels = 1;  ///< C.
  std::size_t height = 1;    ///< H.
  std::size_t width = 1;     ///< W.

  /// @brief `C x H x W` rows (e.g. `chw(3, 32, 32)` for CIFAR tensors).
  static constexpr ImageLayout chw(std::size_t c, std::size_t h, std::size_t w) noexcept {
    return {Order::chw, c, h, w};
  }
  /// @brief `H x W x C` rows (e.g. `hwc(32, 32, 3)` for CIFAR as Keras stores it).
  static constexpr ImageLayout hwc(std::size_t h, std::size_t w, std::size_t c) noexcept {
    return {Order::hwc, c, h, w};
  }
  /// @brief Elements of one image: `C * H * W`.
  [[nodiscard]] RESIDENT_HOST_DEVICE constexpr std::size_t elements() const noexcept {
    return channels * height * width;
  }
  /// @brief The run of one channel in a row: `Normalize::mean_std`'s `channel_stride`
  /// (`H * W` for CHW, 1 for HWC).
  [[nodiscard]] constexpr std::size_t channel_stride() const noexcept {
    return order == Order::chw ? height * width : 1;
  }
  /// @brief "CHW 3x32x32" or "HWC 32x32x3", for messages.
  [[nodiscard]] std::string describe() const {
    const auto text = [](std::size_t value) { return std::to_string(value); };
    return order == Order::chw ? "CHW " + text(channels) + "x" + text(height) + "x" + text(width)
                               : "HWC " + text(height) + "x" + text(width) + "x" + text(channels);
  }
};

}  // namespace resident
