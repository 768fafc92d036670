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

#include "resident/detail/checked_math.hpp"
#include "resident/detail/copy_workers.hpp"
#include "resident/detail/cuda/error.hpp"
#include "resident/detail/cuda/resources.hpp"
#include "resident/detail/cuda/upload.hpp"
#include "resident/detail/stream/chunk_copy.hpp"
#include "resident/detail/stream/chunk_pipeline.hpp"
#include "resident/detail/stream/row_source.hpp"

namespace resident::detail {

/// @brief `space_traits<CudaSpace>::chunk_transport`: how a streaming dataset loads chunks
/// into `CudaSpace`: copies on a copy stream of its own, ordered against the reader's stream
/// by events and never by a host wait, so that the copy of chunk k+1 overlaps the reader's
/// kernels on chunk k.
///
/// Per slot, `loaded` is recorded on the copy stream behind the chunk's copies (the reader's
/// stream waits on it before its first batch of the chunk), and `freed` on the reader's stream
/// when the reader gives the chunk up (the copy stream waits on it before overwriting the
/// slot). Pageable sources go through two staging buffers of one slot each, filled
/// by host threads while the other drains; page-locked sources are copied directly, but for
/// rows gathered one by one (a whole-epoch sample shuffle), which are staged too.
class CudaChunkTransport {
 public:
  /// Whether the copy engine can read every source directly (page-locked memory), asked with
  /// the space's device current.
  template <class Space, class Sources>
  [[nodiscard]] static bool sources_pinned(const Space& space, const Sources& sources) {
    const CudaDeviceScope scope(space.device_id());
    return std::all_of(std::begin(sources), std::end(sources), [](const RowSource& source) {
      return source.memory() != nullptr &&
             range_is_pinned(source.memory(), source.rows() * source.row_bytes());
    });
  }

  /// A template over the space (any with `device_id()`), so that this header needs no
  /// definition of `CudaSpace`, whose header includes it.
  template <class Space>
  CudaChunkTransport(const Space& space, cudaStream_t reader, std::size_t slots,
                     std::size_t slot_bytes, bool pinned_sources, bool gathers, unsigned threads)
      : device_(space.device_id()), reader_(reader), pinned_sources_(pinned_sources) {
    const CudaDeviceScope scope(device_);  // the stream and events belong to this device
    copy_stream_ = create_stream();
    loaded_ = create_events(slots);
    freed_ = create_events(slots);
    consumer_done_ = create_event();
    if ((!pinned_sources || gathers) && slot_bytes != 0) {
      staging_.emplace(staging_buffers, slot_bytes, copy_stream_.get());
      workers_.emplace(threads);
    }
  }
  CudaChunkTransport(const CudaChunkTransport&) = delete;
  CudaChunkTransport& operator=(const CudaChunkTransport&) = delete;
  /// Waits for copies still in flight (their source is the staging memory) before the members
  /// release everything; never throws.
  ~CudaChunkTransport() {
    if (copy_stream_) (void)cudaStreamSynchronize(copy_stream_.get());
  }

  /// Producer thread: enqueues the copies of one chunk into `slot` (slot `slot_index`). The
  /// staging copies run on the copy team; a waiting reader has a stream to order, not copies
  /// to share (`pieces` unused).
  void load(std::size_t slot_index, std::byte* slot, const std::vector<ChunkCopy>& copies,
            SharedPieces& /*pieces*/) {
    const CudaDeviceScope scope(device_);
    const bool direct =
        pinned_sources_ && std::none_of(copies.begin(), copies.end(), [](const ChunkCopy& copy) {
          return copy.gathered != nullptr;
        });
    if (direct || !staging_) {
      // No staging buffers: slots of no bytes (rows of zero width), with nothing to copy, but
      // still ordered after the reads of what they held.
      RESIDENT_CUDA_TRY(cudaStreamWaitEvent(copy_stream_.get(), freed_[slot_index].get(), 0));
      if (direct)
        for (const ChunkCopy& copy : copies)
          RESIDENT_CUDA_TRY(cudaMemcpyAsync(
              slot + copy.offset, copy.source->memory() + copy.first_row * copy.source->row_bytes(),
              copy.bytes(), cudaMemcpyHostToDevice, copy_stream_.get()));
    } else {
      const std::size_t buffer = loads_++ % staging_buffers;
      std::byte* staging = staging_->buffer(buffer);
      staging_->wait_until_free(buffer);  // its last copy has drained
      for (const ChunkCopy& copy : copies) {
        const std::size_t row_bytes = copy.source->row_bytes();
        workers_->for_each_block(0, copy.rows, rows_per_block(upload_copy_block_bytes, row_bytes),
                                 [&](std::size_t from, std::size_t to) {
                                   copy.read(from, to - from,
                                             staging + copy.offset + from * row_bytes);
                                 });
      }
      RESIDENT_CUDA_TRY(cudaStreamWaitEvent(copy_stream_.get(), freed_[slot_index].get(), 0));
      for (const ChunkCopy& copy : copies)
        staging_->copy_out(buffer, copy.offset, slot + copy.offset, copy.bytes());
      staging_->record(buffer);
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
  /// event serves every such wait: a wait captures the record made just before it).
  void reader_waits_for(cudaStream_t consumer) const {
    const CudaDeviceScope scope(device_);
    RESIDENT_CUDA_TRY(cudaEventRecord(consumer_done_.get(), consumer));
    RESIDENT_CUDA_TRY(cudaStreamWaitEvent(reader_, consumer_done_.get(), 0));
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
  CudaStream copy_stream_;
  std::vector<CudaEvent> loaded_, freed_;
  CudaEvent consumer_done_;
  std::optional<CudaStagingBuffers> staging_;  // pageable sources only; drained by the destructor
  std::size_t loads_ = 0;
  std::optional<CopyWorkers> workers_;
};

}  // namespace resident::detail

#endif  // RESIDENT_HAS_CUDA
