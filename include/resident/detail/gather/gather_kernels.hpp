// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// The device gathers' logic: what each block and thread of a gather kernel does, the launch
// shape, and the dispatch, as host-and-device code. The `__global__` shell that runs it on a
// device is in detail/cuda/gather.cuh (nvcc only); a launch policy decides where the blocks run
// (it has `reach_type`, see `SameAddress`, `max_blocks`, and `run(body, stream)`), so that the
// same logic can also be run block by block on the host (`run_blocks`) and checked against the
// host's gathers.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <type_traits>
#include <utility>

#include "resident/augment.hpp"
#include "resident/config.hpp"
#include "resident/convert.hpp"
#include "resident/detail/checked_math.hpp"
#include "resident/detail/dataset/row_order.hpp"
#include "resident/detail/gather/augment_draws.hpp"

namespace resident::detail {

/// Threads of a gather block, as `__launch_bounds__` promises the compiler.
inline constexpr unsigned gather_threads = 128;
/// log2(gather_threads).
inline constexpr unsigned gather_threads_shift = 7;
static_assert(gather_threads == 1u << gather_threads_shift, "a block is a power of two");
/// Most blocks of one launch: the grid's x limit. A batch of more row groups than this is
/// covered by blocks that loop over several groups.
inline constexpr std::uint64_t max_gather_blocks = 2147483647u;

/// The words a row copy moves when its size allows: 16 and 8 bytes, aligned to their size, so
/// that a device copies each with one vector load and store (as CUDA's `uint4` and `uint2`).
struct alignas(16) Words16 {
  std::uint32_t x, y, z, w;
};
struct alignas(8) Words8 {
  std::uint32_t x, y;
};

/// @brief How a gather is laid over its threads: each row is `row_threads` threads (a power of
/// two, at most a block), so that a block takes `gather_threads / row_threads` rows at a time,
/// a "group"; `blocks` blocks take every `blocks`-th group. Narrow rows (a 4-byte label) share
/// a block instead of keeping one thread of 128 busy; wide rows take a whole block each.
struct GatherShape {
  std::uint64_t rows = 0;    ///< Rows of the batch.
  std::uint64_t blocks = 0;  ///< Blocks of the launch.
  unsigned row_shift = 0;    ///< log2(threads per row).

  [[nodiscard]] RESIDENT_HOST_DEVICE unsigned row_threads() const noexcept {
    return 1u << row_shift;
  }
  [[nodiscard]] RESIDENT_HOST_DEVICE unsigned group_rows() const noexcept {
    return gather_threads >> row_shift;
  }
  [[nodiscard]] RESIDENT_HOST_DEVICE std::uint64_t groups() const noexcept {
    return (rows + group_rows() - 1) / group_rows();
  }
};

/// @brief The shape for `rows` rows of `row_units` units each (words copied, or elements
/// converted): threads per row the units rounded up to a power of two, at most a block; at
/// most `max_blocks` blocks.
inline GatherShape gather_shape(std::uint64_t rows, std::uint64_t row_units,
                                std::uint64_t max_blocks) noexcept {
  GatherShape shape;
  shape.rows = rows;
  while (shape.row_shift < gather_threads_shift &&
         (std::uint64_t{1} << shape.row_shift) < row_units)
    ++shape.row_shift;
  shape.blocks = std::min(shape.groups(), max_blocks);
  return shape;
}

/// @brief An element's index in its row as the threads of a row walk it: `row_threads` apart.
/// `ElementStep` carries what a conversion needs of it; for a plain op, the index.
struct ElementIndex {
  std::uint64_t element = 0;
};

/// @brief A field's conversion as the kernels apply it, element `cursor.element` of a row at a
/// time: `Op`'s `op(value, element)`, or the stored value without a conversion.
template <class Op>
struct KernelOp {
  using cursor_type = ElementIndex;
  Op op;
  std::uint64_t step = 1;

  KernelOp(const Op& conversion, std::uint64_t threads) noexcept : op(conversion), step(threads) {}
  [[nodiscard]] RESIDENT_HOST_DEVICE cursor_type start(std::uint64_t element) const noexcept {
    return {element};
  }
  RESIDENT_HOST_DEVICE void advance(cursor_type& cursor) const noexcept { cursor.element += step; }
  template <class T>
  [[nodiscard]] RESIDENT_HOST_DEVICE auto operator()(T value, const cursor_type& cursor) const {
    if constexpr (std::is_same_v<Op, NoConversion>)
      return value;
    else
      return op(value, static_cast<std::size_t>(cursor.element));
  }
};

/// @brief `Normalize` without a division per element: each thread's element advances by a
/// constant step, so its channel is carried from one element to the next (a channel's run and
/// its place in it, each advanced by the step's share and wrapped), the divisions done once per
/// thread. Values are `Normalize`'s, bit for bit.
template <>
struct KernelOp<Normalize> {
  struct cursor_type {
    std::uint64_t within = 0;  ///< Place in the channel's run.
    std::uint64_t channel = 0;
  };
  Normalize op;
  std::uint64_t stride = 1;         ///< Elements of a channel's run.
  std::uint64_t channels = 1;       ///< Channels.
  std::uint64_t step_within = 0;    ///< step % stride
  std::uint64_t step_channels = 0;  ///< (step / stride) % channels

  KernelOp(const Normalize& conversion, std::uint64_t threads) noexcept
      : op(conversion),
        stride(conversion.channel_stride()),
        channels(conversion.channels()),
        step_within(threads % stride),
        step_channels(threads / stride % channels) {}
  [[nodiscard]] RESIDENT_HOST_DEVICE cursor_type start(std::uint64_t element) const noexcept {
    return {element % stride, element / stride % channels};
  }
  RESIDENT_HOST_DEVICE void advance(cursor_type& cursor) const noexcept {
    cursor.within += step_within;
    cursor.channel += step_channels;
    if (cursor.within >= stride) {
      cursor.within -= stride;
      ++cursor.channel;
    }
    if (cursor.channel >= channels) cursor.channel -= channels;  // below 2 x channels
  }
  template <class T>
  [[nodiscard]] RESIDENT_HOST_DEVICE float operator()(T value, const cursor_type& cursor) const {
    const auto c = static_cast<std::size_t>(cursor.channel);
    return normalized(to_float(value), op.scale(c), op.offset(c));
  }
};

/// @brief A gather kernel's rows: the rows of one group, their sources located by the first
/// threads of the block (each row's place worked out once, shared through the block's memory);
/// then each row's threads walk its elements. `Rows` is what the layout of a copy, a
/// conversion and an augmentation share; `Reach` maps an address and the elements a step
/// touches from it to where the running thread reaches them (itself on a device; see
/// `SameAddress`).
template <class Source, class Out, class Order, class Reach>
struct GatherRows {
  using In = typename Source::element_type;
  Source source;
  Out* destination;
  std::uint64_t row_elements;
  Order order;
  std::int64_t* indices;  ///< Row ids written here when not null.
  GatherShape shape;
  Reach reach;

  /// The block's first threads: row `thread` of the group, if any, located.
  template <class Shared>
  RESIDENT_HOST_DEVICE bool locate(std::uint64_t group, unsigned thread, Shared& shared,
                                   RowPlace& place) const {
    const std::uint64_t r = group * shape.group_rows() + thread;
    if (thread >= shape.group_rows() || r >= shape.rows) return false;
    place = order.place(r, reach);
    if (indices != nullptr) *reach(indices + r, 1) = static_cast<std::int64_t>(place.row);
    shared.from[thread] = source.at(place, reach);
    return true;
  }
  /// Walks the row of the group that `thread` works on (none past the batch's last row): calls
  /// `element(from, to, e, cursor, j)` for each element `e` of row `j` of the group that the
  /// thread takes (`row_threads` apart), the conversion's cursor advanced along.
  template <class Shared, class Op, class Element>
  RESIDENT_HOST_DEVICE void walk(std::uint64_t group, unsigned thread, const Shared& shared,
                                 const KernelOp<Op>& op, Element element) const {
    const unsigned j = thread >> shape.row_shift;
    const std::uint64_t r = group * shape.group_rows() + j;
    if (r >= shape.rows) return;
    // The whole row, both ways: the row's threads share it, each taking every
    // `row_threads`-th element, and an augmentation's crop and flip read any element of the
    // stored row (`source_element` maps into `[0, row_elements)`: the image is the row).
    const In* from = reach(shared.from[j], row_elements);
    Out* to = reach(destination + r * row_elements, row_elements);
    const std::uint64_t first = thread & (shape.row_threads() - 1);
    auto cursor = op.start(first);
    for (std::uint64_t e = first; e < row_elements; e += shape.row_threads()) {
      element(from, to, e, cursor, j);
      op.advance(cursor);
    }
  }
};

/// @brief Copies or converts rows: `to[e] = op(from[e], e)` (see `GatherRows`).
template <class Source, class Out, class Op, class Order, class Reach>
struct ConvertRowsBody {
  using In = typename Source::element_type;
  struct Shared {
    const In* from[gather_threads];  // NOLINT(modernize-avoid-c-arrays): block memory
  };
  GatherRows<Source, Out, Order, Reach> rows;
  KernelOp<Op> op;

  [[nodiscard]] RESIDENT_HOST_DEVICE const GatherShape& shape() const noexcept {
    return rows.shape;
  }
  RESIDENT_HOST_DEVICE void locate(std::uint64_t group, unsigned thread, Shared& shared) const {
    RowPlace place;
    (void)rows.locate(group, thread, shared, place);
  }
  RESIDENT_HOST_DEVICE void work(std::uint64_t group, unsigned thread, const Shared& shared) const {
    rows.walk(group, thread, shared, op,
              [&](const In* from, Out* to, std::uint64_t e, const auto& cursor, unsigned /*j*/) {
                to[e] = op(from[e], cursor);
              });
  }
};

/// @brief Gathers, augments and converts rows in one pass: each row's sample draws are made
/// once, by the thread that locates it, and shared; each element is read from where the crop
/// and flip move it, converted, and cut out.
template <class Source, class Out, class Op, class Order, class Reach>
struct AugmentRowsBody {
  using In = typename Source::element_type;
  struct Shared {
    const In* from[gather_threads];     // NOLINT(modernize-avoid-c-arrays): block memory
    SampleDraws draws[gather_threads];  // NOLINT(modernize-avoid-c-arrays)
  };
  GatherRows<Source, Out, Order, Reach> rows;
  KernelOp<Op> op;
  Augmentation augmentation;
  AugmentKey key;

  [[nodiscard]] RESIDENT_HOST_DEVICE const GatherShape& shape() const noexcept {
    return rows.shape;
  }
  RESIDENT_HOST_DEVICE void locate(std::uint64_t group, unsigned thread, Shared& shared) const {
    RowPlace place;
    if (rows.locate(group, thread, shared, place))
      shared.draws[thread] = draw_sample(augmentation, key, place.row);
  }
  RESIDENT_HOST_DEVICE void work(std::uint64_t group, unsigned thread, const Shared& shared) const {
    const ImageLayout output = augmentation.output_image();
    rows.walk(group, thread, shared, op,
              [&](const In* from, Out* to, std::uint64_t e, const auto& cursor, unsigned j) {
                const SampleDraws& draws = shared.draws[j];
                const auto element = static_cast<std::size_t>(e);
                const std::int64_t at = source_element(augmentation, draws, element);
                const Out converted = op(at < 0 ? In{} : from[at], cursor);
                to[e] = cut_out(output, draws, element) ? Out{} : converted;
              });
  }
};

/// @brief Writes a batch's row ids only (a zero-copy epoch asked for `batch_indices()`).
template <class Order, class Reach>
struct FillIndicesBody {
  struct Shared {};
  Order order;
  std::int64_t* indices;
  GatherShape shape_;
  Reach reach;

  [[nodiscard]] RESIDENT_HOST_DEVICE const GatherShape& shape() const noexcept { return shape_; }
  RESIDENT_HOST_DEVICE void locate(std::uint64_t group, unsigned thread, Shared& /*shared*/) const {
    const std::uint64_t r = group * shape_.group_rows() + thread;
    if (r < shape_.rows) *reach(indices + r, 1) = static_cast<std::int64_t>(order.row(r));
  }
  RESIDENT_HOST_DEVICE void work(std::uint64_t /*group*/, unsigned /*thread*/,
                                 const Shared& /*shared*/) const noexcept {}
};

/// @brief Runs `body`'s blocks one after the other on the calling thread, each block's threads
/// phase by phase (every thread locates, then every thread works: the block's barrier between
/// them). The host's run of a gather kernel, as a test build's launch policy runs it.
template <class Body>
void run_blocks(const Body& body) {
  const GatherShape& shape = body.shape();
  for (std::uint64_t block = 0; block < shape.blocks; ++block) {
    typename Body::Shared shared{};
    for (std::uint64_t group = block; group < shape.groups(); group += shape.blocks) {
      for (unsigned thread = 0; thread < gather_threads; ++thread)
        body.locate(group, thread, shared);
      // Backwards: a thread must not rely on another thread's work of the same phase.
      for (unsigned thread = gather_threads; thread-- > 0;) body.work(group, thread, shared);
    }
  }
}

/// Whether a gather source says how its row starts are aligned (`alignment()`); the others'
/// rows start at multiples of their size from an aligned base.
template <class Source, class = void>
struct has_alignment : std::false_type {};
template <class Source>
struct has_alignment<Source, std::void_t<decltype(std::declval<const Source&>().alignment())>>
    : std::true_type {};

/// @brief The device counterpart of `host_gather`, one field, through `Launch` on `stream`
/// (no synchronisation). Rows are copied in the widest word their size allows: field bases and
/// ring slots are 256-byte aligned, so every row of a size divisible by the word is aligned to
/// it. With an `augmentation`, one kernel gathers, augments (keyed by `key`) and converts.
/// `source` is a `StoredRows` or a `ChunkSlotRows` of the field; `order` a `RowOrder` or a
/// `ChunkRows`; field 0 also writes the row ids into `indices`.
template <class Launch, class Source, class Out, class Op, class Order, class Stream>
void device_gather(const Source& source, Out* destination, std::size_t row_elements,
                   const Order& order, std::size_t rows, const Op& op,
                   const Augmentation* augmentation, const AugmentKey& key, std::int64_t* indices,
                   Stream stream) {
  using In = typename Source::element_type;
  using Reach = typename Launch::reach_type;
  if (rows == 0) return;
  const auto shape_for = [&](std::uint64_t units) {
    return gather_shape(rows, units, Launch::max_blocks);
  };
  if (augmentation != nullptr) {
    const GatherShape shape = shape_for(row_elements);
    Launch::run(
        AugmentRowsBody<Source, Out, Op, Order, Reach>{
            {source, destination, row_elements, order, indices, shape, Reach{}},
            KernelOp<Op>(op, shape.row_threads()),
            *augmentation,
            key},
        stream);
  } else if constexpr (std::is_same_v<Op, NoConversion>) {
    static_assert(std::is_same_v<In, Out>, "a gather without conversion keeps the type");
    const auto copy = [&](auto word) {
      using Word = decltype(word);
      const std::size_t words = row_elements * sizeof(In) / sizeof(Word);
      const GatherShape shape = shape_for(words);
      const auto from = source.template as<Word>();
      Launch::run(
          ConvertRowsBody<decltype(from), Word, NoConversion, Order, Reach>{
              {from, reinterpret_cast<Word*>(destination),  // NOLINT: the rows as words
               words, order, indices, shape, Reach{}},
              KernelOp<NoConversion>({}, shape.row_threads())},
          stream);
    };
    // The widest word that divides the rows' size and, where rows start unaligned (a token
    // stream's windows), their starts.
    std::size_t aligned = row_elements * sizeof(In);
    if constexpr (has_alignment<Source>::value) aligned = std::gcd(aligned, source.alignment());
    if (aligned % 16 == 0)
      copy(Words16{});
    else if (aligned % 8 == 0)
      copy(Words8{});
    else if (aligned % 4 == 0)
      copy(std::uint32_t{});
    else if (aligned % 2 == 0)
      copy(std::uint16_t{});
    else
      copy(std::uint8_t{});
  } else {
    const GatherShape shape = shape_for(row_elements);
    Launch::run(
        ConvertRowsBody<Source, Out, Op, Order, Reach>{
            {source, destination, row_elements, order, indices, shape, Reach{}},
            KernelOp<Op>(op, shape.row_threads())},
        stream);
  }
}

/// @brief Writes a batch's row ids only, through `Launch` on `stream`.
template <class Launch, class Order, class Stream>
void device_fill_indices(const Order& order, std::size_t rows, std::int64_t* indices,
                         Stream stream) {
  if (rows == 0) return;
  Launch::run(
      FillIndicesBody<Order, typename Launch::reach_type>{
          order, indices, gather_shape(rows, 1, Launch::max_blocks), {}},
      stream);
}

}  // namespace resident::detail
