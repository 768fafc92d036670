// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// What a streaming chunk load copies: runs of a source's rows into a chunk slot, consecutive
// rows (window order, unshuffled epochs) or rows gathered one by one from a list (a sample
// shuffled epoch in whole-epoch order).

#include <cstddef>

#include "resident/detail/stream/row_source.hpp"

namespace resident::detail {

/// @brief Rows of one source, copied to byte `offset` of a chunk slot: source rows
/// `[first_row, first_row + rows)`, or, when `gathered` is set, source rows `gathered[i]` for
/// `i < rows`.
struct ChunkCopy {
  std::size_t offset = 0;                 ///< Byte offset in the slot.
  const RowSource* source = nullptr;      ///< Whose rows.
  std::size_t first_row = 0;              ///< First row of a run.
  std::size_t rows = 0;                   ///< Rows copied.
  const std::size_t* gathered = nullptr;  ///< Each row's source row, or null for a run.

  [[nodiscard]] std::size_t bytes() const noexcept { return rows * source->row_bytes(); }

  /// @brief Copies rows `[first, first + count)` of this copy into host memory at `into`.
  /// @throws what `RowSource::read` throws.
  void read(std::size_t first, std::size_t count, std::byte* into) const {
    if (gathered == nullptr) return source->read(first_row + first, count, into);
    source->gather(gathered + first, count, into);
  }
};

}  // namespace resident::detail
