// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// Test support: deterministic values of any element type, no two nearby rows alike, so that a
// row served in the wrong place or a byte copied wrong shows in a comparison with the sources.

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace resident::testing {

/// Deterministic bytes for row `row`, element `e` of field `field` (no two nearby rows alike).
inline std::uint64_t mix(std::uint64_t row, std::uint64_t e, std::uint64_t field) {
  std::uint64_t z = row * 0x9E3779B97F4A7C15ull + e * 0xBF58476D1CE4E5B9ull + field * 0x94D049BB;
  z ^= z >> 31;
  z *= 0xD6E8FEB86CA77B15ull;
  return z ^ (z >> 29);
}

/// `rows` rows of `row_elements` values of type T made from `mix` (floats kept finite and
/// moderate); `field` tells fields apart.
template <class T>
std::vector<T> filled(std::size_t rows, std::size_t row_elements, std::uint64_t field) {
  std::vector<T> values(rows * row_elements);
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t e = 0; e < row_elements; ++e) {
      const std::uint64_t bits = mix(r, e, field);
      if constexpr (std::is_floating_point_v<T>)
        values[r * row_elements + e] =
            static_cast<T>(static_cast<double>(bits % 100003) / 7.0 - 7000);
      else
        values[r * row_elements + e] = static_cast<T>(bits);
    }
  return values;
}

}  // namespace resident::testing
