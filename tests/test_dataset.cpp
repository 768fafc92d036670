// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <numeric>
#include <string>
#include <type_traits>
#include <vector>

#include "resident/dataset.hpp"
#include "resident/host_space.hpp"
#include "support/spaces.hpp"

namespace {

// The three owners are move-only by the rule of zero, and their moves never throw (swap and
// the variant of Dataset rely on it).
template <class Owner>
constexpr bool move_only_nothrow =
    std::is_nothrow_move_constructible_v<Owner>&& std::is_nothrow_move_assignable_v<Owner> &&
    !std::is_copy_constructible_v<Owner> && !std::is_copy_assignable_v<Owner>;
static_assert(move_only_nothrow<resident::DeviceDataset<resident::HostSpace, float, int>>);
static_assert(move_only_nothrow<resident::StreamingDataset<resident::HostSpace, float, int>>);
static_assert(move_only_nothrow<resident::Dataset<resident::HostSpace, float, int>>);
#if RESIDENT_HAS_CUDA
static_assert(move_only_nothrow<resident::DeviceDataset<resident::CudaSpace, float, int>>);
static_assert(move_only_nothrow<resident::StreamingDataset<resident::CudaSpace, float, int>>);
static_assert(
    move_only_nothrow<resident::DeviceDataset<resident::CudaHostPinnedSpace, float, int>>);
#endif

using resident::DatasetOptions;
using resident::HostSpace;
using resident::HostTensor;
using resident::Recommendation;
using resident::Shuffle;

DatasetOptions options_of(std::size_t batch) {
  DatasetOptions options;
  options.batch_size = batch;
  options.reserve_bytes = 0;
  return options;
}

// The rows an epoch serves, in order.
template <class Epoch>
std::vector<std::int64_t> rows_of(Epoch&& epoch) {
  std::vector<std::int64_t> rows;
  for (auto [ids] : epoch)
    rows.insert(rows.end(), ids.data(), ids.data() + static_cast<std::ptrdiff_t>(ids.valid_rows()));
  return rows;
}

TEST(MakeDataset, PreloadsWhenItFitsAndStreamsWhenItDoesNot) {
  std::vector<std::int64_t> ids(1000);
  std::iota(ids.begin(), ids.end(), std::int64_t{0});
  const HostTensor<const std::int64_t> tensor(ids.data(), {1000});

  auto roomy = resident::make_dataset(HostSpace::with_budget(1 << 20), options_of(10), tensor);
  EXPECT_FALSE(roomy.is_streaming());
  ASSERT_NE(roomy.preloaded(), nullptr);
  EXPECT_EQ(roomy.streaming(), nullptr);
  EXPECT_EQ(roomy.plan().recommendation, Recommendation::preload);
  EXPECT_EQ(roomy.bytes(), 8000u);

  const HostSpace tight = HostSpace::with_budget(2048);
  auto streamed = resident::make_dataset(tight, options_of(10), tensor);
  EXPECT_TRUE(streamed.is_streaming());
  ASSERT_NE(streamed.streaming(), nullptr);
  EXPECT_EQ(streamed.plan().recommendation, Recommendation::stream);
  EXPECT_LE(tight.used_bytes(), 2048u);
  EXPECT_EQ(streamed.num_batches(), roomy.num_batches());

  // The same interface, the same batches.
  for (std::size_t index = 0; index < roomy.num_batches(); ++index) {
    const auto [a] = roomy.batch(index);
    const auto [b] = streamed.batch(index);
    ASSERT_EQ(a.rows(), b.rows());
    ASSERT_TRUE(std::equal(a.data(), a.data() + a.size(), b.data()));
  }
  const auto unshuffled = rows_of(streamed.epoch({}));
  EXPECT_EQ(unshuffled, ids);
  auto shuffled = rows_of(streamed.epoch({9, 3, Shuffle::batches}));
  EXPECT_NE(shuffled, ids);
  std::sort(shuffled.begin(), shuffled.end());
  EXPECT_EQ(shuffled, ids);
  auto samples = rows_of(roomy.epoch({9, 3, Shuffle::samples}));
  std::sort(samples.begin(), samples.end());
  EXPECT_EQ(samples, ids);
}

// Data that fits but leaves no room for its gather ring streams, when a stream's chunk slots and
// gather ring fit in the same bytes: every epoch runs, the sample shuffle and a conversion
// included, instead of a preloaded dataset that refuses them.
TEST(MakeDataset, StreamsWhenThePreloadLeavesNoRoomForItsGatherRing) {
  constexpr std::size_t n = 100;
  std::vector<std::uint8_t> pixels(n * 32, 3);
  std::vector<std::int32_t> labels(n, 1);
  const HostTensor<const std::uint8_t> x(pixels.data(), {n, 2, 4, 4});
  const HostTensor<const std::int32_t> y(labels.data(), {n});
  DatasetOptions options = options_of(7);
  options.remainder = resident::Remainder::drop;
  options.ring_depth = 1;
  const HostSpace space = HostSpace::with_budget(3776);
  const resident::Plan plan = resident::plan(space, options, x, y);
  ASSERT_TRUE(plan.fits);
  ASSERT_FALSE(plan.fits_with_ring);
  ASSERT_TRUE(plan.stream_fits);
  EXPECT_EQ(plan.recommendation, Recommendation::stream);
  EXPECT_NE(plan.reason.find("does not fit beside it; stream it"), std::string::npos)
      << plan.reason;
  auto ds = resident::make_dataset(space, options, x, y);
  EXPECT_TRUE(ds.is_streaming());
  std::size_t rows = 0;
  for (auto [xb, yb] :
       ds.epoch({1, 0, Shuffle::samples}, resident::convert<0>(resident::Normalize{1.0f / 255, 0})))
    rows += yb.valid_rows();
  EXPECT_EQ(rows, n / 7 * 7);
  // A replicated rank keeps preloading (a streamed one could not keep the job's order).
  options.shard = {0, 2, 0};
  options.sharding = resident::Sharding::replicated;
  EXPECT_FALSE(resident::make_dataset(HostSpace::with_budget(3776), options, x, y).is_streaming());
}

TEST(MakeDataset, NpyFilesArePlannedFromTheirHeaders) {
  std::vector<std::int64_t> ids(500);
  std::iota(ids.begin(), ids.end(), std::int64_t{0});
  const std::string path =
      ::testing::TempDir() + "make_dataset_" + std::to_string(::getpid()) + ".npy";
  resident::npy::save(path, ids.data(), resident::Shape{500});
  {
    auto preloaded = resident::make_dataset<HostSpace, std::int64_t>(
        HostSpace::with_budget(1 << 20), options_of(50), path);
    EXPECT_FALSE(preloaded.is_streaming());
    // Two chunk slots and a gather ring of one batch (2 KiB in all) fit in 3000 bytes.
    DatasetOptions small = options_of(50);
    small.ring_depth = 1;
    small.streaming.chunk_slots = 2;
    small.streaming.prefetch_chunks = 1;
    auto streamed =
        resident::make_dataset<HostSpace, std::int64_t>(HostSpace::with_budget(3000), small, path);
    EXPECT_TRUE(streamed.is_streaming());
    EXPECT_EQ(streamed.plan().needed_bytes, 4000u);
    EXPECT_EQ(rows_of(streamed.epoch({})), ids);
    EXPECT_EQ(rows_of(preloaded.epoch({})), ids);
    EXPECT_THROW(
        (void)(resident::make_dataset<HostSpace, float>(HostSpace{}, options_of(50), path)),
        resident::FormatError);
  }
  std::remove(path.c_str());
}

// make_dataset ignores the StreamOptions when it preloads and refuses invalid ones when it
// would stream.
TEST(MakeDataset, RefusesInvalidStreamOptionsOnlyWhenItStreams) {
  std::vector<std::int64_t> ids(1000);
  std::iota(ids.begin(), ids.end(), std::int64_t{0});
  const HostTensor<const std::int64_t> tensor(ids.data(), {1000});
  DatasetOptions options = options_of(10);
  options.streaming = resident::StreamOptions{0, 4, 0};
  EXPECT_FALSE(
      resident::make_dataset(HostSpace::with_budget(1 << 20), options, tensor).is_streaming());
  EXPECT_THROW((void)resident::make_dataset(HostSpace::with_budget(2048), options, tensor),
               resident::InvalidArgument);
}

// A Dataset's epoch orders other streams (wait, release) and gives row ids as the epoch it
// holds does: batches read on another stream equal the preloaded dataset's own.
template <class Space>
void check_dataset_epoch_orders_other_streams(const Space& space) {
  std::vector<std::int32_t> ids(203);
  std::iota(ids.begin(), ids.end(), 0);
  DatasetOptions options;
  options.batch_size = 16;
  const HostTensor<const std::int32_t> tensor(ids.data(), {ids.size()});
  auto ds = resident::make_dataset(space, options, tensor);
  ASSERT_NE(ds.preloaded(), nullptr);
  const auto consumer = space.create_stream();
  for (const Shuffle shuffle : {Shuffle::none, Shuffle::samples}) {
    auto epoch = ds.epoch({5, 1, shuffle});
    EXPECT_EQ(epoch.gathers(), shuffle == Shuffle::samples);
    std::vector<std::int32_t> read;
    std::vector<std::int64_t> row_ids;
    for (std::size_t k = 0; k < epoch.size(); ++k) {
      const auto [view] = epoch.batch(k);
      const auto indices = epoch.batch_indices(k);
      epoch.wait(k, consumer);
      const auto rows = resident::testing::read_back(space, consumer, view);
      const auto got = resident::testing::read_back(space, consumer, indices);
      epoch.release(k, consumer);
      read.insert(read.end(), rows.begin(), rows.end());
      row_ids.insert(row_ids.end(), got.begin(), got.end());
    }
    std::vector<std::int64_t> expected(read.begin(), read.end());  // row r holds r
    EXPECT_EQ(row_ids, expected);
    std::sort(read.begin(), read.end());
    EXPECT_EQ(read, ids);
  }
  space.destroy_stream(consumer);
}

TEST(MakeDataset, EpochsOrderOtherStreamsAndGiveRowIdsAsTheEpochsTheyHold) {
  check_dataset_epoch_orders_other_streams(HostSpace{});
#if RESIDENT_HAS_CUDA
  resident::testing::skip_unless_usable<resident::CudaSpace>();
  if (::testing::Test::IsSkipped() || ::testing::Test::HasFatalFailure()) return;
  check_dataset_epoch_orders_other_streams(resident::CudaSpace{0});
#endif
}

}  // namespace
