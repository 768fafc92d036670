// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// @brief Augmentations applied while an epoch gathers a batch: `RandomCrop`, `RandomFlip` and
/// `Cutout` on an image field of a declared `ImageLayout`, and `OutputLayout` (HWC images
/// served CHW, or CHW as HWC); the random ones drawn per sample from a
/// counter-based generator keyed by (seed, epoch, row, op), so that every space, batch size,
/// thread count and sharding gives the same pixels.

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

#include "resident/config.hpp"
#include "resident/detail/expects.hpp"
#include "resident/image_layout.hpp"

namespace resident {

/// @brief What `RandomCrop` puts where the shifted image leaves the frame.
enum class Fill {
  zeros,    ///< Stored zeros (converted like any pixel: `Normalize` makes them `-mean / std`).
  reflect,  ///< The mirror image about the edge, the edge not repeated (torchvision's
            ///< `padding_mode="reflect"`); needs `pad` below H and W.
};

/// @brief Pads the image by `pad` pixels on each side and crops it back to `H x W` at a uniform
/// offset: a translation by `-pad..pad` pixels in each direction (torchvision's
/// `RandomCrop(size, padding=pad)`).
struct RandomCrop {
  std::size_t pad = 0;      ///< Largest shift in pixels; 0: no crop.
  Fill fill = Fill::zeros;  ///< What fills the uncovered border.
};

/// @brief Mirrors the image left to right with probability `p` (torchvision's
/// `RandomHorizontalFlip`).
struct RandomFlip {
  double p = 0.5;  ///< Probability of a flip, in [0, 1].
};

/// @brief Zeros a `size x size` square of every channel, centred at a uniform pixel and clipped
/// at the edges (DeVries and Taylor, 2017). Applied last, to the batch's values: after a
/// conversion, the square holds 0 of the converted type.
struct Cutout {
  std::size_t size = 0;  ///< Side of the square in pixels; 0: no cutout.
};

/// @brief Serves the images in another element order than they are stored in: HWC images
/// (NumPy's, Keras') as the CHW batches torch's convolutions read (FFCV's `ToTorchImage`,
/// DALI's `output_layout`), or CHW as HWC. Fused with the gather, the crop, the flip, the
/// conversion and the cutout: no second pass over the batch. The batch's rows then have the
/// shape of the output layout: `(C, H, W)` or `(H, W, C)`.
struct OutputLayout {
  ImageLayout::Order order = ImageLayout::Order::chw;  ///< The order batches hold.
};

/// @brief The augmentations of one image field, in the order they apply: crop, flip, the
/// conversion, cutout, each in the image's coordinates, with the batch's rows in the output
/// layout. Ops not given do nothing. Made by `augment<Field>(image, ops...)`.
struct Augmentation {
  ImageLayout image{};   ///< The field's rows.
  RandomCrop crop{};     ///< `pad == 0`: none.
  RandomFlip flip{0.0};  ///< `p == 0`: none.
  Cutout cutout{};       ///< `size == 0`: none.
  /// The order the batches hold the images in, where `relayout` is set (an `OutputLayout` op).
  OutputLayout output{};
  bool relayout = false;  ///< Whether `output` applies; else the batches keep `image`'s order.

  /// @brief The layout of the images in a batch: `image` in the output order.
  [[nodiscard]] RESIDENT_HOST_DEVICE constexpr ImageLayout output_image() const noexcept {
    return relayout ? ImageLayout{output.order, image.channels, image.height, image.width} : image;
  }
  /// @brief Whether the batches hold the images in another order than the rows do.
  [[nodiscard]] RESIDENT_HOST_DEVICE constexpr bool reorders() const noexcept {
    return relayout && output.order != image.order && image.channels != 1;
  }

  /// @brief Checks the ops against the image and the image against a row of `row_elements`
  /// elements; an epoch calls it when it is made.
  /// @throws InvalidArgument naming what does not fit and what to give instead.
  void check(std::size_t row_elements) const {
    RESIDENT_EXPECTS(image.channels > 0 && image.height > 0 && image.width > 0,
                     "augment: the image layout " + image.describe() +
                         " has a zero extent; give C, H and W of the field's images");
    // C * H * W in steps that cannot wrap: H and W are bounded below, C is checked by division.
    RESIDENT_EXPECTS(
        image.height <= max_extent && image.width <= max_extent &&
            image.channels <= row_elements / (image.height * image.width),
        "augment: the image layout " + image.describe() +
            " has more elements than the augmented field's rows: rows have " +
            std::to_string(row_elements) +
            " elements; declare the layout of that field's images (C * H * W = row elements)");
    RESIDENT_EXPECTS(image.elements() == row_elements,
                     "augment: the image layout " + image.describe() + " has " +
                         std::to_string(image.elements()) +
                         " elements, but the augmented field's rows have " +
                         std::to_string(row_elements) +
                         "; declare the layout of that field's images (C * H * W = row elements)");
    RESIDENT_EXPECTS(
        crop.fill != Fill::reflect || (crop.pad < image.height && crop.pad < image.width),
        "augment: RandomCrop{" + std::to_string(crop.pad) +
            ", Fill::reflect} needs a pad below the image's height and width (" + image.describe() +
            "); lower the pad or use Fill::zeros");
    RESIDENT_EXPECTS(crop.pad <= max_extent && image.height <= max_extent &&
                         image.width <= max_extent && cutout.size <= max_extent,
                     "augment: image extents, the crop's pad and the cutout's size must be at "
                     "most " +
                         std::to_string(max_extent) + " pixels");
    RESIDENT_EXPECTS(image.elements() < max_elements,
                     "augment: the image layout " + image.describe() +
                         " has 2^31 elements or more; augment images below that");
    RESIDENT_EXPECTS(flip.p >= 0.0 && flip.p <= 1.0,
                     "augment: RandomFlip{p} needs p in [0, 1], got " + std::to_string(flip.p));
  }

  /// Largest extent (pixels) the draws address: offsets are drawn from 32-bit words.
  static constexpr std::size_t max_extent = std::size_t{1} << 20;
  /// Elements an image may have (below): pixels are addressed in 32 bits.
  static constexpr std::size_t max_elements = std::size_t{1} << 31;
};

/// @brief Field `Field` of every batch is augmented by `augmentation`. Made by `augment<Field>`.
template <std::size_t Field>
struct FieldAugmentation {
  static constexpr std::size_t field = Field;  ///< The augmented field.
  Augmentation augmentation;                   ///< What is applied.
};

/// @brief No augmentation.
struct NoAugmentation {};

namespace detail {

template <class Op>
struct augment_op_rank : std::integral_constant<int, -1> {};
template <>
struct augment_op_rank<RandomCrop> : std::integral_constant<int, 0> {};
template <>
struct augment_op_rank<RandomFlip> : std::integral_constant<int, 1> {};
template <>
struct augment_op_rank<Cutout> : std::integral_constant<int, 2> {};
template <>
struct augment_op_rank<OutputLayout> : std::integral_constant<int, 3> {};

template <int... Rank>
constexpr bool strictly_increasing() noexcept {
  int previous = -1;
  bool increasing = true;
  ((increasing = increasing && Rank > previous, previous = Rank), ...);
  return increasing;
}

constexpr void set_op(Augmentation& augmentation, const RandomCrop& crop) noexcept {
  augmentation.crop = crop;
}
constexpr void set_op(Augmentation& augmentation, const RandomFlip& flip) noexcept {
  augmentation.flip = flip;
}
constexpr void set_op(Augmentation& augmentation, const Cutout& cutout) noexcept {
  augmentation.cutout = cutout;
}
constexpr void set_op(Augmentation& augmentation, const OutputLayout& output) noexcept {
  augmentation.output = output;
  augmentation.relayout = true;
}

}  // namespace detail

/// @brief `ds.epoch(options, convert<0>(normalize), augment<0>(image, RandomCrop{4},
/// RandomFlip{}))`: field `Field`'s images, of layout `image`, cropped, flipped and cut out as
/// they are gathered. Give each op at most once, in the order they apply: `RandomCrop`,
/// `RandomFlip`, `Cutout` (a conversion runs between the flip and the cutout), then
/// `OutputLayout` (`augment<0>(ImageLayout::hwc(32, 32, 3), OutputLayout{})` serves HWC images
/// as CHW batches, with or without the other ops).
template <std::size_t Field, class... Ops>
constexpr FieldAugmentation<Field> augment(const ImageLayout& image, const Ops&... ops) noexcept {
  static_assert(((detail::augment_op_rank<Ops>::value >= 0) && ...),
                "augment takes RandomCrop, RandomFlip, Cutout and OutputLayout ops");
  static_assert(detail::strictly_increasing<detail::augment_op_rank<Ops>::value...>(),
                "augment: give each op at most once, in the order they apply: RandomCrop, "
                "RandomFlip, Cutout, OutputLayout");
  FieldAugmentation<Field> result{Augmentation{image, {}, RandomFlip{0.0}, {}, {}, false}};
  (detail::set_op(result.augmentation, ops), ...);
  return result;
}

}  // namespace resident
