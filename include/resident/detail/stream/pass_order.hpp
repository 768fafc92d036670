// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// The order of one streaming pass: which chunk comes at each position of the pass, and which
// of a chunk's batches at each place in it. In whole-epoch order a chunk holds the epoch's
// batches in the epoch's order (those of a preloaded dataset); in window order it holds
// consecutive batches of the geometry, read straight. Pure functions of the options and the
// layouts, so that every rank (and every space) streams the same order.

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "resident/detail/dataset/epoch_order.hpp"
#include "resident/detail/dataset/row_order.hpp"
#include "resident/detail/dataset/shard_geometry.hpp"
#include "resident/detail/expects.hpp"
#include "resident/detail/stream/stream_layout.hpp"
#include "resident/epoch_options.hpp"
#include "resident/permutation.hpp"

namespace resident::detail {

/// The order of one streaming pass.
struct PassOrder {
  std::uint64_t id = 0;  ///< Tells passes apart (0: none yet).
  /// The epoch: options, replica and drop offset in either order; in whole-epoch order also the
  /// batch and sample permutations a preloaded dataset would use.
  EpochOrder epoch{};
  bool whole_epoch = false;           ///< Chunks hold the epoch's batches in its order.
  std::vector<std::size_t> chunk_at;  ///< Chunk at each position.
  std::size_t short_position = 0;     ///< Position of the last (possibly short) chunk.

  [[nodiscard]] const EpochOptions& options() const noexcept { return epoch.options; }
};

/// @brief The pass `id` in the order `options` gives, from `start`. Whole-epoch: the chunks in
/// turn, each holding the epoch's next batches. Window: shuffled, a seeded permutation of the
/// chunks (the chunk of a short last batch stays last, as the batch does in it), a new replica
/// for a replicated rank and a new drop offset; else the chunks in order.
/// @throws InvalidArgument for a window-order pass resumed where its batches differ from those
/// it stopped in (another world size or batch size).
template <std::size_t Fields>
PassOrder make_pass_order(std::uint64_t id, const EpochOptions& options,
                          const ShardGeometry& geometry, const StreamLayout<Fields>& stream,
                          bool whole_epoch, const EpochStart& start = {}) {
  PassOrder order;
  order.id = id;
  order.whole_epoch = whole_epoch;
  const std::size_t chunks = stream.chunks;
  order.chunk_at.resize(chunks);
  const bool shuffled = options.shuffle != Shuffle::none;
  order.epoch = EpochOrder(geometry, options, start);
  if (!whole_epoch) {
    RESIDENT_EXPECTS(order.epoch.map.parts == 0,
                     "a stream in window order resumes only on the world size and batch size "
                     "it stopped with (" +
                         std::to_string(start.global_batch) +
                         " rows a step), since its chunks and windows are cut from them, but "
                         "this one has " +
                         std::to_string(geometry.step_rows()) +
                         " rows a step; resume with the batch size and world size of the run "
                         "that saved the state, or stream the data in whole-epoch order "
                         "(StreamOptions::order), which resumes on any of them");
    // Chunks of consecutive rows, read straight: the window order's own permutations.
    order.epoch.batch_order = Permutation();
    order.epoch.sample_order = Permutation();
    order.epoch.replica = shuffled ? epoch_replica(geometry, options) : geometry.replica;
    order.epoch.offset = drop_offset(geometry, options);
  }
  const Permutation permutation =
      shuffled && !whole_epoch
          ? Permutation(chunks - (geometry.short_last ? 1 : 0), options.seed, options.epoch)
          : Permutation();
  for (std::size_t position = 0; position < chunks; ++position) {
    order.chunk_at[position] =
        position < permutation.size() ? static_cast<std::size_t>(permutation(position)) : position;
    if (order.chunk_at[position] + 1 == chunks) order.short_position = position;
  }
  return order;
}

/// @brief Epoch batch `k` of a pass of `batches` batches: its chunk position and its place
/// among that chunk's batches.
template <std::size_t Fields>
std::pair<std::size_t, std::size_t> locate(const PassOrder& order, std::size_t k,
                                           const StreamLayout<Fields>& stream,
                                           std::size_t batches) noexcept {
  const std::size_t per_chunk = stream.chunk_batches;
  if (order.whole_epoch) return {k / per_chunk, k % per_chunk};  // the epoch's batches in turn
  const std::size_t last = stream.batches_of(stream.chunks - 1, batches);
  const std::size_t before_short = order.short_position * per_chunk;
  if (k < before_short) return {k / per_chunk, k % per_chunk};
  if (k < before_short + last) return {order.short_position, k - before_short};
  const std::size_t after = k - before_short - last;
  return {order.short_position + 1 + after / per_chunk, after % per_chunk};
}

/// @brief The chunk's batch at `place`: shuffled within the chunk under a shuffling pass in
/// window order, but for a short last batch, which stays last.
template <std::size_t Fields>
std::size_t local_batch(const PassOrder& order, std::size_t chunk, std::size_t place,
                        const ShardGeometry& geometry, const StreamLayout<Fields>& stream) {
  if (order.whole_epoch || order.options().shuffle == Shuffle::none) return place;
  constexpr std::uint64_t chunk_key = 0x6368756e6bULL;  // "chunk": its own key stream
  const bool holds_short = geometry.short_last && chunk + 1 == stream.chunks;
  const std::size_t shuffled = stream.batches_of(chunk, geometry.batches) - (holds_short ? 1 : 0);
  if (place >= shuffled) return place;
  return static_cast<std::size_t>(
      Permutation(shuffled, mix64(order.options().seed ^ chunk_key) ^ mix64(chunk),
                  order.options().epoch)(place));
}

/// @brief The slice of the order (rows, valid rows) of the batch at `place` of the chunk at
/// `position`, and the chunk's batch it is (see `local_batch`).
template <std::size_t Fields>
BatchSlice pass_slice(const PassOrder& order, std::size_t position, std::size_t place,
                      const ShardGeometry& geometry, const StreamLayout<Fields>& stream) {
  if (order.whole_epoch) return order.epoch.slice(position * stream.chunk_batches + place);
  const std::size_t chunk = order.chunk_at[position];
  BatchSlice slice = geometry.slice(
      chunk * stream.chunk_batches + local_batch(order, chunk, place, geometry, stream),
      order.epoch.replica);
  slice.first += order.epoch.offset;
  return slice;
}

}  // namespace resident::detail
