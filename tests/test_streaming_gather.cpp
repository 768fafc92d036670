// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// Gathering streaming epochs: the sample shuffle within a window of resident chunks, and
// conversions and augmentations, against the preloaded dataset's batches.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iostream>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "resident/augment.hpp"
#include "resident/convert.hpp"
#include "resident/dataset.hpp"
#include "resident/device_dataset.hpp"
#include "resident/image_layout.hpp"
#include "resident/streaming_dataset.hpp"
#include "support/float_bits.hpp"
#include "support/spaces.hpp"

namespace {

using resident::CapacityError;
using resident::DatasetOptions;
using resident::DeviceDataset;
using resident::EpochOptions;
using resident::HostSpace;
using resident::HostTensor;
using resident::Remainder;
using resident::Shuffle;
using resident::StreamingDataset;
using resident::testing::read_back;

// Window order unless told otherwise: these cases test the window shuffle (the whole-epoch
// order is the preloaded one, which the composition test compares bit for bit).
DatasetOptions stream_options(std::size_t batch, Remainder remainder, std::size_t chunk_batches,
                              std::size_t ring, std::size_t prefetch,
                              resident::StreamOrder order = resident::StreamOrder::window) {
  DatasetOptions options;
  options.streaming.order = order;
  options.batch_size = batch;
  options.remainder = remainder;
  options.streaming.chunk_batches = chunk_batches;
  options.streaming.chunk_slots = ring;
  options.streaming.prefetch_chunks = prefetch;
  return options;
}

/// The typed cases: skipped where this translation unit cannot gather into the space (the
/// device gathers need nvcc: tests/cuda/test_stream_gather_kernel.cu compiles these cases so).
template <class Space>
using TypedStreamingGather = resident::testing::OverGatheringSpaces<Space>;
TYPED_TEST_SUITE(TypedStreamingGather, resident::testing::GatherSpaceTypes,
                 resident::testing::SpaceName);

// The valid row ids of every batch of an epoch of a one-field id dataset.
template <class Epoch, class Dataset>
std::vector<std::vector<std::int64_t>> epoch_ids(Dataset& ds, Epoch&& epoch) {
  std::vector<std::vector<std::int64_t>> batches;
  for (auto [ids] : epoch) {
    auto values = read_back(ds.space(), ds.stream(), ids);
    values.resize(ids.valid_rows());
    batches.push_back(std::move(values));
  }
  return batches;
}

// The streaming sample shuffle visits every row once per epoch, is reproducible, differs
// between epochs, mixes rows of different chunks within a batch, and keeps the short last
// batch last and every batch but it full.
TYPED_TEST(TypedStreamingGather, SampleShuffleVisitsEveryRowOnceAndMixesChunks) {
  for (const std::size_t n : {std::size_t{1000}, std::size_t{1003}}) {
    for (const Remainder remainder : {Remainder::drop, Remainder::partial, Remainder::pad}) {
      SCOPED_TRACE("rows " + std::to_string(n) + ", " + resident::remainder_name(remainder));
      std::vector<std::int64_t> ids(n);
      std::iota(ids.begin(), ids.end(), std::int64_t{0});
      const HostTensor<const std::int64_t> tensor(ids.data(), {n});
      constexpr std::size_t batch = 10, chunk = 5;
      StreamingDataset<TypeParam, std::int64_t> ds(
          this->space_, stream_options(batch, remainder, chunk, 6, 2), tensor);
      ASSERT_EQ(ds.window_chunks(), 4u) << "chunk_slots - prefetch_chunks";
      EXPECT_EQ(ds.window_rows(), 4 * chunk * batch);
      const auto first = epoch_ids(ds, ds.epoch({42, 0, Shuffle::samples}));
      ASSERT_EQ(first.size(), ds.num_batches());
      std::vector<std::int64_t> seen;
      std::size_t mixed = 0;
      for (std::size_t k = 0; k < first.size(); ++k) {
        if (k + 1 < first.size()) {
          ASSERT_EQ(first[k].size(), batch) << k;
        }
        seen.insert(seen.end(), first[k].begin(), first[k].end());
        std::set<std::int64_t> chunks;
        for (const std::int64_t row : first[k])
          chunks.insert(row / static_cast<std::int64_t>(chunk * batch));
        mixed += chunks.size() > 1 ? 1 : 0;
      }
      std::sort(seen.begin(), seen.end());
      const std::size_t served = remainder == Remainder::drop ? n / batch * batch : n;
      ASSERT_EQ(seen.size(), served);
      // Consecutive rows from the epoch's drop offset (0 but under drop).
      for (std::size_t row = 0; row < served; ++row)
        ASSERT_EQ(seen[row], seen.front() + std::int64_t(row));
      EXPECT_GT(mixed, first.size() / 2) << "most batches hold rows of several chunks";
      EXPECT_EQ(epoch_ids(ds, ds.epoch({42, 0, Shuffle::samples})), first);
      EXPECT_NE(epoch_ids(ds, ds.epoch({42, 1, Shuffle::samples})), first);
      if (n % batch != 0 && remainder != Remainder::drop) {
        EXPECT_EQ(first.back().front(), std::int64_t(n / batch * batch))
            << "the short last batch stays last, in order";
      }
    }
  }
}

// Mean distinct labels per batch of an epoch whose labels field is field 0.
template <class Dataset, class Epoch>
double distinct_labels_per_batch(Dataset& ds, Epoch&& epoch) {
  std::size_t distinct = 0, batches = 0;
  for (auto [labels] : epoch) {
    const auto values = read_back(ds.space(), ds.stream(), labels);
    distinct += std::set<std::int32_t>(values.begin(), values.begin() + labels.valid_rows()).size();
    ++batches;
  }
  return static_cast<double>(distinct) / static_cast<double>(batches);
}

// On label-sorted data (10 labels of 1000 rows), the streaming sample shuffle's batches hold
// far more labels than the batch-level shuffle's, approaching the in-memory sample shuffle.
TYPED_TEST(TypedStreamingGather, SampleShuffleMixesLabelSortedDataFarBetterThanBatchShuffle) {
  constexpr std::size_t labels = 10, per_label = 1000, n = labels * per_label, batch = 64;
  std::vector<std::int32_t> sorted(n);
  for (std::size_t r = 0; r < n; ++r) sorted[r] = static_cast<std::int32_t>(r / per_label);
  const HostTensor<const std::int32_t> tensor(sorted.data(), {n});
  // Chunks of 4 batches (256 rows); 10 slots, 2 loading ahead: windows of 8 chunks.
  const DatasetOptions options = stream_options(batch, Remainder::partial, 4, 10, 2);
  StreamingDataset<TypeParam, std::int32_t> streamed(this->space_, options, tensor);
  DeviceDataset<TypeParam, std::int32_t> preloaded(this->space_, options, tensor);
  ASSERT_EQ(streamed.window_chunks(), 8u);
  const double window =
      distinct_labels_per_batch(streamed, streamed.epoch({3, 0, Shuffle::samples}));
  const double chunks =
      distinct_labels_per_batch(streamed, streamed.epoch({3, 0, Shuffle::batches}));
  const double memory =
      distinct_labels_per_batch(preloaded, preloaded.epoch({3, 0, Shuffle::samples}));
  // The same rows in whole-epoch order: the preloaded batches.
  DatasetOptions whole = options;
  whole.streaming.order = resident::StreamOrder::whole_epoch;
  StreamingDataset<TypeParam, std::int32_t> whole_epoch(this->space_, whole, tensor);
  const double streamed_whole =
      distinct_labels_per_batch(whole_epoch, whole_epoch.epoch({3, 0, Shuffle::samples}));
  EXPECT_EQ(streamed_whole, memory);
  this->RecordProperty("distinct_labels_whole_epoch_samples", std::to_string(streamed_whole));
  this->RecordProperty("distinct_labels_streaming_samples", std::to_string(window));
  this->RecordProperty("distinct_labels_streaming_batches", std::to_string(chunks));
  this->RecordProperty("distinct_labels_in_memory_samples", std::to_string(memory));
  std::cout << "distinct labels per batch of " << batch << " (10 labels, sorted, window of "
            << streamed.window_rows() << " rows): window-order stream samples " << window
            << ", window-order stream batches " << chunks << ", whole-epoch stream samples "
            << streamed_whole << ", preloaded samples " << memory << '\n';
  EXPECT_GT(window, 2.0 * chunks);
  EXPECT_LE(window, memory + 1e-9);
}

// The image dataset of the conversion cases: 3 x 8 x 8 uint8 images, label r for row r.
struct Images {
  explicit Images(std::size_t n) : pixels(n * 192), labels(n) {
    for (std::size_t i = 0; i < pixels.size(); ++i)
      pixels[i] = static_cast<std::uint8_t>((i * 2654435761u) >> 11);
    std::iota(labels.begin(), labels.end(), std::int32_t{0});
  }
  [[nodiscard]] HostTensor<const std::uint8_t> x() const {
    return {pixels.data(), {labels.size(), 3, 8, 8}};
  }
  [[nodiscard]] HostTensor<const std::int32_t> y() const {
    return {labels.data(), {labels.size()}};
  }
  std::vector<std::uint8_t> pixels;
  std::vector<std::int32_t> labels;
};

auto normalize() { return resident::convert<0>(resident::Normalize{1.0f / 255, -0.5f}); }
auto augmentation() {
  return resident::augment<0>(resident::ImageLayout::chw(3, 8, 8),
                              resident::RandomCrop{2, resident::Fill::reflect},
                              resident::RandomFlip{}, resident::Cutout{3});
}

// The float bits and labels of every batch of an epoch of the image dataset, valid rows only.
struct Batches {
  std::vector<std::vector<std::uint32_t>> bits;
  std::vector<std::vector<std::int32_t>> labels;
};
template <class Dataset, class Epoch>
Batches record(Dataset& ds, Epoch&& epoch) {
  Batches out;
  for (auto [x, y] : epoch) {
    const auto values = read_back(ds.space(), ds.stream(), x);
    std::vector<std::uint32_t> bits;
    for (std::size_t i = 0; i < y.valid_rows() * 192; ++i)
      bits.push_back(resident::testing::float_bits(static_cast<float>(values[i])));
    out.bits.push_back(std::move(bits));
    auto labels = read_back(ds.space(), ds.stream(), y);
    labels.resize(y.valid_rows());
    out.labels.push_back(std::move(labels));
  }
  return out;
}

// Under Shuffle::none a converted and augmented streamed epoch is the preloaded one bit for bit
// (each overload); under Shuffle::samples every row is augmented as the preloaded dataset
// augments that row, since the draws depend on the row alone; and `Dataset` forwards both.
TYPED_TEST(TypedStreamingGather, ConversionAndAugmentationEqualThePreloadedBatches) {
  constexpr std::size_t n = 97;
  const Images data(n);
  for (const Remainder remainder : {Remainder::partial, Remainder::pad}) {
    SCOPED_TRACE(resident::remainder_name(remainder));
    const DatasetOptions options = stream_options(8, remainder, 3, 4, 2);
    StreamingDataset<TypeParam, std::uint8_t, std::int32_t> streamed(this->space_, options,
                                                                     data.x(), data.y());
    DeviceDataset<TypeParam, std::uint8_t, std::int32_t> preloaded(this->space_, options, data.x(),
                                                                   data.y());
    const EpochOptions plain{7, 3, Shuffle::none};
    const auto both = record(preloaded, preloaded.epoch(plain, normalize(), augmentation()));
    EXPECT_EQ(record(streamed, streamed.epoch(plain, normalize(), augmentation())).bits, both.bits);
    EXPECT_EQ(record(streamed, streamed.epoch(plain, normalize())).bits,
              record(preloaded, preloaded.epoch(plain, normalize())).bits);
    EXPECT_EQ(record(streamed, streamed.epoch(plain, augmentation())).bits,
              record(preloaded, preloaded.epoch(plain, augmentation())).bits);

    const auto shuffled =
        record(streamed, streamed.epoch({7, 3, Shuffle::samples}, normalize(), augmentation()));
    std::size_t rows = 0;
    for (std::size_t k = 0; k < shuffled.labels.size(); ++k) {
      for (std::size_t r = 0; r < shuffled.labels[k].size(); ++r, ++rows) {
        const auto row = static_cast<std::size_t>(shuffled.labels[k][r]);
        const auto& reference = both.bits[row / 8];
        const std::size_t at = row % 8 * 192;
        ASSERT_TRUE(
            std::equal(shuffled.bits[k].begin() + static_cast<std::ptrdiff_t>(r * 192),
                       shuffled.bits[k].begin() + static_cast<std::ptrdiff_t>(r * 192 + 192),
                       reference.begin() + static_cast<std::ptrdiff_t>(at)))
            << "batch " << k << ", row " << row;
      }
    }
    EXPECT_EQ(rows, n);

    auto dataset = resident::Dataset<TypeParam, std::uint8_t, std::int32_t>(
        StreamingDataset<TypeParam, std::uint8_t, std::int32_t>(this->space_, options, data.x(),
                                                                data.y()),
        resident::Plan{});
    EXPECT_EQ(record(dataset, dataset.epoch(plain, normalize(), augmentation())).bits, both.bits);
  }
}

}  // namespace

// A conversion to double: wider than the ring planned by default. Outside the anonymous
// namespace: the device kernels a unit compiled by nvcc makes of it are reached by name from
// every unit (kernel_gather.hpp), which a type of internal linkage cannot be.
namespace streaming_gather {
struct ToDouble {
  using output_type = double;
  template <class T>
  RESIDENT_HOST_DEVICE double operator()(T value, std::size_t /*element*/) const noexcept {
    return static_cast<double>(value);
  }
};
}  // namespace streaming_gather

namespace {
using streaming_gather::ToDouble;

// The gather ring is planned with the chunk slots: a ring that cannot fit beside them refuses
// the dataset when it is made, naming the option that helps; a conversion wider than planned
// is refused when its epoch is made, takes nothing, and leaves the dataset serving as before;
// planned for (DatasetOptions::ring_element_bytes), it runs.
TYPED_TEST(TypedStreamingGather, TheGatherRingIsPlannedWithTheChunkSlots) {
  // Where this unit cannot gather into the space (the fixture skips then), its converted epoch
  // below is not even compiled: kernels no unit defines cannot take this file's own types.
  if constexpr (!resident::testing::ExactSpace<TypeParam>::available ||
                !resident::testing::gathers_here<TypeParam>) {
    GTEST_SKIP() << "skipped: no byte budget: the space cannot be given one";
  } else {
    std::vector<std::int32_t> ids(1000);
    std::iota(ids.begin(), ids.end(), std::int32_t{0});
    const HostTensor<const std::int32_t> tensor(ids.data(), {ids.size()});
    DatasetOptions options = stream_options(100, Remainder::partial, 1, 4, 2);
    // Exactly the chunk slots (4 x 512 B) and the planned gather ring (2 slots of 512 B of
    // values and 800 B of row ids, 1536 B aligned); as doubles, 1024 B of values: 2048 B.
    options.reserve_bytes = 0;
    {
      const resident::testing::ExactSpace<TypeParam> exact(5120);
      const TypeParam& space = exact.space();
      options.ring_depth = 100;  // 100 batch slots: far more than the budget
      try {
        StreamingDataset<TypeParam, std::int32_t> refused(space, options, tensor);
        ADD_FAILURE() << "the rings fitted";
      } catch (const CapacityError& error) {
        EXPECT_NE(std::string(error.what()).find("ring_depth"), std::string::npos) << error.what();
        EXPECT_NE(std::string(error.what()).find("gather ring"), std::string::npos) << error.what();
      }
      EXPECT_EQ(exact.used(), 0u);

      options.ring_depth = 2;
      StreamingDataset<TypeParam, std::int32_t> ds(space, options, tensor);
      EXPECT_GT(ds.planned_ring_bytes(), 0u);
      // Both rings are allocated when the dataset is made: nothing else can take the gather
      // ring's bytes before its first gathering epoch.
      const std::size_t used = exact.used();
      EXPECT_EQ(used, 5120u);
      EXPECT_EQ(ds.ring_bytes(), ds.planned_ring_bytes());
      // A ring of doubles (4096 B) fits where the free bytes and the idle planned ring, which
      // is released for it, hold it: not in the exact budget of a space that keeps one.
      constexpr std::size_t wide_ring = 4096;
      const bool fits = wide_ring <= space.capacity().free_bytes + ds.ring_bytes();
      try {
        (void)ds.epoch({1, 0, Shuffle::samples}, resident::convert<0>(ToDouble{}));
        EXPECT_TRUE(fits) << "a ring twice as wide as planned fitted";
        EXPECT_EQ(ds.ring_bytes(), wide_ring) << "the planned ring gave way to it";
      } catch (const CapacityError& error) {
        EXPECT_FALSE(fits) << error.what();
        EXPECT_NE(std::string(error.what()).find("ring_depth"), std::string::npos) << error.what();
        EXPECT_EQ(exact.used(), used) << "a refused ring takes nothing";
        EXPECT_EQ(ds.ring_bytes(), ds.planned_ring_bytes());
      }
      const std::size_t ring = ds.ring_bytes();
      for (const Shuffle shuffle : {Shuffle::none, Shuffle::batches, Shuffle::samples}) {
        std::size_t rows = 0;
        for (auto [x] : ds.epoch({1, 0, shuffle})) rows += x.valid_rows();
        EXPECT_EQ(rows, ids.size());
      }
      EXPECT_EQ(ds.ring_bytes(), ring);

      // Another dataset in the same space takes every byte left: the gather ring was allocated
      // with the stream, so the stream's converting epochs still run.
      {
        std::vector<std::uint8_t> rest(space.capacity().free_bytes, 1);
        resident::DatasetOptions fill;
        fill.batch_size = 64;
        fill.reserve_bytes = 0;
        DeviceDataset<TypeParam, std::uint8_t> other(
            space, fill, HostTensor<const std::uint8_t>(rest.data(), {rest.size()}));
        EXPECT_EQ(space.capacity().free_bytes, 0u);
        std::size_t rows = 0;
        for (auto [x] : ds.epoch({2, 0, Shuffle::samples},
                                 resident::convert<0>(resident::Normalize{1.0f, 0.0f})))
          rows += x.valid_rows();
        EXPECT_EQ(rows, ids.size());
      }
    }
    options.ring_element_bytes = sizeof(double);
    const resident::testing::ExactSpace<TypeParam> exact(6144);
    StreamingDataset<TypeParam, std::int32_t> wide(exact.space(), options, tensor);
    EXPECT_EQ(wide.planned_ring_bytes(), 4096u);
    std::size_t rows = 0;
    for (auto [x] : wide.epoch({1, 0, Shuffle::samples}, resident::convert<0>(ToDouble{})))
      rows += x.valid_rows();
    EXPECT_EQ(rows, ids.size());
  }
}

}  // namespace
