// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// The gather source of a token dataset: windows of one stored token stream, which overlap
// (window w starts `stride` tokens after window w - 1, and a window's targets are its inputs
// one token on), so a row's start is not a multiple of the row's size and may not be aligned
// to the words the copy kernels read.

#include <cstddef>
#include <cstdint>

#include "resident/config.hpp"
#include "resident/detail/dataset/row_order.hpp"

namespace resident::detail {

/// @brief A gather source: the windows of a stored token stream, row `row` at
/// `base + (row mod windows) * stride` (row ids past the stored windows wrap: a rank that owns
/// no window pads from the stream's first ones).
template <class T>
struct WindowRows {
  using element_type = T;
  const T* base;        ///< Window 0's first element (its inputs, or one on: its targets).
  std::size_t stride;   ///< Elements from one window's start to the next's.
  std::size_t windows;  ///< Windows stored.

  /// Where the row at `place` starts.
  template <class Reach>
  [[nodiscard]] RESIDENT_HOST_DEVICE const T* at(const RowPlace& place,
                                                 const Reach& /*reach*/) const noexcept {
    const std::uint64_t row = place.row;
    return base + (row < windows ? row : row % windows) * stride;
  }
  /// The largest power of two every row start is aligned to, in bytes: what limits the word a
  /// copy kernel may read (the rows' size limits it too).
  [[nodiscard]] std::size_t alignment() const noexcept {
    const std::size_t bits = reinterpret_cast<std::uintptr_t>(base) |  // NOLINT: an address's bits
                             (stride * sizeof(T));
    return bits & (~bits + 1);  // the lowest set bit
  }
  /// The same windows read as `Word`s (see `alignment`: the caller checks that they are aligned).
  template <class Word>
  [[nodiscard]] WindowRows<Word> as() const noexcept {
    return {reinterpret_cast<const Word*>(base),  // NOLINT: the windows' bytes as words
            stride * sizeof(T) / sizeof(Word), windows};
  }
};

}  // namespace resident::detail
