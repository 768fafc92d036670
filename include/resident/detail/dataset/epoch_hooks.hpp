// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// What `Epoch` asks of the dataset it serves, its "hooks" (public `impl_` members, left out of
// the reference): `impl_core()`, `impl_rings()`, `impl_row_shapes()`; `impl_pass_type` and
// `impl_make_pass(borrower, options, gathers)`, the epoch's order (and, on a stream, the chunk
// slots lent to it); `impl_views(options)`, whether its batches are views; `impl_view(pass, k)`,
// a view batch; `impl_gathered` and `impl_gather(pass, k)`, a gathered batch's row order and
// slice; `impl_rows<Field>(pass, gathered)`, where its rows lie; `impl_holding`, what holds the
// memory a refusal names. The hooks below have the same answer for most datasets: an owner
// inherits them and writes only those it answers otherwise.

#include <cstddef>

namespace resident::detail {

/// @brief The hooks an owner need not write (see the file comment).
struct EpochHookDefaults {
  /// @brief Whether a view epoch gathers some batches (a token stream's padded batch): no.
  template <class Pass>
  [[nodiscard]] static constexpr bool impl_gathers_some(const Pass& /*pass*/) noexcept {
    return false;
  }
  /// @brief Whether a view epoch gathers batch `k`: no.
  template <class Pass>
  [[nodiscard]] static constexpr bool impl_gathers_batch(const Pass& /*pass*/,
                                                         std::size_t /*k*/) noexcept {
    return false;
  }
  /// @brief Orders `consumer` after view batch `k`: nothing to order, the data having been
  /// uploaded before the dataset was returned.
  template <class Pass, class Stream>
  static constexpr void impl_wait_view(const Pass& /*pass*/, std::size_t /*k*/,
                                       Stream /*consumer*/) noexcept {}
  /// @brief Lets view batch `k`'s memory be written once `consumer` is done: never written.
  template <class Pass, class Stream>
  static constexpr void impl_release_view(const Pass& /*pass*/, std::size_t /*k*/,
                                          Stream /*consumer*/) noexcept {}
};

}  // namespace resident::detail
