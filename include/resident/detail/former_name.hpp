// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// The former name of a renamed option or figure, kept so that code written against it still
// compiles. A data member marked [[deprecated]] would warn wherever its struct is made or
// copied (GCC warns at a user's `StreamOptions{0, 4, 0}`, whose last members take their
// defaults there); this type warns only where the former name itself is used: assigned, or
// read as a number.

#include <optional>

namespace resident::detail {

/// @brief A former name of type `T`; `Renamed` is a tag whose name says the new one (it
/// appears in the warning). Assigning it marks it set, and the library then takes its value
/// over the new name's (`held()`); reading it gives that value, or `T{}` where it was never set.
template <class T, class Renamed>
class FormerName {
 public:
  constexpr FormerName() noexcept = default;

  /// @brief Sets the former name, which then wins over the new one.
  [[deprecated("a renamed option: set the new name that this type's tag names")]]  //
  constexpr FormerName&
  operator=(T value) noexcept {
    value_ = value;
    return *this;
  }
  /// @brief The value set (or held by the library), `T{}` where none was.
  [[deprecated("a renamed figure: read the new name that this type's tag names")]]  //
  constexpr
  operator T() const noexcept {
    return value_.value_or(T{});
  }

  /// @brief The library's view: the value, where one was set or held.
  [[nodiscard]] constexpr const std::optional<T>& held() const noexcept { return value_; }
  /// @brief The library's write: a figure reported under the former name too.
  constexpr void hold(T value) noexcept { value_ = value; }

 private:
  std::optional<T> value_;
};

/// Tags: the former name and the new one.
struct chunk_bytes_is_now_upload_block_bytes {};
struct ring_chunks_is_now_chunk_slots {};
struct stream_ring_bytes_is_now_stream_slots_bytes {};

}  // namespace resident::detail
