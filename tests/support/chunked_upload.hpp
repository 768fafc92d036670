// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// Test support: uploads cut into small chunks, the byte patterns they copy, and the fixture of
// the typed upload tests (test_upload.cpp, and the progress reports of test_progress.cpp).

#include <cstddef>
#include <cstdint>
#include <vector>

#include "resident/dataset_options.hpp"
#include "support/spaces.hpp"

namespace resident::testing {

constexpr std::size_t kChunk = 4096;

inline std::vector<std::uint8_t> pattern(std::size_t bytes, std::uint8_t seed = 0) {
  std::vector<std::uint8_t> values(bytes);
  for (std::size_t i = 0; i < bytes; ++i)
    values[i] = static_cast<std::uint8_t>((i * 131 + std::size_t{seed} * 7 + (i >> 8)) & 0xff);
  return values;
}

inline DatasetOptions chunked(std::size_t chunk = kChunk) {
  DatasetOptions options;
  options.batch_size = 64;
  options.reserve_bytes = 0;
  options.upload_block_bytes = chunk;
  options.staging_buffers = 3;
  return options;
}

/// Fixture of the typed `Upload` suite (`template <class Space> using Upload =
/// UploadFixture<Space>` in each file of it): a budgeted space (see `budgeted_space`), skipped
/// where the space is not usable. One class for every file of the suite, as gtest requires.
template <class Space>
class UploadFixture : public OverSpaces<Space> {
 protected:
  Space space_ = budgeted_space<Space>();
};

}  // namespace resident::testing
