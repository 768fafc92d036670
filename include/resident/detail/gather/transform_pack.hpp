// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// The transforms an `epoch(options, transforms...)` call names, sorted into the epoch's two
// kinds (a conversion, an augmentation; at most one of each, in either order), so that every
// dataset has one variadic `epoch` instead of an overload per combination.

#include <cstddef>
#include <type_traits>

#include "resident/augment.hpp"
#include "resident/convert.hpp"

namespace resident::detail {

template <class T>
struct is_conversion : std::false_type {};
template <std::size_t Field, class Op>
struct is_conversion<FieldConversion<Field, Op>> : std::true_type {};

template <class T>
struct is_augmentation : std::false_type {};
template <std::size_t Field>
struct is_augmentation<FieldAugmentation<Field>> : std::true_type {};

/// The field a transform names (0 for `NoConversion` and `NoAugmentation`).
template <class T, class = void>
struct field_of : std::integral_constant<std::size_t, 0> {};
template <class T>
struct field_of<T, std::void_t<decltype(T::field)>>
    : std::integral_constant<std::size_t, T::field> {};

/// The first of `Ts` that `Is` accepts, or `Default`.
template <template <class> class Is, class Default, class... Ts>
struct first_of {
  using type = Default;
};
template <template <class> class Is, class Default, class T, class... Ts>
struct first_of<Is, Default, T, Ts...> {
  using type = std::conditional_t<Is<T>::value, T, typename first_of<Is, Default, Ts...>::type>;
};

/// @brief The conversion and the augmentation of an epoch's transforms `Ts...`, checked for a
/// dataset of `Fields` fields.
template <std::size_t Fields, class... Ts>
struct TransformPack {
  static constexpr std::size_t conversions = (std::size_t{0} + ... + is_conversion<Ts>::value);
  static constexpr std::size_t augmentations = (std::size_t{0} + ... + is_augmentation<Ts>::value);
  static_assert(conversions + augmentations == sizeof...(Ts),
                "epoch(options, transforms...) takes resident::convert<F>(op) and "
                "resident::augment<F>(image, ops...) only");
  static_assert(conversions <= 1, "an epoch takes at most one convert<F>(op)");
  static_assert(augmentations <= 1, "an epoch takes at most one augment<F>(image, ops...)");

  using conversion = typename first_of<is_conversion, NoConversion, Ts...>::type;
  using augmentation = typename first_of<is_augmentation, NoAugmentation, Ts...>::type;

  static_assert(field_of<conversion>::value < Fields,
                "the converted field is past the dataset's fields");
  static_assert(field_of<augmentation>::value < Fields,
                "the augmented field is past the dataset's fields");

  /// The one of `transforms` whose type is `T`, or `T{}` (`NoConversion`, `NoAugmentation`).
  template <class T>
  [[nodiscard]] static T pick(const Ts&... transforms) {
    if constexpr ((std::is_same_v<T, Ts> || ...))
      return first<T>(transforms...);
    else
      return T{};
  }

 private:
  template <class T, class U, class... Us>
  static const T& first(const U& transform, const Us&... rest) {
    if constexpr (std::is_same_v<T, U>)
      return transform;
    else
      return first<T>(rest...);
  }
};

}  // namespace resident::detail
