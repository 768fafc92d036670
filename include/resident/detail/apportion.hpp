// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// Largest-remainder shares in exact integer arithmetic: a mixture's quotas are the same on
// every platform, whatever its weights (0.001 against 0.999 included), and always sum to the
// whole.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <vector>

#include "resident/config.hpp"

namespace resident::detail {

__extension__ using uint128 = unsigned __int128;  // GCC, Clang and nvcc all have it

/// @brief `a * b mod m` for `m > 0`, `a, b < m`, without overflow.
RESIDENT_HOST_DEVICE constexpr std::uint64_t mul_mod(std::uint64_t a, std::uint64_t b,
                                                     std::uint64_t m) noexcept {
  return static_cast<std::uint64_t>(static_cast<uint128>(a) * b % m);
}

/// @brief Non-negative amounts (`largest` the greatest, above 0) as integers below 2^53 in the
/// same proportions: each is scaled by one power of two, which is exact, so that only the bits
/// of an amount more than 2^52 times below the largest are lost, and equal ratios stay equal.
/// The shares made of them need no floating point.
inline std::vector<std::uint64_t> scaled_amounts(const std::vector<double>& amounts,
                                                 double largest) {
  int exponent = 0;
  (void)std::frexp(largest, &exponent);  // largest < 2^exponent
  std::vector<std::uint64_t> scaled(amounts.size());
  std::transform(amounts.begin(), amounts.end(), scaled.begin(), [exponent](double amount) {
    return static_cast<std::uint64_t>(std::ldexp(amount, 53 - exponent));
  });
  return scaled;
}

/// @brief The largest-remainder (Hamilton) shares of `total` by `amounts` (not all 0): each
/// amount's exact quotient `total * amount / sum`, rounded down, then one more each to the
/// largest remainders (the lower index first among equal ones) until the shares sum to
/// `total`. Each share is its quotient rounded down or up.
inline std::vector<std::uint64_t> apportion(std::uint64_t total,
                                            const std::vector<std::uint64_t>& amounts) {
  const uint128 sum = std::accumulate(amounts.begin(), amounts.end(), uint128{0});
  std::vector<std::uint64_t> shares(amounts.size());
  std::vector<uint128> remainders(amounts.size());
  std::uint64_t given = 0;
  for (std::size_t i = 0; i < amounts.size(); ++i) {
    const uint128 product = static_cast<uint128>(total) * amounts[i];
    shares[i] = static_cast<std::uint64_t>(product / sum);
    remainders[i] = product % sum;
    given += shares[i];
  }
  std::vector<std::size_t> order(amounts.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return remainders[a] > remainders[b]; });
  // Fewer are left than there are amounts: the quotients' fractions sum to under their count.
  for (std::size_t i = 0; given < total; ++i, ++given) ++shares[order[i]];
  return shares;
}

}  // namespace resident::detail
