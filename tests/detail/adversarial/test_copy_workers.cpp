// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// The copy team (detail/copy_workers.hpp) at its edges: blocks from a non-zero begin that start
// on every boundary and cover the range once, every block throwing round after round with the
// team asleep or spinning, teams destroyed while their workers still spin, or never used, and
// calls that follow each other while a late worker is still on its way in.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <stdexcept>
#include <thread>
#include <vector>

#include "resident/detail/copy_workers.hpp"

namespace {

TEST(CopyTeam, BlocksFromANonZeroBeginStartOnTheBoundaryAndCoverOnce) {
  for (const unsigned threads : {2u, 3u, 8u}) {
    resident::detail::CopyWorkers workers(threads);
    for (const std::size_t block : {std::size_t{1}, std::size_t{3}, std::size_t{64}}) {
      for (const std::size_t begin : {std::size_t{0}, std::size_t{5}, std::size_t{1000}}) {
        for (const std::size_t size :
             {std::size_t{1}, std::size_t{2}, std::size_t{7}, std::size_t{65}, std::size_t{4097}}) {
          std::vector<std::atomic<int>> hits(size);
          std::atomic<bool> off_boundary{false};
          workers.for_each_block(begin, begin + size, block,
                                 [&](std::size_t first, std::size_t last) {
                                   if ((first - begin) % block != 0) off_boundary = true;
                                   for (std::size_t i = first; i < last; ++i) ++hits[i - begin];
                                 });
          EXPECT_FALSE(off_boundary.load())
              << threads << " " << block << " " << begin << " " << size;
          for (std::size_t i = 0; i < size; ++i) ASSERT_EQ(hits[i].load(), 1) << i;
        }
      }
    }
  }
}

// Every block throws: one exception comes back, and the team serves the next call in full.
TEST(CopyTeam, EveryBlockThrowingGivesOneErrorAndTheTeamGoesOn) {
  resident::detail::CopyWorkers workers(4);
  for (int round = 0; round < 200; ++round) {
    EXPECT_THROW(workers.for_each_block(
                     0, 4000, 1, [](std::size_t, std::size_t) { throw std::logic_error("block"); }),
                 std::logic_error);
    std::atomic<std::size_t> covered{0};
    workers.for_each_block(0, 4000, 1, [&](std::size_t f, std::size_t l) { covered += l - f; });
    ASSERT_EQ(covered.load(), 4000u);
    if (round % 50 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));  // asleep
  }
}

// A team destroyed right after a call, while its workers still spin, and one never used.
TEST(CopyTeam, DestroyedWhileSpinningOrUnused) {
  for (int round = 0; round < 300; ++round) {
    resident::detail::CopyWorkers workers(3);
    if (round % 3 == 0) continue;
    std::atomic<std::size_t> covered{0};
    workers.for_each_block(0, 999, 1, [&](std::size_t f, std::size_t l) { covered += l - f; });
    ASSERT_EQ(covered.load(), 999u);
  }
}

// Calls of different lengths back to back, each with its own function and counters, while
// the workers come and go: a worker that read one call's claim word never runs a block of
// another (every call's blocks run once, with that call's function), whatever the interleaving.
TEST(CopyTeam, BackToBackCallsOfDifferentLengthsNeverMixTheirBlocks) {
  resident::detail::CopyWorkers workers(4);
  for (std::size_t call = 0; call < 5000; ++call) {
    const std::size_t size = 1 + call % 37;
    std::vector<std::atomic<int>> hits(size);
    workers.for_each_block(call, call + size, 1 + call % 3,
                           [&hits, call](std::size_t first, std::size_t last) {
                             for (std::size_t i = first; i < last; ++i) ++hits.at(i - call);
                           });
    for (std::size_t i = 0; i < size; ++i) ASSERT_EQ(hits[i].load(), 1) << call << " " << i;
    if (call % 1000 == 999) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

}  // namespace
