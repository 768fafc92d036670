// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>

namespace resident::detail {

/// @brief What a gather engine is made with, once per gathering epoch (see
/// `default_space_traits::gather_engine`).
struct GatherSetup {
  unsigned threads = 0;         ///< `DatasetOptions::gather_threads` (0: the engine decides).
  std::size_t batch_bytes = 0;  ///< Bytes of the epoch's largest batch, all fields together.
};

}  // namespace resident::detail
