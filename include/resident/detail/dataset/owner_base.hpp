// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// What `Epoch` asks of the dataset that owns it, its `impl_` hooks, is tabled in docs/design.md
// (Decisions, "One gathering epoch"): public members, left out of the reference.

#include <array>
#include <cstddef>
#include <utility>

#include "resident/detail/dataset/dataset_core.hpp"
#include "resident/detail/dataset/epoch_resume.hpp"
#include "resident/detail/gather/gather_ring.hpp"
#include "resident/shape.hpp"

namespace resident::detail {

/// @brief What every dataset owner holds for its epochs (its core, the gather rings it lends
/// them, its rows' shapes) and the hooks whose answer is the same for most: no batch of a view
/// epoch is gathered, and a view needs no order before or after it is read. The base of every
/// owner, which writes only the hooks it answers otherwise. Moved from, it holds nothing.
template <class Space, std::size_t Fields>
class OwnerBase {
 public:
  /// @cond impl
  [[nodiscard]] const DatasetCore<Space, Fields>& impl_core() const noexcept { return core_; }
  [[nodiscard]] DatasetCore<Space, Fields>& impl_core() noexcept { return core_; }
  [[nodiscard]] GatherRings<Space>& impl_rings() noexcept { return rings_; }
  [[nodiscard]] const GatherRings<Space>& impl_rings() const noexcept { return rings_; }
  [[nodiscard]] const std::array<Shape, Fields>& impl_row_shapes() const noexcept {
    return row_shapes_.get();
  }
  /// What the order of the epoch of `options` depends on beyond its rows, for a state that
  /// served `position` rows of it.
  [[nodiscard]] static constexpr OrderKey impl_order_key(const EpochOptions& /*options*/,
                                                         std::uint64_t /*position*/) noexcept {
    return {};
  }
  static constexpr bool impl_augments = true;  ///< Whether its rows take augmentations.
  /// Refuses, when an epoch is made, augmentations that its rows do not take though its type
  /// does (a mixture's token windows).
  static constexpr void impl_check_augmentation() noexcept {}
  /// Whether its epoch's positions interleave its parts (a mixture's: see `PartInterleave`).
  static constexpr bool impl_interleaves = false;
  template <class Pass>
  [[nodiscard]] static constexpr bool impl_gathers_some(const Pass& /*pass*/) noexcept {
    return false;
  }
  template <class Pass>
  [[nodiscard]] static constexpr bool impl_gathers_batch(const Pass& /*pass*/,
                                                         std::size_t /*k*/) noexcept {
    return false;
  }
  template <class Pass, class Stream>
  static constexpr void impl_wait_view(const Pass& /*pass*/, std::size_t /*k*/,
                                       Stream /*consumer*/) noexcept {}
  template <class Pass, class Stream>
  static constexpr void impl_release_view(const Pass& /*pass*/, std::size_t /*k*/,
                                          Stream /*consumer*/) noexcept {}
  /// @endcond

 protected:
  OwnerBase() = default;
  explicit OwnerBase(const std::array<Shape, Fields>& row_shapes) : row_shapes_(row_shapes) {}

 private:
  DatasetCore<Space, Fields> core_;
  GatherRings<Space> rings_;  // lent to gathering epochs
  ResetOnMove<std::array<Shape, Fields>> row_shapes_;
};

/// @brief The one way the file loaders make a dataset from prepared sources (an archive's
/// deflated members, a file's row sources, a token file's bytes): every dataset's constructor
/// that takes them is private, so that no public signature names a `detail` type, and each
/// dataset names this its friend.
struct FromSources {
  /// @brief `Dataset(args...)`, by its private constructor.
  template <class Dataset, class... Args>
  [[nodiscard]] static Dataset make(Args&&... args) {
    return Dataset(std::forward<Args>(args)...);
  }
};

}  // namespace resident::detail
