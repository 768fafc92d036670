// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>

#include "resident/detail/copy_workers.hpp"
#include "resident/detail/upload_plan.hpp"

namespace resident::detail {

/// @brief The staging pipeline, apart from the API that moves the bytes: host threads copy
/// chunk k of the allocation into a free staging buffer while earlier chunks are still being
/// transferred out of the others; a buffer is refilled only once the transfer last started
/// from it has completed.
///
/// `Transport` provides `std::size_t ring_size()`, `std::byte* buffer(slot)` (at least `chunk`
/// bytes), `void wait_until_free(slot)`, `void transfer(slot, destination, bytes)` (start
/// copying `buffer(slot)[0, bytes)` to `destination`, asynchronously) and `void finish()`
/// (wait for every transfer). CUDA's is in cuda_upload.hpp; the tests drive the same loop with
/// a transport that defers every copy as long as it may, which catches a refill that comes
/// too early.
template <class Transport>
void staged_upload(Transport& transport, std::byte* destination, const UploadPlan& plan,
                   std::size_t chunk, unsigned threads, const ProgressReporter& progress) {
  CopyWorkers workers(threads);
  for_each_chunk(
      plan.total_bytes, chunk, [&](std::size_t first, std::size_t last, std::size_t index) {
        const std::size_t slot = index % transport.ring_size();
        if (index >= transport.ring_size()) transport.wait_until_free(slot);
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
        if (last < plan.total_bytes) progress.report(last);
      });
  transport.finish();
}

/// @brief Chunks an upload of `total_bytes` in `chunk_bytes` pieces takes.
constexpr std::size_t count_chunks(std::size_t total_bytes, std::size_t chunk_bytes) noexcept {
  return total_bytes / chunk_bytes + (total_bytes % chunk_bytes != 0 ? 1 : 0);
}

}  // namespace resident::detail
