// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <cstdint>

#include "resident/config.hpp"
#include "resident/permutation.hpp"

namespace resident::detail {

/// @brief Reaches memory at its own address: a kernel's view of device memory, and
/// the host's of its own.
///
/// A launch policy's `reach_type` maps `reach(pointer, count)` to where the running thread
/// reads or writes the `count` elements from `pointer` on: every element a body touches
/// through the result lies in that extent, so that a reach which checks it (the simulated
/// runtime's) catches a body that strays out of its allocation. On a device the address is the
/// pointer itself and the count goes unused.
struct SameAddress {
  template <class T>
  [[nodiscard]] RESIDENT_HOST_DEVICE T* operator()(T* pointer,
                                                   std::uint64_t /*count*/) const noexcept {
    return pointer;
  }
};

/// @brief Where the row at one batch position is: its row id (the stored row, as a
/// `DeviceDataset` numbers it) and, in a gathered streaming batch, its chunk slot and its row
/// in the slot. The gather kernels work it out once per row and share it among the row's
/// threads.
struct RowPlace {
  std::uint64_t row = 0;
  std::uint64_t slot = 0;
  std::uint64_t slot_row = 0;
};

/// @brief The positions of a rank's order mapped to its stored rows through the epoch's global
/// sequence (docs/resume.md), where no batch is simply a run of the order: a rank that stores
/// several of the rows' parts, or an epoch resumed on another world size or batch size.
///
/// The global sequence runs over rounds, each one row of every part (the last round only of the
/// longer parts; a replicated dataset is one part, and a round one row). A rank's position `x`
/// is round `x / parts` of its own parts, part `x % parts` (the last round's positions only of
/// its longer parts); rounds are counted from `start_round` and arranged (`Shuffle::batches`:
/// blocks of `block_rounds` rounds in a seeded order, then the drop offset); the round is the
/// row's index in its part, through the part's sample permutation under `Shuffle::samples`.
struct RowMap {
  std::uint64_t parts = 0;            ///< The rank's parts (0: no map, positions are rows).
  std::uint64_t full_rounds = 0;      ///< Rounds of the order in which every part has a row.
  std::uint64_t start_round = 0;      ///< Round of the global sequence at position 0.
  std::uint64_t block_rounds = 0;     ///< Rounds per arranged block (0: none arranged).
  std::uint64_t shuffled_blocks = 0;  ///< Blocks the arrangement permutes (a short last stays).
  Permutation blocks;                 ///< Their order.
  std::uint64_t offset_rounds = 0;    ///< The drop offset, in rounds.
  std::uint64_t long_parts = 0;       ///< The rank's first parts, which store a row more.
  std::uint64_t part_rows = 0;        ///< Rows a shorter part stores.
  Permutation long_samples;           ///< `Shuffle::samples` within a longer part (else empty).
  Permutation short_samples;          ///< Within a shorter part.

  /// The round of the global sequence that arranged round `round` is.
  [[nodiscard]] RESIDENT_HOST_DEVICE std::uint64_t arranged(std::uint64_t round) const noexcept {
    if (block_rounds != 0) {
      std::uint64_t block = round / block_rounds;
      if (block < shuffled_blocks) block = blocks(block);
      round = block * block_rounds + round % block_rounds;
    }
    return round + offset_rounds;
  }
  /// Whether positions `[x, x + rows)` of a one-part order are a run of stored rows (no
  /// sample permutation): no two of the blocks they span are out of order.
  [[nodiscard]] bool run(std::uint64_t x, std::uint64_t rows) const noexcept {
    if (block_rounds == 0) return true;
    const std::uint64_t last = (start_round + x + rows - 1) / block_rounds;
    for (std::uint64_t block = (start_round + x) / block_rounds; block < last; ++block) {
      const auto placed = [this](std::uint64_t b) { return b < shuffled_blocks ? blocks(b) : b; };
      if (placed(block + 1) != placed(block) + 1) return false;
    }
    return true;
  }
  /// The stored row at position `x` of the rank's order.
  [[nodiscard]] RESIDENT_HOST_DEVICE std::uint64_t row(std::uint64_t x) const noexcept {
    const bool full = x < full_rounds * parts;
    const std::uint64_t part = full ? x % parts : x - full_rounds * parts;
    const std::uint64_t round = arranged(start_round + (full ? x / parts : full_rounds));
    const bool longer = part < long_parts;
    const Permutation& samples = longer ? long_samples : short_samples;
    const std::uint64_t within = samples.size() != 0 ? samples(round) : round;
    return part * part_rows + (longer ? part : long_parts) + within;
  }
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
  RowMap map{};             ///< Where positions are not rows (`map.parts != 0`): see `RowMap`.

  [[nodiscard]] RESIDENT_HOST_DEVICE std::uint64_t row(std::uint64_t r) const noexcept {
    std::uint64_t position = first + r;
    if (position >= rows && rows != 0) position = (position - rows) % rows;
    if (map.parts != 0 && rows != 0) return map.row(position);
    return samples.size() != 0 ? samples(position) : position;
  }
  /// The place of position `r`: its row id alone (the rows lie where their ids say; nothing is
  /// read through `reach`).
  template <class Reach>
  [[nodiscard]] RESIDENT_HOST_DEVICE RowPlace place(std::uint64_t r,
                                                    const Reach& /*reach*/) const noexcept {
    return {row(r)};
  }
};

}  // namespace resident::detail
