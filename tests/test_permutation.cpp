// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <numeric>
#include <set>
#include <type_traits>
#include <vector>

#include "resident/permutation.hpp"

namespace {

using resident::Permutation;
using Order = std::function<std::uint64_t(std::uint64_t n, std::uint64_t epoch, std::uint64_t i)>;

static_assert(std::is_trivially_copyable_v<Permutation>);

std::vector<std::uint64_t> order(std::uint64_t n, std::uint64_t seed, std::uint64_t epoch) {
  const Permutation p(n, seed, epoch);
  std::vector<std::uint64_t> values(n);
  for (std::uint64_t i = 0; i < n; ++i) values[i] = p(i);
  return values;
}

// Chi-square statistic of counts against a uniform expectation.
double chi_square(const std::vector<double>& counts) {
  const double expected =
      std::accumulate(counts.begin(), counts.end(), 0.0) / static_cast<double>(counts.size());
  double statistic = 0;
  for (const double count : counts) statistic += (count - expected) * (count - expected) / expected;
  return statistic;
}

// Over many epochs: where does each index land? Uniform over the n x n (index, position) cells.
double position_statistic(const Order& shuffled, std::uint64_t n, std::uint64_t epochs) {
  std::vector<double> counts(n * n, 0.0);
  for (std::uint64_t epoch = 0; epoch < epochs; ++epoch)
    for (std::uint64_t i = 0; i < n; ++i) counts[i * n + shuffled(n, epoch, i)] += 1;
  return chi_square(counts);
}

// Successive epochs: the pair (order_e(i), order_{e+1}(i)) is uniform too, so that no epoch
// can be predicted from the one before (a fixed rotation fails this, not the first test).
double successive_statistic(const Order& shuffled, std::uint64_t n, std::uint64_t epochs) {
  std::vector<double> counts(n * n, 0.0);
  for (std::uint64_t epoch = 0; epoch < epochs; ++epoch)
    for (std::uint64_t i = 0; i < n; ++i)
      counts[shuffled(n, epoch, i) * n + shuffled(n, epoch + 1, i)] += 1;
  return chi_square(counts);
}

// The 0.999 quantile of chi-square with `dof` degrees of freedom (Wilson-Hilferty): a correct
// permutation exceeds it once in a thousand keys, and the keys below are fixed.
double chi_square_bound(double dof) {
  const double z = 3.090;
  const double a = 2.0 / (9.0 * dof);
  const double root = 1.0 - a + z * std::sqrt(a);
  return dof * root * root * root;
}

constexpr std::uint64_t kEpochs = 20000;

Order feistel(std::uint64_t seed) {
  return [seed](std::uint64_t n, std::uint64_t epoch, std::uint64_t i) {
    return Permutation(n, seed, epoch)(i);
  };
}

TEST(Permutation, IsABijectionForEverySize) {
  for (const std::uint64_t n : {0, 1, 2, 3, 5, 7, 13, 64, 100, 257, 1000, 4099, 65537}) {
    for (const std::uint64_t seed : {0, 1, 42}) {
      auto values = order(n, seed, 3);
      std::sort(values.begin(), values.end());
      std::vector<std::uint64_t> identity(n);
      std::iota(identity.begin(), identity.end(), 0);
      ASSERT_EQ(values, identity) << "n " << n << " seed " << seed;
    }
  }
}

TEST(Permutation, SameKeySameOrderOtherKeyOtherOrder) {
  EXPECT_EQ(order(1000, 7, 3), order(1000, 7, 3));
  EXPECT_NE(order(1000, 7, 3), order(1000, 7, 4));
  EXPECT_NE(order(1000, 7, 3), order(1000, 8, 3));
  std::vector<std::uint64_t> identity(1000);
  std::iota(identity.begin(), identity.end(), 0);
  EXPECT_NE(order(1000, 7, 3), identity);
}

TEST(Permutation, FixedValuesPinTheAlgorithmAcrossPlatforms) {
  // If these change, every saved training order changes: only on purpose, with a note.
  const Permutation p(10, 42, 0);
  std::vector<std::uint64_t> first(10);
  for (std::uint64_t i = 0; i < 10; ++i) first[i] = p(i);
  EXPECT_EQ(first, (std::vector<std::uint64_t>{4, 5, 0, 1, 6, 3, 9, 7, 8, 2}));
}

TEST(Permutation, StaysInRangeAndInjectiveBeyond2To48Rows) {
  const std::uint64_t n = (std::uint64_t{1} << 48) + 12345;
  const Permutation p(n, 9, 1);
  std::set<std::uint64_t> seen;
  for (std::uint64_t i = 0; i < 20000; ++i) {
    const std::uint64_t value = p(n - 1 - i * 7919);
    ASSERT_LT(value, n);
    ASSERT_TRUE(seen.insert(value).second) << "repeated value " << value;
  }
  EXPECT_THROW(Permutation(Permutation::max_size + 1, 0, 0), resident::InvalidArgument);
}

TEST(Permutation, PositionsAreUniformOverEpochs) {
  for (const std::uint64_t n : {7, 8, 11}) {  // cycle walking, an exact power of two, a prime
    for (const std::uint64_t seed : {1, 2, 1234}) {
      const double bound = chi_square_bound(static_cast<double>((n - 1) * (n - 1)));
      EXPECT_LT(position_statistic(feistel(seed), n, kEpochs), bound)
          << "n " << n << " seed " << seed;
    }
  }
}

TEST(Permutation, SuccessiveEpochsAreUncorrelated) {
  for (const std::uint64_t n : {7, 8, 11}) {
    for (const std::uint64_t seed : {1, 2, 1234}) {
      const double bound = chi_square_bound(static_cast<double>((n - 1) * (n - 1)));
      EXPECT_LT(successive_statistic(feistel(seed), n, kEpochs), bound)
          << "n " << n << " seed " << seed;
    }
  }
}

// The two statistics have teeth: they reject the identity and a rotation by the epoch.
TEST(Permutation, StatisticsRejectTheIdentityAndAFixedRotation) {
  const Order identity = [](std::uint64_t, std::uint64_t, std::uint64_t i) { return i; };
  const Order rotation = [](std::uint64_t n, std::uint64_t epoch, std::uint64_t i) {
    return (i + epoch) % n;
  };
  const double bound = chi_square_bound(49);
  EXPECT_NEAR(bound, 85.35, 0.1);  // the tabulated 0.999 quantile for 49 degrees
  EXPECT_GT(position_statistic(identity, 8, kEpochs), bound);
  EXPECT_GT(successive_statistic(identity, 8, kEpochs), bound);
  EXPECT_LT(position_statistic(rotation, 8, kEpochs), bound);    // uniform positions...
  EXPECT_GT(successive_statistic(rotation, 8, kEpochs), bound);  // ...but predictable
}

}  // namespace
