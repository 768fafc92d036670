// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// @brief `plan()`: will this dataset fit? The constructor's arithmetic, without allocating.

#include <array>
#include <cstddef>
#include <ostream>
#include <string>
#include <type_traits>

#include "resident/dataset_options.hpp"
#include "resident/detail/format_bytes.hpp"
#include "resident/detail/layout.hpp"
#include "resident/error.hpp"
#include "resident/host_tensor.hpp"
#include "resident/space_traits.hpp"

namespace resident {

/// @brief The answer of `plan()`: the figures of the capacity check and its verdict.
struct Plan {
  std::string space_name{};       ///< The space's `name()`.
  std::size_t needed_bytes = 0;   ///< Bytes the dataset allocates (fields, 256-byte aligned).
  std::size_t free_bytes = 0;     ///< Bytes the space reported free.
  std::size_t total_bytes = 0;    ///< Bytes the space holds in all.
  std::size_t reserve_bytes = 0;  ///< Bytes to be left free (option or the space's default).
  std::size_t num_rows = 0;       ///< Rows stored (this rank's part when partitioned).
  std::size_t num_batches = 0;    ///< Batches served under the options.
  bool fits = false;              ///< `needed_bytes <= free_bytes - reserve_bytes`.
  /// @brief Bytes a gathering epoch (`Shuffle::samples`, a conversion, `batch_indices()`)
  /// allocates besides, at its start: `ring_depth` batches of every field plus row ids.
  std::size_t ring_bytes = 0;
  bool fits_with_ring = false;  ///< `needed_bytes + ring_bytes <= free_bytes - reserve_bytes`.
  Shard shard{};                ///< The rank planned for (`DatasetOptions::shard`).
  Sharding sharding = Sharding::partitioned;  ///< The division planned for.
  /// @brief Bytes of the largest rank's allocation were the rows partitioned (about
  /// `1 / world_size` of the data), whichever mode is planned; `needed_bytes` is this
  /// rank's under the planned mode.
  std::size_t partitioned_rank_bytes = 0;
  std::size_t replicated_rank_bytes = 0;  ///< Bytes of every rank's allocation, replicated.
  std::string reason{};                   ///< One line a person can read.

  /// @brief The `CapacityError` that refusing this plan throws.
  [[nodiscard]] CapacityError refusal() const {
    return CapacityError(space_name, needed_bytes, free_bytes, total_bytes, reserve_bytes);
  }
};

/// @brief Prints the plan as its one-line reason.
inline std::ostream& operator<<(std::ostream& out, const Plan& plan) { return out << plan.reason; }

namespace detail {

/// The capacity check on a computed layout: shared by `plan()` and the dataset constructor so
/// the two can never disagree.
template <class Space, std::size_t Fields>
Plan plan_layout(const Space& space, const DatasetOptions& options,
                 const DatasetLayout<Fields>& layout,
                 const std::array<std::size_t, Fields>& element_bytes) {
  const std::size_t ring_bytes =
      make_ring_layout(layout, element_bytes, options.batch_size, options.ring_depth).total_bytes;
  const Capacity capacity = space.capacity();
  Plan plan;
  plan.space_name = space.name();
  plan.needed_bytes = layout.total_bytes;
  plan.free_bytes = capacity.free_bytes;
  plan.total_bytes = capacity.total_bytes;
  plan.reserve_bytes = options.reserve_bytes.value_or(space.default_reserve_bytes());
  plan.num_rows = layout.geometry.order_rows;
  plan.num_batches = layout.geometry.batches;
  plan.ring_bytes = ring_bytes;
  plan.shard = options.shard;
  plan.sharding = options.sharding;
  DatasetOptions other = options;
  other.shard.rank = 0;  // rank 0 holds the longest part
  other.sharding = Sharding::partitioned;
  plan.partitioned_rank_bytes =
      place_fields(layout, make_geometry(layout.source_rows, other)).total_bytes;
  other.sharding = Sharding::replicated;
  plan.replicated_rank_bytes =
      place_fields(layout, make_geometry(layout.source_rows, other)).total_bytes;
  const std::size_t usable = usable_bytes(plan.free_bytes, plan.reserve_bytes);
  plan.fits = plan.needed_bytes <= usable;
  plan.fits_with_ring = plan.fits && plan.ring_bytes <= usable - plan.needed_bytes;
  const std::string who = options.shard.world_size == 1
                              ? std::string()
                              : " for rank " + std::to_string(options.shard.rank) + " of " +
                                    std::to_string(options.shard.world_size) + " (" +
                                    sharding_name(options.sharding) + ")";
  plan.reason =
      plan.fits ? "resident: dataset fits" + who + ": needs " + format_bytes(plan.needed_bytes) +
                      " on " + plan.space_name + ", " + format_bytes(usable) + " of " +
                      format_bytes(plan.total_bytes) + " is free after a " +
                      format_bytes(plan.reserve_bytes) + " reserve; preload it"
                : CapacityError::message(plan.space_name, plan.needed_bytes, plan.free_bytes,
                                         plan.total_bytes, plan.reserve_bytes);
  return plan;
}

}  // namespace detail

/// @brief Does a dataset of these fields fit in `space` under `options`? Queries the space's
/// capacity and does the constructor's arithmetic; allocates nothing, reads no element.
/// @throws InvalidArgument for fields that disagree on rows, batch size 0, or byte overflow;
/// CudaError when a CUDA space has no usable device.
template <class Space, class... Ts>
[[nodiscard]] Plan plan(const Space& space, const DatasetOptions& options,
                        const HostTensor<Ts>&... fields) {
  static_assert(is_memory_space_v<Space>, "plan() needs a memory space (HostSpace, CudaSpace)");
  return detail::plan_layout(
      space, options,
      detail::make_layout(options, HostTensor<const std::remove_const_t<Ts>>(fields)...),
      {sizeof(Ts)...});
}

}  // namespace resident
