// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <array>
#include <cstddef>
#include <string>

#include "resident/detail/checked_math.hpp"
#include "resident/detail/expects.hpp"
#include "resident/host_tensor.hpp"
#include "resident/space_traits.hpp"

namespace resident::detail {

/// Where each field lives inside a dataset's one allocation.
template <std::size_t Fields>
struct DatasetLayout {
  std::size_t rows = 0;                       ///< Rows shared by every field.
  std::array<std::size_t, Fields> offsets{};  ///< Byte offset of each field, 256-aligned.
  std::array<std::size_t, Fields> bytes{};    ///< Byte size of each field.
  std::size_t total_bytes = 0;                ///< Bytes the allocation needs.
};

/// @brief Lays the fields out back to back, each base rounded up to `field_alignment`, after
/// checking that they agree on the row count. All arithmetic is overflow-checked.
template <class... Ts>
DatasetLayout<sizeof...(Ts)> make_layout(const HostTensor<const Ts>&... fields) {
  static_assert(sizeof...(Ts) >= 1, "a dataset needs at least one field");
  DatasetLayout<sizeof...(Ts)> layout;
  const std::array<std::size_t, sizeof...(Ts)> rows{fields.rows()...};
  const std::array<std::size_t, sizeof...(Ts)> bytes{fields.bytes()...};
  const std::array<Shape, sizeof...(Ts)> shapes{fields.shape()...};
  layout.rows = rows[0];
  std::size_t end = 0;
  for (std::size_t field = 0; field < sizeof...(Ts); ++field) {
    RESIDENT_EXPECTS(rows[field] == layout.rows,
                     "field " + std::to_string(field) + " has " + std::to_string(rows[field]) +
                         " rows (shape " + shapes[field].to_string() + ") but field 0 has " +
                         std::to_string(layout.rows) + " (shape " + shapes[0].to_string() +
                         "); every field needs one row per sample");
    layout.offsets[field] = checked_align_up(end, field_alignment, "dataset byte size");
    layout.bytes[field] = bytes[field];
    end = checked_add(layout.offsets[field], bytes[field], "dataset byte size");
  }
  layout.total_bytes = end;
  return layout;
}

}  // namespace resident::detail
