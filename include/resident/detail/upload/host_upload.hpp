// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

#include "resident/dataset_options.hpp"
#include "resident/detail/copy_workers.hpp"
#include "resident/detail/upload/upload_plan.hpp"

namespace resident::detail {

/// @brief The default upload engine of `space_traits`, for spaces whose `copy_from_host`
/// completes on the calling thread (the host space and spaces built on it): block by block,
/// each block split across a team of copy threads, progress reported and cancellation honoured
/// between blocks; streamed parts produced by the calling thread through a one-block window.
/// @note Every byte goes through `space.copy_from_host`, so a space that wraps the host space
/// (for fault injection, say) sees every copy.
struct CopyTeamUpload {
  template <class Space>
  static void upload(const Space& space, std::byte* destination, const UploadPlan& plan,
                     const DatasetOptions& options, typename Space::stream_type stream) {
    static constexpr std::byte zeros[field_alignment]{};  // gaps are shorter than an alignment
    const ProgressReporter progress(options.on_progress, plan.total_bytes);
    CopyWorkers workers(upload_thread_count(options.upload_threads, plan.total_bytes));
    const auto copy_slice = [&](std::size_t first, std::size_t last) {
      plan.for_each_part(first, last, [&](std::size_t at, const std::byte* source, std::size_t n) {
        space.copy_from_host(destination + at, source != nullptr ? source : zeros, n, stream);
      });
    };
    // Streamed parts (inflated members) are produced here, by this thread, into a window of one
    // block, then copied like the others.
    std::vector<std::byte> window(
        plan.has_streamed() ? std::min(options.upload_block_bytes, plan.total_bytes) : 0);
    const auto copy_streamed = [&](std::size_t at, const StreamedBytes& read, std::size_t from,
                                   std::size_t n) {
      read(from, n, window.data());
      space.copy_from_host(destination + at, window.data(), n, stream);
    };
    for_each_block(plan.total_bytes, options.upload_block_bytes,
                   [&](std::size_t first, std::size_t last, std::size_t /*index*/) {
                     workers.for_each_block(first, last, upload_copy_block_bytes, copy_slice);
                     plan.for_each_streamed(first, last, copy_streamed);
                     if (last < plan.total_bytes) progress.report(last);
                   });
    space.synchronize(stream);
    progress.report(plan.total_bytes);
  }
};

}  // namespace resident::detail
