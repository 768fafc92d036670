// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// DatasetOptions, StreamOptions and Remainder: the documented defaults, the names of the
// policies, and the defaults as a dataset applies them.
#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <string_view>
#include <tuple>
#include <vector>

#include "resident/dataset_options.hpp"
#include "resident/device_dataset.hpp"
#include "resident/host_space.hpp"

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

}  // namespace
