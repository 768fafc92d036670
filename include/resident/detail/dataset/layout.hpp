// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "resident/config.hpp"
#include "resident/dataset_options.hpp"
#include "resident/detail/checked_math.hpp"
#include "resident/detail/dataset/shard_geometry.hpp"
#include "resident/detail/expects.hpp"
#include "resident/host_tensor.hpp"
#include "resident/space_traits.hpp"

namespace resident::detail {

/// Where each field lives inside a dataset's one allocation.
template <std::size_t Fields>
struct DatasetLayout {
  std::size_t source_rows = 0;                ///< Rows of the caller's fields (all ranks' rows).
  ShardGeometry geometry{};                   ///< Which of them are stored, and how epochs are cut.
  std::array<std::size_t, Fields> offsets{};  ///< Byte offset of each field, 256-aligned.
  std::array<std::size_t, Fields> bytes{};    ///< Stored bytes of each field.
  std::array<std::size_t, Fields> row_bytes{};     ///< Bytes of one row of each field.
  std::array<std::size_t, Fields> row_elements{};  ///< Elements of one row of each field.
  std::size_t total_bytes = 0;                     ///< Bytes the allocation needs.
};

/// @brief `layout` with the stored rows of `geometry`: the fields back to back, each base
/// rounded up to `field_alignment` and followed by the padding rows its batches need.
/// Overflow-checked.
template <std::size_t Fields>
DatasetLayout<Fields> place_fields(DatasetLayout<Fields> layout, const ShardGeometry& geometry) {
  layout.geometry = geometry;
  std::size_t end = 0;
  for (std::size_t field = 0; field < Fields; ++field) {
    layout.offsets[field] = checked_align_up(end, field_alignment, "dataset byte size");
    layout.bytes[field] =
        checked_mul(geometry.stored_rows, layout.row_bytes[field],
                    "dataset byte size (the rows stored, with Remainder::pad's padding rows, "
                    "times a row's bytes)");
    end = checked_add(layout.offsets[field], layout.bytes[field], "dataset byte size");
  }
  layout.total_bytes = end;
  return layout;
}

/// @brief The layout of the rows `options` stores (this rank's part, or every row when
/// replicated) for fields of these shapes and element sizes, after checking that the fields
/// agree on the row count.
template <std::size_t Fields>
DatasetLayout<Fields> make_layout(const DatasetOptions& options,
                                  const std::array<Shape, Fields>& shapes,
                                  const std::array<std::size_t, Fields>& element_bytes) {
  static_assert(Fields >= 1, "a dataset needs at least one field");
  // Every dataset's gathering epochs need a slot; refused here, where every dataset and plan()
  // is made, rather than at the first gathering epoch.
  RESIDENT_EXPECTS(options.ring_depth > 0,
                   "DatasetOptions::ring_depth is 0; use at least 1 (default 2)");
  DatasetLayout<Fields> layout;
  layout.source_rows = shapes[0][0];
  for (std::size_t field = 0; field < Fields; ++field) {
    layout.row_elements[field] = shapes[field].drop_front().elements();
    layout.row_bytes[field] =
        checked_mul(layout.row_elements[field], element_bytes[field], "row byte size");
    RESIDENT_EXPECTS(shapes[field][0] == layout.source_rows,
                     "field " + std::to_string(field) + " has " + std::to_string(shapes[field][0]) +
                         " rows (shape " + shapes[field].to_string() + ") but field 0 has " +
                         std::to_string(layout.source_rows) + " (shape " + shapes[0].to_string() +
                         "); every field needs one row per sample");
  }
  return place_fields(layout, make_geometry(layout.source_rows, options));
}

/// @brief The layout of `rows` rows of fields whose rows have these shapes (a row's shape, its
/// row count left out): a dataset of some of another's rows, or of a mixture's samples.
template <std::size_t Fields>
DatasetLayout<Fields> layout_of_rows(const DatasetOptions& options,
                                     const std::array<Shape, Fields>& row_shapes, std::size_t rows,
                                     const std::array<std::size_t, Fields>& element_bytes) {
  std::array<Shape, Fields> shapes{};
  for (std::size_t field = 0; field < Fields; ++field)
    shapes[field] = row_shapes[field].prepend(rows);
  return make_layout<Fields>(options, shapes, element_bytes);
}

/// @brief The layout of host tensors `fields` (see above).
template <class... Ts>
DatasetLayout<sizeof...(Ts)> make_layout(const DatasetOptions& options,
                                         const HostTensor<const Ts>&... fields) {
  return make_layout<sizeof...(Ts)>(options, {fields.shape()...}, {sizeof(Ts)...});
}

/// @brief Which row of the caller's data a stored row is (as a preloaded dataset stores them):
/// the rank's rows from `source_first`, then the padding, which repeats `cycle` rows from `base`.
struct SourceMap {
  std::uint64_t order_rows = 0;
  std::uint64_t source_first = 0;
  std::uint64_t cycle = 1;
  std::uint64_t base = 0;
  [[nodiscard]] RESIDENT_HOST_DEVICE std::uint64_t row(std::uint64_t stored) const noexcept {
    return stored < order_rows ? source_first + stored : base + (stored - order_rows) % cycle;
  }
};

/// @brief Where the stored rows of `layout` lie in the caller's data (see `SourceMap`).
template <std::size_t Fields>
SourceMap source_map(const DatasetLayout<Fields>& layout) noexcept {
  const ShardGeometry& geometry = layout.geometry;
  SourceMap map;
  map.order_rows = geometry.order_rows;
  map.source_first = geometry.source_first;
  map.cycle = geometry.pad_from_source_start ? layout.source_rows : geometry.order_rows;
  map.base = geometry.pad_from_source_start ? 0 : geometry.source_first;
  if (map.cycle == 0) map.cycle = 1;  // no rows to pad from: no padding position is served
  return map;
}

/// Where each field's batch and the row ids live in one slot of a gathering epoch's ring.
template <std::size_t Fields>
struct RingLayout {
  std::array<std::size_t, Fields> offsets{};  ///< Byte offset of each field in a slot.
  std::size_t index_offset = 0;               ///< Byte offset of the row ids in a slot.
  std::size_t slot_bytes = 0;                 ///< Bytes of one slot, 256-aligned.
  std::size_t depth = 0;                      ///< Slots.
  std::size_t total_bytes = 0;                ///< Bytes of the ring.
};

/// Bytes of an element of a ring slot for a field stored with elements of `stored` bytes when
/// the widest conversion planned writes `width` bytes (`DatasetOptions::ring_element_bytes`;
/// 0: a `float`): the wider of the two, so that one ring serves both the stored batches and
/// their conversions without growing.
inline constexpr std::size_t ring_element_bytes(std::size_t stored,
                                                std::size_t width = 0) noexcept {
  const std::size_t planned = width == 0 ? sizeof(float) : width;
  return stored > planned ? stored : planned;
}

/// Each field's `ring_element_bytes` for elements of `stored` bytes.
template <std::size_t Fields>
std::array<std::size_t, Fields> ring_element_sizes(const std::array<std::size_t, Fields>& stored,
                                                   std::size_t width) noexcept {
  std::array<std::size_t, Fields> sizes{};
  for (std::size_t field = 0; field < Fields; ++field)
    sizes[field] = ring_element_bytes(stored[field], width);
  return sizes;
}

/// @brief The ring of a gathering epoch: `depth` slots, each one batch of every field, with
/// elements of `element_bytes` (see `ring_element_bytes`), plus the batch's row ids
/// (`std::int64_t`). A slot holds the largest batch the geometry serves, which is fewer rows
/// than the batch size when the dataset (or this rank's part) is smaller than one batch, and
/// there are never more slots than batches (with one slot per batch every view of the epoch
/// stays valid already).
template <std::size_t Fields>
RingLayout<Fields> make_ring_layout(const DatasetLayout<Fields>& layout,
                                    const std::array<std::size_t, Fields>& element_bytes,
                                    std::size_t depth) {
  RESIDENT_EXPECTS(depth > 0, "DatasetOptions::ring_depth is 0; use at least 1 (default 2)");
  const std::size_t rows = layout.geometry.largest_batch_rows();
  RingLayout<Fields> ring;
  std::size_t end = 0;
  for (std::size_t field = 0; field < Fields; ++field) {
    ring.offsets[field] = end;
    const std::size_t bytes = checked_mul(
        checked_mul(rows, layout.row_elements[field],
                    "ring byte size (a batch's rows, full under Remainder::pad, times a row's "
                    "elements)"),
        element_bytes[field],
        "ring byte size (a batch's elements times the ring's element bytes: the "
        "conversion's output or DatasetOptions::ring_element_bytes)");
    end = checked_align_up(checked_add(end, bytes, "ring byte size"), field_alignment,
                           "ring byte size");
  }
  ring.index_offset = end;
  end =
      checked_add(end, checked_mul(rows, sizeof(std::int64_t), "ring byte size"), "ring byte size");
  ring.slot_bytes = checked_align_up(end, field_alignment, "ring byte size");
  ring.depth = std::max<std::size_t>(1, std::min(depth, layout.geometry.batches));
  ring.total_bytes = checked_mul(ring.slot_bytes, ring.depth, "ring byte size");
  return ring;
}

}  // namespace resident::detail
