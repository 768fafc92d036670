// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "resident/config.hpp"

#if RESIDENT_HAS_CUDA
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <vector>

#include "resident/cuda_space.hpp"
#include "resident/dataset_options.hpp"
#include "resident/detail/checked_math.hpp"
#include "resident/detail/copy_workers.hpp"
#include "resident/detail/cuda_try.hpp"
#include "resident/detail/upload_plan.hpp"

namespace resident::detail {

/// @brief Whether the device can read every source by DMA as it is (page-locked host memory,
/// from `cudaMallocHost` or `cudaHostRegister`), so that staging would only add a copy.
inline bool sources_are_pinned(const UploadPlan& plan) {
  const auto pinned = [](const std::byte* address) {
    cudaPointerAttributes attributes{};
    if (cudaPointerGetAttributes(&attributes, address) != cudaSuccess) {
      (void)cudaGetLastError();  // pageable memory may be reported as an error by old drivers
      return false;
    }
    return attributes.type == cudaMemoryTypeHost;
  };
  return std::all_of(plan.pieces.begin(), plan.pieces.end(), [&](const UploadPiece& piece) {
    return piece.bytes == 0 || (pinned(piece.source) && pinned(piece.source + piece.bytes - 1));
  });
}

/// @brief A ring of page-locked staging buffers, each with the event that marks the end of the
/// last transfer out of it. Allocated once per upload and small (a few chunks), because
/// page-locking costs hundreds of milliseconds per GiB.
class PinnedRing {
 public:
  PinnedRing(std::size_t buffers, std::size_t buffer_bytes) : buffer_bytes_(buffer_bytes) {
    void* base = nullptr;
    RESIDENT_CUDA_TRY(
        cudaMallocHost(&base, checked_mul(buffers, buffer_bytes, "staging ring byte size")));
    base_ = static_cast<std::byte*>(base);
    events_.reserve(buffers);
    for (std::size_t index = 0; index < buffers; ++index) {
      cudaEvent_t event = nullptr;
      RESIDENT_CUDA_TRY(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
      events_.push_back(event);
    }
  }
  /// Waits for every transfer still reading the ring (also when an upload failed half-way),
  /// then releases it; never throws.
  ~PinnedRing() {
    for (cudaEvent_t event : events_) {
      (void)cudaEventSynchronize(event);
      assert_released(cudaEventDestroy(event));
    }
    if (base_ != nullptr) assert_released(cudaFreeHost(base_));
  }
  PinnedRing(const PinnedRing&) = delete;
  PinnedRing& operator=(const PinnedRing&) = delete;

  [[nodiscard]] std::size_t size() const noexcept { return events_.size(); }
  [[nodiscard]] std::byte* buffer(std::size_t slot) const noexcept {
    return base_ + slot * buffer_bytes_;
  }
  [[nodiscard]] cudaEvent_t event(std::size_t slot) const noexcept { return events_[slot]; }

 private:
  std::size_t buffer_bytes_;
  std::byte* base_ = nullptr;
  std::vector<cudaEvent_t> events_;
};

/// @brief Pageable sources: host threads copy chunk k into a free staging buffer while the
/// copy engine still moves chunk k-1 (and earlier) out of the others; a buffer is refilled
/// only after the event recorded behind its last transfer has completed.
inline void staged_upload(std::byte* destination, const UploadPlan& plan,
                          const DatasetOptions& options, cudaStream_t stream,
                          const ProgressReporter& progress) {
  const std::size_t chunk = std::min(options.chunk_bytes, plan.total_bytes);
  const std::size_t chunks = plan.total_bytes / chunk + (plan.total_bytes % chunk != 0 ? 1 : 0);
  PinnedRing ring(std::min(options.staging_buffers, chunks), chunk);
  CopyWorkers workers(upload_thread_count(options.upload_threads, plan.total_bytes));
  for (std::size_t index = 0; index < chunks; ++index) {
    const std::size_t first = index * chunk;
    const std::size_t last = std::min(plan.total_bytes, first + chunk);
    const std::size_t slot = index % ring.size();
    if (index >= ring.size()) RESIDENT_CUDA_TRY(cudaEventSynchronize(ring.event(slot)));
    std::byte* staging = ring.buffer(slot);  // holds allocation bytes [first, last)
    workers.for_each_slice(first, last, [&](std::size_t from, std::size_t to) {
      plan.for_each_part(from, to, [&](std::size_t at, const std::byte* source, std::size_t n) {
        if (source != nullptr)
          std::memcpy(staging + (at - first), source, n);
        else
          std::memset(staging + (at - first), 0, n);
      });
    });
    RESIDENT_CUDA_TRY(cudaMemcpyAsync(destination + first, staging, last - first,
                                      cudaMemcpyHostToDevice, stream));
    RESIDENT_CUDA_TRY(cudaEventRecord(ring.event(slot), stream));
    if (last < plan.total_bytes) progress.report(last);
  }
  RESIDENT_CUDA_TRY(cudaStreamSynchronize(stream));
}

/// @brief Pinned sources: the copy engine reads them directly, chunk by chunk so that
/// progress and cancellation keep their granularity; gaps are zeroed on the device.
inline void direct_upload(std::byte* destination, const UploadPlan& plan,
                          const DatasetOptions& options, cudaStream_t stream,
                          const ProgressReporter& progress) {
  for (std::size_t first = 0; first < plan.total_bytes;) {
    const std::size_t last = first + std::min(options.chunk_bytes, plan.total_bytes - first);
    plan.for_each_part(first, last, [&](std::size_t at, const std::byte* source, std::size_t n) {
      if (source != nullptr)
        RESIDENT_CUDA_TRY(
            cudaMemcpyAsync(destination + at, source, n, cudaMemcpyHostToDevice, stream));
      else
        RESIDENT_CUDA_TRY(cudaMemsetAsync(destination + at, 0, n, stream));
    });
    if (last < plan.total_bytes) progress.report(last);
    first = last;
  }
  RESIDENT_CUDA_TRY(cudaStreamSynchronize(stream));
}

/// @brief The upload into `CudaSpace`: direct from pinned sources, staged from pageable ones,
/// with the space's device current throughout (events belong to one device).
inline void upload(const CudaSpace& space, std::byte* destination, const UploadPlan& plan,
                   const DatasetOptions& options, cudaStream_t stream) {
  const ProgressReporter progress(options.on_progress, plan.total_bytes);
  if (plan.total_bytes != 0) {
    const CudaDeviceScope scope(space.device_id());
    if (sources_are_pinned(plan))
      direct_upload(destination, plan, options, stream, progress);
    else
      staged_upload(destination, plan, options, stream, progress);
  }
  progress.report(plan.total_bytes);
}

}  // namespace resident::detail

#endif  // RESIDENT_HAS_CUDA
