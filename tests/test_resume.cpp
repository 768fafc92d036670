// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "resident/resident.hpp"
#include "support/batch_options.hpp"
#include "support/labelled_rows.hpp"
#include "support/resume_checks.hpp"
#include "support/spaces.hpp"

namespace {

using resident::DatasetOptions;
using resident::EpochOptions;
using resident::EpochState;
using resident::FormatError;
using resident::InvalidArgument;
using resident::Remainder;
using resident::Sharding;
using resident::Shuffle;
using resident::StreamOrder;
using resident::testing::check_elastic;
using resident::testing::check_resume_equals_no_stop;
using resident::testing::LabelledRows;
using resident::testing::remainders;
using resident::testing::RunBytes;
using resident::testing::shuffles;

template <class Space>
using TypedResume = resident::testing::OverGatheringSpaces<Space>;
TYPED_TEST_SUITE(TypedResume, resident::testing::GatherSpaceTypes, resident::testing::SpaceName);

TYPED_TEST(TypedResume, AResumedEpochServesTheBatchesOfTheRunThatNeverStopped) {
  check_resume_equals_no_stop(this->space_);
}

TYPED_TEST(TypedResume, TheComparisonCatchesAResumeOneBatchLate) {
  check_resume_equals_no_stop(this->space_, 1);
}

TEST(Resume, PartitionedJobsResumeOnOtherWorldSizesServingEveryRowOnce) {
  check_elastic<false>(resident::HostSpace{}, Sharding::partitioned,
                       {shuffles.begin(), shuffles.end()}, {remainders.begin(), remainders.end()});
}

TEST(Resume, ReplicatedJobsResumeOnOtherWorldSizesServingEveryRowOnce) {
  check_elastic<false>(resident::HostSpace{}, Sharding::replicated,
                       {shuffles.begin(), shuffles.end()}, {remainders.begin(), remainders.end()});
}

TEST(Resume, StreamedJobsResumeOnOtherWorldSizesServingEveryRowOnce) {
  check_elastic<true>(resident::HostSpace{}, Sharding::partitioned,
                      {shuffles.begin(), shuffles.end()}, {Remainder::partial});
  check_elastic<true>(resident::HostSpace{}, Sharding::replicated,
                      {shuffles.begin(), shuffles.end()}, {Remainder::pad});
}

TYPED_TEST(TypedResume, JobsResumeOnOtherWorldSizesInEverySpace) {
  for (const Sharding sharding : {Sharding::partitioned, Sharding::replicated}) {
    check_elastic<false>(this->space_, sharding, {Shuffle::batches, Shuffle::samples},
                         {Remainder::partial});
    check_elastic<true>(this->space_, sharding, {Shuffle::batches, Shuffle::samples},
                        {Remainder::partial});
  }
}

TYPED_TEST(TypedResume, ATokenDatasetResumesAsItWouldHaveGoneOn) {
  resident::testing::check_token_resume_equals_no_stop(this->space_);
}

TYPED_TEST(TypedResume, TokenWindowsAreServedOnceAcrossRestartsOnOtherWorldSizes) {
  resident::testing::check_token_elastic(this->space_, Sharding::partitioned);
  resident::testing::check_token_elastic(this->space_, Sharding::replicated);
}

// A state saved by a preloaded dataset resumes on a stream in whole-epoch order, and back:
// both serve the same batches.
TYPED_TEST(TypedResume, PreloadedAndWholeEpochStreamedDatasetsResumeEachOthersStates) {
  const LabelledRows data(37, 4);
  DatasetOptions options = resident::testing::batch_options(4, Remainder::pad);
  options.streaming.order = StreamOrder::whole_epoch;
  options.streaming.chunk_batches = 3;
  const EpochOptions epoch{9, 4, Shuffle::samples};
  using Preloaded = resident::DeviceDataset<TypeParam, float, std::int32_t>;
  using Streamed = resident::StreamingDataset<TypeParam, float, std::int32_t>;
  Preloaded preloaded(this->space_, options, data.x(), data.y());
  Streamed streamed(this->space_, options, data.x(), data.y());
  const RunBytes whole = resident::testing::run_bytes(preloaded, preloaded.epoch(epoch));
  const EpochState from_preloaded = preloaded.epoch(epoch).state(3);
  const EpochState from_streamed = streamed.epoch(epoch).state(5);
  EXPECT_EQ(resident::testing::run_bytes(streamed, streamed.resume(epoch, from_preloaded)),
            RunBytes(whole.begin() + 3, whole.end()));
  EXPECT_EQ(resident::testing::run_bytes(preloaded, preloaded.resume(epoch, from_streamed)),
            RunBytes(whole.begin() + 5, whole.end()));
}

// --- The state's bytes ---------------------------------------------------------------------

EpochState some_state() {
  const LabelledRows data(29, 4);
  resident::DeviceDataset<resident::HostSpace, float, std::int32_t> ds(
      resident::HostSpace{}, resident::testing::batch_options(4, Remainder::pad), data.x(),
      data.y());
  auto epoch = ds.epoch({5, 2, Shuffle::samples});
  (void)epoch.batch(2);
  return epoch.state();
}

TEST(EpochStateBytes, AStateRoundTripsThroughItsBytes) {
  const EpochState state = some_state();
  EXPECT_EQ(state.position(), 12u);
  EXPECT_EQ(state.rows(), 29u);
  EXPECT_EQ(state.global_batch(), 4u);
  EXPECT_EQ(state.options().seed, 5u);
  EXPECT_EQ(state.options().epoch, 2u);
  EXPECT_EQ(state.options().shuffle, Shuffle::samples);
  EXPECT_FALSE(state.finished());
  const auto bytes = state.to_bytes();
  static_assert(sizeof(bytes) <= 64, "a state is at most 64 bytes");
  EXPECT_EQ(EpochState::from_bytes(bytes), state);
}

TEST(EpochStateBytes, EveryAlteredOrCutStateIsRefusedWithAFormatError) {
  const auto bytes = some_state().to_bytes();
  for (std::size_t at = 0; at < bytes.size(); ++at)
    for (const std::uint8_t flip : {std::uint8_t{1}, std::uint8_t{0x80}}) {
      auto altered = bytes;
      altered[at] ^= flip;
      EXPECT_THROW((void)EpochState::from_bytes(altered), FormatError) << "byte " << at;
    }
  for (const std::size_t size : {std::size_t{0}, std::size_t{1}, std::size_t{63}, std::size_t{65}})
    EXPECT_THROW((void)EpochState::from_bytes(bytes.data(), size), FormatError) << size;
  EXPECT_THROW((void)EpochState::from_bytes(nullptr, 64), FormatError);
  try {
    (void)EpochState::from_bytes(bytes.data(), 63);
    FAIL() << "a cut state was read";
  } catch (const FormatError& error) {
    EXPECT_NE(std::string(error.what()).find("64 bytes"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("found 63 bytes"), std::string::npos) << error.what();
  }
}

// A resume of another epoch or dataset is refused when it is made, naming what differs; the
// dataset is unchanged and serves its epochs.
TEST(EpochStateChecks, AStateOfAnotherEpochOrDatasetIsRefusedNamingWhatDiffers) {
  const LabelledRows data(29, 4);
  const LabelledRows other(31, 4);
  const LabelledRows wider(29, 8);
  const EpochState state = some_state();
  const EpochOptions epoch = state.options();
  const auto refused = [&](const auto& make, EpochOptions options, const std::string& named) {
    auto ds = make();
    try {
      (void)ds.resume(options, state);
      ADD_FAILURE() << "not refused: " << named;
    } catch (const InvalidArgument& error) {
      EXPECT_NE(std::string(error.what()).find(named), std::string::npos) << error.what();
    }
    EXPECT_EQ(ds.epoch(options).size(), ds.num_batches());
  };
  const auto dataset = [](const LabelledRows& rows, const DatasetOptions& options) {
    return [&rows, options] {
      return resident::DeviceDataset<resident::HostSpace, float, std::int32_t>(
          resident::HostSpace{}, options, rows.x(), rows.y());
    };
  };
  DatasetOptions same = resident::testing::batch_options(4, Remainder::pad);
  refused(dataset(data, same), {6, 2, Shuffle::samples}, "seed 5 (here 6)");
  refused(dataset(data, same), {5, 3, Shuffle::samples}, "epoch 2 (here 3)");
  refused(dataset(data, same), {5, 2, Shuffle::batches}, "shuffle samples (here batches)");
  refused(dataset(other, same), epoch, "rows 29 (here 31)");
  refused(dataset(wider, same), epoch, "fingerprint");
  DatasetOptions dropping = same;
  dropping.remainder = Remainder::drop;
  refused(dataset(data, dropping), epoch, "remainder pad (here drop)");
  DatasetOptions replicated = same;
  replicated.sharding = Sharding::replicated;
  refused(dataset(data, replicated), epoch, "sharding partitioned (here replicated)");
  DatasetOptions parted = same;
  parted.parts = 2;
  refused(dataset(data, parted), epoch, "DatasetOptions::parts 1 (here 2)");
  // A default-made state, which no epoch saved.
  auto ds = dataset(data, same)();
  EXPECT_THROW((void)ds.resume(epoch, EpochState{}), InvalidArgument);
}

TEST(EpochStateChecks, PartsThatTheWorldSizeOrTheBatchCannotTakeAreRefusedWhenMade) {
  const LabelledRows data(40, 2);
  DatasetOptions options = resident::testing::batch_options(6, Remainder::partial);
  options.shard = {0, 4, 0};
  options.parts = 6;  // 4 ranks cannot share 6 parts
  EXPECT_THROW((resident::DeviceDataset<resident::HostSpace, float, std::int32_t>(
                   resident::HostSpace{}, options, data.x(), data.y())),
               InvalidArgument);
  options.parts = 16;  // 4 parts a rank: a batch of 6 is no whole number of rounds
  EXPECT_THROW((resident::DeviceDataset<resident::HostSpace, float, std::int32_t>(
                   resident::HostSpace{}, options, data.x(), data.y())),
               InvalidArgument);
  options.batch_size = 8;
  EXPECT_NO_THROW((resident::DeviceDataset<resident::HostSpace, float, std::int32_t>(
      resident::HostSpace{}, options, data.x(), data.y())));
}

TEST(EpochStateChecks, AWindowOrderStreamResumesOnlyAsItWasCut) {
  const LabelledRows data(64, 2);
  DatasetOptions options = resident::testing::batch_options(4, Remainder::partial);
  options.streaming.order = StreamOrder::window;
  options.streaming.chunk_batches = 2;
  resident::StreamingDataset<resident::HostSpace, float, std::int32_t> fours(
      resident::HostSpace{}, options, data.x(), data.y());
  auto epoch = fours.epoch({1, 0, Shuffle::samples});
  (void)epoch.batch(0);
  const EpochState state = epoch.state();
  EXPECT_TRUE(state.window_order());
  options.batch_size = 8;
  options.streaming.chunk_batches = 1;  // the same chunk bytes: still another cut
  resident::StreamingDataset<resident::HostSpace, float, std::int32_t> eights(
      resident::HostSpace{}, options, data.x(), data.y());
  try {
    (void)eights.resume(state.options(), state);
    FAIL() << "a window-order stream resumed with another batch size";
  } catch (const InvalidArgument& error) {
    EXPECT_NE(std::string(error.what()).find("window"), std::string::npos) << error.what();
  }
  // On a preloaded dataset of the same data, a window order's state is another order.
  resident::DeviceDataset<resident::HostSpace, float, std::int32_t> preloaded(
      resident::HostSpace{}, resident::testing::batch_options(4, Remainder::partial), data.x(),
      data.y());
  EXPECT_THROW((void)preloaded.resume(state.options(), state), InvalidArgument);
}

// The same global batch on another world size: the window order's chunks are cut otherwise, so
// the state is refused rather than served with rows twice.
TEST(EpochStateChecks, AWindowOrderStreamRefusesAnotherWorldSizeOfTheSameGlobalBatch) {
  const LabelledRows data(37, 2);
  DatasetOptions options = resident::testing::batch_options(2, Remainder::partial);
  options.streaming.order = StreamOrder::window;
  options.streaming.chunk_batches = 2;
  options.sharding = Sharding::replicated;
  options.shard = {0, 3, 0};
  resident::StreamingDataset<resident::HostSpace, float, std::int32_t> three(
      resident::HostSpace{}, options, data.x(), data.y());
  auto epoch = three.epoch({1, 0, Shuffle::samples});
  (void)epoch.batch(0);
  const EpochState state = epoch.state();
  options.shard = {0, 2, 0};
  options.batch_size = 3;
  resident::StreamingDataset<resident::HostSpace, float, std::int32_t> two(
      resident::HostSpace{}, options, data.x(), data.y());
  try {
    (void)two.resume(state.options(), state);
    FAIL() << "a window-order stream resumed on another world size";
  } catch (const InvalidArgument& error) {
    EXPECT_NE(std::string(error.what()).find("world size"), std::string::npos) << error.what();
  }
}

// Parts a state could not record are refused when the dataset is made; a step of more rows than
// a std::size_t counts (a batch size above the rows) is recorded as SIZE_MAX, not wrapped.
TEST(EpochStateChecks, PartsBeyondWhatAStateRecordsAreRefusedAndHugeStepsSaturate) {
  const LabelledRows data(24, 2);
  DatasetOptions options = resident::testing::batch_options(2, Remainder::partial);
  options.parts = std::size_t{1} << 32;  // 2^32 parts: one more than a state's 32 bits hold
  options.batch_size = options.parts;
  EXPECT_THROW((resident::DeviceDataset<resident::HostSpace, float, std::int32_t>(
                   resident::HostSpace{}, options, data.x(), data.y())),
               InvalidArgument);
  options.parts = 0;
  options.shard = {0, 2, 0};
  options.batch_size = (std::size_t{1} << 63) + 2;  // 2 ranks: a step of 2^64 + 4 rows
  resident::DeviceDataset<resident::HostSpace, float, std::int32_t> huge(
      resident::HostSpace{}, options, data.x(), data.y());
  auto epoch = huge.epoch({1, 0, Shuffle::samples});
  ASSERT_EQ(epoch.size(), 1u);
  const EpochState state = EpochState::from_bytes(epoch.state(0).to_bytes());
  EXPECT_EQ(state.global_batch(), static_cast<std::size_t>(-1));
  EXPECT_EQ(huge.resume(state.options(), state).size(), 1u);
  EXPECT_EQ(huge.resume(state.options(), epoch.state(1)).size(), 0u);
}

TEST(EpochStateChecks, AStateSaysWhereTheLoopIsNotWhereTheRingIs) {
  const LabelledRows data(29, 4);
  resident::DeviceDataset<resident::HostSpace, float, std::int32_t> ds(
      resident::HostSpace{}, resident::testing::batch_options(4, Remainder::partial), data.x(),
      data.y());
  auto epoch = ds.epoch({1, 0, Shuffle::samples});
  EXPECT_EQ(epoch.state().position(), 0u);
  std::size_t taken = 0;
  for (auto batch : epoch) {
    (void)batch;
    ++taken;
    EXPECT_EQ(epoch.state().position(), std::min<std::size_t>(taken * 4, 29));
  }
  EXPECT_TRUE(epoch.state().finished());
  EXPECT_THROW((void)epoch.state(epoch.size() + 1), std::out_of_range);
  auto rest = ds.resume(epoch.options(), epoch.state());
  EXPECT_EQ(rest.size(), 0u);
}

}  // namespace
