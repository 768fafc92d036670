// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// The gather source of a mixture: a field's rows where each source dataset stored them, the
// source and row of each position computed from the mixture's table (its sources' rows, quotas
// and first slots, then each field's base address per source), which lies in the space's memory
// so that a kernel reads it as it reads the rows. Nothing in it grows with the rows.

#include <cstddef>
#include <cstdint>

#include "resident/config.hpp"
#include "resident/detail/dataset/layout.hpp"
#include "resident/detail/dataset/row_order.hpp"
#include "resident/mixture_order.hpp"

namespace resident::detail {

/// @brief A gather source: the row at stored row `row` of a mixture (position
/// `stored.row(row)` of its epoch) is row `sample.row` of source `sample.source`, at that
/// source's base address for the field plus the row's elements.
template <class T>
struct MixedRows {
  using element_type = T;
  const std::uint64_t* table;  ///< See `mixture_sample`.
  const std::uint64_t* bases;  ///< The field's stored row 0 of each source, as an address.
  std::size_t row_elements;    ///< Elements of one row.
  MixtureKey key;              ///< The epoch's.
  SourceMap stored;            ///< The rank's stored rows -> positions of the epoch.

  /// Where stored row `row` starts, the table read through `reach`.
  template <class Reach>
  [[nodiscard]] RESIDENT_HOST_DEVICE const T* row_at(std::uint64_t row,
                                                     const Reach& reach) const noexcept {
    const MixtureSample sample = mixture_sample(table, key, stored.row(row), reach);
    const std::uint64_t base = *reach(bases + sample.source, 1);
    // NOLINTNEXTLINE(performance-no-int-to-ptr): the address the table was made from
    return reinterpret_cast<const T*>(static_cast<std::uintptr_t>(base)) +
           sample.row * row_elements;
  }
  [[nodiscard]] RESIDENT_HOST_DEVICE const T* at(std::uint64_t /*position*/,
                                                 std::uint64_t row) const noexcept {
    return row_at(row, HostReach{});
  }
  /// Where the row at `place` starts, the table read through `reach` (see `GatherRows`).
  template <class Reach>
  [[nodiscard]] RESIDENT_HOST_DEVICE const T* at(const RowPlace& place,
                                                 const Reach& reach) const noexcept {
    return row_at(place.row, reach);
  }
  /// The same rows read as `Word`s (the copy kernels' unit; rows are a whole number of them).
  template <class Word>
  [[nodiscard]] MixedRows<Word> as() const noexcept {
    return {table, bases, row_elements * sizeof(T) / sizeof(Word), key, stored};
  }
};

}  // namespace resident::detail
