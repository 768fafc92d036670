// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// The copy team (detail/copy_workers.hpp) at its edges: slices from a non-zero begin that start
// on every granule and cover the range once, every part throwing round after round with the
// team asleep or spinning, and teams destroyed while their workers still spin, or never used.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <stdexcept>
#include <thread>
#include <vector>

#include "resident/detail/copy_workers.hpp"

namespace {

TEST(CopyTeam, SlicesFromANonZeroBeginStartOnTheGranuleAndCoverOnce) {
  for (const unsigned threads : {2u, 3u, 8u}) {
    resident::detail::CopyWorkers workers(threads);
    for (const std::size_t granule : {std::size_t{1}, std::size_t{3}, std::size_t{64}}) {
      for (const std::size_t begin : {std::size_t{0}, std::size_t{5}, std::size_t{1000}}) {
        for (const std::size_t size :
             {std::size_t{1}, std::size_t{2}, std::size_t{7}, std::size_t{65}, std::size_t{4097}}) {
          std::vector<std::atomic<int>> hits(size);
          std::atomic<bool> off_granule{false};
          workers.for_each_slice(
              begin, begin + size,
              [&](std::size_t first, std::size_t last) {
                if ((first - begin) % granule != 0) off_granule = true;
                for (std::size_t i = first; i < last; ++i) ++hits[i - begin];
              },
              granule);
          EXPECT_FALSE(off_granule.load())
              << threads << " " << granule << " " << begin << " " << size;
          for (std::size_t i = 0; i < size; ++i) ASSERT_EQ(hits[i].load(), 1) << i;
        }
      }
    }
  }
}

// Every part throws: one exception comes back, and the team serves the next call in full.
TEST(CopyTeam, EveryPartThrowingGivesOneErrorAndTheTeamGoesOn) {
  resident::detail::CopyWorkers workers(4);
  for (int round = 0; round < 200; ++round) {
    EXPECT_THROW(workers.for_each_slice(
                     0, 4000, [](std::size_t, std::size_t) { throw std::logic_error("part"); }, 1),
                 std::logic_error);
    std::atomic<std::size_t> covered{0};
    workers.for_each_slice(
        0, 4000, [&](std::size_t f, std::size_t l) { covered += l - f; }, 1);
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
    workers.for_each_slice(
        0, 999, [&](std::size_t f, std::size_t l) { covered += l - f; }, 1);
    ASSERT_EQ(covered.load(), 999u);
  }
}

}  // namespace
