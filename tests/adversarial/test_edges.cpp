// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// Values at the edges of their domain that once could hang or reach past memory.

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <stdexcept>

#include "resident/permutation.hpp"

namespace {

using resident::Permutation;

constexpr std::uint64_t sizes[] = {1, 2, 5, 10, 1000, Permutation::max_size};

TEST(PermutationEdges, PositionsPastTheEndAreTheIdentityNeverAnEndlessWalk) {
  // The empty permutation has no index below its size to end a cycle walk on.
  EXPECT_EQ(Permutation{}(0), 0U);
  EXPECT_EQ(Permutation(0, 1, 2)(3), 3U);
  constexpr std::uint64_t max = std::numeric_limits<std::uint64_t>::max();
  for (const std::uint64_t n : sizes) {
    const Permutation p(n, 7, 3);
    for (const std::uint64_t i : {n, n + 1, 2 * n + 3, max}) EXPECT_EQ(p(i), i) << n << ", " << i;
    EXPECT_LT(p(n - 1), n);
  }
}

TEST(PermutationEdges, AtChecksThePosition) {
  for (const std::uint64_t n : sizes) {
    const Permutation p(n, 7, 3);
    EXPECT_THROW((void)p.at(n), std::out_of_range);
    EXPECT_EQ(p.at(0), p(0));
  }
  EXPECT_THROW((void)Permutation{}.at(0), std::out_of_range);
}

}  // namespace
