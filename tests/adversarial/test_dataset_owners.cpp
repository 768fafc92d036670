// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// What the three dataset owners (DeviceDataset, StreamingDataset and the Dataset that
// make_dataset returns) promise alike: moves and swaps that are noexcept, onto themselves and
// mid-pass, leaving a moved-from owner empty and saying so; every byte of the budget returned
// at every end; StreamingEpoch::wait/release naming each wrong use; the same batches from every
// kind for odd sizes, ranks and remainders; the accessors read through a const reference to
// the DatasetAccessors base; and a memory space written from the concept alone, which records
// any use of a stream after its destroy_stream.

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "resident/resident.hpp"
#include "support/labelled_rows.hpp"

namespace {

using resident::DatasetOptions;
using resident::DeviceDataset;
using resident::EpochOptions;
using resident::HostSpace;
using resident::Remainder;
using resident::Shuffle;
using resident::StreamingDataset;
using resident::testing::LabelledRows;

using HostDevice = DeviceDataset<HostSpace, float, std::int32_t>;
using HostStreaming = StreamingDataset<HostSpace, float, std::int32_t>;
using HostDataset = resident::Dataset<HostSpace, float, std::int32_t>;

constexpr std::size_t columns = 4;

DatasetOptions options_of(std::size_t batch, Remainder remainder = Remainder::partial) {
  DatasetOptions options;
  options.batch_size = batch;
  options.remainder = remainder;
  options.reserve_bytes = 0;
  options.streaming.chunk_batches = 2;
  return options;
}

/// Moves `value` onto itself without the compiler's self-move warning.
template <class T>
void self_move(T& value) {
  T* alias = &value;
  value = std::move(*alias);
}

/// The labels (field 1) of a host batch, padding included.
template <class Batch>
std::vector<std::int32_t> labels_of(const Batch& batch) {
  const auto& labels = std::get<1>(batch);
  return {labels.data(), labels.data() + labels.rows()};
}

/// Every feature of every row of a host batch equals the row's label (as LabelledRows makes
/// them), so that the two fields of a batch agree.
template <class Batch>
void expect_rows_agree(const Batch& batch) {
  const auto& [features, labels] = batch;
  ASSERT_EQ(features.rows(), labels.rows());
  ASSERT_EQ(features.valid_rows(), labels.valid_rows());
  for (std::size_t r = 0; r < labels.rows(); ++r)
    for (std::size_t c = 0; c < columns; ++c)
      ASSERT_EQ(features.data()[r * columns + c], static_cast<float>(labels.data()[r]))
          << "row " << r << " column " << c;
}

/// The labels of batch `k` of an unshuffled partial epoch over rows 0..n-1, offset by `base`.
std::vector<std::int32_t> expected_labels(std::size_t k, std::size_t batch, std::size_t rows,
                                          std::int32_t base = 0) {
  std::vector<std::int32_t> labels;
  for (std::size_t r = k * batch; r < std::min(rows, (k + 1) * batch); ++r)
    labels.push_back(base + static_cast<std::int32_t>(r));
  return labels;
}

/// Features and labels whose values start at `base`, so that two datasets can be told apart.
struct OffsetRows {
  OffsetRows(std::size_t rows, std::int32_t base) : features(rows * columns), labels(rows) {
    for (std::size_t r = 0; r < rows; ++r) {
      labels[r] = base + static_cast<std::int32_t>(r);
      for (std::size_t c = 0; c < columns; ++c)
        features[r * columns + c] = static_cast<float>(labels[r]);
    }
  }
  [[nodiscard]] resident::HostTensor<const float> x() const {
    return {features.data(), {labels.size(), columns}};
  }
  [[nodiscard]] resident::HostTensor<const std::int32_t> y() const {
    return {labels.data(), {labels.size()}};
  }
  std::vector<float> features;
  std::vector<std::int32_t> labels;
};

/// `use` throws `resident::Error` (not std::out_of_range) whose message contains `words`.
void expect_error(const std::function<void()>& use, const std::string& words) {
  try {
    use();
    ADD_FAILURE() << "no error; expected one saying '" << words << "'";
  } catch (const std::out_of_range& error) {
    ADD_FAILURE() << "expected resident::Error saying '" << words
                  << "', got std::out_of_range: " << error.what();
  } catch (const resident::Error& error) {
    EXPECT_NE(std::string(error.what()).find(words), std::string::npos) << error.what();
  }
}

/// `use` throws std::out_of_range whose message contains `words`.
void expect_out_of_range(const std::function<void()>& use, const std::string& words) {
  try {
    use();
    ADD_FAILURE() << "no error; expected std::out_of_range saying '" << words << "'";
  } catch (const std::out_of_range& error) {
    EXPECT_NE(std::string(error.what()).find(words), std::string::npos) << error.what();
  } catch (const std::exception& error) {
    ADD_FAILURE() << "expected std::out_of_range, got: " << error.what();
  }
}

/// Reads every batch of `epoch` (by index) and returns all valid labels in order.
template <class Epoch>
std::vector<std::int32_t> read_epoch(Epoch& epoch) {
  std::vector<std::int32_t> all;
  for (std::size_t k = 0; k < epoch.size(); ++k) {
    const auto batch = epoch.batch(k);
    expect_rows_agree(batch);
    const auto& labels = std::get<1>(batch);
    all.insert(all.end(), labels.data(), labels.data() + labels.valid_rows());
  }
  return all;
}

std::vector<std::int32_t> iota_labels(std::size_t rows, std::int32_t base = 0) {
  std::vector<std::int32_t> labels(rows);
  for (std::size_t r = 0; r < rows; ++r) labels[r] = base + static_cast<std::int32_t>(r);
  return labels;
}

constexpr const char* changed_since = "moved from, assigned, swapped or destroyed";
constexpr const char* made_moved_from = "made from a moved-from dataset";

/// A `make_dataset` that streams: a budget below the data but above the ring.
HostDataset streaming_dataset(const OffsetRows& rows, DatasetOptions options,
                              HostSpace& space_out) {
  // Three chunk slots and a gather ring of one batch, so that they fit in a byte less than the
  // preload needs.
  options.ring_depth = 1;
  options.streaming.chunk_slots = 3;
  options.streaming.prefetch_chunks = 1;
  const auto probe =
      resident::plan(HostSpace::with_budget(std::size_t{1} << 30), options, rows.x(), rows.y());
  space_out = HostSpace::with_budget(probe.needed_bytes - 1);
  return resident::make_dataset(space_out, options, rows.x(), rows.y());
}

// ---------------------------------------------------------------------------------------
// Moves, self-moves, swaps

TEST(OwnerMoves, MovesAndSwapsAreNoexcept) {
  static_assert(std::is_nothrow_move_constructible_v<HostDevice>);
  static_assert(std::is_nothrow_move_assignable_v<HostDevice>);
  static_assert(std::is_nothrow_move_constructible_v<HostStreaming>);
  static_assert(std::is_nothrow_move_assignable_v<HostStreaming>);
  static_assert(std::is_nothrow_move_constructible_v<HostDataset>);
  static_assert(std::is_nothrow_move_assignable_v<HostDataset>);
  static_assert(std::is_nothrow_swappable_v<HostDevice>);
  static_assert(std::is_nothrow_swappable_v<HostStreaming>);
  static_assert(std::is_nothrow_swappable_v<HostDataset>);
  static_assert(!std::is_copy_constructible_v<HostDevice>);
  static_assert(!std::is_copy_constructible_v<HostStreaming>);
  static_assert(!std::is_copy_constructible_v<HostDataset>);
  SUCCEED();
}

TEST(OwnerMoves, DeviceSelfMoveAssignKeepsTheData) {
  const LabelledRows rows(37, columns);
  const HostSpace space = HostSpace::with_budget(1 << 20);
  HostDevice ds(space, options_of(8), rows.x(), rows.y());
  const std::size_t bytes = ds.bytes() + ds.ring_bytes();
  {
    auto gathering = ds.epoch({1, 0, Shuffle::samples});  // makes the ring
    (void)gathering.batch(0);
  }
  const std::size_t ring = ds.ring_bytes();
  ASSERT_GT(ring, 0U);
  self_move(ds);
  EXPECT_FALSE(ds.moved_from());
  EXPECT_EQ(ds.num_rows(), 37U);
  EXPECT_EQ(ds.num_batches(), 5U);
  EXPECT_EQ(ds.bytes(), bytes);
  EXPECT_EQ(ds.ring_bytes(), ring);
  EXPECT_EQ(space.used_bytes(), bytes + ring);
  for (std::size_t k = 0; k < ds.num_batches(); ++k) {
    EXPECT_EQ(labels_of(ds.batch(k)), expected_labels(k, 8, 37));
    expect_rows_agree(ds.batch(k));
  }
  auto epoch = ds.epoch({3, 1, Shuffle::samples});
  auto seen = read_epoch(epoch);
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(seen, iota_labels(37));
}

TEST(OwnerMoves, StreamingSelfMoveAssignMidPassKeepsTheData) {
  const LabelledRows rows(50, columns);
  const HostSpace space = HostSpace::with_budget(1 << 20);
  HostStreaming ds(space, options_of(4), rows.x(), rows.y());
  const std::size_t bytes = ds.bytes() + ds.ring_bytes();
  EXPECT_EQ(labels_of(ds.batch(0)), expected_labels(0, 4, 50));  // the producer is running
  self_move(ds);
  EXPECT_FALSE(ds.moved_from());
  EXPECT_EQ(ds.num_rows(), 50U);
  EXPECT_EQ(ds.num_batches(), 13U);
  EXPECT_EQ(ds.bytes() + ds.ring_bytes(), bytes);
  EXPECT_EQ(space.used_bytes(), bytes);
  for (std::size_t k = 0; k < ds.num_batches(); ++k)
    EXPECT_EQ(labels_of(ds.batch(k)), expected_labels(k, 4, 50)) << k;
  auto epoch = ds.epoch({5, 2, Shuffle::batches});
  auto seen = read_epoch(epoch);
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(seen, iota_labels(50));
}

TEST(OwnerMoves, DatasetSelfMoveAssignKeepsTheData) {
  const OffsetRows rows(400, 0);
  HostSpace space;
  HostDataset streamed = streaming_dataset(rows, options_of(8), space);
  ASSERT_TRUE(streamed.is_streaming());
  (void)streamed.batch(0);
  self_move(streamed);
  EXPECT_TRUE(streamed.is_streaming());
  EXPECT_FALSE(streamed.moved_from());
  EXPECT_EQ(streamed.num_rows(), 400U);
  EXPECT_EQ(space.used_bytes(), streamed.bytes() + streamed.ring_bytes());
  auto epoch = streamed.epoch();
  EXPECT_EQ(read_epoch(epoch), iota_labels(400));

  HostDataset preloaded =
      resident::make_dataset(HostSpace::with_budget(1 << 20), options_of(8), rows.x(), rows.y());
  ASSERT_FALSE(preloaded.is_streaming());
  self_move(preloaded);
  EXPECT_FALSE(preloaded.moved_from());
  EXPECT_EQ(preloaded.num_batches(), 50U);
  auto again = preloaded.epoch();
  EXPECT_EQ(read_epoch(again), iota_labels(400));
}

template <class Make>
void self_swap_keeps_data_and_ends_epochs(Make make) {
  const OffsetRows rows(210, 100);
  auto ds = make(rows);
  auto before = ds.epoch();
  (void)before.batch(0);
  using std::swap;
  swap(ds, ds);
  EXPECT_FALSE(ds.moved_from());
  EXPECT_EQ(ds.num_rows(), 210U);
  EXPECT_EQ(ds.num_batches(), 27U);
  EXPECT_EQ(labels_of(ds.batch(26)), expected_labels(26, 8, 210, 100));
  expect_error([&] { (void)before.batch(1); }, changed_since);
  auto after = ds.epoch();
  EXPECT_EQ(read_epoch(after), iota_labels(210, 100));
}

TEST(OwnerMoves, SelfSwapKeepsTheDataAndEndsTheEpochs) {
  self_swap_keeps_data_and_ends_epochs([](const OffsetRows& rows) {
    return HostDevice(HostSpace{}, options_of(8), rows.x(), rows.y());
  });
  self_swap_keeps_data_and_ends_epochs([](const OffsetRows& rows) {
    return HostStreaming(HostSpace{}, options_of(8), rows.x(), rows.y());
  });
  self_swap_keeps_data_and_ends_epochs([](const OffsetRows& rows) {
    HostSpace space;
    return streaming_dataset(rows, options_of(8), space);
  });
  self_swap_keeps_data_and_ends_epochs([](const OffsetRows& rows) {
    return resident::make_dataset(HostSpace{}, options_of(8), rows.x(), rows.y());
  });
}

template <class Make>
void swap_then_use(Make make) {
  const OffsetRows first(19, 0);
  const OffsetRows second(35, 1000);
  auto a = make(first);
  auto b = make(second);
  auto epoch_a = a.epoch();
  auto epoch_b = b.epoch();
  auto it_a = epoch_a.begin();
  auto it_b = epoch_b.begin();
  (void)*it_a;
  (void)*it_b;
  const auto view_a = a.batch(0);  // a preloaded view stays valid across the swap
  a.swap(b);
  EXPECT_EQ(a.num_rows(), 35U);
  EXPECT_EQ(b.num_rows(), 19U);
  EXPECT_EQ(a.num_batches(), 5U);
  EXPECT_EQ(b.num_batches(), 3U);
  EXPECT_FALSE(a.moved_from());
  EXPECT_FALSE(b.moved_from());
  EXPECT_EQ(labels_of(a.batch(4)), expected_labels(4, 8, 35, 1000));
  EXPECT_EQ(labels_of(b.batch(2)), expected_labels(2, 8, 19, 0));
  expect_error([&] { (void)epoch_a.batch(0); }, changed_since);
  expect_error([&] { (void)epoch_b.size(); }, changed_since);
  expect_error([&] { (void)epoch_a.begin(); }, changed_since);
  expect_error([&] { (void)*it_a; }, changed_since);
  expect_error([&] { (void)*it_b; }, changed_since);
  auto fresh_a = a.epoch();
  auto fresh_b = b.epoch();
  EXPECT_EQ(read_epoch(fresh_a), iota_labels(35, 1000));
  EXPECT_EQ(read_epoch(fresh_b), iota_labels(19, 0));
  (void)view_a;
}

TEST(OwnerMoves, SwapThenUseServesTheOthersDataAndEndsEveryEpoch) {
  swap_then_use([](const OffsetRows& rows) {
    return HostDevice(HostSpace{}, options_of(8), rows.x(), rows.y());
  });
  swap_then_use([](const OffsetRows& rows) {
    return HostStreaming(HostSpace{}, options_of(8), rows.x(), rows.y());
  });
}

TEST(OwnerMoves, DatasetSwapMidPassAcrossKinds) {
  const OffsetRows small(19, 0);
  const OffsetRows large(120, 1000);
  HostSpace space;
  HostDataset streamed = streaming_dataset(large, options_of(8), space);
  ASSERT_TRUE(streamed.is_streaming());
  HostDataset preloaded = resident::make_dataset(HostSpace{}, options_of(8), small.x(), small.y());
  ASSERT_FALSE(preloaded.is_streaming());
  auto epoch = streamed.epoch({7, 0, Shuffle::batches});
  for (std::size_t k = 0; k < 5; ++k) expect_rows_agree(epoch.batch(k));  // mid-pass
  auto other = preloaded.epoch();
  std::swap(streamed, preloaded);
  EXPECT_FALSE(streamed.is_streaming());
  EXPECT_TRUE(preloaded.is_streaming());
  EXPECT_EQ(streamed.num_rows(), 19U);
  EXPECT_EQ(preloaded.num_rows(), 120U);
  EXPECT_EQ(space.used_bytes(), preloaded.bytes() + preloaded.ring_bytes());
  expect_error([&] { (void)epoch.batch(5); }, changed_since);
  expect_error([&] { (void)other.batch(0); }, changed_since);
  auto now_streamed = preloaded.epoch();
  EXPECT_EQ(read_epoch(now_streamed), iota_labels(120, 1000));
  auto now_preloaded = streamed.epoch();
  EXPECT_EQ(read_epoch(now_preloaded), iota_labels(19, 0));
}

TEST(OwnerMoves, DatasetMovedMidPassIsReadToTheEndByTheMovedTo) {
  const OffsetRows rows(120, 7);
  HostSpace space;
  auto ds = std::make_unique<HostDataset>(streaming_dataset(rows, options_of(8), space));
  ASSERT_TRUE(ds->is_streaming());
  const std::size_t bytes = ds->bytes() + ds->ring_bytes();
  auto epoch = ds->epoch();
  for (std::size_t k = 0; k < 6; ++k)
    EXPECT_EQ(labels_of(epoch.batch(k)), expected_labels(k, 8, 120, 7));
  HostDataset moved(std::move(*ds));
  EXPECT_TRUE(ds->moved_from());
  EXPECT_EQ(ds->num_rows(), 0U);
  EXPECT_EQ(ds->num_batches(), 0U);
  EXPECT_EQ(ds->bytes(), 0U);
  expect_out_of_range([&] { (void)ds->batch(0); }, "moved from");
  expect_error([&] { (void)epoch.batch(6); }, changed_since);
  expect_error([&] { (void)ds->epoch().size(); }, made_moved_from);
  ds.reset();  // the moved-from first
  EXPECT_EQ(space.used_bytes(), bytes);
  EXPECT_EQ(moved.bytes() + moved.ring_bytes(), bytes);
  auto rest = moved.epoch();
  EXPECT_EQ(read_epoch(rest), iota_labels(120, 7));
}

template <class Dataset>
void expect_moved_from_is_empty(Dataset& from, std::size_t batch_size) {
  EXPECT_TRUE(from.moved_from());
  EXPECT_TRUE(from.empty());
  EXPECT_EQ(from.num_rows(), 0U);
  EXPECT_EQ(from.num_batches(), 0U);
  EXPECT_EQ(from.bytes(), 0U);
  EXPECT_EQ(from.first_row(), 0U);
  EXPECT_EQ(from.batch_size(), batch_size) << "a moved-from dataset keeps its options";
  expect_out_of_range([&] { (void)from.batch(0); }, "moved from");
  auto epoch = from.epoch();
  expect_error([&] { (void)epoch.size(); }, made_moved_from);
  expect_error([&] { (void)epoch.batch(0); }, made_moved_from);
  expect_error([&] { (void)epoch.begin(); }, made_moved_from);
}

TEST(OwnerMoves, MovedFromOfEveryKindIsEmptyAndSaysSo) {
  const OffsetRows rows(40, 0);
  const HostSpace space = HostSpace::with_budget(1 << 20);
  {
    HostDevice a(space, options_of(8), rows.x(), rows.y());
    HostDevice b(std::move(a));
    expect_moved_from_is_empty(a, 8);
    EXPECT_FALSE(a.storage_owner());
    EXPECT_EQ(a.ring_bytes(), 0U);
    EXPECT_EQ(a.field<0>().rows(), 0U);
    EXPECT_EQ(b.bytes(), space.used_bytes());
    a = std::move(b);  // moved into again
    EXPECT_FALSE(a.moved_from());
    EXPECT_TRUE(b.moved_from());  // NOLINT(bugprone-use-after-move)
    EXPECT_EQ(labels_of(a.batch(4)), expected_labels(4, 8, 40));
  }
  EXPECT_EQ(space.used_bytes(), 0U);
  {
    HostStreaming a(space, options_of(8), rows.x(), rows.y());
    (void)a.batch(1);
    HostStreaming b(std::move(a));
    expect_moved_from_is_empty(a, 8);
    EXPECT_EQ(a.num_chunks(), 0U);
    EXPECT_EQ(a.data_bytes(), 0U);
    // Every figure of the stream says "nothing": no order chosen, no window, no rings.
    EXPECT_EQ(a.order(), resident::StreamOrder::automatic);
    EXPECT_EQ(a.window_chunks(), 0U);
    EXPECT_EQ(a.window_rows(), 0U);
    EXPECT_EQ(a.ring_bytes(), 0U);
    EXPECT_EQ(a.planned_ring_bytes(), 0U);
    EXPECT_EQ(a.host_bytes(), 0U);
    EXPECT_EQ(b.bytes() + b.ring_bytes(), space.used_bytes());
    EXPECT_EQ(labels_of(b.batch(2)), expected_labels(2, 8, 40));
    a = std::move(b);
    EXPECT_FALSE(a.moved_from());
    EXPECT_EQ(labels_of(a.batch(3)), expected_labels(3, 8, 40));
  }
  EXPECT_EQ(space.used_bytes(), 0U);
  {
    const OffsetRows many(400, 0);
    HostSpace small;
    HostDataset a = streaming_dataset(many, options_of(8), small);
    ASSERT_TRUE(a.is_streaming());
    HostDataset b(std::move(a));
    expect_moved_from_is_empty(a, 8);
    HostDataset c = resident::make_dataset(space, options_of(8), rows.x(), rows.y());
    HostDataset d(std::move(c));
    expect_moved_from_is_empty(c, 8);
    EXPECT_EQ(labels_of(d.batch(4)), expected_labels(4, 8, 40));
    EXPECT_EQ(labels_of(b.batch(40)), expected_labels(40, 8, 400));
  }
  EXPECT_EQ(space.used_bytes(), 0U);
}

// ---------------------------------------------------------------------------------------
// A streaming dataset moved or assigned over while its producer runs

DatasetOptions eager_stream_options() {
  DatasetOptions options = options_of(4);
  options.streaming.chunk_batches = 1;
  options.streaming.chunk_slots = 4;
  options.streaming.prefetch_chunks = 3;
  return options;
}

void moved_while_producer_runs(bool destroy_moved_from_first) {
  const OffsetRows rows(400, 3);
  const HostSpace space = HostSpace::with_budget(1 << 20);
  auto from = std::make_unique<HostStreaming>(space, eager_stream_options(), rows.x(), rows.y());
  const std::size_t bytes = from->bytes() + from->ring_bytes();
  for (std::size_t k = 0; k < 3; ++k)
    EXPECT_EQ(labels_of(from->batch(k)), expected_labels(k, 4, 400, 3));
  auto to = std::make_unique<HostStreaming>(std::move(*from));
  if (destroy_moved_from_first) from.reset();
  EXPECT_EQ(space.used_bytes(), bytes);
  for (std::size_t k = 3; k < to->num_batches(); ++k) {  // the pass goes on where it was
    const auto batch = to->batch(k);
    ASSERT_EQ(labels_of(batch), expected_labels(k, 4, 400, 3)) << k;
    expect_rows_agree(batch);
  }
  auto epoch = to->epoch({9, 0, Shuffle::samples});
  auto seen = read_epoch(epoch);
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(seen, iota_labels(400, 3));
  if (!destroy_moved_from_first) {
    to.reset();
    EXPECT_EQ(space.used_bytes(), 0U);
    from.reset();
  }
  to.reset();
  EXPECT_EQ(space.used_bytes(), 0U);
}

TEST(OwnerStreamingMoves, MovedWhileTheProducerRunsMovedFromDestroyedFirst) {
  moved_while_producer_runs(true);
}

TEST(OwnerStreamingMoves, MovedWhileTheProducerRunsMovedFromDestroyedLast) {
  moved_while_producer_runs(false);
}

TEST(OwnerStreamingMoves, MoveAssignOverARunningPassStopsItAndReturnsItsBudget) {
  const OffsetRows old_rows(400, 0);
  const OffsetRows new_rows(64, 5000);
  const HostSpace space = HostSpace::with_budget(1 << 20);
  HostStreaming target(space, eager_stream_options(), old_rows.x(), old_rows.y());
  DatasetOptions other_options = options_of(8);
  other_options.streaming.chunk_batches = 3;
  HostStreaming source(space, other_options, new_rows.x(), new_rows.y());
  const std::size_t source_bytes = source.bytes() + source.ring_bytes();
  auto old_epoch = target.epoch();
  (void)old_epoch.batch(0);  // the old producer prefetches
  (void)source.batch(0);     // and so does the new one
  target = std::move(source);
  EXPECT_EQ(space.used_bytes(), source_bytes) << "the old ring must be released";
  EXPECT_EQ(target.num_rows(), 64U);
  EXPECT_EQ(target.chunk_batches(), 3U);
  EXPECT_TRUE(source.moved_from());  // NOLINT(bugprone-use-after-move)
  expect_error([&] { (void)old_epoch.batch(1); }, changed_since);
  for (std::size_t k = 0; k < target.num_batches(); ++k)
    EXPECT_EQ(labels_of(target.batch(k)), expected_labels(k, 8, 64, 5000));
}

// ---------------------------------------------------------------------------------------
// StreamingEpoch::wait / release

TEST(OwnerWaitRelease, AfterBatchEveryBatchOfTheHeldChunkIsAccepted) {
  const OffsetRows rows(40, 0);
  HostStreaming ds(HostSpace{}, options_of(4), rows.x(), rows.y());  // chunks of 2 batches
  auto epoch = ds.epoch();
  const auto batch = epoch.batch(2);
  EXPECT_NO_THROW(epoch.wait(2, {}));
  EXPECT_NO_THROW(epoch.wait(3, {}));  // the same chunk, not yet read: still the held chunk
  EXPECT_NO_THROW(epoch.release(2, {}));
  EXPECT_EQ(labels_of(batch), expected_labels(2, 4, 40)) << "wait/release change nothing";
  EXPECT_EQ(labels_of(epoch.batch(3)), expected_labels(3, 4, 40));
  EXPECT_NO_THROW(epoch.release(3, {}));
}

TEST(OwnerWaitRelease, WrongIndicesAreOutOfRange) {
  const OffsetRows rows(40, 0);
  HostStreaming ds(HostSpace{}, options_of(4), rows.x(), rows.y());
  auto epoch = ds.epoch();
  (void)epoch.batch(0);
  EXPECT_THROW(epoch.wait(10, {}), std::out_of_range);
  EXPECT_THROW(epoch.release(10, {}), std::out_of_range);
  EXPECT_THROW(epoch.wait(static_cast<std::size_t>(-1), {}), std::out_of_range);
  EXPECT_NO_THROW(epoch.wait(0, {}));  // the refusals changed nothing
}

TEST(OwnerWaitRelease, BeforeAnyBatchSaysTheBatchWasNotAskedFor) {
  const OffsetRows rows(40, 0);
  HostStreaming ds(HostSpace{}, options_of(4), rows.x(), rows.y());
  auto epoch = ds.epoch();
  expect_error([&] { epoch.wait(0, {}); }, "no batch of this epoch was asked for yet");
  expect_error([&] { epoch.release(0, {}); }, "no batch of this epoch was asked for yet");
  (void)epoch.batch(0);
  expect_error([&] { epoch.wait(4, {}); }, "not asked for yet");
  expect_error([&] { epoch.release(9, {}); }, "not asked for yet");
}

TEST(OwnerWaitRelease, AfterTheReaderMovedOnItSaysSo) {
  const OffsetRows rows(40, 0);
  HostStreaming ds(HostSpace{}, options_of(4), rows.x(), rows.y());
  auto epoch = ds.epoch({3, 0, Shuffle::batches});
  (void)epoch.batch(0);
  (void)epoch.batch(1);
  (void)epoch.batch(2);  // the next chunk
  expect_error([&] { epoch.wait(0, {}); }, "moved on to a later chunk");
  expect_error([&] { epoch.release(1, {}); }, "moved on to a later chunk");
  EXPECT_NO_THROW(epoch.wait(2, {}));
}

TEST(OwnerWaitRelease, AnotherEpochsPassLeavesThisOnesChunkHeld) {
  const OffsetRows rows(40, 0);
  HostStreaming ds(HostSpace{}, options_of(4), rows.x(), rows.y());
  auto first = ds.epoch();
  auto second = ds.epoch({1, 1, Shuffle::batches});
  (void)first.batch(0);
  (void)second.batch(0);
  EXPECT_NO_THROW(first.wait(0, {}));
  (void)ds.batch(0);  // the plain pass of batch(i) streams through slots of its own too
  EXPECT_NO_THROW(second.wait(0, {}));
  EXPECT_NO_THROW(first.release(0, {}));
}

TEST(OwnerWaitRelease, OnEpochsOfMovedOrMovedFromDatasets) {
  const OffsetRows rows(40, 0);
  HostStreaming ds(HostSpace{}, options_of(4), rows.x(), rows.y());
  auto epoch = ds.epoch();
  (void)epoch.batch(0);
  HostStreaming moved(std::move(ds));
  expect_error([&] { epoch.wait(0, {}); }, changed_since);
  expect_error([&] { epoch.release(0, {}); }, changed_since);
  auto of_moved_from = ds.epoch();  // NOLINT(bugprone-use-after-move)
  expect_error([&] { of_moved_from.wait(0, {}); }, made_moved_from);
  expect_error([&] { of_moved_from.release(0, {}); }, made_moved_from);
  auto fine = moved.epoch();
  (void)fine.batch(0);
  EXPECT_NO_THROW(fine.wait(0, {}));
}

// ---------------------------------------------------------------------------------------
// Budget accounting

TEST(OwnerBudget, EveryOwnerReturnsItsBytes) {
  const OffsetRows rows(200, 0);
  const HostSpace space = HostSpace::with_budget(1 << 20);
  {
    HostDevice ds(space, options_of(16), rows.x(), rows.y());
    EXPECT_EQ(space.used_bytes(), ds.bytes());
    {
      auto epoch = ds.epoch({1, 0, Shuffle::samples});
      (void)epoch.batch(3);
      EXPECT_EQ(space.used_bytes(), ds.bytes() + ds.ring_bytes());
    }
    EXPECT_EQ(space.used_bytes(), ds.bytes() + ds.ring_bytes()) << "the ring is the dataset's";
    HostDevice other(std::move(ds));
    EXPECT_EQ(space.used_bytes(), other.bytes() + other.ring_bytes());
  }
  EXPECT_EQ(space.used_bytes(), 0U);
  {
    HostStreaming ds(space, eager_stream_options(), rows.x(), rows.y());
    EXPECT_EQ(space.used_bytes(), ds.bytes() + ds.ring_bytes());
    (void)ds.batch(0);  // destroyed mid-pass
  }
  EXPECT_EQ(space.used_bytes(), 0U);
  {
    HostDataset ds = resident::make_dataset(space, options_of(16), rows.x(), rows.y());
    EXPECT_EQ(space.used_bytes(), ds.bytes());
    auto epoch = ds.epoch({1, 0, Shuffle::samples});
    (void)epoch.batch(0);
  }
  EXPECT_EQ(space.used_bytes(), 0U);
}

TEST(OwnerBudget, ARefusedGatherRingSaysSoAndLeavesTheDatasetUsable) {
  const OffsetRows rows(64, 0);
  const DatasetOptions options = options_of(8);
  const auto planned = resident::plan(HostSpace::with_budget(1 << 20), options, rows.x(), rows.y());
  ASSERT_GT(planned.ring_bytes, 16U);
  const HostSpace space = HostSpace::with_budget(planned.needed_bytes + planned.ring_bytes / 2);
  HostDevice ds(space, options, rows.x(), rows.y());
  const std::size_t used = space.used_bytes();
  EXPECT_EQ(used, ds.bytes());
  try {
    auto epoch = ds.epoch({1, 0, Shuffle::samples});
    (void)epoch.batch(0);
    ADD_FAILURE() << "the ring was not refused";
  } catch (const resident::CapacityError& error) {
    EXPECT_NE(std::string(error.what()).find("the gather ring needs"), std::string::npos)
        << error.what();
    EXPECT_EQ(error.needed_bytes(), planned.ring_bytes) << error.what();
  }
  EXPECT_EQ(space.used_bytes(), used);
  EXPECT_EQ(ds.ring_bytes(), 0U);
  auto zero_copy = ds.epoch({1, 0, Shuffle::batches});
  auto seen = read_epoch(zero_copy);
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(seen, iota_labels(64));
  // The refusal is repeatable, and the same through make_dataset.
  EXPECT_THROW((void)ds.epoch({2, 0, Shuffle::samples}).batch(0), resident::CapacityError);
  // Not even the chunk slots fit beside ds: make_dataset refuses, taking nothing.
  EXPECT_THROW((void)resident::make_dataset(space, options, rows.x(), rows.y()),
               resident::CapacityError);
  EXPECT_EQ(space.used_bytes(), used);
}

TEST(OwnerBudget, RefusedAndCancelledConstructionsReturnEveryByte) {
  const OffsetRows rows(300, 0);
  const HostSpace space = HostSpace::with_budget(2048);
  EXPECT_THROW(HostDevice(space, options_of(8), rows.x(), rows.y()), resident::CapacityError);
  EXPECT_EQ(space.used_bytes(), 0U);
  DatasetOptions big_chunks = options_of(8);
  big_chunks.streaming.chunk_batches = 20;
  EXPECT_THROW(HostStreaming(space, big_chunks, rows.x(), rows.y()), resident::CapacityError);
  EXPECT_EQ(space.used_bytes(), 0U);
  DatasetOptions cancel = options_of(8);
  cancel.on_progress = [](const resident::Progress&) { return false; };
  const HostSpace roomy = HostSpace::with_budget(1 << 20);
  EXPECT_THROW(HostDevice(roomy, cancel, rows.x(), rows.y()), resident::Cancelled);
  EXPECT_EQ(roomy.used_bytes(), 0U);
  EXPECT_THROW((void)resident::make_dataset(roomy, cancel, rows.x(), rows.y()),
               resident::Cancelled);
  EXPECT_EQ(roomy.used_bytes(), 0U);
}

// ---------------------------------------------------------------------------------------
// Odd sizes, compared across the three kinds

/// Every batch of an unshuffled pass: the labels (padding included) and valid rows.
struct Pass {
  std::vector<std::vector<std::int32_t>> labels;
  std::vector<std::size_t> valid;
  bool operator==(const Pass& other) const {
    return labels == other.labels && valid == other.valid;
  }
};

template <class Dataset>
Pass pass_of(Dataset& ds) {
  Pass pass;
  for (std::size_t k = 0; k < ds.num_batches(); ++k) {
    const auto batch = ds.batch(k);
    expect_rows_agree(batch);
    pass.labels.push_back(labels_of(batch));
    pass.valid.push_back(std::get<1>(batch).valid_rows());
  }
  auto epoch = ds.epoch();
  EXPECT_EQ(epoch.size(), ds.num_batches());
  std::size_t iterated = 0;
  for (const auto& batch : epoch) {
    EXPECT_EQ(labels_of(batch), pass.labels.at(iterated));
    ++iterated;
  }
  EXPECT_EQ(iterated, ds.num_batches());
  expect_out_of_range([&] { (void)ds.batch(ds.num_batches()); }, "out of range");
  return pass;
}

std::string pass_name(std::size_t rows, std::size_t batch, Remainder remainder,
                      const resident::Shard& shard, resident::Sharding sharding) {
  return std::to_string(rows) + " rows, batch " + std::to_string(batch) + ", " +
         resident::remainder_name(remainder) + ", rank " + std::to_string(shard.rank) + "/" +
         std::to_string(shard.world_size) +
         (sharding == resident::Sharding::replicated ? " replicated" : " partitioned");
}

TEST(OwnerSizes, EveryKindCutsTheSameBatchesForOddSizesRanksAndRemainders) {
  for (const std::size_t rows : {0, 1, 2, 3, 7, 9, 17}) {
    const OffsetRows data(rows, 0);
    for (const std::size_t batch : {1, 4, 8, 20}) {
      for (const Remainder remainder : {Remainder::drop, Remainder::partial, Remainder::pad}) {
        for (const int world : {1, 2, 5}) {
          for (const auto sharding :
               {resident::Sharding::partitioned, resident::Sharding::replicated}) {
            std::size_t batches_rank0 = 0;
            std::size_t valid_total = 0;
            for (int rank = 0; rank < world; ++rank) {
              DatasetOptions options = options_of(batch, remainder);
              options.shard = resident::Shard{rank, world, 0};
              options.sharding = sharding;
              const std::string name = pass_name(rows, batch, remainder, options.shard, sharding);
              SCOPED_TRACE(name);
              HostDevice device(HostSpace{}, options, data.x(), data.y());
              HostStreaming streaming(HostSpace{}, options, data.x(), data.y());
              const Pass expected = pass_of(device);
              EXPECT_TRUE(pass_of(streaming) == expected);
              if (world == 1 || sharding == resident::Sharding::partitioned) {
                HostDataset made = resident::make_dataset(HostSpace{}, options, data.x(), data.y());
                EXPECT_TRUE(pass_of(made) == expected);
              }
              if (rank == 0) batches_rank0 = device.num_batches();
              EXPECT_EQ(device.num_batches(), batches_rank0) << "every rank the same steps";
              EXPECT_EQ(streaming.num_batches(), batches_rank0);
              // The figures the docs give.
              const std::size_t global = static_cast<std::size_t>(world) * batch;
              const std::size_t want =
                  remainder == Remainder::drop ? rows / global : (rows + global - 1) / global;
              EXPECT_EQ(device.num_batches(), want);
              for (std::size_t k = 0; k < expected.labels.size(); ++k) {
                if (remainder != Remainder::partial) {
                  EXPECT_EQ(expected.labels[k].size(), batch);
                }
                valid_total += expected.valid[k];
              }
              if (sharding == resident::Sharding::partitioned) {
                const auto w = static_cast<std::size_t>(world);
                const auto r = static_cast<std::size_t>(rank);
                EXPECT_EQ(device.num_rows(), rows / w + (r < rows % w ? 1 : 0));
              }
            }
            if (remainder != Remainder::drop) {
              SCOPED_TRACE(pass_name(rows, batch, remainder, {0, world, 0}, sharding));
              EXPECT_EQ(valid_total, rows) << "every row served once over the ranks";
            }
          }
        }
      }
    }
  }
}

TEST(OwnerSizes, ZeroRowsIsLegalForEveryKind) {
  const OffsetRows none(0, 0);
  for (const Remainder remainder : {Remainder::drop, Remainder::partial, Remainder::pad}) {
    const HostSpace space = HostSpace::with_budget(1 << 20);
    HostDevice device(space, options_of(8, remainder), none.x(), none.y());
    HostStreaming streaming(space, options_of(8, remainder), none.x(), none.y());
    HostDataset made = resident::make_dataset(space, options_of(8, remainder), none.x(), none.y());
    for (auto* figures : {static_cast<const void*>(&device)}) (void)figures;
    EXPECT_EQ(device.num_batches(), 0U);
    EXPECT_EQ(streaming.num_batches(), 0U);
    EXPECT_EQ(made.num_batches(), 0U);
    EXPECT_TRUE(device.empty());
    EXPECT_TRUE(streaming.empty());
    EXPECT_TRUE(made.empty());
    EXPECT_FALSE(device.moved_from());
    EXPECT_EQ(streaming.num_chunks(), 0U);
    EXPECT_GE(streaming.chunk_slots(), 1U) << "chunk_slots(): at least 1, says its reference";
    auto samples = device.epoch({1, 0, Shuffle::samples});
    EXPECT_EQ(samples.size(), 0U);
    EXPECT_TRUE(samples.begin() == samples.end());
    auto streamed = streaming.epoch({1, 0, Shuffle::samples});
    EXPECT_TRUE(streamed.empty());
    EXPECT_TRUE(streamed.begin() == streamed.end());
    EXPECT_THROW(streamed.wait(0, {}), std::out_of_range);
    auto made_epoch = made.epoch({1, 0, Shuffle::batches});
    EXPECT_TRUE(made_epoch.begin() == made_epoch.end());
    expect_out_of_range([&] { (void)device.batch(0); }, "has 0 batches");
    expect_out_of_range([&] { (void)streaming.batch(0); }, "has 0 batches");
    expect_out_of_range([&] { (void)made.batch(0); }, "has 0 batches");
    EXPECT_EQ(space.used_bytes(), device.bytes() + streaming.bytes() + made.bytes());
  }
}

TEST(OwnerSizes, OneRowUnderEveryRemainder) {
  const OffsetRows one(1, 42);
  for (const Remainder remainder : {Remainder::drop, Remainder::partial, Remainder::pad}) {
    SCOPED_TRACE(resident::remainder_name(remainder));
    HostDevice device(HostSpace{}, options_of(8, remainder), one.x(), one.y());
    HostStreaming streaming(HostSpace{}, options_of(8, remainder), one.x(), one.y());
    const std::size_t want = remainder == Remainder::drop ? 0 : 1;
    EXPECT_EQ(device.num_batches(), want);
    EXPECT_EQ(streaming.num_batches(), want);
    if (want == 0) continue;
    const auto batch = device.batch(0);
    EXPECT_EQ(std::get<1>(batch).valid_rows(), 1U);
    if (remainder == Remainder::pad)
      EXPECT_EQ(labels_of(batch), std::vector<std::int32_t>(8, 42)) << "padding repeats row 0";
    else
      EXPECT_EQ(labels_of(batch), std::vector<std::int32_t>{42});
    EXPECT_EQ(labels_of(streaming.batch(0)), labels_of(batch));
    auto samples = device.epoch({5, 0, Shuffle::samples});
    EXPECT_EQ(labels_of(samples.batch(0)), labels_of(batch));
    auto streamed = streaming.epoch({5, 0, Shuffle::samples});
    EXPECT_EQ(labels_of(streamed.batch(0)), labels_of(batch));
  }
}

// ---------------------------------------------------------------------------------------
// DatasetAccessors through a const reference to the base

struct Figures {
  std::size_t num_rows, first_row, batch_size, num_batches;
  int rank;
  Remainder remainder;
  resident::Sharding sharding;
  bool empty, moved_from;
  std::string space;
  bool operator==(const Figures& o) const {
    return std::tie(num_rows, first_row, batch_size, num_batches, rank, remainder, sharding, empty,
                    moved_from, space) == std::tie(o.num_rows, o.first_row, o.batch_size,
                                                   o.num_batches, o.rank, o.remainder, o.sharding,
                                                   o.empty, o.moved_from, o.space);
  }
};

template <class Owner, class Space, class... Ts>
Figures through_base(const resident::DatasetAccessors<Owner, Space, Ts...>& ds) {
  static_assert(resident::DatasetAccessors<Owner, Space, Ts...>::num_fields == sizeof...(Ts));
  return {ds.num_rows(),  ds.first_row(), ds.batch_size(), ds.num_batches(), ds.shard().rank,
          ds.remainder(), ds.sharding(),  ds.empty(),      ds.moved_from(),  ds.space().name()};
}

template <class Dataset>
Figures directly(const Dataset& ds) {
  return {ds.num_rows(),  ds.first_row(), ds.batch_size(), ds.num_batches(), ds.shard().rank,
          ds.remainder(), ds.sharding(),  ds.empty(),      ds.moved_from(),  ds.space().name()};
}

TEST(OwnerAccessors, AConstBaseReferenceReadsWhatTheDatasetSays) {
  const OffsetRows rows(23, 0);
  DatasetOptions options = options_of(4, Remainder::pad);
  options.shard = resident::Shard{1, 2, 0};
  HostDevice device(HostSpace{}, options, rows.x(), rows.y());
  HostStreaming streaming(HostSpace{}, options, rows.x(), rows.y());
  HostDataset made = resident::make_dataset(HostSpace{}, options, rows.x(), rows.y());
  const Figures want{11,    12,    4,     3, 1, Remainder::pad, resident::Sharding::partitioned,
                     false, false, "host"};
  EXPECT_TRUE(through_base(device) == want);
  EXPECT_TRUE(through_base(streaming) == want);
  EXPECT_TRUE(through_base(made) == want);
  EXPECT_TRUE(directly(device) == want);
  HostDevice device2(std::move(device));
  HostStreaming streaming2(std::move(streaming));
  HostDataset made2(std::move(made));
  const Figures gone{0,    0,    4,     0, 1, Remainder::pad, resident::Sharding::partitioned,
                     true, true, "host"};
  EXPECT_TRUE(through_base(device) == gone);     // NOLINT(bugprone-use-after-move)
  EXPECT_TRUE(through_base(streaming) == gone);  // NOLINT(bugprone-use-after-move)
  EXPECT_TRUE(through_base(made) == gone);       // NOLINT(bugprone-use-after-move)
  EXPECT_TRUE(through_base(device2) == want);
  EXPECT_TRUE(through_base(streaming2) == want);
  EXPECT_TRUE(through_base(made2) == want);
  static_assert(std::is_same_v<HostDevice::batch_type, HostStreaming::batch_type>);
  static_assert(std::is_same_v<HostDataset::stream_type, resident::HostStream>);
}

// ---------------------------------------------------------------------------------------
// Spaces written from the concept space_traits.hpp lists, and nothing else

/// What a `WatchSpace` and its copies saw.
struct Watch {
  std::mutex mutex;
  std::set<int> live_streams;
  int next_stream = 0;
  std::atomic<int> dead_stream_uses{0};
  std::atomic<int> copy_delay_ms{0};
  std::atomic<std::size_t> live_bytes{0};
  std::size_t budget = std::size_t{1} << 20;
  void use(int stream) {
    const std::lock_guard<std::mutex> lock(mutex);
    if (live_streams.count(stream) == 0) ++dead_stream_uses;
  }
};

/// Host memory, a stream that is a number, and a record of every use of a stream after its
/// `destroy_stream`; copies may be slowed down so that a producer is caught mid-chunk.
class WatchSpace {
 public:
  using memory_space = WatchSpace;
  using stream_type = int;
  static constexpr bool device_accessible = false;

  WatchSpace() : watch_(std::make_shared<Watch>()) {}
  [[nodiscard]] Watch& watch() const noexcept { return *watch_; }

  [[nodiscard]] std::string name() const { return "watch"; }
  [[nodiscard]] resident::Capacity capacity() const {
    return {watch_->budget - watch_->live_bytes, watch_->budget};
  }
  [[nodiscard]] std::size_t default_reserve_bytes() const noexcept { return 0; }
  [[nodiscard]] void* allocate(std::size_t bytes) const {
    if (bytes == 0) return nullptr;
    const std::size_t rounded = (bytes + 255) / 256 * 256;
    void* block = std::aligned_alloc(256, rounded);
    if (block == nullptr) throw std::bad_alloc();
    watch_->live_bytes += bytes;
    return block;
  }
  void deallocate(void* pointer, std::size_t bytes) const noexcept {
    if (pointer == nullptr) return;
    std::free(pointer);  // NOLINT(cppcoreguidelines-no-malloc)
    watch_->live_bytes -= bytes;
  }
  [[nodiscard]] stream_type create_stream() const {
    const std::lock_guard<std::mutex> lock(watch_->mutex);
    const int stream = ++watch_->next_stream;
    watch_->live_streams.insert(stream);
    return stream;
  }
  void destroy_stream(stream_type stream) const noexcept {
    const std::lock_guard<std::mutex> lock(watch_->mutex);
    if (watch_->live_streams.erase(stream) == 0) ++watch_->dead_stream_uses;
  }
  void synchronize(stream_type stream) const { watch_->use(stream); }
  void copy_from_host(void* destination, const void* source, std::size_t bytes,
                      stream_type stream) const {
    if (const int delay = watch_->copy_delay_ms.load(); delay > 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(delay));
    watch_->use(stream);
    if (bytes != 0) std::memcpy(destination, source, bytes);
  }
  void copy_to_host(void* destination, const void* source, std::size_t bytes,
                    stream_type stream) const {
    watch_->use(stream);
    if (bytes != 0) std::memcpy(destination, source, bytes);
  }

 private:
  std::shared_ptr<Watch> watch_;
};

static_assert(resident::is_memory_space_v<WatchSpace>);

TEST(OwnerSpace, ASpaceFromTheConceptServesEveryKindOfDatasetAndEpoch) {
  const OffsetRows rows(150, 0);
  const WatchSpace space;
  const DatasetOptions options = options_of(8);
  const auto verdict = resident::plan(space, options, rows.x(), rows.y());
  EXPECT_TRUE(verdict.fits);
  EXPECT_EQ(verdict.space_name, "watch");
  EXPECT_EQ(verdict.num_batches, 19U);
  {
    DeviceDataset<WatchSpace, float, std::int32_t> device(space, options, rows.x(), rows.y());
    EXPECT_EQ(device.bytes(), verdict.needed_bytes);
    EXPECT_EQ(labels_of(device.batch(18)), expected_labels(18, 8, 150));
    auto samples = device.epoch({4, 0, Shuffle::samples});
    auto seen = read_epoch(samples);
    std::sort(seen.begin(), seen.end());
    EXPECT_EQ(seen, iota_labels(150));
    EXPECT_EQ(device.ring_bytes(), verdict.ring_bytes);
    StreamingDataset<WatchSpace, float, std::int32_t> streaming(space, options, rows.x(), rows.y());
    auto streamed = streaming.epoch({4, 0, Shuffle::samples});
    seen = read_epoch(streamed);
    std::sort(seen.begin(), seen.end());
    EXPECT_EQ(seen, iota_labels(150));
    auto made = resident::make_dataset(space, options, rows.x(), rows.y());
    EXPECT_FALSE(made.is_streaming());
    auto made_epoch = made.epoch();
    EXPECT_EQ(read_epoch(made_epoch), iota_labels(150));
  }
  EXPECT_EQ(space.watch().live_bytes, 0U);
  EXPECT_TRUE(space.watch().live_streams.empty()) << "every stream made was destroyed";
  EXPECT_EQ(space.watch().dead_stream_uses, 0);
}

// ---------------------------------------------------------------------------------------
// A streaming dataset's stream outlives its producer: destroyed or assigned over mid-pass,
// no copy or synchronize reaches a stream after its destroy_stream

TEST(OwnerStreamLifetime, DestroyingAStreamingDatasetMidPassUsesNoDestroyedStream) {
  const OffsetRows rows(400, 0);
  const WatchSpace space;
  {
    StreamingDataset<WatchSpace, float, std::int32_t> ds(space, eager_stream_options(), rows.x(),
                                                         rows.y());
    space.watch().copy_delay_ms = 40;
    EXPECT_EQ(labels_of(ds.batch(0)), expected_labels(0, 4, 400));
  }  // the producer is loading the next chunks
  space.watch().copy_delay_ms = 0;
  EXPECT_EQ(space.watch().dead_stream_uses, 0);
  EXPECT_TRUE(space.watch().live_streams.empty());
}

// Assigned over while its producer loads a chunk: the old producer is joined before the old
// dataset's stream is destroyed, whichever member the move assignment releases first. On
// CudaSpace a use after destroy_stream would be a copy enqueued on, and events recorded
// against, a destroyed cudaStream_t.
TEST(OwnerStreamLifetime, MoveAssignOverARunningPassUsesNoDestroyedStream) {
  const OffsetRows old_rows(400, 0);
  const OffsetRows new_rows(64, 5000);
  const WatchSpace space;
  StreamingDataset<WatchSpace, float, std::int32_t> target(space, eager_stream_options(),
                                                           old_rows.x(), old_rows.y());
  StreamingDataset<WatchSpace, float, std::int32_t> source(space, options_of(8), new_rows.x(),
                                                           new_rows.y());
  space.watch().copy_delay_ms = 40;
  EXPECT_EQ(labels_of(target.batch(0)), expected_labels(0, 4, 400));  // producer runs ahead
  std::this_thread::sleep_for(std::chrono::milliseconds(10));         // inside a copy of chunk 1
  target = std::move(source);
  space.watch().copy_delay_ms = 0;
  EXPECT_EQ(space.watch().dead_stream_uses, 0)
      << "the old producer used the old dataset's stream after destroy_stream";
  for (std::size_t k = 0; k < target.num_batches(); ++k)
    EXPECT_EQ(labels_of(target.batch(k)), expected_labels(k, 8, 64, 5000));
  EXPECT_EQ(space.watch().dead_stream_uses, 0);
}

// The same through `Dataset` (make_dataset), whose variant move-assigns the streaming dataset.
TEST(OwnerStreamLifetime, DatasetMoveAssignOverARunningPassUsesNoDestroyedStream) {
  const OffsetRows old_rows(400, 0);
  const OffsetRows new_rows(64, 5000);
  const WatchSpace space;
  using WatchDataset = resident::Dataset<WatchSpace, float, std::int32_t>;
  WatchDataset target(StreamingDataset<WatchSpace, float, std::int32_t>(
                          space, eager_stream_options(), old_rows.x(), old_rows.y()),
                      resident::Plan{});
  WatchDataset source(StreamingDataset<WatchSpace, float, std::int32_t>(space, options_of(8),
                                                                        new_rows.x(), new_rows.y()),
                      resident::Plan{});
  space.watch().copy_delay_ms = 40;
  EXPECT_EQ(labels_of(target.batch(0)), expected_labels(0, 4, 400));
  std::this_thread::sleep_for(std::chrono::milliseconds(10));  // inside a copy of chunk 1
  target = std::move(source);
  space.watch().copy_delay_ms = 0;
  EXPECT_EQ(space.watch().dead_stream_uses, 0)
      << "the old producer used the old dataset's stream after destroy_stream";
  EXPECT_EQ(labels_of(target.batch(7)), expected_labels(7, 8, 64, 5000));
}

}  // namespace
