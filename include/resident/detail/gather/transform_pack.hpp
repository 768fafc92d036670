// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// The transforms an `epoch(options, transforms...)` call names, sorted into the epoch's two
// kinds (conversions, one per field, and an augmentation, in any order), so that every dataset
// has one variadic `epoch` instead of an overload per combination.

#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>

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

/// The `FieldConversions` of the conversions among `Ts`, in order.
template <class Tuple>
struct conversions_in;
template <class... Conversions>
struct conversions_in<std::tuple<Conversions...>> {
  using type = FieldConversions<Conversions...>;
};
template <class... Ts>
struct conversions_of
    : conversions_in<decltype(std::tuple_cat(
          std::declval<
              std::conditional_t<is_conversion<Ts>::value, std::tuple<Ts>, std::tuple<>>>()...))> {
};

/// Whether the transforms among `Ts` that `Is` accepts name distinct fields.
template <template <class> class Is, class... Ts>
constexpr bool distinct_fields() noexcept {
  constexpr std::size_t count = sizeof...(Ts);
  if constexpr (count == 0) {
    return true;
  } else {
    constexpr bool counted[count] = {Is<Ts>::value...};  // NOLINT(modernize-avoid-c-arrays)
    constexpr std::size_t field[count] = {field_of<Ts>::value...};  // NOLINT
    for (std::size_t i = 0; i < count; ++i)
      for (std::size_t j = i + 1; j < count; ++j)
        if (counted[i] && counted[j] && field[i] == field[j]) return false;
    return true;
  }
}

/// @brief The conversion and the augmentation of an epoch's transforms `Ts...`, checked for a
/// dataset of `Fields` fields.
template <std::size_t Fields, class... Ts>
struct TransformPack {
  static constexpr std::size_t conversions = (std::size_t{0} + ... + is_conversion<Ts>::value);
  static constexpr std::size_t augmentations = (std::size_t{0} + ... + is_augmentation<Ts>::value);
  static_assert(conversions + augmentations == sizeof...(Ts),
                "epoch(options, transforms...) takes resident::convert<F>(op) and "
                "resident::augment<F>(image, ops...) only");
  static_assert(augmentations <= 1, "an epoch takes at most one augment<F>(image, ops...)");
  static_assert(distinct_fields<is_conversion, Ts...>(),
                "an epoch takes at most one convert<F>(op) per field F");

  /// `NoConversion`, the one `FieldConversion`, or the `FieldConversions` of several.
  using conversion =
      typename std::conditional_t<(conversions > 1), conversions_of<Ts...>,
                                  first_of<is_conversion, NoConversion, Ts...>>::type;
  using augmentation = typename first_of<is_augmentation, NoAugmentation, Ts...>::type;

  static_assert(((!is_conversion<Ts>::value || field_of<Ts>::value < Fields) && ...),
                "the converted field is past the dataset's fields");
  static_assert(field_of<augmentation>::value < Fields,
                "the augmented field is past the dataset's fields");

  /// The one of `transforms` whose type is `T`, or `T{}` (`NoConversion`, `NoAugmentation`);
  /// the conversions of several fields together for `FieldConversions`.
  template <class T>
  [[nodiscard]] static T pick(const Ts&... transforms) {
    if constexpr (conversions > 1 && std::is_same_v<T, conversion>)
      return T{std::tuple_cat(conversion_tuple(transforms)...)};
    else if constexpr ((std::is_same_v<T, Ts> || ...))
      return first<T>(transforms...);
    else
      return T{};
  }

 private:
  template <class U>
  static auto conversion_tuple(const U& transform) {
    if constexpr (is_conversion<U>::value)
      return std::tuple<U>(transform);
    else
      return std::tuple<>();
  }

  template <class T, class U, class... Us>
  static const T& first(const U& transform, const Us&... rest) {
    if constexpr (std::is_same_v<T, U>)
      return transform;
    else
      return first<T>(rest...);
  }
};

}  // namespace resident::detail
