// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// What a gathering epoch does to each field besides copying it (the conversion and the
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
#include "resident/epoch_options.hpp"

namespace resident::detail {

template <class Conversion, std::size_t Field>
struct converts : std::false_type {};
template <std::size_t Field, class Op>
struct converts<FieldConversion<Field, Op>, Field> : std::true_type {};

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

template <class Conversion>
struct conversion_op {
  using type = NoConversion;
};
template <std::size_t Field, class Op>
struct conversion_op<FieldConversion<Field, Op>> {
  using type = Op;
};

/// The element type field `Field` has in a batch: the conversion's output where it converts.
template <class Conversion, std::size_t Field, class Stored>
struct batch_element {
  using type = Stored;
};
template <std::size_t Field, class Op, class Stored>
struct batch_element<FieldConversion<Field, Op>, Field, Stored> {
  using type = typename Op::output_type;
};

/// @brief What a gathering epoch does to each field besides copying it: the conversion and the
/// augmentation (either may be none) and the augmentation's key, shared by the preloaded and
/// the streamed epochs so that both transform a row alike.
template <class Conversion, class Augment, class Stored>
struct FieldTransforms {
  using Op = typename conversion_op<Conversion>::type;
  static constexpr std::size_t fields = std::tuple_size_v<Stored>;
  template <std::size_t Field>
  using stored_t = typename std::tuple_element_t<Field, Stored>::value_type;
  template <std::size_t Field>
  using output_t = typename batch_element<Conversion, Field, stored_t<Field>>::type;

  Conversion conversion;
  Augment augment;
  AugmentKey key{};
  NoConversion no_conversion{};

  /// @brief Prepares the transforms for `layout`: checks that the conversion and the
  /// augmentation fit their fields' rows, and keys
  /// the augmentation's draws by the row of the caller's whole data, so that every rank of a
  /// sharded job (and every kind of dataset) augments a row as one unsharded dataset would.
  /// Where both name one field, the image layout declared to the augmentation decides how the
  /// conversion's channels are laid out (`Normalize::with_layout`).
  /// @throws InvalidArgument when either does not fit, or when the conversion has another count
  /// of channels than the declared images.
  void prepare(const DatasetLayout<fields>& layout, const EpochOptions& options) {
    if constexpr (!std::is_same_v<Augment, NoAugmentation>) {
      augment.augmentation.check(layout.row_elements[Augment::field]);
      if constexpr (converts<Conversion, Augment::field>::value && takes_image_layout<Op>::value)
        conversion.op = conversion.op.with_layout(augment.augmentation.image);
      // A rank without rows of its own stores the caller's first rows, cycled, as its padding.
      const ShardGeometry& geometry = layout.geometry;
      key = geometry.pad_from_source_start
                ? AugmentKey{options.seed, options.epoch, 0, layout.source_rows}
                : AugmentKey{options.seed, options.epoch, geometry.source_first, 0};
    }
    if constexpr (checks_row_layout<Op>::value)
      conversion.op.check_row_layout(layout.row_elements[Conversion::field]);
  }

  /// Field `Field`'s conversion, or `NoConversion`.
  template <std::size_t Field>
  [[nodiscard]] const auto& op() const noexcept {
    if constexpr (converts<Conversion, Field>::value)
      return conversion.op;
    else
      return no_conversion;
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
};

}  // namespace resident::detail
