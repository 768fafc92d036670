// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// Which rows of a dataset a subset takes, checked when the subset is made, and the row map its
// gathers read: the dataset's stored row of every row the subset stores, padding included.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "resident/detail/dataset/layout.hpp"
#include "resident/detail/expects.hpp"

namespace resident::detail {

/// @brief A subset's rows of its dataset: a range `[first, first + rows)`, or a list.
struct RowSelection {
  bool range = false;
  std::size_t first = 0;            ///< A range's first row.
  std::size_t rows = 0;             ///< Rows selected.
  std::vector<std::uint64_t> list;  ///< A list's rows, in order.

  /// The dataset's row that selected row `row` is.
  [[nodiscard]] std::uint64_t row(std::size_t row) const noexcept {
    return range ? first + row : list[row];
  }
};

/// Refuses a subset of a dataset moved from, whatever rows it asks for: it holds no data.
inline void check_not_moved_from(bool moved_from) {
  RESIDENT_EXPECTS(!moved_from,
                   "the dataset was moved from and holds no rows to take a subset of; take "
                   "the subset of the dataset it was moved to");
}

/// @brief Rows `[first, first + count)` of a dataset of `rows` rows.
/// @throws InvalidArgument when the range reaches past them, or the dataset was moved from.
inline RowSelection select_range(std::size_t rows, bool moved_from, std::size_t first,
                                 std::size_t count) {
  check_not_moved_from(moved_from);
  RESIDENT_EXPECTS(first <= rows && count <= rows - first,
                   "the subset's rows [" + std::to_string(first) + ", " + std::to_string(first) +
                       " + " + std::to_string(count) + ") reach past the dataset's " +
                       std::to_string(rows) +
                       " rows; take a range inside [0, num_rows()) of the dataset");
  return {true, first, count, {}};
}

/// @brief `list`'s rows of a dataset of `rows` rows.
/// @throws InvalidArgument naming the first row that is not below `rows`; when the dataset was
/// moved from.
inline RowSelection select_list(std::size_t rows, bool moved_from,
                                const std::vector<std::size_t>& list) {
  check_not_moved_from(moved_from);
  RowSelection selection{false, 0, list.size(), {}};
  selection.list.reserve(list.size());
  for (std::size_t index = 0; index < list.size(); ++index) {
    RESIDENT_EXPECTS(list[index] < rows, "row " + std::to_string(index) + " of the subset is " +
                                             std::to_string(list[index]) +
                                             ", but the dataset has " + std::to_string(rows) +
                                             " rows; list rows below its num_rows()");
    selection.list.push_back(list[index]);
  }
  return selection;
}

/// @brief The dataset's stored row of each row a subset of `selection` stores under `layout`
/// (its own rows, then the padding, which repeats them as a dataset's padding does).
template <std::size_t Fields>
std::vector<std::uint64_t> stored_row_map(const DatasetLayout<Fields>& layout,
                                          const RowSelection& selection) {
  if (selection.rows == 0) return {};  // no rows, no batch, nothing to map
  const SourceMap source = source_map(layout);
  std::vector<std::uint64_t> map(layout.geometry.stored_rows);
  for (std::size_t stored = 0; stored < map.size(); ++stored)
    map[stored] = selection.row(static_cast<std::size_t>(source.row(stored)));
  return map;
}

}  // namespace resident::detail
