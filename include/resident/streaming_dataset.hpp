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
#include <cstdint>
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
#include "resident/detail/copy_workers.hpp"
#include "resident/detail/dataset/batch_iterator.hpp"
#include "resident/detail/dataset/data_token.hpp"
#include "resident/detail/dataset/dataset_core.hpp"
#include "resident/detail/dataset/layout.hpp"
#include "resident/detail/dataset/owner_base.hpp"
#include "resident/detail/dataset/row_selection.hpp"
#include "resident/detail/expects.hpp"
#include "resident/detail/gather/gather_ring.hpp"
#include "resident/detail/gather/host_gather.hpp"
#include "resident/detail/stream/chunk_rows.hpp"
#include "resident/detail/stream/chunk_streamer.hpp"
#include "resident/detail/stream/host_chunk_transport.hpp"
#include "resident/detail/stream/pass_order.hpp"
#include "resident/detail/stream/row_source.hpp"
#include "resident/detail/stream/stream_layout.hpp"
#include "resident/epoch.hpp"
#include "resident/epoch_options.hpp"
#include "resident/error.hpp"
#include "resident/host_tensor.hpp"
#include "resident/space_traits.hpp"
#include "resident/split.hpp"

namespace resident {

/// @brief One epoch of a `StreamingDataset`: the `Epoch` every dataset's epochs are (see
/// `Epoch` for the batches, their cost and lifetime, and `wait`/`release`).
template <class Owner, class Conversion = NoConversion, class Augment = NoAugmentation>
using StreamingEpoch = Epoch<Owner, Conversion, Augment>;

/// @brief A dataset streamed through the space: the same constructor arguments, the same
/// `num_batches()` / `batch(i)` / `epoch()` and the same batch views as `DeviceDataset`, for data
/// larger than the space (or than a `HostSpace::with_budget`).
///
/// The batches are cut exactly as a `DeviceDataset` cuts them (sharding, remainder, padding)
/// and grouped into chunks of `chunk_batches()` batches. The space holds
/// `chunk_slots()` chunk slots and the gather ring of `ring_depth` batches that `Epoch` writes
/// converted, augmented or window-shuffled batches into. Both are planned and allocated together
/// when the dataset is made, within the space's free memory less the reserve: the slots get
/// what the gather ring (`planned_ring_bytes()`, sized for `DatasetOptions::ring_element_bytes`)
/// leaves, so that every epoch the dataset offers runs, whatever is allocated in the space
/// later; where both do not fit, the dataset is refused then, with the figures. A producer thread
/// keeps `prefetch_chunks()` chunks loading ahead of the one being read (on `CudaSpace`: on a copy
/// stream of its own, through two page-locked staging buffers, with events ordering the copies
/// against `stream()`; nothing waits on the host but a reader that outruns the copies).
///
/// Order (`StreamOptions::order`, chosen automatically; `order()` says which; see
/// docs/streaming-and-planning.md, "Two orders"):
/// - `StreamOrder::whole_epoch`, when the rows are in host memory: every epoch serves the
///   batches of the `DeviceDataset` of the same data, bit for bit, under every shuffle,
///   remainder policy, sharding, conversion and augmentation.
/// - `StreamOrder::window`, for files larger than the host's memory: chunks of consecutive
///   rows are read straight from the files. `Shuffle::batches` permutes the chunks and the
///   batches within each (zero-copy); `Shuffle::samples` deals each batch from a seeded
///   permutation of the rows of its window of `window_chunks()` chunks (`window_rows()`),
///   gathered into the gather ring.
///
/// Under either order a last batch that is short (or padded) on some rank stays last in
/// shuffled epochs, as in a `DeviceDataset`'s, so that preloaded and streamed ranks of a job
/// take steps of the same sizes. Conversions and augmentations gather every batch into the
/// gather ring, exactly as `DeviceDataset` does (one implementation, `Epoch`); an augmentation
/// depends only on the row and the (seed, epoch), so a streamed row is augmented as a
/// preloaded one.
///
/// @note Sources are read every epoch: host tensors given to the constructor must outlive the
/// dataset (unlike `DeviceDataset`, which reads them only during construction); files streamed
/// in window order (see `load_streaming_dataset`) are held open and must not change. A view of a
/// chunk stays valid until its epoch's reader reaches the chunk `chunk_slots() -
/// prefetch_chunks()` positions later, or the epoch ends (the one rule of docs/epochs.md, "How
/// long a view lives"); on `CudaSpace`, work that reads it must be enqueued on `stream()` before
/// the reader moves on to another chunk, or on another stream ordered by `Epoch::wait` and
/// `release`. Each live epoch holds a set of chunk slots of its own (and its producer), lent by
/// the dataset, so epochs may be held and read in any interleaving; a second one costs another
/// set (`bytes()`), or its first batch is refused with `CapacityError` where the space has no
/// room. Within an epoch, a batch behind the chunk held restarts its pass at the batch's chunk,
/// which costs a synchronous load. A chunk that fails to load (a copy, a file cut short) fails
/// its batch once with its own error; the next batch asked for restarts the pass at that
/// batch's chunk. Use the dataset's members from one thread; an epoch made there may be
/// iterated on a thread of its own.
/// Move-only, by the rule of zero: a move takes the slots, the rings, the sources and the
/// running pass and leaves the dataset moved from empty (0 rows, 0 batches); destruction (or a
/// move assignment over the dataset) stops the idle producers, waits for copies in flight and
/// releases the memory no live epoch holds.
template <class Space, class... Ts>
class StreamingDataset : public DatasetAccessors<StreamingDataset<Space, Ts...>, Space, Ts...>,
                         public detail::OwnerBase<Space, sizeof...(Ts)>,
                         public detail::EpochSource<StreamingDataset<Space, Ts...>> {
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
  /// @throws InvalidArgument for mismatched rows, batch size 0, overflow, invalid
  /// `StreamOptions` or the legacy default stream as `options.stream`; CapacityError when the ring
  /// does not fit; CudaError when CUDA fails.
  StreamingDataset(Space space, const DatasetOptions& options,
                   const HostTensor<const Ts>&... fields)
      : StreamingDataset(
            std::move(space), options, detail::make_layout(options, fields...),
            {detail::RowSource::memory(fields.data(), fields.rows(), fields.row_bytes())...},
            {fields.row_shape()...}) {}

  /// @brief A subset of a streamed dataset (PyTorch's `Subset`): rows `[first, first + count)`
  /// of `dataset`'s rows (`num_rows()`, this rank's), streamed as a dataset of their own, cut
  /// by `options`, with chunk slots and a gather ring of its own, planned and allocated now as
  /// for any streaming dataset. It reads `dataset`'s sources (the caller's tensors, the files
  /// held open, the rows read into host memory), which it shares, so that it outlives
  /// `dataset`; every epoch serves the batches of a `StreamingDataset` of copies of those rows
  /// under the same options (in whole-epoch order, those of a `DeviceDataset` of them).
  /// @throws InvalidArgument when the range reaches past `dataset.num_rows()` or `dataset` was
  /// moved from; what the other constructors throw for `options`.
  StreamingDataset(const StreamingDataset& dataset, std::size_t first, std::size_t count,
                   const DatasetOptions& options)
      : StreamingDataset(
            dataset, detail::select_range(dataset.num_rows(), dataset.moved_from(), first, count),
            options) {}

  /// @brief A subset of a streamed dataset: `dataset`'s rows `rows`, in their order (repeats
  /// allowed), as the range constructor streams a range. Its host memory holds the list (one
  /// `std::size_t` a row).
  /// @throws InvalidArgument naming the first row that is not below `dataset.num_rows()`, or
  /// when `dataset` was moved from; what the other constructors throw for `options`.
  StreamingDataset(const StreamingDataset& dataset, const std::vector<std::size_t>& rows,
                   const DatasetOptions& options)
      : StreamingDataset(
            dataset, detail::select_list(dataset.num_rows(), dataset.moved_from(), rows), options) {
  }

  /// @brief Exchanges the contents of two datasets.
  void swap(StreamingDataset& other) noexcept { std::swap(*this, other); }

  /// @brief Bytes of the chunk slots held: the set the dataset is made with, and one more per
  /// further epoch that lives at the same time (see `Epoch`).
  [[nodiscard]] std::size_t bytes() const noexcept { return streamers_.bytes(); }
  /// @brief Bytes of the gather rings held: the one allocated when the dataset is made, as
  /// planned (`planned_ring_bytes()`), so that no other allocation can take it before the first
  /// gathering epoch; one more per further gathering epoch that lives at the same time, and a
  /// wider one for an epoch whose conversion is wider than planned.
  [[nodiscard]] std::size_t ring_bytes() const noexcept { return this->impl_rings().bytes(); }
  /// @brief Bytes the gather ring was planned for beside the chunk slots.
  [[nodiscard]] std::size_t planned_ring_bytes() const noexcept { return planned_ring_.get(); }
  /// @brief Bytes of host memory the dataset owns for its rows: `.npz` members inflated, or
  /// several token files read, once for a whole-epoch order (0 when it reads the caller's
  /// tensors, files' mappings, or files in window order).
  [[nodiscard]] std::size_t host_bytes() const noexcept { return streamers_.host_bytes(); }
  /// @brief Bytes of the rows this rank streams that the dataset reads in place from files'
  /// mappings, in whole-epoch order: the page cache's pages, shared with every other reader of
  /// the files and reclaimable, never copied into memory the dataset owns (0 otherwise).
  [[nodiscard]] std::size_t mapped_bytes() const noexcept { return streamers_.mapped_bytes(); }
  /// @brief The order chosen (`StreamOrder::whole_epoch` or `window`; see the class note);
  /// `StreamOrder::automatic`, none chosen, for a moved-from dataset.
  [[nodiscard]] StreamOrder order() const noexcept {
    if (this->impl_core().moved_from()) return StreamOrder::automatic;
    return streamers_.whole_epoch() ? StreamOrder::whole_epoch : StreamOrder::window;
  }
  /// @brief Bytes the fields would take preloaded (what did not fit).
  [[nodiscard]] std::size_t data_bytes() const noexcept {
    return this->impl_core().layout().total_bytes;
  }
  /// @brief Batches per chunk (`StreamOptions::chunk_batches`, or the automatic size; at most
  /// the batches).
  [[nodiscard]] std::size_t chunk_batches() const noexcept { return stream_layout().chunk_batches; }
  /// @brief Chunks per epoch.
  [[nodiscard]] std::size_t num_chunks() const noexcept { return stream_layout().chunks; }
  /// @brief The chunk slots: `StreamOptions::chunk_slots`, or one per chunk when there are
  /// fewer chunks (at least 1).
  [[nodiscard]] std::size_t chunk_slots() const noexcept { return stream_layout().chunk_slots; }
  /// @brief Chunks loaded ahead of the one being read: `StreamOptions::prefetch_chunks`, at
  /// most `chunk_slots() - 1`.
  [[nodiscard]] std::size_t prefetch_chunks() const noexcept {
    return stream_layout().prefetch_chunks;
  }
  /// @brief Chunks in one `Shuffle::samples` window in window order: every chunk when each has
  /// a slot of its own (`num_chunks() <= StreamOptions::chunk_slots`), else the slots the
  /// prefetch leaves, `chunk_slots() - prefetch_chunks()`; at most 16. Raise
  /// `StreamOptions::chunk_slots` for a wider window. (In whole-epoch order the window is the
  /// epoch: see `window_rows()`.)
  [[nodiscard]] std::size_t window_chunks() const noexcept { return stream_layout().window_chunks; }
  /// @brief Rows a `Shuffle::samples` batch draws from: every row of the epoch's order in
  /// whole-epoch order, else the rows of its window (`window_chunks()` chunks).
  [[nodiscard]] std::size_t window_rows() const noexcept {
    if (order() == StreamOrder::whole_epoch) return this->impl_core().geometry().order_rows;
    return stream_layout().window_chunks * stream_layout().chunk_batches *
           this->impl_core().config().batch_size;
  }

  /// @brief Batch `index` of an unshuffled epoch: the same rows as `DeviceDataset::batch`.
  /// Reading batches in order streams; a jump backwards reloads from the batch's chunk. The
  /// batches are those of the dataset's own unshuffled pass, which holds a set of chunk slots
  /// as an epoch does: a view lasts until this pass reaches the chunk `chunk_slots() -
  /// prefetch_chunks()` positions later, or until the next epoch of the dataset is made, which
  /// ends the pass (hold an epoch, not `batch()` views, across epochs).
  /// @throws std::out_of_range when `index >= num_batches()`; CapacityError when live epochs
  /// hold every set of chunk slots and the space has no room for another (read the batch from
  /// an epoch then: `epoch()` serves `batch(i)` as its batch `i`); FormatError when a source
  /// file was truncated or removed; CudaError when a copy fails.
  [[nodiscard]] batch_type batch(std::size_t index) {
    if (index >= this->impl_core().num_batches())
      this->impl_core().throw_batch_out_of_range(index, "streaming dataset");
    if (!plain_) {
      // The pass is the dataset's own, as long as it keeps it: it watches a token of its own.
      auto owner = std::make_shared<const bool>(true);
      plain_ = std::make_unique<PlainPass>(
          PlainPass{streamers_.make_pass(owner, {}, {}, false,
                                         this->impl_core().config().reserve_bytes, false),
                    owner});
    }
    return impl_view(plain_->pass, index);
  }

  /// @cond impl
  // Implementation access, as Kokkos' `impl_` members: for `Epoch` and `Dataset`, not part of
  // the API.
  // What `Epoch` asks of the dataset it serves (see `DeviceDataset`): a pass of the stream
  // with the chunk slots lent to it, its batches as views of them, and where a gathered batch's
  // rows lie in them.
  using impl_pass_type = typename detail::ChunkStreamers<Space, num_fields>::Pass;
  static constexpr const char* impl_holding = "the chunk slots";
  // A share of the memory the `bytes` at `first` lie in: chunk slots (a batch served as a view)
  // or a gather ring (a gathered batch); null when neither holds them.
  [[nodiscard]] std::shared_ptr<const void> impl_owner_of(const void* first,
                                                          std::size_t bytes) const noexcept {
    std::shared_ptr<const void> slots = streamers_.owner_of(first, bytes);
    return slots ? slots : this->impl_rings().owner_of(first, bytes);
  }
  [[nodiscard]] impl_pass_type impl_make_pass(std::weak_ptr<const void> borrower,
                                              const EpochOptions& options,
                                              const detail::EpochStart& start, bool gathers) {
    plain_.reset();
    return streamers_.make_pass(std::move(borrower), options, start, gathers,
                                this->impl_core().config().reserve_bytes, true);
  }
  [[nodiscard]] static const detail::EpochOrder& impl_order(const impl_pass_type& pass) noexcept {
    return pass.order.epoch;
  }
  // A window order also depends on how its chunks and windows are cut: the chunking, the
  // world size and the batch size.
  [[nodiscard]] detail::OrderKey impl_order_key(const EpochOptions& /*options*/,
                                                std::uint64_t /*position*/) const noexcept {
    if (order() != StreamOrder::window) return {};
    const auto& layout = stream_layout();
    const auto& geometry = this->impl_core().geometry();
    std::uint64_t key = detail::mix64(layout.chunk_batches ^ detail::mix64(layout.window_chunks));
    key = detail::mix64(key ^ static_cast<std::uint64_t>(geometry.shard.world_size));
    return {detail::mix64(key ^ geometry.batch_size), true};
  }
  [[nodiscard]] bool impl_views(const EpochOptions& options) const noexcept {
    return options.shuffle != Shuffle::samples || streamers_.views_samples();
  }
  [[nodiscard]] batch_type impl_view(impl_pass_type& pass, std::size_t k) {
    return views(streamer_of(pass).serve(pass.order, k), std::index_sequence_for<Ts...>{});
  }
  using impl_gathered = typename detail::ChunkStreamer<Space, num_fields>::Gathered;
  [[nodiscard]] impl_gathered impl_gather(impl_pass_type& pass, std::size_t k) {
    return streamers_.gather(pass, k, this->impl_core().config().reserve_bytes);
  }
  void impl_check_gathered(const impl_pass_type& /*pass*/) const { streamers_.check_gathered(); }
  template <std::size_t Field>
  [[nodiscard]] auto impl_rows(const impl_pass_type& pass,
                               const impl_gathered& gathered) const noexcept {
    return streamers_.template rows_of<std::tuple_element_t<Field, std::tuple<Ts...>>>(
        pass, Field, gathered.order);
  }
  void impl_wait_view(impl_pass_type& pass, std::size_t k, typename Space::stream_type consumer) {
    const auto& streamer = streamer_of(pass);
    streamer.wait(streamer.held_slot(pass.order, k, "wait"), consumer);
  }
  void impl_release_view(impl_pass_type& pass, std::size_t k,
                         typename Space::stream_type consumer) {
    const auto& streamer = streamer_of(pass);
    (void)streamer.held_slot(pass.order, k, "release");
    streamer.reader_waits_for(consumer);
  }
  /// @endcond

 private:
  friend struct detail::FromSources;

  // Streams from prepared row sources (see `load_streaming_dataset`).
  // (`sizeof...(Ts)`, not `num_fields`: the deduction guides synthesised from constructors
  // see no member of a dependent base.)
  StreamingDataset(Space space, const DatasetOptions& options,
                   const detail::DatasetLayout<sizeof...(Ts)>& layout,
                   std::array<detail::RowSource, sizeof...(Ts)> sources,
                   std::array<Shape, sizeof...(Ts)> row_shapes)
      : detail::OwnerBase<Space, sizeof...(Ts)>(row_shapes) {
    const std::size_t reserve = detail::reserve_for(space, options);
    const detail::CapacityVerdict capacity = detail::check_capacity(space, reserve, 0);
    const std::size_t ring = detail::planned_ring_bytes(layout, {sizeof(Ts)...}, options);
    const std::size_t usable = capacity.usable_bytes();
    const auto stream =
        detail::make_stream_layout(layout, options, usable > ring ? usable - ring : 0);
    const detail::CapacityVerdict verdict =
        capacity.needing(detail::checked_add(stream.total_bytes, ring, "streaming size"));
    if (!verdict.fits) throw verdict.refusal(detail::stream_refusal_advice(stream, ring, options));
    const bool whole_epoch = detail::streams_whole_epoch(options.streaming.order, sources);
    RESIDENT_EXPECTS(whole_epoch || layout.geometry.rank_parts == 1,
                     "a stream in window order reads chunks of consecutive rows of one part, "
                     "but this rank stores " +
                         std::to_string(layout.geometry.rank_parts) +
                         " parts (DatasetOptions::parts over the world size); stream in "
                         "whole-epoch order (StreamOptions::order), or use one part per rank");
    detail::DatasetCore<Space, num_fields> core(std::move(space), options, reserve, layout);
    streamers_ = detail::ChunkStreamers<Space, num_fields>(
        core.space(), core.stream(), core.stream_keep_alive(), layout, stream, std::move(sources),
        whole_epoch, detail::upload_thread_count(options.upload_threads, stream.slot_bytes));
    this->impl_rings().reserve(core, ring);
    stream_layout_ = detail::ResetOnMove<detail::StreamLayout<num_fields>>(stream);
    planned_ring_ = detail::ResetOnMove<std::size_t>(ring);
    this->impl_core() = std::move(core);
    // Last, once nothing can refuse the dataset: a refusal costs no advice.
    if (options.streaming.large_pages) streamers_.advise_large_pages();
  }

  // Streams `selection`'s rows of `dataset`'s rows from its sources.
  StreamingDataset(const StreamingDataset& dataset, const detail::RowSelection& selection,
                   const DatasetOptions& options)
      : StreamingDataset(dataset.space(), options,
                         detail::layout_of_rows<num_fields>(options, dataset.impl_row_shapes(),
                                                            selection.rows, {sizeof(Ts)...}),
                         dataset.selected_sources(selection, options), dataset.impl_row_shapes()) {}

  // The sources of `selection`'s rows: each the source row that the dataset's stored row is.
  // A whole-epoch order of them needs the rows in memory (mapped files are).
  [[nodiscard]] std::array<detail::RowSource, num_fields> selected_sources(
      const detail::RowSelection& selection, const DatasetOptions& options) const {
    RESIDENT_EXPECTS(options.streaming.order != StreamOrder::whole_epoch ||
                         detail::sources_in_memory(streamers_.sources()),
                     "StreamOptions::order is whole_epoch for a subset of a dataset that reads "
                     "its files in window order, and a subset streams from its dataset's "
                     "sources; make the dataset in whole-epoch order (StreamOrder::whole_epoch "
                     "or automatic, which maps the files or reads them into memory), or stream "
                     "the subset in StreamOrder::window or automatic");
    const detail::SourceMap map = detail::source_map(this->impl_core().layout());
    auto rows = std::make_shared<std::vector<std::size_t>>(selection.rows);
    for (std::size_t row = 0; row < selection.rows; ++row)
      (*rows)[row] = static_cast<std::size_t>(map.row(selection.row(row)));
    std::array<detail::RowSource, num_fields> sources;
    for (std::size_t field = 0; field < num_fields; ++field)
      sources[field] = detail::RowSource::selected(streamers_.sources()[field], rows);
    return sources;
  }

  [[nodiscard]] const detail::StreamLayout<num_fields>& stream_layout() const noexcept {
    return stream_layout_.get();
  }
  [[nodiscard]] detail::ChunkStreamer<Space, num_fields>& streamer_of(impl_pass_type& pass) {
    return streamers_.streamer(pass, this->impl_core().config().reserve_bytes);
  }

  template <std::size_t... Field>
  [[nodiscard]] batch_type views(
      const typename detail::ChunkStreamer<Space, num_fields>::Served& served,
      std::index_sequence<Field...> /*fields*/) const {
    return batch_type(BatchView<const Ts>(
        reinterpret_cast<const Ts*>(  // NOLINT: typed view of the slot's bytes
            served.slot + stream_layout().offsets[Field] +
            served.first_row * this->impl_core().layout().row_bytes[Field]),
        served.slice.rows, this->impl_row_shapes()[Field], served.slice.valid)...);
  }

  detail::ResetOnMove<detail::StreamLayout<num_fields>> stream_layout_;
  detail::ResetOnMove<std::size_t> planned_ring_;
  // The streamers share the ownership of the core's stream (the base's), so that a producer is
  // joined and its copies drained before the stream goes, whichever a destruction or a move
  // assignment releases first.
  detail::ChunkStreamers<Space, num_fields> streamers_;  // lent to the passes
  // The pass of `batch(i)`, if any, and the token it borrows its chunk slots with.
  struct PlainPass {
    impl_pass_type pass;
    std::shared_ptr<const bool> owner;
  };
  std::unique_ptr<PlainPass> plain_;
};

/// @brief PyTorch's `random_split` of a streamed dataset: its rows in disjoint random parts of
/// `lengths` rows (`random_split_rows`), each a subset streamed under `options` (see the
/// list constructor). For parts cut by options of their own, make each from
/// `random_split_rows`.
/// @throws what `random_split_rows` and the subsets throw (a dataset moved from is refused,
/// also for no parts); nothing is kept.
template <class Space, class... Ts>
std::vector<StreamingDataset<Space, Ts...>> random_split(
    const StreamingDataset<Space, Ts...>& dataset, const std::vector<std::size_t>& lengths,
    std::uint64_t seed, const DatasetOptions& options) {
  return detail::split_parts<StreamingDataset<Space, Ts...>>(dataset, lengths, seed, options);
}

/// Deduces the field types from the tensors: `StreamingDataset ds(space, opt, x, y)`.
template <class Space, class... Ts>
StreamingDataset(Space, DatasetOptions, HostTensor<Ts>...)
    -> StreamingDataset<Space, std::remove_const_t<Ts>...>;

}  // namespace resident
