// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// The move-only machinery of a `StreamingDataset`, behind the one owner the dataset holds:
// the slots (the dataset's one allocation), the space's chunk transport, the producer
// thread's pipeline and loader, and the pass the reader is in. It serves batch k of a pass as
// a place in a slot, restarting the pass where the reader jumped.

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "resident/detail/chunk_loader.hpp"
#include "resident/detail/chunk_pipeline.hpp"
#include "resident/detail/layout.hpp"
#include "resident/detail/pass_order.hpp"
#include "resident/detail/resources.hpp"
#include "resident/detail/row_source.hpp"
#include "resident/detail/shard_geometry.hpp"
#include "resident/detail/stream_layout.hpp"
#include "resident/epoch_options.hpp"
#include "resident/error.hpp"
#include "resident/space_traits.hpp"

namespace resident::detail {

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
  /// may use it (null for a stream the caller owns).
  ChunkStreamer(const Space& space, stream_type reader, std::shared_ptr<const void> reader_owner,
                const DatasetLayout<Fields>& layout, const StreamLayout<Fields>& stream,
                std::array<RowSource, Fields> sources, unsigned threads)
      : reader_owner_(std::move(reader_owner)),
        layout_(layout),
        stream_(stream),
        slots_(space, stream.total_bytes) {
    const bool pinned = Transport::sources_pinned(space, sources);
    transport_ = std::make_unique<Transport>(space, reader, stream.ring_chunks, stream.slot_bytes,
                                             pinned, threads);
    loader_ = std::make_shared<const Loader>(
        Loader{layout_, stream_, std::move(sources), slots_.data(), transport_.get()});
  }
  ChunkStreamer(const ChunkStreamer&) = delete;
  ChunkStreamer& operator=(const ChunkStreamer&) = delete;
  /// Stops the producer and waits for copies in flight before the slots are released.
  ~ChunkStreamer() {
    pipeline_.stop();
    try {
      transport_->drain();
    } catch (const Error&) {  // a failed device cannot be drained; releasing is still safe
    }
  }

  [[nodiscard]] std::size_t bytes() const noexcept { return slots_.bytes(); }

  /// @brief A new pass order (each gets an id of its own).
  [[nodiscard]] PassOrder make_order(const EpochOptions& options) {
    return make_pass_order(++last_order_id_, options, layout_.geometry, stream_);
  }
  /// @brief The order of `batch(i)`: an unshuffled pass, made once.
  [[nodiscard]] const PassOrder& plain_order() {
    if (!plain_order_) plain_order_ = std::make_shared<const PassOrder>(make_order({}));
    return *plain_order_;
  }

  /// @brief Epoch batch `k` (< the dataset's batches) of `order`: starts or restarts the pass
  /// where needed, gives up the chunks behind it, and waits only for its own chunk.
  [[nodiscard]] Served serve(const PassOrder& order, std::size_t k) {
    const auto [position, place] = locate(order, k, stream_, layout_.geometry.batches);
    if (active_order_ == nullptr || active_order_->id != order.id || !pipeline_.can_reach(position))
      restart(order, position);
    if (held_ != position) {
      pipeline_.acquire(position, [this](std::size_t given_up) {
        transport_->release(given_up % stream_.ring_chunks);
      });
      transport_->acquire(position % stream_.ring_chunks);
      held_ = position;
    }
    const std::size_t chunk = order.chunk_at[position];
    const std::size_t local = local_batch(order, chunk, place, layout_.geometry, stream_);
    return {slots_.data() + (position % stream_.ring_chunks) * stream_.slot_bytes,
            local * layout_.geometry.batch_size,
            layout_.geometry.slice(chunk * stream_.chunk_batches + local, order.lane)};
  }

  /// @brief The slot of epoch batch `k` of `order` for `StreamingEpoch::wait` and `release`
  /// (`call`): the chunk the reader holds, since a chunk given up has had its slot's order
  /// recorded already.
  /// @throws Error naming the batch and why when its chunk is not the one held.
  [[nodiscard]] std::size_t held_slot(const PassOrder& order, std::size_t k,
                                      const char* call) const {
    const std::size_t position = locate(order, k, stream_, layout_.geometry.batches).first;
    const bool ours = active_order_ != nullptr && active_order_->id == order.id;
    if (ours && held_ == position) return position % stream_.ring_chunks;
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

  /// @brief Orders `consumer` after slot `slot`'s chunk landed.
  void wait(std::size_t slot, stream_type consumer) const { transport_->wait(slot, consumer); }
  /// @brief Makes the reader's stream, and so the slot's next release, wait for `consumer`.
  void join(stream_type consumer) const { transport_->join(consumer); }

 private:
  using Loader = ChunkLoader<Transport, Fields>;
  static constexpr std::size_t no_position = static_cast<std::size_t>(-1);

  // Stops the running pass, frees every slot once the reader's work so far is done, and
  // starts `order` at `position`.
  void restart(const PassOrder& order, std::size_t position) {
    pipeline_.stop();
    for (std::size_t slot = 0; slot < stream_.ring_chunks; ++slot) transport_->release(slot);
    active_order_ = std::make_shared<const PassOrder>(order);
    held_ = no_position;
    pipeline_.start(position, stream_.chunks, stream_.prefetch_chunks, stream_.reader_copies,
                    [loader = loader_, pass = active_order_](std::size_t at, SharedPieces& pieces) {
                      loader->load(*pass, at, pieces);
                    });
  }

  std::shared_ptr<const void> reader_owner_;  // first declared: released last
  DatasetLayout<Fields> layout_;
  StreamLayout<Fields> stream_;
  Allocation<Space> slots_;
  std::unique_ptr<Transport> transport_;
  std::shared_ptr<const Loader> loader_;  // shared with the producer's running load
  ChunkPipeline pipeline_;                // stopped by the destructor before the rest goes
  std::uint64_t last_order_id_ = 0;
  std::shared_ptr<const PassOrder> plain_order_;
  std::shared_ptr<const PassOrder> active_order_;
  std::size_t held_ = no_position;
};

}  // namespace resident::detail
