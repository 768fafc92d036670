// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// @brief `plan()`: will this dataset fit, and if not, what then? The constructors' arithmetic,
/// without allocating.

#include <algorithm>
#include <array>
#include <cstddef>
#include <iosfwd>
#include <iterator>
#include <limits>
#include <string>
#include <type_traits>

#include "resident/dataset_options.hpp"
#include "resident/detail/compact.hpp"
#include "resident/detail/dataset/dataset_core.hpp"
#include "resident/detail/dataset/layout.hpp"
#include "resident/detail/format_bytes.hpp"
#include "resident/detail/stream/stream_layout.hpp"
#include "resident/detail/upload/upload_plan.hpp"
#include "resident/error.hpp"
#include "resident/host_tensor.hpp"
#include "resident/space_traits.hpp"

namespace resident {

/// @brief What `plan()` advises, most preferred first.
enum class Recommendation {
  /// It fits with the reserve, and so does its gather ring (or no stream would): a
  /// `DeviceDataset`.
  preload,
  preload_compact,  ///< It fits if floating fields are stored as bfloat16 (64-bit ints as 32).
  partition,        ///< It fits per rank with `Sharding::partitioned` across the world size given.
  /// Nothing above fits, or the data fits but its gather ring does not beside it while a
  /// stream's chunk slots and gather ring do: a `StreamingDataset` (see `stream_fits`).
  stream,
  /// Nothing fits: not the data, compact or partitioned across the ranks given, and not a
  /// stream's chunk slots and gather ring either (or the `StreamOptions` are invalid).
  /// `make_dataset` refuses with the same reason; `Plan::stream_min_bytes` is the smallest
  /// free memory (a budget) in which a stream of these options would run.
  refuse,
};

/// @brief "preload", "preload_compact", "partition", "stream" or "refuse".
constexpr const char* recommendation_name(Recommendation recommendation) noexcept {
  constexpr const char* names[] = {"preload", "preload_compact", "partition", "stream", "refuse"};
  const auto index = static_cast<std::size_t>(recommendation);
  return index < std::size(names) ? names[index] : "unknown";
}

/// @brief The answer of `plan()`: the figures of the capacity check, its verdict, and what to
/// do when the data does not fit.
struct Plan {
  /// @name The capacity verdict
  /// What the dataset constructors decide with (the same check): the figures and `fits`.
  /// @{
  std::string space_name{};       ///< The space's `name()`.
  std::size_t needed_bytes = 0;   ///< Bytes the dataset allocates (fields, 256-byte aligned).
  std::size_t free_bytes = 0;     ///< Bytes the space reported free.
  std::size_t total_bytes = 0;    ///< Bytes the space holds in all.
  std::size_t reserve_bytes = 0;  ///< Bytes to be left free (option or the space's default).
  /// @brief Where `free_bytes` and `total_bytes` came from, as the space's `capacity()` says
  /// ("cudaMemGetInfo (...) + ... the memory resource holds but does not use", "a budget of
  /// ..."); empty where the space does not say.
  std::string capacity_source{};
  std::size_t num_rows = 0;     ///< Rows stored (this rank's part when partitioned).
  std::size_t num_batches = 0;  ///< Batches served under the options.
  bool fits = false;            ///< `needed_bytes <= free_bytes - reserve_bytes`.
  /// @}

  /// @name Gathering epochs
  /// @{
  /// @var ring_bytes
  /// @brief Bytes a gathering epoch (`Shuffle::samples`, a conversion, `batch_indices()`)
  /// allocates besides, at its start: `ring_depth` batches of every field (each element as
  /// wide as `DatasetOptions::ring_element_bytes`, or the stored type when wider) plus row ids.
  /// A streamed dataset plans it beside its chunk slots.
  std::size_t ring_bytes = 0;
  bool fits_with_ring = false;  ///< `needed_bytes + ring_bytes <= free_bytes - reserve_bytes`.
  /// @}

  /// @name Sharding (`DatasetOptions::shard`, `sharding`) and the partition advice
  /// @{
  Shard shard{};                              ///< The rank planned for.
  Sharding sharding = Sharding::partitioned;  ///< The division planned for.
  /// @brief Bytes of the largest rank's allocation were the rows partitioned (about
  /// `1 / world_size` of the data), whichever mode is planned; `needed_bytes` is this
  /// rank's under the planned mode.
  std::size_t partitioned_rank_bytes = 0;
  std::size_t replicated_rank_bytes = 0;  ///< Bytes of every rank's allocation, replicated.
  /// @brief The fewest ranks across which the rows, partitioned, fit in this space (0: not
  /// even one row per rank fits).
  std::size_t partition_world_size = 0;
  /// @}

  /// @name The advice
  /// @{
  Recommendation recommendation = Recommendation::preload;  ///< What to do; see `reason`.
  std::string reason{};                                     ///< One line a person can read.
  /// @}

  /// @name Compact storage (`Recommendation::preload_compact`)
  /// @{
  /// @var compact_bytes
  /// @brief Bytes this rank's allocation needs with every field stored compactly (equal to
  /// `needed_bytes` when no field has a smaller type).
  std::size_t compact_bytes = 0;
  /// @brief The compaction, field by field: "field 0 float32 -> bfloat16"; empty when none.
  std::string compact_dtypes{};
  /// @}

  /// @name Streaming (`DatasetOptions::streaming`, `Recommendation::stream`)
  /// @{
  std::size_t stream_chunk_batches = 0;  ///< Batches per chunk a `StreamingDataset` would use.
  std::size_t stream_chunks = 0;         ///< Chunks per epoch it would stream.
  std::size_t stream_slots_bytes = 0;    ///< Bytes of its chunk slots, all together.
  /// @brief Whether the chunk slots and the gather ring (`ring_bytes`, planned beside them so
  /// that every epoch runs) fit together with the reserve.
  bool stream_fits = false;
  /// @brief The order it would stream in: `StreamOrder::whole_epoch` (the batches of a
  /// preloaded dataset) when the rows are in host memory or fit there, else `window`.
  StreamOrder stream_order = StreamOrder::whole_epoch;
  /// @brief Bytes of the rows this rank streams that a stream reads in place from file
  /// mappings: the page cache's pages, shared with every reader of the file and reclaimable by
  /// the system, never copied into memory the dataset owns (`.npy` files, stored `.npz`
  /// members and a token file, in whole-epoch order).
  std::size_t stream_mapped_bytes = 0;
  /// @brief Bytes of the rows this rank streams that a stream holds in host memory it owns:
  /// deflated `.npz` members, inflated once, and the tokens of several token files, read once.
  /// With `stream_mapped_bytes` 0 too, the rows are the caller's memory, or (window order) are
  /// read from their files a chunk at a time.
  std::size_t stream_owned_bytes = 0;
  /// @brief Whether the rows come from files (read a chunk at a time in window order), not
  /// from the caller's memory.
  bool stream_from_files = false;
  /// @brief The smallest free memory, reserve included, in which a stream of these options
  /// runs: its chunk slots at one batch a chunk (or the `StreamOptions::chunk_batches` given;
  /// a sharded job's automatic chunks, which never shrink to the room) and its gather ring,
  /// plus `reserve_bytes`. Free memory (a `with_budget`) of at least this
  /// makes a `StreamingDataset` that is not refused; 0 when the options are invalid, SIZE_MAX
  /// when no `size_t` holds it (a reserve near SIZE_MAX).
  std::size_t stream_min_bytes = 0;
  /// @brief Why a `StreamingDataset` would refuse `DatasetOptions::streaming` (then the stream
  /// figures are 0 and `stream_fits` is false); empty when the options are valid.
  std::string stream_refusal{};
  /// @}

  /// @brief Bytes usable after the reserve: what `needed_bytes` is compared against.
  [[nodiscard]] std::size_t usable_bytes() const noexcept {
    return detail::usable_bytes(free_bytes, reserve_bytes);
  }

  /// @brief The `CapacityError` that refusing this plan throws.
  [[nodiscard]] CapacityError refusal() const {
    return CapacityError(space_name, needed_bytes, free_bytes, total_bytes, reserve_bytes);
  }
};

namespace detail {

/// @brief The lines `operator<<` prints for `plan`, built as text so that no flag of the
/// caller's stream (`std::hex`, a precision) changes a figure.
inline std::string plan_text(const Plan& plan) {
  std::string text = plan.reason;
  text += "\n  recommendation: " + std::string(recommendation_name(plan.recommendation));
  text += "\n  preload:   needs " + format_bytes(plan.needed_bytes) + ", usable " +
          format_bytes(plan.usable_bytes()) + " (free " + format_bytes(plan.free_bytes) + " of " +
          format_bytes(plan.total_bytes) + ", reserve " + format_bytes(plan.reserve_bytes) +
          ") on " + plan.space_name;
  if (!plan.capacity_source.empty()) text += "\n  capacity:  from " + plan.capacity_source;
  text += "\n  ring:      " + format_bytes(plan.ring_bytes) + " for gathering epochs, " +
          (plan.fits_with_ring ? "fits beside the data" : "does not fit beside the data");
  text += "\n  compact:   " +
          (plan.compact_dtypes.empty()
               ? std::string("no field has a smaller type")
               : "needs " + format_bytes(plan.compact_bytes) + " (" + plan.compact_dtypes + ")");
  text += "\n  partition: " + format_bytes(plan.partitioned_rank_bytes) + " per rank across " +
          std::to_string(plan.shard.world_size) + " rank(s); fits from " +
          (plan.partition_world_size == 0 ? std::string("no world size")
                                          : std::to_string(plan.partition_world_size) + " rank(s)");
  text += "\n  stream:    ";
  if (!plan.stream_refusal.empty()) return text + "refused: " + plan.stream_refusal;
  text += "chunk slots of " + format_bytes(plan.stream_slots_bytes) + " (" +
          std::to_string(plan.stream_chunks) + " chunk(s) of " +
          std::to_string(plan.stream_chunk_batches) + " batch(es)) and ring_bytes " +
          format_bytes(plan.ring_bytes) + ", " + stream_order_name(plan.stream_order) + " order, " +
          (plan.stream_fits ? "fit together" : "do not fit together") + "; runs from " +
          format_bytes(plan.stream_min_bytes) + " free";
  text += "\n  host rows: ";
  if (plan.stream_mapped_bytes != 0 || plan.stream_owned_bytes != 0)
    text += format_bytes(plan.stream_mapped_bytes) +
            " mapped from the files (page cache: shared, reclaimable), " +
            format_bytes(plan.stream_owned_bytes) + " in host memory the dataset owns";
  else
    text += plan.stream_from_files ? "read from the files a chunk at a time"
                                   : "in the caller's host memory, read in place";
  return text;
}

}  // namespace detail

/// @brief Prints the plan readably: the verdict, then the figures behind every option.
/// (A template over the stream's traits, so that this header needs only `iosfwd`: the caller,
/// who prints, has `ostream`.)
template <class Traits>
std::basic_ostream<char, Traits>& operator<<(std::basic_ostream<char, Traits>& out,
                                             const Plan& plan) {
  return out << detail::plan_text(plan);
}

namespace detail {

/// The order a stream of rows in host memory takes under `order` (see `StreamOrder`).
constexpr StreamOrder memory_stream_order(StreamOrder order) noexcept {
  return order == StreamOrder::window ? StreamOrder::window : StreamOrder::whole_epoch;
}

/// Bytes of rank 0's allocation (the longest part) were the rows partitioned across `world`.
template <std::size_t Fields>
std::size_t partitioned_bytes(const DatasetLayout<Fields>& layout, DatasetOptions options,
                              std::size_t world) {
  options.shard = {0, static_cast<int>(world), 0};
  options.sharding = Sharding::partitioned;
  options.parts = 0;  // a part per rank: what a rank stores is the same for any parts it divides
  return place_fields(layout, make_geometry(layout.source_rows, options)).total_bytes;
}

/// The fewest ranks, at most `rows`, whose partitioned parts fit in `usable` bytes (0 when none
/// does), where `part_bytes(world)` is the largest part's bytes across `world` ranks: by
/// bisection, since a part never grows as the world does.
template <class PartBytes>
std::size_t fewest_partition_ranks(std::size_t rows, std::size_t usable, PartBytes&& part_bytes) {
  constexpr std::size_t max_world = 1 << 20;  // Shard::world_size is an int; enough for any job
  std::size_t high = std::min(std::max<std::size_t>(rows, 1), max_world);
  if (part_bytes(high) > usable) return 0;
  std::size_t low = 1;
  while (low < high) {
    const std::size_t middle = low + (high - low) / 2;
    if (part_bytes(middle) <= usable)
      high = middle;
    else
      low = middle + 1;
  }
  return low;
}

/// `layout` with every field stored as its compact type; names the fields that shrink.
template <std::size_t Fields>
DatasetLayout<Fields> compact_layout(DatasetLayout<Fields> layout,
                                     const std::array<ElementKind, Fields>& kinds,
                                     std::string& changes) {
  for (std::size_t field = 0; field < Fields; ++field) {
    if (kinds[field].compact_bytes == kinds[field].bytes) continue;
    layout.row_bytes[field] = layout.row_elements[field] * kinds[field].compact_bytes;
    changes += (changes.empty() ? "" : ", ") + std::string("field ") + std::to_string(field) + " " +
               element_name(kinds[field]) + " -> " + kinds[field].compact_name;
  }
  return place_fields(layout, layout.geometry);
}

/// "a StreamingDataset keeps chunk slots of ... on ...": the stream figures of `plan`.
inline std::string stream_summary(const Plan& plan) {
  return "a StreamingDataset keeps chunk slots of " + format_bytes(plan.stream_slots_bytes) + " (" +
         std::to_string(plan.stream_chunks) + " chunks of " +
         std::to_string(plan.stream_chunk_batches) + " batches per epoch) and a gather ring of " +
         format_bytes(plan.ring_bytes) + " on " + plan.space_name + ", in " +
         stream_order_name(plan.stream_order) + " order";
}

/// "not even a stream fits ...": why `plan` refuses when its stream does not fit, with the
/// smallest free memory a stream of its options runs in, and `advice`.
inline std::string nothing_fits_advice(const Plan& plan, const std::string& advice) {
  return "not even a stream fits: its chunk slots of " + format_bytes(plan.stream_slots_bytes) +
         " (" + std::to_string(plan.stream_chunks) + " chunks of " +
         std::to_string(plan.stream_chunk_batches) + " batches) and gather ring of " +
         format_bytes(plan.ring_bytes) + " need more than the " +
         format_bytes(plan.usable_bytes()) +
         " usable. The smallest stream of these options runs in " +
         format_bytes(plan.stream_min_bytes) + " free (" + std::to_string(plan.stream_min_bytes) +
         " B, the reserve included): give the space at least that (a budget, or free memory), "
         "or " +
         advice;
}

/// What to do, and the sentence that says it, once the figures of `plan` are in; `advice`
/// says what to do when the chunk slots does not fit.
inline void recommend(Plan& plan, const std::string& who, const std::string& advice) {
  const std::size_t usable = plan.usable_bytes();
  const bool replicated_job = plan.shard.world_size > 1 && plan.sharding == Sharding::replicated;
  if (plan.fits && !plan.fits_with_ring && plan.stream_fits && !replicated_job) {
    // Preloaded, the data would leave no room for the ring of its gathering epochs: a stream
    // offers every epoch within the same bytes.
    plan.recommendation = Recommendation::stream;
    plan.reason =
        "resident: dataset fits" + who + " (needs " + format_bytes(plan.needed_bytes) + " on " +
        plan.space_name + ", " + format_bytes(usable) +
        " usable) but the gather ring of its gathering epochs (Shuffle::samples, "
        "conversions, augmentations: " +
        format_bytes(plan.ring_bytes) +
        ") does not fit beside it; stream it, so that every epoch runs: " + stream_summary(plan) +
        " (or preload it and use only Shuffle::none and Shuffle::batches, which are "
        "zero-copy)";
    return;
  }
  if (plan.fits) {
    plan.recommendation = Recommendation::preload;
    plan.reason = "resident: dataset fits" + who + ": needs " + format_bytes(plan.needed_bytes) +
                  " on " + plan.space_name + ", " + format_bytes(usable) + " of " +
                  format_bytes(plan.total_bytes) + " is free after a " +
                  format_bytes(plan.reserve_bytes) + " reserve; preload it";
    return;
  }
  plan.reason = CapacityError::message(plan.space_name, plan.needed_bytes, plan.free_bytes,
                                       plan.total_bytes, plan.reserve_bytes) +
                ". Recommendation: ";
  if (!plan.compact_dtypes.empty() && plan.compact_bytes <= usable) {
    plan.recommendation = Recommendation::preload_compact;
    plan.reason += "preload it compact: stored as " + plan.compact_dtypes + " it needs " +
                   format_bytes(plan.compact_bytes) +
                   " (convert on the host, widen per batch with resident::convert)";
  } else if (plan.shard.world_size > 1 && plan.sharding == Sharding::replicated &&
             plan.partitioned_rank_bytes <= usable) {
    plan.recommendation = Recommendation::partition;
    plan.reason += "partition it: with Sharding::partitioned across the " +
                   std::to_string(plan.shard.world_size) + " ranks each needs " +
                   format_bytes(plan.partitioned_rank_bytes);
  } else if (!plan.stream_refusal.empty()) {
    plan.recommendation = Recommendation::refuse;
    plan.reason += "refuse: it does not fit, and a StreamingDataset refuses these options: " +
                   plan.stream_refusal;
  } else if (plan.stream_fits) {
    plan.recommendation = Recommendation::stream;
    plan.reason += "stream it: " + stream_summary(plan);
  } else {
    plan.recommendation = Recommendation::refuse;
    plan.reason += "refuse: " + nothing_fits_advice(plan, advice);
  }
  if (plan.partition_world_size > 1 && plan.recommendation != Recommendation::partition)
    plan.reason += "; partitioned across " + std::to_string(plan.partition_world_size) +
                   " or more ranks it would fit";
}

/// `recommend` for a plan of `options`: the rank it was made for, the chunk slots' advice.
inline void recommend_for(Plan& plan, const DatasetOptions& options) {
  recommend(plan,
            options.shard.world_size == 1 ? std::string()
                                          : " for rank " + std::to_string(options.shard.rank) +
                                                " of " + std::to_string(options.shard.world_size) +
                                                " (" + sharding_name(options.sharding) + ")",
            chunk_slots_advice(options));
}

/// @brief Where a stream of a dataset's rows would read them on the host: its order and the
/// `Plan` figures of the same names.
struct StreamRows {
  StreamOrder order = StreamOrder::whole_epoch;
  bool from_files = false;
  std::size_t mapped_bytes = 0;
  std::size_t owned_bytes = 0;
};

/// The plan of a computed layout: the capacity verdict the constructors reach
/// (`check_capacity`, so that the two can never disagree), then the advice on top.
/// `stream` says where a stream of these rows would read them.
template <class Space, std::size_t Fields>
Plan plan_layout(const Space& space, const DatasetOptions& options,
                 const DatasetLayout<Fields>& layout, const std::array<ElementKind, Fields>& kinds,
                 const StreamRows& stream_rows) {
  check_upload_options(options);  // as the constructors do, whatever the plan recommends
  std::array<std::size_t, Fields> element_bytes{};
  for (std::size_t field = 0; field < Fields; ++field) element_bytes[field] = kinds[field].bytes;
  const CapacityVerdict capacity =
      check_capacity(space, reserve_for(space, options), layout.total_bytes);
  Plan verdict;
  verdict.space_name = capacity.space_name;
  verdict.needed_bytes = capacity.needed_bytes;
  verdict.free_bytes = capacity.free_bytes;
  verdict.total_bytes = capacity.total_bytes;
  verdict.reserve_bytes = capacity.reserve_bytes;
  verdict.capacity_source = capacity.capacity_source;
  verdict.fits = capacity.fits;
  verdict.num_rows = layout.geometry.order_rows;
  verdict.num_batches = layout.geometry.batches;
  verdict.ring_bytes = planned_ring_bytes(layout, element_bytes, options);
  verdict.shard = options.shard;
  verdict.sharding = options.sharding;
  verdict.partitioned_rank_bytes =
      partitioned_bytes(layout, options, static_cast<std::size_t>(options.shard.world_size));
  DatasetOptions replicated = options;
  replicated.sharding = Sharding::replicated;
  verdict.replicated_rank_bytes =
      place_fields(layout, make_geometry(layout.source_rows, replicated)).total_bytes;
  const std::size_t usable = verdict.usable_bytes();
  verdict.fits_with_ring = verdict.fits && verdict.ring_bytes <= usable - verdict.needed_bytes;
  verdict.compact_bytes = compact_layout(layout, kinds, verdict.compact_dtypes).total_bytes;
  verdict.partition_world_size = fewest_partition_ranks(
      layout.source_rows, usable,
      [&](std::size_t world) { return partitioned_bytes(layout, options, world); });
  // Invalid stream options leave the preload figures standing: a DeviceDataset ignores them.
  verdict.stream_refusal = stream_options_problem(options.streaming);
  if (verdict.stream_refusal.empty()) {
    // The chunk slots get what the gather ring leaves, as the StreamingDataset sizes them.
    const std::size_t ring = verdict.ring_bytes;
    const auto stream = make_stream_layout(layout, options, usable > ring ? usable - ring : 0);
    verdict.stream_chunk_batches = stream.chunk_batches;
    verdict.stream_chunks = stream.chunks;
    verdict.stream_slots_bytes = stream.total_bytes;
    verdict.stream_fits = stream.total_bytes <= usable && ring <= usable - stream.total_bytes;
    // A single rank's automatic chunks shrink to the room there is, down to one batch; a
    // sharded job's are sized from what the ranks share, whatever the room.
    DatasetOptions smallest = options;
    if (smallest.streaming.chunk_batches == 0 && options.shard.world_size == 1)
      smallest.streaming.chunk_batches = 1;
    // Saturated: a reserve near SIZE_MAX leaves no budget to name, and no refusal to throw.
    constexpr std::size_t most = std::numeric_limits<std::size_t>::max();
    const std::size_t slots = make_stream_layout(layout, smallest, 0).total_bytes;
    const std::size_t least = slots > most - ring ? most : slots + ring;
    verdict.stream_min_bytes =
        least > most - verdict.reserve_bytes ? most : least + verdict.reserve_bytes;
    verdict.stream_order = stream_rows.order;
    verdict.stream_from_files = stream_rows.from_files;
    verdict.stream_mapped_bytes = stream_rows.mapped_bytes;
    verdict.stream_owned_bytes = stream_rows.owned_bytes;
  }
  recommend_for(verdict, options);
  return verdict;
}

}  // namespace detail

/// @brief Does a dataset of these fields fit in `space` under `options`? Queries the space's
/// capacity and does the constructor's arithmetic; allocates nothing, reads no element.
/// Invalid `DatasetOptions::streaming` does not throw: the preload figures come out as ever,
/// and `stream_refusal` says why streaming would be refused.
/// @throws InvalidArgument for fields that disagree on rows, batch size 0, `ring_depth` 0, an
/// upload block size or staging buffer count of 0 (refused as the constructors refuse them,
/// whatever the plan recommends), an invalid shard, or byte overflow; CudaError when a CUDA
/// space has no usable device.
template <class Space, class... Ts>
[[nodiscard]] Plan plan(const Space& space, const DatasetOptions& options,
                        const HostTensor<Ts>&... fields) {
  static_assert(is_memory_space_v<Space>, "plan() needs a memory space (HostSpace, CudaSpace)");
  return detail::plan_layout(
      space, options,
      detail::make_layout(options, HostTensor<const std::remove_const_t<Ts>>(fields)...),
      {detail::element_kind<Ts>()...},
      detail::StreamRows{detail::memory_stream_order(options.streaming.order)});
}

}  // namespace resident
