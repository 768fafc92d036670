// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// The order of one epoch as a preloaded dataset serves it: which batch of the geometry comes
// at each place, which replica a replicated rank takes, the sample permutation, and where a
// dropped remainder falls. A pure function of the geometry and the epoch's options, so that a
// stream in whole-epoch order serves the same batches, and every rank the same steps.

#include <cstddef>
#include <cstdint>

#include "resident/detail/dataset/row_order.hpp"
#include "resident/detail/dataset/shard_geometry.hpp"
#include "resident/epoch_options.hpp"
#include "resident/permutation.hpp"

namespace resident::detail {

/// @brief The replica index a replicated rank takes in a shuffled epoch: ranks trade indices each
/// epoch (a permutation of their own key stream), so that no rank keeps the same rows.
inline std::size_t epoch_replica(const ShardGeometry& geometry, const EpochOptions& options) {
  constexpr std::uint64_t replica_key =
      0x6c616e6573ULL;  // the bytes of "lanes": every order as before
  if (geometry.replicas <= 1) return geometry.replica;
  return static_cast<std::size_t>(Permutation(geometry.replicas, mix64(options.seed) ^ replica_key,
                                              options.epoch)(geometry.replica));
}

/// @brief Where a shuffled epoch under `Remainder::drop` starts its batches among the rows of
/// its order: an offset in `[0, dropped]`, seeded and advancing by one each epoch, so that the
/// rows a batch grid leaves out change every epoch and every row is served within any
/// `dropped + 1` consecutive epochs (the zero-copy shuffles cut consecutive rows;
/// `Shuffle::samples` of a preloaded dataset permutes them all and needs none). 0 when no row
/// is left out, and under `Shuffle::none`, whose batches are the dataset's `batch(i)`.
inline std::size_t drop_offset(const ShardGeometry& geometry, const EpochOptions& options) {
  if (options.shuffle == Shuffle::none || geometry.batches == 0) return 0;
  const std::size_t served = geometry.batches * geometry.replicas * geometry.batch_size;
  if (geometry.order_rows <= served) return 0;
  constexpr std::uint64_t drop_key = 0x64726f70ULL;  // "drop": its own key stream
  const std::uint64_t start = mix64(options.seed ^ drop_key) % (geometry.order_rows - served + 1);
  return static_cast<std::size_t>((start + options.epoch % (geometry.order_rows - served + 1)) %
                                  (geometry.order_rows - served + 1));
}

/// @brief One epoch's order over a dataset's geometry (see the file comment).
struct EpochOrder {
  EpochOptions options{};
  Permutation batch_order;   ///< `Shuffle::batches`: over the shuffled batches.
  Permutation sample_order;  ///< `Shuffle::samples`: over the order's rows.
  std::size_t replica = 0;   ///< This rank's replica index (traded each epoch).
  std::size_t offset = 0;    ///< `drop_offset` of the zero-copy shuffles.

  EpochOrder() = default;
  EpochOrder(const ShardGeometry& geometry, const EpochOptions& epoch_options)
      : options(epoch_options), replica(geometry.replica) {
    if (options.shuffle == Shuffle::batches) {
      // A short last batch stays last (see ShardGeometry::short_last).
      batch_order = Permutation(geometry.shuffled_batches(), options.seed, options.epoch);
      replica = epoch_replica(geometry, options);
      offset = drop_offset(geometry, options);
    }
    if (options.shuffle == Shuffle::samples)
      sample_order = Permutation(geometry.order_rows, options.seed, options.epoch);
  }

  /// The geometry's batch that epoch batch `k` is.
  [[nodiscard]] std::size_t stored_batch(std::size_t k) const noexcept {
    return k < batch_order.size() ? static_cast<std::size_t>(batch_order(k)) : k;
  }
  /// Epoch batch `k`'s positions in the order, and how many are real.
  [[nodiscard]] BatchSlice slice(const ShardGeometry& geometry, std::size_t k) const noexcept {
    BatchSlice slice = geometry.slice(stored_batch(k), replica);
    slice.first += offset;
    return slice;
  }
  /// The stored rows of epoch batch `k`, position by position.
  [[nodiscard]] RowOrder rows(const ShardGeometry& geometry, std::size_t k) const noexcept {
    return {sample_order, geometry.order_rows, slice(geometry, k).first};
  }
};

}  // namespace resident::detail
