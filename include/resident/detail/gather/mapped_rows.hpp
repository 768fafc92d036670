// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// The gather source of a subset: a field's rows where its dataset stored them, reached through
// the subset's row map (stored row of the subset -> stored row of the dataset), which lies in
// the space's memory beside them so that a kernel reads it as it reads the rows.

#include <cstddef>
#include <cstdint>

#include "resident/config.hpp"
#include "resident/detail/dataset/row_order.hpp"

namespace resident::detail {

/// @brief A gather source: a field's stored rows, row `row` at
/// `base + map[row] * row_elements`.
template <class T>
struct MappedRows {
  using element_type = T;
  const T* base;             ///< The dataset's field, its stored row 0.
  std::size_t row_elements;  ///< Elements of one row.
  const std::uint64_t* map;  ///< The dataset's stored row of each of the subset's.

  /// Where the row at `place` starts: its entry of the map read through `reach` (see
  /// `GatherRows`), as a kernel reads the space's memory.
  template <class Reach>
  [[nodiscard]] RESIDENT_HOST_DEVICE const T* at(const RowPlace& place,
                                                 const Reach& reach) const noexcept {
    return base + *reach(map + place.row, 1) * row_elements;
  }
  /// The same rows read as `Word`s (the copy kernels' unit; rows are a whole number of them).
  template <class Word>
  [[nodiscard]] MappedRows<Word> as() const noexcept {
    return {reinterpret_cast<const Word*>(base),  // NOLINT: the rows' bytes as words
            row_elements * sizeof(T) / sizeof(Word), map};
  }
};

}  // namespace resident::detail
