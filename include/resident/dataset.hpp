// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// @brief `make_dataset`: a `DeviceDataset` when the data fits, a `StreamingDataset` when it
/// does not, behind one `Dataset` type with the same batch interface (from files:
/// load_dataset.hpp).

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "resident/dataset_accessors.hpp"
#include "resident/dataset_options.hpp"
#include "resident/detail/dataset/batch_iterator.hpp"
#include "resident/detail/format_bytes.hpp"
#include "resident/device_dataset.hpp"
#include "resident/epoch.hpp"
#include "resident/plan.hpp"
#include "resident/split.hpp"
#include "resident/streaming_dataset.hpp"
#include "resident/subset.hpp"

namespace resident {

namespace detail {

/// @brief Calls `visitor` (which must not throw) on what a two-alternative variant holds.
/// std::visit would throw for a valueless variant; these never are (both alternatives move
/// without throwing), and get_if says so without a throwing path.
template <class Variant, class Visitor>
decltype(auto) visit_held(Variant& held, Visitor&& visitor) noexcept {
  if (auto* first = std::get_if<0>(&held)) return visitor(*first);
  return visitor(*std::get_if<1>(&held));
}

/// @brief Refuses to stream a replicated rank of a sharded job, with `why`'s figures: the ranks
/// that preload deal out one global batch order, which a streamed rank (chunk by chunk) cannot
/// keep.
/// @throws CapacityError saying what to do instead.
inline void refuse_replicated_stream(const DatasetOptions& options, const CapacityError& why) {
  if (options.shard.world_size == 1 || options.sharding != Sharding::replicated) return;
  throw CapacityError(
      why.space_name(), why.needed_bytes(), why.free_bytes(), why.total_bytes(),
      why.reserve_bytes(),
      "make_dataset would stream this rank of a replicated job, but a streamed rank cannot keep "
      "the global batch order of the ranks that preload; use Sharding::partitioned, free memory, "
      "or build a StreamingDataset on every rank (with the same StreamOptions::chunk_batches)");
}

/// @brief The plan `make_dataset` records when the preload allocation failed after a passing
/// plan: the figures of `replanned`, recommendation `stream`, and a reason saying why.
inline Plan fallback_plan(Plan replanned, const CapacityError& refused) {
  replanned.recommendation = Recommendation::stream;
  replanned.reason =
      "resident: the plan said the dataset fits, but the preload allocation was "
      "refused (" +
      std::string(refused.what()) + "); the data is streamed instead: " + stream_summary(replanned);
  return replanned;
}

/// @brief `make_dataset`'s decision, for tensors and files alike: `preload()` when `verdict`
/// fits, else (or when that allocation is refused) `stream(options)`, recording the plan that
/// was carried out; `replan(options)` gives the figures after a refused allocation.
///
/// A refused preload after a passing plan means the space's allocator refused past its
/// capacity (a memory resource's limit, which its figures do not show): a stream sized from the
/// same figures would be refused too. With automatic chunks on a single rank, its chunks are
/// then halved until the slots are allocated, or one batch a chunk is refused too.
template <class Result, class Preload, class Stream, class Replan>
Result preload_or_stream(const DatasetOptions& options, Plan verdict, Preload&& preload,
                         Stream&& stream, Replan&& replan) {
  // Nothing fits: refused now, as the plan says, with the smallest budget that would stream.
  if (verdict.recommendation == Recommendation::refuse && verdict.stream_refusal.empty())
    throw CapacityError(verdict.space_name, verdict.needed_bytes, verdict.free_bytes,
                        verdict.total_bytes, verdict.reserve_bytes,
                        nothing_fits_advice(verdict, chunk_slots_advice(options)));
  // Fits, unless the plan found that only a stream leaves room for the gather ring.
  if (!verdict.fits || verdict.recommendation == Recommendation::stream) {
    refuse_replicated_stream(options, verdict.refusal());
    return Result(stream(options), std::move(verdict));
  }
  std::optional<CapacityError> refused;
  try {
    return Result(preload(), verdict);
  } catch (const CapacityError& error) {
    refuse_replicated_stream(options, error);
    refused = error;
  }
  DatasetOptions streamed = options;
  const bool shrinks = options.streaming.chunk_batches == 0 && options.shard.world_size == 1;
  for (;;) {
    verdict = fallback_plan(replan(streamed), *refused);
    try {
      return Result(stream(streamed), std::move(verdict));
    } catch (const CapacityError& slots) {
      if (!shrinks || verdict.stream_chunk_batches <= 1)
        throw CapacityError(
            slots.space_name(), slots.needed_bytes(), slots.free_bytes(), slots.total_bytes(),
            slots.reserve_bytes(),
            "the preload allocation of " + detail::format_bytes(refused->needed_bytes()) +
                " was refused too, though the space reported room for both: its allocator (a "
                "memory resource) limits what it gives; raise that limit, free memory in it, "
                "or pass a budget that says it (CudaSpace::with_budget)",
            shrinks ? "a stream's chunk slots of one batch each" : "a stream's chunk slots");
      streamed.streaming.chunk_batches = verdict.stream_chunk_batches / 2;
    }
  }
}

}  // namespace detail

/// @brief One epoch of a `Dataset`, whichever way it holds its data: the preloaded epoch or the
/// streamed one, with the same batches (converted and augmented alike), size and iteration.
template <class Owner, class Conversion = NoConversion, class Augment = NoAugmentation>
class DatasetEpoch {
  using Preloaded = Epoch<typename Owner::preloaded_type, Conversion, Augment>;
  using Streamed = StreamingEpoch<typename Owner::streaming_type, Conversion, Augment>;

 public:
  using batch_type = typename Preloaded::batch_type;     ///< One view per field.
  using index_view = typename Preloaded::index_view;     ///< What `batch_indices()` returns.
  using stream_type = typename Preloaded::stream_type;   ///< The streams `wait`/`release` order.
  using iterator = detail::BatchIterator<DatasetEpoch>;  ///< Input iterator over batches.

  /// @brief Use `Dataset::epoch`.
  explicit DatasetEpoch(Preloaded epoch) : epoch_(std::move(epoch)) {}
  /// @brief Use `Dataset::epoch`.
  explicit DatasetEpoch(Streamed epoch) : epoch_(std::move(epoch)) {}

  /// @brief Batches in the epoch.
  /// @throws Error once the dataset was moved from, assigned, swapped or destroyed.
  [[nodiscard]] std::size_t size() const {
    return std::visit([](const auto& epoch) { return epoch.size(); }, epoch_);
  }
  /// @brief Whether the epoch has no batches (`size() == 0`); throws as `size()` does.
  [[nodiscard]] bool empty() const { return size() == 0; }
  /// @brief Where the run stands once the loop has taken `batches` batches (`Epoch::state`).
  /// @throws what `Epoch::state` throws.
  [[nodiscard]] EpochState state(std::size_t batches) const {
    return std::visit([batches](const auto& epoch) { return epoch.state(batches); }, epoch_);
  }
  /// @brief Where the run stands after the batches handed out so far (`Epoch::state()`).
  /// @throws what `Epoch::state` throws.
  [[nodiscard]] EpochState state() const {
    return std::visit([](const auto& epoch) { return epoch.state(); }, epoch_);
  }
  /// @brief The options the epoch was made with.
  [[nodiscard]] const EpochOptions& options() const noexcept {
    return detail::visit_held(
        epoch_, [](const auto& epoch) -> const EpochOptions& { return epoch.options(); });
  }
  /// @brief Batch `k` (see `Epoch::batch` for cost and lifetime).
  [[nodiscard]] batch_type batch(std::size_t k) {
    return std::visit([k](auto& epoch) -> batch_type { return epoch.batch(k); }, epoch_);
  }
  /// @brief Batch `k` ordered on `consumer` (see `Epoch::batch(k, stream)`).
  [[nodiscard]] batch_type batch(std::size_t k, stream_type consumer) {
    return std::visit([&](auto& epoch) -> batch_type { return epoch.batch(k, consumer); }, epoch_);
  }
  /// @brief Binds the epoch to `consumer` (see `Epoch::on`).
  DatasetEpoch& on(stream_type consumer) & {
    std::visit([&](auto& epoch) { epoch.on(consumer); }, epoch_);
    return *this;
  }
  /// @brief `on(consumer)` of a temporary epoch: the bound epoch, moved out of it.
  [[nodiscard]] DatasetEpoch on(stream_type consumer) && {
    std::visit([&](auto& epoch) { epoch.on(consumer); }, epoch_);
    return std::move(*this);
  }
  /// @brief Whether batches are gathered into the ring (else they are zero-copy views).
  [[nodiscard]] bool gathers() const noexcept {
    return detail::visit_held(epoch_, [](const auto& epoch) { return epoch.gathers(); });
  }
  /// @brief The row ids of batch `k` (see `Epoch::batch_indices`).
  [[nodiscard]] index_view batch_indices(std::size_t k) {
    return std::visit([k](auto& epoch) -> index_view { return epoch.batch_indices(k); }, epoch_);
  }
  /// @brief Orders `consumer` after batch `k` (see `Epoch::wait`).
  void wait(std::size_t k, stream_type consumer) {
    std::visit([&](auto& epoch) { epoch.wait(k, consumer); }, epoch_);
  }
  /// @brief Lets batch `k`'s memory be written again once `consumer`'s work so far is done
  /// (see `Epoch::release`).
  void release(std::size_t k, stream_type consumer) {
    std::visit([&](auto& epoch) { epoch.release(k, consumer); }, epoch_);
  }
  /// @brief Iterator at the first batch; dereferencing an iterator throws `Error` once this
  /// epoch object is destroyed or moved.
  /// @throws Error as `size()` does.
  [[nodiscard]] iterator begin() {
    (void)size();  // throws when the dataset changed since the epoch was made
    return iterator(this, 0, self_.lease());
  }
  /// @brief Iterator past the last batch (at `size()`).
  /// @throws Error as `size()` does.
  [[nodiscard]] iterator end() { return iterator(this, size(), self_.lease()); }

  /// @cond impl
  // The epoch this one holds, for what needs its type (`to_tensors`): the preloaded dataset's,
  // or the stream's; null for the other.
  [[nodiscard]] Preloaded* impl_preloaded() noexcept { return std::get_if<0>(&epoch_); }
  [[nodiscard]] Streamed* impl_streamed() noexcept { return std::get_if<1>(&epoch_); }
  // A lease of this epoch object, as `Epoch::impl_lease` gives of its own.
  [[nodiscard]] detail::DataLease impl_lease() { return self_.lease(); }
  /// @endcond

 private:
  std::variant<Preloaded, Streamed> epoch_;
  detail::DataToken self_;  // this epoch object's, for its iterators
};

namespace detail {

/// The accessors' base of a dataset that holds `Preloaded` or `Streaming`, read from the
/// streaming type's space and fields.
template <class Owner, class Streaming>
struct accessors_of;
template <class Owner, class Space, class... Ts>
struct accessors_of<Owner, StreamingDataset<Space, Ts...>> {
  using type = DatasetAccessors<Owner, Space, Ts...>;
};

}  // namespace detail

/// @brief A dataset that holds its data preloaded (`Preloaded`: a `DeviceDataset`, a
/// `TokenDataset`) or streamed (`Streaming`: a `StreamingDataset` of the same fields), as a plan
/// decided; the same `num_batches()`, `batch(i)` and `epoch()` either way. `Dataset` and
/// `TokenCorpus` are its two kinds.
template <class Preloaded, class Streaming>
class BasicDataset
    : public detail::accessors_of<BasicDataset<Preloaded, Streaming>, Streaming>::type {
  using Accessors = typename detail::accessors_of<BasicDataset, Streaming>::type;
  using Space = typename Accessors::space_type;

 public:
  using Accessors::num_fields;
  using typename Accessors::batch_type;
  using preloaded_type = Preloaded;  ///< The choice when it fits.
  using streaming_type = Streaming;  ///< The choice when it does not.

  /// @brief Holds a preloaded dataset and the plan that chose it.
  BasicDataset(preloaded_type dataset, Plan plan)
      : data_(std::in_place_index<0>, std::move(dataset)), plan_(std::move(plan)) {}
  /// @brief Holds a streamed dataset and the plan that chose it.
  BasicDataset(streaming_type dataset, Plan plan)
      : data_(std::in_place_index<1>, std::move(dataset)), plan_(std::move(plan)) {}

  /// @brief The plan behind the choice: figures, `recommendation` and `reason`. Once moved
  /// from, a plan of no figures (it does not fit) whose reason says so: the plan went with the
  /// data.
  [[nodiscard]] const Plan& plan() const noexcept {
    if (this->moved_from()) return moved_from_plan();
    return plan_.get();
  }
  /// @brief Whether the data is streamed (it did not fit) rather than preloaded.
  [[nodiscard]] bool is_streaming() const noexcept { return data_.index() == 1; }
  /// @brief The preloaded dataset, or null when streaming.
  [[nodiscard]] preloaded_type* preloaded() noexcept { return std::get_if<0>(&data_); }
  /// @brief The streamed dataset, or null when preloaded.
  [[nodiscard]] streaming_type* streaming() noexcept { return std::get_if<1>(&data_); }
  /// @brief The preloaded dataset, or null when streaming.
  [[nodiscard]] const preloaded_type* preloaded() const noexcept { return std::get_if<0>(&data_); }
  /// @brief The streamed dataset, or null when preloaded.
  [[nodiscard]] const streaming_type* streaming() const noexcept { return std::get_if<1>(&data_); }

  /// @brief Bytes the dataset holds in the space: the data, or the chunk slots.
  [[nodiscard]] std::size_t bytes() const noexcept {
    return detail::visit_held(data_, [](const auto& ds) { return ds.bytes(); });
  }
  /// @brief Bytes of the gather ring of gathering epochs: a streamed dataset's is allocated
  /// when it is made, a preloaded one's at its first gathering epoch (0 until then).
  [[nodiscard]] std::size_t ring_bytes() const noexcept {
    return detail::visit_held(data_, [](const auto& ds) { return ds.ring_bytes(); });
  }

  /// @brief Batch `index` of an unshuffled epoch (a copy-free view either way; streaming may
  /// wait for its chunk).
  /// @throws std::out_of_range when `index >= num_batches()`; the errors of either dataset.
  [[nodiscard]] batch_type batch(std::size_t index) {
    return std::visit([index](auto& ds) -> batch_type { return ds.batch(index); }, data_);
  }

  /// @brief One epoch in the order `options` gives, with the transforms named, as
  /// `DeviceDataset::epoch` takes them (see `Epoch` for what each shuffle costs and means).
  template <class... Transforms>
  [[nodiscard]] auto epoch(EpochOptions options = {}, Transforms... transforms) {
    using Pack = detail::TransformPack<num_fields, Transforms...>;
    using Result =
        DatasetEpoch<BasicDataset, typename Pack::conversion, typename Pack::augmentation>;
    if (auto* ds = preloaded()) return Result(ds->epoch(options, transforms...));
    return Result(streaming()->epoch(options, transforms...));
  }
  /// @brief The rest of `options`' epoch from where a run stopped (`state`), as the held
  /// dataset's `resume` makes it (see `DeviceDataset::resume`): a state saved preloaded resumes
  /// streamed in whole-epoch order, and back.
  /// @throws what the held dataset's `resume` throws.
  template <class... Transforms>
  [[nodiscard]] auto resume(EpochOptions options, const EpochState& state,
                            Transforms... transforms) {
    using Pack = detail::TransformPack<num_fields, Transforms...>;
    using Result =
        DatasetEpoch<BasicDataset, typename Pack::conversion, typename Pack::augmentation>;
    if (auto* ds = preloaded()) return Result(ds->resume(options, state, transforms...));
    return Result(streaming()->resume(options, state, transforms...));
  }

  /// @cond impl
  // The core of the dataset held (see `DeviceDataset::impl_core`).
  [[nodiscard]] const detail::DatasetCore<Space, num_fields>& impl_core() const noexcept {
    return detail::visit_held(data_,
                              [](const auto& ds) -> const detail::DatasetCore<Space, num_fields>& {
                                return ds.impl_core();
                              });
  }
  /// @endcond

 private:
  static const Plan& moved_from_plan() noexcept {
    static const Plan empty = [] {
      Plan none;  // no figures: nothing fits, nothing is needed
      none.reason =
          "resident: this dataset was moved from and holds no data; its plan went with the data "
          "to the dataset it was moved to";
      return none;
    }();
    return empty;
  }

  std::variant<preloaded_type, streaming_type> data_;
  detail::ResetOnMove<Plan> plan_;  // left empty by a move, so that no stale figures linger
};

/// @brief A dataset of fields `Ts...` that `make_dataset` preloaded (a `DeviceDataset`) or
/// streams (a `StreamingDataset`), as its plan decided (see `BasicDataset`).
template <class Space, class... Ts>
class Dataset : public BasicDataset<DeviceDataset<Space, Ts...>, StreamingDataset<Space, Ts...>> {
 public:
  using BasicDataset<DeviceDataset<Space, Ts...>, StreamingDataset<Space, Ts...>>::BasicDataset;
};

/// @brief Rows of a `Dataset` as a dataset of their own (PyTorch's `Subset`), whichever way
/// the dataset holds them: a `Subset` of the preloaded data, sharing its allocation, or a subset
/// of the stream, streamed from its sources (see `StreamingDataset`'s subset constructors),
/// cut by options of its own. Its epochs are those of a dataset of copies of its rows, either
/// way; `plan()` is the plan that chose the dataset's way. As a `Subset`, it has no
/// `batch(i)`: read its batches from an epoch.
template <class Space, class... Ts>
class DatasetSubset : public BasicDataset<Subset<Space, Ts...>, StreamingDataset<Space, Ts...>> {
  using Base = BasicDataset<Subset<Space, Ts...>, StreamingDataset<Space, Ts...>>;

 public:
  using Base::Base;

  /// @brief Rows `[first, first + count)` of `dataset`'s rows (`num_rows()`, this rank's).
  /// @throws what `Subset` and the streamed subset throw: a range past the rows, a dataset
  /// moved from, options that do not fit.
  DatasetSubset(const Dataset<Space, Ts...>& dataset, std::size_t first, std::size_t count,
                const DatasetOptions& options)
      : Base(part(dataset, options, first, count)) {}
  /// @brief `dataset`'s rows `rows`, in their order (repeats allowed).
  /// @throws as the range constructor; a row not below `dataset.num_rows()` is named.
  DatasetSubset(const Dataset<Space, Ts...>& dataset, const std::vector<std::size_t>& rows,
                const DatasetOptions& options)
      : Base(part(dataset, options, rows)) {}

  /// @brief None: a list's rows are no run of memory; read the batches from an epoch.
  void batch(std::size_t index) = delete;

 private:
  // The part of `rows` (a range's first and count, or a list) as `dataset` holds its rows: a
  // streamed part of a stream, a Subset of preloaded rows.
  template <class... Rows>
  static Base part(const Dataset<Space, Ts...>& dataset, const DatasetOptions& options,
                   const Rows&... rows) {
    if (dataset.streaming() != nullptr)
      return Base(StreamingDataset<Space, Ts...>(*dataset.streaming(), rows..., options),
                  dataset.plan());
    return Base(Subset<Space, Ts...>(*dataset.preloaded(), rows..., options), dataset.plan());
  }
};

/// @brief PyTorch's `random_split` of what `make_dataset` made: its rows in disjoint random
/// parts of `lengths` rows (`random_split_rows`), each a `DatasetSubset` cut by `options`,
/// preloaded or streamed as the dataset is.
/// @throws what `random_split_rows` and the parts throw (a dataset moved from is refused, also
/// for no parts); nothing is kept.
template <class Space, class... Ts>
std::vector<DatasetSubset<Space, Ts...>> random_split(const Dataset<Space, Ts...>& dataset,
                                                      const std::vector<std::size_t>& lengths,
                                                      std::uint64_t seed,
                                                      const DatasetOptions& options) {
  return detail::split_parts<DatasetSubset<Space, Ts...>>(dataset, lengths, seed, options);
}

/// @brief Preloads the fields when `plan()` says they fit, else streams them; never fails for
/// want of memory unless even the chunk slots does not fit. Data that fits but would leave no
/// room for its gather ring streams too when a stream's chunk slots and gather ring fit (the
/// plan recommends `stream`), so that every epoch runs (a replicated rank preloads still). An
/// allocation that fails after a passing plan (another process took the memory) also falls back to
/// streaming; the recorded `plan()` then says so (recommendation `stream`, the figures of a new
/// plan, and the refused allocation in `reason`). `DatasetOptions::streaming` is checked only when
/// the data is streamed.
/// @param space where to put the data (or the chunk slots); copies of a space share its
/// accounting
/// @param options batch size, remainder policy, reserve, sharding, upload tuning and
/// `streaming`; `plan()` decides with them
/// @param fields host tensors with equal row counts; keep them alive as long as the dataset,
/// because a streamed dataset reads them every epoch
/// @throws what the chosen dataset's constructor throws (CapacityError when not even the
/// streaming ring fits, InvalidArgument for invalid `StreamOptions` when streaming);
/// CapacityError when a rank of a replicated job (`world_size > 1`) would stream, since it
/// could not keep the job's global batch order.
template <class Space, class... Ts>
Dataset<Space, std::remove_const_t<Ts>...> make_dataset(Space space, const DatasetOptions& options,
                                                        HostTensor<Ts>... fields) {
  using Result = Dataset<Space, std::remove_const_t<Ts>...>;
  return detail::preload_or_stream<Result>(
      options, plan(space, options, fields...),
      [&] { return typename Result::preloaded_type(space, options, fields...); },
      [&](const DatasetOptions& streamed) {
        return typename Result::streaming_type(space, streamed, fields...);
      },
      [&](const DatasetOptions& streamed) { return plan(space, streamed, fields...); });
}

}  // namespace resident
