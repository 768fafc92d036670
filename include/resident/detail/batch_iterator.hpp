// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <iterator>

namespace resident::detail {

/// @brief Input iterator over the batches of an epoch-like range (anything with
/// `batch_type` and `batch(k)`): dereferencing asks the range for batch `index()`.
template <class Range>
class BatchIterator {
 public:
  using iterator_category = std::input_iterator_tag;
  using value_type = typename Range::batch_type;
  using difference_type = std::ptrdiff_t;
  using pointer = void;
  using reference = value_type;

  BatchIterator() = default;
  BatchIterator(Range* range, std::size_t k) noexcept : range_(range), k_(k) {}
  [[nodiscard]] value_type operator*() const { return range_->batch(k_); }
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
};

}  // namespace resident::detail
