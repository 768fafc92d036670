// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// @brief `Subset<Space, Ts...>`: rows of a `DeviceDataset` served as a dataset of their own,
/// with no copy of the rows: a range, a list, or the parts of a seeded `random_split`.

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "resident/batch_view.hpp"
#include "resident/dataset_accessors.hpp"
#include "resident/dataset_options.hpp"
#include "resident/detail/dataset/dataset_core.hpp"
#include "resident/detail/dataset/epoch_order.hpp"
#include "resident/detail/dataset/layout.hpp"
#include "resident/detail/dataset/preloaded_storage.hpp"
#include "resident/detail/dataset/row_selection.hpp"
#include "resident/detail/dataset/space_words.hpp"
#include "resident/detail/expects.hpp"
#include "resident/detail/gather/mapped_rows.hpp"
#include "resident/detail/resources.hpp"
#include "resident/device_dataset.hpp"
#include "resident/epoch.hpp"
#include "resident/permutation.hpp"
#include "resident/shape.hpp"
#include "resident/split.hpp"

namespace resident {

/// @brief Rows of a `DeviceDataset` as a dataset of their own (PyTorch's `Subset`): the epochs
/// of a `DeviceDataset` made from copies of those rows (shuffles, remainders, sharding,
/// conversions, augmentations, `resume`), batch for batch and bit for bit, read where the
/// dataset stored them. The subset shares the dataset's allocation (`storage_owner()`), which
/// lives while either does: the dataset may be moved or destroyed first.
///
/// Its rows are numbered `[0, num_rows())` in the order given, and its `DatasetOptions` (batch
/// size, remainder, sharding, ring, stream) are its own, so that a held-out part may take
/// larger batches and `Remainder::partial`. A range of the dataset's rows serves every batch
/// that is a run of them as a view, as the dataset does; every other batch (a list's, a padded
/// one, a `Shuffle::samples` epoch's) is gathered into the subset's ring through its row map,
/// one `std::uint64_t` per stored row (padding included) in the space's memory, which every
/// subset holds (`map_bytes()`). Its `batch_indices()` are its own row ids; `dataset_row(id)`
/// is the dataset's row behind one.
/// @note Move-only; moved from, it is empty (0 rows, no map) and its epochs throw on their next
/// use. Thread-safety: const members may be called from many threads at once.
template <class Space, class... Ts>
class Subset : public DatasetAccessors<Subset<Space, Ts...>, Space, Ts...>,
               public detail::PreloadedStorage<Space, sizeof...(Ts)>,
               public detail::EpochSource<Subset<Space, Ts...>> {
  using Storage = detail::PreloadedStorage<Space, sizeof...(Ts)>;
  using Core = detail::DatasetCore<Space, sizeof...(Ts)>;

 public:
  using typename DatasetAccessors<Subset, Space, Ts...>::batch_type;
  using DatasetAccessors<Subset, Space, Ts...>::num_fields;
  using dataset_type = DeviceDataset<Space, Ts...>;  ///< What a subset takes its rows from.

  /// @brief Rows `[first, first + count)` of `dataset`'s stored rows, cut by `options`.
  /// @throws InvalidArgument when the range reaches past `dataset.num_rows()`, or for options
  /// a dataset refuses (batch size 0, ...); CapacityError when the row map does not fit beside
  /// the reserve; CudaError when a CUDA call fails. Strong guarantee.
  Subset(const dataset_type& dataset, std::size_t first, std::size_t count,
         const DatasetOptions& options)
      : Subset(dataset,
               detail::select_range(dataset.num_rows(), dataset.moved_from(), first, count),
               options) {}

  /// @brief `dataset`'s stored rows `rows`, in that order (a row may come more than once), cut
  /// by `options`.
  /// @throws InvalidArgument naming the first row that is not below `dataset.num_rows()`; what
  /// the range constructor throws.
  Subset(const dataset_type& dataset, const std::vector<std::size_t>& rows,
         const DatasetOptions& options)
      : Subset(dataset, detail::select_list(dataset.num_rows(), dataset.moved_from(), rows),
               options) {}

  /// @brief Exchanges the contents of two subsets; the epochs made from either before throw on
  /// their next use.
  void swap(Subset& other) noexcept { std::swap(*this, other); }

  /// @brief Whether the rows are a range of the dataset's: its batches that are runs of them
  /// are views, as the dataset's are.
  [[nodiscard]] bool contiguous() const noexcept { return selection_.get().range; }
  /// @brief The dataset's stored row that stored row `row` of the subset is (rows counted as
  /// `batch_indices()` counts them).
  /// @throws std::out_of_range when `row >= num_rows()`.
  [[nodiscard]] std::size_t dataset_row(std::size_t row) const {
    if (row >= this->num_rows())
      throw std::out_of_range(
          "resident: subset row " + std::to_string(row) + " is out of range; " +
          (this->moved_from()
               ? std::string("the subset was moved from and holds no rows; ask the subset it "
                             "was moved to")
               : "the subset stores " + std::to_string(this->num_rows()) +
                     " rows; use a row below that"));
    return static_cast<std::size_t>(selection_.get().row(this->first_row() + row));
  }
  /// @brief Bytes of the row map in the space (0 for a subset of no rows, or moved from).
  [[nodiscard]] std::size_t map_bytes() const noexcept { return map_.bytes(); }

  /// @cond impl
  // What `Epoch` asks of a subset beyond what every preloaded dataset answers (see
  // `detail::PreloadedStorage`): views of a range's runs, and every other batch gathered
  // through the row map.
  static constexpr const char* impl_holding = "the dataset whose rows it takes";
  [[nodiscard]] bool impl_views(const EpochOptions& options) const noexcept {
    return contiguous() && options.shuffle != Shuffle::samples &&
           this->impl_core().geometry().rank_parts == 1;
  }
  // A padded batch's padding is not stored after a range, nor is a list's batch a run.
  [[nodiscard]] bool impl_gathers_batch(const detail::EpochOrder& pass,
                                        std::size_t k) const noexcept {
    if (!contiguous() || pass.run_first(k) == detail::EpochOrder::no_run) return true;
    const detail::BatchSlice slice = pass.slice(k);
    return slice.valid != slice.rows;
  }
  [[nodiscard]] bool impl_gathers_some(const detail::EpochOrder& pass) const noexcept {
    // Only the last step holds padding.
    return pass.gathers_some() ||
           (pass.batches() != 0 && impl_gathers_batch(pass, pass.batches() - 1));
  }
  [[nodiscard]] batch_type impl_view(const detail::EpochOrder& pass, std::size_t k) const {
    const detail::BatchSlice slice = pass.slice(k);
    return views(dataset_row(pass.run_first(k)), slice.rows, std::index_sequence_for<Ts...>{});
  }
  template <std::size_t Field>
  [[nodiscard]] auto impl_rows(const detail::EpochOrder& /*pass*/,
                               const typename Storage::impl_gathered& /*gathered*/) const noexcept {
    using T = std::tuple_element_t<Field, std::tuple<Ts...>>;
    return detail::MappedRows<T>{std::get<Field>(bases_.get()),
                                 this->impl_core().layout().row_elements[Field],
                                 reinterpret_cast<const std::uint64_t*>(map_.data())};  // NOLINT
  }
  /// @endcond

 private:
  Subset(const dataset_type& dataset, detail::RowSelection selection, const DatasetOptions& options)
      : Storage(dataset, dataset.impl_row_shapes(), core_of(dataset, selection.rows, options)),
        bases_(bases_of(dataset, std::index_sequence_for<Ts...>{})),
        map_(upload(this->impl_core(), selection)),
        selection_(std::move(selection)) {}

  // The core of a dataset of `rows` of `dataset`'s rows, cut by `options`, in its space.
  static Core core_of(const dataset_type& dataset, std::size_t rows,
                      const DatasetOptions& options) {
    return Core(dataset.space(), options, detail::reserve_for(dataset.space(), options),
                detail::layout_of_rows<num_fields>(options, dataset.impl_row_shapes(), rows,
                                                   {sizeof(Ts)...}));
  }
  template <std::size_t... Field>
  static std::tuple<const Ts*...> bases_of(const dataset_type& dataset,
                                           std::index_sequence<Field...> /*fields*/) noexcept {
    return {dataset.template field<Field>().data()...};
  }
  // The row map of `selection` in the space, after the capacity check every allocation passes
  // (before the map is made on the host: a padded layout may store far more rows than it has).
  static detail::Allocation<Space> upload(const Core& core, const detail::RowSelection& selection) {
    return detail::space_words(
        core, selection.rows == 0 ? 0 : core.layout().geometry.stored_rows,
        [&] { return detail::stored_row_map(core.layout(), selection); }, "the subset's row map",
        "take fewer rows, a smaller batch size under Remainder::pad (its padding rows are "
        "mapped too), or lower DatasetOptions::reserve_bytes");
  }
  // Batch views of `rows` of the dataset's stored rows from `first`.
  template <std::size_t... Field>
  [[nodiscard]] batch_type views(std::size_t first, std::size_t rows,
                                 std::index_sequence<Field...> /*fields*/) const {
    const auto& layout = this->impl_core().layout();
    return batch_type(
        BatchView<const Ts>(std::get<Field>(bases_.get()) + first * layout.row_elements[Field],
                            rows, this->impl_row_shapes()[Field])...);
  }

  detail::ResetOnMove<std::tuple<const Ts*...>> bases_;  // each field's stored row 0
  detail::Allocation<Space> map_;                        // the row map (see the class note)
  detail::ResetOnMove<detail::RowSelection> selection_;
};

/// @brief PyTorch's `random_split`: `dataset`'s rows in disjoint random parts of `lengths`
/// rows (`random_split_rows`), each a `Subset` cut by `options`. For parts cut by options of
/// their own, make each `Subset` from `random_split_rows`.
/// @throws what `random_split_rows` and `Subset` throw (a dataset moved from is refused, also
/// for no parts); nothing is kept.
template <class Space, class... Ts>
std::vector<Subset<Space, Ts...>> random_split(const DeviceDataset<Space, Ts...>& dataset,
                                               const std::vector<std::size_t>& lengths,
                                               std::uint64_t seed, const DatasetOptions& options) {
  return detail::split_parts<Subset<Space, Ts...>>(dataset, lengths, seed, options);
}

}  // namespace resident
