// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// Checks of augmented epochs shared by every space: a plain reference of each op (an explicit
// padded image, cropped and mirrored pixel by pixel, as torchvision does it), and epochs whose
// every row must equal the reference of its row of the whole data, whatever the batch size,
// shuffle, remainder or sharding.

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "resident/detail/gather/augment_row.hpp"
#include "resident/resident.hpp"
#include "support/spaces.hpp"

namespace resident::testing {

/// Element `(c, y, x)` of an image of `layout`.
inline std::size_t element_of(const ImageLayout& layout, std::size_t c, std::size_t y,
                              std::size_t x) {
  return layout.order == ImageLayout::Order::chw ? (c * layout.height + y) * layout.width + x
                                                 : (y * layout.width + x) * layout.channels + c;
}

/// numpy.pad's "reflect" index into `[0, n)`, by walking: no formula shared with the library.
inline std::int64_t reflect_index(std::int64_t i, std::int64_t n) {
  while (i < 0 || i >= n) i = i < 0 ? -i : 2 * (n - 1) - i;
  return i;
}

/// One image through pad -> crop at (offset_y, offset_x) of the padded image -> flip ->
/// `convert` (element indices of the stored layout) -> cutout -> the output order, as separate
/// passes over explicit images.
template <class In, class Out, class Convert>
std::vector<Out> reference_augment(const Augmentation& augmentation, std::int64_t offset_y,
                                   std::int64_t offset_x, bool flip, std::int64_t cut_top,
                                   std::int64_t cut_left, const In* image, const Convert& convert) {
  const ImageLayout& layout = augmentation.image;
  const auto h = static_cast<std::int64_t>(layout.height);
  const auto w = static_cast<std::int64_t>(layout.width);
  const auto pad = static_cast<std::int64_t>(augmentation.crop.pad);
  const std::size_t c_count = layout.channels;
  // The padded image, channel-planar: (c, Y, X) of (H + 2 pad) x (W + 2 pad).
  const std::int64_t ph = h + 2 * pad;
  const std::int64_t pw = w + 2 * pad;
  std::vector<In> padded(c_count * static_cast<std::size_t>(ph * pw));
  for (std::size_t c = 0; c < c_count; ++c)
    for (std::int64_t y = 0; y < ph; ++y)
      for (std::int64_t x = 0; x < pw; ++x) {
        std::int64_t sy = y - pad;
        std::int64_t sx = x - pad;
        In value{};
        if (augmentation.crop.fill == Fill::reflect) {
          sy = reflect_index(sy, h);
          sx = reflect_index(sx, w);
        }
        if (sy >= 0 && sy < h && sx >= 0 && sx < w)
          value = image[element_of(layout, c, static_cast<std::size_t>(sy),
                                   static_cast<std::size_t>(sx))];
        padded[(c * static_cast<std::size_t>(ph) + static_cast<std::size_t>(y)) *
                   static_cast<std::size_t>(pw) +
               static_cast<std::size_t>(x)] = value;
      }
  std::vector<In> cropped(layout.elements());
  for (std::size_t c = 0; c < c_count; ++c)
    for (std::int64_t y = 0; y < h; ++y)
      for (std::int64_t x = 0; x < w; ++x)
        cropped[element_of(layout, c, static_cast<std::size_t>(y), static_cast<std::size_t>(x))] =
            padded[(c * static_cast<std::size_t>(ph) + static_cast<std::size_t>(y + offset_y)) *
                       static_cast<std::size_t>(pw) +
                   static_cast<std::size_t>(x + offset_x)];
  std::vector<In> flipped(cropped);
  if (flip)
    for (std::size_t c = 0; c < c_count; ++c)
      for (std::size_t y = 0; y < layout.height; ++y)
        for (std::size_t x = 0; x < layout.width; ++x)
          flipped[element_of(layout, c, y, x)] =
              cropped[element_of(layout, c, y, layout.width - 1 - x)];
  std::vector<Out> result(layout.elements());
  for (std::size_t e = 0; e < result.size(); ++e) result[e] = convert(flipped[e], e);
  const auto size = static_cast<std::int64_t>(augmentation.cutout.size);
  for (std::int64_t y = cut_top; y < cut_top + size; ++y)
    for (std::int64_t x = cut_left; x < cut_left + size; ++x)
      if (size != 0 && y >= 0 && y < h && x >= 0 && x < w)
        for (std::size_t c = 0; c < c_count; ++c)
          result[element_of(layout, c, static_cast<std::size_t>(y), static_cast<std::size_t>(x))] =
              Out{};
  if (!augmentation.relayout) return result;
  // The batch's order (OutputLayout): the same pixels, moved element by element.
  const ImageLayout out{augmentation.output.order, layout.channels, layout.height, layout.width};
  std::vector<Out> moved(result.size());
  for (std::size_t c = 0; c < c_count; ++c)
    for (std::size_t y = 0; y < layout.height; ++y)
      for (std::size_t x = 0; x < layout.width; ++x)
        moved[element_of(out, c, y, x)] = result[element_of(layout, c, y, x)];
  return moved;
}

/// The reference of row `global_row` under `key`: the draws made again from the generator's
/// words (Philox itself is checked against its known answers), as the documentation states
/// them: offsets `word * n >> 32`, a flip when the word is below `p * 2^32`, the cutout centred
/// at a uniform pixel.
template <class In, class Out, class Convert>
std::vector<Out> reference_row(const Augmentation& augmentation, const detail::AugmentKey& key,
                               std::uint64_t global_row, const In* image, const Convert& convert) {
  const auto uniform = [](std::uint32_t word, std::uint64_t n) {
    return static_cast<std::int64_t>((word * n) >> 32);
  };
  const auto crop = detail::augment_words(key, global_row, detail::AugmentOp::crop);
  const auto flip = detail::augment_words(key, global_row, detail::AugmentOp::flip);
  const auto cutout = detail::augment_words(key, global_row, detail::AugmentOp::cutout);
  const std::uint64_t offsets = 2 * augmentation.crop.pad + 1;
  const auto half = static_cast<std::int64_t>(augmentation.cutout.size / 2);
  return reference_augment<In, Out>(
      augmentation, uniform(crop.word[0], offsets), uniform(crop.word[1], offsets),
      static_cast<double>(flip.word[0]) < augmentation.flip.p * 4294967296.0,
      uniform(cutout.word[0], augmentation.image.height) - half,
      uniform(cutout.word[1], augmentation.image.width) - half, image, convert);
}

/// The identity conversion of the reference.
struct Same {
  template <class T>
  T operator()(T value, std::size_t /*element*/) const {
    return value;
  }
};

/// Random pixels: `rows` images of `elements` bytes.
inline std::vector<std::uint8_t> random_images(std::size_t rows, std::size_t elements,
                                               std::uint32_t seed) {
  std::mt19937 generator(seed);
  std::uniform_int_distribution<int> pixel(0, 255);
  std::vector<std::uint8_t> images(rows * elements);
  for (auto& value : images) value = static_cast<std::uint8_t>(pixel(generator));
  return images;
}

/// The shapes of a layout's rows as a tensor of `rows` images.
inline std::vector<std::size_t> image_shape(std::size_t rows, const ImageLayout& layout) {
  return layout.order == ImageLayout::Order::chw
             ? std::vector<std::size_t>{rows, layout.channels, layout.height, layout.width}
             : std::vector<std::size_t>{rows, layout.height, layout.width, layout.channels};
}

/// Every row of every batch of `epoch` equals the reference of its row of the whole data
/// (field 1 holds each row's id in the whole data), bit for bit; padding rows included.
template <class Dataset, class Epoch, class Convert>
void expect_rows_match_reference(Dataset& ds, Epoch& epoch, const Augmentation& augmentation,
                                 const EpochOptions& options,
                                 const std::vector<std::uint8_t>& images, const Convert& convert,
                                 const std::string& context) {
  const std::size_t elements = augmentation.image.elements();
  const detail::AugmentKey key{options.seed, options.epoch, 0};
  const ImageLayout& image = augmentation.image;
  const Shape out_shape = !augmentation.relayout ? ds.template field<0>().row_shape()
                          : augmentation.output.order == ImageLayout::Order::chw
                              ? Shape{image.channels, image.height, image.width}
                              : Shape{image.height, image.width, image.channels};
  for (std::size_t k = 0; k < epoch.size(); ++k) {
    const auto batch = epoch.batch(k);
    ASSERT_EQ(std::get<0>(batch).row_shape(), out_shape) << context << ": batch " << k;
    const auto pixels = read_back(ds.space(), ds.stream(), std::get<0>(batch));
    using Out = typename decltype(pixels)::value_type;
    const auto rows = read_back(ds.space(), ds.stream(), std::get<1>(batch));
    for (std::size_t r = 0; r < rows.size(); ++r) {
      const auto global = static_cast<std::uint64_t>(rows[r]);
      const std::vector<Out> expected = reference_row<std::uint8_t, Out>(
          augmentation, key, global, images.data() + global * elements, convert);
      ASSERT_EQ(std::memcmp(pixels.data() + r * elements, expected.data(), elements * sizeof(Out)),
                0)
          << context << ": batch " << k << " position " << r << " (row " << global << ")";
    }
  }
}

/// Augmented epochs of both layouts and both fills against the reference, over batch sizes,
/// remainders, shuffles and shardings: the pixels of a row depend on (seed, epoch, row) only.
template <class Space>
void check_augmentation_matches_reference(const Space& space) {
  constexpr std::size_t n = 61;
  for (const ImageLayout layout : {ImageLayout::chw(3, 5, 7), ImageLayout::hwc(5, 7, 3)}) {
    const auto images = random_images(n, layout.elements(), 11);
    std::vector<std::int64_t> ids(n);
    std::iota(ids.begin(), ids.end(), std::int64_t{0});
    for (const Fill fill : {Fill::zeros, Fill::reflect}) {
      // Reflected crops are served in the other element order (OutputLayout).
      auto augmented = augment<0>(layout, RandomCrop{fill == Fill::reflect ? 4U : 6U, fill},
                                  RandomFlip{}, Cutout{3});
      if (fill == Fill::reflect) {
        augmented.augmentation.output.order = layout.order == ImageLayout::Order::chw
                                                  ? ImageLayout::Order::hwc
                                                  : ImageLayout::Order::chw;
        augmented.augmentation.relayout = true;
      }
      struct Case {
        std::size_t batch;
        Remainder remainder;
        Shuffle shuffle;
        Sharding sharding;
        int world;
      };
      for (const Case c :
           {Case{8, Remainder::partial, Shuffle::none, Sharding::partitioned, 1},
            Case{1, Remainder::drop, Shuffle::samples, Sharding::partitioned, 1},
            Case{16, Remainder::pad, Shuffle::samples, Sharding::partitioned, 1},
            Case{100, Remainder::pad, Shuffle::batches, Sharding::partitioned, 1},
            Case{7, Remainder::pad, Shuffle::samples, Sharding::partitioned, 3},
            Case{5, Remainder::partial, Shuffle::batches, Sharding::replicated, 2}}) {
        for (int rank = 0; rank < c.world; ++rank) {
          DatasetOptions options;
          options.batch_size = c.batch;
          options.remainder = c.remainder;
          options.sharding = c.sharding;
          options.shard = {rank, c.world};
          options.reserve_bytes = 0;
          DeviceDataset<Space, std::uint8_t, std::int64_t> ds(
              space, options, HostTensor<const std::uint8_t>(images.data(), image_shape(n, layout)),
              HostTensor<const std::int64_t>(ids.data(), {n}));
          const EpochOptions epoch_options{5, 2, c.shuffle};
          auto epoch = ds.epoch(epoch_options, augmented);
          EXPECT_TRUE(epoch.gathers());
          const std::string context = layout.describe() +
                                      (fill == Fill::zeros ? " zeros" : " reflect") + ", batch " +
                                      std::to_string(c.batch) + ", rank " + std::to_string(rank) +
                                      " of " + std::to_string(c.world);
          expect_rows_match_reference(ds, epoch, augmented.augmentation, epoch_options, images,
                                      Same{}, context);
          if (::testing::Test::HasFatalFailure()) return;
        }
      }
    }
  }
}

/// uint8 images converted to float by `Normalize` between the flip and the cutout: the float
/// batches equal the reference's bit for bit.
template <class Space>
void check_augmented_conversion(const Space& space, Shuffle shuffle) {
  constexpr std::size_t n = 40;
  for (const ImageLayout layout : {ImageLayout::chw(3, 8, 6), ImageLayout::hwc(8, 6, 3)}) {
    const auto images = random_images(n, layout.elements(), 23);
    std::vector<std::int64_t> ids(n);
    std::iota(ids.begin(), ids.end(), std::int64_t{0});
    DatasetOptions options;
    options.batch_size = 12;
    options.remainder = Remainder::pad;
    options.reserve_bytes = 0;
    DeviceDataset<Space, std::uint8_t, std::int64_t> ds(
        space, options, HostTensor<const std::uint8_t>(images.data(), image_shape(n, layout)),
        HostTensor<const std::int64_t>(ids.data(), {n}));
    const auto normalize =
        Normalize::mean_std({0.49f, 0.48f, 0.45f}, {0.25f, 0.24f, 0.26f}, layout, 1.0f / 255);
    const auto reference = [&](std::uint8_t value, std::size_t e) { return normalize(value, e); };
    const EpochOptions epoch_options{9, 4, shuffle};
    const auto augmented = augment<0>(layout, RandomCrop{2}, RandomFlip{}, Cutout{4});
    auto epoch = ds.epoch(epoch_options, convert<0>(normalize), augmented);
    expect_rows_match_reference(ds, epoch, augmented.augmentation, epoch_options, images, reference,
                                "Normalize + augment, " + layout.describe());
    // Served in both orders, with and without the crop and flip (the channels of Normalize
    // follow the images into the batch's order).
    for (const ImageLayout::Order order : {ImageLayout::Order::chw, ImageLayout::Order::hwc}) {
      const auto moved =
          augment<0>(layout, RandomCrop{2}, RandomFlip{}, Cutout{4}, OutputLayout{order});
      auto moved_epoch = ds.epoch(epoch_options, convert<0>(normalize), moved);
      expect_rows_match_reference(ds, moved_epoch, moved.augmentation, epoch_options, images,
                                  reference,
                                  "Normalize + augment + OutputLayout, " + layout.describe());
      const auto only = augment<0>(layout, OutputLayout{order});
      auto only_epoch = ds.epoch(epoch_options, convert<0>(normalize), only);
      expect_rows_match_reference(ds, only_epoch, only.augmentation, epoch_options, images,
                                  reference, "Normalize + OutputLayout, " + layout.describe());
      auto plain_epoch = ds.epoch(epoch_options, only);
      expect_rows_match_reference(ds, plain_epoch, only.augmentation, epoch_options, images, Same{},
                                  "OutputLayout, " + layout.describe());
    }
  }
}

}  // namespace resident::testing
