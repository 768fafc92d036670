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

/// What a refusal says of a dataset of `rows` rows (one moved from has none).
inline std::string dataset_of(std::size_t rows, bool moved_from) {
  return moved_from ? std::string("the dataset was moved from and has no rows")
                    : "the dataset has " + std::to_string(rows) + " rows";
}

/// @brief Rows `[first, first + count)` of a dataset of `rows` rows.
/// @throws InvalidArgument when the range reaches past them.
inline RowSelection select_range(std::size_t rows, bool moved_from, std::size_t first,
                                 std::size_t count) {
  RESIDENT_EXPECTS(first <= rows && count <= rows - first,
                   "the subset's rows [" + std::to_string(first) + ", " + std::to_string(first) +
                       " + " + std::to_string(count) +
                       ") reach past the dataset's rows: " + dataset_of(rows, moved_from) +
                       "; take a range inside [0, num_rows()) of the dataset");
  return {true, first, count, {}};
}

/// @brief `list`'s rows of a dataset of `rows` rows.
/// @throws InvalidArgument naming the first row that is not below `rows`.
inline RowSelection select_list(std::size_t rows, bool moved_from,
                                const std::vector<std::size_t>& list) {
  RowSelection selection{false, 0, list.size(), {}};
  selection.list.reserve(list.size());
  for (std::size_t index = 0; index < list.size(); ++index) {
    RESIDENT_EXPECTS(list[index] < rows, "row " + std::to_string(index) + " of the subset is " +
                                             std::to_string(list[index]) + ", but " +
                                             dataset_of(rows, moved_from) +
                                             "; list rows below the dataset's num_rows()");
    selection.list.push_back(list[index]);
  }
  return selection;
}

/// @brief The dataset's stored row of each row a subset of `selection` stores under `layout`
/// (its own rows, then the padding, which repeats them as a dataset's padding does).
template <std::size_t Fields>
std::vector<std::uint64_t> row_map(const DatasetLayout<Fields>& layout,
                                   const RowSelection& selection) {
  if (selection.rows == 0) return {};  // no rows, no batch, nothing to map
  const SourceMap source = source_map(layout);
  std::vector<std::uint64_t> map(layout.geometry.stored_rows);
  for (std::size_t stored = 0; stored < map.size(); ++stored)
    map[stored] = selection.row(static_cast<std::size_t>(source.row(stored)));
  return map;
}

}  // namespace resident::detail
