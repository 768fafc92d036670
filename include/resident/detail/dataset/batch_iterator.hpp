// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <iterator>
#include <utility>

#include "resident/detail/dataset/data_token.hpp"
#include "resident/error.hpp"

namespace resident::detail {

/// @brief Input iterator over the batches of an epoch-like range (anything with
/// `batch_type` and `batch(k)`): dereferencing asks the range for batch `index()`. It holds a
/// lease of the range's own token, so that dereferencing an iterator whose epoch was
/// destroyed or moved (`auto it = ds.epoch().begin();` keeps a temporary's address) throws
/// instead of reading a dead object.
template <class Range>
class BatchIterator {
 public:
  using iterator_category = std::input_iterator_tag;
  using value_type = typename Range::batch_type;
  using difference_type = std::ptrdiff_t;
  using pointer = void;
  using reference = value_type;

  BatchIterator() = default;
  BatchIterator(Range* range, std::size_t k, DataLease lease) noexcept
      : range_(range), k_(k), lease_(std::move(lease)) {}
  /// @throws Error when the epoch was destroyed or moved; what the epoch's `batch(k)` throws.
  [[nodiscard]] value_type operator*() const {
    if (!lease_.valid())
      throw Error(
          "resident: this iterator's epoch was destroyed or moved, so it has no batches to "
          "give; keep the epoch alive while iterating (in a variable, or as the range of a "
          "for loop: `for (auto batch : ds.epoch(...))`)");
    return range_->batch(k_);
  }
  BatchIterator& operator++() noexcept {
    ++k_;
    return *this;
  }
  BatchIterator operator++(int) noexcept {
    BatchIterator before = *this;
    ++k_;
    return before;
  }
  [[nodiscard]] std::size_t index() const noexcept { return k_; }  ///< Batch number.
  friend bool operator==(const BatchIterator& a, const BatchIterator& b) noexcept {
    return a.k_ == b.k_;
  }
  friend bool operator!=(const BatchIterator& a, const BatchIterator& b) noexcept {
    return a.k_ != b.k_;
  }

 private:
  Range* range_ = nullptr;
  std::size_t k_ = 0;
  DataLease lease_;  // of the range's own token: ends when the range is destroyed or moved
};

}  // namespace resident::detail
