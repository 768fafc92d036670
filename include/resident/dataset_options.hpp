// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// @brief `DatasetOptions` and `Remainder`: how a dataset is cut into batches and how much
/// memory it must leave free.

#include <cstddef>
#include <optional>

namespace resident {

/// @brief What happens to the last rows when the row count is not a multiple of the batch size.
enum class Remainder {
  drop,     ///< Every batch is full; the last `rows % batch_size` rows are not served.
  partial,  ///< The last batch holds the `rows % batch_size` rows left (PyTorch's default).
};

/// @brief Options of a dataset upload; the same options drive `plan()`.
struct DatasetOptions {
  std::size_t batch_size = 256;              ///< Rows per batch; must be positive.
  Remainder remainder = Remainder::partial;  ///< Policy for the last, short batch.
  /// @brief Bytes to leave free in the space after the upload (the model, activations,
  /// workspaces). Unset: the space's `default_reserve_bytes()` (512 MiB on `CudaSpace`,
  /// 256 MiB on a plain `HostSpace`, 0 inside a `HostSpace::with_budget`).
  std::optional<std::size_t> reserve_bytes;
};

}  // namespace resident
