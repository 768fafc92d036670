// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// @brief `Mixture<Space, Ts...>`: several `DeviceDataset`s served as one dataset, in the exact
/// shares of a `MixtureOrder`, each batch gathered from where the datasets stored their rows.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iterator>
#include <memory>
#include <numeric>
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
#include "resident/detail/dataset/epoch_resume.hpp"
#include "resident/detail/dataset/layout.hpp"
#include "resident/detail/dataset/owner_base.hpp"
#include "resident/detail/dataset/row_order.hpp"
#include "resident/detail/dataset/space_words.hpp"
#include "resident/detail/expects.hpp"
#include "resident/detail/gather/mixed_rows.hpp"
#include "resident/detail/resources.hpp"
#include "resident/device_dataset.hpp"
#include "resident/epoch.hpp"
#include "resident/epoch_options.hpp"
#include "resident/mixture_order.hpp"
#include "resident/permutation.hpp"
#include "resident/shape.hpp"

namespace resident {

/// @brief Several `DeviceDataset`s of the same fields and row shapes, in one space, served as
/// one dataset in the shares of a `MixtureOrder` (weights, repeats or counts): an epoch is the
/// order's positions, cut by the mixture's own `DatasetOptions` (batch size, remainder,
/// sharding, ring), with every epoch feature (conversions, augmentations, `resume`). No row is
/// copied into a combined allocation: each batch is gathered, in one pass (one kernel per field
/// on CUDA, the copy team on the host), from where the datasets stored their rows, through a
/// table of a few words per source in the space's memory (`bytes()`); nothing grows with
/// the rows or the epochs. The datasets' allocations live while the mixture does.
///
/// The epoch's order: under `Shuffle::none` the order's positions in turn, unshuffled (each
/// period's slots source by source); under `Shuffle::samples` in turn too, each period's slots
/// and each source's passes permuted (keyed by the epoch's seed and number), so that every
/// `period` samples served hold each source's exact share; under `Shuffle::batches` those
/// positions in a seeded order of whole batches. `batch_indices()` are positions of the
/// epoch (stored rows, as a dataset numbers them); `sample(row, options)` is the source and row
/// behind one.
/// @note Move-only; moved from, it is empty (0 rows, no table) and its epochs throw on their
/// next use. Thread-safety: const members may be called from many threads at once.
template <class Space, class... Ts>
class Mixture : public DatasetAccessors<Mixture<Space, Ts...>, Space, Ts...>,
                public detail::OwnerBase<Space, sizeof...(Ts)>,
                public detail::EpochSource<Mixture<Space, Ts...>> {
  using Core = detail::DatasetCore<Space, sizeof...(Ts)>;

 public:
  using typename DatasetAccessors<Mixture, Space, Ts...>::batch_type;
  using DatasetAccessors<Mixture, Space, Ts...>::num_fields;
  using dataset_type = DeviceDataset<Space, Ts...>;  ///< What a mixture takes its rows from.
  /// @brief The datasets mixed, in the order the shares name them.
  using sources_type = std::vector<std::reference_wrapper<const dataset_type>>;

  /// @brief `sources` in `shares` (one each), shaped by `mixture`, cut by `options`.
  /// @throws InvalidArgument when there is no source, a source was moved from or is a rank's
  /// part (made with a world size above 1), or the sources differ in space or row shapes
  /// (naming the first that differs), and for what
  /// `MixtureOrder` and a dataset's options refuse; CapacityError when the table does not fit
  /// beside the reserve; CudaError when a CUDA call fails. Strong guarantee.
  Mixture(const sources_type& sources, const std::vector<MixtureShare>& shares,
          const MixtureOptions& mixture, const DatasetOptions& options)
      : Mixture(sources, MixtureOrder(rows_of(sources), shares, mixture), options) {}

  /// @brief Exchanges the contents of two mixtures; the epochs made from either before throw on
  /// their next use.
  void swap(Mixture& other) noexcept { std::swap(*this, other); }

  /// @brief The order of the mixture's epochs: its shares, period and size (the order of no
  /// source when moved from).
  [[nodiscard]] const MixtureOrder& order() const noexcept { return order_; }
  /// @brief The source and row that stored row `row` (as `batch_indices()` counts rows) serves
  /// in the epoch of `options`.
  /// @throws std::out_of_range when `row` is not a stored row of this rank.
  [[nodiscard]] MixtureSample sample(std::size_t row, const EpochOptions& options) const {
    const auto& layout = this->impl_core().layout();
    if (row >= layout.geometry.stored_rows)
      throw std::out_of_range("resident: mixture row " + std::to_string(row) +
                              " is out of range; this rank stores " +
                              std::to_string(layout.geometry.stored_rows) +
                              " rows of the mixture (padding included); use a row below that");
    return order_.at(
        detail::part_interleave(layout.geometry).position(detail::source_map(layout).row(row)),
        options.seed, options.epoch, options.shuffle != Shuffle::none);
  }
  /// @brief Bytes of the mixture's one allocation: its table (the sources' allocations are
  /// theirs; 0 when moved from).
  [[nodiscard]] std::size_t bytes() const noexcept { return table_.bytes(); }
  /// @brief Bytes of the gather rings held (see `DeviceDataset::ring_bytes`).
  [[nodiscard]] std::size_t ring_bytes() const noexcept { return this->impl_rings().bytes(); }

  /// @cond impl
  // What `Epoch` asks of a mixture (see owner_base.hpp): every batch gathered through the table,
  // in the order's positions.
  static constexpr const char* impl_holding = "the datasets it mixes";
  static constexpr bool impl_interleaves = true;
  struct impl_pass_type {
    detail::EpochOrder order;
    detail::MixtureKey key;
  };
  [[nodiscard]] impl_pass_type impl_make_pass(const std::weak_ptr<const void>& /*borrower*/,
                                              const EpochOptions& options,
                                              const detail::EpochStart& start,
                                              bool /*gathers*/) const {
    // The periods stay whole in the order served: the positions run in turn, and the order's
    // own permutations shuffle within them. The state still names the epoch's shuffle.
    EpochOptions positions = options;
    if (positions.shuffle == Shuffle::samples) positions.shuffle = Shuffle::none;
    impl_pass_type pass{
        {this->impl_core().geometry(), positions, start},
        order_.impl_key(options.seed, options.epoch, options.shuffle != Shuffle::none)};
    pass.order.options = options;
    return pass;
  }
  [[nodiscard]] static const detail::EpochOrder& impl_order(const impl_pass_type& pass) noexcept {
    return pass.order;
  }
  [[nodiscard]] static constexpr bool impl_views(const EpochOptions& /*options*/) noexcept {
    return false;
  }
  [[nodiscard]] static constexpr bool impl_gathers_some(const impl_pass_type& /*pass*/) noexcept {
    return true;
  }
  [[nodiscard]] static constexpr bool impl_gathers_batch(const impl_pass_type& /*pass*/,
                                                         std::size_t /*k*/) noexcept {
    return true;
  }
  [[nodiscard]] batch_type impl_view(const impl_pass_type& /*pass*/, std::size_t k) const {
    RESIDENT_INVARIANT(false, "batch " + std::to_string(k) +
                                  " of a mixture was asked for as a view; a mixture gathers");
  }
  struct impl_gathered {
    detail::MixturePlaces order;
    detail::BatchSlice slice;
  };
  [[nodiscard]] impl_gathered impl_gather(const impl_pass_type& pass, std::size_t k) const {
    const auto& layout = this->impl_core().layout();
    return {{pass.order.rows(k), table(), pass.key, detail::source_map(layout),
             detail::part_interleave(layout.geometry)},
            pass.order.slice(k)};
  }
  static void impl_check_gathered(const impl_pass_type& /*pass*/) noexcept {}
  template <std::size_t Field>
  [[nodiscard]] auto impl_rows(const impl_pass_type& /*pass*/,
                               const impl_gathered& /*gathered*/) const noexcept {
    using T = std::tuple_element_t<Field, std::tuple<Ts...>>;
    return detail::MixedRows<T>{table() + order_.sources() * (3 + Field),
                                this->impl_core().layout().row_elements[Field]};
  }
  // The gathered batches lie in the rings alone.
  [[nodiscard]] std::shared_ptr<const void> impl_owner_of(const void* first,
                                                          std::size_t bytes) const noexcept {
    return this->impl_rings().owner_of(first, bytes);
  }
  // A state saved under other shares, period or sources is of another order.
  [[nodiscard]] detail::OrderKey impl_order_key() const noexcept {
    const std::vector<std::uint64_t>& words = order_.impl_table();
    return {std::accumulate(
                words.begin(), words.end(),
                detail::mix64(order_.period() ^ 0x6d6978ULL),  // "mix"
                [](std::uint64_t hash, std::uint64_t word) { return detail::mix64(hash ^ word); }),
            false};
  }
  /// @endcond

 private:
  Mixture(const sources_type& sources, MixtureOrder order, const DatasetOptions& options)
      : detail::OwnerBase<Space, sizeof...(Ts)>(sources.front().get().impl_row_shapes()),
        order_(std::move(order)),
        owners_(owners_of(sources)) {
    this->impl_core() = core_of(sources.front().get(), order_.size(), options);
    table_ = detail::space_words(
        this->impl_core(), order_.sources() * (3 + num_fields), [&] { return table_of(sources); },
        "the mixture's table", "lower DatasetOptions::reserve_bytes, or mix fewer sources");
  }

  // The table's words in the space: the order's, then each field's bases.
  [[nodiscard]] const std::uint64_t* table() const noexcept {
    return reinterpret_cast<const std::uint64_t*>(table_.data());  // NOLINT: the words uploaded
  }

  // The sources' rows, once they are checked to mix.
  static std::vector<std::uint64_t> rows_of(const sources_type& sources) {
    RESIDENT_EXPECTS(!sources.empty(), "a mixture was given no datasets; give at least one");
    const dataset_type& first = sources.front().get();
    std::vector<std::uint64_t> rows;
    for (std::size_t s = 0; s < sources.size(); ++s) {
      const dataset_type& source = sources[s].get();
      RESIDENT_EXPECTS(!source.moved_from(),
                       "dataset " + std::to_string(s) +
                           " of the mixture was moved from and holds no rows; mix the dataset "
                           "it was moved to");
      RESIDENT_EXPECTS(source.shard().world_size <= 1,
                       "dataset " + std::to_string(s) + " of the mixture is rank " +
                           std::to_string(source.shard().rank) + " of " +
                           std::to_string(source.shard().world_size) +
                           " and holds only its part of the rows; make the sources with the "
                           "default DatasetOptions::shard (every row): the mixture's own options "
                           "shard its epochs");
      RESIDENT_EXPECTS(source.space() == first.space(),
                       "dataset " + std::to_string(s) + " of the mixture lies in another space (" +
                           source.space().name() + ") than dataset 0 (" + first.space().name() +
                           "): spaces are one when they compare equal (one device, one memory "
                           "resource, one budget); make every dataset with the same space");
      for (std::size_t field = 0; field < num_fields; ++field)
        RESIDENT_EXPECTS(source.impl_row_shapes()[field] == first.impl_row_shapes()[field],
                         "field " + std::to_string(field) + " of dataset " + std::to_string(s) +
                             " has rows of shape " + source.impl_row_shapes()[field].to_string() +
                             ", dataset 0's " + first.impl_row_shapes()[field].to_string() +
                             "; mix datasets whose rows have the same shapes");
      rows.push_back(source.num_rows());
    }
    return rows;
  }
  static constexpr std::array<std::size_t, num_fields> element_bytes{sizeof(Ts)...};

  // The core of a dataset of the order's positions, with the sources' row shapes.
  static Core core_of(const dataset_type& first, std::uint64_t positions,
                      const DatasetOptions& options) {
    std::size_t row_bytes = 0;
    for (std::size_t field = 0; field < num_fields; ++field)
      row_bytes += first.impl_row_shapes()[field].elements() * element_bytes[field];
    // The epoch's rows are counted as a dataset's stored rows, which its bytes must address.
    RESIDENT_EXPECTS(row_bytes == 0 || positions <= SIZE_MAX / 2 / row_bytes,
                     "the mixture's epoch of " + std::to_string(positions) + " samples of " +
                         std::to_string(row_bytes) +
                         " bytes is more than this platform addresses; give fewer "
                         "MixtureOptions::epoch_samples, or repeats and counts that sum to "
                         "fewer");
    std::array<Shape, num_fields> shapes{};
    for (std::size_t field = 0; field < num_fields; ++field)
      shapes[field] = first.impl_row_shapes()[field].prepend(static_cast<std::size_t>(positions));
    return Core(first.space(), options, detail::reserve_for(first.space(), options),
                detail::make_layout<num_fields>(options, shapes, {sizeof(Ts)...}));
  }
  static std::vector<std::shared_ptr<const void>> owners_of(const sources_type& sources) {
    std::vector<std::shared_ptr<const void>> owners(sources.size());
    std::transform(sources.begin(), sources.end(), owners.begin(),
                   [](const dataset_type& source) { return source.storage_owner(); });
    return owners;
  }
  // The order's table, then each field's stored row 0 of each source, as addresses.
  std::vector<std::uint64_t> table_of(const sources_type& sources) const {
    std::vector<std::uint64_t> words = order_.impl_table();
    append_bases(words, sources, std::index_sequence_for<Ts...>{});
    return words;
  }
  template <std::size_t... Field>
  static void append_bases(std::vector<std::uint64_t>& words, const sources_type& sources,
                           std::index_sequence<Field...> /*fields*/) {
    const auto append = [&](auto field) {
      std::transform(sources.begin(), sources.end(), std::back_inserter(words),
                     [](const dataset_type& source) -> std::uint64_t {
                       return reinterpret_cast<std::uintptr_t>(  // NOLINT: an address, for kernels
                           source.template field<decltype(field)::value>().data());
                     });
    };
    (append(std::integral_constant<std::size_t, Field>{}), ...);
  }

  MixtureOrder order_;
  std::vector<std::shared_ptr<const void>> owners_;  // the sources' allocations
  detail::Allocation<Space> table_;                  // the order's table and the bases
};

}  // namespace resident
