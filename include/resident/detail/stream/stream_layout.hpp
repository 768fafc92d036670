// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <string>

#include "resident/dataset_options.hpp"
#include "resident/detail/checked_math.hpp"
#include "resident/detail/dataset/layout.hpp"
#include "resident/detail/expects.hpp"
#include "resident/detail/format_bytes.hpp"
#include "resident/detail/stream/chunk_rows.hpp"
#include "resident/space_traits.hpp"

namespace resident::detail {

/// Bytes an automatically sized chunk aims at: large enough that a copy runs at the link's
/// bandwidth and the per-chunk bookkeeping vanishes, small enough that a few fit anywhere.
inline constexpr std::size_t default_chunk_target_bytes = std::size_t{64} << 20;

/// How a streaming dataset cuts its batches into chunks and lays one chunk out in a ring slot:
/// field `f` of the chunk's local batch `l` starts at `offsets[f] + l * batch_size * row_bytes`.
template <std::size_t Fields>
struct StreamLayout {
  std::size_t chunk_batches = 0;    ///< Batches per chunk (the last may have fewer).
  std::size_t chunks = 0;           ///< Chunks per epoch.
  std::size_t chunk_slots = 0;      ///< Chunk slots (at most `chunks`, at least 1).
  std::size_t prefetch_chunks = 0;  ///< Chunks loaded ahead of the one read (< `chunk_slots`).
  /// Chunks of one sample-shuffle window, all resident at once beside the prefetch: every chunk
  /// when each has a slot of its own, else the slots the prefetch leaves
  /// (`chunk_slots - prefetch_chunks`); at most `max_window_chunks`.
  std::size_t window_chunks = 0;
  bool reader_copies = true;                  ///< `StreamOptions::reader_copies`.
  std::array<std::size_t, Fields> offsets{};  ///< Byte offset of each field in a slot.
  std::size_t slot_bytes = 0;                 ///< Bytes of one slot, 256-aligned.
  std::size_t total_bytes = 0;                ///< Bytes of the chunk slots: the one allocation.

  /// Batches of chunk `c` (< `chunks`).
  [[nodiscard]] std::size_t batches_of(std::size_t c, std::size_t batches) const noexcept {
    // A resumed epoch may have fewer batches than the chunks were cut for: none past its last.
    return c * chunk_batches >= batches ? 0 : std::min(chunk_batches, batches - c * chunk_batches);
  }
};

/// @brief Why `options` can never stream (expected, found, what to do), or empty when they can.
inline std::string stream_options_problem(const StreamOptions& options) {
  if (options.prefetch_chunks == 0)
    return "StreamOptions::prefetch_chunks is 0; use at least 1 (default 2)";
  if (options.chunk_slots <= options.prefetch_chunks)
    return "StreamOptions::chunk_slots (" + std::to_string(options.chunk_slots) +
           ") must exceed prefetch_chunks (" + std::to_string(options.prefetch_chunks) +
           "): one slot is read while the others load; use e.g. 4 and 2";
  return {};
}

/// @brief Checks the streaming options that can never work.
/// @throws InvalidArgument saying what is wrong with them.
inline void check_stream_options(const StreamOptions& options) {
  const std::string problem = stream_options_problem(options);
  RESIDENT_EXPECTS(problem.empty(), problem);
}

/// @brief What to do when the chunk slots and the gather ring of `options` do not fit.
inline std::string chunk_slots_advice(const DatasetOptions& options) {
  if (options.shard.world_size > 1 && options.streaming.chunk_batches == 0)
    return "set StreamOptions::chunk_batches explicitly, to the same value on every rank (a "
           "sharded job's automatic chunks are sized from what all ranks share, never from one "
           "rank's free memory), lower DatasetOptions::ring_depth or batch_size, free memory, or "
           "lower the reserve";
  return "use fewer or smaller chunks (StreamOptions::chunk_slots, chunk_batches), lower "
         "DatasetOptions::ring_depth or batch_size, free memory, or lower the reserve";
}

/// @brief Bytes of the gather ring a dataset of `layout` plans for: `ring_depth` batches of
/// every field at `DatasetOptions::ring_element_bytes` (or wider stored elements), and their
/// row ids.
/// @throws InvalidArgument for a `ring_depth` of 0 or byte overflow.
template <std::size_t Fields>
std::size_t planned_ring_bytes(const DatasetLayout<Fields>& layout,
                               const std::array<std::size_t, Fields>& element_bytes,
                               const DatasetOptions& options) {
  return make_ring_layout(layout, ring_element_sizes(element_bytes, options.ring_element_bytes),
                          options.ring_depth)
      .total_bytes;
}

/// @brief The advice of a refused stream: what the chunk slots and the gather ring need.
template <std::size_t Fields>
std::string stream_refusal_advice(const StreamLayout<Fields>& stream, std::size_t ring_bytes,
                                  const DatasetOptions& options) {
  return "even the chunk slots (" + std::to_string(stream.chunk_slots) + " chunks of " +
         std::to_string(stream.chunk_batches) + " batches, " + format_bytes(stream.total_bytes) +
         ") and the gather ring its epochs use (" + std::to_string(options.ring_depth) +
         " batches, " + format_bytes(ring_bytes) + ") do not fit together; " +
         chunk_slots_advice(options);
}

/// Bytes of `rows` rows of every field, each field's base aligned as in a slot; their offsets.
template <std::size_t Fields>
std::size_t slot_extent(const DatasetLayout<Fields>& layout, std::size_t rows,
                        std::array<std::size_t, Fields>& offsets) {
  std::size_t end = 0;
  for (std::size_t field = 0; field < Fields; ++field) {
    offsets[field] = checked_align_up(end, field_alignment, "chunk size");
    end = checked_add(offsets[field], checked_mul(rows, layout.row_bytes[field], "chunk size"),
                      "chunk size");
  }
  return checked_align_up(end, field_alignment, "chunk size");
}

/// @brief Batches per chunk when `StreamOptions::chunk_batches` is 0: about
/// `default_chunk_target_bytes`, and for a single rank at most `1 / chunk_slots` of `usable`.
/// The batches are then spread evenly over the chunks that takes, so that the last chunk is
/// not a sliver in a slot of its own.
///
/// A sharded job's ranks size their chunks from what they all share (the layout and the
/// target), never from their own free memory: replicated ranks deal one global batch order
/// out, and a shuffled order depends on the chunk count.
template <std::size_t Fields>
std::size_t automatic_chunk_batches(const DatasetLayout<Fields>& layout,
                                    const DatasetOptions& options, std::size_t usable) {
  const ShardGeometry& geometry = layout.geometry;
  std::array<std::size_t, Fields> offsets{};
  const std::size_t largest_batch_bytes =
      slot_extent(layout, geometry.largest_batch_rows(), offsets);
  std::size_t target = default_chunk_target_bytes;
  if (options.shard.world_size == 1)
    target = std::min(target, usable / options.streaming.chunk_slots);
  const std::size_t per_chunk =
      std::max<std::size_t>(1, target / std::max<std::size_t>(largest_batch_bytes, 1));
  const std::size_t chunks = ceil_div(geometry.batches, per_chunk);
  return chunks == 0 ? 1 : ceil_div(geometry.batches, chunks);
}

/// @brief The chunking of the batches `layout` serves under `options`, with `usable` bytes of
/// the space available (for an automatic chunk size on a single rank). The slots never hold
/// more than the data: with fewer chunks than `chunk_slots` each chunk has a slot of its own
/// (loaded once per pass), and a lone chunk's slot holds just its rows. Overflow-checked.
/// @throws InvalidArgument for invalid `StreamOptions` or byte overflow.
template <std::size_t Fields>
StreamLayout<Fields> make_stream_layout(const DatasetLayout<Fields>& layout,
                                        const DatasetOptions& options, std::size_t usable) {
  check_stream_options(options.streaming);
  const ShardGeometry& geometry = layout.geometry;
  const std::size_t batches = geometry.batches;
  StreamLayout<Fields> stream;
  stream.chunk_batches = options.streaming.chunk_batches != 0
                             ? options.streaming.chunk_batches
                             : automatic_chunk_batches(layout, options, usable);
  stream.chunk_batches = std::max<std::size_t>(1, std::min(stream.chunk_batches, batches));
  stream.chunks = ceil_div(batches, stream.chunk_batches);
  stream.chunk_slots =
      std::min(options.streaming.chunk_slots, std::max<std::size_t>(stream.chunks, 1));
  // Never more chunks ahead than there are other slots (none beside a lone chunk).
  stream.prefetch_chunks = std::min(options.streaming.prefetch_chunks, stream.chunk_slots - 1);
  // A window and the chunks loading ahead of it never share a slot: the producer, at most
  // `prefetch_chunks` past the window's last chunk, overwrites only chunks before the window.
  const std::size_t window = stream.chunks <= stream.chunk_slots
                                 ? stream.chunks
                                 : stream.chunk_slots - stream.prefetch_chunks;
  stream.window_chunks = std::max<std::size_t>(1, std::min(window, max_window_chunks));
  stream.reader_copies = options.streaming.reader_copies;
  const std::size_t slot_rows =
      stream.chunks > 1 ? checked_mul(stream.chunk_batches, geometry.batch_size, "chunk size")
                        : geometry.served_rows();
  stream.slot_bytes = batches == 0 ? 0 : slot_extent(layout, slot_rows, stream.offsets);
  stream.total_bytes = checked_mul(stream.slot_bytes, stream.chunk_slots, "chunk slots size");
  return stream;
}

}  // namespace resident::detail
