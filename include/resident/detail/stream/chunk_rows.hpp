// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// Where the rows of one gathered streaming batch lie in the chunk slots: a batch read straight
// from one slot, or a batch of a sample-shuffled window, whose rows come from every chunk of
// the window. Host and device, so that the host copy team and the gather kernels share it.

#include <cstddef>
#include <cstdint>

#include "resident/config.hpp"
#include "resident/detail/dataset/layout.hpp"
#include "resident/detail/dataset/row_order.hpp"
#include "resident/permutation.hpp"

namespace resident::detail {

/// Most chunks in one shuffle window: the window's slots travel by value to the gather
/// kernels, so their count is bounded (a window of 16 chunks of the default 64 MiB is 1 GiB).
inline constexpr std::size_t max_window_chunks = 16;

/// @brief The row of each position of one gathered streaming batch. Straight (`samples`
/// empty): the batch's rows in order, from row `slot_row` of slot `slot[0]`, with the row ids
/// of `straight`. Shuffled: the window's rows are its full batches (every chunk's batches in
/// the order of `slot` and `first_batch`, a chunk with fewer batches last, the short last batch
/// left out), and batch position `r` takes window row `samples(first + r)`.
struct ChunkRows {
  Permutation samples;              ///< Over the window's rows; empty: a straight batch.
  RowOrder straight{};              ///< Row ids of a straight batch.
  std::uint64_t first = 0;          ///< Window row of the batch's first position (shuffled).
  std::uint64_t slot_row = 0;       ///< First slot row of a straight batch.
  std::uint64_t batch_size = 1;     ///< Rows of a full batch.
  std::uint64_t chunk_batches = 1;  ///< Batches of a full chunk.
  std::uint64_t replicas = 1;       ///< Ranks sharing the order (replicated).
  std::uint64_t replica = 0;        ///< This pass's replica.
  std::uint64_t offset = 0;         ///< The pass's drop offset (see `drop_offset`).
  std::uint64_t slot[max_window_chunks] = {};         ///< Slot of each chunk of the window.
  std::uint64_t first_batch[max_window_chunks] = {};  ///< Its first dataset batch.

  /// The place of position `r` (nothing is read through `reach`).
  template <class Reach>
  [[nodiscard]] RESIDENT_HOST_DEVICE RowPlace place(std::uint64_t r,
                                                    const Reach& /*reach*/) const noexcept {
    return place(r);
  }
  [[nodiscard]] RESIDENT_HOST_DEVICE RowPlace place(std::uint64_t r) const noexcept {
    if (samples.size() == 0) return {straight.row(r), slot[0], slot_row + r};
    const std::uint64_t entry = samples(first + r);
    const std::uint64_t batch = entry / batch_size;
    const std::uint64_t within = entry % batch_size;
    const std::uint64_t chunk = batch / chunk_batches;
    const std::uint64_t local = batch % chunk_batches;
    // Every batch of a window is a full round of the order: its replica's rows start at
    // `(batch * replicas + replica) * batch_size` (see ShardGeometry::slice).
    return {((first_batch[chunk] + local) * replicas + replica) * batch_size + within + offset,
            slot[chunk], local * batch_size + within};
  }
  /// The row id at batch position `r`, as `RowOrder::row` gives it.
  [[nodiscard]] RESIDENT_HOST_DEVICE std::uint64_t row(std::uint64_t r) const noexcept {
    return place(r).row;
  }
};

/// @brief A gather source: a field's rows in the chunk slots, placed by `rows`; or, where
/// `direct` is set (a stream in whole-epoch order whose rows are in host memory, gathered by
/// host threads), the rows where they lie in host memory, row `row` being the stored row that
/// `source` maps to the caller's, and that `selected` maps on to its base's where the stream is
/// a subset of another's rows.
template <class T>
struct ChunkSlotRows {
  using element_type = T;
  const std::byte* field_base;  ///< The field's first byte in slot 0.
  std::size_t slot_bytes;
  std::size_t row_bytes;
  ChunkRows rows;
  const std::byte* direct = nullptr;  ///< The field's rows in host memory, or null.
  SourceMap source{};
  const std::size_t* selected = nullptr;  ///< A subset's base row of each of its rows, or null.

  /// `start(place)`: nothing is read through `reach`.
  template <class Reach>
  [[nodiscard]] RESIDENT_HOST_DEVICE const T* at(const RowPlace& place,
                                                 const Reach& /*reach*/) const noexcept {
    return start(place);
  }
  /// Where the row at `place` starts (its place worked out once by the caller).
  [[nodiscard]] RESIDENT_HOST_DEVICE const T* start(const RowPlace& place) const noexcept {
    if (direct != nullptr) {
      const std::uint64_t row = source.row(place.row);
      return reinterpret_cast<const T*>(  // NOLINT: typed view of the rows' bytes
          direct + (selected != nullptr ? selected[row] : row) * row_bytes);
    }
    return reinterpret_cast<const T*>(  // NOLINT: typed view of the slot's bytes
        field_base + place.slot * slot_bytes + place.slot_row * row_bytes);
  }
  /// The same rows read as `Word`s (the copy kernels' unit).
  /// The largest power of two every row start is aligned to, in bytes (rows read where they
  /// lie may start anywhere: an archive member's data is aligned for its type only).
  [[nodiscard]] std::size_t alignment() const noexcept {
    const std::size_t bits =
        reinterpret_cast<std::uintptr_t>(direct != nullptr ? direct : field_base) |  // NOLINT
        row_bytes | (direct != nullptr ? 0 : slot_bytes);
    return bits & (~bits + 1);  // the lowest set bit
  }
  template <class Word>
  [[nodiscard]] ChunkSlotRows<Word> as() const noexcept {
    return {field_base, slot_bytes, row_bytes, rows, direct, source, selected};
  }
};

}  // namespace resident::detail
