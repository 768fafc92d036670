// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// Where a mixture's rows stand in its epoch: its data's parts interleaved, so that a global
// step is consecutive positions whatever the world size; its gathers and its augmentations'
// keys both read it.

#include <cstdint>

#include "resident/config.hpp"

namespace resident::detail {

/// @brief The position of the epoch that each row of a mixture's data is: the data's rows are cut
/// into `parts` contiguous parts (the longer first, as the shard geometry cuts them), and row
/// `t` of part `p` is position `t * parts + p`, so that a round of the global sequence (a row of
/// every part) is consecutive positions, and so is a global step: a period the size of the
/// global batch is a step, partitioned or replicated, on any world size.
struct PartInterleave {
  std::uint64_t parts = 1;
  std::uint64_t part_rows = 0;   ///< Rows of a shorter part.
  std::uint64_t long_parts = 0;  ///< Parts with a row more: the first ones.

  [[nodiscard]] RESIDENT_HOST_DEVICE constexpr std::uint64_t position(
      std::uint64_t row) const noexcept {
    if (parts == 1) return row;
    const std::uint64_t long_rows = long_parts * (part_rows + 1);
    const bool longer = row < long_rows || part_rows == 0;  // (rows are below long_rows then)
    const std::uint64_t part =
        longer ? row / (part_rows + 1) : long_parts + (row - long_rows) / part_rows;
    const std::uint64_t index = longer ? row % (part_rows + 1) : (row - long_rows) % part_rows;
    return index * parts + part;  // the last round's (index == part_rows) only of longer parts
  }
};

}  // namespace resident::detail
