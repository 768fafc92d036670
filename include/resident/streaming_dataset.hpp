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

#include "resident/batch_view.hpp"
#include "resident/dataset_accessors.hpp"
#include "resident/dataset_options.hpp"
#include "resident/detail/batch_iterator.hpp"
#include "resident/detail/chunk_streamer.hpp"
#include "resident/detail/copy_workers.hpp"
#include "resident/detail/dataset_core.hpp"
#include "resident/detail/host_chunk_transport.hpp"
#include "resident/detail/layout.hpp"
#include "resident/detail/pass_order.hpp"
#include "resident/detail/row_source.hpp"
#include "resident/detail/stream_layout.hpp"
#include "resident/detail/tenancy.hpp"
#include "resident/epoch_options.hpp"
#include "resident/error.hpp"
#include "resident/host_tensor.hpp"
#include "resident/memory_space.hpp"
#include "resident/space_traits.hpp"

namespace resident {

template <class Owner>
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
/// `StreamOptions::chunk_batches`. The space holds one allocation, a ring of `ring_chunks` chunk
/// slots; a producer thread keeps `prefetch_chunks` chunks loading ahead of the one being read
/// (on `CudaSpace`: on a copy stream of its own, through two page-locked staging buffers, with
/// events ordering the copies against `stream()`; nothing waits on the host but a reader that
/// outruns the copies).
///
/// Shuffling (`Shuffle::batches` and `Shuffle::samples` alike): a seeded permutation of the
/// chunk order, and within each chunk of its batch order; a last batch that is short (or
/// padded) on some rank stays last, with its chunk, as in a `DeviceDataset`'s shuffled epochs,
/// so that preloaded and streamed ranks of a job take steps of the same sizes. This is a weaker
/// shuffle than `DeviceDataset`'s `Shuffle::samples`: a batch holds consecutive rows, and batches
/// that are in one chunk (a window of `window_rows()` rows) stay in one stretch of the epoch.
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

  /// @brief Bytes of the ring: the dataset's one allocation in the space.
  [[nodiscard]] std::size_t bytes() const noexcept { return streamer_ ? streamer_->bytes() : 0; }
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
  /// @brief Rows in one shuffle window (a chunk): batches mix only within it.
  [[nodiscard]] std::size_t window_rows() const noexcept {
    return stream_layout().chunk_batches * core_.config().batch_size;
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
  [[nodiscard]] epoch_type epoch(EpochOptions options = {}) { return epoch_type(*this, options); }

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
/// `batch(i)`. Made by `StreamingDataset::epoch`. It refers to the dataset object it was made
/// from: once that is moved from, assigned, swapped or destroyed, every use throws `Error`
/// saying so (as `Epoch` does).
template <class Owner>
class StreamingEpoch {
 public:
  using batch_type = typename Owner::batch_type;           ///< One view per field.
  using stream_type = typename Owner::stream_type;         ///< The streams `wait`/`release` order.
  using iterator = detail::BatchIterator<StreamingEpoch>;  ///< Input iterator over batches.

  /// @brief Use `StreamingDataset::epoch`.
  StreamingEpoch(Owner& dataset, EpochOptions options)
      : dataset_(&dataset), lease_(dataset.impl_core().lease()), options_(options) {
    if (lease_.valid()) order_ = dataset.impl_streamer().make_order(options);
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
  /// @brief Always false: streamed batches are views of the ring's chunks, never gathered.
  [[nodiscard]] static constexpr bool gathers() noexcept { return false; }

  /// @brief Batch `k` of the epoch (`k < size()`); waits only if its chunk is still loading.
  /// @throws std::out_of_range past the end; the errors of `StreamingDataset::batch`; Error once
  /// the dataset was moved from, assigned, swapped or destroyed.
  [[nodiscard]] batch_type batch(std::size_t k) {
    lease_.check();
    return dataset_->impl_serve(order_, k);
  }

  /// @brief Orders `consumer` after batch `k`'s chunk landed: work enqueued on `consumer`
  /// after this call sees the batch, without a host wait (the dataset's own `stream()` is
  /// ordered already). Call it after `batch(k)` and before the reader asks for a batch of
  /// another chunk; pair it with `release(k, consumer)`. On spaces whose loads complete on
  /// the host (`HostSpace`) it checks the call and does nothing else.
  /// @throws std::out_of_range past the end; Error when batch `k`'s chunk is not the one the
  /// reader holds (not asked for yet, or the reader moved on), or once the dataset was moved
  /// from, assigned, swapped or destroyed; CudaError when `consumer` cannot wait.
  void wait(std::size_t k, stream_type consumer) {
    lease_.check();
    dataset_->impl_check_index(k);
    auto& streamer = dataset_->impl_streamer();
    streamer.wait(streamer.held_slot(order_, k, "wait"), consumer);
  }

  /// @brief Lets batch `k`'s chunk slot be loaded again only once the work enqueued on
  /// `consumer` so far is done (the dataset's stream waits for it before it gives the chunk
  /// up): call it after enqueueing the last read of batch `k` on `consumer`, before the reader
  /// asks for a batch of another chunk.
  /// @throws what `wait` throws; CudaError when the order cannot be recorded.
  void release(std::size_t k, stream_type consumer) {
    lease_.check();
    dataset_->impl_check_index(k);
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
  Owner* dataset_;
  detail::TenancyLease lease_;  // checked before every use of `dataset_`
  EpochOptions options_;
  detail::PassOrder order_;  // made only while the lease is valid
  detail::Tenancy self_;     // this epoch object's, for its iterators
};

}  // namespace resident
