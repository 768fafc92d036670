// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <limits>
#include <string>

#include "resident/detail/expects.hpp"

namespace resident::detail {

/// @brief `a * b`, or `InvalidArgument` naming `what` when the product overflows `size_t`.
inline std::size_t checked_mul(std::size_t a, std::size_t b, const char* what) {
  RESIDENT_EXPECTS(a == 0 || b <= std::numeric_limits<std::size_t>::max() / a,
                   std::string(what) + " overflows std::size_t (" + std::to_string(a) + " x " +
                       std::to_string(b) +
                       "): the figures it is made of (shape, batch size, ring depth, element "
                       "bytes) are too large to address on this platform; use smaller ones");
  return a * b;
}

/// @brief `a + b`, or `InvalidArgument` naming `what` when the sum overflows `size_t`.
inline std::size_t checked_add(std::size_t a, std::size_t b, const char* what) {
  RESIDENT_EXPECTS(b <= std::numeric_limits<std::size_t>::max() - a,
                   std::string(what) + " overflows std::size_t (" + std::to_string(a) + " + " +
                       std::to_string(b) +
                       "): the figures it is made of (shape, batch size, ring depth, element "
                       "bytes) are too large to address on this platform; use smaller ones");
  return a + b;
}

/// @brief `ceil(a / b)` for `b > 0`, without the `a + b - 1` that could overflow.
constexpr std::size_t ceil_div(std::size_t a, std::size_t b) noexcept {
  return a / b + (a % b != 0 ? 1 : 0);
}

/// @brief Rounds `value` up to a multiple of `alignment` (a power of two), overflow-checked.
inline std::size_t checked_align_up(std::size_t value, std::size_t alignment, const char* what) {
  const std::size_t padded = checked_add(value, alignment - 1, what);
  return padded & ~(alignment - 1);
}

}  // namespace resident::detail
