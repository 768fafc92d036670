// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// @brief `StreamingDataset<Space, Ts...>`: the fallback for data larger than the space, with
/// the batch interface of `DeviceDataset`; chunks of batches cycle through a small ring in the
/// space while the next ones load on a copy stream.

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
#include "resident/dataset_options.hpp"
#include "resident/detail/batch_iterator.hpp"
#include "resident/detail/chunk_pipeline.hpp"
#include "resident/detail/copy_workers.hpp"
#include "resident/detail/cuda_chunk_transport.hpp"
#include "resident/detail/host_chunk_transport.hpp"
#include "resident/detail/layout.hpp"
#include "resident/detail/resources.hpp"
#include "resident/detail/row_source.hpp"
#include "resident/detail/stream_layout.hpp"
#include "resident/detail/tenancy.hpp"
#include "resident/epoch.hpp"
#include "resident/error.hpp"
#include "resident/host_tensor.hpp"
#include "resident/npy.hpp"
#include "resident/permutation.hpp"
#include "resident/space_traits.hpp"

namespace resident {

namespace detail {

template <class Space>
struct chunk_transport {
  using type = HostChunkTransport<Space>;
};
#if RESIDENT_HAS_CUDA
template <>
struct chunk_transport<CudaSpace> {
  using type = CudaChunkTransport;
};
#endif

/// The order of one streaming pass: which chunk comes at each position, and which batch at
/// each place of a chunk.
struct PassOrder {
  std::uint64_t id = 0;               ///< Tells passes apart (0: none yet).
  EpochOptions options{};             ///< Seed, epoch, shuffle.
  std::vector<std::size_t> chunk_at;  ///< Chunk at each position.
  std::size_t short_position = 0;     ///< Position of the last (possibly short) chunk.
  std::size_t lane = 0;               ///< This rank's lane for the pass (replicated).
};

/// @brief What the producer thread reads to load a chunk: fixed at construction and kept on
/// the heap, so that the dataset owning it can move while a pass runs.
template <class Transport, std::size_t Fields>
struct ChunkLoader {
  DatasetLayout<Fields> layout;
  StreamLayout<Fields> stream_layout;
  std::array<RowSource, Fields> sources;
  std::byte* ring = nullptr;
  Transport* transport = nullptr;

  /// Producer thread: the chunk at `position` of `order` into its slot.
  void load(const PassOrder& order, std::size_t position) const {
    const std::size_t slot = position % stream_layout.ring_chunks;
    transport->load(slot, ring + slot * stream_layout.slot_bytes,
                    chunk_copies(order.chunk_at[position], order.lane));
  }

  /// The copies that fill a slot with chunk `chunk` of lane `lane`: for every field and batch,
  /// the batch's positions in the order mapped to source rows, adjacent runs merged.
  [[nodiscard]] std::vector<ChunkCopy> chunk_copies(std::size_t chunk, std::size_t lane) const {
    const ShardGeometry& geometry = layout.geometry;
    const std::size_t first_batch = chunk * stream_layout.chunk_batches;
    const std::size_t batches = stream_layout.batches_of(chunk, geometry.batches);
    std::vector<ChunkCopy> copies;
    for (std::size_t field = 0; field < Fields; ++field) {
      const std::size_t row_bytes = layout.row_bytes[field];
      for (std::size_t local = 0; local < batches; ++local) {
        const BatchSlice slice = geometry.slice(first_batch + local, lane);
        std::size_t offset = stream_layout.offsets[field] + local * geometry.batch_size * row_bytes;
        for (std::size_t at = slice.first, left = slice.rows; left > 0;) {
          const auto [source_row, rows] = source_run(at, left);
          if (!copies.empty() && copies.back().source == &sources[field] &&
              copies.back().offset + copies.back().bytes() == offset &&
              copies.back().first_row + copies.back().rows == source_row)
            copies.back().rows += rows;  // continues the previous run in the slot and the source
          else
            copies.push_back({offset, &sources[field], source_row, rows});
          offset += rows * row_bytes;
          at += rows;
          left -= rows;
        }
      }
    }
    return copies;
  }

  /// The longest run of source rows, at most `rows`, that order positions from `at` map to: the
  /// stored rows, then the padding, which repeats the rank's rows (or the caller's first rows
  /// for a rank with none) from their start, as `make_upload_plan` stores it.
  [[nodiscard]] std::pair<std::size_t, std::size_t> source_run(std::size_t at,
                                                               std::size_t rows) const noexcept {
    const ShardGeometry& geometry = layout.geometry;
    if (at < geometry.order_rows)
      return {geometry.source_first + at, std::min(rows, geometry.order_rows - at)};
    const std::size_t cycle =
        geometry.pad_from_source_start ? layout.source_rows : geometry.order_rows;
    const std::size_t base = geometry.pad_from_source_start ? 0 : geometry.source_first;
    const std::size_t offset = (at - geometry.order_rows) % cycle;
    return {base + offset, std::min(rows, cycle - offset)};
  }
};

}  // namespace detail

template <class Dataset>
class StreamingEpoch;

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
/// to another chunk, or on another stream ordered by `StreamingEpoch::wait` and `release`. One pass at a time: asking an older epoch (or `batch(i)`) for a batch
/// restarts that pass at the batch's chunk, which costs a synchronous load. A chunk that fails
/// to load (a copy, a file cut short) fails its batch once with its own error; the next batch
/// asked for restarts the pass at that batch's chunk. Use from one thread.
/// Move-only; a moved-from dataset is empty (0 rows, 0 batches).
template <class Space, class... Ts>
class StreamingDataset {
  static_assert(is_memory_space_v<Space>, "StreamingDataset needs a memory space");
  static_assert(sizeof...(Ts) >= 1, "a dataset needs at least one field");
  static_assert(((!std::is_const_v<Ts> && !std::is_reference_v<Ts>)&&...),
                "name the field types unqualified: StreamingDataset<Space, float, int32_t>");

 public:
  using space_type = Space;                                 ///< Where the ring lives.
  using stream_type = typename Space::stream_type;          ///< The dataset's stream type.
  using batch_type = std::tuple<BatchView<const Ts>...>;    ///< What `batch(i)` returns.
  using epoch_type = StreamingEpoch<StreamingDataset>;      ///< What `epoch()` returns.
  static constexpr std::size_t num_fields = sizeof...(Ts);  ///< Fields per row.

  /// @brief Checks that the ring fits, allocates it, and starts nothing yet: the first batch
  /// or epoch starts the stream.
  /// @param fields host tensors with equal row counts, read every epoch: keep them alive
  /// @throws InvalidArgument for mismatched rows, batch size 0, overflow or invalid
  /// `StreamOptions`; CapacityError when the ring does not fit; CudaError when CUDA fails.
  StreamingDataset(Space space, const DatasetOptions& options,
                   const HostTensor<const Ts>&... fields)
      : StreamingDataset(
            std::move(space), options, detail::make_layout(options, fields...),
            {detail::RowSource::memory(fields.data(), fields.rows(), fields.row_bytes())...},
            {fields.row_shape()...}) {}

  /// @brief Streams from prepared row sources (see `load_streaming_dataset`).
  StreamingDataset(Space space, const DatasetOptions& options,
                   const detail::DatasetLayout<num_fields>& layout,
                   std::array<detail::RowSource, num_fields> sources,
                   std::array<Shape, num_fields> row_shapes)
      : space_(std::move(space)), options_(options), layout_(layout), row_shapes_(row_shapes) {
    const Capacity capacity = space_.capacity();
    const std::size_t reserve = options.reserve_bytes.value_or(space_.default_reserve_bytes());
    const std::size_t usable = detail::usable_bytes(capacity.free_bytes, reserve);
    stream_layout_ = detail::make_stream_layout(layout, options, usable);
    if (stream_layout_.total_bytes > usable)
      throw CapacityError(space_.name(), stream_layout_.total_bytes, capacity.free_bytes,
                          capacity.total_bytes, reserve,
                          "even the streaming ring (" + std::to_string(stream_layout_.ring_chunks) +
                              " chunks of " + std::to_string(stream_layout_.chunk_batches) +
                              " batches) does not fit; " + detail::stream_ring_advice(options));
    stream_ = detail::dataset_stream(space_, options);
    ring_ = detail::Allocation<Space>(space_, stream_layout_.total_bytes);
    transport_ = std::make_unique<Transport>(
        space_, stream_.get(), stream_layout_.ring_chunks, stream_layout_.slot_bytes,
        pinned(sources),
        detail::upload_thread_count(options.upload_threads, stream_layout_.slot_bytes));
    loader_ = std::make_shared<const Loader>(
        Loader{layout_, stream_layout_, std::move(sources), ring_.data(), transport_.get()});
    pipeline_ = std::make_unique<detail::ChunkPipeline>();
  }

  StreamingDataset(const StreamingDataset&) = delete;
  StreamingDataset& operator=(const StreamingDataset&) = delete;

  /// @brief Takes `other`'s ring, sources and running pass; `other` is left empty.
  StreamingDataset(StreamingDataset&& other) noexcept
      : pipeline_(std::move(other.pipeline_)),
        transport_(std::move(other.transport_)),
        space_(std::move(other.space_)),
        options_(std::move(other.options_)),
        layout_(std::exchange(other.layout_, {})),
        stream_layout_(std::exchange(other.stream_layout_, {})),
        row_shapes_(other.row_shapes_),
        stream_(std::move(other.stream_)),
        ring_(std::move(other.ring_)),
        loader_(std::move(other.loader_)),
        last_order_id_(other.last_order_id_),
        plain_order_(std::move(other.plain_order_)),
        active_order_(std::move(other.active_order_)),
        held_(std::exchange(other.held_, no_position)),
        tenancy_(std::move(other.tenancy_)) {}

  /// @brief Releases this dataset's ring (stopping its pass), then takes `other`'s.
  StreamingDataset& operator=(StreamingDataset&& other) noexcept {
    if (this != &other) {
      StreamingDataset taken(std::move(other));
      swap(taken);
    }
    return *this;
  }

  /// @brief Stops the producer, waits for copies in flight, releases the ring.
  ~StreamingDataset() {
    if (pipeline_) pipeline_->stop();
    try {
      if (transport_) transport_->drain();
    } catch (const Error&) {  // a failed device cannot be drained; releasing is still safe
    }
  }

  /// @brief Exchanges the contents of two datasets.
  void swap(StreamingDataset& other) noexcept {
    std::swap(pipeline_, other.pipeline_);
    std::swap(transport_, other.transport_);
    std::swap(space_, other.space_);
    std::swap(options_, other.options_);
    std::swap(layout_, other.layout_);
    std::swap(stream_layout_, other.stream_layout_);
    std::swap(row_shapes_, other.row_shapes_);
    stream_.swap(other.stream_);
    ring_.swap(other.ring_);
    std::swap(loader_, other.loader_);
    std::swap(last_order_id_, other.last_order_id_);
    std::swap(plain_order_, other.plain_order_);
    std::swap(active_order_, other.active_order_);
    std::swap(held_, other.held_);
    tenancy_.swap(other.tenancy_);
  }

  /// @brief Rows stored (before padding): every row, or this rank's part when partitioned.
  [[nodiscard]] std::size_t num_rows() const noexcept { return layout_.geometry.order_rows; }
  /// @brief Row of the caller's data that row 0 is (see `DeviceDataset::first_row`).
  [[nodiscard]] std::size_t first_row() const noexcept { return layout_.geometry.source_first; }
  [[nodiscard]] std::size_t batch_size() const noexcept { return options_.batch_size; }
  [[nodiscard]] Remainder remainder() const noexcept { return options_.remainder; }
  /// @brief Batches per epoch: the same as a `DeviceDataset` of these options, on every rank.
  [[nodiscard]] std::size_t num_batches() const noexcept { return layout_.geometry.batches; }
  [[nodiscard]] const Shard& shard() const noexcept { return options_.shard; }
  [[nodiscard]] Sharding sharding() const noexcept { return options_.sharding; }
  [[nodiscard]] bool empty() const noexcept { return num_rows() == 0; }
  /// @brief Whether the data was moved to another dataset (see `DeviceDataset::moved_from`).
  [[nodiscard]] bool moved_from() const noexcept { return tenancy_.moved_from(); }
  [[nodiscard]] const Space& space() const noexcept { return space_; }
  /// @brief The stream batches are ordered on (see `DeviceDataset::stream`).
  [[nodiscard]] stream_type stream() const noexcept { return stream_.get(); }
  /// @brief Bytes of the ring: the dataset's one allocation in the space.
  [[nodiscard]] std::size_t bytes() const noexcept { return ring_.bytes(); }
  /// @brief Bytes the fields would take preloaded (what did not fit).
  [[nodiscard]] std::size_t data_bytes() const noexcept { return layout_.total_bytes; }
  /// @brief Batches per chunk (`StreamOptions::chunk_batches`, or the automatic size; at most
  /// the batches).
  [[nodiscard]] std::size_t chunk_batches() const noexcept { return stream_layout_.chunk_batches; }
  /// @brief Chunks per epoch.
  [[nodiscard]] std::size_t num_chunks() const noexcept { return stream_layout_.chunks; }
  /// @brief Slots of the ring: `StreamOptions::ring_chunks`, or one per chunk when there are
  /// fewer chunks (at least 1).
  [[nodiscard]] std::size_t ring_chunks() const noexcept { return stream_layout_.ring_chunks; }
  /// @brief Chunks loaded ahead of the one being read: `StreamOptions::prefetch_chunks`, at
  /// most `ring_chunks() - 1`.
  [[nodiscard]] std::size_t prefetch_chunks() const noexcept {
    return stream_layout_.prefetch_chunks;
  }
  /// @brief Rows in one shuffle window (a chunk): batches mix only within it.
  [[nodiscard]] std::size_t window_rows() const noexcept {
    return stream_layout_.chunk_batches * options_.batch_size;
  }

  /// @brief Batch `index` of an unshuffled epoch: the same rows as `DeviceDataset::batch`.
  /// Reading batches in order streams; a jump backwards reloads from the batch's chunk.
  /// @throws std::out_of_range when `index >= num_batches()`; FormatError when a source file
  /// was truncated or removed; CudaError when a copy fails.
  [[nodiscard]] batch_type batch(std::size_t index) {
    if (!plain_order_) plain_order_ = std::make_shared<detail::PassOrder>(make_order({}));
    return serve(*plain_order_, index);
  }

  /// @brief One epoch in the order `options` gives (see the class note on shuffling).
  [[nodiscard]] epoch_type epoch(EpochOptions options = {}) { return epoch_type(*this, options); }

 private:
  using Transport = typename detail::chunk_transport<Space>::type;
  using Loader = detail::ChunkLoader<Transport, num_fields>;
  friend class StreamingEpoch<StreamingDataset>;

  // Whether the copy engine can read every source directly (CudaSpace, page-locked memory).
  bool pinned(const std::array<detail::RowSource, num_fields>& sources) const {
#if RESIDENT_HAS_CUDA
    if constexpr (std::is_same_v<Space, CudaSpace>) {
      [[maybe_unused]] const auto scope = detail::device_scope(space_);  // the space's device
      return detail::sources_are_pinned(sources);
    }
#endif
    (void)sources;
    return false;
  }

  [[nodiscard]] detail::PassOrder make_order(const EpochOptions& options) {
    detail::PassOrder order;
    order.id = ++last_order_id_;
    order.options = options;
    const std::size_t chunks = stream_layout_.chunks;
    order.chunk_at.resize(chunks);
    order.lane = layout_.geometry.lane;
    const bool shuffled = options.shuffle != Shuffle::none;
    // The chunk of a short last batch stays last, as the batch does in it (short_last).
    const Permutation permutation =
        shuffled ? Permutation(chunks - (layout_.geometry.short_last ? 1 : 0), options.seed,
                               options.epoch)
                 : Permutation();
    for (std::size_t position = 0; position < chunks; ++position) {
      order.chunk_at[position] = position < permutation.size()
                                     ? static_cast<std::size_t>(permutation(position))
                                     : position;
      if (order.chunk_at[position] + 1 == chunks) order.short_position = position;
    }
    if (shuffled) order.lane = detail::epoch_lane(layout_.geometry, options);
    return order;
  }

  // Epoch batch k: its chunk position and its place among that chunk's batches.
  [[nodiscard]] std::pair<std::size_t, std::size_t> locate(const detail::PassOrder& order,
                                                           std::size_t k) const noexcept {
    const std::size_t per_chunk = stream_layout_.chunk_batches;
    const std::size_t last = stream_layout_.batches_of(stream_layout_.chunks - 1, num_batches());
    const std::size_t before_short = order.short_position * per_chunk;
    if (k < before_short) return {k / per_chunk, k % per_chunk};
    if (k < before_short + last) return {order.short_position, k - before_short};
    const std::size_t after = k - before_short - last;
    return {order.short_position + 1 + after / per_chunk, after % per_chunk};
  }

  // The chunk's batch at `place`: shuffled within the chunk under a shuffling pass, but for a
  // short last batch, which stays last.
  [[nodiscard]] std::size_t local_batch(const detail::PassOrder& order, std::size_t chunk,
                                        std::size_t place) const {
    if (order.options.shuffle == Shuffle::none) return place;
    constexpr std::uint64_t chunk_key = 0x6368756e6bULL;  // "chunk": its own key stream
    const bool holds_short = layout_.geometry.short_last && chunk + 1 == stream_layout_.chunks;
    const std::size_t shuffled =
        stream_layout_.batches_of(chunk, num_batches()) - (holds_short ? 1 : 0);
    if (place >= shuffled) return place;
    return static_cast<std::size_t>(
        Permutation(shuffled, detail::mix64(order.options.seed ^ chunk_key) ^ detail::mix64(chunk),
                    order.options.epoch)(place));
  }

  [[nodiscard]] batch_type serve(const detail::PassOrder& order, std::size_t k) {
    check_index(k);
    const auto [position, place] = locate(order, k);
    if (active_order_ == nullptr || active_order_->id != order.id ||
        !pipeline_->can_reach(position))
      restart(order, position);
    if (held_ != position) {
      pipeline_->acquire(position, [this](std::size_t given_up) {
        transport_->release(given_up % stream_layout_.ring_chunks);
      });
      transport_->acquire(position % stream_layout_.ring_chunks);
      held_ = position;
    }
    const std::size_t chunk = order.chunk_at[position];
    const std::size_t local = local_batch(order, chunk, place);
    const detail::BatchSlice slice =
        layout_.geometry.slice(chunk * stream_layout_.chunk_batches + local, order.lane);
    const std::byte* slot =
        ring_.data() + (position % stream_layout_.ring_chunks) * stream_layout_.slot_bytes;
    return views(slot, local * batch_size(), slice, std::index_sequence_for<Ts...>{});
  }

  // The slot of epoch batch k of `order` for `StreamingEpoch::wait` and `release` (`call`):
  // the chunk the reader holds, since a chunk given up has had its slot's order recorded.
  [[nodiscard]] std::size_t held_slot(const detail::PassOrder& order, std::size_t k,
                                      const char* call) const {
    check_index(k);
    const std::size_t position = locate(order, k).first;
    const bool ours = active_order_ != nullptr && active_order_->id == order.id;
    if (ours && held_ == position) return position % stream_layout_.ring_chunks;
    throw Error("resident: " + std::string(call) + "(" + std::to_string(k) +
                ", stream) on a streaming epoch found batch " + std::to_string(k) +
                "'s chunk not held by the reader (" +
                (!ours ? std::string("the pass running is another epoch's, or none")
                 : held_ == no_position || held_ < position
                     ? std::string("the batch was not asked for yet")
                     : "the reader moved on to a later chunk") +
                "); call it after batch(k) and before a batch of another chunk (each chunk "
                "holds StreamOptions::chunk_batches batches)");
  }

  void check_index(std::size_t k) const {
    if (k >= num_batches() && moved_from())
      throw std::out_of_range("resident: batch index " + std::to_string(k) +
                              " is out of range: the streaming dataset was moved from and holds "
                              "no data; read the batches of the dataset it was moved to");
    if (k >= num_batches())
      throw std::out_of_range(
          "resident: batch index " + std::to_string(k) +
          " is out of range; the streaming dataset has " + std::to_string(num_batches()) +
          " batches (" + std::to_string(num_rows()) + " rows, batch size " +
          std::to_string(batch_size()) + ", remainder " + remainder_name(remainder()) +
          "); use an index below " + std::to_string(num_batches()));
  }

  template <std::size_t... Field>
  [[nodiscard]] batch_type views(const std::byte* slot, std::size_t first_row,
                                 const detail::BatchSlice& slice,
                                 std::index_sequence<Field...> /*fields*/) const {
    return batch_type(BatchView<const Ts>(
        reinterpret_cast<const Ts*>(  // NOLINT: typed view of the slot's bytes
            slot + stream_layout_.offsets[Field] + first_row * layout_.row_bytes[Field]),
        slice.rows, row_shapes_[Field], slice.valid)...);
  }

  // Stops the running pass, frees every slot once the reader's work so far is done, and
  // starts `order` at `position`.
  void restart(const detail::PassOrder& order, std::size_t position) {
    pipeline_->stop();
    for (std::size_t slot = 0; slot < stream_layout_.ring_chunks; ++slot) transport_->release(slot);
    active_order_ = std::make_shared<const detail::PassOrder>(order);
    held_ = no_position;
    pipeline_->start(
        position, stream_layout_.chunks, stream_layout_.prefetch_chunks,
        [loader = loader_, pass = active_order_](std::size_t at) { loader->load(*pass, at); });
  }

  static constexpr std::size_t no_position = static_cast<std::size_t>(-1);

  // The pipeline first and the transport next: a move assignment replaces them before the ring
  // they write into (the old producer is joined and the old copies drained first).
  std::unique_ptr<detail::ChunkPipeline> pipeline_;
  std::unique_ptr<Transport> transport_;
  Space space_;
  DatasetOptions options_;
  detail::DatasetLayout<num_fields> layout_;
  detail::StreamLayout<num_fields> stream_layout_{};
  std::array<Shape, num_fields> row_shapes_;
  detail::OwnedStream<Space> stream_;
  detail::Allocation<Space> ring_;
  std::shared_ptr<const Loader> loader_;
  std::uint64_t last_order_id_ = 0;
  std::shared_ptr<const detail::PassOrder> plain_order_;
  std::shared_ptr<const detail::PassOrder> active_order_;
  std::size_t held_ = no_position;
  detail::Tenancy tenancy_;
};

/// Deduces the field types from the tensors: `StreamingDataset ds(space, opt, x, y)`.
template <class Space, class... Ts>
StreamingDataset(Space, DatasetOptions, HostTensor<Ts>...)
    -> StreamingDataset<Space, std::remove_const_t<Ts>...>;

/// @brief One epoch of a `StreamingDataset`: `size()` batches, each the same tuple of views as
/// `batch(i)`. Made by `StreamingDataset::epoch`. It refers to the dataset object it was made
/// from: once that is moved from, assigned, swapped or destroyed, every use throws `Error`
/// saying so (as `Epoch` does).
template <class Dataset>
class StreamingEpoch {
 public:
  using batch_type = typename Dataset::batch_type;         ///< One view per field.
  using stream_type = typename Dataset::stream_type;       ///< The streams `wait`/`release` order.
  using iterator = detail::BatchIterator<StreamingEpoch>;  ///< Input iterator over batches.

  /// @brief Use `StreamingDataset::epoch`.
  StreamingEpoch(Dataset& dataset, EpochOptions options)
      : dataset_(&dataset),
        lease_(dataset.tenancy_.lease()),
        order_(std::make_shared<detail::PassOrder>(dataset.make_order(options))) {}

  /// @brief Batches in the epoch.
  /// @throws Error once the dataset was moved from, assigned, swapped or destroyed.
  [[nodiscard]] std::size_t size() const {
    lease_.check();
    return dataset_->num_batches();
  }
  [[nodiscard]] bool empty() const { return size() == 0; }
  [[nodiscard]] const EpochOptions& options() const noexcept { return order_->options; }
  /// @brief Always false: streamed batches are views of the ring's chunks, never gathered.
  [[nodiscard]] static constexpr bool gathers() noexcept { return false; }

  /// @brief Batch `k` of the epoch (`k < size()`); waits only if its chunk is still loading.
  /// @throws std::out_of_range past the end; the errors of `StreamingDataset::batch`; Error once
  /// the dataset was moved from, assigned, swapped or destroyed.
  [[nodiscard]] batch_type batch(std::size_t k) {
    lease_.check();
    return dataset_->serve(*order_, k);
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
    dataset_->transport_->wait(dataset_->held_slot(*order_, k, "wait"), consumer);
  }

  /// @brief Lets batch `k`'s chunk slot be loaded again only once the work enqueued on
  /// `consumer` so far is done (the dataset's stream waits for it before it gives the chunk
  /// up): call it after enqueueing the last read of batch `k` on `consumer`, before the reader
  /// asks for a batch of another chunk.
  /// @throws what `wait` throws; CudaError when the order cannot be recorded.
  void release(std::size_t k, stream_type consumer) {
    lease_.check();
    (void)dataset_->held_slot(*order_, k, "release");
    dataset_->transport_->join(consumer);
  }

  [[nodiscard]] iterator begin() {
    lease_.check();
    return iterator(this, 0, self_.lease());
  }
  [[nodiscard]] iterator end() { return iterator(this, size(), self_.lease()); }

 private:
  Dataset* dataset_;
  detail::TenancyLease lease_;  // checked before every use of `dataset_`
  std::shared_ptr<const detail::PassOrder> order_;
  detail::Tenancy self_;  // this epoch object's, for its iterators
};

namespace detail {

/// One open `.npy` file per field (regular files only: see `ReadFile`).
template <std::size_t Fields>
using FieldFiles = std::array<std::shared_ptr<const ReadFile>, Fields>;

template <class... Paths>
FieldFiles<sizeof...(Paths)> open_field_files(const Paths&... paths) {
  return {std::make_shared<const ReadFile>(std::string(paths))...};
}

/// The headers of the open `.npy` files, one per field, checked against the fields' types and
/// for rows.
template <class... Ts>
std::array<npy::Header, sizeof...(Ts)> read_field_headers(const FieldFiles<sizeof...(Ts)>& files) {
  std::array<npy::Header, sizeof...(Ts)> headers;
  std::array<std::string, sizeof...(Ts)> paths;
  constexpr std::array<npy::DType, sizeof...(Ts)> dtypes{npy::dtype_of<Ts>()...};
  for (std::size_t field = 0; field < sizeof...(Ts); ++field) {
    paths[field] = files[field]->path();
    headers[field] = npy::detail::read_header(*files[field]);
    const npy::Header& header = headers[field];
    if (header.dtype != dtypes[field])
      throw FormatError(paths[field], 0,
                        std::string("the array holds ") + npy::dtype_code(header.dtype) +
                            " elements but field " + std::to_string(field) + " is " +
                            npy::dtype_code(dtypes[field]) +
                            "; use the matching C++ type or convert the file");
    if (header.shape.rank() == 0)
      throw FormatError(paths[field], 0, "a 0-d array has no rows; save it with shape (1,)");
  }
  return headers;
}

// The rows are read from the descriptors the headers were read from: a file put at the path
// in between can never be streamed on the strength of another file's header.
template <class Space, class... Ts, std::size_t... Field>
StreamingDataset<Space, Ts...> stream_files(Space space, const DatasetOptions& options,
                                            const FieldFiles<sizeof...(Ts)>& files,
                                            std::index_sequence<Field...> /*fields*/) {
  const auto headers = read_field_headers<Ts...>(files);
  for (std::size_t field = 0; field < sizeof...(Ts); ++field) {
    const npy::Header& header = headers[field];
    if (header.big_endian || (header.fortran_order && header.shape.rank() > 1))
      throw FormatError(files[field]->path(), 0,
                        "streaming reads rows straight from the file, which needs little-endian "
                        "C-order data; re-save it with numpy.ascontiguousarray(a).astype('<" +
                            std::string(npy::dtype_code(header.dtype)) + "')");
  }
  const auto layout =
      make_layout<sizeof...(Ts)>(options, {headers[Field].shape...}, {sizeof(Ts)...});
  return StreamingDataset<Space, Ts...>(
      std::move(space), options, layout,
      std::array<RowSource, sizeof...(Ts)>{RowSource::file(files[Field], headers[Field].data_offset,
                                                           headers[Field].shape[0],
                                                           layout.row_bytes[Field])...},
      std::array<Shape, sizeof...(Ts)>{headers[Field].shape.drop_front()...});
}

}  // namespace detail

/// @brief Streams `.npy` files, one per field, never reading more of them than a chunk at a
/// time (so they may exceed the host's memory too):
/// `load_streaming_dataset<CudaSpace, std::uint8_t, std::int32_t>(space, options, "x.npy",
/// "y.npy")`. The files are checked (regular file, header, dtype, length, rows) before the space
/// is touched and held open; each read checks that its file is still the one opened: a file
/// removed or replaced (renamed over), truncated or extended, or modified (its modification time
/// changed, even by a touch that kept its bytes) since is refused. Keep streamed files unchanged
/// until the dataset is destroyed.
/// @throws FormatError for a path that is not a regular file (a FIFO, socket, device or
/// directory: refused before anything blocks), a malformed, mistyped, big-endian or Fortran-order
/// file; InvalidArgument when the files disagree on rows; whatever the constructor throws; and,
/// from the batches, FormatError when a file changed while streaming.
template <class Space, class... Ts, class... Paths>
StreamingDataset<Space, Ts...> load_streaming_dataset(Space space, const DatasetOptions& options,
                                                      const Paths&... paths) {
  static_assert(sizeof...(Ts) >= 1,
                "name the field types: load_streaming_dataset<Space, float, int>(...)");
  static_assert(sizeof...(Paths) == sizeof...(Ts), "give one .npy path per field type");
  return detail::stream_files<Space, Ts...>(std::move(space), options,
                                            detail::open_field_files(paths...),
                                            std::index_sequence_for<Ts...>{});
}

}  // namespace resident
