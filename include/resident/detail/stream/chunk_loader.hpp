// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// What a streaming pass's producer thread does: map a chunk of the pass to the copies that
// fill its slot (source rows, padding included, adjacent runs merged; in a sample-shuffled
// whole-epoch pass, the rows of each batch in the epoch's permutation) and hand them to the
// space's chunk transport.

#include <algorithm>
#include <array>
#include <cstddef>
#include <utility>
#include <vector>

#include "resident/detail/dataset/layout.hpp"
#include "resident/detail/dataset/shard_geometry.hpp"
#include "resident/detail/stream/chunk_copy.hpp"
#include "resident/detail/stream/chunk_pipeline.hpp"
#include "resident/detail/stream/chunk_rows.hpp"
#include "resident/detail/stream/pass_order.hpp"
#include "resident/detail/stream/row_source.hpp"
#include "resident/detail/stream/stream_layout.hpp"

namespace resident::detail {

/// @brief What the producer thread reads to load a chunk: fixed at construction and kept on
/// the heap, so that the dataset owning it can move while a pass runs.
template <class Transport, std::size_t Fields>
struct ChunkLoader {
  DatasetLayout<Fields> layout;
  StreamLayout<Fields> stream_layout;
  std::array<RowSource, Fields> sources;
  std::byte* slots = nullptr;  ///< The dataset's slots, `chunk_slots` of `slot_bytes` each.
  Transport* transport = nullptr;

  /// What fills one slot: the copies, and the source rows that gathered copies point into.
  struct Fill {
    std::vector<ChunkCopy> copies;
    std::vector<std::size_t> gathered;
  };

  /// Producer thread: the chunk at `position` of `order` into its slot (`pieces`: see the
  /// transport's `load`).
  void load(const PassOrder& order, std::size_t position, SharedPieces& pieces) const {
    const std::size_t slot = position % stream_layout.chunk_slots;
    const Fill fill = chunk_fill(order, position);
    transport->load(slot, slots + slot * stream_layout.slot_bytes, fill.copies, pieces);
  }

  /// The copies that fill a slot with the chunk at `position` of `order`: for every field and
  /// batch, the batch's positions in the order mapped to source rows, adjacent runs merged; a
  /// batch of a sample-shuffled whole-epoch pass row by row, through one list of source rows
  /// that every field shares.
  [[nodiscard]] Fill chunk_fill(const PassOrder& order, std::size_t position) const {
    const ShardGeometry& geometry = layout.geometry;
    const std::size_t chunk = order.chunk_at[position];
    const std::size_t batches = stream_layout.batches_of(
        chunk, order.whole_epoch ? order.epoch.batches() : geometry.batches);
    // Row by row where the epoch's rows are no runs: permuted, or mapped (see `RowMap`).
    const bool gathers =
        order.whole_epoch && (order.epoch.sample_order.size() != 0 || order.epoch.map.parts != 0);
    Fill fill;
    std::vector<BatchSlice> slices(batches);
    for (std::size_t local = 0; local < batches; ++local) {
      // The slot holds the chunk's batches in their place order: a window pass permutes them
      // when it serves them, a whole-epoch pass has them in the epoch's order already.
      BatchSlice& slice = slices[local];
      const std::size_t k = position * stream_layout.chunk_batches + local;
      if (order.whole_epoch) {
        slice = order.epoch.slice(k);
      } else {
        slice = geometry.slice(chunk * stream_layout.chunk_batches + local, order.epoch.replica);
        slice.first += order.epoch.offset;
      }
      if (!gathers) continue;
      const RowOrder rows = order.epoch.rows(k);
      for (std::size_t r = 0; r < slice.rows; ++r)
        fill.gathered.push_back(source_run(static_cast<std::size_t>(rows.row(r)), 1).first);
    }
    for (std::size_t field = 0; field < Fields; ++field) {
      const std::size_t row_bytes = layout.row_bytes[field];
      std::size_t listed = 0;
      for (std::size_t local = 0; local < batches; ++local) {
        const BatchSlice& slice = slices[local];
        std::size_t offset = stream_layout.offsets[field] + local * geometry.batch_size * row_bytes;
        if (gathers) {
          fill.copies.push_back(
              {offset, &sources[field], 0, slice.rows, fill.gathered.data() + listed});
          listed += slice.rows;
          continue;
        }
        for (std::size_t at = slice.first, left = slice.rows; left > 0;) {
          const auto [source_row, rows] = source_run(at, left);
          std::vector<ChunkCopy>& copies = fill.copies;
          if (!copies.empty() && copies.back().source == &sources[field] &&
              copies.back().gathered == nullptr &&
              copies.back().offset + copies.back().bytes() == offset &&
              copies.back().first_row + copies.back().rows == source_row)
            copies.back().rows += rows;  // continues the previous run in the slot and the source
          else
            copies.push_back({offset, &sources[field], source_row, rows, nullptr});
          offset += rows * row_bytes;
          at += rows;
          left -= rows;
        }
      }
    }
    return fill;
  }

  /// The longest run of source rows, at most `rows`, that order positions from `at` map to: the
  /// stored rows, then the padding, which repeats the rank's rows (or the caller's first rows
  /// for a rank with none) from their start, as `make_upload_plan` stores it.
  [[nodiscard]] std::pair<std::size_t, std::size_t> source_run(std::size_t at,
                                                               std::size_t rows) const noexcept {
    const SourceMap map = source_map(layout);
    const auto first = static_cast<std::size_t>(map.row(at));
    if (at < map.order_rows) return {first, std::min(rows, layout.geometry.order_rows - at)};
    const auto offset = static_cast<std::size_t>((at - map.order_rows) % map.cycle);
    return {first, std::min(rows, static_cast<std::size_t>(map.cycle) - offset)};
  }
};

}  // namespace resident::detail
