// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// @brief Epochs: a dataset's batches in a seeded, reproducible order, as a range.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "resident/augment.hpp"
#include "resident/batch_view.hpp"
#include "resident/convert.hpp"
#include "resident/dataset_options.hpp"
#include "resident/detail/compact.hpp"
#include "resident/detail/dataset/batch_iterator.hpp"
#include "resident/detail/dataset/consumer_hold.hpp"
#include "resident/detail/dataset/data_token.hpp"
#include "resident/detail/dataset/dataset_core.hpp"
#include "resident/detail/dataset/epoch_resume.hpp"
#include "resident/detail/dataset/layout.hpp"
#include "resident/detail/dataset/row_order.hpp"
#include "resident/detail/dataset/shard_geometry.hpp"
#include "resident/detail/gather/field_transforms.hpp"
#include "resident/detail/gather/gather_ring.hpp"
#include "resident/detail/gather/host_gather.hpp"
#include "resident/detail/gather/kernel_gather.hpp"
#include "resident/detail/gather/transform_pack.hpp"
#include "resident/epoch_options.hpp"
#include "resident/epoch_state.hpp"
#include "resident/error.hpp"
#include "resident/permutation.hpp"
#include "resident/space_traits.hpp"

namespace resident {

/// @brief One epoch of a dataset: `size()` batches, each the same tuple of `BatchView`s as the
/// dataset's `batch(i)` (with the converted field's element type where a conversion is given).
/// Made by `epoch(options, transforms...)` of `DeviceDataset` and `StreamingDataset` (which
/// names it `StreamingEpoch`): one implementation for both, the dataset supplying where a
/// batch's rows are (its allocation, or its chunk slots) and the epoch doing the rest.
///
/// Cost: `Shuffle::none` and `Shuffle::batches` without a conversion or an augmentation are
/// zero-copy: batch `k` is a view of the dataset's rows (preloaded) or of a chunk slot
/// (streamed), and so is `Shuffle::samples` of a stream in whole-epoch order on a space whose
/// gathers run on the device, whose chunks hold the epoch's rows in order already. Every other
/// epoch gathers each batch into a ring of `ring_depth` slots of its own, with the space's
/// gather engine (`space_traits::gather_engine`): on `CudaSpace` one kernel per field on
/// `ds.stream()` (gathering, augmenting and converting in one pass), no host synchronisation; on
/// `HostSpace` the host's copy threads.
/// @note How long a view lives is one rule for every dataset (docs/epochs.md, "How long a view
/// lives"): a view of batch `k` keeps its values until this epoch itself replaces it (a gathered
/// batch by batch `j` with `j % ring_depth == k % ring_depth`, a view of a chunk slot once the
/// reader is `chunk_slots - prefetch_chunks` chunks on; a zero-copy view of a preloaded dataset
/// never), or the epoch ends. Nothing another epoch does changes it: each live epoch holds a
/// gather ring (if it gathers) and chunk slots (on a stream) of its own, lent by the dataset when
/// it is made or, where the space has no room for more, at its first batch once the epoch that
/// holds them has ended (else that batch throws `CapacityError`, before anything is written).
/// Epochs of one dataset may be held and read in any interleaving, each from one thread at a time.
/// On `CudaSpace` the batches are ordered on `ds.stream()`: kernels on that stream see the
/// data; a batch read on another stream needs `wait(k, stream)` before the reads and
/// `release(k, stream)` after them (no-ops on `HostSpace`, so the same code runs on every
/// space), or an epoch bound to that stream (`on(stream)`, `batch(k, stream)`), which does both. An
/// epoch refers to the dataset object it was made from: once that object is moved from, assigned,
/// swapped or destroyed, every use of the epoch (`size()`, `begin()`, `batch()`,
/// ...) throws `resident::Error` saying so; make a new epoch from the dataset that holds the
/// data then. An epoch of a moved-from dataset allocates nothing and throws likewise.
/// Where the training loop stands is `state()` (after the batches it took); the dataset's
/// `resume(options, state, transforms...)` makes the rest of the epoch from it, of this type,
/// in a new process and on the same or another number of ranks (docs/resume.md).
/// The epoch is one type in every translation unit, whichever compiler compiles it: on a space
/// whose gathers run as kernels, a unit compiled by nvcc that makes an epoch of the type compiles
/// its kernels for the whole program (see docs/design.md, "nvcc and g++ in one program").
template <class Owner, class Conversion = NoConversion, class Augment = NoAugmentation>
class Epoch : detail::ConsumerHold<Epoch<Owner, Conversion, Augment>,
                                   typename Owner::space_type::stream_type> {
  using Hold = detail::ConsumerHold<Epoch, typename Owner::space_type::stream_type>;
  friend Hold;
  using Space = typename Owner::space_type;
  using Engine = typename space_traits<Space>::gather_engine;
  using Stored = typename Owner::batch_type;
  using Pass = typename Owner::impl_pass_type;
  static constexpr std::size_t fields = Owner::num_fields;
  static constexpr bool has_conversion = !std::is_same_v<Conversion, NoConversion>;
  static constexpr bool has_augmentation = !std::is_same_v<Augment, NoAugmentation>;
  // Whether every batch is gathered, whatever the shuffle.
  static constexpr bool always_gathers = has_conversion || has_augmentation;

  template <std::size_t Field>
  using stored_t = typename std::tuple_element_t<Field, Stored>::value_type;
  template <std::size_t Field>
  using output_t = typename detail::batch_element<Conversion, Field, stored_t<Field>>::type;

  template <class Sequence>
  struct batch_of;
  template <std::size_t... Field>
  struct batch_of<std::index_sequence<Field...>> {
    using type = std::tuple<BatchView<const output_t<Field>>...>;
  };

 public:
  /// @brief What each batch is: one view per field.
  using batch_type = typename batch_of<std::make_index_sequence<fields>>::type;
  using index_view = BatchView<const std::int64_t>;  ///< What `batch_indices()` returns.
  using stream_type = typename Space::stream_type;   ///< The streams `wait`/`release` order.
  using iterator = detail::BatchIterator<Epoch>;     ///< Input iterator over the batches.

  /// @brief Use the dataset's `epoch(options, transforms...)`.
  /// @throws InvalidArgument when a conversion or an augmentation does not fit its field's
  /// rows, or when the space's gather engine cannot gather the epoch (kernels that no unit of
  /// the program compiled by nvcc made: see the class note); CapacityError when a gathering epoch's
  /// ring (or a stream's chunk slots) does not fit even once the other live epochs end (the dataset
  /// is unchanged).
  /// `resume`: the state of a run that stopped in this epoch (see `EpochState`); the epoch is
  /// then the rest of it, from the batch after the last one that run took.
  /// @throws InvalidArgument also when `resume` is of another epoch or dataset (naming what
  /// differs).
  Epoch(Owner& dataset, EpochOptions options, Conversion conversion = {}, Augment augment = {},
        const EpochState* resume = nullptr)
      : dataset_(&dataset),
        lease_(dataset.impl_core().lease()),
        options_(options),
        transforms_{conversion, augment} {
    if (!lease_.valid()) return;  // every use throws, saying why; nothing to set up
    if constexpr (!std::is_same_v<Augment, NoAugmentation>) dataset.impl_check_augmentation();
    transforms_.prepare(dataset.impl_core().layout(), options, Owner::impl_interleaves);
    gathers_ = always_gathers || !dataset.impl_views(options);
    const detail::EpochStart start =
        resume != nullptr
            ? detail::EpochStateAccess::start(*resume, options, facts(resume->position()))
            : detail::EpochStart{};
    pass_ = dataset.impl_make_pass(lease_.watch(), options, start, gathers_);
    first_ = dataset.impl_order(pass_).first_batch;
    // Some datasets serve a view epoch's batches as views but for a few they must gather (a
    // token stream's padded batch): the ring is theirs from the start all the same.
    const bool gathers_some = gathers_ || dataset.impl_gathers_some(pass_);
    if (!gathers_some) return;
    // Refused when made, before the ring is claimed, rather than at the first batch.
    check_engine(std::make_index_sequence<fields>{});
    claim_ring(true);
  }

  /// @brief Batches in the epoch (of a resumed epoch: those left).
  /// @throws Error once the dataset was moved from, assigned, swapped or destroyed.
  [[nodiscard]] std::size_t size() const {
    lease_.check();
    return dataset_->impl_order(pass_).batches() - first_;
  }
  /// @brief Whether the epoch has no batches (`size() == 0`); throws as `size()` does.
  [[nodiscard]] bool empty() const { return size() == 0; }
  /// @brief The options the epoch was made with.
  [[nodiscard]] const EpochOptions& options() const noexcept { return options_; }
  /// @brief Whether batches are gathered into the ring (else they are zero-copy views, but for
  /// a `TokenDataset`'s padded batches, which are gathered).
  [[nodiscard]] bool gathers() const noexcept { return gathers_; }

  /// @brief Batch `k` of the epoch (`k < size()`); on a stream, waits only if its chunks are
  /// still loading.
  /// @throws std::out_of_range past the end; CapacityError when the epoch's ring (or a stream's
  /// chunk slots) was left for its first batch and the space has no room for it yet (see the
  /// class note); Error once the dataset was moved from, assigned, swapped or destroyed; a
  /// stream's load errors (FormatError for a changed file, CudaError for a failed copy).
  [[nodiscard]] batch_type batch(std::size_t k) {
    if (this->bound_) return batch(k, *this->bound_);
    return take(k);
  }

  /// @brief Batch `k`, ordered on `consumer`: work enqueued on `consumer` from now on sees it
  /// (`wait(k, consumer)`). The batch handed out on a stream before is released behind the work
  /// enqueued on that stream so far (`release`) when the next batch is asked for, on a stream or
  /// not (`batch`, `batch_indices`), so that its memory is written again only once those reads
  /// are done. Enqueue a batch's reads before taking the next; the last batch is released when
  /// the epoch is destroyed or assigned. As cuCollections takes a
  /// stream on each call; `on(stream)` makes it what `batch(k)` and the iterators do. On
  /// `HostSpace` it is `batch(k)`.
  /// @throws what `batch(k)` and `wait` throw; CudaError when the release cannot be recorded.
  [[nodiscard]] batch_type batch(std::size_t k, stream_type consumer) {
    batch_type taken = take(k);
    wait(k, consumer);
    this->held_ = typename Hold::Held{k, consumer};
    return taken;
  }

  /// @brief Binds the epoch to `consumer`: `batch(k)` and the iterators then hand out
  /// `batch(k, consumer)`, as in `for (auto [x, y] : ds.epoch(options).on(stream))`.
  /// @return this epoch (an rvalue epoch is moved into the result).
  Epoch& on(stream_type consumer) & {
    this->bound_ = consumer;
    return *this;
  }
  /// @brief `on(consumer)` of a temporary epoch: the bound epoch, moved out of it.
  [[nodiscard]] Epoch on(stream_type consumer) && {
    this->bound_ = consumer;
    return std::move(*this);
  }

  Epoch(Epoch&&) noexcept = default;  ///< Takes the epoch; the epoch moved from is empty.
  /// @brief Releases what it held, then takes the other's.
  Epoch& operator=(Epoch&&) noexcept = default;
  Epoch(const Epoch&) = delete;
  Epoch& operator=(const Epoch&) = delete;
  /// @brief Releases the batch handed out on a stream last (see `batch(k, stream)`).
  ~Epoch() { release_held_quietly(); }

 private:
  // `batch(k)` with no stream to order it on. The batch handed out on a stream before is
  // released first, whichever way the next is asked for: the reader may move on from its chunk,
  // or the gather of this batch overwrite its slot.
  [[nodiscard]] batch_type take(std::size_t k) {
    check_index(k);
    release_held();
    handed_ = std::max(handed_, k + 1);
    if (ring_pending_) claim_ring(false);
    if constexpr (!always_gathers) {
      if (is_view(k)) return dataset_->impl_view(pass_, first_ + k);
    }
    return views(gather_into_slot(k, true), std::make_index_sequence<fields>{});
  }

  // Releases the batch handed out on a stream last, where this epoch still holds it (a ring
  // slot that a later batch took has had its order from that batch's own release).
  void release_held() {
    if (!this->held_) return;
    const typename Hold::Held held = *this->held_;
    this->held_.reset();
    if (!lease_.valid() || held.batch >= size()) return;
    [[maybe_unused]] const auto scope = space_traits<Space>::device_scope(dataset_->space());
    if (ring_loan_ && !slot_batch_.empty() &&
        slot_batch_[held.batch % slot_batch_.size()] == held.batch)
      ring_loan_->fences().release(held.batch % slot_batch_.size(), held.stream);
    if (is_view(held.batch)) dataset_->impl_release_view(pass_, first_ + held.batch, held.stream);
  }
  // `release_held` where nothing may throw: a failed device has nothing left to order.
  void release_held_quietly() noexcept {
    try {
      release_held();
    } catch (...) {  // NOLINT(bugprone-empty-catch): a destructor reports nothing
    }
  }

 public:
  /// @brief The row ids of batch `k`, in the dataset's space (`std::int64_t`, as PyTorch
  /// indexes), for kernels that gather by themselves; padding positions name the rows that
  /// pad them. Same lifetime as a gathered view.
  /// @throws what `batch(k)` throws; InvalidArgument where the space's gather engine cannot
  /// write them (the kernels of a zero-copy epoch that no unit compiled by nvcc made).
  [[nodiscard]] index_view batch_indices(std::size_t k) {
    check_index(k);
    release_held();  // as `batch(k)` does: the fill may overwrite its slot
    const std::size_t slot = gather_into_slot(k, !is_view(k));
    return index_view(reinterpret_cast<const std::int64_t*>(  // NOLINT: typed view of bytes
                          ring_loan_->data() + slot * ring_.slot_bytes + ring_.index_offset),
                      slices_[slot].rows, Shape{}, slices_[slot].valid);
  }

  /// @brief Orders `consumer` after batch `k`: work enqueued on `consumer` after this call
  /// sees the batch (its views and its `batch_indices(k)`), without a host wait (the
  /// dataset's own `stream()` is ordered already). Call it after `batch(k)` (or
  /// `batch_indices(k)`) and before the batch can be replaced: a gathered batch by
  /// `batch(k + ring_depth)`, a view of a chunk by a batch of another chunk. Pair it with
  /// `release(k, consumer)`. A view of a preloaded dataset needs no order (the upload completed
  /// before the dataset was returned), and no batch on `HostSpace` does (gathers and loads
  /// complete before `batch(k)` returns): nothing is done then but the checks.
  /// @throws std::out_of_range past the end; Error when batch `k` is not there to order (not
  /// asked for yet, or replaced: the message says which), or once the dataset was moved from,
  /// assigned, swapped or destroyed; CudaError when `consumer` cannot wait (a stream of another
  /// device).
  void wait(std::size_t k, stream_type consumer) {
    const std::size_t slot = slot_holding(k, "wait");
    [[maybe_unused]] const auto scope = space_traits<Space>::device_scope(dataset_->space());
    if (slot != no_batch) ring_loan_->fences().wait(slot, consumer);
    if (is_view(k)) dataset_->impl_wait_view(pass_, first_ + k, consumer);
  }

  /// @brief Lets batch `k`'s memory (its ring slot, or its chunk's slot) be written again only
  /// once the work enqueued on `consumer` so far is done: call it after enqueueing the last
  /// read of batch `k` on `consumer` (see `wait`). One consumer stream per batch: the last
  /// release of a batch is the one the next write of its slot waits for (make it wait for other
  /// streams first). Nothing is done where `wait` does nothing.
  /// @throws what `wait` throws; CudaError when the event cannot be recorded on `consumer`.
  void release(std::size_t k, stream_type consumer) {
    const std::size_t slot = slot_holding(k, "release");
    [[maybe_unused]] const auto scope = space_traits<Space>::device_scope(dataset_->space());
    if (slot != no_batch) ring_loan_->fences().release(slot, consumer);
    if (is_view(k)) dataset_->impl_release_view(pass_, first_ + k, consumer);
  }

  /// @brief Where the run stands once the training loop has taken batches `[0, batches)` of
  /// this epoch: what `ds.epoch(options(), state)` resumes from, on this or another world size
  /// (see `EpochState`). Ranks that took the same steps say the same state.
  /// @throws std::out_of_range when `batches > size()`; Error as `size()` does.
  [[nodiscard]] EpochState state(std::size_t batches) const {
    if (batches > size())
      throw std::out_of_range("resident: epoch state after " + std::to_string(batches) +
                              " batches asked of an epoch of " + std::to_string(size()) +
                              "; ask for at most size() batches");
    const detail::EpochOrder& order = dataset_->impl_order(pass_);
    return detail::EpochStateAccess::make(facts(order.position(first_ + batches)), order,
                                          first_ + batches);
  }
  /// @brief `state(b)`, `b` the batches handed to the loop so far: one past the highest batch
  /// `batch(k)` (or an iterator) gave. Batches a ring or a stream prepared ahead do not count.
  /// @throws Error as `size()` does.
  [[nodiscard]] EpochState state() const { return state(handed_); }

  /// @brief The dataset the epoch serves (for what shares its memory, as `to_tensors` does).
  /// @throws Error once that dataset was moved from, assigned, swapped or destroyed.
  [[nodiscard]] const Owner& dataset() const {
    lease_.check();
    return *dataset_;
  }

  /// @brief A lease of this epoch object, valid until it is destroyed or moved from: what
  /// outlives a call (an iterator, a batch of tensors) checks it before using the epoch.
  /// @throws std::bad_alloc when the first lease cannot be made.
  [[nodiscard]] detail::DataLease impl_lease() { return self_.lease(); }

  /// @brief Iterator at the first batch; dereferencing an iterator throws `Error` once this
  /// epoch object is destroyed or moved.
  /// @throws Error as `size()` does.
  [[nodiscard]] iterator begin() {
    lease_.check();
    return iterator(this, 0, impl_lease());
  }
  /// @brief Iterator past the last batch (at `size()`).
  /// @throws Error as `size()` does.
  [[nodiscard]] iterator end() { return iterator(this, size(), impl_lease()); }

 private:
  static constexpr std::size_t no_batch = std::numeric_limits<std::size_t>::max();

  // What the dataset's states say of it, for a state that served `position` rows of the
  // epoch: its shape and the order's dependencies.
  template <std::size_t... Field>
  [[nodiscard]] detail::EpochFacts facts(std::uint64_t position,
                                         std::index_sequence<Field...> /*fields*/) const {
    return detail::epoch_facts<fields>(
        dataset_->impl_core().geometry(), dataset_->impl_row_shapes(),
        {detail::element_kind<stored_t<Field>>()...}, dataset_->impl_order_key(options_, position));
  }
  [[nodiscard]] detail::EpochFacts facts(std::uint64_t position) const {
    return facts(position, std::make_index_sequence<fields>{});
  }

  void check_index(std::size_t k) const {
    if (k >= size())
      throw std::out_of_range("resident: epoch batch " + std::to_string(k) +
                              " is out of range; the epoch has " + std::to_string(size()) +
                              " batches; use an index below " + std::to_string(size()));
  }

  // Whether batch k is a view of the dataset's memory rather than gathered into the ring.
  [[nodiscard]] bool is_view(std::size_t k) const {
    return !gathers_ && !dataset_->impl_gathers_batch(pass_, first_ + k);
  }

  // The ring slot that holds batch k for `wait` and `release` (`call`), or `no_batch` when the
  // batch is a view, not in the ring.
  [[nodiscard]] std::size_t slot_holding(std::size_t k, const char* call) const {
    check_index(k);
    const std::size_t slot = ring_loan_ ? k % slot_batch_.size() : no_batch;
    if (slot != no_batch && slot_batch_[slot] == k) return slot;
    if (is_view(k)) return no_batch;
    throw Error("resident: " + std::string(call) + "(" + std::to_string(k) +
                ", stream) on a gathering epoch found batch " + std::to_string(k) +
                " not in the ring (" +
                (slot == no_batch || slot_batch_[slot] == no_batch
                     ? std::string("nothing gathered into its slot yet, or its gather failed")
                     : "its slot holds batch " + std::to_string(slot_batch_[slot])) +
                "); call it after batch(k) and before batch(k + ring_depth)");
  }

  // Each field's element bytes in a ring slot: the planned width (see `ring_element_bytes`)
  // or the conversion's output, whichever is wider.
  template <std::size_t... Field>
  [[nodiscard]] std::array<std::size_t, fields> ring_elements(
      std::index_sequence<Field...> /*fields*/) const {
    const std::size_t width = dataset_->impl_core().config().ring_element_bytes;
    return {std::max(detail::ring_element_bytes(sizeof(stored_t<Field>), width),
                     sizeof(output_t<Field>))...};
  }

  // Borrows a ring of the dataset's. `defer`: when the space has no room for another ring while
  // other live epochs hold the dataset's, leave it for the first batch (by then they may have
  // ended, as in `e = ds.epoch(...)`, which makes the next epoch before the last one goes).
  void claim_ring(bool defer) {
    const auto& core = dataset_->impl_core();
    const auto ring = detail::make_ring_layout(
        core.layout(), ring_elements(std::make_index_sequence<fields>{}), core.config().ring_depth);
    auto& rings = dataset_->impl_rings();
    try {
      ring_loan_ = rings.lend(lease_.watch(), core, ring.total_bytes, ring.depth, dataset_->bytes(),
                              Owner::impl_holding);
    } catch (const CapacityError&) {
      if (!defer || rings.lent() == 0) throw;
      ring_pending_ = true;
      return;
    }
    ring_pending_ = false;
    ring_ = ring;
    slot_batch_.assign(ring_.depth, no_batch);
    slot_has_fields_.assign(ring_.depth, false);
    slices_.assign(ring_.depth, detail::BatchSlice{});
  }

  // Writes batch k (its fields when `with_fields`, its row ids always) into its ring slot,
  // unless the slot holds it already; returns the slot.
  std::size_t gather_into_slot(std::size_t k, bool with_fields) {
    if (!ring_loan_) claim_ring(false);  // a zero-copy epoch asked for row ids, or deferred
    const std::size_t slot = k % slot_batch_.size();
    if (slot_batch_[slot] == k && (slot_has_fields_[slot] || !with_fields)) return slot;
    // The slot's previous batch is gone as soon as the fill starts: a fill that throws half-way
    // must not leave the slot claiming it.
    slot_batch_[slot] = no_batch;
    const auto gathered = dataset_->impl_gather(pass_, first_ + k);
    fill(slot, gathered, with_fields, std::make_index_sequence<fields>{});
    if (with_fields) dataset_->impl_check_gathered(pass_);  // a file read in place is unchanged
    slices_[slot] = gathered.slice;
    slot_batch_[slot] = k;
    slot_has_fields_[slot] = with_fields;
    return slot;
  }

  // The engine's view of field `Field` of batch `gathered`, gathered into the ring slot at
  // `slot`.
  template <std::size_t Field, class Gathered>
  [[nodiscard]] auto gather_field(std::byte* slot, const Gathered& gathered) const {
    return detail::GatherField{
        dataset_->template impl_rows<Field>(pass_, gathered), ring_field<Field>(slot),
        dataset_->impl_core().layout().row_elements[Field],   transforms_.template op<Field>(),
        transforms_.template augmentation<Field>(),           transforms_.key};
  }

  // Refuses, when the epoch is made, what the space's gather engine cannot gather.
  template <std::size_t... Field>
  void check_engine(std::index_sequence<Field...> /*fields*/) const {
    using Gathered = decltype(dataset_->impl_gather(std::declval<Pass&>(), std::size_t{}));
    using Order = std::decay_t<decltype(std::declval<const Gathered&>().order)>;
    Engine::template check<Order, stream_type,
                           decltype(gather_field<Field>(nullptr,
                                                        std::declval<const Gathered&>()))...>();
  }

  // Batch `gathered` into ring slot `slot`: every field (gathered, augmented, converted in one
  // pass) and the row ids when `with_fields`, else the row ids alone.
  template <class Gathered, std::size_t... Field>
  void fill(std::size_t slot, const Gathered& gathered, bool with_fields,
            std::index_sequence<Field...> /*fields*/) {
    std::byte* base = ring_loan_->data() + slot * ring_.slot_bytes;
    auto* indices = reinterpret_cast<std::int64_t*>(base + ring_.index_offset);  // NOLINT
    // The kernels go to the dataset's device, whichever the caller has current.
    [[maybe_unused]] const auto scope = space_traits<Space>::device_scope(dataset_->space());
    if (!engine_)
      engine_.emplace(detail::GatherSetup{dataset_->impl_core().config().gather_threads,
                                          batch_bytes(std::make_index_sequence<fields>{})});
    const auto& fences = ring_loan_->fences();
    fences.before_fill(slot, dataset_->stream());
    if (with_fields)
      engine_->gather(gathered.order, gathered.slice.rows, indices, dataset_->stream(),
                      gather_field<Field>(base, gathered)...);
    else
      engine_->fill_indices(gathered.order, gathered.slice.rows, indices, dataset_->stream());
    fences.after_fill(slot, dataset_->stream());
  }

  // Bytes of the largest batch as gathered, every field in its output type: what sizes the
  // engine's work (a host gather's copy team).
  template <std::size_t... Field>
  [[nodiscard]] std::size_t batch_bytes(std::index_sequence<Field...> /*fields*/) const noexcept {
    const auto& core = dataset_->impl_core();
    return core.geometry().largest_batch_rows() *
           (std::size_t{0} + ... + (core.layout().row_elements[Field] * sizeof(output_t<Field>)));
  }

  template <std::size_t Field>
  [[nodiscard]] output_t<Field>* ring_field(std::byte* slot) const noexcept {
    return reinterpret_cast<output_t<Field>*>(slot + ring_.offsets[Field]);  // NOLINT: typed
  }

  template <std::size_t... Field>
  [[nodiscard]] batch_type views(std::size_t slot, std::index_sequence<Field...> /*fields*/) const {
    const std::byte* base = ring_loan_->data() + slot * ring_.slot_bytes;
    const detail::BatchSlice& slice = slices_[slot];
    return batch_type(BatchView<const output_t<Field>>(
        reinterpret_cast<const output_t<Field>*>(base + ring_.offsets[Field]),  // NOLINT
        slice.rows, transforms_.template row_shape<Field>(dataset_->impl_row_shapes()[Field]),
        slice.valid)...);
  }

  Owner* dataset_;
  detail::DataLease lease_;  // checked before every use of `dataset_`
  EpochOptions options_;
  detail::FieldTransforms<Conversion, Augment, Stored> transforms_;
  Pass pass_{};           // the dataset's order of this epoch; made only while the lease is valid
  bool gathers_ = false;  // whether batches are gathered into the ring
  detail::RingLayout<fields> ring_{};  // this epoch's slots (when `ring_loan_` holds a ring)
  typename detail::GatherRings<Space>::Loan ring_loan_;  // the ring lent to this epoch
  bool ring_pending_ = false;  // a ring is due at the first batch (see `claim_ring`)
  std::vector<std::size_t> slot_batch_;
  std::vector<bool> slot_has_fields_;
  std::vector<detail::BatchSlice> slices_;  // of each slot's batch
  std::optional<Engine> engine_;            // the space's gather engine, made at the first gather
  std::size_t first_ = 0;   // the pass's batch that is this epoch's batch 0 (a resumed epoch)
  std::size_t handed_ = 0;  // one past the highest batch handed out
  detail::DataToken self_;  // this epoch object's, for its iterators
};

/// @brief The epoch `Owner::epoch(options, transforms...)` makes.
template <class Owner, class... Transforms>
using epoch_for =
    Epoch<Owner, typename detail::TransformPack<Owner::num_fields, Transforms...>::conversion,
          typename detail::TransformPack<Owner::num_fields, Transforms...>::augmentation>;

namespace detail {

/// @brief Makes the epoch of `owner` that its `epoch(options, transforms...)` returns, the
/// transforms sorted into the conversion and the augmentation (see `TransformPack`). A static
/// member, so that argument-dependent lookup never offers it to a caller's own unqualified
/// `make(dataset, ...)`.
struct EpochMaker {
  template <class Owner, class... Transforms>
  static epoch_for<Owner, Transforms...> make(Owner& owner, const EpochOptions& options,
                                              const Transforms&... transforms) {
    return resume(owner, options, nullptr, transforms...);
  }
  /// `make`, resumed from `state` where it is not null.
  template <class Owner, class... Transforms>
  static epoch_for<Owner, Transforms...> resume(Owner& owner, const EpochOptions& options,
                                                const EpochState* state,
                                                const Transforms&... transforms) {
    using Pack = TransformPack<Owner::num_fields, Transforms...>;
    return {owner, options, Pack::template pick<typename Pack::conversion>(transforms...),
            Pack::template pick<typename Pack::augmentation>(transforms...), state};
  }
};

/// @brief What a dataset makes its epochs with, `epoch` and `resume`: the base of every
/// owner (CRTP: `Owner` is the dataset), so that each has them alike.
template <class Owner>
class EpochSource {
 public:
  /// @brief One epoch (an `epoch_for<Owner, Transforms...>`: the return type is deduced so
  /// that the base names no member of the dataset it is the base of) in the order `options`
  /// gives, with the transforms named, one pass per
  /// field: `ds.epoch(options)`, `ds.epoch(options, convert<0>(Normalize{1.0f / 255, 0}))`
  /// (field 0 converted), `ds.epoch(options, augment<0>(ImageLayout::chw(3, 32, 32),
  /// RandomCrop{4}, RandomFlip{}))` (field 0's images augmented; not a `TokenDataset`'s
  /// windows), or both. See `Epoch` for what each shuffle costs and how long a view lives;
  /// every batch of an epoch with a transform is gathered into the ring. A stream's epoch ends
  /// the dataset's own unshuffled pass (`batch(i)`), whose chunk slots it may take.
  /// @throws InvalidArgument when a transform does not fit its field's rows; CapacityError when
  /// a gathering epoch's ring does not fit (a stream's was planned with its chunk slots: only a
  /// conversion wider than `DatasetOptions::ring_element_bytes`, or another live gathering
  /// epoch, needs another; see `Epoch` for when a live epoch holds the only one).
  template <class... Transforms>
  [[nodiscard]] auto epoch(EpochOptions options = {}, Transforms... transforms) {
    return make(options, nullptr, transforms...);
  }
  /// @brief The rest of `options`' epoch, from where a run stopped: `state` is what an epoch of
  /// this data said (`Epoch::state()`), on this world size or another one that divides the
  /// parts (see `EpochState`, docs/resume.md). The same transforms as `epoch`, keyed alike, so
  /// the batches left are those the run would have had. Costs what making an epoch costs: no
  /// earlier batch is gathered, and a stream starts at the chunk of the first batch left. A
  /// stream in window order resumes only on the world size and batch size it stopped with.
  /// @throws what `epoch` throws; InvalidArgument when `state` is of another epoch (seed,
  /// number, shuffle) or of a dataset of another shape, order or remainder, naming what differs.
  template <class... Transforms>
  [[nodiscard]] auto resume(EpochOptions options, const EpochState& state,
                            Transforms... transforms) {
    return make(options, &state, transforms...);
  }

 private:
  template <class... Transforms>
  [[nodiscard]] auto make(const EpochOptions& options, const EpochState* state,
                          const Transforms&... transforms) {
    using Pack = TransformPack<Owner::num_fields, Transforms...>;
    static_assert(
        Owner::impl_augments || std::is_same_v<typename Pack::augmentation, NoAugmentation>,
        "token windows are not images: augment<>() does not apply to a TokenDataset "
        "(convert<>() does)");
    return EpochMaker::resume(static_cast<Owner&>(*this), options, state, transforms...);
  }
};

}  // namespace detail

}  // namespace resident
