// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC 2011), the
// counter-based generator of cuRAND and Random123: four 32-bit words from a 128-bit counter
// and a 64-bit key, no state. Integer arithmetic only, so host and device give the same bits.

#include <array>
#include <cstdint>

#include "resident/config.hpp"

namespace resident::detail {

/// Four words of Philox4x32-10 output.
struct PhiloxWords {
  std::uint32_t word[4];  // NOLINT(modernize-avoid-c-arrays): the same type on the device
};

/// @brief Philox4x32-10 of `counter` under `key` (matches Random123's known-answer vectors).
RESIDENT_HOST_DEVICE constexpr PhiloxWords philox4x32(PhiloxWords counter,
                                                      std::uint64_t key) noexcept {
  constexpr std::uint64_t multiplier0 = 0xD2511F53U;
  constexpr std::uint64_t multiplier1 = 0xCD9E8D57U;
  constexpr std::uint32_t weyl0 = 0x9E3779B9U;
  constexpr std::uint32_t weyl1 = 0xBB67AE85U;
  auto key0 = static_cast<std::uint32_t>(key);
  auto key1 = static_cast<std::uint32_t>(key >> 32);
  for (int round = 0; round < 10; ++round) {
    const std::uint64_t product0 = multiplier0 * counter.word[0];
    const std::uint64_t product1 = multiplier1 * counter.word[2];
    counter = PhiloxWords{{static_cast<std::uint32_t>(product1 >> 32) ^ counter.word[1] ^ key0,
                           static_cast<std::uint32_t>(product1),
                           static_cast<std::uint32_t>(product0 >> 32) ^ counter.word[3] ^ key1,
                           static_cast<std::uint32_t>(product0)}};
    key0 += weyl0;
    key1 += weyl1;
  }
  return counter;
}

/// @brief A draw in `[0, n)` from one 32-bit word: `(word * n) >> 32` (Lemire), without a
/// division; each value's probability is within `1 / 2^32` of `1 / n`.
RESIDENT_HOST_DEVICE constexpr std::uint32_t below(std::uint32_t word, std::uint32_t n) noexcept {
  return static_cast<std::uint32_t>((static_cast<std::uint64_t>(word) * n) >> 32);
}

}  // namespace resident::detail
