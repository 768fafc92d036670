// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// Where the rows of a mixture's gathered batch lie: each position's source and row computed
// once (`MixturePlaces`, the batch's order) from the mixture's table (its sources' rows, quotas
// and first slots), then each field's row from that source's base address and row pitch for
// the field (`MixedRows`, the gather source). The table lies in the space's memory, read through
// the kernel's reach as the rows are; nothing in it grows with the rows.

#include <cstddef>
#include <cstdint>

#include "resident/config.hpp"
#include "resident/detail/dataset/layout.hpp"
#include "resident/detail/dataset/part_interleave.hpp"
#include "resident/detail/dataset/row_order.hpp"
#include "resident/detail/dataset/shard_geometry.hpp"
#include "resident/mixture_order.hpp"

namespace resident::detail {

/// @brief The order of one gathered batch of a mixture: the row id at position `r` is the
/// stored row `positions` gives; its place names the source (`slot`) and the source's row
/// (`slot_row`) that the row's position of the epoch serves.
struct MixturePlaces {
  RowOrder positions;          ///< The batch's stored rows of the mixture.
  const std::uint64_t* table;  ///< See `mixture_sample`.
  MixtureKey key;              ///< The epoch's.
  SourceMap stored;            ///< The rank's stored rows -> rows of the mixture's data.
  PartInterleave interleave;   ///< Rows of the data -> positions of the epoch.

  [[nodiscard]] RESIDENT_HOST_DEVICE std::uint64_t row(std::uint64_t r) const noexcept {
    return positions.row(r);
  }
  template <class Reach>
  [[nodiscard]] RESIDENT_HOST_DEVICE RowPlace place(std::uint64_t r,
                                                    const Reach& reach) const noexcept {
    const std::uint64_t id = positions.row(r);
    const MixtureSample sample =
        mixture_sample(table, key, interleave.position(stored.row(id)), reach);
    return {id, sample.source, sample.row};
  }
  /// The places of positions `[r, r + count)`, computed together (host code: see
  /// `mixture_samples`).
  template <class Reach>
  void places(std::uint64_t r, std::size_t count, const Reach& reach, RowPlace* placed) const {
    mixture_samples(
        table, key, count, reach,
        [&](std::size_t i) {
          placed[i].row = positions.row(r + i);
          return interleave.position(stored.row(placed[i].row));
        },
        [&](std::size_t i, const MixtureSample& sample) {
          placed[i].slot = sample.source;
          placed[i].slot_row = sample.row;
        });
  }
};

/// @brief A gather source: a field's rows in the sources of a mixture, the row at `place` being
/// row `place.slot_row` of source `place.slot` (see `MixturePlaces`). Each source has its own
/// row pitch: a dataset's rows follow each other, a token stream's windows lie `stride` tokens
/// apart and may overlap, so a row's start may be aligned to less than its size (`alignment`).
template <class T>
struct MixedRows {
  using element_type = T;
  const std::uint64_t* bases;    ///< The field's stored row 0 of each source, as an address.
  const std::uint64_t* pitches;  ///< Bytes from one of each source's rows to the next.
  std::size_t row_elements;      ///< Elements of one row.
  std::size_t aligned;           ///< See `alignment`.

  /// Where the row at `place` starts, the source's base and pitch read through `reach`.
  template <class Reach>
  [[nodiscard]] RESIDENT_HOST_DEVICE const T* at(const RowPlace& place,
                                                 const Reach& reach) const noexcept {
    const std::uint64_t start =
        *reach(bases + place.slot, 1) + place.slot_row * *reach(pitches + place.slot, 1);
    // NOLINTNEXTLINE(performance-no-int-to-ptr): the address the table was made from
    return reinterpret_cast<const T*>(static_cast<std::uintptr_t>(start));
  }
  /// The largest power of two every source's row starts are aligned to, in bytes: what limits
  /// the word a copy kernel may read (the rows' size limits it too).
  [[nodiscard]] std::size_t alignment() const noexcept { return aligned; }
  /// The same rows read as `Word`s (see `alignment`: the caller checks that they are aligned).
  template <class Word>
  [[nodiscard]] MixedRows<Word> as() const noexcept {
    return {bases, pitches, row_elements * sizeof(T) / sizeof(Word), aligned};
  }
};

}  // namespace resident::detail
