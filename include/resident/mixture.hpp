// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// @brief `Mixture<Space, Ts...>`: several `DeviceDataset`s, or `TokenDataset`s, served as one
/// dataset, in the exact shares of a `MixtureOrder`, each batch gathered from where the datasets
/// stored their rows.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iterator>
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
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
#include "resident/token_dataset.hpp"

namespace resident {

namespace detail {

/// What a mixture of fields that are no token dataset's takes in place of token datasets: a
/// type nothing converts to.
struct NoTokenDataset {};
/// The token dataset whose batches have the fields `Ts`: `TokenDataset<Space, T>` for `(T, T)`
/// of a token type, `NoTokenDataset` otherwise.
template <class Space, class... Ts>
struct token_dataset_of {
  using type = NoTokenDataset;
};
template <class Space, class T>
struct token_dataset_of<Space, T, T> {
  using type = std::conditional_t<is_token_type_v<T>, TokenDataset<Space, T>, NoTokenDataset>;
};

/// Where a source's rows of field `Field` lie: the address of its stored row 0, and the bytes
/// from one row to the next.
struct SourceRows {
  std::uint64_t base = 0;
  std::uint64_t pitch = 0;
};
template <std::size_t Field, class Space, class... Ts>
SourceRows field_rows(const DeviceDataset<Space, Ts...>& source) noexcept {
  const auto rows = source.template field<Field>();
  return {reinterpret_cast<std::uintptr_t>(rows.data()),  // NOLINT: an address, for kernels
          rows.row_shape().elements() * sizeof(typename decltype(rows)::element_type)};
}
// A token stream's windows: x from each window's start, y one token on.
template <std::size_t Field, class Space, class T>
SourceRows field_rows(const TokenDataset<Space, T>& source) noexcept {
  return {reinterpret_cast<std::uintptr_t>(source.tokens().data() + Field),  // NOLINT: an address
          source.stride() * sizeof(T)};
}

}  // namespace detail

/// @brief Several `DeviceDataset`s of the same fields and row shapes, or several
/// `TokenDataset`s of the same token type and context (`Mixture<Space, T, T>`), in one space,
/// served as one dataset in the shares of a `MixtureOrder` (weights, repeats or counts): a token
/// mixture's rows are its sources' windows, each source with its own stride, `y` one token on
/// as a token dataset serves it, and it takes no augmentation. An epoch is the
/// order's positions, cut by the mixture's own `DatasetOptions` (batch size, remainder,
/// sharding, ring), with every epoch feature (conversions, augmentations, `resume`), and new
/// shares from a position of the run on where it declares phases (`MixturePhase`). No row is
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
  /// @brief The token datasets a mixture of fields `(T, T)` may take instead: `TokenDataset<Space,
  /// T>` for a token type `T`, `detail::NoTokenDataset` (nothing) for other fields.
  using token_dataset_type = typename detail::token_dataset_of<Space, Ts...>::type;
  /// @brief The token datasets mixed, in the order the shares name them.
  using token_sources_type = std::vector<std::reference_wrapper<const token_dataset_type>>;

  /// @brief `sources` in `shares` (one each), shaped by `mixture`, cut by `options`; from
  /// where each of `phases` begins, in its shares. A state resumes under a mixture that declares
  /// phases beginning where the state stands or later (in a `Shuffle::batches` epoch, from a
  /// later epoch: its batches come in any order), so that a run changes its weights from where
  /// it stopped.
  /// @throws InvalidArgument when there is no source, a source was moved from or is a rank's
  /// part (made with a world size above 1), or the sources differ in space or row shapes
  /// (naming the first that differs), and for what
  /// `MixtureOrder` and a dataset's options refuse; CapacityError when the table does not fit
  /// beside the reserve; CudaError when a CUDA call fails. Strong guarantee.
  Mixture(const sources_type& sources, const std::vector<MixtureShare>& shares,
          const MixtureOptions& mixture, const DatasetOptions& options,
          const std::vector<MixturePhase>& phases = {})
      : Mixture(sources, MixtureOrder(rows_of(sources), shares, mixture, phases), options) {}
  /// @brief Token datasets `sources` in `shares`, as the constructor above: their windows are
  /// the rows, and they must have the same context (their strides may differ).
  /// @throws what the constructor above throws, a context that differs naming the source.
  Mixture(const token_sources_type& sources, const std::vector<MixtureShare>& shares,
          const MixtureOptions& mixture, const DatasetOptions& options,
          const std::vector<MixturePhase>& phases = {})
      : Mixture(sources, MixtureOrder(rows_of(sources), shares, mixture, phases), options) {}

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
  void impl_check_augmentation() const {
    RESIDENT_EXPECTS(!windows_,
                     "an augmentation was given for a mixture of token datasets: token windows "
                     "are not images; give the epoch conversions only (convert<>(), e.g. "
                     "Cast<std::int32_t>)");
  }
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
    const std::uint64_t* bases =
        table() + order_.impl_table().size() + order_.sources() * 2 * Field;
    return detail::MixedRows<T>{bases, bases + order_.sources(),
                                this->impl_core().layout().row_elements[Field], aligned_[Field]};
  }
  // The gathered batches lie in the rings alone.
  [[nodiscard]] std::shared_ptr<const void> impl_owner_of(const void* first,
                                                          std::size_t bytes) const noexcept {
    return this->impl_rings().owner_of(first, bytes);
  }
  // A state is of another order where the shares, period or sources' rows differ, or a phase
  // that begins before the rows it served (in a `Shuffle::batches` epoch, before its end:
  // its batches are served in any order); phases that begin after them may be new.
  [[nodiscard]] detail::OrderKey impl_order_key(const EpochOptions& options,
                                                std::uint64_t position) const noexcept {
    return {order_.impl_hash(options.epoch,
                             options.shuffle == Shuffle::batches ? order_.size() : position),
            false};
  }
  /// @endcond

 private:
  template <class Source>
  Mixture(const std::vector<std::reference_wrapper<const Source>>& sources, MixtureOrder order,
          const DatasetOptions& options)
      : detail::OwnerBase<Space, sizeof...(Ts)>(sources.front().get().impl_row_shapes()),
        order_(std::move(order)),
        owners_(owners_of(sources)),
        windows_(std::is_same_v<Source, token_dataset_type>) {
    this->impl_core() = core_of(sources.front().get(), order_.size(), options);
    std::vector<std::uint64_t> words = order_.impl_table();
    append_rows(words, sources, std::index_sequence_for<Ts...>{});
    table_ = detail::space_words(
        this->impl_core(), words.size(), [&] { return words; }, "the mixture's table",
        "lower DatasetOptions::reserve_bytes, or mix fewer sources");
  }

  // The table's words in the space: the order's, then each field's bases.
  [[nodiscard]] const std::uint64_t* table() const noexcept {
    return reinterpret_cast<const std::uint64_t*>(table_.data());  // NOLINT: the words uploaded
  }

  // The sources' rows, once they are checked to mix.
  template <class Source>
  static std::vector<std::uint64_t> rows_of(
      const std::vector<std::reference_wrapper<const Source>>& sources) {
    RESIDENT_EXPECTS(!sources.empty(), "a mixture was given no datasets; give at least one");
    const Source& first = sources.front().get();
    std::vector<std::uint64_t> rows;
    for (std::size_t s = 0; s < sources.size(); ++s) {
      const Source& source = sources[s].get();
      RESIDENT_EXPECTS(!source.moved_from(),
                       "dataset " + std::to_string(s) +
                           " of the mixture was moved from and holds no rows; mix the dataset "
                           "it was moved to");
      RESIDENT_EXPECTS(source.shard().world_size <= 1,
                       "dataset " + std::to_string(s) + " of the mixture was made for rank " +
                           std::to_string(source.shard().rank) + " of " +
                           std::to_string(source.shard().world_size) +
                           " (DatasetOptions::shard); make the sources with the default shard "
                           "(world size 1, every row): the mixture's own options shard its "
                           "epochs");
      RESIDENT_EXPECTS(source.space() == first.space(),
                       "dataset " + std::to_string(s) + " of the mixture lies in a space (" +
                           source.space().name() +
                           ") that does not compare equal to dataset 0's (" + first.space().name() +
                           "): spaces are one when they compare equal (one device, one memory "
                           "resource, one budget); make every dataset with the same space");
      for (std::size_t field = 0; field < num_fields; ++field)
        RESIDENT_EXPECTS(
            source.impl_row_shapes()[field] == first.impl_row_shapes()[field],
            "field " + std::to_string(field) + " of dataset " + std::to_string(s) +
                " has rows of shape " + source.impl_row_shapes()[field].to_string() +
                ", dataset 0's " + first.impl_row_shapes()[field].to_string() +
                "; mix datasets whose rows have the same shapes (token datasets of the "
                "same context)");
      rows.push_back(source.num_rows());
    }
    return rows;
  }
  static constexpr std::array<std::size_t, num_fields> element_bytes{sizeof(Ts)...};

  // The core of a dataset of the order's positions, with the sources' row shapes.
  template <class Source>
  static Core core_of(const Source& first, std::uint64_t positions, const DatasetOptions& options) {
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
    return Core(
        first.space(), options, detail::reserve_for(first.space(), options),
        detail::layout_of_rows<num_fields>(options, first.impl_row_shapes(),
                                           static_cast<std::size_t>(positions), element_bytes));
  }
  template <class Source>
  static std::vector<std::shared_ptr<const void>> owners_of(
      const std::vector<std::reference_wrapper<const Source>>& sources) {
    std::vector<std::shared_ptr<const void>> owners(sources.size());
    std::transform(sources.begin(), sources.end(), owners.begin(),
                   [](const Source& source) { return source.storage_owner(); });
    return owners;
  }
  // After the order's table, each field's rows in each source: the bases, then the pitches;
  // and the alignment every row start of the field keeps.
  template <class Source, std::size_t... Field>
  void append_rows(std::vector<std::uint64_t>& words,
                   const std::vector<std::reference_wrapper<const Source>>& sources,
                   std::index_sequence<Field...> /*fields*/) {
    const auto append = [&](auto field) {
      std::uint64_t bits = 0;
      std::vector<std::uint64_t> pitches;
      for (const Source& source : sources) {
        const detail::SourceRows rows = detail::field_rows<decltype(field)::value>(source);
        words.push_back(rows.base);
        pitches.push_back(rows.pitch);
        bits |= rows.base | rows.pitch;
      }
      words.insert(words.end(), pitches.begin(), pitches.end());
      // The lowest set bit; rows of no bytes at no address are aligned to anything.
      aligned_[decltype(field)::value] =
          bits == 0 ? std::size_t{256} : static_cast<std::size_t>(bits & (~bits + 1));
    };
    (append(std::integral_constant<std::size_t, Field>{}), ...);
  }

  MixtureOrder order_;
  std::vector<std::shared_ptr<const void>> owners_;  // the sources' allocations
  detail::Allocation<Space> table_;                  // the order's table, bases and pitches
  std::array<std::size_t, num_fields> aligned_{};    // each field's rows' alignment
  bool windows_ = false;                             // the rows are token windows
};

}  // namespace resident
