// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// @brief `StreamingDataset<Space, Ts...>`: the fallback for data larger than the space, with
/// the batch interface of `DeviceDataset`; chunks of batches cycle through a few slots in the
/// space while the next ones load (`load_streaming_dataset`, in load_dataset.hpp, streams
/// `.npy` files).

#include <array>
#include <cstddef>
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
#include "resident/detail/batch_iterator.hpp"
#include "resident/detail/chunk_rows.hpp"
#include "resident/detail/chunk_streamer.hpp"
#include "resident/detail/copy_workers.hpp"
#include "resident/detail/dataset_core.hpp"
#include "resident/detail/gather_ring.hpp"
#include "resident/detail/host_chunk_transport.hpp"
#include "resident/detail/host_gather.hpp"
#include "resident/detail/layout.hpp"
#include "resident/detail/pass_order.hpp"
#include "resident/detail/row_source.hpp"
#include "resident/detail/stream_layout.hpp"
#include "resident/detail/tenancy.hpp"
#include "resident/epoch.hpp"
#include "resident/epoch_options.hpp"
#include "resident/error.hpp"
#include "resident/host_tensor.hpp"
#include "resident/memory_space.hpp"
#include "resident/space_traits.hpp"

namespace resident {

template <class Owner, class Conversion = NoConversion, bool Kernels = detail::kernels_available,
          class Augment = NoAugmentation>
class StreamingEpoch;

namespace detail {
template <class Space, class... Ts>
struct StreamFromSources;
}  // namespace detail

/// @brief A dataset streamed through the space: the same constructor arguments, the same
/// `num_batches()` / `batch(i)` / `epoch()` and the same batch views as `DeviceDataset`, for data
/// larger than the space (or than a `HostSpace::with_budget`).
///
/// The batches are cut exactly as a `DeviceDataset` cuts them (sharding, remainder, padding:
/// `Shuffle::none` batches are equal byte for byte) and grouped into chunks of
/// `StreamOptions::chunk_batches`. The space holds a ring of `ring_chunks` chunk slots (and, from
/// the first gathering epoch on, its batch ring: `ring_bytes()`); a producer thread keeps
/// `prefetch_chunks` chunks loading ahead of the one being read (on `CudaSpace`: on a copy stream
/// of its own, through two page-locked staging buffers, with events ordering the copies against
/// `stream()`; nothing waits on the host but a reader that outruns the copies).
///
/// Shuffling: `Shuffle::batches` permutes the chunk order and, within each chunk, its batch
/// order (zero-copy: a batch holds consecutive rows). `Shuffle::samples` permutes the chunk order
/// the same way, then groups consecutive positions of it into windows of `window_chunks()`
/// chunks, all resident at once, and deals each batch from a seeded permutation of all the rows
/// of its window (keyed by seed, epoch and window: the same on every space), so that rows of
/// different chunks mix within a batch; those batches are gathered into a ring of
/// `ring_depth` batches (see `StreamingEpoch` for how long a gathered view lives). Under either
/// shuffle a last batch that is short (or padded) on some rank stays last, with its chunk, as
/// in a `DeviceDataset`'s shuffled epochs, so that preloaded and streamed ranks of a job take
/// steps of the same sizes. A window is still narrower than `DeviceDataset`'s whole-epoch
/// `Shuffle::samples`: a row meets only the rows of its window (`window_rows()`).
///
/// Conversions and augmentations (`epoch(options, convert<F>(op))`, `augment<F>(...)` or both)
/// gather every batch into that ring, exactly as `DeviceDataset` does: on `CudaSpace` by a
/// kernel per field on `stream()`, ordered after the chunks' copies; on `HostSpace` by the
/// host's copy threads. An augmentation depends only on the row and the (seed, epoch), so a
/// streamed row is augmented as a preloaded one; under `Shuffle::none` the batches are those
/// of the `DeviceDataset` bit for bit.
///
/// @note Sources are read every epoch: host tensors given to the constructor must outlive the
/// dataset (unlike `DeviceDataset`, which reads them only during construction); files (see
/// `load_streaming_dataset`) are held open and must not change. A view of a chunk stays valid
/// until the reader reaches the chunk `ring_chunks - prefetch_chunks` positions later; on
/// `CudaSpace`, work that reads it must be enqueued on `stream()` before the reader moves on
/// to another chunk, or on another stream ordered by `StreamingEpoch::wait` and `release`. One pass
/// at a time: asking an older epoch (or `batch(i)`) for a batch restarts that pass at the batch's
/// chunk, which costs a synchronous load. A chunk that fails to load (a copy, a file cut short)
/// fails its batch once with its own error; the next batch asked for restarts the pass at that
/// batch's chunk. Use from one thread.
/// Move-only, by the rule of zero: a move takes the ring, the sources and the running pass and
/// leaves the dataset moved from empty (0 rows, 0 batches); destruction (or a move assignment
/// over the dataset) stops the producer, waits for copies in flight and releases the ring.
template <class Space, class... Ts>
class StreamingDataset : public DatasetAccessors<StreamingDataset<Space, Ts...>, Space, Ts...> {
 public:
  using typename DatasetAccessors<StreamingDataset, Space, Ts...>::batch_type;
  using DatasetAccessors<StreamingDataset, Space, Ts...>::num_fields;
  using epoch_type = StreamingEpoch<StreamingDataset>;  ///< What `epoch()` returns.

  /// @brief Checks that the ring fits, allocates it, and starts nothing yet: the first batch
  /// or epoch starts the stream.
  /// @param space where to put the ring; copies of a space share its accounting
  /// @param options batch size, remainder policy, reserve, sharding, stream, copy threads and
  /// `streaming` (chunking and prefetch)
  /// @param fields host tensors with equal row counts, read every epoch: keep them alive
  /// @throws InvalidArgument for mismatched rows, batch size 0, overflow or invalid
  /// `StreamOptions`; CapacityError when the ring does not fit; CudaError when CUDA fails.
  StreamingDataset(Space space, const DatasetOptions& options,
                   const HostTensor<const Ts>&... fields)
      : StreamingDataset(
            std::move(space), options, detail::make_layout(options, fields...),
            {detail::RowSource::memory(fields.data(), fields.rows(), fields.row_bytes())...},
            {fields.row_shape()...}) {}

  /// @brief Exchanges the contents of two datasets.
  void swap(StreamingDataset& other) noexcept { std::swap(*this, other); }

  /// @brief Bytes of the chunk ring, the allocation the dataset is made with.
  [[nodiscard]] std::size_t bytes() const noexcept { return streamer_ ? streamer_->bytes() : 0; }
  /// @brief Bytes of the batch ring of gathering epochs: 0 until the first one is made.
  [[nodiscard]] std::size_t ring_bytes() const noexcept { return ring_.bytes(); }
  /// @brief Bytes the fields would take preloaded (what did not fit).
  [[nodiscard]] std::size_t data_bytes() const noexcept { return core_.layout().total_bytes; }
  /// @brief Batches per chunk (`StreamOptions::chunk_batches`, or the automatic size; at most
  /// the batches).
  [[nodiscard]] std::size_t chunk_batches() const noexcept { return stream_layout().chunk_batches; }
  /// @brief Chunks per epoch.
  [[nodiscard]] std::size_t num_chunks() const noexcept { return stream_layout().chunks; }
  /// @brief Slots of the ring: `StreamOptions::ring_chunks`, or one per chunk when there are
  /// fewer chunks (at least 1).
  [[nodiscard]] std::size_t ring_chunks() const noexcept { return stream_layout().ring_chunks; }
  /// @brief Chunks loaded ahead of the one being read: `StreamOptions::prefetch_chunks`, at
  /// most `ring_chunks() - 1`.
  [[nodiscard]] std::size_t prefetch_chunks() const noexcept {
    return stream_layout().prefetch_chunks;
  }
  /// @brief Chunks in one `Shuffle::samples` window: every chunk when each has a slot of its
  /// own (`num_chunks() <= StreamOptions::ring_chunks`), else the slots the prefetch leaves,
  /// `ring_chunks() - prefetch_chunks()`; at most 16. Raise `StreamOptions::ring_chunks` for
  /// a wider window.
  [[nodiscard]] std::size_t window_chunks() const noexcept { return stream_layout().window_chunks; }
  /// @brief Rows in one `Shuffle::samples` window (`window_chunks()` chunks): a batch mixes
  /// rows of its window only.
  [[nodiscard]] std::size_t window_rows() const noexcept {
    return stream_layout().window_chunks * stream_layout().chunk_batches *
           core_.config().batch_size;
  }

  /// @brief Batch `index` of an unshuffled epoch: the same rows as `DeviceDataset::batch`.
  /// Reading batches in order streams; a jump backwards reloads from the batch's chunk.
  /// @throws std::out_of_range when `index >= num_batches()`; FormatError when a source file
  /// was truncated or removed; CudaError when a copy fails.
  [[nodiscard]] batch_type batch(std::size_t index) {
    impl_check_index(index);
    return impl_serve(streamer_->plain_order(), index);
  }

  /// @brief One epoch in the order `options` gives (see the class note on shuffling).
  /// @throws CapacityError when a `Shuffle::samples` epoch's ring does not fit.
  template <bool Kernels = detail::kernels_available>
  [[nodiscard]] StreamingEpoch<StreamingDataset, NoConversion, Kernels> epoch(
      EpochOptions options = {}) {
    return {*this, options};
  }

  /// @brief One epoch whose batches hold field `Field` converted by `conversion` (e.g.
  /// `convert<0>(Normalize{1.0f / 255, 0})`), gathered into the ring.
  /// @throws CapacityError when the ring does not fit.
  template <std::size_t Field, class Op, bool Kernels = detail::kernels_available>
  [[nodiscard]] StreamingEpoch<StreamingDataset, FieldConversion<Field, Op>, Kernels> epoch(
      EpochOptions options, FieldConversion<Field, Op> conversion) {
    static_assert(Field < num_fields, "the converted field is past the dataset's fields");
    return {*this, options, conversion};
  }

  /// @brief One epoch whose batches hold field `Field`'s images augmented by `augmentation`,
  /// gathered into the ring under every `Shuffle` (see `DeviceDataset::epoch`).
  /// @throws InvalidArgument when the image layout or an op does not fit the field's rows;
  /// CapacityError when the ring does not fit.
  template <std::size_t Field, bool Kernels = detail::kernels_available>
  [[nodiscard]] StreamingEpoch<StreamingDataset, NoConversion, Kernels, FieldAugmentation<Field>>
  epoch(EpochOptions options, FieldAugmentation<Field> augmentation) {
    static_assert(Field < num_fields, "the augmented field is past the dataset's fields");
    return {*this, options, NoConversion{}, augmentation};
  }

  /// @brief One epoch whose batches are augmented, converted, then cut out, in one pass per
  /// field: `ds.epoch(options, convert<0>(normalize), augment<0>(image, ops...))`.
  template <std::size_t Field, class Op, std::size_t Augmented,
            bool Kernels = detail::kernels_available>
  [[nodiscard]] StreamingEpoch<StreamingDataset, FieldConversion<Field, Op>, Kernels,
                               FieldAugmentation<Augmented>>
  epoch(EpochOptions options, FieldConversion<Field, Op> conversion,
        FieldAugmentation<Augmented> augmentation) {
    static_assert(Field < num_fields, "the converted field is past the dataset's fields");
    static_assert(Augmented < num_fields, "the augmented field is past the dataset's fields");
    return {*this, options, conversion, augmentation};
  }

  /// @cond impl
  // Implementation access, as Kokkos' `impl_` members: for `StreamingEpoch` and `Dataset`,
  // not part of the API.
  [[nodiscard]] const detail::DatasetCore<Space, num_fields>& impl_core() const noexcept {
    return core_;
  }
  [[nodiscard]] detail::DatasetCore<Space, num_fields>& impl_core() noexcept { return core_; }
  [[nodiscard]] detail::ChunkStreamer<Space, num_fields>& impl_streamer() noexcept {
    return *streamer_;
  }
  [[nodiscard]] detail::GatherRing<Space>& impl_ring() noexcept { return ring_; }
  [[nodiscard]] const std::array<Shape, num_fields>& impl_row_shapes() const noexcept {
    return row_shapes_;
  }
  void impl_check_index(std::size_t index) const {
    if (index >= core_.num_batches()) core_.throw_batch_out_of_range(index, "streaming dataset");
  }
  // Epoch batch k of `order`, checked against the batches first.
  [[nodiscard]] batch_type impl_serve(const detail::PassOrder& order, std::size_t k) {
    impl_check_index(k);
    return views(streamer_->serve(order, k), std::index_sequence_for<Ts...>{});
  }
  /// @endcond

 private:
  friend struct detail::StreamFromSources<Space, Ts...>;

  // Streams from prepared row sources (see `load_streaming_dataset`).
  // (`sizeof...(Ts)`, not `num_fields`: the deduction guides synthesised from constructors
  // see no member of a dependent base.)
  StreamingDataset(Space space, const DatasetOptions& options,
                   const detail::DatasetLayout<sizeof...(Ts)>& layout,
                   std::array<detail::RowSource, sizeof...(Ts)> sources,
                   std::array<Shape, sizeof...(Ts)> row_shapes)
      : row_shapes_(row_shapes) {
    const std::size_t reserve = detail::reserve_for(space, options);
    const detail::CapacityVerdict capacity = detail::check_capacity(space, reserve, 0);
    const auto stream = detail::make_stream_layout(layout, options, capacity.usable_bytes());
    const detail::CapacityVerdict verdict = capacity.needing(stream.total_bytes);
    if (!verdict.fits)
      throw verdict.refusal("even the streaming ring (" + std::to_string(stream.ring_chunks) +
                            " chunks of " + std::to_string(stream.chunk_batches) +
                            " batches) does not fit; " + detail::stream_ring_advice(options));
    detail::DatasetCore<Space, num_fields> core(std::move(space), options, reserve, layout);
    streamer_ = std::make_unique<detail::ChunkStreamer<Space, num_fields>>(
        core.space(), core.stream(), core.stream_keep_alive(), layout, stream, std::move(sources),
        detail::upload_thread_count(options.upload_threads, stream.slot_bytes));
    stream_layout_ = detail::ResetOnMove<detail::StreamLayout<num_fields>>(stream);
    core_ = std::move(core);
  }

  [[nodiscard]] const detail::StreamLayout<num_fields>& stream_layout() const noexcept {
    return stream_layout_.get();
  }

  template <std::size_t... Field>
  [[nodiscard]] batch_type views(
      const typename detail::ChunkStreamer<Space, num_fields>::Served& served,
      std::index_sequence<Field...> /*fields*/) const {
    return batch_type(
        BatchView<const Ts>(reinterpret_cast<const Ts*>(  // NOLINT: typed view of the slot's bytes
                                served.slot + stream_layout().offsets[Field] +
                                served.first_row * core_.layout().row_bytes[Field]),
                            served.slice.rows, row_shapes_[Field], served.slice.valid)...);
  }

  // The streamer shares the ownership of the core's stream, so that its producer is joined and
  // its copies drained before the stream goes, whichever member a destruction or a move
  // assignment releases first.
  detail::DatasetCore<Space, num_fields> core_;
  detail::ResetOnMove<detail::StreamLayout<num_fields>> stream_layout_;
  std::array<Shape, num_fields> row_shapes_{};
  std::unique_ptr<detail::ChunkStreamer<Space, num_fields>> streamer_;
  detail::GatherRing<Space> ring_;  // of gathering epochs, made by the first
};

/// Deduces the field types from the tensors: `StreamingDataset ds(space, opt, x, y)`.
template <class Space, class... Ts>
StreamingDataset(Space, DatasetOptions, HostTensor<Ts>...)
    -> StreamingDataset<Space, std::remove_const_t<Ts>...>;

namespace detail {

/// @brief Makes a `StreamingDataset` from prepared row sources, for the file loaders.
template <class Space, class... Ts>
struct StreamFromSources {
  static StreamingDataset<Space, Ts...> make(Space space, const DatasetOptions& options,
                                             const DatasetLayout<sizeof...(Ts)>& layout,
                                             std::array<RowSource, sizeof...(Ts)> sources,
                                             std::array<Shape, sizeof...(Ts)> row_shapes) {
    return StreamingDataset<Space, Ts...>(std::move(space), options, layout, std::move(sources),
                                          row_shapes);
  }
};

}  // namespace detail

/// @brief One epoch of a `StreamingDataset`: `size()` batches, each the same tuple of views as
/// `batch(i)` (with the converted field's element type where a conversion is given). Made by
/// `StreamingDataset::epoch`. It refers to the dataset object it was made from: once that is
/// moved from, assigned, swapped or destroyed, every use throws `Error` saying so (as `Epoch`
/// does).
///
/// `Shuffle::none` and `Shuffle::batches` without a conversion or an augmentation serve views
/// of the chunk slots (zero-copy). Every other epoch gathers each batch into the dataset's ring
/// of `ring_depth` batches: a gathered view stays valid until the epoch gathers batch
/// `k + ring_depth`; `wait` and `release` then order the ring slot (as `Epoch`'s do), and one
/// gathering epoch at a time per dataset: a newer one takes the ring, and the older one then
/// throws `Error`.
template <class Owner, class Conversion, bool Kernels, class Augment>
class StreamingEpoch {
  using Space = typename Owner::space_type;
  using Stored = typename Owner::batch_type;
  static constexpr std::size_t fields = Owner::num_fields;
  static constexpr bool always_gathers =
      !std::is_same_v<Conversion, NoConversion> || !std::is_same_v<Augment, NoAugmentation>;

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
  using stream_type = typename Owner::stream_type;         ///< The streams `wait`/`release` order.
  using iterator = detail::BatchIterator<StreamingEpoch>;  ///< Input iterator over batches.

  /// @brief Use `StreamingDataset::epoch`.
  /// @throws InvalidArgument when a conversion or an augmentation does not fit its field's
  /// rows; CapacityError when a gathering epoch's ring does not fit (the dataset is unchanged).
  StreamingEpoch(Owner& dataset, EpochOptions options, Conversion conversion = {},
                 Augment augment = {})
      : dataset_(&dataset),
        lease_(dataset.impl_core().lease()),
        options_(options),
        transforms_{conversion, augment} {
    if (!lease_.valid()) return;  // every use throws, saying why; nothing to set up
    const detail::DatasetCore<Space, fields>& core = dataset.impl_core();
    transforms_.check(core.layout(), options);
    order_ = dataset.impl_streamer().make_order(options);
    if (gathers()) claim_ring();
  }

  /// @brief Batches in the epoch.
  /// @throws Error once the dataset was moved from, assigned, swapped or destroyed.
  [[nodiscard]] std::size_t size() const {
    lease_.check();
    return dataset_->num_batches();
  }
  /// @brief Whether the epoch has no batches (`size() == 0`); throws as `size()` does.
  [[nodiscard]] bool empty() const { return size() == 0; }
  /// @brief The options the epoch was made with.
  [[nodiscard]] const EpochOptions& options() const noexcept { return options_; }
  /// @brief Whether batches are gathered into the ring (else they are views of the chunks).
  [[nodiscard]] bool gathers() const noexcept {
    return always_gathers || options_.shuffle == Shuffle::samples;
  }

  /// @brief Batch `k` of the epoch (`k < size()`); waits only if its chunks are still loading.
  /// @throws std::out_of_range past the end; the errors of `StreamingDataset::batch`;
  /// InvalidArgument for a gathering epoch on a device space in a translation unit not
  /// compiled by nvcc; Error once the dataset was moved from, assigned, swapped or destroyed,
  /// or once a newer gathering epoch took the ring.
  [[nodiscard]] batch_type batch(std::size_t k) {
    lease_.check();
    if constexpr (!always_gathers) {
      if (!gathers()) return dataset_->impl_serve(order_, k);
    }
    dataset_->impl_check_index(k);
    return materialize(k, std::make_index_sequence<fields>{});
  }

  /// @brief Orders `consumer` after batch `k`: work enqueued on `consumer` after this call sees
  /// the batch, without a host wait (the dataset's own `stream()` is ordered already). A view
  /// of a chunk: call it after `batch(k)` and before the reader asks for a batch of another
  /// chunk; a gathered batch: after `batch(k)` and before `batch(k + ring_depth)`. Pair it with
  /// `release(k, consumer)`. On spaces whose loads and gathers complete on the host
  /// (`HostSpace`) it checks the call and does nothing else.
  /// @throws std::out_of_range past the end; Error when batch `k`'s chunk is not the one the
  /// reader holds (not asked for yet, or the reader moved on), or its gathered slot holds
  /// another batch, or once the dataset was moved from, assigned, swapped or destroyed;
  /// CudaError when `consumer` cannot wait.
  void wait(std::size_t k, stream_type consumer) {
    lease_.check();
    dataset_->impl_check_index(k);
    if (gathers()) {
      const std::size_t slot = slot_holding(k, "wait");
      [[maybe_unused]] const auto scope = space_traits<Space>::device_scope(dataset_->space());
      dataset_->impl_ring().fences().wait(slot, consumer);
      return;
    }
    auto& streamer = dataset_->impl_streamer();
    streamer.wait(streamer.held_slot(order_, k, "wait"), consumer);
  }

  /// @brief Lets batch `k`'s memory be written again only once the work enqueued on `consumer`
  /// so far is done: a chunk's slot (the dataset's stream waits for `consumer` before it gives
  /// the chunk up) or a gathered batch's ring slot. Call it after enqueueing the last read of
  /// batch `k` on `consumer`, in the same window as `wait`.
  /// @throws what `wait` throws; CudaError when the order cannot be recorded.
  void release(std::size_t k, stream_type consumer) {
    lease_.check();
    dataset_->impl_check_index(k);
    if (gathers()) {
      const std::size_t slot = slot_holding(k, "release");
      [[maybe_unused]] const auto scope = space_traits<Space>::device_scope(dataset_->space());
      dataset_->impl_ring().fences().release(slot, consumer);
      return;
    }
    auto& streamer = dataset_->impl_streamer();
    (void)streamer.held_slot(order_, k, "release");
    streamer.join(consumer);
  }

  /// @brief Iterator at the first batch; dereferencing an iterator throws `Error` once this
  /// epoch object is destroyed or moved.
  /// @throws Error as `size()` does.
  [[nodiscard]] iterator begin() {
    lease_.check();
    return iterator(this, 0, self_.lease());
  }
  /// @brief Iterator past the last batch (at `size()`).
  /// @throws Error as `size()` does.
  [[nodiscard]] iterator end() { return iterator(this, size(), self_.lease()); }

 private:
  static constexpr std::size_t no_batch = static_cast<std::size_t>(-1);

  void claim_ring() {
    const detail::DatasetCore<Space, fields>& core = dataset_->impl_core();
    ring_ = detail::make_ring_layout(core.layout(), transforms_.ring_element_sizes(),
                                     core.config().ring_depth);
    generation_ = dataset_->impl_ring().claim(core.space(), core.config(), ring_.total_bytes,
                                              ring_.depth, dataset_->bytes(), "the streaming ring");
    slot_batch_.assign(ring_.depth, no_batch);
    slices_.assign(ring_.depth, detail::BatchSlice{});
  }

  void check_ring_is_ours() const {
    if (generation_ != dataset_->impl_ring().generation())
      throw Error(
          "resident: this epoch's ring was taken by a newer gathering epoch of the same "
          "dataset; iterate one gathering epoch at a time (make the epoch again to go on)");
  }

  [[nodiscard]] std::size_t slot_holding(std::size_t k, const char* call) const {
    check_ring_is_ours();
    const std::size_t slot = k % slot_batch_.size();
    if (slot_batch_[slot] == k) return slot;
    throw Error("resident: " + std::string(call) + "(" + std::to_string(k) +
                ", stream) on a gathering streaming epoch found batch " + std::to_string(k) +
                " not in the ring (" +
                (slot_batch_[slot] == no_batch
                     ? std::string("nothing gathered into its slot yet")
                     : "its slot holds batch " + std::to_string(slot_batch_[slot])) +
                "); call it after batch(k) and before batch(k + ring_depth)");
  }

  // Gathers batch k into its ring slot unless the slot holds it already; its views.
  template <std::size_t... Field>
  [[nodiscard]] batch_type materialize(std::size_t k, std::index_sequence<Field...> fields_seq) {
    check_ring_is_ours();
    const std::size_t slot = k % slot_batch_.size();
    if (slot_batch_[slot] != k) {
      // The slot's previous batch is gone as soon as the fill starts.
      slot_batch_[slot] = no_batch;
      const auto gathered = dataset_->impl_streamer().gather(order_, k);
      fill(slot, gathered.rows, gathered.slice.rows, fields_seq);
      slices_[slot] = gathered.slice;
      slot_batch_[slot] = k;
    }
    const std::byte* base = dataset_->impl_ring().data() + slot * ring_.slot_bytes;
    const detail::BatchSlice& slice = slices_[slot];
    return batch_type(BatchView<const output_t<Field>>(
        reinterpret_cast<const output_t<Field>*>(base + ring_.offsets[Field]),  // NOLINT: typed
        slice.rows, dataset_->impl_row_shapes()[Field], slice.valid)...);
  }

  template <std::size_t... Field>
  void fill(std::size_t slot, const detail::ChunkRows& rows, std::size_t count,
            std::index_sequence<Field...> /*fields*/) {
    std::byte* base = dataset_->impl_ring().data() + slot * ring_.slot_bytes;
    auto* indices = reinterpret_cast<std::int64_t*>(base + ring_.index_offset);  // NOLINT
    const auto& streamer = dataset_->impl_streamer();
    const auto& stream = streamer.stream_layout();
    const auto& layout = dataset_->impl_core().layout();
    [[maybe_unused]] const auto scope = space_traits<Space>::device_scope(dataset_->space());
    const auto& fences = dataset_->impl_ring().fences();
    fences.before_fill(slot, dataset_->stream());
    const auto source = [&](auto field) {
      constexpr std::size_t f = decltype(field)::value;
      return detail::ChunkSlotRows<stored_t<f>>{streamer.slots() + stream.offsets[f],
                                                stream.slot_bytes, layout.row_bytes[f], rows};
    };
    if constexpr (!space_traits<Space>::gathers_with_kernels) {
      detail::host_gather(
          rows, count, indices, host_workers(),
          detail::GatherField{source(std::integral_constant<std::size_t, Field>{}),
                              ring_field<Field>(base), layout.row_elements[Field],
                              transforms_.template op<Field>(),
                              transforms_.template augmentation<Field>(), transforms_.key}...);
    } else {
      detail::require_kernels<Kernels>();
#if defined(__CUDACC__)
      (detail::device_gather(source(std::integral_constant<std::size_t, Field>{}),
                             ring_field<Field>(base), layout.row_elements[Field], rows, count,
                             transforms_.template op<Field>(),
                             transforms_.template augmentation<Field>(), transforms_.key,
                             Field == 0 ? indices : nullptr, dataset_->stream()),
       ...);
#else
      (void)source, (void)indices, (void)count;
#endif
    }
    fences.after_fill(slot, dataset_->stream());
  }

  template <std::size_t Field>
  [[nodiscard]] output_t<Field>* ring_field(std::byte* slot) const noexcept {
    return reinterpret_cast<output_t<Field>*>(slot + ring_.offsets[Field]);  // NOLINT: typed
  }

  // The copy team of this epoch's host gathers, made at the first (see `Epoch`).
  detail::CopyWorkers& host_workers() {
    if (!workers_)
      workers_ = std::make_unique<detail::CopyWorkers>(
          detail::gather_thread_count(detail::batch_bytes(dataset_->impl_core())));
    return *workers_;
  }

  Owner* dataset_;
  detail::TenancyLease lease_;  // checked before every use of `dataset_`
  EpochOptions options_;
  detail::FieldTransforms<Conversion, Augment, Stored> transforms_;
  detail::PassOrder order_;            // made only while the lease is valid
  detail::RingLayout<fields> ring_{};  // this epoch's slots (claimed: `generation_ != 0`)
  std::size_t generation_ = 0;
  std::vector<std::size_t> slot_batch_;
  std::vector<detail::BatchSlice> slices_;  // of each slot's batch
  std::unique_ptr<detail::CopyWorkers> workers_;
  detail::Tenancy self_;  // this epoch object's, for its iterators
};

}  // namespace resident
