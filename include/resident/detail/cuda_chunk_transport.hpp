// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "resident/config.hpp"

#if RESIDENT_HAS_CUDA
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <iterator>
#include <optional>
#include <vector>

#include "resident/cuda_space.hpp"
#include "resident/detail/checked_math.hpp"
#include "resident/detail/copy_workers.hpp"
#include "resident/detail/cuda_resources.hpp"
#include "resident/detail/cuda_try.hpp"
#include "resident/detail/cuda_upload.hpp"
#include "resident/detail/row_source.hpp"

namespace resident::detail {

/// @brief How a streaming dataset loads chunks into `CudaSpace`: copies on a copy stream of
/// its own, ordered against the reader's stream by events and never by a host wait, so that
/// the copy of chunk k+1 overlaps the reader's kernels on chunk k.
///
/// Per slot, `loaded` is recorded on the copy stream behind the chunk's copies (the reader's
/// stream waits on it before its first batch of the chunk), and `freed` on the reader's stream
/// when the reader gives the chunk up (the copy stream waits on it before overwriting the
/// slot). Pageable sources go through two page-locked staging buffers of one slot each, filled
/// by host threads while the other drains; page-locked sources are copied directly.
class CudaChunkTransport {
 public:
  CudaChunkTransport(const CudaSpace& space, cudaStream_t reader, std::size_t slots,
                     std::size_t slot_bytes, bool pinned_sources, unsigned threads)
      : device_(space.device_id()), reader_(reader), pinned_sources_(pinned_sources) {
    const CudaDeviceScope scope(device_);  // the stream and events belong to this device
    copy_stream_ = create_stream();
    loaded_ = create_events(slots);
    freed_ = create_events(slots);
    joined_ = create_events(1);
    if (!pinned_sources_ && slot_bytes != 0) {
      staging_ = allocate_pinned(checked_mul(staging_buffers, slot_bytes, "staging byte size"));
      staged_ = create_events(staging_buffers);
      workers_.emplace(threads);
    }
    slot_bytes_ = slot_bytes;
  }
  CudaChunkTransport(const CudaChunkTransport&) = delete;
  CudaChunkTransport& operator=(const CudaChunkTransport&) = delete;
  /// Waits for copies still in flight (their source is the staging memory) before the members
  /// release everything; never throws.
  ~CudaChunkTransport() {
    if (copy_stream_) (void)cudaStreamSynchronize(copy_stream_.get());
  }

  /// Producer thread: enqueues the copies of one chunk into `slot` (slot `slot_index`).
  void load(std::size_t slot_index, std::byte* slot, const std::vector<ChunkCopy>& copies) {
    const CudaDeviceScope scope(device_);
    if (pinned_sources_) {
      RESIDENT_CUDA_TRY(cudaStreamWaitEvent(copy_stream_.get(), freed_[slot_index].get(), 0));
      for (const ChunkCopy& copy : copies)
        RESIDENT_CUDA_TRY(cudaMemcpyAsync(
            slot + copy.offset, copy.source->memory() + copy.first_row * copy.source->row_bytes(),
            copy.bytes(), cudaMemcpyHostToDevice, copy_stream_.get()));
    } else {
      const std::size_t buffer = loads_++ % staging_buffers;
      std::byte* staging = staging_.get() + buffer * slot_bytes_;
      RESIDENT_CUDA_TRY(cudaEventSynchronize(staged_[buffer].get()));  // its last copy has drained
      for (const ChunkCopy& copy : copies) {
        const std::size_t row_bytes = copy.source->row_bytes();
        workers_->for_each_slice(0, copy.rows, [&](std::size_t from, std::size_t to) {
          copy.source->read(copy.first_row + from, to - from,
                            staging + copy.offset + from * row_bytes);
        });
      }
      RESIDENT_CUDA_TRY(cudaStreamWaitEvent(copy_stream_.get(), freed_[slot_index].get(), 0));
      for (const ChunkCopy& copy : copies)
        RESIDENT_CUDA_TRY(cudaMemcpyAsync(slot + copy.offset, staging + copy.offset, copy.bytes(),
                                          cudaMemcpyHostToDevice, copy_stream_.get()));
      RESIDENT_CUDA_TRY(cudaEventRecord(staged_[buffer].get(), copy_stream_.get()));
    }
    RESIDENT_CUDA_TRY(cudaEventRecord(loaded_[slot_index].get(), copy_stream_.get()));
  }

  /// Reader: work enqueued on the reader's stream from now on sees the slot's chunk.
  void acquire(std::size_t slot_index) const {
    const CudaDeviceScope scope(device_);
    RESIDENT_CUDA_TRY(cudaStreamWaitEvent(reader_, loaded_[slot_index].get(), 0));
  }
  /// Reader: the slot may be overwritten once the work enqueued so far on the reader's stream
  /// is done.
  void release(std::size_t slot_index) const {
    const CudaDeviceScope scope(device_);
    RESIDENT_CUDA_TRY(cudaEventRecord(freed_[slot_index].get(), reader_));
  }
  /// Another stream: work enqueued on `consumer` from now on sees the slot's chunk.
  void wait(std::size_t slot_index, cudaStream_t consumer) const {
    const CudaDeviceScope scope(device_);
    RESIDENT_CUDA_TRY(cudaStreamWaitEvent(consumer, loaded_[slot_index].get(), 0));
  }
  /// Another stream: the reader's stream waits for the work enqueued on `consumer` so far, so
  /// the slot's `freed`, recorded there when the reader gives the chunk up, covers it too (one
  /// event serves every join: a wait captures the record made just before it).
  void join(cudaStream_t consumer) const {
    const CudaDeviceScope scope(device_);
    RESIDENT_CUDA_TRY(cudaEventRecord(joined_[0].get(), consumer));
    RESIDENT_CUDA_TRY(cudaStreamWaitEvent(reader_, joined_[0].get(), 0));
  }
  /// Waits for every copy enqueued so far.
  void drain() const {
    const CudaDeviceScope scope(device_);
    RESIDENT_CUDA_TRY(cudaStreamSynchronize(copy_stream_.get()));
  }

 private:
  static constexpr std::size_t staging_buffers = 2;  // one fills while the other drains

  int device_;
  cudaStream_t reader_;
  bool pinned_sources_;
  std::size_t slot_bytes_ = 0;
  CudaStream copy_stream_;
  std::vector<CudaEvent> loaded_, freed_, joined_, staged_;
  PinnedBuffer staging_;
  std::size_t loads_ = 0;
  std::optional<CopyWorkers> workers_;
};

/// @brief Whether every source is page-locked host memory, so chunks can be copied straight
/// from it (files and pageable memory are staged).
template <class Sources>
bool sources_are_pinned(const Sources& sources) {
  return std::all_of(std::begin(sources), std::end(sources), [](const RowSource& source) {
    return source.memory() != nullptr &&
           range_is_pinned(source.memory(), source.rows() * source.row_bytes());
  });
}

}  // namespace resident::detail

#endif  // RESIDENT_HAS_CUDA
