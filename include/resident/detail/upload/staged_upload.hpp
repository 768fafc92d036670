// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <vector>

#include "resident/detail/copy_workers.hpp"
#include "resident/detail/upload/upload_plan.hpp"

namespace resident::detail {

/// @brief The block loop of both CUDA upload paths: block `index` goes through slot
/// `index % buffer_count()` of `transport` once the transfer last started from that slot has
/// completed, so that at most `buffer_count()` blocks are in flight.
///
/// Progress counts bytes that have *landed*, never bytes merely enqueued: a block is reported
/// once its transfer is known to be complete (at the wait for its slot, or after `finish()`),
/// one report per block in order (transfers run in order on one stream, so a completed block
/// implies every block before it). The last block's report, the total, is the caller's.
///
/// `Transport` provides `std::size_t buffer_count()`, `void wait_until_free(slot)` (returns once
/// the transfer last started from `slot` has completed) and `void finish()` (waits for every
/// transfer); `enqueue(slot, first, last)` starts the transfer of bytes `[first, last)` from
/// `slot`. The tests drive it with transports that defer every transfer as long as they may.
template <class Transport, class Enqueue>
void pipelined_blocks(Transport& transport, std::size_t total_bytes, std::size_t block,
                      const ProgressReporter& progress, Enqueue&& enqueue) {
  const std::size_t buffers = transport.buffer_count();
  std::vector<std::size_t> ends(buffers, 0);  // where the block last started from each slot ends
  const auto landed = [&](std::size_t index) {
    if (ends[index % buffers] < total_bytes) progress.report(ends[index % buffers]);
  };
  std::size_t blocks = 0;
  for_each_block(total_bytes, block, [&](std::size_t first, std::size_t last, std::size_t index) {
    const std::size_t slot = index % buffers;
    if (index >= buffers) {
      transport.wait_until_free(slot);
      landed(index - buffers);
    }
    enqueue(slot, first, last);
    ends[slot] = last;
    blocks = index + 1;
  });
  transport.finish();
  for (std::size_t index = blocks > buffers ? blocks - buffers : 0; index < blocks; ++index)
    landed(index);
}

/// @brief The staging pipeline, apart from the API that moves the bytes: host threads copy
/// block k of the allocation into a free staging buffer while earlier blocks are still being
/// transferred out of the others (see `pipelined_blocks` for the order and the progress).
///
/// `Transport` is a `pipelined_blocks` transport that also provides `std::byte* buffer(slot)`
/// (at least `block` bytes) and `void transfer(slot, destination, bytes)` (start copying
/// `buffer(slot)[0, bytes)` to `destination`, asynchronously). CUDA's is in detail/cuda/upload.hpp.
template <class Transport>
void staged_upload(Transport& transport, std::byte* destination, const UploadPlan& plan,
                   std::size_t block, unsigned threads, const ProgressReporter& progress) {
  CopyWorkers workers(threads);
  pipelined_blocks(
      transport, plan.total_bytes, block, progress,
      [&](std::size_t slot, std::size_t first, std::size_t last) {
        std::byte* staging = transport.buffer(slot);  // holds allocation bytes [first, last)
        workers.for_each_block(
            first, last, upload_copy_block_bytes, [&](std::size_t from, std::size_t to) {
              plan.for_each_part(from, to,
                                 [&](std::size_t at, const std::byte* source, std::size_t n) {
                                   if (source != nullptr)
                                     std::memcpy(staging + (at - first), source, n);
                                   else
                                     std::memset(staging + (at - first), 0, n);
                                 });
            });
        // Streamed parts (inflated members) go straight into the staging buffer, in order.
        plan.for_each_streamed(first, last,
                               [&](std::size_t at, const StreamedBytes& read, std::size_t from,
                                   std::size_t n) { read(from, n, staging + (at - first)); });
        transport.transfer(slot, destination + first, last - first);
      });
}

}  // namespace resident::detail
