// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// @brief `DatasetAccessors`: the types and accessors shared by every dataset
/// (`DeviceDataset`, `StreamingDataset`, `Dataset`), written once.

#include <cstddef>
#include <tuple>
#include <type_traits>

#include "resident/batch_view.hpp"
#include "resident/dataset_options.hpp"
#include "resident/shard.hpp"
#include "resident/space_traits.hpp"

namespace resident {

/// @brief What every dataset of fields `Ts...` in `Space` has, whichever way it holds its
/// data: its types and the accessors below. The base of `DeviceDataset`, `StreamingDataset`
/// and `Dataset` (CRTP: `Owner` is the dataset, which provides `impl_core()`), so that code
/// generic over the three reads them alike; not used on its own.
template <class Owner, class Space, class... Ts>
class DatasetAccessors {
  static_assert(is_memory_space_v<Space>, "a dataset needs a memory space");
  static_assert(std::is_default_constructible_v<Space> && std::is_copy_constructible_v<Space>,
                "a memory space is default-constructible and copyable (see space_traits.hpp)");
  static_assert(sizeof...(Ts) >= 1, "a dataset needs at least one field");
  static_assert(((!std::is_const_v<Ts> && !std::is_reference_v<Ts>)&&...),
                "name the field types unqualified, as in DeviceDataset<Space, float, int32_t>");

 public:
  using space_type = Space;                                 ///< Where the data lives.
  using stream_type = typename Space::stream_type;          ///< The dataset's stream type.
  using batch_type = std::tuple<BatchView<const Ts>...>;    ///< What `batch(i)` returns.
  static constexpr std::size_t num_fields = sizeof...(Ts);  ///< Fields per row.

  /// @brief Rows stored (before padding): every row, or this rank's part when partitioned.
  [[nodiscard]] std::size_t num_rows() const noexcept { return core().num_rows(); }
  /// @brief Row of the caller's data that stored row 0 is: the part's first row when
  /// partitioned, else 0. Row ids (`batch_indices()`) count stored rows; add this for global ids.
  [[nodiscard]] std::size_t first_row() const noexcept { return core().geometry().source_first; }
  /// @brief Rows per batch (`DatasetOptions::batch_size`).
  [[nodiscard]] std::size_t batch_size() const noexcept { return core().config().batch_size; }
  /// @brief What happens to the last rows (`DatasetOptions::remainder`).
  [[nodiscard]] Remainder remainder() const noexcept { return core().config().remainder; }
  /// @brief Batches per epoch: the same on every rank of the job.
  [[nodiscard]] std::size_t num_batches() const noexcept { return core().num_batches(); }
  /// @brief The rank this dataset serves (`DatasetOptions::shard`).
  [[nodiscard]] const Shard& shard() const noexcept { return core().config().shard; }
  /// @brief How the rows are divided among the ranks (`DatasetOptions::sharding`).
  [[nodiscard]] Sharding sharding() const noexcept { return core().config().sharding; }
  /// @brief No rows stored. A rank of a job with fewer rows than ranks may be empty and still
  /// serve a batch of padding, so that it takes part in every step.
  [[nodiscard]] bool empty() const noexcept { return num_rows() == 0; }
  /// @brief Whether the data was moved to another dataset (and none moved in since): the
  /// dataset is empty and its epochs throw, saying so.
  [[nodiscard]] bool moved_from() const noexcept { return core().moved_from(); }
  /// @brief The space the dataset's memory belongs to.
  [[nodiscard]] const Space& space() const noexcept { return core().space(); }
  /// @brief The stream the dataset's device work is ordered on: the one
  /// `DatasetOptions::stream` named (borrowed), or a non-blocking stream the dataset owns.
  [[nodiscard]] stream_type stream() const noexcept { return core().stream(); }

 private:
  [[nodiscard]] decltype(auto) core() const noexcept {  // a `detail::DatasetCore`
    return static_cast<const Owner&>(*this).impl_core();
  }
};

}  // namespace resident
