// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <numeric>
#include <string>
#include <vector>

#include "resident/resident.hpp"
#include "support/epoch_checks.hpp"
#include "support/spaces.hpp"

namespace {

using resident::DatasetOptions;
using resident::DeviceDataset;
using resident::HostSpace;
using resident::HostTensor;
using resident::Remainder;
using resident::Shard;
using resident::Sharding;
using resident::Shuffle;
using resident::testing::EpochRecord;
using resident::testing::record_epoch;
using resident::testing::row_ids;
using resident::testing::sharded;

// ---------------------------------------------------------------------------------------------
// shard_from_env

using Environment = std::map<std::string, std::string>;

Shard shard_in(const Environment& environment) {
  return resident::detail::shard_from([&environment](const char* name) -> const char* {
    const auto found = environment.find(name);
    return found == environment.end() ? nullptr : found->second.c_str();
  });
}

TEST(ShardFromEnv, NothingSetIsTheSingleRank) { EXPECT_EQ(shard_in({}), Shard{}); }

TEST(ShardFromEnv, ReadsEachLaunchersVariables) {
  EXPECT_EQ(shard_in({{"RANK", "3"}, {"WORLD_SIZE", "8"}, {"LOCAL_RANK", "1"}}), (Shard{3, 8, 1}));
  EXPECT_EQ(shard_in({{"OMPI_COMM_WORLD_RANK", "5"},
                      {"OMPI_COMM_WORLD_SIZE", "6"},
                      {"OMPI_COMM_WORLD_LOCAL_RANK", "2"}}),
            (Shard{5, 6, 2}));
  EXPECT_EQ(shard_in({{"PMI_RANK", "2"}, {"PMI_SIZE", "4"}}), (Shard{2, 4, 2}))
      << "PMI gives no local rank: the rank stands in";
  EXPECT_EQ(shard_in({{"SLURM_PROCID", "7"}, {"SLURM_NTASKS", "16"}, {"SLURM_LOCALID", "3"}}),
            (Shard{7, 16, 3}));
  EXPECT_EQ(shard_in({{"RANK", "1"}, {"WORLD_SIZE", "2"}}), (Shard{1, 2, 1}));
}

TEST(ShardFromEnv, TheFirstLauncherInOrderWins) {
  const Environment all = {{"RANK", "1"},
                           {"WORLD_SIZE", "2"},
                           {"LOCAL_RANK", "0"},
                           {"OMPI_COMM_WORLD_RANK", "3"},
                           {"OMPI_COMM_WORLD_SIZE", "4"},
                           {"OMPI_COMM_WORLD_LOCAL_RANK", "3"},
                           {"PMI_RANK", "5"},
                           {"PMI_SIZE", "6"},
                           {"SLURM_PROCID", "7"},
                           {"SLURM_NTASKS", "8"},
                           {"SLURM_LOCALID", "7"}};
  EXPECT_EQ(shard_in(all), (Shard{1, 2, 0}));
  Environment without = all;
  for (const char* name : {"RANK", "WORLD_SIZE", "LOCAL_RANK"}) without.erase(name);
  EXPECT_EQ(shard_in(without), (Shard{3, 4, 3}));
  for (const char* name :
       {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"})
    without.erase(name);
  EXPECT_EQ(shard_in(without), (Shard{5, 6, 5}));
  without.erase("PMI_RANK");
  without.erase("PMI_SIZE");
  EXPECT_EQ(shard_in(without), (Shard{7, 8, 7}));
}

// Every malformed environment throws resident::Error whose message names the variable at fault.
TEST(ShardFromEnv, MalformedValuesThrowNamingTheVariable) {
  struct Case {
    Environment environment;
    std::string names;
  };
  const std::vector<Case> cases = {
      {{{"RANK", "abc"}, {"WORLD_SIZE", "2"}}, "RANK"},
      {{{"RANK", ""}, {"WORLD_SIZE", "2"}}, "RANK"},
      {{{"RANK", "1x"}, {"WORLD_SIZE", "2"}}, "RANK"},
      {{{"RANK", " 1"}, {"WORLD_SIZE", "2"}}, "RANK"},
      {{{"RANK", "-1"}, {"WORLD_SIZE", "2"}}, "RANK"},
      {{{"RANK", "99999999999"}, {"WORLD_SIZE", "2"}}, "RANK"},
      {{{"RANK", "2"}, {"WORLD_SIZE", "2"}}, "RANK=2"},
      {{{"RANK", "0"}, {"WORLD_SIZE", "0"}}, "WORLD_SIZE"},
      {{{"RANK", "0"}, {"WORLD_SIZE", "-4"}}, "WORLD_SIZE"},
      {{{"RANK", "0"}, {"WORLD_SIZE", "two"}}, "WORLD_SIZE"},
      {{{"RANK", "0"}}, "WORLD_SIZE"},
      {{{"WORLD_SIZE", "4"}}, "RANK"},
      {{{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"LOCAL_RANK", "x"}}, "LOCAL_RANK"},
      {{{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"LOCAL_RANK", "-1"}}, "LOCAL_RANK"},
      {{{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"LOCAL_RANK", "2"}}, "LOCAL_RANK=2"},
      {{{"OMPI_COMM_WORLD_RANK", "4"}, {"OMPI_COMM_WORLD_SIZE", "4"}}, "OMPI_COMM_WORLD_RANK=4"},
      {{{"OMPI_COMM_WORLD_SIZE", "4"}}, "OMPI_COMM_WORLD_RANK"},
      {{{"PMI_RANK", "1"}, {"PMI_SIZE", "1"}}, "PMI_RANK=1"},
      {{{"PMI_RANK", "1"}}, "PMI_SIZE"},
      {{{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "0"}}, "SLURM_NTASKS"},
      {{{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2"}, {"SLURM_LOCALID", "9"}}, "SLURM_LOCALID"},
  };
  for (const Case& bad : cases) {
    SCOPED_TRACE(bad.names);
    try {
      (void)shard_in(bad.environment);
      ADD_FAILURE() << "no exception";
    } catch (const resident::Error& error) {
      EXPECT_NE(std::string(error.what()).find(bad.names), std::string::npos) << error.what();
    }
  }
}

TEST(ShardFromEnv, ReadsTheProcessEnvironment) {
  ASSERT_EQ(::setenv("RANK", "1", 1), 0);
  ASSERT_EQ(::setenv("WORLD_SIZE", "3", 1), 0);
  ASSERT_EQ(::setenv("LOCAL_RANK", "1", 1), 0);
  const Shard shard = resident::shard_from_env();
  ::unsetenv("RANK");
  ::unsetenv("WORLD_SIZE");
  ::unsetenv("LOCAL_RANK");
  EXPECT_EQ(shard, (Shard{1, 3, 1}));
}

TEST(Shard, InvalidShardsAreRefusedByTheDataset) {
  const std::vector<float> data(10, 1.0f);
  for (const Shard& bad :
       {Shard{0, 0, 0}, Shard{2, 2, 0}, Shard{-1, 2, 0}, Shard{0, 2, 2}, Shard{0, 2, -1}}) {
    DatasetOptions options;
    options.shard = bad;
    EXPECT_THROW(resident::validate(bad), resident::InvalidArgument);
    EXPECT_THROW((DeviceDataset<HostSpace, float>(HostSpace{}, options,
                                                  HostTensor<const float>(data.data(), {10}))),
                 resident::InvalidArgument);
  }
}

TEST(Shard, LocalRankPicksTheDevice) {
  using resident::detail::device_for_local_rank;
  EXPECT_THROW(device_for_local_rank(0, 0), resident::InvalidArgument) << "no device to pick";
  EXPECT_THROW(device_for_local_rank(3, 0), resident::InvalidArgument) << "no device to pick";
  EXPECT_EQ(device_for_local_rank(3, 1), 0) << "one visible device: the launcher isolated it";
  EXPECT_THROW(device_for_local_rank(-1, 1), resident::InvalidArgument);
  EXPECT_EQ(device_for_local_rank(1, 4), 1);
  EXPECT_EQ(device_for_local_rank(3, 4), 3);
  EXPECT_THROW(device_for_local_rank(4, 4), resident::InvalidArgument);
  EXPECT_THROW(device_for_local_rank(-1, 2), resident::InvalidArgument);
}

// ---------------------------------------------------------------------------------------------
// Sharded datasets, typed over the spaces.

template <class Space>
using ShardedDataset = resident::testing::OverSpaces<Space>;
TYPED_TEST_SUITE(ShardedDataset, resident::testing::SpaceTypes, resident::testing::SpaceName);

TYPED_TEST(ShardedDataset, ZeroCopyEpochsOfAllRanksCoverTheRowsWithEqualBatches) {
  resident::testing::check_ranks_cover_the_epoch(this->space_, {Shuffle::none, Shuffle::batches});
}

TEST(ShardedHostDataset, ShuffledEpochsOfAllRanksCoverTheRowsWithEqualBatches) {
  resident::testing::check_ranks_cover_the_epoch(HostSpace{}, {Shuffle::samples});
}

// Step k of a replicated job trains on exactly the rows of step k of one rank with the global
// batch size: the rule that makes data-parallel SGD equal single-process SGD.
TEST(ShardedHostDataset, ReplicatedStepsEqualTheGlobalBatchOfOneRank) {
  for (const std::size_t n : {7, 64, 100, 1001}) {
    const auto ids = row_ids(n);
    for (const int world : {2, 3, 4}) {
      for (const Remainder remainder : {Remainder::drop, Remainder::partial, Remainder::pad}) {
        constexpr std::size_t batch = 8;
        DeviceDataset<HostSpace, std::int64_t> single(
            HostSpace{}, resident::testing::epoch_options(batch * world, remainder),
            HostTensor<const std::int64_t>(ids.data(), {n}));
        std::vector<DeviceDataset<HostSpace, std::int64_t>> ranks;
        ranks.reserve(static_cast<std::size_t>(world));
        for (int rank = 0; rank < world; ++rank)
          ranks.emplace_back(HostSpace{},
                             sharded(batch, remainder, Sharding::replicated, rank, world),
                             HostTensor<const std::int64_t>(ids.data(), {n}));
        for (const Shuffle shuffle : {Shuffle::none, Shuffle::batches, Shuffle::samples}) {
          SCOPED_TRACE("n " + std::to_string(n) + ", world " + std::to_string(world) + ", " +
                       resident::remainder_name(remainder) + ", " +
                       resident::testing::shuffle_name(shuffle));
          const EpochRecord whole = record_epoch(single, {5, 9, shuffle});
          std::vector<EpochRecord> parts;
          parts.reserve(ranks.size());
          for (auto& ds : ranks) parts.push_back(record_epoch(ds, {5, 9, shuffle}));
          ASSERT_EQ(parts[0].batches.size(), whole.batches.size());
          for (std::size_t k = 0; k < whole.batches.size(); ++k) {
            std::vector<std::int64_t> expected(
                whole.batches[k].begin(),
                whole.batches[k].begin() + static_cast<std::ptrdiff_t>(whole.valid[k]));
            std::vector<std::int64_t> got;
            for (const auto& part : parts)
              got.insert(got.end(), part.batches[k].begin(),
                         part.batches[k].begin() + static_cast<std::ptrdiff_t>(part.valid[k]));
            std::sort(expected.begin(), expected.end());
            std::sort(got.begin(), got.end());
            ASSERT_EQ(got, expected) << "step " << k;
          }
        }
      }
    }
  }
}

TEST(ShardedHostDataset, EpochsAreReproducibleAndDifferByEpoch) {
  const auto ids = row_ids(500);
  for (const Sharding sharding : {Sharding::partitioned, Sharding::replicated}) {
    DeviceDataset<HostSpace, std::int64_t> ds(HostSpace{},
                                              sharded(16, Remainder::partial, sharding, 1, 3),
                                              HostTensor<const std::int64_t>(ids.data(), {500}));
    for (const Shuffle shuffle : {Shuffle::batches, Shuffle::samples}) {
      const EpochRecord first = record_epoch(ds, {42, 0, shuffle});
      EXPECT_EQ(record_epoch(ds, {42, 0, shuffle}).batches, first.batches);
      EXPECT_NE(record_epoch(ds, {42, 1, shuffle}).batches, first.batches);
      EXPECT_NE(record_epoch(ds, {43, 0, shuffle}).batches, first.batches);
    }
  }
}

// Replicated ranks trade their share of each round between epochs under Shuffle::batches, so
// that no rank sees the same rows every epoch.
TEST(ShardedHostDataset, ReplicatedRanksSeeDifferentRowsAcrossEpochs) {
  const auto ids = row_ids(4096);
  DeviceDataset<HostSpace, std::int64_t> ds(
      HostSpace{}, sharded(64, Remainder::drop, Sharding::replicated, 0, 4),
      HostTensor<const std::int64_t>(ids.data(), {4096}));
  std::vector<int> seen(4096, 0);
  for (std::uint64_t epoch = 0; epoch < 8; ++epoch)
    for (const auto& batch : record_epoch(ds, {1, epoch, Shuffle::batches}).batches)
      for (const std::int64_t row : batch) seen[static_cast<std::size_t>(row)] = 1;
  const int distinct = std::accumulate(seen.begin(), seen.end(), 0);
  EXPECT_GT(distinct, 1024 * 2) << "rank 0 saw only " << distinct << " distinct rows in 8 epochs";
}

TYPED_TEST(ShardedDataset, PartitionedRanksHoldTheirPartOnly) {
  constexpr std::size_t n = 1001, columns = 16;
  std::vector<float> features(n * columns, 0.5f);
  const auto ids = row_ids(n);
  std::size_t total_rows = 0;
  for (int rank = 0; rank < 4; ++rank) {
    const DatasetOptions options = sharded(32, Remainder::partial, Sharding::partitioned, rank, 4);
    const HostTensor<const float> x(features.data(), {n, columns});
    const HostTensor<const std::int64_t> y(ids.data(), {n});
    const resident::Plan plan = resident::plan(this->space_, options, x, y);
    DeviceDataset<TypeParam, float, std::int64_t> ds(this->space_, options, x, y);
    EXPECT_EQ(ds.bytes(), plan.needed_bytes);
    EXPECT_LE(ds.bytes(), plan.partitioned_rank_bytes);
    EXPECT_LT(plan.partitioned_rank_bytes * 3, plan.replicated_rank_bytes)
        << "a quarter of the rows per rank, plus alignment and padding";
    EXPECT_EQ(ds.num_rows(), rank == 0 ? 251u : 250u);
    EXPECT_EQ(ds.first_row(), rank == 0 ? 0u : 251u + 250u * static_cast<std::size_t>(rank - 1));
    EXPECT_EQ(ds.num_batches(), 8u);  // ceil(251 / 32) on every rank
    EXPECT_EQ(ds.shard(), (Shard{rank, 4, rank}));
    EXPECT_EQ(plan.shard, ds.shard());
    EXPECT_NE(plan.reason.find("rank " + std::to_string(rank) + " of 4 (partitioned)"),
              std::string::npos)
        << plan.reason;
    total_rows += ds.num_rows();
    const auto last = resident::testing::read_back(ds.space(), ds.stream(),
                                                   std::get<1>(ds.batch(ds.num_batches() - 1)));
    const std::size_t valid = std::get<1>(ds.batch(ds.num_batches() - 1)).valid_rows();
    EXPECT_EQ(last.size(), 251u - 7 * 32) << "every rank's last batch is as long as the longest";
    EXPECT_EQ(valid, ds.num_rows() - 7 * 32);
    for (std::size_t r = 0; r < valid; ++r)
      EXPECT_EQ(last[r], static_cast<std::int64_t>(ds.first_row() + 7 * 32 + r));
    for (std::size_t r = valid; r < last.size(); ++r)  // padding: the part's first rows
      EXPECT_EQ(last[r], static_cast<std::int64_t>(ds.first_row() + r - valid));
  }
  EXPECT_EQ(total_rows, n);
}

TYPED_TEST(ShardedDataset, RanksWithoutRowsStillServeEveryStep) {
  const auto ids = row_ids(3);
  for (int rank = 0; rank < 5; ++rank) {
    DeviceDataset<TypeParam, std::int64_t> ds(
        this->space_, sharded(4, Remainder::pad, Sharding::partitioned, rank, 5),
        HostTensor<const std::int64_t>(ids.data(), {3}));
    EXPECT_EQ(ds.empty(), rank >= 3);
    ASSERT_EQ(ds.num_batches(), 1u);
    const auto [view] = ds.batch(0);
    EXPECT_EQ(view.rows(), 4u);
    EXPECT_EQ(view.valid_rows(), rank < 3 ? 1u : 0u);
    for (const std::int64_t row : resident::testing::read_back(ds.space(), ds.stream(), view))
      EXPECT_TRUE(row >= 0 && row < 3);
  }
}

// ---------------------------------------------------------------------------------------------
// Ranks with different free memory: the streaming chunking must not depend on it, and a
// preloaded rank must step with a streamed one.

/// Per step of one epoch: the rows, the valid rows and the row ids (value = row).
struct Steps {
  std::vector<std::size_t> rows;
  std::vector<std::size_t> valid;
  std::vector<std::vector<std::int64_t>> ids;
};

template <class Dataset>
Steps record_steps(Dataset& ds, const resident::EpochOptions& options) {
  Steps steps;
  for (auto [batch] : ds.epoch(options)) {
    steps.rows.push_back(batch.rows());
    steps.valid.push_back(batch.valid_rows());
    steps.ids.emplace_back(batch.data(), batch.data() + batch.valid_rows());
  }
  return steps;
}

/// Every rank takes the same steps: equal batch counts and rows at every step, and every step
/// but the last full (the only one whose real rows may differ between ranks).
void expect_same_steps(const std::vector<Steps>& ranks, std::size_t batch) {
  for (std::size_t rank = 0; rank < ranks.size(); ++rank) {
    ASSERT_EQ(ranks[rank].rows.size(), ranks[0].rows.size()) << "rank " << rank;
    for (std::size_t k = 0; k < ranks[rank].rows.size(); ++k) {
      ASSERT_EQ(ranks[rank].rows[k], ranks[0].rows[k]) << "rank " << rank << ", step " << k;
      if (k + 1 < ranks[rank].rows.size()) {
        ASSERT_EQ(ranks[rank].valid[k], batch) << "rank " << rank << ", step " << k;
      }
    }
  }
}

/// Replicated: step j's replicas together are one global batch, the same on every rank, and the
/// steps cover the served rows once. Under a batch-level shuffle (`runs`) a global batch is a run
/// of world * batch rows from a multiple of it past the epoch's first row (under `drop`, a
/// shuffled epoch starts at a seeded offset, so that the rows left out change); a sample shuffle
/// draws its rows from the whole epoch (or a window).
void expect_one_global_order(const std::vector<Steps>& ranks, std::size_t batch, std::size_t n,
                             Remainder remainder, bool runs) {
  std::vector<int> seen(n, 0);
  const std::size_t round = ranks.size() * batch;
  std::int64_t first = static_cast<std::int64_t>(n);
  for (const Steps& rank : ranks)
    for (const auto& ids : rank.ids)
      for (const std::int64_t id : ids) first = std::min(first, id);
  const std::size_t served = remainder == Remainder::drop ? n / round * round : n;
  ASSERT_LE(static_cast<std::size_t>(first) + served, n);
  for (std::size_t k = 0; k < ranks[0].ids.size(); ++k) {
    std::vector<std::int64_t> step;
    for (const Steps& rank : ranks) step.insert(step.end(), rank.ids[k].begin(), rank.ids[k].end());
    std::sort(step.begin(), step.end());
    ASSERT_FALSE(step.empty()) << "step " << k;
    if (runs) {
      ASSERT_EQ(static_cast<std::size_t>(step.front() - first) % round, 0u) << "step " << k;
    }
    for (std::size_t r = 0; r < step.size(); ++r) {
      if (runs) {
        ASSERT_EQ(step[r], step.front() + static_cast<std::int64_t>(r))
            << "step " << k << ": the ranks took rows of different global batches";
      }
      ++seen[static_cast<std::size_t>(step[r])];
    }
  }
  std::size_t total = 0;
  for (std::size_t row = 0; row < n; ++row) {
    ASSERT_LE(seen[row], 1) << row;
    total += static_cast<std::size_t>(seen[row]);
    if (runs) {
      const bool in_run =
          row >= static_cast<std::size_t>(first) && row < static_cast<std::size_t>(first) + served;
      ASSERT_EQ(seen[row], in_run ? 1 : 0) << row;
    }
  }
  ASSERT_EQ(total, served);
}

DatasetOptions streamed_rank(Remainder remainder, Sharding sharding, int rank) {
  DatasetOptions options = sharded(10, remainder, sharding, rank, 2);
  options.streaming.chunk_batches = 0;  // automatic
  return options;
}

// 1 MiB and 6000 B of budget: a chunking from the rank's memory would give 1 and 11 chunks.
TEST(ShardedStreaming, RanksWithDifferentMemoryTakeTheSameSteps) {
  const std::vector<resident::HostSpace> budgets = {HostSpace::with_budget(1 << 20),
                                                    HostSpace::with_budget(6000)};
  for (const std::size_t n : {1010, 1011}) {
    const auto ids = row_ids(n);
    const HostTensor<const std::int64_t> tensor(ids.data(), {n});
    for (const Sharding sharding : {Sharding::partitioned, Sharding::replicated}) {
      for (const Remainder remainder : {Remainder::drop, Remainder::partial, Remainder::pad}) {
        std::vector<resident::StreamingDataset<HostSpace, std::int64_t>> ranks;
        ranks.reserve(2);
        for (int rank = 0; rank < 2; ++rank)
          ranks.emplace_back(budgets[static_cast<std::size_t>(rank)],
                             streamed_rank(remainder, sharding, rank), tensor);
        EXPECT_EQ(ranks[0].chunk_batches(), ranks[1].chunk_batches());
        for (const Shuffle shuffle : {Shuffle::none, Shuffle::batches, Shuffle::samples}) {
          SCOPED_TRACE("n " + std::to_string(n) + ", " + resident::sharding_name(sharding) + ", " +
                       resident::remainder_name(remainder) + ", " +
                       resident::testing::shuffle_name(shuffle));
          std::vector<Steps> steps;
          steps.reserve(ranks.size());
          for (auto& ds : ranks) steps.push_back(record_steps(ds, {3, 1, shuffle}));
          expect_same_steps(steps, 10);
          if (sharding == Sharding::replicated)
            expect_one_global_order(steps, 10, n, remainder, shuffle != Shuffle::samples);
        }
      }
    }
  }
}

// make_dataset preloads on the roomy rank and streams (chunks of 4 batches, the same on both
// ranks) on the tight one: the same steps.
TEST(ShardedStreaming, APreloadedAndAStreamedRankTakeTheSameSteps) {
  for (const std::size_t n : {1010, 1011, 1019}) {
    const auto ids = row_ids(n);
    const HostTensor<const std::int64_t> tensor(ids.data(), {n});
    for (const Remainder remainder : {Remainder::drop, Remainder::partial, Remainder::pad}) {
      std::array<DatasetOptions, 2> options = {streamed_rank(remainder, Sharding::partitioned, 0),
                                               streamed_rank(remainder, Sharding::partitioned, 1)};
      for (DatasetOptions& rank : options) rank.streaming.chunk_batches = 4;
      auto roomy = resident::make_dataset(HostSpace::with_budget(1 << 20), options[0], tensor);
      // Too little for the data, enough for the chunk slots and a sample shuffle's gather ring.
      auto tight = resident::make_dataset(HostSpace::with_budget(3400), options[1], tensor);
      ASSERT_FALSE(roomy.is_streaming());
      ASSERT_TRUE(tight.is_streaming());
      for (const Shuffle shuffle : {Shuffle::none, Shuffle::batches, Shuffle::samples}) {
        SCOPED_TRACE("n " + std::to_string(n) + ", " + resident::remainder_name(remainder) + ", " +
                     resident::testing::shuffle_name(shuffle));
        expect_same_steps(
            {record_steps(roomy, {3, 1, shuffle}), record_steps(tight, {3, 1, shuffle})}, 10);
      }
    }
  }
}

// A replicated rank that cannot preload cannot keep the global order of those that can.
TEST(ShardedStreaming, MakeDatasetRefusesToStreamAReplicatedRank) {
  const auto ids = row_ids(1010);
  const HostTensor<const std::int64_t> tensor(ids.data(), {1010});
  const HostSpace tight = HostSpace::with_budget(6000);
  try {
    (void)resident::make_dataset(tight, streamed_rank(Remainder::partial, Sharding::replicated, 1),
                                 tensor);
    FAIL() << "a replicated rank was streamed";
  } catch (const resident::CapacityError& error) {
    const std::string what = error.what();
    EXPECT_NE(what.find("Sharding::partitioned"), std::string::npos) << what;
    EXPECT_NE(what.find("StreamingDataset"), std::string::npos) << what;
  }
  EXPECT_EQ(tight.used_bytes(), 0u);
  EXPECT_FALSE(resident::make_dataset(HostSpace::with_budget(1 << 20),
                                      streamed_rank(Remainder::partial, Sharding::replicated, 0),
                                      tensor)
                   .is_streaming());
}

// Automatic chunks of a sharded job come from what every rank shares; where that ring does
// not fit a rank, the refusal says to set the chunking, the same on every rank.
TEST(ShardedStreaming, AutomaticChunksThatDoNotFitARankAreRefusedWithAdvice) {
  std::vector<std::int32_t> ids(1010);  // no compact type: the plan recommends streaming
  std::iota(ids.begin(), ids.end(), 0);
  const HostTensor<const std::int32_t> tensor(ids.data(), {1010});
  DatasetOptions options = streamed_rank(Remainder::partial, Sharding::partitioned, 1);
  options.ring_depth = 1;
  // A rank's part is 2020 B; two explicit chunks of 2 batches (1 KiB) and a gather ring of 1
  // batch (512 B) fit, the automatic chunking does not.
  const HostSpace tiny = HostSpace::with_budget(1536);
  const auto verdict = resident::plan(tiny, options, tensor);
  EXPECT_EQ(verdict.stream_chunk_batches,
            resident::plan(HostSpace::with_budget(1 << 20), options, tensor).stream_chunk_batches);
  EXPECT_EQ(verdict.recommendation, resident::Recommendation::refuse);
  EXPECT_FALSE(verdict.stream_fits);
  EXPECT_NE(verdict.reason.find("set StreamOptions::chunk_batches explicitly"), std::string::npos)
      << verdict.reason;
  // The smallest budget is that of the automatic chunks, which do not shrink on a sharded rank.
  EXPECT_GT(verdict.stream_min_bytes, std::size_t{1536}) << verdict.reason;
  const auto enough =
      resident::plan(HostSpace::with_budget(verdict.stream_min_bytes), options, tensor);
  EXPECT_TRUE(enough.stream_fits) << enough;
  EXPECT_NE(enough.recommendation, resident::Recommendation::refuse) << enough;
  try {
    resident::StreamingDataset<HostSpace, std::int32_t> ds(tiny, options, tensor);
    FAIL() << "a ring of " << ds.bytes() << " B in 2 KiB";
  } catch (const resident::CapacityError& error) {
    EXPECT_NE(std::string(error.what()).find("same value on every rank"), std::string::npos)
        << error.what();
  }
  DatasetOptions explicit_chunks = options;
  explicit_chunks.streaming.chunk_batches = 2;
  resident::StreamingDataset<HostSpace, std::int32_t> ds(tiny, explicit_chunks, tensor);
  EXPECT_EQ(ds.chunk_batches(), 2u);
}

}  // namespace
