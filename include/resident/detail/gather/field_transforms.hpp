// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// What a gathering epoch does to each field besides copying it (the conversions and the
// augmentation an epoch names) and the element type each field then has in a batch: shared by
// every kind of dataset, so that a row is transformed alike wherever it comes from.

#include <algorithm>
#include <array>
#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>

#include "resident/augment.hpp"
#include "resident/convert.hpp"
#include "resident/detail/dataset/layout.hpp"
#include "resident/detail/dataset/shard_geometry.hpp"
#include "resident/detail/gather/augment_draws.hpp"
#include "resident/detail/gather/transform_pack.hpp"
#include "resident/epoch_options.hpp"
#include "resident/shape.hpp"

namespace resident::detail {

template <class Conversion, std::size_t Field>
struct converts : std::false_type {};
template <std::size_t Field, class Op>
struct converts<FieldConversion<Field, Op>, Field> : std::true_type {};
template <class... Conversions, std::size_t Field>
struct converts<FieldConversions<Conversions...>, Field>
    : std::bool_constant<(converts<Conversions, Field>::value || ...)> {};

template <std::size_t Field, class Conversion>
struct conversion_index;
/// The place, among `Conversions`, of the one that converts `Field`.
template <std::size_t Field, class... Conversions>
struct conversion_index<Field, FieldConversions<Conversions...>> {
  static constexpr std::size_t value = [] {
    constexpr bool matches[] = {converts<Conversions, Field>::value...};  // NOLINT
    std::size_t index = 0;
    while (!matches[index]) ++index;
    return index;
  }();
};

/// Field `Field`'s op in `conversion` (a pointer, as const as `conversion`), or a null
/// `const NoConversion*` where it converts none.
template <std::size_t Field, class Conversion>
constexpr auto op_of(Conversion& conversion) noexcept {
  using Plain = std::remove_const_t<Conversion>;
  if constexpr (!converts<Plain, Field>::value)
    return static_cast<const NoConversion*>(nullptr);
  else if constexpr (is_conversion<Plain>::value)
    return &conversion.op;
  else
    return &std::get<conversion_index<Field, Plain>::value>(conversion.conversions).op;
}

/// Whether a conversion can check that it fits a field's rows (`Normalize::check_row_layout`).
template <class Op, class = void>
struct checks_row_layout : std::false_type {};
template <class Op>
struct checks_row_layout<
    Op, std::void_t<decltype(std::declval<const Op&>().check_row_layout(std::size_t{}))>>
    : std::true_type {};

/// Whether a conversion can take its channel layout from a declared image layout
/// (`Normalize::with_layout`).
template <class Op, class = void>
struct takes_image_layout : std::false_type {};
template <class Op>
struct takes_image_layout<
    Op, std::void_t<decltype(std::declval<const Op&>().with_layout(std::declval<ImageLayout>()))>>
    : std::true_type {};

template <class Augment, std::size_t Field>
struct augments : std::false_type {};
template <std::size_t Field>
struct augments<FieldAugmentation<Field>, Field> : std::true_type {};

/// Field `Field`'s op in a `Conversion`, or `NoConversion`.
template <class Conversion, std::size_t Field>
using op_t =
    std::remove_const_t<std::remove_pointer_t<decltype(op_of<Field>(std::declval<Conversion&>()))>>;

/// The element type field `Field` has in a batch: its conversion's output where it has one.
template <class Conversion, std::size_t Field, class Stored>
struct batch_element {
  using type = Stored;
};
template <class Conversion, std::size_t Field, class Stored>
struct converted_element {
  using type = typename op_t<Conversion, Field>::output_type;
};
template <std::size_t Field, class Op, class Stored>
struct batch_element<FieldConversion<Field, Op>, Field, Stored>
    : converted_element<FieldConversion<Field, Op>, Field, Stored> {};
template <class... Conversions, std::size_t Field, class Stored>
struct batch_element<FieldConversions<Conversions...>, Field, Stored>
    : std::conditional_t<converts<FieldConversions<Conversions...>, Field>::value,
                         converted_element<FieldConversions<Conversions...>, Field, Stored>,
                         batch_element<NoConversion, Field, Stored>> {};

/// Whether `Op` converts elements stored as `In`: what its `accepts<In>` says (`Cast`), or yes.
template <class Op, class In, class = void>
struct op_accepts : std::true_type {};
template <class Op, class In>
struct op_accepts<Op, In, std::void_t<decltype(Op::template accepts<In>)>>
    : std::bool_constant<Op::template accepts<In>> {};

/// @brief What a gathering epoch does to each field besides copying it: the conversions (one
/// per field at most) and the augmentation (either may be none) and the augmentation's key,
/// shared by the preloaded and the streamed epochs so that both transform a row alike.
template <class Conversion, class Augment, class Stored>
struct FieldTransforms {
  static constexpr std::size_t fields = std::tuple_size_v<Stored>;
  template <std::size_t Field>
  using stored_t = typename std::tuple_element_t<Field, Stored>::value_type;
  template <std::size_t Field>
  using output_t = typename batch_element<Conversion, Field, stored_t<Field>>::type;

  Conversion conversion;
  Augment augment;
  AugmentKey key{};
  NoConversion no_conversion{};

  /// @brief Prepares the transforms for `layout`: checks that the conversions and the
  /// augmentation fit their fields' rows, and keys the augmentation's draws by the row of the
  /// caller's whole data, so that every rank of a sharded job (and every kind of dataset)
  /// augments a row as one unsharded dataset would. Where a conversion and the augmentation
  /// name one field, the image layout declared to the augmentation decides how the
  /// conversion's channels are laid out (`Normalize::with_layout`).
  /// @throws InvalidArgument when one does not fit, or when the conversion has another count
  /// of channels than the declared images.
  void prepare(const DatasetLayout<fields>& layout, const EpochOptions& options, bool interleaved) {
    if constexpr (!std::is_same_v<Augment, NoAugmentation>) {
      augment.augmentation.check(layout.row_elements[Augment::field]);
      using AugmentedOp = op_t<Conversion, Augment::field>;
      if constexpr (takes_image_layout<AugmentedOp>::value) {
        // Converted where the images are in the batch's layout (after an `OutputLayout`).
        AugmentedOp& augmented = *op_of<Augment::field>(conversion);
        augmented = augmented.with_layout(augment.augmentation.output_image());
      }
      // A rank without rows of its own stores the caller's first rows, cycled, as its padding.
      const ShardGeometry& geometry = layout.geometry;
      key = geometry.pad_from_source_start
                ? AugmentKey{options.seed, options.epoch, 0, layout.source_rows}
                : AugmentKey{options.seed, options.epoch, geometry.source_first, 0};
      if (interleaved) key.interleave = part_interleave(geometry);  // a mixture's positions
    }
    check_conversions(layout, std::make_index_sequence<fields>{});
  }

  /// Field `Field`'s conversion, or `NoConversion`.
  template <std::size_t Field>
  [[nodiscard]] const auto& op() const noexcept {
    if constexpr (converts<Conversion, Field>::value)
      return *op_of<Field>(conversion);
    else
      return no_conversion;
  }
  /// The shape of field `Field`'s rows in a batch: `stored`, or the images' output layout,
  /// `(C, H, W)` or `(H, W, C)`, where an `OutputLayout` is given.
  template <std::size_t Field>
  [[nodiscard]] Shape row_shape(const Shape& stored) const {
    if constexpr (augments<Augment, Field>::value) {
      const Augmentation& declared = augment.augmentation;
      if (declared.relayout) {
        const ImageLayout image = declared.output_image();
        return image.order == ImageLayout::Order::chw
                   ? Shape{image.channels, image.height, image.width}
                   : Shape{image.height, image.width, image.channels};
      }
    }
    return stored;
  }
  /// Field `Field`'s augmentation, or `nullptr` (a `std::nullptr_t`, so that a gather of a
  /// field without one compiles no augmentation code).
  template <std::size_t Field>
  [[nodiscard]] auto augmentation() const noexcept {
    if constexpr (augments<Augment, Field>::value)
      return &augment.augmentation;
    else
      return nullptr;
  }

 private:
  template <std::size_t... Field>
  void check_conversions(const DatasetLayout<fields>& layout, std::index_sequence<Field...>) const {
    (check_conversion<Field>(layout.row_elements[Field]), ...);
  }
  template <std::size_t Field>
  void check_conversion(std::size_t row_elements) const {
    using Op = op_t<Conversion, Field>;
    static_assert(op_accepts<Op, stored_t<Field>>::value,
                  "convert<F>(Cast<T>{}) casts only to a type that holds every value of field "
                  "F's stored type (a widening: uint8/int32 labels to int64_t, uint16 tokens to "
                  "int32_t, half to float); store the field as a type T holds, or convert it "
                  "with Normalize");
    if constexpr (checks_row_layout<Op>::value) op<Field>().check_row_layout(row_elements);
  }
};

}  // namespace resident::detail
