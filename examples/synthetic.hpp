// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// The examples' embedded synthetic data: a 10-class problem, reproducible on every platform.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "resident/permutation.hpp"

namespace examples {

constexpr std::size_t features_per_row = 64;
constexpr std::size_t classes = 10;

struct Synthetic {
  std::vector<float> features;
  std::vector<std::int32_t> labels;
};

// In [-1, 1), from a reproducible hash (SplitMix64): the same data everywhere.
inline float uniform(std::uint64_t key) {
  return static_cast<float>(resident::detail::mix64(key) >> 40) / static_cast<float>(1 << 23) -
         1.0f;
}

// Class c has its centre at +2.5 on feature c and 0 elsewhere; each sample adds noise.
inline Synthetic make_synthetic(std::size_t rows) {
  Synthetic data;
  data.features.resize(rows * features_per_row);
  data.labels.resize(rows);
  for (std::size_t row = 0; row < rows; ++row) {
    const auto label = static_cast<std::int32_t>(resident::detail::mix64(row) % classes);
    data.labels[row] = label;
    for (std::size_t f = 0; f < features_per_row; ++f) {
      const float centre = f == static_cast<std::size_t>(label) ? 2.5f : 0.0f;
      data.features[row * features_per_row + f] = centre + uniform(row * features_per_row + f);
    }
  }
  return data;
}

}  // namespace examples
