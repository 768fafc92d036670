// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// A token stream seen as rows: window w is `context + 1` tokens from token `w * stride`, its
// inputs the first `context` and its targets the last `context`. The windows are the rows the
// shard geometry, the epoch orders and the gathers count, as a dataset's rows are; what a rank
// stores is the tokens its windows cover, once.

#include <algorithm>
#include <array>
#include <cstddef>
#include <string>

#include "resident/dataset_options.hpp"
#include "resident/detail/checked_math.hpp"
#include "resident/detail/dataset/layout.hpp"
#include "resident/detail/dataset/shard_geometry.hpp"
#include "resident/detail/expects.hpp"
#include "resident/token_options.hpp"

namespace resident::detail {

/// @brief The windows of a stream of `tokens` tokens under `TokenOptions`.
struct TokenWindows {
  std::size_t context = 0;  ///< Tokens of a window's inputs (and of its targets).
  std::size_t stride = 0;   ///< Tokens from one window's start to the next's.
  std::size_t tokens = 0;   ///< Tokens of the whole stream (every rank's).
  std::size_t windows = 0;  ///< Windows of the whole stream.

  /// Tokens that windows `[first, first + count)` cover, from window `first`'s start.
  [[nodiscard]] constexpr std::size_t span(std::size_t count) const noexcept {
    return count == 0 ? 0 : (count - 1) * stride + context + 1;
  }
};

/// @brief The windows of `tokens` tokens, checked: a context and a stride above 0, at least
/// one window, no overflow.
/// @throws InvalidArgument saying what was expected, what was found and what to do.
inline TokenWindows make_token_windows(std::size_t tokens, const TokenOptions& options) {
  RESIDENT_EXPECTS(options.context > 0,
                   "TokenOptions::context is 0; set it to the tokens of a sample's inputs (the "
                   "model's context length, e.g. 1024)");
  TokenWindows windows;
  windows.context = options.context;
  windows.stride = options.stride == 0 ? options.context : options.stride;
  windows.tokens = tokens;
  // `tokens > context`, not `tokens >= context + 1`: no context overflows.
  RESIDENT_EXPECTS(tokens > options.context,
                   "the token stream has " + std::to_string(tokens) +
                       " tokens, fewer than one window needs: TokenOptions::context " +
                       std::to_string(options.context) +
                       " inputs and one target more; use a shorter context or a longer stream");
  windows.windows = (tokens - options.context - 1) / windows.stride + 1;
  return windows;
}

/// @brief Refuses batch `index` of `slice` as a view of the stream unless it is one span:
/// windows that tile the stream (`stride == context`), none of them padding.
/// @throws InvalidArgument saying why and that an epoch gathers it.
inline void refuse_unless_span(std::size_t index, const BatchSlice& slice, std::size_t context,
                               std::size_t stride) {
  RESIDENT_EXPECTS(
      stride == context && slice.valid == slice.rows,
      "batch " + std::to_string(index) + " of this token dataset is not one span of the stream (" +
          (stride != context ? "its stride " + std::to_string(stride) + " is not its context " +
                                   std::to_string(context)
                             : std::to_string(slice.rows - slice.valid) + " of its " +
                                   std::to_string(slice.rows) + " rows are padding") +
          "), so it has no view; read it from an epoch, which gathers it: ds.epoch().batch(" +
          std::to_string(index) + ")");
}

/// @brief The tokens a rank stores: windows `[first_window, first_window + windows)` of the
/// stream, and how many tokens they cover.
struct StoredWindows {
  std::size_t first_window = 0;
  std::size_t windows = 0;
  std::size_t tokens = 0;
  [[nodiscard]] constexpr std::size_t first_token(const TokenWindows& stream) const noexcept {
    return first_window * stream.stride;
  }
};

/// @brief The windows `geometry` makes a rank store: its own, or, for a rank that owns none, the
/// stream's first windows that its padding repeats (as many as a batch pads, at most all).
inline StoredWindows stored_windows(const TokenWindows& stream, const ShardGeometry& geometry) {
  StoredWindows stored;
  if (geometry.pad_from_source_start) {
    stored.windows = std::min(geometry.stored_rows, stream.windows);
  } else {
    stored.first_window = geometry.source_first;
    stored.windows = geometry.order_rows;
  }
  stored.tokens = stream.span(stored.windows);
  return stored;
}

/// @brief The layout of a token dataset of element size `element_bytes`, as the dataset core
/// and the gathering epochs read it: two fields (inputs and targets) of `context` elements per
/// row over the windows, both in the one stored stream (the targets one element on), whose
/// bytes are the allocation's.
/// @throws InvalidArgument for the options every dataset refuses, or byte overflow.
inline DatasetLayout<2> make_token_layout(const DatasetOptions& options, const TokenWindows& stream,
                                          std::size_t element_bytes) {
  RESIDENT_EXPECTS(options.ring_depth > 0,
                   "DatasetOptions::ring_depth is 0; use at least 1 (default 2)");
  DatasetLayout<2> layout;
  layout.source_rows = stream.windows;
  layout.geometry = make_geometry(stream.windows, options);
  const std::size_t row_bytes = checked_mul(stream.context, element_bytes, "token window bytes");
  layout.row_elements = {stream.context, stream.context};
  layout.row_bytes = {row_bytes, row_bytes};
  layout.offsets = {0, element_bytes};
  layout.total_bytes = checked_mul(stored_windows(stream, layout.geometry).tokens, element_bytes,
                                   "token stream bytes");
  layout.bytes = {layout.total_bytes, layout.total_bytes};
  // Padded batches are gathered, never stored: a batch size too large for a ring slot is
  // refused here, where the dataset or its plan is made, not by each epoch.
  (void)make_ring_layout(
      layout, ring_element_sizes<2>({element_bytes, element_bytes}, options.ring_element_bytes),
      options.ring_depth);
  return layout;
}

/// @brief Bytes a token dataset of `layout` needs when it is made: the stream, and where every
/// epoch gathers (windows that overlap or leave gaps, or a padded last batch, which even an
/// unshuffled epoch gathers) the ring of its stored type as well, since such a dataset serves
/// no epoch without one. The constructor and `plan()` both count so, and agree.
inline std::size_t token_dataset_bytes(const DatasetOptions& options, const TokenWindows& stream,
                                       const DatasetLayout<2>& layout, std::size_t element_bytes) {
  const ShardGeometry& geometry = layout.geometry;
  const auto padded = [&geometry] {
    if (geometry.batches == 0) return false;
    const BatchSlice last = geometry.slice(geometry.batches - 1, geometry.replica);
    return last.valid != last.rows;
  };
  if (stream.stride == stream.context && !padded()) return layout.total_bytes;
  const std::size_t ring =
      make_ring_layout(
          layout, ring_element_sizes<2>({element_bytes, element_bytes}, options.ring_element_bytes),
          options.ring_depth)
          .total_bytes;
  return checked_add(layout.total_bytes, ring, "token dataset bytes (the stream and its ring)");
}

}  // namespace resident::detail
