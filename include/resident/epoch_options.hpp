// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// @brief `EpochOptions` and `Shuffle`: which epoch, in which order; the same for every
/// dataset kind and every space.

#include <cstdint>

namespace resident {

/// @brief How an epoch orders the data.
enum class Shuffle {
  none,  ///< Batches in order; zero-copy.
  /// A seeded permutation of the batch order; zero-copy. A last batch that is short (or
  /// padded) on some rank stays last, so that every rank's steps have the same sizes.
  batches,
  /// A seeded permutation of all rows; each batch is gathered into the epoch's ring (one
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

}  // namespace resident
