// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// The per-rank geometry of a sharded dataset (detail/dataset/shard_geometry.hpp), over a sweep
// of row counts, world sizes, batch sizes, remainders and shardings: every rank serves the same
// batches, the ranks cover the rows once (all but a round under drop), and one rank is the
// plain dataset.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <numeric>
#include <string>
#include <vector>

#include "resident/detail/dataset/shard_geometry.hpp"
#include "resident/resident.hpp"
#include "support/epoch_checks.hpp"

namespace {

using resident::Remainder;
using resident::Sharding;
using resident::testing::sharded;

std::vector<std::size_t> sweep_rows() {
  std::vector<std::size_t> rows(301);
  std::iota(rows.begin(), rows.end(), std::size_t{0});
  for (const std::size_t n : {509, 997, 1009, 1024, 1499, 2003, 2048, 2999, 3000})
    rows.push_back(n);
  return rows;
}

TEST(ShardGeometry, EveryRankServesTheSameBatchesAndTheRanksCoverTheRows) {
  for (const std::size_t n : sweep_rows()) {
    for (int world = 1; world <= 8; ++world) {
      for (const std::size_t batch : {1, 3, 8, 64, 300}) {
        for (const Remainder remainder : {Remainder::drop, Remainder::partial, Remainder::pad}) {
          for (const Sharding sharding : {Sharding::partitioned, Sharding::replicated}) {
            SCOPED_TRACE("n " + std::to_string(n) + ", world " + std::to_string(world) +
                         ", batch " + std::to_string(batch) + ", " +
                         resident::remainder_name(remainder) + ", " +
                         resident::sharding_name(sharding));
            std::vector<resident::detail::ShardGeometry> ranks;
            ranks.reserve(static_cast<std::size_t>(world));
            for (int rank = 0; rank < world; ++rank)
              ranks.push_back(resident::detail::make_geometry(
                  n, sharded(batch, remainder, sharding, rank, world)));
            std::vector<int> seen(n, 0);
            std::size_t served = 0;
            std::size_t smallest_part = n, largest_part = 0;
            for (const auto& geometry : ranks) {
              ASSERT_EQ(geometry.batches, ranks[0].batches) << "unequal batch counts";
              smallest_part = std::min(smallest_part, geometry.order_rows);
              largest_part = std::max(largest_part, geometry.order_rows);
              for (std::size_t j = 0; j < geometry.batches; ++j) {
                const auto slice = geometry.slice(j, geometry.replica);
                ASSERT_EQ(slice.rows, ranks[0].slice(j, 0).rows) << "unequal batch sizes";
                ASSERT_EQ(slice.rows, remainder == Remainder::partial && j + 1 == geometry.batches
                                          ? geometry.tail_rows
                                          : batch);
                ASSERT_LE(slice.valid, slice.rows);
                ASSERT_LE(slice.first + slice.rows, geometry.stored_rows) << "view past storage";
                for (std::size_t r = 0; r < slice.valid; ++r) {
                  const std::size_t position = slice.first + r;
                  ASSERT_LT(position, geometry.order_rows);
                  ++seen[geometry.source_first + position];
                }
                served += slice.valid;
              }
            }
            if (sharding == Sharding::partitioned) {
              ASSERT_LE(largest_part - std::min(largest_part, smallest_part), 1u);
            }
            for (std::size_t row = 0; row < n; ++row) ASSERT_LE(seen[row], 1) << "row " << row;
            const std::size_t expected =
                remainder == Remainder::drop ? ranks[0].batches * batch * world : n;
            ASSERT_EQ(served, expected);
            ASSERT_LE(n - std::min(n, expected), batch * world) << "drop keeps all but a round";
          }
        }
      }
    }
  }
}

TEST(ShardGeometry, OneRankIsThePlainDataset) {
  for (const std::size_t n : {0, 1, 9, 10, 11, 100}) {
    for (const Remainder remainder : {Remainder::drop, Remainder::partial, Remainder::pad}) {
      const auto geometry =
          resident::detail::make_geometry(n, resident::testing::epoch_options(10, remainder));
      const std::size_t full = n / 10;
      EXPECT_EQ(geometry.batches, full + (remainder != Remainder::drop && n % 10 != 0 ? 1 : 0));
      EXPECT_EQ(geometry.stored_rows, remainder == Remainder::pad ? geometry.batches * 10 : n);
      EXPECT_EQ(geometry.source_first, 0u);
    }
  }
}

}  // namespace
