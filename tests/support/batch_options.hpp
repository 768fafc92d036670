// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// The options the tests of the host pipeline start from: a batch size and a remainder policy,
// and no reserve, so that a budget holds exactly what a test gives it.

#include <cstddef>

#include "resident/dataset_options.hpp"

namespace resident::testing {

inline DatasetOptions batch_options(std::size_t batch, Remainder remainder) {
  DatasetOptions options;
  options.batch_size = batch;
  options.remainder = remainder;
  options.reserve_bytes = 0;
  return options;
}

}  // namespace resident::testing
