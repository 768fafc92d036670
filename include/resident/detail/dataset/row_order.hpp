// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <cstdint>

#include "resident/config.hpp"
#include "resident/permutation.hpp"

namespace resident::detail {

/// @brief Where the row at one batch position is: its row id (the stored row, as a
/// `DeviceDataset` numbers it) and, in a gathered streaming batch, its chunk slot and its row
/// in the slot. The gather kernels work it out once per row and share it among the row's
/// threads.
struct RowPlace {
  std::uint64_t row = 0;
  std::uint64_t slot = 0;
  std::uint64_t slot_row = 0;
};

/// @brief Which stored row lands at each position of one batch: positions `first + r` of the
/// epoch's order, wrapped to the order's start past the last row (the padding of
/// `Remainder::pad`), then through the sample permutation when there is one. An order of no
/// rows (a rank that owns none) maps each position to the stored padding row of that index.
/// Host and device.
struct RowOrder {
  Permutation samples;      ///< Empty: positions are rows.
  std::uint64_t rows = 0;   ///< Rows of the dataset.
  std::uint64_t first = 0;  ///< Epoch position of the batch's first row.

  [[nodiscard]] RESIDENT_HOST_DEVICE std::uint64_t row(std::uint64_t r) const noexcept {
    std::uint64_t position = first + r;
    if (position >= rows && rows != 0) position = (position - rows) % rows;
    return samples.size() != 0 ? samples(position) : position;
  }
  /// The place of position `r`: its row id alone (the rows lie where their ids say).
  [[nodiscard]] RESIDENT_HOST_DEVICE RowPlace place(std::uint64_t r) const noexcept {
    return {row(r)};
  }
};

}  // namespace resident::detail
