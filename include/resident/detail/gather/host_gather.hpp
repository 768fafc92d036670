// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "resident/augment.hpp"
#include "resident/convert.hpp"
#include "resident/detail/checked_math.hpp"
#include "resident/detail/copy_workers.hpp"
#include "resident/detail/dataset/row_order.hpp"
#include "resident/detail/gather/augment_row.hpp"
#include "resident/detail/io/bus_faults.hpp"
#include "resident/space_traits.hpp"

namespace resident::detail {

/// Rows ahead of the one being copied whose first lines are asked for. Rows come from random
/// places, which no hardware prefetcher predicts. The distance matters little: on CIFAR rows
/// (bench_epoch), 1 to 8 rows ahead, a few lines or all, and either cache hint were within the
/// noise of each other. Each row is placed by the time it is asked for (see `place_group`).
inline constexpr std::size_t gather_prefetch_rows = 4;
/// Lines of each row asked for ahead: the hardware prefetcher follows a row once its first
/// lines are read in order, so asking for more only spends load slots.
inline constexpr std::size_t gather_prefetch_lines = 4;

/// Asks the caches for the first lines of `bytes` at `address` (a hint: no effect elsewhere).
inline void prefetch_row(const void* address, std::size_t bytes) noexcept {
#if defined(__GNUC__)
  const auto* line = static_cast<const char*>(address);
  const std::size_t end = std::min(bytes, gather_prefetch_lines * 64);
  for (std::size_t at = 0; at < end; at += 64) __builtin_prefetch(line + at, 0, 3);
#else
  (void)address;
  (void)bytes;
#endif
}

/// @brief Whether `Order` places several rows at once (`order.places(r, count, reach, out)`).
template <class Order, class = void>
struct places_together : std::false_type {};
template <class Order>
struct places_together<Order, std::void_t<decltype(std::declval<const Order&>().places(
                                  0, 0, SameAddress{}, static_cast<RowPlace*>(nullptr)))>>
    : std::true_type {};

/// Rows a gathering thread places at once where its order places several together: enough
/// for the lanes of `mixture_samples` to refill from (see docs/design.md, Gathers).
inline constexpr std::size_t place_group_rows = 16;

/// @brief Rows of `Order` a gathering thread places at once (see `place_group_rows`).
template <class Order>
inline constexpr std::size_t place_group = places_together<Order>::value ? place_group_rows : 1;

/// @brief The places of rows `[r, r + count)` of `order` into `placed`: together where the
/// order computes several so (a mixture's, whose walks then overlap), else one by one.
template <class Order>
void place_rows(const Order& order, std::size_t r, std::size_t count, RowPlace* placed) {
  if constexpr (places_together<Order>::value)
    order.places(r, count, SameAddress{}, placed);
  else
    for (std::size_t i = 0; i < count; ++i) placed[i] = order.place(r + i, SameAddress{});
}

/// @brief The places a gathering thread holds: from the row being copied to the last placed,
/// at most a group past the row asked for ahead, in whole groups (a power of two).
template <class Order>
constexpr std::size_t place_ring() noexcept {
  std::size_t ring = place_group<Order>;
  while (ring < place_group<Order> + gather_prefetch_rows) ring *= 2;
  return ring;
}

/// @brief The fewest rows of `row_bytes` bytes that fill whole cache lines.
constexpr std::size_t rows_per_line(std::size_t row_bytes) noexcept {
  std::size_t rows = 1;
  while (row_bytes * rows % 64 != 0) rows *= 2;  // 64 is a power of two
  return rows;
}

/// @brief Converts one row of `elements` elements with `op`, element by element.
template <class Op>
struct RowConverter {
  explicit RowConverter(const Op& op) noexcept : op_(&op) {}

  template <class In, class Out>
  void operator()(const In* from, Out* to, std::size_t elements) const {
    for (std::size_t e = 0; e < elements; ++e) to[e] = (*op_)(from[e], e);
  }

 private:
  const Op* op_;
};

/// @brief `Normalize` with the arithmetic of its `operator()`, so that the values are bitwise
/// those of the device, in loops that vectorise. Long runs of one channel (CHW rows, one
/// channel) go a run at a time with the scale and offset constant. Short runs (HWC rows: one
/// element a channel) would leave an inner loop of an element or a few, which does not
/// vectorise and ran HWC epochs several times slower than CHW ones; their channels repeat with
/// a period of `channels x channel_stride` elements from each row's start, so a pattern of
/// whole periods holds each element's scale and offset and a row goes a pattern at a time.
template <>
struct RowConverter<Normalize> {
  /// Elements the pattern holds: whole periods of up to `max_period` elements.
  static constexpr std::size_t pattern_capacity = 128;
  /// Longest period that goes through the pattern (at least two periods in it); longer ones
  /// have runs of at least `max_period / max_channels` elements and go a run at a time.
  static constexpr std::size_t max_period = pattern_capacity / 2;

  explicit RowConverter(const Normalize& op) noexcept : op_(&op) {
    const std::size_t channels = op.channels();
    const std::size_t period = channels * op.channel_stride();
    if (channels == 1 || period > max_period) return;
    pattern_ = pattern_capacity / period * period;
    for (std::size_t e = 0; e < pattern_; ++e) {
      const std::size_t c = e / op.channel_stride() % channels;
      scale_[e] = static_cast<double>(op.scale(c));
      offset_[e] = static_cast<double>(op.offset(c));
    }
  }

  template <class In>
  void operator()(const In* from, float* to, std::size_t elements) const {
    if (pattern_ != 0) {
      const double* scale = scale_;
      const double* offset = offset_;
      for (std::size_t first = 0; first < elements; first += pattern_) {
        const std::size_t count = std::min(pattern_, elements - first);
        const In* in = from + first;
        float* out = to + first;
        for (std::size_t e = 0; e < count; ++e)
          out[e] = static_cast<float>(static_cast<double>(to_float(in[e])) * scale[e] + offset[e]);
      }
      return;
    }
    const std::size_t channels = op_->channels();
    const std::size_t run = channels == 1 ? elements : op_->channel_stride();
    // The channel advances by one per run (no division per run).
    for (std::size_t first = 0, c = 0; first < elements;
         first += run, c = c + 1 == channels ? 0 : c + 1) {
      const double scale = op_->scale(c);
      const double offset = op_->offset(c);
      const std::size_t last = std::min(elements, first + run);
      for (std::size_t e = first; e < last; ++e)
        to[e] = static_cast<float>(static_cast<double>(to_float(from[e])) * scale + offset);
    }
  }

 private:
  const Normalize* op_;
  std::size_t pattern_ = 0;  // elements of the pattern; 0: runs
  // Element e's channel's scale and offset, as doubles (written up to `pattern_`).
  double scale_[pattern_capacity] = {};   // NOLINT(modernize-avoid-c-arrays)
  double offset_[pattern_capacity] = {};  // NOLINT(modernize-avoid-c-arrays)
};

/// @brief One field of a host gather: rows of `row_elements` elements read from `source` (a
/// `StoredRows` or a `ChunkSlotRows`), gathered into `destination`, augmented by
/// `augmentation` (none when null, keyed by `key`) and converted by `op` (`NoConversion`:
/// copied). `AugmentationPointer` is `std::nullptr_t` for a field that is never augmented:
/// its gather then compiles no augmentation code.
template <class Source, class Out, class Op, class AugmentationPointer = const Augmentation*>
struct GatherField {
  using In = typename Source::element_type;
  using source_type = Source;  ///< What the rows are read from.
  using output_type = Out;     ///< The batch's element type.
  using op_type = Op;          ///< The conversion.
  static constexpr bool may_augment = !std::is_same_v<AugmentationPointer, std::nullptr_t>;
  Source source;
  Out* destination;
  std::size_t row_elements;
  const Op& op;
  AugmentationPointer augmentation = nullptr;
  AugmentKey key{};

  /// Bytes a row takes in the batch.
  [[nodiscard]] std::size_t row_bytes() const noexcept { return row_elements * sizeof(Out); }

  /// Bytes of scratch a row needs: an augmented row that is converted or laid out anew is
  /// augmented there first, and laid out anew beside it before it is converted.
  [[nodiscard]] std::size_t scratch_bytes() const noexcept {
    if constexpr (may_augment) {
      if (augmentation == nullptr) return 0;
      constexpr std::size_t converted = std::is_same_v<Op, NoConversion> ? 0 : 1;
      const std::size_t moved = augmentation->reorders() ? 1 : 0;
      return (converted + moved) * row_elements * sizeof(In);
    }
    return 0;
  }

  /// Copies (converts, augments) the row at `place` to batch position `position`.
  void copy_row(const RowPlace& place, std::size_t position, const RowConverter<Op>& convert,
                std::byte* scratch) const {
    const In* from = source.at(place, SameAddress{});
    Out* to = destination + position * row_elements;
    if constexpr (may_augment) {
      if (augmentation != nullptr) {
        // Crop and flip in the stored layout, then the output's order, then the conversion
        // (in the output layout, as the kernels convert), each into the next stage's memory:
        // the row's own scratch, or the batch for the last.
        const SampleDraws draws = draw_sample(*augmentation, key, place.row);
        constexpr bool converts = !std::is_same_v<Op, NoConversion>;
        const bool reorders = augmentation->reorders();
        auto* stage = reinterpret_cast<In*>(scratch);  // NOLINT: scratch of In
        const auto next = [&](bool last) -> In* {
          if constexpr (!converts) {
            if (last) return to;
          }
          In* at = stage;
          stage += row_elements;
          return at;
        };
        const In* image = from;
        if (augmentation->crop.pad != 0 || augmentation->flip.p > 0.0 || !reorders) {
          In* augmented = next(!reorders);
          augment_image(*augmentation, draws, image, augmented);
          image = augmented;
        }
        if (reorders) {
          In* laid_out = next(true);
          relayout_image(augmentation->image, augmentation->output.order, image, laid_out);
          image = laid_out;
        }
        if constexpr (converts)
          convert(image, to, row_elements);
        else
          (void)convert;
        cut_out_image(augmentation->output_image(), draws, to);
        return;
      }
    }
    if constexpr (std::is_same_v<Op, NoConversion>) {
      static_assert(std::is_same_v<In, Out>, "a gather without conversion keeps the type");
      (void)convert, (void)scratch;
      // Rows of zero elements lie in no memory (their pointers may be null): nothing to copy.
      if (row_elements != 0) std::memcpy(to, from, row_elements * sizeof(In));
    } else {
      (void)scratch;
      convert(from, to, row_elements);
    }
  }

  void prefetch(const RowPlace& place) const noexcept {
    prefetch_row(source.at(place, SameAddress{}), row_elements * sizeof(In));
  }
};

template <class Source, class Out, class Op>
GatherField(Source, Out*, std::size_t, const Op&) -> GatherField<Source, Out, Op>;
template <class Source, class Out, class Op, class AugmentationPointer>
GatherField(Source, Out*, std::size_t, const Op&, AugmentationPointer, AugmentKey)
    -> GatherField<Source, Out, Op, AugmentationPointer>;

/// @brief Gathers `rows` rows of every field in the order `order` gives, on the host's copy
/// threads: each thread claims blocks of the batch's positions (`gather_block_bytes`), places
/// each of their rows once (`order.place`: its row id, into `indices`, the ring's index array,
/// and where its source finds it) and copies every field's rows from there, as the kernels
/// do. `order` is a `RowOrder`, a `ChunkRows` or a mixture's order.
template <class Order, class... Fields>
void host_gather(const Order& order, std::size_t rows, std::int64_t* indices, CopyWorkers& workers,
                 const Fields&... fields) {
  // Blocks of whole cache lines of every field and of `indices`: no two threads write a line.
  const std::size_t line_rows =
      std::max({rows_per_line(sizeof(std::int64_t)), rows_per_line(fields.row_bytes())...});
  const std::size_t block_rows =
      ceil_div(rows_per_block(gather_block_bytes, (std::size_t{0} + ... + fields.row_bytes())),
               line_rows) *
      line_rows;
  workers.for_each_block(0, rows, block_rows, [&](std::size_t first, std::size_t last) {
    // Rows are placed ahead of their copies, a group at a time, into a ring of places, and the
    // caches asked for each `gather_prefetch_rows` rows ahead: the order's arithmetic overlaps
    // the copies' loads, and nothing is allocated per block.
    constexpr std::size_t group = place_group<Order>;
    constexpr std::size_t ring = place_ring<Order>();
    std::array<RowPlace, ring> places{};
    std::size_t placed = first;  // rows below it are placed
    const auto ask = [&](std::size_t r) {
      while (placed <= r) {
        RowPlace* at = places.data() + (placed - first) % ring;  // whole groups: no wrap
        const std::size_t count = std::min(group, last - placed);
        place_rows(order, placed, count, at);
        for (std::size_t i = 0; i < count; ++i)
          indices[placed + i] = static_cast<std::int64_t>(at[i].row);
        placed += count;
      }
      (fields.prefetch(places[(r - first) % ring]), ...);
    };
    for (std::size_t r = first; r < std::min(last, first + gather_prefetch_rows); ++r) ask(r);
    const auto converters = std::make_tuple(RowConverter(fields.op)...);
    std::vector<std::byte> scratch(std::max({std::size_t{0}, fields.scratch_bytes()...}));
    for (std::size_t r = first; r < last; ++r) {
      if (r + gather_prefetch_rows < last) ask(r + gather_prefetch_rows);
      std::apply(
          [&](const auto&... convert) {
            (fields.copy_row(places[(r - first) % ring], r, convert, scratch.data()), ...);
          },
          converters);
    }
  });
}

/// @brief The host's gather engine (see `default_space_traits::gather_engine`): the copy
/// threads of `host_gather`, complete when a call returns, whatever the stream.
class HostGather {
 public:
  /// Gathers read host memory: a whole-epoch stream's gathers read its rows where they lie.
  static constexpr bool reads_host_memory = true;

  /// @brief The epoch's copy team, sized by the bytes of its largest batch.
  /// @throws std::bad_alloc, std::system_error when the team cannot be made.
  explicit HostGather(const GatherSetup& setup)
      : workers_(
            std::make_unique<CopyWorkers>(gather_thread_count(setup.threads, setup.batch_bytes))) {}

  /// @brief Every epoch can be gathered: nothing to refuse.
  template <class Order, class Stream, class... Fields>
  static constexpr void check() noexcept {}

  /// @brief `host_gather` on the epoch's copy team.
  template <class Order, class Stream, class... Fields>
  void gather(const Order& order, std::size_t rows, std::int64_t* indices, Stream /*stream*/,
              const Fields&... fields) {
    const BusFaultsDelivered faults;  // rows in a file's mapping, cut meanwhile: see bus_faults
    host_gather(order, rows, indices, *workers_, fields...);
  }

  /// @brief The row ids alone, on the calling thread.
  template <class Order, class Stream>
  void fill_indices(const Order& order, std::size_t rows, std::int64_t* indices,
                    Stream /*stream*/) const {
    for (std::size_t r = 0; r < rows; ++r) indices[r] = static_cast<std::int64_t>(order.row(r));
  }

 private:
  std::unique_ptr<CopyWorkers> workers_;  // on the heap: the engine moves with its epoch
};

}  // namespace resident::detail
