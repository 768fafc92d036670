// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// @brief The rows of a seeded random split (PyTorch's `random_split`), for the subsets of every
/// dataset kind: `split_lengths` counts the parts' rows, `random_split_rows` deals the rows.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string>
#include <vector>

#include "resident/dataset_options.hpp"
#include "resident/detail/dataset/row_selection.hpp"
#include "resident/detail/expects.hpp"
#include "resident/permutation.hpp"

namespace resident {

/// @brief The rows of parts with `fractions` of `rows` rows, as PyTorch's `random_split` counts
/// them: each part `floor(rows * fraction)`, then the rows left one each to the parts in turn,
/// from the first.
/// @throws InvalidArgument when `fractions` is empty, one is not in `[0, 1]`, or they do not
/// sum to 1 (within 1e-6).
inline std::vector<std::size_t> split_lengths(std::size_t rows,
                                              const std::vector<double>& fractions) {
  RESIDENT_EXPECTS(!fractions.empty(),
                   "split_lengths was given no fractions; give one per part, summing to 1");
  double sum = 0;
  for (std::size_t part = 0; part < fractions.size(); ++part) {
    RESIDENT_EXPECTS(fractions[part] >= 0 && fractions[part] <= 1,
                     "fraction " + std::to_string(part) + " is " + std::to_string(fractions[part]) +
                         "; give fractions in [0, 1], summing to 1");
    sum += fractions[part];
  }
  RESIDENT_EXPECTS(std::abs(sum - 1) <= 1e-6, "the fractions sum to " + std::to_string(sum) +
                                                  "; give fractions that sum to 1");
  std::vector<std::size_t> lengths(fractions.size());
  std::size_t given = 0;
  for (std::size_t part = 0; part < fractions.size(); ++part) {
    const long double share = std::floor(static_cast<long double>(rows) * fractions[part]);
    lengths[part] = share >= static_cast<long double>(rows - given)
                        ? rows - given
                        : static_cast<std::size_t>(share);
    given += lengths[part];
  }
  for (std::size_t part = 0; given < rows; part = (part + 1) % lengths.size(), ++given)
    ++lengths[part];
  return lengths;
}

/// @brief The rows of each part of a seeded random split of `rows` rows into parts of
/// `lengths` rows: part `i` is the next `lengths[i]` rows of the seeded permutation of
/// `[0, rows)` (`Permutation(rows, seed, 0)`), so that the parts are disjoint, cover every
/// row, and are the same on every machine and every run with this seed.
/// @throws InvalidArgument when `lengths` do not sum to `rows`.
inline std::vector<std::vector<std::size_t>> random_split_rows(
    std::size_t rows, const std::vector<std::size_t>& lengths, std::uint64_t seed) {
  std::size_t sum = 0;  // at most `rows`: a length past the rows left ends the sum
  bool over = false;
  for (const std::size_t length : lengths) {
    over = length > rows - sum;
    if (over) break;
    sum += length;
  }
  RESIDENT_EXPECTS(!over && sum == rows,
                   "the parts' lengths sum to " +
                       (over ? "more than " + std::to_string(rows) : std::to_string(sum)) +
                       " rows, but there are " + std::to_string(rows) +
                       "; give lengths that sum to the rows (split_lengths makes them from "
                       "fractions)");
  const Permutation order(rows, seed, 0);
  std::vector<std::vector<std::size_t>> parts(lengths.size());
  std::uint64_t next = 0;
  for (std::size_t part = 0; part < lengths.size(); ++part) {
    parts[part].reserve(lengths[part]);
    for (std::size_t row = 0; row < lengths[part]; ++row)
      parts[part].push_back(static_cast<std::size_t>(order(next++)));
  }
  return parts;
}

namespace detail {

/// @brief `dataset`'s rows in the parts of `random_split_rows`, each a `Part` made of
/// `(dataset, rows, options)`: what every kind's `random_split` returns.
/// @throws what `random_split_rows` and `Part` throw (a dataset moved from is refused, also for
/// no parts); nothing is kept.
template <class Part, class Dataset>
std::vector<Part> split_parts(const Dataset& dataset, const std::vector<std::size_t>& lengths,
                              std::uint64_t seed, const DatasetOptions& options) {
  check_not_moved_from(dataset.moved_from());  // also where no part has a row
  const std::vector<std::vector<std::size_t>> rows =
      random_split_rows(dataset.num_rows(), lengths, seed);
  std::vector<Part> parts;
  parts.reserve(rows.size());
  std::transform(
      rows.begin(), rows.end(), std::back_inserter(parts),
      [&](const std::vector<std::size_t>& part) { return Part(dataset, part, options); });
  return parts;
}

}  // namespace detail

}  // namespace resident
