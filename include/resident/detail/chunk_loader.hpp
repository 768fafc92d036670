// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// What a streaming pass's producer thread does: map a chunk of the pass to the copies that
// fill its slot (source rows, padding included, adjacent runs merged) and hand them to the
// space's chunk transport.

#include <algorithm>
#include <array>
#include <cstddef>
#include <utility>
#include <vector>

#include "resident/detail/chunk_pipeline.hpp"
#include "resident/detail/layout.hpp"
#include "resident/detail/pass_order.hpp"
#include "resident/detail/row_source.hpp"
#include "resident/detail/shard_geometry.hpp"
#include "resident/detail/stream_layout.hpp"

namespace resident::detail {

/// @brief What the producer thread reads to load a chunk: fixed at construction and kept on
/// the heap, so that the dataset owning it can move while a pass runs.
template <class Transport, std::size_t Fields>
struct ChunkLoader {
  DatasetLayout<Fields> layout;
  StreamLayout<Fields> stream_layout;
  std::array<RowSource, Fields> sources;
  std::byte* slots = nullptr;  ///< The dataset's slots, `ring_chunks` of `slot_bytes` each.
  Transport* transport = nullptr;

  /// Producer thread: the chunk at `position` of `order` into its slot (`pieces`: see the
  /// transport's `load`).
  void load(const PassOrder& order, std::size_t position, SharedPieces& pieces) const {
    const std::size_t slot = position % stream_layout.ring_chunks;
    transport->load(slot, slots + slot * stream_layout.slot_bytes,
                    chunk_copies(order.chunk_at[position], order.lane), pieces);
  }

  /// The copies that fill a slot with chunk `chunk` of lane `lane`: for every field and batch,
  /// the batch's positions in the order mapped to source rows, adjacent runs merged.
  [[nodiscard]] std::vector<ChunkCopy> chunk_copies(std::size_t chunk, std::size_t lane) const {
    const ShardGeometry& geometry = layout.geometry;
    const std::size_t first_batch = chunk * stream_layout.chunk_batches;
    const std::size_t batches = stream_layout.batches_of(chunk, geometry.batches);
    std::vector<ChunkCopy> copies;
    for (std::size_t field = 0; field < Fields; ++field) {
      const std::size_t row_bytes = layout.row_bytes[field];
      for (std::size_t local = 0; local < batches; ++local) {
        const BatchSlice slice = geometry.slice(first_batch + local, lane);
        std::size_t offset = stream_layout.offsets[field] + local * geometry.batch_size * row_bytes;
        for (std::size_t at = slice.first, left = slice.rows; left > 0;) {
          const auto [source_row, rows] = source_run(at, left);
          if (!copies.empty() && copies.back().source == &sources[field] &&
              copies.back().offset + copies.back().bytes() == offset &&
              copies.back().first_row + copies.back().rows == source_row)
            copies.back().rows += rows;  // continues the previous run in the slot and the source
          else
            copies.push_back({offset, &sources[field], source_row, rows});
          offset += rows * row_bytes;
          at += rows;
          left -= rows;
        }
      }
    }
    return copies;
  }

  /// The longest run of source rows, at most `rows`, that order positions from `at` map to: the
  /// stored rows, then the padding, which repeats the rank's rows (or the caller's first rows
  /// for a rank with none) from their start, as `make_upload_plan` stores it.
  [[nodiscard]] std::pair<std::size_t, std::size_t> source_run(std::size_t at,
                                                               std::size_t rows) const noexcept {
    const ShardGeometry& geometry = layout.geometry;
    if (at < geometry.order_rows)
      return {geometry.source_first + at, std::min(rows, geometry.order_rows - at)};
    const std::size_t cycle =
        geometry.pad_from_source_start ? layout.source_rows : geometry.order_rows;
    const std::size_t base = geometry.pad_from_source_start ? 0 : geometry.source_first;
    const std::size_t offset = (at - geometry.order_rows) % cycle;
    return {base + offset, std::min(rows, cycle - offset)};
  }
};

}  // namespace resident::detail
