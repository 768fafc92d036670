// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>

#include "resident/dataset_options.hpp"
#include "resident/detail/checked_math.hpp"
#include "resident/detail/expects.hpp"
#include "resident/detail/layout.hpp"
#include "resident/space_traits.hpp"

namespace resident::detail {

/// Bytes an automatically sized chunk aims at: large enough that a copy runs at the link's
/// bandwidth and the per-chunk bookkeeping vanishes, small enough that a few fit anywhere.
inline constexpr std::size_t default_chunk_target_bytes = std::size_t{64} << 20;

/// How a streaming dataset cuts its batches into chunks and lays one chunk out in a ring slot:
/// field `f` of the chunk's local batch `l` starts at `offsets[f] + l * batch_size * row_bytes`.
template <std::size_t Fields>
struct StreamLayout {
  std::size_t chunk_batches = 0;              ///< Batches per chunk (the last may have fewer).
  std::size_t chunks = 0;                     ///< Chunks per epoch.
  std::size_t ring_chunks = 0;                ///< Slots of the ring.
  std::size_t prefetch_chunks = 0;            ///< Chunks loaded ahead of the one being read.
  std::array<std::size_t, Fields> offsets{};  ///< Byte offset of each field in a slot.
  std::size_t slot_bytes = 0;                 ///< Bytes of one slot, 256-aligned.
  std::size_t total_bytes = 0;                ///< Bytes of the ring: the one allocation.

  /// Batches of chunk `c` (< `chunks`).
  [[nodiscard]] std::size_t batches_of(std::size_t c, std::size_t batches) const noexcept {
    return std::min(chunk_batches, batches - c * chunk_batches);
  }
};

/// @brief Checks the streaming options that can never work.
inline void check_stream_options(const StreamOptions& options) {
  RESIDENT_EXPECTS(options.prefetch_chunks >= 1,
                   "StreamOptions::prefetch_chunks is 0; use at least 1 (default 2)");
  RESIDENT_EXPECTS(options.ring_chunks > options.prefetch_chunks,
                   "StreamOptions::ring_chunks (" + std::to_string(options.ring_chunks) +
                       ") must exceed prefetch_chunks (" + std::to_string(options.prefetch_chunks) +
                       "): one slot is read while the others load; use e.g. 4 and 2");
}

/// @brief The chunking of the batches `layout` serves under `options`, with `usable` bytes of
/// the space available (for an automatic chunk size). Overflow-checked.
template <std::size_t Fields>
StreamLayout<Fields> make_stream_layout(const DatasetLayout<Fields>& layout,
                                        const StreamOptions& options, std::size_t usable) {
  check_stream_options(options);
  const std::size_t batch_size = layout.geometry.batch_size;
  std::size_t batch_bytes = 0;  // one batch of every field, each field aligned
  for (std::size_t field = 0; field < Fields; ++field)
    batch_bytes = checked_align_up(
        checked_add(batch_bytes, checked_mul(batch_size, layout.row_bytes[field], "chunk size"),
                    "chunk size"),
        field_alignment, "chunk size");
  StreamLayout<Fields> stream;
  stream.ring_chunks = options.ring_chunks;
  stream.prefetch_chunks = options.prefetch_chunks;
  stream.chunk_batches = options.chunk_batches;
  if (stream.chunk_batches == 0) {
    const std::size_t target = std::min(default_chunk_target_bytes, usable / options.ring_chunks);
    stream.chunk_batches = std::max<std::size_t>(1, target / std::max<std::size_t>(batch_bytes, 1));
  }
  const std::size_t batches = layout.geometry.batches;
  stream.chunk_batches = std::max<std::size_t>(1, std::min(stream.chunk_batches, batches));
  stream.chunks = batches / stream.chunk_batches + (batches % stream.chunk_batches != 0 ? 1 : 0);
  const std::size_t chunk_rows = checked_mul(stream.chunk_batches, batch_size, "chunk size");
  std::size_t end = 0;
  for (std::size_t field = 0; field < Fields; ++field) {
    stream.offsets[field] = checked_align_up(end, field_alignment, "chunk size");
    end = checked_add(stream.offsets[field],
                      checked_mul(chunk_rows, layout.row_bytes[field], "chunk size"), "chunk size");
  }
  stream.slot_bytes = batches == 0 ? 0 : checked_align_up(end, field_alignment, "chunk size");
  stream.total_bytes = checked_mul(stream.slot_bytes, stream.ring_chunks, "stream ring size");
  return stream;
}

}  // namespace resident::detail
