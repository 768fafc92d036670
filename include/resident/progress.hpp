// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// @brief `Progress`: what an upload's progress callback receives.

#include <cstddef>
#include <functional>

namespace resident {

/// @brief How far an upload has come, reported once per upload block on the constructing thread.
/// Successive reports are monotonic; the last one has `bytes_done == bytes_total` and is made
/// once the data is in the space (after the final synchronisation). A stream's deflated
/// members, inflated in the background, are reported after each step instead, one call at a
/// time, on an inflating thread.
struct Progress {
  std::size_t bytes_done = 0;    ///< Bytes copied (or handed to the copy engine) so far.
  std::size_t bytes_total = 0;   ///< Bytes of the dataset's allocation.
  double elapsed_seconds = 0.0;  ///< Since the upload started.

  /// @brief `bytes_done / bytes_total`, 1 for an empty upload.
  [[nodiscard]] double fraction() const noexcept {
    return bytes_total == 0 ? 1.0
                            : static_cast<double>(bytes_done) / static_cast<double>(bytes_total);
  }
};

/// @brief Progress callback: return `true` to go on, `false` to cancel the upload (the
/// constructor then throws `resident::Cancelled`). An exception it throws propagates out of
/// the constructor after the same clean-up.
using ProgressCallback = std::function<bool(const Progress&)>;

}  // namespace resident
