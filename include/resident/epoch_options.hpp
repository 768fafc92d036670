// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// @brief `EpochOptions` and `Shuffle`: which epoch, in which order; the same for every
/// dataset kind and every space.

#include <cstddef>
#include <cstdint>

#include "resident/detail/shard_geometry.hpp"
#include "resident/permutation.hpp"

namespace resident {

/// @brief How an epoch orders the data.
enum class Shuffle {
  none,  ///< Batches in order; zero-copy.
  /// A seeded permutation of the batch order; zero-copy. A last batch that is short (or
  /// padded) on some rank stays last, so that every rank's steps have the same sizes.
  batches,
  /// A seeded permutation of all rows; each batch is gathered into the dataset's ring (one
  /// kernel per field on `CudaSpace`, the copy threads on `HostSpace`).
  samples,
};

/// @brief Which epoch, in which order. The same `seed`, `epoch` and dataset give the same
/// batches on every space and every run; pass the epoch number explicitly (no hidden state).
struct EpochOptions {
  std::uint64_t seed = 0;           ///< Key of the shuffle.
  std::uint64_t epoch = 0;          ///< Epoch number: a new order for each.
  Shuffle shuffle = Shuffle::none;  ///< What is shuffled.
};

namespace detail {

/// @brief The lane a replicated rank takes in a shuffled epoch: ranks trade lanes each epoch
/// (a permutation of their own key stream), so that no rank keeps the same rows.
inline std::size_t epoch_lane(const ShardGeometry& geometry, const EpochOptions& options) {
  constexpr std::uint64_t lane_key = 0x6c616e6573ULL;  // "lanes"
  if (geometry.lanes <= 1) return geometry.lane;
  return static_cast<std::size_t>(
      Permutation(geometry.lanes, mix64(options.seed) ^ lane_key, options.epoch)(geometry.lane));
}

}  // namespace detail

}  // namespace resident
