// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// The former name of a renamed option or figure, kept so that code written against it still
// compiles. A data member marked [[deprecated]] would warn wherever its struct is made or
// copied (GCC warns at a user's `StreamOptions{0, 4, 0}`, whose last members take their
// defaults there); this type warns only where the former name itself is used.

#include <optional>

// The text of every former name's warning (clang names neither the member nor its type).
#define RESIDENT_FORMER_NAME_ADVICE \
  "a former option name, kept for old code: use its new name (docs/api.md, \"Former names\")"

namespace resident::detail {

/// @brief A former name of type `T`, whose option defaults to `Default`; `Renamed` is a tag
/// whose name says the new name (it appears in the warning). Assigning it (or initialising it
/// by name or position) marks it set, and the library then takes its value over the new
/// name's (`held()`). Reading it gives what was set, or `Default` where nothing was: old code
/// that reads, changes and writes back the former name sees the option as it was. What a
/// former name cannot be is a `T` itself: taking its address as a `T*`, or deducing a template
/// argument from it (`std::max(o.chunk_bytes, n)`), needs the new name.
template <class T, class Renamed, T Default = T{}>
class FormerName {
 public:
  constexpr FormerName() noexcept = default;

  /// @brief Sets the former name in an initialiser (`StreamOptions{.ring_chunks = 8}`);
  /// implicit, as the `T` it stands for is.
  // cppcheck-suppress noExplicitConstructor ; initialised from a `T`, as the member it replaces
  [[deprecated(RESIDENT_FORMER_NAME_ADVICE)]] constexpr FormerName(T value) noexcept
      : value_(value) {}

  /// @brief Sets the former name, which then wins over the new one.
  [[deprecated(RESIDENT_FORMER_NAME_ADVICE)]] constexpr FormerName& operator=(T value) noexcept {
    value_ = value;
    return *this;
  }
  /// @brief What was set (or held by the library), or `Default`.
  [[deprecated(RESIDENT_FORMER_NAME_ADVICE)]] constexpr operator T() const noexcept {
    return value_.value_or(Default);
  }
  /// @brief Changes the value read (see `operator T`) and sets the former name.
  [[deprecated(RESIDENT_FORMER_NAME_ADVICE)]] constexpr FormerName& operator+=(T value) noexcept {
    value_ = value_.value_or(Default) + value;
    return *this;
  }
  /// @brief Changes the value read (see `operator T`) and sets the former name.
  [[deprecated(RESIDENT_FORMER_NAME_ADVICE)]] constexpr FormerName& operator-=(T value) noexcept {
    value_ = value_.value_or(Default) - value;
    return *this;
  }
  /// @brief Changes the value read (see `operator T`) and sets the former name.
  [[deprecated(RESIDENT_FORMER_NAME_ADVICE)]] constexpr FormerName& operator*=(T value) noexcept {
    value_ = value_.value_or(Default) * value;
    return *this;
  }
  /// @brief Changes the value read (see `operator T`) and sets the former name.
  [[deprecated(RESIDENT_FORMER_NAME_ADVICE)]] constexpr FormerName& operator/=(T value) noexcept {
    value_ = value_.value_or(Default) / value;
    return *this;
  }
  /// @brief Adds one to the value read (see `operator T`) and sets the former name.
  [[deprecated(RESIDENT_FORMER_NAME_ADVICE)]] constexpr FormerName& operator++() noexcept {
    value_ = value_.value_or(Default) + 1;
    return *this;
  }
  /// @brief Takes one from the value read (see `operator T`) and sets the former name.
  [[deprecated(RESIDENT_FORMER_NAME_ADVICE)]] constexpr FormerName& operator--() noexcept {
    value_ = value_.value_or(Default) - 1;
    return *this;
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

#undef RESIDENT_FORMER_NAME_ADVICE
