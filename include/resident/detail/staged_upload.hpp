// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <vector>

#include "resident/detail/copy_workers.hpp"
#include "resident/detail/upload_plan.hpp"

namespace resident::detail {

/// @brief The chunk loop of both CUDA upload paths: chunk `index` goes through slot
/// `index % ring_size()` of `transport` once the transfer last started from that slot has
/// completed, so that at most `ring_size()` chunks are in flight.
///
/// Progress counts bytes that have *landed*, never bytes merely enqueued: a chunk is reported
/// once its transfer is known to be complete (at the wait for its slot, or after `finish()`),
/// one report per chunk in order (transfers run in order on one stream, so a completed chunk
/// implies every chunk before it). The last chunk's report, the total, is the caller's.
///
/// `Transport` provides `std::size_t ring_size()`, `void wait_until_free(slot)` (returns once
/// the transfer last started from `slot` has completed) and `void finish()` (waits for every
/// transfer); `enqueue(slot, first, last)` starts the transfer of bytes `[first, last)` from
/// `slot`. The tests drive it with transports that defer every transfer as long as they may.
template <class Transport, class Enqueue>
void pipelined_chunks(Transport& transport, std::size_t total_bytes, std::size_t chunk,
                      const ProgressReporter& progress, Enqueue&& enqueue) {
  const std::size_t ring = transport.ring_size();
  std::vector<std::size_t> ends(ring, 0);  // where the chunk last started from each slot ends
  const auto landed = [&](std::size_t index) {
    if (ends[index % ring] < total_bytes) progress.report(ends[index % ring]);
  };
  std::size_t chunks = 0;
  for_each_chunk(total_bytes, chunk, [&](std::size_t first, std::size_t last, std::size_t index) {
    const std::size_t slot = index % ring;
    if (index >= ring) {
      transport.wait_until_free(slot);
      landed(index - ring);
    }
    enqueue(slot, first, last);
    ends[slot] = last;
    chunks = index + 1;
  });
  transport.finish();
  for (std::size_t index = chunks > ring ? chunks - ring : 0; index < chunks; ++index)
    landed(index);
}

/// @brief The staging pipeline, apart from the API that moves the bytes: host threads copy
/// chunk k of the allocation into a free staging buffer while earlier chunks are still being
/// transferred out of the others (see `pipelined_chunks` for the order and the progress).
///
/// `Transport` is a `pipelined_chunks` transport that also provides `std::byte* buffer(slot)`
/// (at least `chunk` bytes) and `void transfer(slot, destination, bytes)` (start copying
/// `buffer(slot)[0, bytes)` to `destination`, asynchronously). CUDA's is in cuda_upload.hpp.
template <class Transport>
void staged_upload(Transport& transport, std::byte* destination, const UploadPlan& plan,
                   std::size_t chunk, unsigned threads, const ProgressReporter& progress) {
  CopyWorkers workers(threads);
  pipelined_chunks(
      transport, plan.total_bytes, chunk, progress,
      [&](std::size_t slot, std::size_t first, std::size_t last) {
        std::byte* staging = transport.buffer(slot);  // holds allocation bytes [first, last)
        workers.for_each_slice(first, last, [&](std::size_t from, std::size_t to) {
          plan.for_each_part(from, to, [&](std::size_t at, const std::byte* source, std::size_t n) {
            if (source != nullptr)
              std::memcpy(staging + (at - first), source, n);
            else
              std::memset(staging + (at - first), 0, n);
          });
        });
        transport.transfer(slot, destination + first, last - first);
      });
}

/// @brief Chunks an upload of `total_bytes` in `chunk_bytes` pieces takes.
constexpr std::size_t count_chunks(std::size_t total_bytes, std::size_t chunk_bytes) noexcept {
  return total_bytes / chunk_bytes + (total_bytes % chunk_bytes != 0 ? 1 : 0);
}

}  // namespace resident::detail
