// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// DatasetAccessors: the three datasets read their shared accessors from one core, so a
// preloaded, a streamed and a make_dataset dataset of the same rows and options answer alike,
// on every rank of a sharded job; and a moved-from one of each answers as empty.
#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <utility>
#include <vector>

#include "resident/dataset.hpp"
#include "resident/dataset_accessors.hpp"
#include "resident/device_dataset.hpp"
#include "resident/host_space.hpp"
#include "resident/streaming_dataset.hpp"

namespace {

using resident::DatasetOptions;
using resident::HostSpace;
using resident::HostTensor;
using resident::Remainder;
using resident::Shard;
using resident::Sharding;

// What every DatasetAccessors answers, side by side.
struct Answers {
  std::size_t num_rows, first_row, batch_size, num_batches;
  Remainder remainder;
  int rank;
  Sharding sharding;
  bool empty, moved_from;
  bool operator==(const Answers& other) const {
    return num_rows == other.num_rows && first_row == other.first_row &&
           batch_size == other.batch_size && num_batches == other.num_batches &&
           remainder == other.remainder && rank == other.rank && sharding == other.sharding &&
           empty == other.empty && moved_from == other.moved_from;
  }
};

template <class Owner, class Space, class... Ts>
Answers answers(const resident::DatasetAccessors<Owner, Space, Ts...>& ds) {
  return {ds.num_rows(),   ds.first_row(), ds.batch_size(), ds.num_batches(), ds.remainder(),
          ds.shard().rank, ds.sharding(),  ds.empty(),      ds.moved_from()};
}

TEST(DatasetAccessors, EveryDatasetOfTheSameRowsAnswersAlikeOnEveryRank) {
  std::vector<std::int32_t> y(103);
  std::iota(y.begin(), y.end(), 0);
  const HostTensor<const std::int32_t> labels(y.data(), {103});
  for (const Sharding sharding : {Sharding::partitioned, Sharding::replicated}) {
    for (int rank = 0; rank < 3; ++rank) {
      SCOPED_TRACE("rank " + std::to_string(rank) + " " + resident::sharding_name(sharding));
      DatasetOptions options;
      options.batch_size = 8;
      options.remainder = Remainder::pad;
      options.shard = Shard{rank, 3, 0};
      options.sharding = sharding;
      options.streaming.chunk_batches = 2;
      const resident::DeviceDataset<HostSpace, std::int32_t> preloaded(HostSpace{}, options,
                                                                       labels);
      const resident::StreamingDataset<HostSpace, std::int32_t> streamed(HostSpace{}, options,
                                                                         labels);
      const auto chosen = resident::make_dataset(HostSpace{}, options, labels);
      const Answers expected = answers(preloaded);
      EXPECT_EQ(expected.num_batches, preloaded.num_batches());
      EXPECT_GT(expected.num_rows, 0u);
      EXPECT_EQ(answers(streamed), expected);
      EXPECT_EQ(answers(chosen), expected);
      EXPECT_EQ(preloaded.space(), HostSpace{});
    }
  }
}

TEST(DatasetAccessors, AMovedFromDatasetOfEachKindAnswersAsEmpty) {
  std::vector<std::int32_t> y(50, 7);
  const HostTensor<const std::int32_t> labels(y.data(), {50});
  DatasetOptions options;
  options.batch_size = 10;
  resident::DeviceDataset<HostSpace, std::int32_t> preloaded(HostSpace{}, options, labels);
  resident::StreamingDataset<HostSpace, std::int32_t> streamed(HostSpace{}, options, labels);
  const auto kept_preloaded = std::move(preloaded);
  const auto kept_streamed = std::move(streamed);
  for (const Answers& moved :
       {answers(preloaded), answers(streamed)}) {  // NOLINT(bugprone-use-after-move)
    EXPECT_EQ(moved.num_rows, 0u);
    EXPECT_EQ(moved.num_batches, 0u);
    EXPECT_TRUE(moved.empty);
    EXPECT_TRUE(moved.moved_from);
    EXPECT_EQ(moved.batch_size, 10u) << "the options stay as they were given";
  }
  EXPECT_EQ(answers(kept_preloaded).num_batches, 5u);
  EXPECT_EQ(answers(kept_streamed).num_batches, 5u);
  EXPECT_FALSE(kept_streamed.moved_from());
}

}  // namespace
