// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// The gather kernels' logic run on the host, block by block and phase by phase, through every
// launch shape the dispatcher chooses (narrow rows sharing a block, wide rows looping over a
// block, odd sizes, every word size, fewer blocks than row groups): bit for bit the host
// gather's batches and row ids, for copies, conversions and augmentations, from stored rows
// and from chunk slots.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "resident/augment.hpp"
#include "resident/convert.hpp"
#include "resident/detail/copy_workers.hpp"
#include "resident/detail/dataset/row_order.hpp"
#include "resident/detail/gather/gather_kernels.hpp"
#include "resident/detail/gather/host_gather.hpp"
#include "resident/detail/gather/stored_rows.hpp"
#include "resident/detail/stream/chunk_rows.hpp"
#include "resident/permutation.hpp"

namespace {

namespace detail = resident::detail;
using detail::GatherShape;
using resident::Augmentation;
using resident::ImageLayout;
using resident::NoConversion;
using resident::Normalize;

/// Runs the kernels on the calling thread, on at most `Blocks` blocks (the grid limit, made
/// small so that blocks loop over several row groups).
template <std::uint64_t Blocks>
struct HostLaunch {
  using reach_type = detail::SameAddress;
  static constexpr std::uint64_t max_blocks = Blocks;
  template <class Body>
  static void run(const Body& body, int /*stream*/) {
    EXPECT_LE(body.shape().blocks, Blocks);
    detail::run_blocks(body);
  }
};

/// Bytes with a pattern that differs in every byte of every row.
template <class T>
std::vector<T> stored(std::size_t rows, std::size_t elements) {
  std::vector<T> values(rows * elements);
  for (std::size_t i = 0; i < values.size(); ++i) {
    if constexpr (std::is_floating_point_v<T>)
      values[i] = static_cast<T>(i) * T(0.37) - T(11);
    else
      values[i] = static_cast<T>(i * 2654435761u >> 7);
  }
  return values;
}

/// A shuffled order over `rows` rows, wrapping past the last (as `Remainder::pad` does).
detail::RowOrder shuffled(std::uint64_t rows, std::uint64_t first) {
  return {resident::Permutation(rows, 0x5eedu, 1), rows, first};
}

template <class Out>
bool same_bits(const std::vector<Out>& a, const std::vector<Out>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(Out)) == 0;
}

/// Gathers `batch` rows through the kernels (on at most `Blocks` blocks) and through the host,
/// and compares batches and row ids bitwise.
template <std::uint64_t Blocks, class Source, class Out, class Op, class Order>
void expect_kernels_match_host(const Source& source, std::size_t row_elements, const Order& order,
                               std::size_t batch, const Op& op, const Augmentation* augmentation,
                               const std::string& what) {
  SCOPED_TRACE(what + ", " + std::to_string(batch) + " rows of " + std::to_string(row_elements) +
               " elements, at most " + std::to_string(Blocks) + " blocks");
  const detail::AugmentKey key{7, 3, 100, 0};
  std::vector<Out> kernels(batch * row_elements, Out{});
  std::vector<std::int64_t> kernel_ids(batch, -1);
  detail::device_gather<HostLaunch<Blocks>>(source, kernels.data(), row_elements, order, batch, op,
                                            augmentation, key, kernel_ids.data(), 0);
  std::vector<Out> host(batch * row_elements, Out{});
  std::vector<std::int64_t> host_ids(batch, -1);
  detail::CopyWorkers workers(1);
  detail::host_gather(
      order, batch, host_ids.data(), workers,
      detail::GatherField{source, host.data(), row_elements, op, augmentation, key});
  EXPECT_EQ(kernel_ids, host_ids);
  EXPECT_TRUE(same_bits(kernels, host)) << "the kernels' batch differs from the host's";
}

/// The launch shapes of every row size: threads per row the row's units rounded up to a power
/// of two, at most a block.
TEST(GatherKernels, NarrowRowsShareABlockAndWideRowsTakeOne) {
  const GatherShape labels = detail::gather_shape(1000, 1, detail::max_gather_blocks);
  EXPECT_EQ(labels.row_threads(), 1u);
  EXPECT_EQ(labels.group_rows(), detail::gather_threads);
  EXPECT_EQ(labels.blocks, (1000 + detail::gather_threads - 1) / detail::gather_threads);
  const GatherShape five = detail::gather_shape(10, 5, detail::max_gather_blocks);
  EXPECT_EQ(five.row_threads(), 8u);
  EXPECT_EQ(five.group_rows(), detail::gather_threads / 8);
  EXPECT_EQ(five.blocks, 1u);
  const GatherShape cifar = detail::gather_shape(512, 3072 / 16, detail::max_gather_blocks);
  EXPECT_EQ(cifar.row_threads(), detail::gather_threads);
  EXPECT_EQ(cifar.blocks, 512u);
  // The grid limit: fewer blocks than groups, each block looping.
  const GatherShape capped = detail::gather_shape(std::uint64_t{1} << 40, 1024, 65535);
  EXPECT_EQ(capped.blocks, 65535u);
  EXPECT_EQ(capped.groups(), std::uint64_t{1} << 40);
  EXPECT_EQ(detail::gather_shape(0, 7, 3).blocks, 0u);
}

template <class T, std::uint64_t Blocks>
void check_copies(std::size_t elements) {
  constexpr std::size_t rows = 301;
  const auto values = stored<T>(rows, elements);
  const detail::StoredRows<T> source{values.data(), elements};
  for (const std::size_t batch : {std::size_t{1}, std::size_t{37}, std::size_t{400}})
    expect_kernels_match_host<Blocks, detail::StoredRows<T>, T>(
        source, elements, shuffled(rows, 250), batch, NoConversion{}, nullptr,
        "a copy of " + std::to_string(sizeof(T)) + "-byte elements");
}

// Every word a copy can move (1, 4, 8 and 16 bytes), rows narrower and wider than a block.
TEST(GatherKernels, CopiesMatchTheHostForEveryWordAndRowSize) {
  for (const std::size_t elements : {1, 3, 4, 5, 8, 12, 16, 17, 48, 1000, 3072}) {
    check_copies<std::uint8_t, detail::max_gather_blocks>(elements);
    check_copies<std::uint8_t, 3>(elements);
  }
  for (const std::size_t elements : {1, 2, 3, 4, 7, 33, 1025}) {
    check_copies<std::int32_t, detail::max_gather_blocks>(elements);
    check_copies<std::int64_t, 2>(elements);
    check_copies<double, 1>(elements);
  }
}

/// A conversion without a division to spare: the generic path of `KernelOp`.
struct Affine {
  using output_type = double;
  template <class T>
  double operator()(T value, std::size_t element) const noexcept {
    return static_cast<double>(value) * 0.5 + static_cast<double>(element % 7);
  }
};

// Normalize's channel carried from element to element (CHW runs and HWC interleaving, strides
// below, at and above the threads of a row) and a plain conversion, over every row size.
TEST(GatherKernels, ConversionsMatchTheHostBitForBit) {
  constexpr std::size_t rows = 97;
  const std::vector<Normalize> normalizations = {
      Normalize{},
      Normalize{1.0f / 255, -0.5f},
      Normalize::mean_std({0.49f, 0.48f, 0.45f}, {0.25f, 0.24f, 0.26f}, 256, 1.0f / 255),
      Normalize::mean_std({0.49f, 0.48f, 0.45f}, {0.25f, 0.24f, 0.26f}, 1, 1.0f / 255),
      Normalize::mean_std({0.1f, 0.2f, 0.3f, 0.4f, 0.5f}, {1.0f, 2.0f, 3.0f, 4.0f, 5.0f}, 3),
      Normalize::mean_std({0.1f, 0.9f}, {0.3f, 0.7f}, 200)};
  for (const std::size_t elements : {768, 6, 15, 129, 1200}) {
    const auto values = stored<std::uint8_t>(rows, elements);
    const detail::StoredRows<std::uint8_t> source{values.data(), elements};
    for (std::size_t n = 0; n < normalizations.size(); ++n) {
      const Normalize& op = normalizations[n];
      if (elements % (op.channels() * op.channel_stride()) != 0) continue;
      expect_kernels_match_host<detail::max_gather_blocks, detail::StoredRows<std::uint8_t>, float>(
          source, elements, shuffled(rows, 0), 64, op, nullptr,
          "normalization " + std::to_string(n));
      expect_kernels_match_host<2, detail::StoredRows<std::uint8_t>, float>(
          source, elements, shuffled(rows, 50), 64, op, nullptr,
          "normalization " + std::to_string(n));
    }
    expect_kernels_match_host<5, detail::StoredRows<std::uint8_t>, double>(
        source, elements, shuffled(rows, 9), 33, Affine{}, nullptr, "an affine conversion");
  }
}

// Crop (zeros and reflection), flip and cutout, with and without a conversion, CHW and HWC,
// images narrower and wider than a block.
TEST(GatherKernels, AugmentationsMatchTheHostBitForBit) {
  constexpr std::size_t rows = 41;
  for (const ImageLayout& image : {ImageLayout::chw(3, 8, 8), ImageLayout::hwc(5, 7, 3),
                                   ImageLayout::chw(1, 2, 2), ImageLayout::chw(3, 32, 32)}) {
    const std::size_t elements = image.elements();
    const auto values = stored<std::uint8_t>(rows, elements);
    const detail::StoredRows<std::uint8_t> source{values.data(), elements};
    for (const resident::Fill fill : {resident::Fill::zeros, resident::Fill::reflect}) {
      const std::size_t pad = fill == resident::Fill::reflect ? 1 : 3;
      const Augmentation augmentation{image, resident::RandomCrop{pad, fill},
                                      resident::RandomFlip{0.5}, resident::Cutout{2}};
      const std::string what = "an augmentation of " + image.describe();
      expect_kernels_match_host<detail::max_gather_blocks, detail::StoredRows<std::uint8_t>,
                                std::uint8_t>(source, elements, shuffled(rows, 7), 50,
                                              NoConversion{}, &augmentation, what);
      expect_kernels_match_host<3, detail::StoredRows<std::uint8_t>, float>(
          source, elements, shuffled(rows, 7), 50,
          Normalize::mean_std({0.5f}, {0.25f}, 1, 1.0f / 255), &augmentation,
          what + ", normalized");
    }
  }
}

// Rows in chunk slots, placed by a shuffled window (the streamed order) and by a straight
// batch: each row's place is worked out once, by the thread that locates it.
TEST(GatherKernels, ChunkSlotRowsMatchTheHost) {
  constexpr std::size_t batch_size = 8;
  constexpr std::size_t chunk_batches = 3;
  constexpr std::size_t slots = 4;
  constexpr std::size_t elements = 6;
  const std::size_t slot_rows = batch_size * chunk_batches;
  const auto values = stored<float>(slots * slot_rows, elements);
  const std::size_t row_bytes = elements * sizeof(float);
  detail::ChunkRows window;
  window.samples = resident::Permutation(slots * slot_rows, 99, 2);
  window.batch_size = batch_size;
  window.chunk_batches = chunk_batches;
  for (std::size_t c = 0; c < slots; ++c) {
    window.slot[c] = (c + 1) % slots;
    window.first_batch[c] = c * chunk_batches;
  }
  const detail::ChunkSlotRows<float> source{reinterpret_cast<const std::byte*>(values.data()),
                                            slot_rows * row_bytes, row_bytes, window};
  for (const std::uint64_t first : {0, 8, 88}) {
    auto order = window;
    order.first = first;
    auto from = source;
    from.rows = order;
    expect_kernels_match_host<2, detail::ChunkSlotRows<float>, float>(
        from, elements, order, batch_size, NoConversion{}, nullptr, "a shuffled window");
    expect_kernels_match_host<2, detail::ChunkSlotRows<float>, float>(
        from, elements, order, batch_size, Normalize{2.0f, 1.0f}, nullptr,
        "a shuffled window, converted");
  }
  detail::ChunkRows straight;
  straight.straight = detail::RowOrder{{}, 1000, 40};
  straight.slot[0] = 2;
  straight.slot_row = 5;
  auto from = source;
  from.rows = straight;
  expect_kernels_match_host<1, detail::ChunkSlotRows<float>, float>(
      from, elements, straight, 7, NoConversion{}, nullptr, "a straight batch");
}

// The row ids alone (a zero-copy epoch asked for them), over the grid limit.
TEST(GatherKernels, RowIdsAloneMatchTheOrder) {
  for (const std::size_t rows : {1, 127, 128, 129, 1000}) {
    const auto order = shuffled(700, 650);
    std::vector<std::int64_t> ids(rows, -1);
    detail::device_fill_indices<HostLaunch<3>>(order, rows, ids.data(), 0);
    for (std::size_t r = 0; r < rows; ++r)
      ASSERT_EQ(ids[r], static_cast<std::int64_t>(order.row(r))) << "position " << r;
  }
}

}  // namespace
