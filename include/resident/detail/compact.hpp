// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <string>
#include <type_traits>

namespace resident::detail {

/// What the planner knows of a field's element type: its size, its name, and the smaller type
/// it could be stored as.
struct ElementKind {
  std::size_t bytes = 0;          ///< `sizeof` the stored type.
  const char* name = "";          ///< "float32", "int64", ... ("N-byte type" when unknown).
  std::size_t compact_bytes = 0;  ///< Bytes of the compact type (== `bytes`: none smaller).
  const char* compact_name = "";  ///< The compact type's name.
};

/// @brief The element kind of `T`. Floating types of 4 or 8 bytes compact to bfloat16 (the
/// range of float32 at half the bytes; `Normalize` widens it back per batch); 64-bit integers
/// compact to their 32-bit type (the caller must know the values fit). Everything else is
/// already compact as far as a plan that reads no element can tell.
template <class T>
constexpr ElementKind element_kind() noexcept {
  using U = std::remove_cv_t<T>;
  ElementKind kind{sizeof(U), "", sizeof(U), ""};
  if constexpr (std::is_same_v<U, float>) {
    kind.name = "float32";
  } else if constexpr (std::is_same_v<U, double>) {
    kind.name = "float64";
  } else if constexpr (std::is_same_v<U, bool>) {
    kind.name = "bool";
  } else if constexpr (std::is_integral_v<U>) {
    constexpr const char* signed_names[] = {"int8", "int16", "", "int32", "", "", "", "int64"};
    constexpr const char* unsigned_names[] = {"uint8", "uint16", "", "uint32",
                                              "",      "",       "", "uint64"};
    kind.name =
        sizeof(U) <= 8 ? (std::is_signed_v<U> ? signed_names : unsigned_names)[sizeof(U) - 1] : "";
    if (sizeof(U) == 8) {
      kind.compact_bytes = 4;
      kind.compact_name = std::is_signed_v<U> ? "int32" : "uint32";
    }
  }
  if constexpr (std::is_floating_point_v<U>) {
    if (sizeof(U) >= 4) {
      kind.compact_bytes = 2;
      kind.compact_name = "bfloat16";
    }
  }
  return kind;
}

/// "N-byte type" for element types without a name of their own (half, bfloat16, structs).
inline std::string element_name(const ElementKind& kind) {
  return *kind.name != '\0' ? std::string(kind.name) : std::to_string(kind.bytes) + "-byte type";
}

}  // namespace resident::detail
