// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <functional>
#include <vector>

#include "resident/dataset_options.hpp"
#include "resident/detail/dataset/layout.hpp"
#include "resident/detail/expects.hpp"
#include "resident/error.hpp"
#include "resident/progress.hpp"

namespace resident::detail {

/// @brief Bytes of a field that can only be produced in order (a deflated archive member):
/// `read(first, bytes, into)` writes the source's bytes `[first, first + bytes)` to `into`. An
/// upload calls it from one thread, in the order of the allocation, straight into its staging
/// memory.
using StreamedBytes = std::function<void(std::size_t first, std::size_t bytes, std::byte* into)>;

/// Where one field's bytes come from: host memory, or a streamed source.
struct FieldSource {
  const void* memory = nullptr;             ///< Host memory, read only during the upload.
  const StreamedBytes* streamed = nullptr;  ///< Else this, which outlives the upload.
};

/// The fields of a dataset to upload: their shapes and where their bytes come from.
template <std::size_t Fields>
struct FieldSources {
  std::array<Shape, Fields> shapes;
  std::array<FieldSource, Fields> sources;
};

/// One source buffer and where its bytes go in the allocation.
struct UploadPart {
  std::size_t offset = 0;                   ///< First byte in the allocation.
  std::size_t bytes = 0;                    ///< Bytes of the source.
  const std::byte* source = nullptr;        ///< Host memory, read only during the upload.
  const StreamedBytes* streamed = nullptr;  ///< Else a streamed source (`source` is null)...
  std::size_t streamed_first = 0;           ///< ...read from this byte of it.
};

/// @brief What an upload copies: the allocation's byte range `[0, total_bytes)`, made of the
/// fields' source parts and the alignment gaps between them (which are written as zeros, so
/// that no byte of the allocation is left uninitialised).
struct UploadPlan {
  std::vector<UploadPart> parts;  ///< Sorted by offset, non-overlapping.
  std::size_t total_bytes = 0;

  /// @brief Calls `write(offset, source, bytes)` for every part of `[first, last)` that is host
  /// memory or a gap, in order; `source` is null for gap bytes, which are to be zeroed (a gap is
  /// shorter than `field_alignment`). Streamed parts are left out: see `for_each_streamed`.
  template <class Write>
  void for_each_part(std::size_t first, std::size_t last, Write&& write) const {
    std::size_t at = first;
    for (const UploadPart& part : parts) {
      const std::size_t part_end = part.offset + part.bytes;
      if (part_end <= at || part.bytes == 0) continue;
      if (part.offset >= last) break;
      if (part.offset > at) {
        write(at, nullptr, part.offset - at);
        at = part.offset;
      }
      const std::size_t end = std::min(last, part_end);
      if (part.streamed == nullptr) write(at, part.source + (at - part.offset), end - at);
      at = end;
      if (at == last) return;
    }
    if (at < last) write(at, nullptr, last - at);
  }

  /// @brief Calls `read(offset, streamed, first, bytes)` for every streamed part of
  /// `[first, last)`, in order: the part's `bytes` bytes are bytes `[first, first + bytes)` of
  /// `streamed`.
  template <class Read>
  void for_each_streamed(std::size_t first, std::size_t last, Read&& read) const {
    for (const UploadPart& part : parts) {
      const std::size_t from = std::max(first, part.offset);
      const std::size_t to = std::min(last, part.offset + part.bytes);
      if (part.streamed != nullptr && from < to)
        read(from, *part.streamed, part.streamed_first + (from - part.offset), to - from);
    }
  }

  /// @brief Whether any part is streamed (then the upload needs staging memory for it).
  [[nodiscard]] bool has_streamed() const noexcept {
    return std::any_of(parts.begin(), parts.end(),
                       [](const UploadPart& part) { return part.streamed != nullptr; });
  }
};

/// @brief The upload plan of a dataset's fields laid out by `layout`: each field's stored
/// rows once (this rank's part, or every row), then the padding rows behind them: the stored
/// rows again from their start, cyclically (for a batch larger than the data), or the
/// caller's first rows for a rank that owns none.
template <std::size_t Fields>
UploadPlan make_upload_plan(const DatasetLayout<Fields>& layout,
                            const std::array<FieldSource, Fields>& sources) {
  const ShardGeometry& geometry = layout.geometry;
  const std::size_t cycle_rows =
      geometry.pad_from_source_start ? layout.source_rows : geometry.order_rows;
  UploadPlan upload_plan;
  upload_plan.total_bytes = layout.total_bytes;
  for (std::size_t field = 0; field < Fields; ++field) {
    const std::size_t row_bytes = layout.row_bytes[field];
    const std::size_t first =
        geometry.pad_from_source_start ? 0 : geometry.source_first * row_bytes;
    const FieldSource& source = sources[field];
    const auto add = [&](std::size_t at, std::size_t bytes) {
      if (source.streamed != nullptr)
        upload_plan.parts.push_back({at, bytes, nullptr, source.streamed, first});
      else
        upload_plan.parts.push_back(
            {at, bytes, static_cast<const std::byte*>(source.memory) + first});
    };
    std::size_t at = layout.offsets[field];
    add(at, geometry.order_rows * row_bytes);
    at += geometry.order_rows * row_bytes;
    for (std::size_t left = geometry.stored_rows - geometry.order_rows; left > 0;) {
      const std::size_t rows = std::min(left, cycle_rows);
      add(at, rows * row_bytes);
      at += rows * row_bytes;
      left -= rows;
    }
  }
  return upload_plan;
}

/// @brief Calls `block_of(first, last, index)` for consecutive blocks of at most `block` bytes
/// covering `[0, total)` (never overflowing, whatever `block` is).
template <class BlockOf>
void for_each_block(std::size_t total, std::size_t block, BlockOf&& block_of) {
  for (std::size_t first = 0, index = 0; first < total; ++index) {
    const std::size_t last = first + std::min(block, total - first);
    block_of(first, last, index);
    first = last;
  }
}

/// @brief Checks the upload options that can never work.
inline void check_upload_options(const DatasetOptions& options) {
  RESIDENT_EXPECTS(options.upload_block_bytes > 0,
                   "DatasetOptions::upload_block_bytes is 0; use a positive block size "
                   "(default 8 MiB)");
  RESIDENT_EXPECTS(options.staging_buffers > 0,
                   "DatasetOptions::staging_buffers is 0; use at least 1 (default 4)");
}

/// @brief Reports progress to the user's callback and turns a `false` into `Cancelled`.
class ProgressReporter {
 public:
  ProgressReporter(const ProgressCallback& callback, std::size_t total_bytes)
      : callback_(callback), total_bytes_(total_bytes) {}

  /// @brief `bytes_done` bytes are through; throws `Cancelled` if the callback says stop.
  void report(std::size_t bytes_done) const {
    if (!callback_) return;
    const Progress progress{bytes_done, total_bytes_,
                            std::chrono::duration<double>(Clock::now() - start_).count()};
    if (!callback_(progress)) throw Cancelled(bytes_done, total_bytes_);
  }

 private:
  using Clock = std::chrono::steady_clock;
  const ProgressCallback& callback_;
  std::size_t total_bytes_;
  Clock::time_point start_ = Clock::now();
};

}  // namespace resident::detail
