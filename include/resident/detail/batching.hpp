// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>

#include "resident/dataset_options.hpp"

namespace resident::detail {

/// @brief Batches served from `rows` rows (`partial` and `pad` serve the short tail, `drop`
/// does not); never overflows (no `rows + batch_size - 1`).
constexpr std::size_t count_batches(std::size_t rows, std::size_t batch_size,
                                    Remainder remainder) noexcept {
  const std::size_t full = rows / batch_size;
  return remainder == Remainder::drop ? full : full + (rows % batch_size != 0 ? 1 : 0);
}

/// @brief Rows of batch `index` (< `count_batches(...)`): `batch_size`, or what is left.
constexpr std::size_t rows_in_batch(std::size_t index, std::size_t rows,
                                    std::size_t batch_size) noexcept {
  const std::size_t first = index * batch_size;  // < rows, so it cannot overflow
  const std::size_t left = rows - first;
  return left < batch_size ? left : batch_size;
}

}  // namespace resident::detail
