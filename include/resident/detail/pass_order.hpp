// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// The order of one streaming pass: which chunk comes at each position of the pass, and which
// of a chunk's batches at each place in it. Pure functions of the options and the layouts, so
// that every rank (and every space) streams the same order.

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "resident/detail/row_order.hpp"
#include "resident/detail/shard_geometry.hpp"
#include "resident/detail/stream_layout.hpp"
#include "resident/epoch_options.hpp"
#include "resident/permutation.hpp"

namespace resident::detail {

/// The order of one streaming pass.
struct PassOrder {
  std::uint64_t id = 0;               ///< Tells passes apart (0: none yet).
  EpochOptions options{};             ///< Seed, epoch, shuffle.
  std::vector<std::size_t> chunk_at;  ///< Chunk at each position.
  std::size_t short_position = 0;     ///< Position of the last (possibly short) chunk.
  std::size_t lane = 0;               ///< This rank's lane for the pass (replicated).
};

/// @brief The pass `id` in the order `options` gives: shuffled, a seeded permutation of the
/// chunks (the chunk of a short last batch stays last, as the batch does in it) and a new
/// lane for a replicated rank; else the chunks in order.
template <std::size_t Fields>
PassOrder make_pass_order(std::uint64_t id, const EpochOptions& options,
                          const ShardGeometry& geometry, const StreamLayout<Fields>& stream) {
  PassOrder order;
  order.id = id;
  order.options = options;
  const std::size_t chunks = stream.chunks;
  order.chunk_at.resize(chunks);
  order.lane = geometry.lane;
  const bool shuffled = options.shuffle != Shuffle::none;
  const Permutation permutation =
      shuffled ? Permutation(chunks - (geometry.short_last ? 1 : 0), options.seed, options.epoch)
               : Permutation();
  for (std::size_t position = 0; position < chunks; ++position) {
    order.chunk_at[position] =
        position < permutation.size() ? static_cast<std::size_t>(permutation(position)) : position;
    if (order.chunk_at[position] + 1 == chunks) order.short_position = position;
  }
  if (shuffled) order.lane = epoch_lane(geometry, options);
  return order;
}

/// @brief Epoch batch `k` of a pass of `batches` batches: its chunk position and its place
/// among that chunk's batches.
template <std::size_t Fields>
std::pair<std::size_t, std::size_t> locate(const PassOrder& order, std::size_t k,
                                           const StreamLayout<Fields>& stream,
                                           std::size_t batches) noexcept {
  const std::size_t per_chunk = stream.chunk_batches;
  const std::size_t last = stream.batches_of(stream.chunks - 1, batches);
  const std::size_t before_short = order.short_position * per_chunk;
  if (k < before_short) return {k / per_chunk, k % per_chunk};
  if (k < before_short + last) return {order.short_position, k - before_short};
  const std::size_t after = k - before_short - last;
  return {order.short_position + 1 + after / per_chunk, after % per_chunk};
}

/// @brief The chunk's batch at `place`: shuffled within the chunk under a shuffling pass, but
/// for a short last batch, which stays last.
template <std::size_t Fields>
std::size_t local_batch(const PassOrder& order, std::size_t chunk, std::size_t place,
                        const ShardGeometry& geometry, const StreamLayout<Fields>& stream) {
  if (order.options.shuffle == Shuffle::none) return place;
  constexpr std::uint64_t chunk_key = 0x6368756e6bULL;  // "chunk": its own key stream
  const bool holds_short = geometry.short_last && chunk + 1 == stream.chunks;
  const std::size_t shuffled = stream.batches_of(chunk, geometry.batches) - (holds_short ? 1 : 0);
  if (place >= shuffled) return place;
  return static_cast<std::size_t>(Permutation(
      shuffled, mix64(order.options.seed ^ chunk_key) ^ mix64(chunk), order.options.epoch)(place));
}

}  // namespace resident::detail
