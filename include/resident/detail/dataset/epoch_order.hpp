// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// The order of one epoch as a preloaded dataset serves it: which batch of the geometry comes
// at each place, which replica a replicated rank takes, the sample permutation, and where a
// dropped remainder falls. A pure function of the geometry, the epoch's options and where the
// epoch resumes, so that a stream in whole-epoch order serves the same batches, and every rank
// the same steps.
//
// Every order is one global sequence of the epoch, the same on every world size (see
// docs/resume.md): rounds of one row of every part, arranged by the shuffle, cut into steps of
// `world_size * batch_size` rows and dealt to the ranks. Where a rank's batches are runs of its
// stored rows (one part per rank, an epoch begun on this geometry), the order works on runs;
// elsewhere a `RowMap` maps every position.

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>

#include "resident/detail/checked_math.hpp"
#include "resident/detail/dataset/row_order.hpp"
#include "resident/detail/dataset/shard_geometry.hpp"
#include "resident/detail/expects.hpp"
#include "resident/epoch_options.hpp"
#include "resident/permutation.hpp"

namespace resident::detail {

/// @brief Where an epoch starts: at its beginning, or where a run stopped (`EpochState`).
struct EpochStart {
  std::uint64_t consumed = 0;      ///< Positions of the epoch's global sequence served before.
  std::uint64_t global_batch = 0;  ///< Rows of a step when the epoch began (0: this geometry's).
};

/// @brief The replica index a replicated rank takes in a shuffled epoch: ranks trade indices each
/// epoch (a permutation of their own key stream), so that no rank keeps the same rows.
inline std::size_t epoch_replica(const ShardGeometry& geometry, const EpochOptions& options) {
  constexpr std::uint64_t replica_key =
      0x6c616e6573ULL;  // the bytes of "lanes": every order as before
  if (geometry.replicas <= 1) return geometry.replica;
  return static_cast<std::size_t>(Permutation(geometry.replicas, mix64(options.seed) ^ replica_key,
                                              options.epoch)(geometry.replica));
}

/// @brief Where a shuffled epoch under `Remainder::drop` starts its batches, in rounds of the
/// global sequence (rows, when replicated): an offset in `[0, dropped]`, seeded and advancing
/// by one each epoch, so that the rows a batch grid leaves out change every epoch and every row
/// is served within any `dropped + 1` consecutive epochs (the zero-copy shuffles cut
/// consecutive rows; `Shuffle::samples` of a preloaded dataset permutes them all and needs
/// none). 0 when no round is left out, and under `Shuffle::none`, whose batches are the
/// dataset's `batch(i)`. `rounds`: the full rounds of the sequence; `served`: those served.
inline std::size_t drop_offset(const EpochOptions& options, std::size_t rounds,
                               std::size_t served) {
  if (options.shuffle == Shuffle::none || rounds <= served) return 0;
  constexpr std::uint64_t drop_key = 0x64726f70ULL;  // "drop": its own key stream
  const std::uint64_t choices = rounds - served + 1;
  const std::uint64_t start = mix64(options.seed ^ drop_key) % choices;
  return static_cast<std::size_t>((start + options.epoch % choices) % choices);
}

/// @brief `drop_offset` of an epoch cut by `geometry`, in rounds.
inline std::size_t drop_offset(const ShardGeometry& geometry, const EpochOptions& options) {
  if (geometry.batches == 0) return 0;
  return drop_offset(options, geometry.part_rows,
                     geometry.batches * (geometry.step_rows() / geometry.round_rows()));
}

/// @brief One epoch's order over a dataset's geometry (see the file comment).
struct EpochOrder {
  EpochOptions options{};
  ShardGeometry geometry{};      ///< What the batches are cut from (a resumed epoch: its rest).
  Permutation batch_order;       ///< `Shuffle::batches` of runs: over the shuffled batches.
  Permutation sample_order;      ///< `Shuffle::samples` of runs: over the order's rows.
  std::size_t replica = 0;       ///< This rank's replica index (traded each epoch).
  std::size_t offset = 0;        ///< `drop_offset` of the zero-copy shuffles, in the rank's rows.
  RowMap map{};                  ///< Where batches are not runs (`map.parts != 0`).
  std::size_t first_batch = 0;   ///< Batches of the epoch served before this order's first.
  std::uint64_t base = 0;        ///< Positions of the global sequence before batch 0.
  std::uint64_t positions = 0;   ///< Positions of the global sequence the epoch serves.
  std::uint64_t block_rows = 0;  ///< Rows of a step when the epoch began.

  EpochOrder() = default;
  /// @brief The order of `epoch_options`'s epoch over `dataset` (its geometry), from `start`.
  /// @throws InvalidArgument when `start` is not a place of this epoch's sequence.
  EpochOrder(const ShardGeometry& dataset, const EpochOptions& epoch_options,
             const EpochStart& start = {})
      : options(epoch_options), geometry(dataset), replica(dataset.replica) {
    const std::size_t step = dataset.step_rows();
    block_rows = start.global_batch != 0 ? start.global_batch : step;
    const Sequence sequence = sequence_of(dataset, block_rows);
    positions = sequence.positions;
    RESIDENT_EXPECTS(start.consumed <= positions,
                     "the epoch state is " + std::to_string(start.consumed) +
                         " rows into an epoch of " + std::to_string(positions) +
                         "; resume from a state that this dataset's epoch saved");
    const bool finished = start.consumed == positions;
    if (block_rows == step && (start.consumed % step == 0 || finished)) {
      // The epoch as it began, from the batch where it stopped.
      first_batch = start.consumed == positions ? dataset.batches
                                                : static_cast<std::size_t>(start.consumed / step);
      if (dataset.rank_parts == 1) {
        runs(dataset);
        return;
      }
      map = make_map(dataset, sequence, 0);
      return;
    }
    // The rest of the epoch, cut and dealt as this geometry cuts and deals a dataset of its
    // rows.
    RESIDENT_EXPECTS(finished || start.consumed % dataset.round_rows() == 0,
                     "the epoch state is " + std::to_string(start.consumed) +
                         " rows into the epoch, which is not a whole number of rounds of the " +
                         std::to_string(dataset.parts) +
                         " parts; resume from a state that an epoch of this dataset saved");
    base = start.consumed;
    geometry = remake_geometry(dataset, static_cast<std::size_t>(positions - base));
    replica =
        options.shuffle == Shuffle::batches ? epoch_replica(geometry, options) : geometry.replica;
    if (finished) return;  // nothing left: no batch, no map
    map = make_map(dataset, sequence, base / dataset.round_rows());
    map.full_rounds = geometry.part_rows;
  }

  /// @brief Batches of the epoch, those served before this order's first included.
  [[nodiscard]] std::size_t batches() const noexcept { return geometry.batches; }
  /// @brief Positions of the global sequence served before epoch batch `k` (all of them from
  /// `batches()` on: the rows a dropped remainder leaves out count as served).
  [[nodiscard]] std::uint64_t position(std::size_t k) const noexcept {
    if (k >= geometry.batches) return positions;
    return base + static_cast<std::uint64_t>(k) * geometry.step_rows();
  }

  /// @brief Epoch batch `k`'s positions in the rank's order, and how many are real.
  [[nodiscard]] BatchSlice slice(std::size_t k) const noexcept {
    BatchSlice slice = geometry.slice(stored_batch(k), replica);
    slice.first += offset;
    return slice;
  }
  /// @brief The stored rows of epoch batch `k`, position by position.
  [[nodiscard]] RowOrder rows(std::size_t k) const noexcept {
    return {sample_order, geometry.order_rows, slice(k).first, map};
  }
  /// @brief The first stored row of epoch batch `k` where its rows are a run of the stored rows
  /// (it can be a view of them), else `no_run` (it is gathered).
  [[nodiscard]] std::size_t run_first(std::size_t k) const noexcept {
    const BatchSlice batch = slice(k);
    if (map.parts == 0) return sample_order.size() == 0 ? batch.first : no_run;
    if (map.parts != 1 || map.short_samples.size() != 0 || batch.valid != batch.rows ||
        batch.rows == 0 || !map.run(batch.first, batch.rows))
      return no_run;
    return static_cast<std::size_t>(map.row(batch.first));
  }
  /// @brief Whether some batch may be gathered that a view epoch would serve as a view.
  [[nodiscard]] bool gathers_some() const noexcept { return map.parts != 0; }

  static constexpr std::size_t no_run = std::numeric_limits<std::size_t>::max();

 private:
  // The global sequence of an epoch begun with steps of `block` rows: the positions it serves
  // and how its blocks are arranged.
  struct Sequence {
    std::uint64_t positions = 0;
    std::size_t batches = 0;
    bool short_last = false;
  };
  static Sequence sequence_of(const ShardGeometry& dataset, std::uint64_t block) {
    const std::uint64_t total = dataset.total_rows;
    Sequence sequence;
    sequence.batches = static_cast<std::size_t>(
        dataset.remainder == Remainder::drop ? total / block : ceil_div(total, block));
    sequence.positions = dataset.remainder == Remainder::drop ? sequence.batches * block : total;
    sequence.short_last = dataset.remainder != Remainder::drop && total % block != 0;
    return sequence;
  }

  // The order of runs: the geometry's batches, permuted, offset.
  void runs(const ShardGeometry& dataset) {
    if (options.shuffle == Shuffle::batches) {
      // A short last batch stays last (see ShardGeometry::short_last).
      batch_order = Permutation(dataset.shuffled_batches(), options.seed, options.epoch);
      replica = epoch_replica(dataset, options);
      offset = drop_offset(dataset, options) * dataset.rank_parts;
    }
    if (options.shuffle == Shuffle::samples)
      sample_order = Permutation(dataset.order_rows, options.seed, options.epoch);
  }

  // The map of every position of the rank's order, from round `start_round` of the sequence.
  [[nodiscard]] RowMap make_map(const ShardGeometry& dataset, const Sequence& sequence,
                                std::uint64_t start_round) const {
    RowMap row_map;
    row_map.parts = dataset.rank_parts;
    row_map.full_rounds = dataset.part_rows;
    row_map.start_round = start_round;
    row_map.long_parts = dataset.long_parts;
    row_map.part_rows = dataset.part_rows;
    if (options.shuffle == Shuffle::batches) {
      row_map.block_rounds = block_rows / dataset.round_rows();
      row_map.shuffled_blocks = sequence.batches - (sequence.short_last ? 1 : 0);
      row_map.blocks = Permutation(row_map.shuffled_blocks, options.seed, options.epoch);
      row_map.offset_rounds =
          drop_offset(options, dataset.part_rows, sequence.positions / dataset.round_rows());
    }
    if (options.shuffle == Shuffle::samples) {
      if (dataset.long_parts != 0)
        row_map.long_samples = Permutation(dataset.part_rows + 1, options.seed, options.epoch);
      row_map.short_samples = Permutation(dataset.part_rows, options.seed, options.epoch);
    }
    return row_map;
  }

  // The geometry's batch that epoch batch `k` is.
  [[nodiscard]] std::size_t stored_batch(std::size_t k) const noexcept {
    return k < batch_order.size() ? static_cast<std::size_t>(batch_order(k)) : k;
  }
};

}  // namespace resident::detail
