// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "resident/dataset.hpp"
#include "resident/device_dataset.hpp"
#include "resident/host_space.hpp"
#include "resident/plan.hpp"
#include "support/epoch_checks.hpp"

namespace {

using resident::DatasetOptions;
using resident::HostSpace;
using resident::HostTensor;
using resident::Remainder;
using resident::Sharding;
using resident::testing::sharded;

TEST(Plan, CountsAlignedBytesAndBatchesWithoutAllocating) {
  const HostSpace space = HostSpace::with_budget(10000);
  const std::vector<float> x(std::size_t{100} * 3);  // 1200 bytes, next field at 1280
  const std::vector<std::int32_t> y(100);            // 400 bytes
  DatasetOptions options;
  options.batch_size = 32;
  options.remainder = resident::Remainder::drop;
  const auto verdict = resident::plan(space, options, HostTensor<const float>(x.data(), {100, 3}),
                                      HostTensor<const std::int32_t>(y.data(), {100}));
  EXPECT_EQ(verdict.needed_bytes, 1280u + 400u);
  EXPECT_EQ(verdict.free_bytes, 10000u);
  EXPECT_EQ(verdict.total_bytes, 10000u);
  EXPECT_EQ(verdict.reserve_bytes, 0u);  // a budget has no default reserve
  EXPECT_EQ(verdict.num_rows, 100u);
  EXPECT_EQ(verdict.num_batches, 3u);
  EXPECT_TRUE(verdict.fits);
  EXPECT_EQ(verdict.space_name, "host");
  EXPECT_EQ(space.used_bytes(), 0u);
  std::ostringstream printed;
  printed << verdict;
  EXPECT_EQ(printed.str().rfind(verdict.reason, 0), 0u) << "the reason comes first";
  EXPECT_NE(printed.str().find("recommendation: preload\n"), std::string::npos) << printed.str();
  EXPECT_EQ(verdict.recommendation, resident::Recommendation::preload);
  EXPECT_NE(verdict.reason.find("fits: needs 1.6 KiB on host"), std::string::npos)
      << verdict.reason;
}

TEST(Plan, ReserveDecidesAtTheExactByte) {
  const HostSpace space = HostSpace::with_budget(5000);
  const std::vector<std::uint8_t> x(1000);
  const HostTensor<const std::uint8_t> tensor(x.data(), {1000});
  DatasetOptions options;
  options.reserve_bytes = 4000;
  EXPECT_TRUE(resident::plan(space, options, tensor).fits);
  options.reserve_bytes = 4001;
  const auto refused = resident::plan(space, options, tensor);
  EXPECT_FALSE(refused.fits);
  EXPECT_EQ(refused.reason.rfind(refused.refusal().what(), 0), 0u)
      << "the refusal's sentence, then the recommendation: " << refused.reason;
  EXPECT_EQ(refused.refusal().needed_bytes(), 1000u);
  EXPECT_EQ(refused.refusal().reserve_bytes(), 4001u);
}

TEST(Plan, DefaultReserveComesFromTheSpace) {
  const std::vector<std::uint8_t> x(10);
  const auto verdict =
      resident::plan(HostSpace{}, DatasetOptions{}, HostTensor<const std::uint8_t>(x.data(), {10}));
  EXPECT_EQ(verdict.reserve_bytes, HostSpace{}.default_reserve_bytes());
}

// The recommendations, each reached by a constructed case, with exact figures. The data: 1000
// rows of 16 pixels (uint8, 16000 B, the labels' base aligned up to 16128) and an int32 label
// (4000 B): 20128 B in all; or the same with float32 features.
struct Recommend : ::testing::Test {
  std::vector<std::uint8_t> pixels = std::vector<std::uint8_t>(std::size_t{1000} * 16);
  std::vector<float> features = std::vector<float>(std::size_t{1000} * 4);
  std::vector<std::int32_t> labels = std::vector<std::int32_t>(1000);
  HostTensor<const std::uint8_t> x{pixels.data(), {1000, 16}};
  HostTensor<const float> f{features.data(), {1000, 4}};
  HostTensor<const std::int32_t> y{labels.data(), {1000}};
  DatasetOptions options = [] {
    DatasetOptions o;
    o.batch_size = 100;
    return o;
  }();
};

TEST_F(Recommend, PreloadCompactNamesTheDtypeAndItsBytes) {
  const auto verdict = resident::plan(HostSpace::with_budget(15000), options, f, y);
  EXPECT_FALSE(verdict.fits);
  EXPECT_EQ(verdict.needed_bytes, 16128u + 4000u);
  EXPECT_EQ(verdict.recommendation, resident::Recommendation::preload_compact);
  EXPECT_EQ(verdict.compact_bytes, 8192u + 4000u);  // 8000 B of bfloat16, aligned, + labels
  EXPECT_EQ(verdict.compact_dtypes, "field 0 float32 -> bfloat16");
  EXPECT_NE(verdict.reason.find("preload it compact: stored as field 0 float32 -> bfloat16"),
            std::string::npos)
      << verdict.reason;
}

TEST_F(Recommend, PartitionWhenEachRankOfTheWorldGivenFits) {
  options.shard = resident::Shard{0, 2, 0};
  options.sharding = resident::Sharding::replicated;
  const auto verdict = resident::plan(HostSpace::with_budget(15000), options, x, y);
  EXPECT_FALSE(verdict.fits);
  EXPECT_EQ(verdict.needed_bytes, 20128u);
  EXPECT_TRUE(verdict.compact_dtypes.empty()) << "uint8 and int32 have no smaller type";
  EXPECT_EQ(verdict.compact_bytes, verdict.needed_bytes);
  EXPECT_EQ(verdict.recommendation, resident::Recommendation::partition);
  EXPECT_EQ(verdict.partitioned_rank_bytes, 8192u + 2000u);  // 500 rows per rank
  EXPECT_EQ(verdict.partition_world_size, 2u);
  EXPECT_NE(verdict.reason.find("partition it: with Sharding::partitioned across the 2 ranks "
                                "each needs 10.0 KiB"),
            std::string::npos)
      << verdict.reason;
}

TEST_F(Recommend, StreamWithTheRingFiguresAndTheRanksThatWouldFit) {
  options.ring_depth = 1;
  const auto verdict = resident::plan(HostSpace::with_budget(18000), options, x, y);
  EXPECT_EQ(verdict.recommendation, resident::Recommendation::stream);
  // The gather ring first: one batch of 100 rows, x as float (6400 B), y (400 B, to 6912 B
  // aligned) and the row ids (800 B): 7936 B aligned. Automatic chunks: the 10064 B it leaves
  // over 4 slots is 2516 B, one batch takes 1600 + 400 B, aligned 2304 B: one batch per chunk,
  // ten chunks, 4 chunk slots of 2304 B.
  EXPECT_EQ(verdict.ring_bytes, 7936u);
  EXPECT_EQ(verdict.stream_chunk_batches, 1u);
  EXPECT_EQ(verdict.stream_chunks, 10u);
  EXPECT_EQ(verdict.stream_slots_bytes, 4u * 2304u);
  EXPECT_TRUE(verdict.stream_fits);
  EXPECT_EQ(verdict.stream_order, resident::StreamOrder::whole_epoch);
  EXPECT_EQ(verdict.partition_world_size, 2u);
  EXPECT_NE(verdict.reason.find("stream it: a StreamingDataset keeps chunk slots of 9.0 KiB"),
            std::string::npos)
      << verdict.reason;
  EXPECT_NE(verdict.reason.find("partitioned across 2 or more ranks it would fit"),
            std::string::npos)
      << verdict.reason;
  std::ostringstream printed;
  printed << verdict;
  EXPECT_NE(printed.str().find("recommendation: stream"), std::string::npos) << printed.str();
  EXPECT_NE(printed.str().find("stream:    chunk slots of 9.0 KiB (10 chunk(s) of 1 batch(es)) and "
                               "ring_bytes 7.8 KiB, whole_epoch order, fit together"),
            std::string::npos)
      << printed.str();
  EXPECT_NE(printed.str().find("ring:      7.8 KiB for gathering epochs, does not fit beside "
                               "the data"),
            std::string::npos)
      << printed.str();
  // Seven bytes less and the two rings no longer fit together.
  EXPECT_FALSE(
      resident::plan(HostSpace::with_budget(4 * 2304 + 7936 - 7), options, x, y).stream_fits);
}

// Nothing fits, not even a stream: the plan refuses and names the smallest free memory in which
// a stream of these options runs (slots of one batch each, the ring and the reserve).
TEST_F(Recommend, RefuseNamesTheSmallestBudgetThatStreams) {
  const auto verdict = resident::plan(HostSpace::with_budget(5000), options, x, y);
  EXPECT_EQ(verdict.recommendation, resident::Recommendation::refuse);
  EXPECT_FALSE(verdict.stream_fits);
  EXPECT_EQ(verdict.partition_world_size, 5u);  // 200 rows: 3200 -> 3328 + 800 B
  // 4 slots of one batch (1600 B -> 1792 + 400 -> 2304 B) and the ring of 2 batches (15872 B).
  EXPECT_EQ(verdict.stream_min_bytes, 4u * 2304 + 15872);
  EXPECT_NE(verdict.reason.find("refuse: not even a stream fits: its chunk slots of 9.0 KiB (10 "
                                "chunks of 1 batches) and gather ring of 15.5 KiB need more "
                                "than the 4.9 KiB usable. The smallest stream of these options "
                                "runs in 24.5 KiB free (25088 B, the reserve included)"),
            std::string::npos)
      << verdict.reason;
  std::ostringstream printed;
  printed << verdict;
  EXPECT_NE(printed.str().find("recommendation: refuse\n"), std::string::npos) << printed.str();
  EXPECT_NE(printed.str().find("do not fit together; runs from 24.5 KiB free"), std::string::npos)
      << printed.str();
}

// The smallest budget is exact, under every combination of the options it depends on: in it
// make_dataset streams and serves an epoch (one that widens the labels, as the ring was planned
// for); one byte less, plan() refuses and so does make_dataset, with the same figure, before
// anything is allocated.
TEST_F(Recommend, TheSmallestBudgetStreamsAndOneByteLessIsRefused) {
  for (const std::size_t ring_depth : {1, 3})
    for (const std::size_t chunk_batches : {0, 3})
      for (const std::size_t chunk_slots : {2, 5})
        for (const std::size_t reserve : {0, 777}) {
          SCOPED_TRACE("ring_depth " + std::to_string(ring_depth) + ", chunk_batches " +
                       std::to_string(chunk_batches) + ", chunk_slots " +
                       std::to_string(chunk_slots) + ", reserve " + std::to_string(reserve));
          DatasetOptions tight = options;
          tight.batch_size = 10;
          tight.ring_depth = ring_depth;
          tight.reserve_bytes = reserve;
          tight.streaming = resident::StreamOptions{chunk_batches, chunk_slots, 1};
          tight.ring_element_bytes = 8;  // planned for the labels' cast to int64 below
          const std::size_t least =
              resident::plan(HostSpace::with_budget(1000), tight, x, y).stream_min_bytes;
          ASSERT_GT(least, reserve);
          const auto at_least = resident::plan(HostSpace::with_budget(least), tight, x, y);
          EXPECT_EQ(at_least.recommendation, resident::Recommendation::stream) << at_least;
          EXPECT_EQ(at_least.stream_min_bytes, least);
          const HostSpace enough = HostSpace::with_budget(least);
          auto ds = resident::make_dataset(enough, tight, x, y);
          ASSERT_TRUE(ds.is_streaming());
          std::size_t rows = 0;
          for (auto [pixels, label] :
               ds.epoch({1, 0, resident::Shuffle::samples},
                        resident::convert<1>(resident::Cast<std::int64_t>{})))
            rows += label.valid_rows();
          EXPECT_EQ(rows, 1000u);
          const auto below = resident::plan(HostSpace::with_budget(least - 1), tight, x, y);
          EXPECT_EQ(below.recommendation, resident::Recommendation::refuse) << below;
          const HostSpace short_by_one = HostSpace::with_budget(least - 1);
          try {
            (void)resident::make_dataset(short_by_one, tight, x, y);
            ADD_FAILURE() << "made a dataset one byte below the smallest budget";
          } catch (const resident::CapacityError& error) {
            EXPECT_NE(std::string(error.what()).find("(" + std::to_string(least) + " B, "),
                      std::string::npos)
                << error.what();
            EXPECT_EQ(short_by_one.used_bytes(), 0u) << "nothing is left allocated";
          }
        }
}

// Invalid StreamOptions do not keep plan() from answering the preload question; the stream
// figures say that streaming would be refused, and why.
TEST_F(Recommend, InvalidStreamOptionsLeaveThePreloadFiguresAndSayWhyNotStream) {
  options.streaming = resident::StreamOptions{0, 1, 2};
  const auto roomy = resident::plan(HostSpace::with_budget(1 << 20), options, x, y);
  EXPECT_TRUE(roomy.fits);
  EXPECT_EQ(roomy.recommendation, resident::Recommendation::preload);
  EXPECT_FALSE(roomy.stream_fits);
  EXPECT_NE(roomy.stream_refusal.find("chunk_slots (1) must exceed prefetch_chunks (2)"),
            std::string::npos)
      << roomy.stream_refusal;
  const auto tight = resident::plan(HostSpace::with_budget(5000), options, x, y);
  EXPECT_EQ(tight.recommendation, resident::Recommendation::refuse);
  EXPECT_EQ(tight.stream_min_bytes, 0u);
  EXPECT_FALSE(tight.stream_fits);
  EXPECT_NE(tight.reason.find(tight.stream_refusal), std::string::npos) << tight.reason;
  std::ostringstream printed;
  printed << tight;
  EXPECT_NE(printed.str().find("stream:    refused: " + tight.stream_refusal), std::string::npos)
      << printed.str();
}

// Options at their maximum never overflow: the ring is capped by the data, the chunk by the
// batches, and a batch of SIZE_MAX rows is one batch of the rows there are.
TEST_F(Recommend, OptionsAtTheirMaximumDoNotOverflow) {
  constexpr std::size_t max = std::numeric_limits<std::size_t>::max();
  options.streaming = resident::StreamOptions{max, max, max - 1};
  const auto huge_ring = resident::plan(HostSpace::with_budget(1 << 20), options, x, y);
  EXPECT_EQ(huge_ring.stream_chunks, 1u);
  EXPECT_EQ(huge_ring.stream_slots_bytes, 20224u);  // the data, 256-aligned
  EXPECT_TRUE(huge_ring.stream_fits);
  options.streaming = resident::StreamOptions{};
  options.batch_size = max;
  const auto one_batch = resident::plan(HostSpace::with_budget(1 << 20), options, x, y);
  EXPECT_EQ(one_batch.num_batches, 1u);
  EXPECT_EQ(one_batch.needed_bytes, 20128u);
  EXPECT_EQ(one_batch.stream_slots_bytes, 20224u);
  EXPECT_TRUE(one_batch.fits);
  options.reserve_bytes = max;
  const auto all_reserved = resident::plan(HostSpace::with_budget(1 << 20), options, x, y);
  EXPECT_FALSE(all_reserved.fits);
  EXPECT_FALSE(all_reserved.stream_fits);
  EXPECT_EQ(all_reserved.stream_min_bytes, max) << "saturated, not wrapped";
  EXPECT_EQ(all_reserved.recommendation, resident::Recommendation::refuse);
}

// Options no dataset could be made with are refused by plan() as the constructors refuse them,
// whatever the plan would recommend: a plan is never the first to say yes.
TEST_F(Recommend, OptionsNoDatasetTakesAreRefusedAsTheConstructorsRefuseThem) {
  const auto refused = [&](const DatasetOptions& with, const char* part) {
    try {
      (void)resident::plan(HostSpace::with_budget(1 << 20), with, x, y);
      ADD_FAILURE() << "plan() took what no dataset takes: " << part;
    } catch (const resident::InvalidArgument& error) {
      EXPECT_NE(std::string(error.what()).find(part), std::string::npos) << error.what();
    }
  };
  DatasetOptions no_block = options;
  no_block.upload_block_bytes = 0;
  refused(no_block, "upload_block_bytes is 0");
  DatasetOptions no_staging = options;
  no_staging.staging_buffers = 0;
  refused(no_staging, "staging_buffers is 0");
  DatasetOptions no_ring = options;
  no_ring.ring_depth = 0;
  refused(no_ring, "ring_depth is 0");
  EXPECT_THROW(
      (resident::DeviceDataset<HostSpace, std::uint8_t, std::int32_t>(HostSpace{}, no_ring, x, y)),
      resident::InvalidArgument)
      << "refused when the dataset is made, not at its first gathering epoch";
}

// The printed plan is the same text on every stream, whatever its number formatting; a wide
// stream is not offered an operator<< that would fail inside it.
template <class Stream, class = void>
struct prints_plans : std::false_type {};
template <class Stream>
struct prints_plans<
    Stream, std::void_t<decltype(std::declval<Stream&>() << std::declval<const resident::Plan&>())>>
    : std::true_type {};
static_assert(prints_plans<std::ostream>::value);
static_assert(!prints_plans<std::wostream>::value);

TEST_F(Recommend, ThePrintedPlanIgnoresTheStreamsNumberFormat) {
  const auto verdict = resident::plan(HostSpace::with_budget(18000), options, x, y);
  std::ostringstream plain, formatted;
  plain << verdict;
  formatted << std::hex << std::showbase << std::uppercase << verdict;
  EXPECT_EQ(plain.str(), formatted.str());
  EXPECT_NE(plain.str().find("(10 chunk(s) of 1 batch(es))"), std::string::npos) << plain.str();
}

// Sharded plans: the bytes of one rank under each mode.

TEST(ShardedPlan, ReportsPerRankBytesForBothModes) {
  std::vector<float> features(std::size_t{1000} * 64);
  const HostTensor<const float> x(features.data(), {1000, 64});
  DatasetOptions options = sharded(100, Remainder::drop, Sharding::replicated, 1, 4);
  const resident::Plan replicated = resident::plan(HostSpace::with_budget(1 << 30), options, x);
  EXPECT_EQ(replicated.needed_bytes, std::size_t{1000} * 64 * sizeof(float));
  EXPECT_EQ(replicated.replicated_rank_bytes, replicated.needed_bytes);
  EXPECT_EQ(replicated.partitioned_rank_bytes, std::size_t{250} * 64 * sizeof(float));
  EXPECT_EQ(replicated.num_batches, 2u);  // 250 rows per rank, 100 per batch, drop
  options.sharding = Sharding::partitioned;
  const resident::Plan partitioned = resident::plan(HostSpace::with_budget(1 << 30), options, x);
  EXPECT_EQ(partitioned.needed_bytes, std::size_t{250} * 64 * sizeof(float));
  EXPECT_EQ(partitioned.replicated_rank_bytes, replicated.replicated_rank_bytes);
  EXPECT_EQ(partitioned.partitioned_rank_bytes, partitioned.needed_bytes);
  // A budget between the two: only the partitioned plan fits.
  const HostSpace tight = HostSpace::with_budget(std::size_t{500} * 64 * sizeof(float));
  EXPECT_TRUE(resident::plan(tight, options, x).fits);
  options.sharding = Sharding::replicated;
  EXPECT_FALSE(resident::plan(tight, options, x).fits);
}

}  // namespace

// Data that fits one automatic chunk streams through one slot of its own size, not through
// chunk_slots slots of it; a lone chunk's slot holds the rows the data has, not a full last
// batch.
TEST_F(Recommend, TheStreamingRingNeverExceedsTheData) {
  std::vector<std::int32_t> more(1005);
  const HostTensor<const std::int32_t> labels(more.data(), {1005});
  const auto verdict = resident::plan(HostSpace::with_budget(1 << 20), options, labels);
  EXPECT_EQ(verdict.needed_bytes, 4020u);
  EXPECT_EQ(verdict.stream_chunks, 1u);
  EXPECT_EQ(verdict.stream_chunk_batches, 11u);
  EXPECT_EQ(verdict.stream_slots_bytes, 4096u) << "1005 rows of 4 bytes, 256-aligned";
  std::ostringstream printed;
  printed << verdict;
  EXPECT_NE(printed.str().find("stream:    chunk slots of 4.0 KiB (1 chunk(s) of 11 batch(es)) and "
                               "ring_bytes 3.0 KiB, whole_epoch order, fit together"),
            std::string::npos)
      << printed.str();
}
