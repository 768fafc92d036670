// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// Test support: a memory space with a gather engine of its own, as a space that is not CUDA
// brings one (see docs/api.md, "Adding a memory space"). Its memory is the host's; its engine
// runs the kernels' logic (gather_kernels.hpp: one launch per field, a few blocks that loop over
// the row groups) block by block on the calling thread, and counts its gathers, so that a test
// can tell that the epoch used this engine and no other.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "resident/detail/gather/gather_kernels.hpp"
#include "resident/error.hpp"
#include "resident/host_space.hpp"
#include "resident/space_traits.hpp"

namespace resident::testing {

/// Host memory whose gathers are `BlockGather`'s.
class BlockGatherSpace : public HostSpace {
 public:
  using memory_space = BlockGatherSpace;
  using inner_space = HostSpace;  // usable wherever the host is

  BlockGatherSpace() = default;
  /// A space of `bytes` bytes, as `HostSpace::with_budget`.
  [[nodiscard]] static BlockGatherSpace with_budget(std::size_t bytes) {
    return BlockGatherSpace(HostSpace::with_budget(bytes));
  }

 private:
  explicit BlockGatherSpace(HostSpace space) : HostSpace(std::move(space)) {}
};

/// The blocks of a gather, one after the other on the calling thread; at most 3 of them, so
/// that a batch of more row groups loops over them as a large launch does on a device.
struct CallingThreadBlocks {
  using reach_type = detail::SameAddress;
  static constexpr std::uint64_t max_blocks = 3;

  template <class Body, class Stream>
  static void run(const Body& body, Stream /*stream*/) {
    detail::run_blocks(body);
  }
};

/// `BlockGatherSpace`'s gather engine (see `default_space_traits::gather_engine`).
class BlockGather {
 public:
  static constexpr bool reads_host_memory = true;  // the space's memory is the host's

  explicit BlockGather(const detail::GatherSetup& setup) noexcept {
    last_batch_bytes() = setup.batch_bytes;
  }

  template <class Order, class Stream, class... Fields>
  static constexpr void check() noexcept {}

  template <class Order, class Stream, class... Fields>
  void gather(const Order& order, std::size_t rows, std::int64_t* indices, Stream stream,
              const Fields&... fields) const {
    if (fail_next().exchange(false)) throw Error("resident test: the gather failed, as asked");
    std::int64_t* first = indices;  // field 0 writes the row ids
    (detail::device_gather<CallingThreadBlocks>(
         fields.source, fields.destination, fields.row_elements, order, rows, fields.op,
         fields.augmentation, fields.key, std::exchange(first, nullptr), stream),
     ...);
    gathers().fetch_add(1);
  }

  template <class Order, class Stream>
  void fill_indices(const Order& order, std::size_t rows, std::int64_t* indices,
                    Stream stream) const {
    detail::device_fill_indices<CallingThreadBlocks>(order, rows, indices, stream);
    gathers().fetch_add(1);
  }

  /// When set, the next gather throws (and clears it), as a failing device would.
  static std::atomic<bool>& fail_next() noexcept {
    static std::atomic<bool> fail{false};
    return fail;
  }
  /// The batch bytes the last engine was made with.
  static std::atomic<std::size_t>& last_batch_bytes() noexcept {
    static std::atomic<std::size_t> bytes{0};
    return bytes;
  }
  /// Batches this engine gathered (or wrote the row ids of), in every epoch so far.
  static std::atomic<std::size_t>& gathers() noexcept {
    static std::atomic<std::size_t> count{0};
    return count;
  }
};

}  // namespace resident::testing

/// The engine beside the space, as a space's traits say it.
template <>
struct resident::space_traits<resident::testing::BlockGatherSpace>
    : default_space_traits<resident::testing::BlockGatherSpace> {
  using gather_engine = testing::BlockGather;
  static constexpr bool host_writable = true;  // host memory, as HostSpace's
};
