// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// The gather source of a preloaded dataset: a field's rows where the dataset stored them.
// (A streamed dataset's, in its chunk slots, is `ChunkSlotRows`, in stream/chunk_rows.hpp.)

#include <cstddef>
#include <cstdint>

#include "resident/config.hpp"
#include "resident/detail/dataset/row_order.hpp"

namespace resident::detail {

/// @brief A gather source: a field's stored rows, row `row` at `base + row * row_elements`.
template <class T>
struct StoredRows {
  using element_type = T;
  const T* base;
  std::size_t row_elements;
  /// Where the row at `place` starts.
  template <class Reach>
  [[nodiscard]] RESIDENT_HOST_DEVICE const T* at(const RowPlace& place,
                                                 const Reach& /*reach*/) const noexcept {
    return base + place.row * row_elements;
  }
  /// The same rows read as `Word`s (the copy kernels' unit; rows are a whole number of them).
  template <class Word>
  [[nodiscard]] StoredRows<Word> as() const noexcept {
    return {reinterpret_cast<const Word*>(base),  // NOLINT: the rows' bytes as words
            row_elements * sizeof(T) / sizeof(Word)};
  }
};

}  // namespace resident::detail
