// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// DatasetOptions, StreamOptions and Remainder: the documented defaults, the names of the
// policies, and the defaults as a dataset applies them.
#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "resident/dataset_options.hpp"
#include "resident/detail/stream/stream_layout.hpp"
#include "resident/device_dataset.hpp"
#include "resident/host_space.hpp"
#include "resident/plan.hpp"
#include "resident/streaming_dataset.hpp"

namespace {

using resident::DatasetOptions;
using resident::Remainder;
using resident::StreamOptions;

TEST(DatasetOptions, DefaultsAreTheDocumentedOnes) {
  const DatasetOptions options;
  EXPECT_EQ(options.batch_size, 256u);
  EXPECT_EQ(options.remainder, Remainder::partial);
  EXPECT_FALSE(options.reserve_bytes.has_value()) << "unset: the space's default reserve";
  EXPECT_EQ(options.upload_block_bytes, std::size_t{8} << 20);
  EXPECT_EQ(options.staging_buffers, 4u);
  EXPECT_EQ(options.upload_threads, 0u);
  EXPECT_EQ(options.gather_threads, 0u);
  EXPECT_FALSE(options.stream.has_value()) << "unset: the dataset owns a stream";
  EXPECT_EQ(options.ring_depth, 2u);
  EXPECT_FALSE(static_cast<bool>(options.on_progress));
  EXPECT_EQ(options.shard, resident::Shard{});
  EXPECT_EQ(options.sharding, resident::Sharding::partitioned);
  EXPECT_EQ(options.streaming.chunk_batches, 0u);
  EXPECT_EQ(options.streaming.chunk_slots, 4u);
  EXPECT_EQ(options.streaming.prefetch_chunks, 2u);
}

TEST(StreamOptions, DefaultsAreAutomaticChunksInFourSlotsWithTwoAhead) {
  const StreamOptions streaming;
  EXPECT_EQ(streaming.chunk_batches, 0u) << "0: about 64 MiB per chunk";
  EXPECT_EQ(streaming.chunk_slots, 4u);
  EXPECT_EQ(streaming.prefetch_chunks, 2u);
  EXPECT_GT(streaming.chunk_slots, streaming.prefetch_chunks) << "a slot is left to read";
}

TEST(Remainder, NamesAreThePolicies) {
  static_assert(std::string_view(resident::remainder_name(Remainder::pad)) == "pad");
  EXPECT_STREQ(resident::remainder_name(Remainder::drop), "drop");
  EXPECT_STREQ(resident::remainder_name(Remainder::partial), "partial");
  EXPECT_STREQ(resident::remainder_name(Remainder::pad), "pad");
  EXPECT_STREQ(resident::remainder_name(static_cast<Remainder>(7)), "unknown");
}

// The defaults as a dataset reads them: batches of 256 with the short tail served, and no
// reserve inside a budget.
TEST(DatasetOptions, DefaultOptionsCutBatchesOf256AndServeTheShortTail) {
  std::vector<std::int32_t> rows(600);
  std::iota(rows.begin(), rows.end(), 0);
  const auto space = resident::HostSpace::with_budget(1 << 20);
  const resident::DeviceDataset<resident::HostSpace, std::int32_t> ds(
      space, DatasetOptions{}, resident::HostTensor<const std::int32_t>(rows.data(), {600}));
  ASSERT_EQ(ds.num_batches(), 3u);
  EXPECT_EQ(ds.batch_size(), 256u);
  EXPECT_EQ(std::get<0>(ds.batch(1)).data()[0], 256);
  EXPECT_EQ(std::get<0>(ds.batch(2)).rows(), 600u - 512u);
  EXPECT_EQ(space.used_bytes(), 600u * sizeof(std::int32_t));
}

// The former names of renamed options still compile (with a deprecation warning, silenced
// here) and still take effect: a former name, where set, wins over the new one.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
TEST(DatasetOptions, FormerNamesStillTakeEffect) {
  std::vector<float> values(4096);
  std::iota(values.begin(), values.end(), 0.0F);
  const resident::HostTensor<const float> rows(values.data(), {1024, 4});
  const resident::HostSpace space;

  DatasetOptions options;
  options.batch_size = 8;
  EXPECT_FALSE(options.chunk_bytes.held()) << "unset: upload_block_bytes decides";
  EXPECT_FALSE(options.streaming.ring_chunks.held()) << "unset: chunk_slots decides";
  options.chunk_bytes = 0;
  using Preloaded = resident::DeviceDataset<resident::HostSpace, float>;
  EXPECT_THROW(Preloaded(space, options, rows), resident::InvalidArgument)
      << "a zero block size is refused under its former name too";
  // The same progress reports (one per block) as under the new name, more than one block's.
  const auto reports = [&](const DatasetOptions& with) {
    std::size_t count = 0;
    DatasetOptions counted = with;
    counted.on_progress = [&count](const resident::Progress&) { return ++count != 0; };
    const Preloaded preloaded(space, counted, rows);
    return count;
  };
  DatasetOptions renamed;
  renamed.batch_size = options.batch_size;
  renamed.upload_block_bytes = 4096;
  options.chunk_bytes = 4096;
  EXPECT_EQ(reports(options), reports(renamed));
  EXPECT_GT(reports(options), reports(DatasetOptions{})) << "4 KiB blocks, not 8 MiB ones";

  // The chunk slots: the dataset's and the plan's, as under the new name.
  options.streaming.chunk_batches = 4;
  options.streaming.ring_chunks = 6;
  renamed.streaming.chunk_batches = 4;
  renamed.streaming.chunk_slots = 6;
  const resident::StreamingDataset<resident::HostSpace, float> streamed(space, options, rows);
  EXPECT_EQ(streamed.chunk_slots(), 6u);
  EXPECT_EQ(streamed.ring_chunks(), 6u);
  const resident::Plan plan = resident::plan(space, options, rows);
  EXPECT_EQ(plan.stream_slots_bytes, resident::plan(space, renamed, rows).stream_slots_bytes);
  EXPECT_EQ(std::size_t{plan.stream_ring_bytes}, plan.stream_slots_bytes);
  EXPECT_NE(plan.stream_slots_bytes,
            resident::plan(space, DatasetOptions{}, rows).stream_slots_bytes);
}

// Old code that reads a former name, changes it and writes it back (or initialises it by
// position) sees the option as it was: the value set, or the option's default; and a refusal
// of a value set under a former name says so, and what to set instead.
TEST(DatasetOptions, FormerNamesReadAndChangeAsTheOptionsTheyNamed) {
  DatasetOptions options;
  EXPECT_EQ(std::size_t{options.chunk_bytes}, std::size_t{8} << 20) << "unset: the default";
  EXPECT_EQ(std::size_t{options.streaming.ring_chunks}, 4u) << "unset: the default";
  options.streaming.ring_chunks = options.streaming.ring_chunks + 2;
  EXPECT_EQ(resident::detail::chunk_slots(options.streaming), 6u);
  options.chunk_bytes = options.chunk_bytes / 2;
  EXPECT_EQ(resident::detail::upload_block_bytes(options), std::size_t{4} << 20);
  options.streaming.ring_chunks += 3;
  ++options.streaming.ring_chunks;
  --options.streaming.ring_chunks;
  options.streaming.ring_chunks -= 1;
  EXPECT_EQ(resident::detail::chunk_slots(options.streaming), 8u);
  options.chunk_bytes *= 4;
  options.chunk_bytes /= 2;
  EXPECT_EQ(resident::detail::upload_block_bytes(options), std::size_t{8} << 20);

  const StreamOptions positional{0, 4, 2, true, resident::StreamOrder::automatic, true, 6};
  EXPECT_EQ(resident::detail::chunk_slots(positional), 6u) << "the former name, set last, wins";

  StreamOptions few;
  few.chunk_slots = 5;
  few.ring_chunks = 2;
  const std::string problem = resident::detail::stream_options_problem(few);
  for (const char* part :
       {"StreamOptions::ring_chunks (2) must exceed prefetch_chunks (2)",
        "ring_chunks is the former name of chunk_slots", "set chunk_slots instead"})
    EXPECT_NE(problem.find(part), std::string::npos) << part << " not in: " << problem;

  std::vector<float> values(64);
  const resident::HostTensor<const float> rows(values.data(), {16, 4});
  DatasetOptions zero;
  zero.chunk_bytes = 0;
  try {
    const resident::DeviceDataset<resident::HostSpace, float> refused(resident::HostSpace{}, zero,
                                                                      rows);
    FAIL() << "a zero block size under the former name was accepted";
  } catch (const resident::InvalidArgument& error) {
    const std::string message = error.what();
    for (const char* part : {"DatasetOptions::chunk_bytes is 0", "set upload_block_bytes instead"})
      EXPECT_NE(message.find(part), std::string::npos) << part << " not in: " << message;
  }
}
#pragma GCC diagnostic pop

}  // namespace
