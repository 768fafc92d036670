// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>

#include "resident/dataset_options.hpp"
#include "resident/detail/checked_math.hpp"
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

  /// @brief Batch `j` (< `batches`) of replica `replica_index`. Every round but a short last one
  /// gives each replica `batch_size` consecutive positions; a short last round (the `partial` or
  /// `pad` tail) is split among the replicas as evenly as rows allow.
  [[nodiscard]] constexpr BatchSlice slice(std::size_t j,
                                           std::size_t replica_index) const noexcept {
    const std::size_t round_rows = replicas * batch_size;
    const std::size_t round_first = j * round_rows;
    const std::size_t left = order_rows > round_first ? order_rows - round_first : 0;
    if (left >= round_rows)
      return {round_first + replica_index * batch_size, batch_size, batch_size};
    const RowRange part = balanced_part(left, replicas, replica_index);
    return {round_first + part.first, rows_of(j), std::min(part.rows, rows_of(j))};
  }
};

/// @brief The geometry of rank `options.shard.rank` for a dataset of `rows` rows.
/// @throws InvalidArgument for an invalid shard or a batch size of 0.
inline ShardGeometry make_geometry(std::size_t rows, const DatasetOptions& options) {
  RESIDENT_EXPECTS(options.batch_size > 0,
                   "DatasetOptions::batch_size is 0; set it to the rows per batch (e.g. 256)");
  validate(options.shard);
  const auto world = static_cast<std::size_t>(options.shard.world_size);
  const auto rank = static_cast<std::size_t>(options.shard.rank);
  const std::size_t b = options.batch_size;
  ShardGeometry geometry;
  geometry.batch_size = b;
  const std::size_t longest_part = ceil_div(rows, world);
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

  if (options.sharding == Sharding::replicated) {
    geometry.order_rows = rows;
    geometry.replicas = world;
    geometry.replica = rank;
  } else {
    const RowRange part = balanced_part(rows, world, rank);
    geometry.order_rows = part.rows;
    geometry.source_first = part.first;
    geometry.pad_from_source_start = part.rows == 0;
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

/// @brief The source rows a rank's streaming passes read, as `ChunkLoader::source_run` maps
/// order positions to them: the rank's part, whose start its padding repeats (every row when
/// replicated), or, for a rank with no rows of its own, the first rows of all, which its
/// padding repeats. A `DeviceDataset` stores the same rows.
inline RowRange streamed_source_rows(const ShardGeometry& geometry,
                                     std::size_t source_rows) noexcept {
  if (geometry.pad_from_source_start) return {0, std::min(source_rows, geometry.stored_rows)};
  return {geometry.source_first, geometry.order_rows};
}

}  // namespace resident::detail
