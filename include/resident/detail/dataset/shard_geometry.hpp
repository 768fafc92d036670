// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>

#include "resident/dataset_options.hpp"
#include "resident/detail/checked_math.hpp"
#include "resident/detail/dataset/part_interleave.hpp"
#include "resident/detail/expects.hpp"
#include "resident/shard.hpp"

namespace resident::detail {

/// Rows `[first, first + rows)` of something divided into parts.
struct RowRange {
  std::size_t first = 0;
  std::size_t rows = 0;
};

/// Part `index` of `rows` rows cut into `parts` contiguous parts that differ by at most one
/// row, the longer ones first.
constexpr RowRange balanced_part(std::size_t rows, std::size_t parts, std::size_t index) noexcept {
  const std::size_t base = rows / parts;
  const std::size_t longer = rows % parts;
  return {index * base + std::min(index, longer), base + (index < longer ? 1 : 0)};
}

/// One batch of a rank: epoch positions `[first, first + rows)` of the order it is cut from
/// (past the order's end, positions wrap to its start: the padding), of which the first
/// `valid` are the rank's own rows.
struct BatchSlice {
  std::size_t first = 0;
  std::size_t rows = 0;
  std::size_t valid = 0;
};

/// @brief How one rank's epochs are cut from the rows its dataset stores. The batch count and
/// the rows of every batch are the same on every rank (so collectives never wait on a rank
/// that ran out); only which positions are real differs.
///
/// Every rank serves `batches` batches of `batch_size` rows, but for the last one, which has
/// `tail_rows`: under `drop` `floor(n / (world * b))` full batches, under `partial` and `pad`
/// `ceil(n / (world * b))`, the last holding `ceil(n / world) - (batches - 1) * b` rows
/// (`partial`) or `b` (`pad`). The order the batches are cut from runs over `order_rows`
/// rows: the rank's part (partitioned, one replica) or all `n` rows dealt out to `replicas` ranks
/// batch by batch (replicated). With one rank this is the plain dataset's batching.
struct ShardGeometry {
  std::size_t order_rows = 0;    ///< Rows of the epoch order (stored rows before padding).
  std::size_t source_first = 0;  ///< First row of the caller's data that is stored.
  std::size_t stored_rows = 0;   ///< Rows stored: `order_rows` and the padding rows after them.
  std::size_t batch_size = 1;    ///< Rows of every batch but the last.
  std::size_t batches = 0;       ///< Batches per epoch, on every rank.
  std::size_t tail_rows = 0;     ///< Rows of the last batch.
  std::size_t replicas = 1;      ///< Ranks that share the order (replicated: the world size).
  std::size_t replica = 0;       ///< This rank's replica.
  /// Parts of the rows (`DatasetOptions::parts`; 1 when replicated: a round is one row).
  std::size_t parts = 1;
  std::size_t rank_parts = 1;  ///< The parts this rank stores (consecutive ones).
  std::size_t part_rows = 0;   ///< Rows of a shorter part (the longer ones have one more).
  std::size_t long_parts = 0;  ///< This rank's parts with a row more: its first ones.
  std::size_t total_rows = 0;  ///< Rows of the dataset, every rank's.
  Remainder remainder = Remainder::partial;  ///< The policy the batches were cut by.
  Shard shard{};                             ///< This rank, and the world size.
  Sharding sharding = Sharding::partitioned;
  bool pad_from_source_start = false;  ///< No own rows: padding repeats the caller's first rows.
  /// The last batch is short or padded on some rank (decided from figures all ranks share):
  /// every shuffled epoch serves it last, so that all ranks' steps have the same sizes
  /// whatever else (chunking, preloading or streaming) differs between them.
  bool short_last = false;

  /// Rows of batch `j`.
  [[nodiscard]] constexpr std::size_t rows_of(std::size_t j) const noexcept {
    return j + 1 == batches ? tail_rows : batch_size;
  }
  /// Rows of the largest batch (0 without batches): what a ring slot must hold. A batch size
  /// above the rows gives one batch of the rows there are (but under `pad`).
  [[nodiscard]] constexpr std::size_t largest_batch_rows() const noexcept {
    return batches > 1 ? batch_size : tail_rows;
  }
  /// Rows of all batches of one replica together (at most the stored rows).
  [[nodiscard]] constexpr std::size_t served_rows() const noexcept {
    return batches == 0 ? 0 : (batches - 1) * batch_size + tail_rows;
  }
  /// Batches a shuffle permutes: all but a `short_last` batch, which stays last.
  [[nodiscard]] constexpr std::size_t shuffled_batches() const noexcept {
    return batches - (short_last ? 1 : 0);
  }
  /// Rows of one step of the job, every rank's batch together (but a short last step's); at
  /// most `SIZE_MAX`, which a batch size above the rows may reach: one step of every row.
  [[nodiscard]] constexpr std::size_t step_rows() const noexcept {
    const std::size_t ranks = parts == 1 ? replicas : parts / rank_parts;
    const std::size_t most = static_cast<std::size_t>(-1);
    return batch_size > most / ranks ? most : batch_size * ranks;
  }
  /// Rows of one round of the global sequence: one of every part.
  [[nodiscard]] constexpr std::size_t round_rows() const noexcept { return parts; }

  /// @brief Batch `j` (< `batches`) of replica `replica_index`. Every step but a short last one
  /// gives each replica `batch_size` consecutive positions; a short last step (the `partial` or
  /// `pad` tail) is split among the replicas as evenly as rows allow.
  [[nodiscard]] constexpr BatchSlice slice(std::size_t j,
                                           std::size_t replica_index) const noexcept {
    const std::size_t step = replicas * batch_size;
    const std::size_t step_first = j * step;
    const std::size_t left = order_rows > step_first ? order_rows - step_first : 0;
    if (left >= step) return {step_first + replica_index * batch_size, batch_size, batch_size};
    const RowRange part = balanced_part(left, replicas, replica_index);
    return {step_first + part.first, rows_of(j), std::min(part.rows, rows_of(j))};
  }
};

/// @brief The most parts a partitioned dataset's rows are cut into: what an `EpochState`
/// records in its 32 bits.
inline constexpr std::size_t max_parts = 0xffffffffU;

/// @brief The parts `options` cuts a partitioned dataset's rows into (1 when replicated).
/// @throws InvalidArgument when the world size does not divide them, or the parts a rank
/// stores do not divide the batch size.
inline std::size_t parts_of(const DatasetOptions& options) {
  if (options.sharding == Sharding::replicated) return 1;
  const auto world = static_cast<std::size_t>(options.shard.world_size);
  const std::size_t parts = options.parts == 0 ? world : options.parts;
  RESIDENT_EXPECTS(parts <= max_parts,
                   "DatasetOptions::parts is " + std::to_string(parts) + ", above the " +
                       std::to_string(max_parts) +
                       " an EpochState records; use fewer parts (a multiple of every world size "
                       "the run will have)");
  RESIDENT_EXPECTS(parts % world == 0,
                   "DatasetOptions::parts is " + std::to_string(parts) + ", which the world size " +
                       std::to_string(world) +
                       " does not divide: each rank stores parts / world_size of the parts; "
                       "use a multiple of every world size the run will have (0: the world "
                       "size), or a world size that divides the parts");
  const std::size_t rank_parts = parts / world;
  RESIDENT_EXPECTS(options.batch_size % rank_parts == 0,
                   "DatasetOptions::batch_size " + std::to_string(options.batch_size) +
                       " is not a multiple of the " + std::to_string(rank_parts) +
                       " parts each rank stores (" + std::to_string(parts) + " parts over " +
                       std::to_string(world) +
                       " ranks): a step takes whole rounds, one row of every part; use a "
                       "batch size that is a multiple of " +
                       std::to_string(rank_parts) + ", or fewer parts");
  return parts;
}

/// @brief The geometry of rank `options.shard.rank` for a dataset of `rows` rows.
/// @throws InvalidArgument for an invalid shard, a batch size of 0, or parts that the world
/// size or the batch size do not fit (`parts_of`).
inline ShardGeometry make_geometry(std::size_t rows, const DatasetOptions& options) {
  RESIDENT_EXPECTS(options.batch_size > 0,
                   "DatasetOptions::batch_size is 0; set it to the rows per batch (e.g. 256)");
  validate(options.shard);
  const auto world = static_cast<std::size_t>(options.shard.world_size);
  const auto rank = static_cast<std::size_t>(options.shard.rank);
  const std::size_t b = options.batch_size;
  ShardGeometry geometry;
  geometry.batch_size = b;
  geometry.total_rows = rows;
  geometry.remainder = options.remainder;
  geometry.shard = options.shard;
  geometry.sharding = options.sharding;
  geometry.parts = parts_of(options);
  const bool replicated = options.sharding == Sharding::replicated;
  geometry.rank_parts = replicated ? 1 : geometry.parts / world;
  // The rank that stores the most rows: rank 0, whose parts are the first (the longer ones).
  const std::size_t longest_part = replicated
                                       ? ceil_div(rows, world)
                                       : geometry.rank_parts * (rows / geometry.parts) +
                                             std::min(geometry.rank_parts, rows % geometry.parts);
  // floor(floor(n / w) / b) == floor(n / (w b)) and likewise for ceil: no product to overflow.
  geometry.batches =
      options.remainder == Remainder::drop ? rows / world / b : ceil_div(longest_part, b);
  geometry.tail_rows = options.remainder == Remainder::partial && geometry.batches != 0
                           ? longest_part - (geometry.batches - 1) * b
                           : b;
  if (geometry.batches == 0) geometry.tail_rows = 0;
  // Every rank's last batch is full exactly when n is a multiple of world * b, in both modes.
  geometry.short_last = options.remainder != Remainder::drop && geometry.batches != 0 &&
                        (rows % world != 0 || rows / world % b != 0);

  if (replicated) {
    geometry.order_rows = rows;
    geometry.replicas = world;
    geometry.replica = rank;
    geometry.part_rows = rows;
  } else {
    const std::size_t first_part = rank * geometry.rank_parts;
    const RowRange first = balanced_part(rows, geometry.parts, first_part);
    const std::size_t end =
        balanced_part(rows, geometry.parts, first_part + geometry.rank_parts).first;
    geometry.order_rows = end - first.first;
    geometry.source_first = first.first;
    geometry.pad_from_source_start = geometry.order_rows == 0;
    geometry.part_rows = rows / geometry.parts;
    const std::size_t longer = rows % geometry.parts;
    geometry.long_parts =
        longer > first_part ? std::min(geometry.rank_parts, longer - first_part) : 0;
  }
  // Enough rows that every batch of every replica is one contiguous view of the stored rows.
  std::size_t end = geometry.order_rows;
  if (geometry.batches != 0) {
    const BatchSlice last = geometry.slice(geometry.batches - 1, geometry.replicas - 1);
    end = std::max(end, checked_add(last.first, last.rows, "padded row count"));
  }
  geometry.stored_rows = end;
  return geometry;
}

/// @brief The geometry `like` was made by, for a dataset of `rows` rows: how the rest of an
/// epoch is cut when it is resumed on another world size or batch size.
inline ShardGeometry remake_geometry(const ShardGeometry& like, std::size_t rows) {
  DatasetOptions options;
  options.batch_size = like.batch_size;
  options.remainder = like.remainder;
  options.shard = like.shard;
  options.sharding = like.sharding;
  options.parts = like.parts;
  return make_geometry(rows, options);
}

/// @brief The source rows a rank's streaming passes read, as `ChunkLoader::source_run` maps
/// order positions to them: the rank's part, whose start its padding repeats (every row when
/// replicated), or, for a rank with no rows of its own, the first rows of all, which its
/// padding repeats. A `DeviceDataset` stores the same rows.
inline RowRange streamed_source_rows(const ShardGeometry& geometry,
                                     std::size_t source_rows) noexcept {
  if (geometry.pad_from_source_start) return {0, std::min(source_rows, geometry.stored_rows)};
  return {geometry.source_first, geometry.order_rows};
}

/// @brief The interleave of the rows of a dataset cut by `geometry` (see `PartInterleave`).
inline PartInterleave part_interleave(const ShardGeometry& geometry) noexcept {
  const std::uint64_t parts = geometry.parts == 0 ? 1 : geometry.parts;
  return {parts, geometry.total_rows / parts, geometry.total_rows % parts};
}

}  // namespace resident::detail
