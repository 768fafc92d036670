// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// Test support: a two-field dataset whose every value says which row it belongs to.

#include <cstddef>
#include <cstdint>
#include <numeric>
#include <vector>

#include "resident/host_tensor.hpp"
#include "support/spaces.hpp"

namespace resident::testing {

/// Features and labels where label r is r and every feature of row r is r as well, so that a
/// batch can be checked from its labels alone and the sum of an epoch's labels is known.
struct LabelledRows {
  LabelledRows(std::size_t rows, std::size_t columns)
      : columns(columns), features(rows * columns), labels(rows) {
    std::iota(labels.begin(), labels.end(), std::int32_t{0});
    for (std::size_t i = 0; i < features.size(); ++i) {
      const std::size_t row = i / columns;
      features[i] = static_cast<float>(row);
    }
  }
  [[nodiscard]] HostTensor<const float> x() const {
    return {features.data(), {labels.size(), columns}};
  }
  [[nodiscard]] HostTensor<const std::int32_t> y() const {
    return {labels.data(), {labels.size()}};
  }
  [[nodiscard]] std::int64_t label_sum() const {
    return std::accumulate(labels.begin(), labels.end(), std::int64_t{0});
  }
  std::size_t columns;
  std::vector<float> features;
  std::vector<std::int32_t> labels;
};

/// The sum of the valid labels (field 1) of every batch of a host epoch: every row once gives
/// `label_sum()`, whatever the order.
template <class Epoch>
std::int64_t epoch_label_sum(Epoch&& epoch) {
  std::int64_t sum = 0;
  for (const auto& [features, labels] : epoch)
    for (std::size_t r = 0; r < labels.valid_rows(); ++r) sum += labels.data()[r];
  return sum;
}

/// The same sum for an epoch of any space: each batch's labels read back through `space` on
/// `stream` (device memory is not readable from the host).
template <class Space, class Epoch>
std::int64_t epoch_label_sum(Epoch&& epoch, const Space& space,
                             typename Space::stream_type stream) {
  std::int64_t sum = 0;
  for (const auto& [features, labels] : epoch) {
    const auto host = read_back(space, stream, labels);
    for (std::size_t r = 0; r < labels.valid_rows(); ++r) sum += host[r];
  }
  return sum;
}

}  // namespace resident::testing
