// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0

// Subsets and splits: a subset serves, epoch after epoch, the batches of a DeviceDataset made
// from copies of its rows, bit for bit, whatever its rows (a range, a list, a random part),
// shuffle, transforms, remainder and rank; a range's runs are views of the dataset's memory;
// a subset outlives its dataset; every refusal comes when a subset is made. A subset of a
// streamed dataset streams the batches of a stream of copies of its rows, in either order, from
// memory or from files.

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <numeric>
#include <set>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "resident/augment.hpp"
#include "resident/convert.hpp"
#include "resident/dataset.hpp"
#include "resident/device_dataset.hpp"
#include "resident/error.hpp"
#include "resident/image_layout.hpp"
#include "resident/load_dataset.hpp"
#include "resident/streaming_dataset.hpp"
#include "resident/subset.hpp"
#include "support/epoch_bytes.hpp"
#include "support/epoch_checks.hpp"
#include "support/small_images.hpp"
#include "support/spaces.hpp"
#include "support/temp_npy.hpp"

namespace {

using resident::DatasetOptions;
using resident::EpochOptions;
using resident::HostTensor;
using resident::Remainder;
using resident::Shuffle;
using resident::testing::read_back;

constexpr std::size_t kRows = 103, kPixels = resident::testing::SmallImages::pixels_per_row;

/// The dataset's images.
struct Images : resident::testing::SmallImages {
  Images() : SmallImages(kRows) {}
};

std::vector<std::size_t> range_rows(std::size_t first, std::size_t count) {
  std::vector<std::size_t> rows(count);
  std::iota(rows.begin(), rows.end(), first);
  return rows;
}

// `all`: a conversion per field, and every augmentation op with the output layout.
enum class Transform { none, all };

template <class Dataset>
resident::testing::EpochBytes record(Dataset& ds, const EpochOptions& options,
                                     Transform transform) {
  if (transform == Transform::none) return resident::testing::record_bytes(ds, ds.epoch(options));
  return resident::testing::record_bytes(ds, resident::testing::every_transform_epoch(ds, options));
}

DatasetOptions options_of(Remainder remainder, int rank, int world) {
  DatasetOptions options = resident::testing::epoch_options(8, remainder);
  options.shard = {rank, world, 0};
  return options;
}

// What `make()` throws as InvalidArgument, or "no refusal".
template <class Make>
std::string refusal(Make&& make) {
  try {
    make();
  } catch (const resident::InvalidArgument& error) {
    return error.what();
  }
  return "no refusal";
}

// Every part of `dataset`, moved from, is refused: ranges and lists of 0 and 1 rows, a split.
template <class Part, class Moved>
void expect_parts_refused(const Moved& dataset, const DatasetOptions& options) {
  for (const std::size_t rows : {0, 1}) {
    EXPECT_NE(refusal([&] { Part(dataset, 0, rows, options); }).find("moved from"),
              std::string::npos);
    EXPECT_NE(refusal([&] {
                Part(dataset, std::vector<std::size_t>(rows, 0), options);
              }).find("moved from"),
              std::string::npos);
  }
  EXPECT_NE(
      refusal([&] { (void)resident::random_split(dataset, {}, 1, options); }).find("moved from"),
      std::string::npos);
}

// A part's epochs against the reference's (a DeviceDataset of the copied rows; for a streamed
// part in window order, a stream of them), two epochs of each shuffle and transform; returns
// the cells compared.
template <class Reference, class Part>
std::size_t expect_same_epochs(Reference& reference, Part& part) {
  EXPECT_EQ(part.num_rows(), reference.num_rows());
  EXPECT_EQ(part.num_batches(), reference.num_batches());
  std::size_t cells = 0;
  for (const Shuffle shuffle : {Shuffle::none, Shuffle::batches, Shuffle::samples}) {
    for (const Transform transform : {Transform::none, Transform::all}) {
      SCOPED_TRACE(resident::testing::shuffle_name(shuffle) +
                   std::string(transform == Transform::all ? ", all transforms" : ""));
      for (const std::uint64_t epoch : {0, 1}) {
        const EpochOptions epoch_options{11, epoch, shuffle};
        const auto expected = record(reference, epoch_options, transform);
        const auto got = record(part, epoch_options, transform);
        EXPECT_EQ(got.valid, expected.valid);
        EXPECT_TRUE(got == expected) << "the batches differ from the copied rows'";
      }
      ++cells;
    }
  }
  return cells;
}

template <class Space>
using Dataset = resident::DeviceDataset<Space, std::uint8_t, std::int32_t>;
template <class Space>
using Subset = resident::Subset<Space, std::uint8_t, std::int32_t>;

template <class Space>
using SubsetEpochs = resident::testing::OverGatheringSpaces<Space>;
TYPED_TEST_SUITE(SubsetEpochs, resident::testing::GatherSpaceTypes, resident::testing::SpaceName);

// The matrix: rows (a range, a random part, a list with repeats in reverse) x remainder x rank
// of 1 and 2 ranks x shuffle x transform, two epochs each: the batches of the dataset of the
// rows' copies, bit for bit.
TYPED_TEST(SubsetEpochs, EveryPartServesTheBatchesOfADatasetOfItsRows) {
  const Images data;
  const Dataset<TypeParam> dataset(
      this->space_, resident::testing::epoch_options(16, Remainder::drop), data.x(), data.y());
  std::vector<std::size_t> listed = resident::random_split_rows(kRows, {61, 42}, 7)[1];
  listed.insert(listed.end(), {5, 5, 102, 0});
  std::reverse(listed.begin(), listed.end());
  const std::vector<std::pair<const char*, std::vector<std::size_t>>> selections{
      {"range", range_rows(10, 57)},
      {"random part", resident::random_split_rows(kRows, {61, 42}, 7)[0]},
      {"list", listed}};
  std::size_t cells = 0;
  for (const auto& [name, rows] : selections) {
    const auto copied = data.take(rows);
    for (const int world : {1, 2}) {
      for (int rank = 0; rank < world; ++rank) {
        for (const Remainder remainder : {Remainder::drop, Remainder::partial, Remainder::pad}) {
          const DatasetOptions options = options_of(remainder, rank, world);
          Dataset<TypeParam> reference(this->space_, options, copied.x(), copied.y());
          Subset<TypeParam> subset = name == std::string("range")
                                         ? Subset<TypeParam>(dataset, 10, 57, options)
                                         : Subset<TypeParam>(dataset, rows, options);
          SCOPED_TRACE(std::string(name) + ", rank " + std::to_string(rank) + " of " +
                       std::to_string(world) + ", " + resident::remainder_name(remainder));
          EXPECT_EQ(subset.contiguous(), name == std::string("range"));
          cells += expect_same_epochs(reference, subset);
        }
      }
    }
  }
  EXPECT_EQ(cells, 3u * 3 * 3 * 3 * 2);
}

// A range's runs are views of the dataset's memory, shared with it; its padded last batch is
// gathered; a list's batches are gathered.
TYPED_TEST(SubsetEpochs, ARangesRunsAreViewsOfTheDatasetsMemory) {
  const Images data;
  const Dataset<TypeParam> dataset(
      this->space_, resident::testing::epoch_options(16, Remainder::drop), data.x(), data.y());
  Subset<TypeParam> range(dataset, 10, 57, resident::testing::epoch_options(8, Remainder::pad));
  EXPECT_TRUE(range.contiguous());
  EXPECT_EQ(range.storage_owner(), dataset.storage_owner());
  EXPECT_EQ(range.dataset_row(0), 10u);
  EXPECT_EQ(range.dataset_row(56), 66u);
  EXPECT_THROW((void)range.dataset_row(57), std::out_of_range);
  std::size_t k = 0;
  for (auto [x, y] : range.epoch()) {
    const std::uint8_t* at = dataset.template field<0>().data() + (10 + k * 8) * kPixels;
    if (k + 1 < range.num_batches()) {
      EXPECT_EQ(x.data(), at) << "batch " << k << " is no view";
      EXPECT_EQ(range.impl_owner_of(y.data(), y.bytes()), dataset.storage_owner());
    } else {
      EXPECT_NE(x.data(), at) << "the padded batch viewed the rows after the range";
      EXPECT_EQ(y.valid_rows(), 1u);
    }
    ++k;
  }
  EXPECT_EQ(k, 8u);
  const Subset<TypeParam> list(dataset, std::vector<std::size_t>{3, 1, 2},
                               resident::testing::epoch_options(8, Remainder::partial));
  EXPECT_FALSE(list.contiguous());
  EXPECT_EQ(list.dataset_row(1), 1u);
  EXPECT_EQ(list.map_bytes(), 3 * sizeof(std::uint64_t));
}

// A subset keeps the dataset's memory: destroyed or moved from, the dataset's rows are still
// served; moved from, a subset is empty, and the epochs made before throw.
TYPED_TEST(SubsetEpochs, ASubsetOutlivesItsDatasetAndAMoveEmptiesIt) {
  const Images data;
  const std::vector<std::size_t> rows = resident::random_split_rows(kRows, {50, 53}, 3)[0];
  const auto copied = data.take(rows);
  const DatasetOptions options = resident::testing::epoch_options(8, Remainder::partial);
  Dataset<TypeParam> reference(this->space_, options, copied.x(), copied.y());
  const EpochOptions shuffled{5, 0, Shuffle::samples};
  const auto expected = record(reference, shuffled, Transform::all);
  auto dataset = std::make_unique<Dataset<TypeParam>>(
      this->space_, resident::testing::epoch_options(16, Remainder::drop), data.x(), data.y());
  Subset<TypeParam> subset(*dataset, rows, options);
  Dataset<TypeParam> moved_to = std::move(*dataset);
  dataset.reset();
  EXPECT_TRUE(record(subset, shuffled, Transform::all) == expected);
  auto epoch = subset.epoch(shuffled);
  Subset<TypeParam> taken = std::move(subset);
  // NOLINTBEGIN(bugprone-use-after-move): what a moved-from subset answers
  EXPECT_TRUE(subset.moved_from());
  EXPECT_EQ(subset.num_rows(), 0u);
  EXPECT_EQ(subset.map_bytes(), 0u);
  EXPECT_FALSE(subset.contiguous());
  EXPECT_EQ(subset.storage_owner(), nullptr);
  // NOLINTEND(bugprone-use-after-move)
  EXPECT_THROW((void)epoch.batch(0), resident::Error);
  EXPECT_TRUE(record(taken, shuffled, Transform::all) == expected);
}

// An epoch of a subset resumes from its state where it stopped, batch for batch.
TYPED_TEST(SubsetEpochs, AnEpochResumesWhereItStopped) {
  const Images data;
  const Dataset<TypeParam> dataset(
      this->space_, resident::testing::epoch_options(16, Remainder::drop), data.x(), data.y());
  for (const bool range : {true, false}) {
    Subset<TypeParam> subset =
        range
            ? Subset<TypeParam>(dataset, 7, 90, resident::testing::epoch_options(8, Remainder::pad))
            : Subset<TypeParam>(dataset, resident::random_split_rows(kRows, {90, 13}, 1)[0],
                                resident::testing::epoch_options(8, Remainder::pad));
    for (const Shuffle shuffle : {Shuffle::none, Shuffle::batches, Shuffle::samples}) {
      SCOPED_TRACE(std::string(range ? "range, " : "list, ") +
                   resident::testing::shuffle_name(shuffle));
      resident::testing::expect_resumes_where_it_stopped(subset, EpochOptions{9, 2, shuffle}, 5);
    }
  }
}

// Every refusal comes when the subset is made, names what was expected and found, and loses
// nothing: the dataset serves as before.
TYPED_TEST(SubsetEpochs, BadRowsAreRefusedWhenTheSubsetIsMade) {
  const Images data;
  Dataset<TypeParam> dataset(this->space_, resident::testing::epoch_options(16, Remainder::drop),
                             data.x(), data.y());
  const DatasetOptions options = resident::testing::epoch_options(8, Remainder::drop);
  EXPECT_NE(refusal([&] { Subset<TypeParam>(dataset, 100, 4, options); }).find("reach past"),
            std::string::npos);
  EXPECT_NE(refusal([&] { Subset<TypeParam>(dataset, SIZE_MAX, 2, options); }).find("103 rows"),
            std::string::npos);
  EXPECT_NE(refusal([&] { Subset<TypeParam>(dataset, 1, SIZE_MAX, options); }).find("103 rows"),
            std::string::npos);
  EXPECT_NE(refusal([&] {
              Subset<TypeParam>(dataset, std::vector<std::size_t>{0, 103}, options);
            }).find("row 1 of the subset is 103"),
            std::string::npos);
  DatasetOptions no_batch = options;
  no_batch.batch_size = 0;
  EXPECT_NE(refusal([&] { Subset<TypeParam>(dataset, 0, 10, no_batch); }), "no refusal");
  EXPECT_NE(refusal([&] {
              (void)resident::random_split(dataset, {50, 50}, 1, options);
            }).find("sum to 100 rows, but there are 103"),
            std::string::npos);
  EXPECT_NE(refusal([&] {
              (void)resident::random_split(dataset, {100, SIZE_MAX}, 1, options);
            }).find("more than 103"),
            std::string::npos);
  // Edges: no rows, one row, every row.
  EXPECT_EQ(Subset<TypeParam>(dataset, 103, 0, options).num_batches(), 0u);
  EXPECT_EQ(Subset<TypeParam>(dataset, std::vector<std::size_t>{}, options).map_bytes(), 0u);
  EXPECT_EQ(Subset<TypeParam>(dataset, 102, 1, resident::testing::epoch_options(8, Remainder::pad))
                .num_batches(),
            1u);
  EXPECT_EQ(Subset<TypeParam>(dataset, 0, 103, options).num_batches(), 12u);
  Dataset<TypeParam> moved_to = std::move(dataset);
  // NOLINTNEXTLINE(bugprone-use-after-move): subsets of a moved-from dataset are refused
  expect_parts_refused<Subset<TypeParam>>(dataset, options);
  EXPECT_EQ(Subset<TypeParam>(moved_to, 0, 103, options).num_rows(), 103u);
}

// The row map passes the capacity check every allocation passes.
TYPED_TEST(SubsetEpochs, ARowMapThatDoesNotFitIsRefusedWithTheFigures) {
  if constexpr (!resident::testing::has_budget<TypeParam>::value) {
    GTEST_SKIP() << "skipped: the space takes no byte budget";
  } else {
    const Images data;
    const auto space = this->space_.with_budget(std::size_t{64} << 10);
    const Dataset<TypeParam> dataset(space, resident::testing::epoch_options(16, Remainder::drop),
                                     data.x(), data.y());
    DatasetOptions options = resident::testing::epoch_options(8, Remainder::drop);
    options.reserve_bytes = space.capacity().free_bytes - 100;  // 12 rows' map fits, 13 do not
    EXPECT_EQ(Subset<TypeParam>(dataset, 0, 12, options).map_bytes(), 96u);
    try {
      (void)Subset<TypeParam>(dataset, 0, 13, options);
      FAIL() << "no refusal";
    } catch (const resident::CapacityError& error) {
      EXPECT_EQ(error.needed_bytes(), 104u);
      EXPECT_NE(std::string(error.what()).find("row map"), std::string::npos) << error.what();
    }
  }
}

// A padded layout may store far more rows than it has: its map is refused by the capacity
// check before it is made on the host.
TYPED_TEST(SubsetEpochs, AHugePaddedMapIsRefusedBeforeItIsMade) {
  const Images data;
  const Dataset<TypeParam> dataset(
      this->space_, resident::testing::epoch_options(16, Remainder::drop), data.x(), data.y());
  for (const std::size_t batch : {std::size_t{1} << 40, std::size_t{1} << 60}) {
    try {
      (void)Subset<TypeParam>(dataset, 0, 3,
                              resident::testing::epoch_options(batch, Remainder::pad));
      FAIL() << "no refusal";
    } catch (const resident::CapacityError& error) {
      EXPECT_EQ(error.needed_bytes(), batch * sizeof(std::uint64_t));
      EXPECT_NE(std::string(error.what()).find("Remainder::pad"), std::string::npos)
          << error.what();
    } catch (const resident::InvalidArgument& error) {
      EXPECT_EQ(batch, std::size_t{1} << 60) << error.what();  // its bytes overflow
    }
  }
}

// PyTorch's rule for fractions, and its refusals.
TEST(SplitLengths, CountAsPyTorchCountsThem) {
  EXPECT_EQ(resident::split_lengths(10, {0.3, 0.3, 0.4}), (std::vector<std::size_t>{3, 3, 4}));
  EXPECT_EQ(resident::split_lengths(11, {0.5, 0.5}), (std::vector<std::size_t>{6, 5}));
  EXPECT_EQ(resident::split_lengths(7, {1.0 / 3, 1.0 / 3, 1.0 / 3}),
            (std::vector<std::size_t>{3, 2, 2}));
  EXPECT_EQ(resident::split_lengths(0, {0.8, 0.2}), (std::vector<std::size_t>{0, 0}));
  EXPECT_EQ(resident::split_lengths(1, {0.8, 0.2}), (std::vector<std::size_t>{1, 0}));
  EXPECT_EQ(resident::split_lengths(SIZE_MAX, {1.0}), (std::vector<std::size_t>{SIZE_MAX}));
  const auto halves = resident::split_lengths(SIZE_MAX, {0.5, 0.5});
  EXPECT_EQ(halves[0] + halves[1], SIZE_MAX);
  EXPECT_THROW((void)resident::split_lengths(10, {}), resident::InvalidArgument);
  EXPECT_THROW((void)resident::split_lengths(10, {0.5, 0.6}), resident::InvalidArgument);
  EXPECT_THROW((void)resident::split_lengths(10, {1.5, -0.5}), resident::InvalidArgument);
  EXPECT_THROW((void)resident::split_lengths(10, {std::nan(""), 1.0}), resident::InvalidArgument);
}

// The parts of a random split are disjoint, cover every row, and depend on the seed alone.
TEST(RandomSplitRows, PartsAreDisjointCoverEveryRowAndFollowTheSeed) {
  for (const std::size_t rows : {std::size_t{0}, std::size_t{1}, std::size_t{2}, std::size_t{97}}) {
    const std::vector<std::size_t> lengths = resident::split_lengths(rows, {0.7, 0.2, 0.1});
    const auto parts = resident::random_split_rows(rows, lengths, 42);
    ASSERT_EQ(parts.size(), 3u);
    std::set<std::size_t> seen;
    for (std::size_t part = 0; part < 3; ++part) {
      EXPECT_EQ(parts[part].size(), lengths[part]);
      seen.insert(parts[part].begin(), parts[part].end());
    }
    EXPECT_EQ(seen.size(), rows);
    if (rows != 0) {
      EXPECT_EQ(*seen.rbegin(), rows - 1);
    }
    EXPECT_EQ(resident::random_split_rows(rows, lengths, 42), parts);
  }
  EXPECT_NE(resident::random_split_rows(97, {50, 47}, 1),
            resident::random_split_rows(97, {50, 47}, 2));
  EXPECT_THROW((void)resident::random_split_rows(3, {1, 1}, 0), resident::InvalidArgument);
  EXPECT_THROW((void)resident::random_split_rows(3, {SIZE_MAX, 4}, 0), resident::InvalidArgument);
}

}  // namespace

namespace {

template <class Space>
using Stream = resident::StreamingDataset<Space, std::uint8_t, std::int32_t>;

// Options of a stream in `order`, of chunks of two batches, cut as `options_of` cuts them.
DatasetOptions stream_options(Remainder remainder, int rank, int world,
                              resident::StreamOrder order) {
  DatasetOptions options = options_of(remainder, rank, world);
  options.streaming.order = order;
  options.streaming.chunk_batches = 2;
  options.streaming.chunk_slots = 3;
  options.streaming.prefetch_chunks = 1;
  return options;
}

}  // namespace

// The matrix of a stream's subsets: order (whole-epoch, window) x rows (a range, a random part,
// a list with repeats in reverse, a list of a list) x remainder x rank of 1 and 2 ranks x
// shuffle x transform, two epochs each: the batches of a stream of the rows' copies in that
// order (in whole-epoch order, a DeviceDataset's), bit for bit.
TYPED_TEST(SubsetEpochs, EveryPartOfAStreamServesTheBatchesOfAStreamOfItsRows) {
  const Images data;
  std::vector<std::size_t> listed = resident::random_split_rows(kRows, {61, 42}, 7)[1];
  listed.insert(listed.end(), {5, 5, 102, 0});
  std::reverse(listed.begin(), listed.end());
  std::vector<std::size_t> every_other, of_listed;  // rows of a subset of the `listed` subset
  for (std::size_t row = 0; row < listed.size(); row += 2) {
    every_other.push_back(row);
    of_listed.push_back(listed[row]);
  }
  std::size_t cells = 0;
  for (const auto order : {resident::StreamOrder::whole_epoch, resident::StreamOrder::window}) {
    const Stream<TypeParam> dataset(this->space_, stream_options(Remainder::drop, 0, 1, order),
                                    data.x(), data.y());
    ASSERT_EQ(dataset.order(), order);
    const auto split =
        resident::random_split(dataset, {61, 42}, 7, stream_options(Remainder::drop, 0, 1, order));
    ASSERT_EQ(split.size(), 2u);
    const std::vector<std::pair<const char*, std::vector<std::size_t>>> selections{
        {"range", range_rows(10, 57)},
        {"random part", resident::random_split_rows(kRows, {61, 42}, 7)[0]},
        {"list", listed},
        {"list of a list", of_listed}};
    const Stream<TypeParam> of_list(dataset, listed, stream_options(Remainder::drop, 0, 1, order));
    for (const auto& [name, rows] : selections) {
      const auto copied = data.take(rows);
      for (const int world : {1, 2}) {
        for (int rank = 0; rank < world; ++rank) {
          for (const Remainder remainder : {Remainder::drop, Remainder::partial, Remainder::pad}) {
            const DatasetOptions options = stream_options(remainder, rank, world, order);
            SCOPED_TRACE(std::string(resident::stream_order_name(order)) + ", " + name + ", rank " +
                         std::to_string(rank) + " of " + std::to_string(world) + ", " +
                         resident::remainder_name(remainder));
            const std::string which = name;
            const auto make_part = [&, &rows = rows]() -> Stream<TypeParam> {
              if (which == "range") return {dataset, 10, 57, options};
              if (which == "list of a list") return {of_list, every_other, options};
              return {dataset, rows, options};
            };
            Stream<TypeParam> part = make_part();
            ASSERT_EQ(part.order(), order);
            if (order == resident::StreamOrder::whole_epoch) {
              Dataset<TypeParam> reference(this->space_, options, copied.x(), copied.y());
              cells += expect_same_epochs(reference, part);
            } else {
              Stream<TypeParam> reference(this->space_, options, copied.x(), copied.y());
              cells += expect_same_epochs(reference, part);
            }
            if (which == "random part" && world == 1 && remainder == Remainder::drop) {
              Stream<TypeParam> split_part =
                  std::move(resident::random_split(dataset, {61, 42}, 7, options)[0]);
              Stream<TypeParam> listed_part(dataset, rows, options);
              cells += expect_same_epochs(listed_part, split_part);
            }
          }
        }
      }
    }
  }
  EXPECT_EQ(cells, 2u * (4 * 3 * 3 * 3 * 2 + 3 * 2));
}

// A subset of a stream read from files (in window order, a chunk's rows read where they lie
// in the files, the runs of consecutive rows at once; in whole-epoch order, the files' rows in
// memory) serves the batches of a stream of the rows' copies, and outlives its dataset.
TYPED_TEST(SubsetEpochs, APartOfAStreamOfFilesServesItsRowsAndOutlivesTheStream) {
  const Images data;
  const resident::testing::TempNpy x("subset_x", data.pixels, {kRows, 3, 4, 4});
  const resident::testing::TempNpy y("subset_y", data.labels, {kRows});
  const std::vector<std::size_t> rows = resident::random_split_rows(kRows, {70, 33}, 4)[1];
  std::vector<std::size_t> runs = range_rows(20, 30);  // runs of consecutive rows, and a repeat
  runs.insert(runs.end(), {3, 4, 5, 5, 90, 91});
  for (const auto order : {resident::StreamOrder::whole_epoch, resident::StreamOrder::window}) {
    for (const auto& selection : {rows, runs}) {
      const DatasetOptions options = stream_options(Remainder::pad, 1, 2, order);
      auto dataset = std::make_unique<Stream<TypeParam>>(
          resident::load_streaming_dataset<TypeParam, std::uint8_t, std::int32_t>(
              this->space_, stream_options(Remainder::drop, 0, 1, order), x.path, y.path));
      Stream<TypeParam> part(*dataset, selection, options);
      dataset.reset();
      const auto copied = data.take(selection);
      Stream<TypeParam> reference(this->space_, options, copied.x(), copied.y());
      SCOPED_TRACE(resident::stream_order_name(order));
      EXPECT_EQ(part.order(), order);
      EXPECT_EQ(expect_same_epochs(reference, part), 6u);
    }
  }
  // A whole-epoch part of files read in window order is refused, saying which order to take.
  const Stream<TypeParam> windows =
      resident::load_streaming_dataset<TypeParam, std::uint8_t, std::int32_t>(
          this->space_, stream_options(Remainder::drop, 0, 1, resident::StreamOrder::window),
          x.path, y.path);
  const DatasetOptions whole =
      stream_options(Remainder::drop, 0, 1, resident::StreamOrder::whole_epoch);
  EXPECT_NE(refusal([&] {
              Stream<TypeParam>(windows, 0, 10, whole);
            }).find("a dataset that reads its files in window order"),
            std::string::npos);
  EXPECT_NE(refusal([&] {
              (void)resident::random_split(windows, {50, 53}, 1, whole);
            }).find("stream the subset in StreamOrder::window or automatic"),
            std::string::npos);
  EXPECT_EQ(
      Stream<TypeParam>(windows, rows,
                        stream_options(Remainder::drop, 0, 1, resident::StreamOrder::automatic))
          .order(),
      resident::StreamOrder::window);
}

// A file cut under a running epoch of a whole-epoch part: every later batch is the copied
// rows' or a FormatError, never other bytes; on the host, which gathers the part's rows where
// they lie in the file's mapping, every later batch is refused.
TYPED_TEST(SubsetEpochs, AFileCutUnderAPartGivesFormatErrorsAndNeverWrongBytes) {
  const Images data;
  const resident::testing::TempNpy x("subset_cut_x", data.pixels, {kRows, 3, 4, 4});
  const resident::testing::TempNpy y("subset_cut_y", data.labels, {kRows});
  const std::vector<std::size_t> rows = resident::random_split_rows(kRows, {70, 33}, 5)[0];
  const DatasetOptions options =
      stream_options(Remainder::pad, 0, 1, resident::StreamOrder::whole_epoch);
  const auto dataset = resident::load_streaming_dataset<TypeParam, std::uint8_t, std::int32_t>(
      this->space_, options, x.path, y.path);
  Stream<TypeParam> part(dataset, rows, options);
  const auto copied = data.take(rows);
  Stream<TypeParam> reference(this->space_, options, copied.x(), copied.y());
  const EpochOptions epoch_options{3, 0, Shuffle::samples};
  auto expected = reference.epoch(epoch_options);
  auto epoch = part.epoch(epoch_options);
  (void)epoch.batch(0);
  ASSERT_EQ(::truncate(x.path.c_str(), 1024), 0);
  std::size_t refused = 0;
  for (std::size_t k = 1; k < epoch.size(); ++k) {
    try {
      auto [got_x, got_y] = epoch.batch(k);
      auto [want_x, want_y] = expected.batch(k);
      EXPECT_EQ(read_back(part.space(), part.stream(), got_x),
                read_back(reference.space(), reference.stream(), want_x))
          << "batch " << k;
      EXPECT_EQ(read_back(part.space(), part.stream(), got_y),
                read_back(reference.space(), reference.stream(), want_y))
          << "batch " << k;
    } catch (const resident::FormatError& error) {
      EXPECT_NE(std::string(error.what()).find("changed"), std::string::npos) << error.what();
      ++refused;
    }
  }
  if constexpr (std::is_same_v<TypeParam, resident::HostSpace>) {
    EXPECT_EQ(refused, epoch.size() - 1);
  }
}

// A part of one rank's stream takes that rank's rows (`num_rows()`, from `first_row()` on),
// in either order.
TYPED_TEST(SubsetEpochs, APartOfARanksStreamTakesThatRanksRows) {
  const Images data;
  for (const auto order : {resident::StreamOrder::whole_epoch, resident::StreamOrder::window}) {
    for (int rank = 0; rank < 3; ++rank) {
      const Stream<TypeParam> dataset(this->space_, stream_options(Remainder::pad, rank, 3, order),
                                      data.x(), data.y());
      const std::vector<std::size_t> rows{dataset.num_rows() - 1, 0, 2, 3, 4, 1};
      std::vector<std::size_t> global(rows.size());
      std::transform(rows.begin(), rows.end(), global.begin(),
                     [&](std::size_t row) { return dataset.first_row() + row; });
      const auto copied = data.take(global);
      const DatasetOptions options = stream_options(Remainder::partial, 0, 1, order);
      Stream<TypeParam> part(dataset, rows, options);
      Stream<TypeParam> reference(this->space_, options, copied.x(), copied.y());
      SCOPED_TRACE(std::string(resident::stream_order_name(order)) + ", rank " +
                   std::to_string(rank));
      EXPECT_EQ(expect_same_epochs(reference, part), 6u);
    }
  }
}

// Refusals come when the subset is made, as a DeviceDataset's subsets' do, and lose nothing:
// the dataset streams as before; a moved-from part is empty, and its epochs made before throw.
TYPED_TEST(SubsetEpochs, BadRowsOfAStreamAreRefusedWhenThePartIsMade) {
  const Images data;
  const DatasetOptions options =
      stream_options(Remainder::drop, 0, 1, resident::StreamOrder::whole_epoch);
  Stream<TypeParam> dataset(this->space_, options, data.x(), data.y());
  EXPECT_NE(refusal([&] { Stream<TypeParam>(dataset, 100, 4, options); }).find("reach past"),
            std::string::npos);
  EXPECT_NE(refusal([&] { Stream<TypeParam>(dataset, 1, SIZE_MAX, options); }).find("103 rows"),
            std::string::npos);
  EXPECT_NE(refusal([&] {
              Stream<TypeParam>(dataset, std::vector<std::size_t>{7, SIZE_MAX}, options);
            }).find("row 1 of the subset is 18446744073709551615"),
            std::string::npos);
  EXPECT_NE(refusal([&] {
              (void)resident::random_split(dataset, {100, 4}, 1, options);
            }).find("more than 103"),
            std::string::npos);
  // Edges: no rows, one row, every row.
  EXPECT_EQ(Stream<TypeParam>(dataset, 103, 0, options).num_batches(), 0u);
  EXPECT_EQ(Stream<TypeParam>(dataset, std::vector<std::size_t>{}, options).num_rows(), 0u);
  EXPECT_EQ(
      Stream<TypeParam>(dataset, 102, 1,
                        stream_options(Remainder::pad, 0, 1, resident::StreamOrder::automatic))
          .num_batches(),
      1u);
  Stream<TypeParam> whole(dataset, 0, 103, options);
  Dataset<TypeParam> reference(this->space_, options, data.x(), data.y());
  EXPECT_EQ(expect_same_epochs(reference, whole), 6u);
  auto epoch = whole.epoch({3, 0, Shuffle::samples});
  Stream<TypeParam> taken = std::move(whole);
  // NOLINTBEGIN(bugprone-use-after-move): what a moved-from part answers, and parts of it
  EXPECT_TRUE(whole.moved_from());
  EXPECT_EQ(whole.num_rows(), 0u);
  EXPECT_EQ(whole.bytes(), 0u);
  EXPECT_THROW((void)epoch.batch(0), resident::Error);
  expect_parts_refused<Stream<TypeParam>>(whole, options);
  // NOLINTEND(bugprone-use-after-move)
  EXPECT_EQ(expect_same_epochs(reference, taken), 6u);
  EXPECT_EQ(expect_same_epochs(reference, dataset), 6u);
}

// What make_dataset made splits into parts held as it is, preloaded (parts of its allocation)
// or streamed (parts streamed from its sources, each with chunk slots of its own): each part
// serves the batches of a DeviceDataset of its rows, and a moved-from dataset has no part.
TYPED_TEST(SubsetEpochs, PartsOfWhatMakeDatasetMadeServeTheirRowsPreloadedOrStreamed) {
  if constexpr (!resident::testing::has_budget<TypeParam>::value) {
    GTEST_SKIP() << "skipped: the space takes no byte budget";
  } else {
    const resident::testing::SmallImages data(1000);  // 52 KB
    for (const std::size_t budget : {std::size_t{1} << 20, std::size_t{40} << 10}) {
      const auto space = this->space_.with_budget(budget);
      const DatasetOptions options =
          stream_options(Remainder::partial, 0, 1, resident::StreamOrder::automatic);
      auto dataset = resident::make_dataset(space, options, data.x(), data.y());
      SCOPED_TRACE(dataset.is_streaming() ? "streamed" : "preloaded");
      EXPECT_EQ(dataset.is_streaming(), budget < (std::size_t{1} << 20));
      auto parts = resident::random_split(dataset, {700, 300}, 5, options);
      ASSERT_EQ(parts.size(), 2u);
      parts.emplace_back(dataset, 100, 250, options);
      const std::vector<std::vector<std::size_t>> rows{
          resident::random_split_rows(1000, {700, 300}, 5)[0],
          resident::random_split_rows(1000, {700, 300}, 5)[1], range_rows(100, 250)};
      for (std::size_t part = 0; part < parts.size(); ++part) {
        SCOPED_TRACE("part " + std::to_string(part));
        EXPECT_EQ(parts[part].is_streaming(), dataset.is_streaming());
        EXPECT_EQ(parts[part].plan().recommendation, dataset.plan().recommendation);
        const auto copied = data.take(rows[part]);
        Dataset<TypeParam> reference(this->space_, options, copied.x(), copied.y());
        EXPECT_EQ(expect_same_epochs(reference, parts[part]), 6u);
      }
      auto moved_to = std::move(dataset);
      // NOLINTNEXTLINE(bugprone-use-after-move): a moved-from dataset has no part
      expect_parts_refused<resident::DatasetSubset<TypeParam, std::uint8_t, std::int32_t>>(dataset,
                                                                                           options);
    }
  }
}
