// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "resident/config.hpp"

#if RESIDENT_HAS_CUDA
#include <cuda_runtime_api.h>

#include <cstddef>
#include <vector>

#include "resident/detail/cuda/error.hpp"
#include "resident/detail/cuda/resources.hpp"
#include "resident/detail/stream/chunk_copy.hpp"
#include "resident/detail/stream/chunk_pipeline.hpp"
#include "resident/detail/stream/host_chunk_transport.hpp"

namespace resident::detail {

/// @brief `space_traits<CudaHostPinnedSpace>::chunk_transport`: the host's loads (the producer
/// thread writes each slot, as on `HostSpace`) into memory that kernels read. A load first
/// waits, on the host, for the reads of the chunk the slot held: per slot, `freed` is recorded
/// on the reader's stream when the reader gives the chunk up, behind the work enqueued on it so
/// far; work on other streams joins the reader's stream first (`reader_waits_for`). A chunk is
/// complete when its load returns, so a reader waits for nothing on the device (`acquire`, `wait`).
/// `Space` is `CudaHostPinnedSpace`: a parameter, so that this header needs no definition of
/// it, whose header includes this one.
template <class Space>
class PinnedChunkTransport {
 public:
  using stream_type = cudaStream_t;

  template <class Sources>
  [[nodiscard]] static constexpr bool sources_pinned(const Space& /*space*/,
                                                     const Sources& /*sources*/) noexcept {
    return false;
  }

  /// Events on the device current now, as the reader's stream is.
  PinnedChunkTransport(const Space& space, cudaStream_t reader, std::size_t slots,
                       std::size_t slot_bytes, bool pinned_sources, bool gathers, unsigned threads)
      : host_(space, reader, slots, slot_bytes, pinned_sources, gathers, threads),
        reader_(reader),
        freed_(create_events(slots)),
        consumer_done_(create_event()) {}

  /// Producer thread: waits for the reads of the slot's last chunk, then writes `copies`.
  void load(std::size_t slot_index, std::byte* slot, const std::vector<ChunkCopy>& copies,
            SharedPieces& pieces) {
    RESIDENT_CUDA_TRY(cudaEventSynchronize(freed_[slot_index].get()));
    host_.load(slot_index, slot, copies, pieces);
  }
  void acquire(std::size_t /*slot_index*/) const noexcept {}  // loaded on the host already
  /// Reader: the slot may be written again once the work enqueued on the reader's stream so
  /// far is done.
  void release(std::size_t slot_index) const {
    RESIDENT_CUDA_TRY(cudaEventRecord(freed_[slot_index].get(), reader_));
  }
  void wait(std::size_t /*slot_index*/, cudaStream_t /*consumer*/) const noexcept {}
  /// Another stream: the reader's stream waits for the work enqueued on `consumer` so far, so
  /// that the slot's `freed` covers it too.
  void reader_waits_for(cudaStream_t consumer) const {
    RESIDENT_CUDA_TRY(cudaEventRecord(consumer_done_.get(), consumer));
    RESIDENT_CUDA_TRY(cudaStreamWaitEvent(reader_, consumer_done_.get(), 0));
  }
  /// Nothing in flight: the loads are the host's.
  void drain() const noexcept {}

 private:
  HostChunkTransport<Space> host_;
  cudaStream_t reader_;
  std::vector<CudaEvent> freed_;
  CudaEvent consumer_done_;
};

}  // namespace resident::detail

#endif  // RESIDENT_HAS_CUDA
