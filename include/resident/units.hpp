// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// @brief Byte-size literals for options and budgets: `options.reserve_bytes = 2_GiB;`.
/// Available after `using namespace resident::literals;` (or `using namespace resident;`).

#include <cstddef>

namespace resident {
inline namespace literals {

/// @brief `n` kibibytes (1024 bytes each).
constexpr std::size_t operator""_KiB(unsigned long long n) noexcept {
  return static_cast<std::size_t>(n) << 10;
}
/// @brief `n` mebibytes.
constexpr std::size_t operator""_MiB(unsigned long long n) noexcept {
  return static_cast<std::size_t>(n) << 20;
}
/// @brief `n` gibibytes.
constexpr std::size_t operator""_GiB(unsigned long long n) noexcept {
  return static_cast<std::size_t>(n) << 30;
}

}  // namespace literals
}  // namespace resident
