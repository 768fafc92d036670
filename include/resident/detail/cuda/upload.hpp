// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "resident/config.hpp"

#if RESIDENT_HAS_CUDA
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <vector>

#include "resident/dataset_options.hpp"
#include "resident/detail/checked_math.hpp"
#include "resident/detail/copy_workers.hpp"
#include "resident/detail/cuda/error.hpp"
#include "resident/detail/cuda/resources.hpp"
#include "resident/detail/upload/staged_upload.hpp"
#include "resident/detail/upload/upload_plan.hpp"

namespace resident::detail {

/// @brief Whether the device can read `[first, first + bytes)` by DMA as it is (page-locked
/// host memory, from `cudaMallocHost` or `cudaHostRegister`), so that staging would only add a
/// copy. Both ends are asked, so a range that runs off a pinned block is not taken for pinned.
inline bool range_is_pinned(const std::byte* first, std::size_t bytes) {
  if (bytes == 0) return true;
  for (const std::byte* address : {first, first + bytes - 1}) {
    cudaPointerAttributes attributes{};
    if (cudaPointerGetAttributes(&attributes, address) != cudaSuccess) {
      (void)cudaGetLastError();  // pageable memory may be reported as an error by old drivers
      return false;
    }
    if (attributes.type != cudaMemoryTypeHost) return false;
  }
  return true;
}

/// @brief Whether every source of an upload is page-locked (see `range_is_pinned`); a streamed
/// source never is (it is produced into a staging buffer).
inline bool sources_are_pinned(const UploadPlan& plan) {
  return std::all_of(plan.parts.begin(), plan.parts.end(), [](const UploadPart& part) {
    return part.streamed == nullptr && range_is_pinned(part.source, part.bytes);
  });
}

/// @brief The transport of `pipelined_blocks` on CUDA: one event per slot, recorded behind
/// the last transfer started from it. Small (a few blocks in flight).
class CudaTransferEvents {
 public:
  CudaTransferEvents(std::size_t slots, cudaStream_t stream)
      : stream_(stream), events_(create_events(slots)) {}
  /// Waits for every transfer still in flight (also when an upload failed half-way: their
  /// sources and staging buffers must outlive them); never throws. The stream, not the events:
  /// a transfer whose record failed is covered by no event.
  ~CudaTransferEvents() { (void)cudaStreamSynchronize(stream_); }
  CudaTransferEvents(const CudaTransferEvents&) = delete;
  CudaTransferEvents& operator=(const CudaTransferEvents&) = delete;

  [[nodiscard]] std::size_t buffer_count() const noexcept { return events_.size(); }
  void wait_until_free(std::size_t slot) const {
    RESIDENT_CUDA_TRY(cudaEventSynchronize(events_[slot].get()));
  }
  /// The transfers enqueued so far on the stream are the last ones from `slot`.
  void record(std::size_t slot) const {
    RESIDENT_CUDA_TRY(cudaEventRecord(events_[slot].get(), stream_));
  }
  void finish() const { RESIDENT_CUDA_TRY(cudaStreamSynchronize(stream_)); }
  [[nodiscard]] cudaStream_t stream() const noexcept { return stream_; }

 private:
  cudaStream_t stream_;
  std::vector<CudaEvent> events_;
};

/// @brief The one set of page-locked staging buffers on CUDA: buffers of host memory that host
/// threads fill while the copy engine drains the others, each behind an event recorded after the
/// last copy out of it. Uploads use it as `staged_upload`'s transport (`transfer`); streaming
/// uses it for its two chunk buffers (`copy_out`, then `record`). Allocated once per upload
/// or stream and small (a few buffers), because page-locking costs hundreds of milliseconds
/// per GiB.
class CudaStagingBuffers {
 public:
  CudaStagingBuffers(std::size_t buffers, std::size_t buffer_bytes, cudaStream_t stream)
      : buffer_bytes_(buffer_bytes),
        base_(allocate_pinned(checked_mul(buffers, buffer_bytes, "staging byte size"))),
        events_(buffers, stream) {}

  [[nodiscard]] std::size_t buffer_count() const noexcept { return events_.buffer_count(); }
  [[nodiscard]] std::byte* buffer(std::size_t slot) const noexcept {
    return base_.get() + slot * buffer_bytes_;
  }
  /// Returns once every copy out of buffer `slot` enqueued before its last `record` is done.
  void wait_until_free(std::size_t slot) const { events_.wait_until_free(slot); }
  /// Enqueues a copy of `bytes` from `offset` in buffer `slot` to device memory `destination`.
  void copy_out(std::size_t slot, std::size_t offset, std::byte* destination,
                std::size_t bytes) const {
    RESIDENT_CUDA_TRY(cudaMemcpyAsync(destination, buffer(slot) + offset, bytes,
                                      cudaMemcpyHostToDevice, events_.stream()));
  }
  /// The copies enqueued so far are the last ones out of buffer `slot`.
  void record(std::size_t slot) const { events_.record(slot); }
  /// `staged_upload`'s transfer: the first `bytes` of buffer `slot` to `destination`.
  void transfer(std::size_t slot, std::byte* destination, std::size_t bytes) const {
    copy_out(slot, 0, destination, bytes);
    record(slot);
  }
  void finish() const { events_.finish(); }

 private:
  std::size_t buffer_bytes_;
  PinnedBuffer base_;          // released after `events_` has waited for the transfers out of it
  CudaTransferEvents events_;  // NOLINT: declared after `base_` on purpose (destroyed first)
};

/// @brief Pinned sources: the copy engine reads them directly, block by block through an
/// transfer event per buffer, so that progress counts landed bytes and cancellation keeps its
/// granularity; gaps are zeroed on the device.
inline void direct_upload(std::byte* destination, const UploadPlan& plan, std::size_t block,
                          std::size_t in_flight, cudaStream_t stream,
                          const ProgressReporter& progress) {
  CudaTransferEvents events(in_flight, stream);
  pipelined_blocks(events, plan.total_bytes, block, progress,
                   [&](std::size_t slot, std::size_t first, std::size_t last) {
                     plan.for_each_part(
                         first, last, [&](std::size_t at, const std::byte* source, std::size_t n) {
                           if (source != nullptr)
                             RESIDENT_CUDA_TRY(cudaMemcpyAsync(destination + at, source, n,
                                                               cudaMemcpyHostToDevice, stream));
                           else
                             RESIDENT_CUDA_TRY(cudaMemsetAsync(destination + at, 0, n, stream));
                         });
                     events.record(slot);
                   });
}

/// @brief `space_traits<CudaSpace>::upload_engine`: direct from pinned sources, staged from
/// pageable ones, with the space's device current throughout (events belong to one device).
struct CudaUpload {
  /// A template over the space (any with `device_id()`), so that this header needs no
  /// definition of `CudaSpace`, whose header includes it.
  template <class Space>
  static void upload(const Space& space, std::byte* destination, const UploadPlan& plan,
                     const DatasetOptions& options, cudaStream_t stream) {
    const ProgressReporter progress(options.on_progress, plan.total_bytes);
    if (plan.total_bytes != 0) {
      const CudaDeviceScope scope(space.device_id());
      const std::size_t block = std::min(options.upload_block_bytes, plan.total_bytes);
      const std::size_t in_flight =
          std::min(options.staging_buffers, ceil_div(plan.total_bytes, block));
      if (sources_are_pinned(plan)) {
        direct_upload(destination, plan, block, in_flight, stream, progress);
      } else {
        CudaStagingBuffers staging(in_flight, block, stream);
        staged_upload(staging, destination, plan, block,
                      upload_thread_count(options.upload_threads, plan.total_bytes), progress);
      }
    }
    progress.report(plan.total_bytes);
  }
};

}  // namespace resident::detail

#endif  // RESIDENT_HAS_CUDA
