// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// The machinery of a `StreamingDataset`'s passes. A `ChunkStreamer` is one set of chunk slots
// (an allocation of the space), the space's chunk transport, the producer thread's pipeline and
// loader, and the pass the reader is in: it serves batch k of a pass as a place in a slot,
// restarting the pass where the reader jumped. `ChunkStreamers`, which the dataset holds, lends
// one to each live epoch (see `LendingPool`), so that no epoch loads into the slots another live
// epoch's views lie in, and keeps what every streamer shares: the layouts, the sources, the
// order.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <numeric>
#include <string>
#include <utility>

#include "resident/detail/dataset/dataset_core.hpp"
#include "resident/detail/dataset/layout.hpp"
#include "resident/detail/dataset/row_order.hpp"
#include "resident/detail/dataset/shard_geometry.hpp"
#include "resident/detail/expects.hpp"
#include "resident/detail/format_bytes.hpp"
#include "resident/detail/host_memory.hpp"
#include "resident/detail/lending_pool.hpp"
#include "resident/detail/resources.hpp"
#include "resident/detail/stream/chunk_loader.hpp"
#include "resident/detail/stream/chunk_pipeline.hpp"
#include "resident/detail/stream/chunk_rows.hpp"
#include "resident/detail/stream/pass_order.hpp"
#include "resident/detail/stream/row_source.hpp"
#include "resident/detail/stream/stream_layout.hpp"
#include "resident/epoch_options.hpp"
#include "resident/error.hpp"
#include "resident/permutation.hpp"
#include "resident/space_traits.hpp"

namespace resident::detail {

/// @brief Whether every one of `sources` is in host memory (see `RowSource::in_memory`).
template <std::size_t Fields>
bool sources_in_memory(const std::array<RowSource, Fields>& sources) noexcept {
  // A source of no bytes (an empty tensor may have a null pointer) reads nothing from anywhere.
  return std::all_of(sources.begin(), sources.end(), [](const RowSource& source) {
    return source.in_memory() || source.rows() == 0 || source.row_bytes() == 0;
  });
}

/// @brief Whether a stream of `sources` under `order` runs in whole-epoch order: unless
/// `StreamOrder::window` is asked for, when every source is host memory (the loaders read
/// files into host memory for it, or leave them files for a window order).
/// @throws InvalidArgument for `StreamOrder::whole_epoch` over a source that is not in memory.
template <std::size_t Fields>
bool streams_whole_epoch(StreamOrder order, const std::array<RowSource, Fields>& sources) {
  const bool in_memory = sources_in_memory(sources);
  RESIDENT_EXPECTS(in_memory || order != StreamOrder::whole_epoch,
                   "StreamOptions::order is whole_epoch but a field's rows are read from a file; "
                   "load it with load_streaming_dataset, which reads the rows into host memory "
                   "for that order, or use StreamOrder::window");
  return order != StreamOrder::window && in_memory;
}

template <class Space, std::size_t Fields>
class ChunkStreamer {
 public:
  using stream_type = typename Space::stream_type;
  using Transport = typename space_traits<Space>::chunk_transport;

  /// Where a served batch is: its slot's bytes, the batch's first row in the slot, and its
  /// slice of the order (rows, valid rows).
  struct Served {
    const std::byte* slot;
    std::size_t first_row;
    BatchSlice slice;
  };

  /// @brief Allocates the slots in `space` and makes the transport; starts nothing.
  /// @throws CapacityError when the slots cannot be allocated; what the transport throws.
  /// `reader_owner` keeps the reader's stream alive as long as the producer and the transport
  /// may use it (null for a stream the caller owns). `whole_epoch`: every pass in whole-epoch
  /// order (see `PassOrder`); needs host-memory sources, which the streamers of one dataset
  /// share (a `RowSource` shares its bytes or its file).
  ChunkStreamer(const Space& space, stream_type reader, std::shared_ptr<const void> reader_owner,
                const DatasetLayout<Fields>& layout, const StreamLayout<Fields>& stream,
                std::array<RowSource, Fields> sources, bool whole_epoch, unsigned threads)
      : reader_owner_(std::move(reader_owner)),
        layout_(layout),
        stream_(stream),
        slots_(
            std::make_shared<Allocation<Space>>(space, stream.total_bytes, reader, reader_owner_)) {
    const bool pinned = Transport::sources_pinned(space, sources);
    transport_ = std::make_unique<Transport>(space, reader, stream.chunk_slots, stream.slot_bytes,
                                             pinned, whole_epoch, threads);
    loader_ = std::make_shared<const Loader>(
        Loader{layout_, stream_, std::move(sources), slots_->data(), transport_.get()});
  }
  ChunkStreamer(const ChunkStreamer&) = delete;
  ChunkStreamer& operator=(const ChunkStreamer&) = delete;
  ChunkStreamer(ChunkStreamer&&) = delete;
  ChunkStreamer& operator=(ChunkStreamer&&) = delete;
  /// Stops the producer and waits for copies in flight before the slots are released.
  ~ChunkStreamer() {
    pipeline_.stop();
    try {
      transport_->drain();
    } catch (const Error&) {  // a failed device cannot be drained; releasing is still safe
    }
  }

  [[nodiscard]] std::size_t bytes() const noexcept { return slots_->bytes(); }

  /// @brief Epoch batch `k` (< the dataset's batches) of `order`: starts or restarts the pass
  /// where needed, gives up the chunks behind it, and waits only for its own chunk.
  [[nodiscard]] Served serve(const PassOrder& order, std::size_t k) {
    const ShardGeometry& geometry = layout_.geometry;
    const auto [position, place] = locate(order, k, stream_, geometry.batches);
    hold(order, position, position);
    const std::size_t local =
        local_batch(order, order.chunk_at[position], place, geometry, stream_);
    return {slots_->data() + (position % stream_.chunk_slots) * stream_.slot_bytes,
            local * geometry.batch_size, pass_slice(order, position, place, geometry, stream_)};
  }

  /// Where the rows of a gathered batch lie (see `ChunkRows`) and its slice of the order.
  struct Gathered {
    ChunkRows order;
    BatchSlice slice;
  };

  /// @brief Epoch batch `k` of `order` to gather: its chunks held as `serve` holds one. (In
  /// whole-epoch order on a space whose gathers host threads run, no streamer is asked: see
  /// `ChunkStreamers::gather`.) A batch of a whole-epoch pass, and one of an unshuffled
  /// or batch-shuffled window pass, is read straight from its slot. Under `Shuffle::samples` in
  /// window order its rows are drawn from the window of `window_chunks` positions it is in (every
  /// chunk of which is held), by a permutation of all the window's full batches' rows keyed by the
  /// seed, the epoch and the window; a short last batch is read straight, and last, as in every
  /// shuffled epoch.
  [[nodiscard]] Gathered gather(const PassOrder& order, std::size_t k) {
    const ShardGeometry& geometry = layout_.geometry;
    const auto [position, place] = locate(order, k, stream_, geometry.batches);
    const std::size_t chunk = order.chunk_at[position];
    const std::size_t local = local_batch(order, chunk, place, geometry, stream_);
    Gathered gathered{};
    ChunkRows& rows = gathered.order;
    rows.batch_size = geometry.batch_size;
    rows.chunk_batches = stream_.chunk_batches;
    rows.replicas = geometry.replicas;
    rows.replica = order.epoch.replica;
    rows.offset = order.epoch.offset;
    const bool short_batch =
        geometry.short_last && chunk * stream_.chunk_batches + local + 1 == geometry.batches;
    if (order.whole_epoch || order.options().shuffle != Shuffle::samples || short_batch) {
      hold(order, position, position);
      gathered.slice = pass_slice(order, position, place, geometry, stream_);
      rows.slot[0] = position % stream_.chunk_slots;
      rows.slot_row = local * geometry.batch_size;
      rows.straight = order.whole_epoch ? order.epoch.rows(k)
                                        : RowOrder{{}, geometry.order_rows, gathered.slice.first};
      return gathered;
    }
    const std::size_t first = position / stream_.window_chunks * stream_.window_chunks;
    const std::size_t end = std::min(first + stream_.window_chunks, stream_.chunks);
    hold(order, first, end - 1);
    // The window's chunks, one with fewer batches (the last chunk) moved last, so that a
    // window row's chunk is its batch over `chunk_batches`; `q` numbers the epoch's batches of
    // the window from 0.
    std::size_t listed = 0;
    std::size_t fewer = end;
    std::size_t window_batches = 0;
    std::size_t q = place;
    const auto list = [&](std::size_t at) {
      rows.slot[listed] = at % stream_.chunk_slots;
      rows.first_batch[listed] = order.chunk_at[at] * stream_.chunk_batches;
      ++listed;
    };
    for (std::size_t at = first; at < end; ++at) {
      const std::size_t batches = stream_.batches_of(order.chunk_at[at], geometry.batches);
      window_batches += batches;
      if (at < position) q += batches;
      if (batches < stream_.chunk_batches)
        fewer = at;
      else
        list(at);
    }
    if (fewer != end) list(fewer);
    const bool holds_short = geometry.short_last && order.chunk_at[end - 1] + 1 == stream_.chunks;
    window_batches -= holds_short ? 1 : 0;
    constexpr std::uint64_t window_key = 0x77696e646f77ULL;  // "window": its own key stream
    rows.samples =
        Permutation(window_batches * geometry.batch_size,
                    mix64(order.options().seed ^ window_key) ^ mix64(first), order.options().epoch);
    rows.first = q * geometry.batch_size;
    gathered.slice = {0, geometry.batch_size, geometry.batch_size};
    return gathered;
  }

  /// The slots' first byte, for the gathers that read them.
  [[nodiscard]] const std::byte* slots() const noexcept { return slots_->data(); }
  /// @brief A share of the slots' allocation, pointing at its first byte: it stays allocated
  /// while the share lives (a tensor over a batch in a slot), after this streamer is gone.
  [[nodiscard]] std::shared_ptr<const void> owner() const noexcept {
    return std::shared_ptr<const void>(slots_, slots_->data());
  }

  /// @brief The slot of epoch batch `k` of `order` for `StreamingEpoch::wait` and `release`
  /// (`call`): the chunk the reader holds, since a chunk given up has had its slot's order
  /// recorded already.
  /// @throws Error naming the batch and why when its chunk is not the one held.
  [[nodiscard]] std::size_t held_slot(const PassOrder& order, std::size_t k,
                                      const char* call) const {
    const std::size_t position = locate(order, k, stream_, layout_.geometry.batches).first;
    const bool ours = active_order_ != nullptr && active_order_->id == order.id;
    if (ours && held_ == position) return position % stream_.chunk_slots;
    throw Error("resident: " + std::string(call) + "(" + std::to_string(k) +
                ", stream) on a streaming epoch found batch " + std::to_string(k) +
                "'s chunk not held by the reader (" +
                (!ours ? std::string("no batch of this epoch was asked for yet")
                 : held_ == no_position || held_ < position
                     ? std::string("the batch was not asked for yet")
                     : "the reader moved on to a later chunk") +
                "); call it after batch(k) and before a batch of another chunk (each chunk "
                "holds StreamOptions::chunk_batches batches)");
  }

  /// @brief Orders `consumer` after slot `slot`'s chunk landed.
  void wait(std::size_t slot, stream_type consumer) const { transport_->wait(slot, consumer); }
  /// @brief Makes the reader's stream, and so the slot's next release, wait for `consumer`.
  void reader_waits_for(stream_type consumer) const { transport_->reader_waits_for(consumer); }

 private:
  using Loader = ChunkLoader<Transport, Fields>;
  static constexpr std::size_t no_position = static_cast<std::size_t>(-1);

  // Holds positions [first, last] of `order` loaded: starts or restarts the pass where it
  // cannot reach them, gives up the chunks before `first` and orders the reader after each
  // held chunk's copies.
  void hold(const PassOrder& order, std::size_t first, std::size_t last) {
    if (active_order_ == nullptr || active_order_->id != order.id || !pipeline_.can_reach(last) ||
        first < acquired_first_)
      restart(order, first);
    if (held_ != last) {
      pipeline_.acquire(last, first, [this](std::size_t given_up) {
        transport_->release(given_up % stream_.chunk_slots);
      });
      for (std::size_t at = std::max(first, acquired_end_); at <= last; ++at)
        transport_->acquire(at % stream_.chunk_slots);
      acquired_first_ = first;
      acquired_end_ = last + 1;
      held_ = last;
    }
  }

  // Stops the running pass, frees every slot once the reader's work so far is done, and
  // starts `order` at `position`.
  void restart(const PassOrder& order, std::size_t position) {
    pipeline_.stop();
    for (std::size_t slot = 0; slot < stream_.chunk_slots; ++slot) transport_->release(slot);
    active_order_ = std::make_shared<const PassOrder>(order);
    held_ = no_position;
    acquired_first_ = position;
    acquired_end_ = position;
    pipeline_.start(position, stream_.chunks, stream_.prefetch_chunks, stream_.reader_copies,
                    [loader = loader_, pass = active_order_](std::size_t at, SharedPieces& pieces) {
                      loader->load(*pass, at, pieces);
                    });
  }

  std::shared_ptr<const void> reader_owner_;  // first declared: released last
  DatasetLayout<Fields> layout_;
  StreamLayout<Fields> stream_;
  std::shared_ptr<Allocation<Space>> slots_;  // shared with the tensors over its batches
  std::unique_ptr<Transport> transport_;
  std::shared_ptr<const Loader> loader_;  // shared with the producer's running load
  ChunkPipeline pipeline_;                // stopped by the destructor before the rest goes
  std::shared_ptr<const PassOrder> active_order_;
  std::size_t held_ = no_position;
  std::size_t acquired_first_ = 0;  // first position held (the window's first)
  std::size_t acquired_end_ = 0;    // past the last position the reader was ordered after
};

/// @brief A pass of a streaming dataset: its order and the streamer lent to it (none for a
/// gathering pass that reads the rows in host memory directly, or, until its first batch, for a
/// pass made while other live passes held every streamer and the space had no room for more).
template <class Space, std::size_t Fields>
struct StreamPass {
  PassOrder order;
  std::weak_ptr<const void> borrower;  ///< Whose pass it is (see `LendingPool::lend`).
  typename LendingPool<ChunkStreamer<Space, Fields>>::Loan streamer;
};

/// @brief What a streaming dataset holds for its passes: the streamers it lends them, one per
/// live pass, and what every streamer shares (the layouts, the sources, the order of passes).
/// Move-only; moved from, it holds nothing.
template <class Space, std::size_t Fields>
class ChunkStreamers {
 public:
  using Streamer = ChunkStreamer<Space, Fields>;
  using Pass = StreamPass<Space, Fields>;

  ChunkStreamers() = default;
  /// @brief Makes the first streamer (the chunk slots the dataset plans), idle until a pass
  /// borrows it. See `ChunkStreamer` for the arguments.
  /// @throws what making the streamer throws.
  ChunkStreamers(const Space& space, typename Space::stream_type reader,
                 std::shared_ptr<const void> reader_owner, const DatasetLayout<Fields>& layout,
                 const StreamLayout<Fields>& stream, std::array<RowSource, Fields> sources,
                 bool whole_epoch, unsigned threads)
      : recipe_(std::make_unique<Recipe>(Recipe{
            space, reader, std::move(reader_owner), layout, stream, sources, whole_epoch,
            whole_epoch && space_traits<Space>::gather_engine::reads_host_memory, threads})) {
    pool_.add(make_streamer());
  }

  /// @brief Bytes of the chunk slots held: lent to live passes, or idle for the next.
  [[nodiscard]] std::size_t bytes() const noexcept { return pool_.bytes(); }
  /// @brief Where each field's rows are read from (a streamer that was moved from has none:
  /// ask only one that was made).
  [[nodiscard]] const std::array<RowSource, Fields>& sources() const noexcept {
    return recipe_->sources;
  }
  /// @brief Bytes of host memory the sources own (rows read or inflated for the stream).
  [[nodiscard]] std::size_t host_bytes() const noexcept {
    if (!recipe_) return 0;
    return std::accumulate(
        recipe_->sources.begin(), recipe_->sources.end(), std::size_t{0},
        [](std::size_t sum, const RowSource& source) { return sum + source.owned_bytes(); });
  }
  /// @brief Bytes of files' mappings the sources read in place (the rows this rank streams).
  [[nodiscard]] std::size_t mapped_bytes() const noexcept {
    if (!recipe_) return 0;
    return std::accumulate(
        recipe_->sources.begin(), recipe_->sources.end(), std::size_t{0},
        [](std::size_t sum, const RowSource& source) { return sum + source.mapped_bytes(); });
  }
  /// @brief In whole-epoch order, asks the kernel to back the rows this rank reads in host
  /// memory by large pages (`advise_large_pages`): every epoch reads them in its own random
  /// order, which on small pages costs a TLB miss per row. Nothing in window order, whose reads
  /// are sequential, nor for files' mappings (see `StreamOptions::large_pages`).
  void advise_large_pages() const noexcept {
    if (!recipe_->whole_epoch) return;
    for (const RowSource& source : recipe_->sources) {
      if (source.memory() == nullptr || source.mapping() != nullptr) continue;
      const RowRange read = streamed_source_rows(recipe_->layout.geometry, source.rows());
      detail::advise_large_pages(source.memory() + read.first * source.row_bytes(),
                                 read.rows * source.row_bytes());
    }
  }
  /// @brief A share of the chunk slots holding the `bytes` at `first`, or null when none does.
  [[nodiscard]] std::shared_ptr<const void> owner_of(const void* first,
                                                     std::size_t bytes) const noexcept {
    std::shared_ptr<const void> found;
    pool_.visit([&](const Streamer& streamer, bool /*lent*/) {
      const std::byte* begin = streamer.slots();
      const auto* at = static_cast<const std::byte*>(first);
      if (at >= begin && at + bytes <= begin + streamer.bytes()) found = streamer.owner();
    });
    return found;
  }
  /// @brief Whether every pass is in whole-epoch order (false once moved from).
  [[nodiscard]] bool whole_epoch() const noexcept { return recipe_ && recipe_->whole_epoch; }
  /// @brief Whether `Shuffle::samples` batches are views of the chunk slots: in whole-epoch
  /// order, on a space whose gathers run on the device (on one whose gathers host threads run,
  /// a gather reads the rows in host memory directly, into the gather ring, as a preloaded
  /// dataset's does: cheaper than writing every row of the epoch into the slots first).
  [[nodiscard]] bool views_samples() const noexcept {
    return recipe_ && recipe_->whole_epoch && !recipe_->direct;
  }

  /// @brief A new pass of `borrower` (see `LendingPool::lend`) in the order `options` gives
  /// from `start`,
  /// with a streamer lent to it unless it gathers every batch from the rows in host memory
  /// (`gathers` on a direct stream). `defer`: where every streamer is lent and the space has no
  /// room for another, leave it for the first batch (see `streamer`) rather than refuse.
  /// @throws CapacityError when no streamer can be had (see `lend`); std::bad_alloc.
  [[nodiscard]] Pass make_pass(std::weak_ptr<const void> borrower, const EpochOptions& options,
                               const EpochStart& start, bool gathers, std::size_t reserve,
                               bool defer) {
    Pass pass{make_pass_order(++last_order_id_, options, recipe_->layout.geometry, recipe_->stream,
                              recipe_->whole_epoch, start),
              std::move(borrower),
              {}};
    if (gathers && recipe_->direct) return pass;
    try {
      pass.streamer = lend(pass.borrower, reserve);
    } catch (const CapacityError&) {
      if (!defer || pool_.lent() == 0) throw;
    }
    return pass;
  }

  /// @brief The streamer of `pass`: lent now to a pass that was left waiting for one.
  /// @throws CapacityError when every streamer is still lent and the space has no room for another.
  [[nodiscard]] Streamer& streamer(Pass& pass, std::size_t reserve) {
    if (!pass.streamer) pass.streamer = lend(pass.borrower, reserve);
    return *pass.streamer;
  }

  /// @brief Epoch batch `k` of `pass` to gather (see `ChunkStreamer::gather`); on a direct
  /// stream, the rows where they lie in host memory, with no chunk loaded or held for them.
  [[nodiscard]] typename Streamer::Gathered gather(Pass& pass, std::size_t k, std::size_t reserve) {
    if (!recipe_->direct) return streamer(pass, reserve).gather(pass.order, k);
    // Rows still filled in the background: a gather reads rows anywhere, so all of them.
    for (const RowSource& source : recipe_->sources) source.await_all();
    const ShardGeometry& geometry = recipe_->layout.geometry;
    typename Streamer::Gathered gathered{};
    ChunkRows& rows = gathered.order;
    rows.batch_size = geometry.batch_size;
    rows.chunk_batches = recipe_->stream.chunk_batches;
    rows.replicas = geometry.replicas;
    rows.replica = pass.order.epoch.replica;
    rows.offset = pass.order.epoch.offset;
    gathered.slice = pass.order.epoch.slice(k);
    rows.straight = pass.order.epoch.rows(k);
    advise_unread_rows(rows.straight, gathered.slice.rows);
    return gathered;
  }

  /// @brief After a gather of a direct stream read its rows where they lie: refuses the batch
  /// when a file whose mapping it read changed (see `RowSource::check_mapping`). Nothing for
  /// other streams, whose gathers read chunk slots that were checked when they were loaded.
  /// @throws FormatError naming the change.
  void check_gathered() const {
    if (!recipe_ || !recipe_->direct) return;
    for (const RowSource& source : recipe_->sources) source.check_mapping();
  }

  /// @brief Where gathers of `pass` read field `field`'s rows (see `ChunkSlotRows`): the slots
  /// of its streamer, or, on a direct stream, the rows in host memory.
  template <class T>
  [[nodiscard]] ChunkSlotRows<T> rows_of(const Pass& pass, std::size_t field,
                                         const ChunkRows& rows) const noexcept {
    const Recipe& recipe = *recipe_;
    const std::byte* slots = pass.streamer ? pass.streamer->slots() : nullptr;
    ChunkSlotRows<T> source{slots == nullptr ? nullptr : slots + recipe.stream.offsets[field],
                            recipe.stream.slot_bytes, recipe.layout.row_bytes[field], rows};
    if (recipe.direct) {
      source.direct = recipe.sources[field].rows_memory();
      source.source = source_map(recipe.layout);
      source.selected = recipe.sources[field].selected_rows();
    }
    return source;
  }

 private:
  // While a file's mapping is still being read ahead, a batch's rows may not be in the page
  // cache yet: asking for all of them at once lets the disk fetch them together, where the
  // gather's page faults would fetch them one after another.
  void advise_unread_rows(const RowOrder& order, std::size_t rows) const noexcept {
    const SourceMap map = source_map(recipe_->layout);
    for (const RowSource& source : recipe_->sources) {
      if (source.mapping() == nullptr || !source.mapping()->reading_ahead()) continue;
      for (std::size_t r = 0; r < rows; ++r)
        source.advise_will_read(static_cast<std::size_t>(map.row(order.row(r))), 1);
    }
  }

  // What every streamer is made from; on the heap, so that a move leaves none behind.
  struct Recipe {
    Space space;
    typename Space::stream_type reader;
    std::shared_ptr<const void> reader_owner;
    DatasetLayout<Fields> layout;
    StreamLayout<Fields> stream;
    std::array<RowSource, Fields> sources;
    bool whole_epoch;
    bool direct;  // gathers read the rows where they lie in host memory (see `gather`)
    unsigned threads;
  };

  [[nodiscard]] std::shared_ptr<Streamer> make_streamer() const {
    const Recipe& recipe = *recipe_;
    return std::make_shared<Streamer>(recipe.space, recipe.reader, recipe.reader_owner,
                                      recipe.layout, recipe.stream, recipe.sources,
                                      recipe.whole_epoch, recipe.threads);
  }

  // An idle streamer, or a new one when the space has room for its chunk slots beside the
  // reserve; a refusal says which live passes hold the others.
  [[nodiscard]] typename LendingPool<Streamer>::Loan lend(const std::weak_ptr<const void>& borrower,
                                                          std::size_t reserve) {
    const std::size_t set_bytes = recipe_->stream.total_bytes;
    return pool_.lend(
        borrower, [](const Streamer& /*streamer*/) { return true; },
        [&](std::size_t lent, std::size_t held, std::size_t /*idle: none, every one fits*/) {
          const CapacityVerdict verdict = check_capacity(recipe_->space, reserve, set_bytes);
          if (verdict.fits) return;
          throw verdict.refusal(
              std::to_string(lent) + " live epoch" + (lent == 1 ? "" : "s") +
                  " of this streaming dataset (batch(i)'s unshuffled pass counts as one) hold" +
                  (lent == 1 ? "s" : "") + " a set of its chunk slots each (" + format_bytes(held) +
                  " in all): a view of a chunk slot stays valid while its epoch lives, so a "
                  "newer epoch never loads into an older one's slots; end the older epochs "
                  "first (destroy them, or let them go out of scope), read the batches from one "
                  "epoch, or free memory",
              "another set of chunk slots");
        },
        [&] { return make_streamer(); });
  }

  std::unique_ptr<Recipe> recipe_;
  LendingPool<Streamer> pool_;
  std::uint64_t last_order_id_ = 0;  // passes are made from the dataset's thread
};

}  // namespace resident::detail
