// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// The order between a dataset's gather ring and the streams that read it: per ring slot, an
// event recorded behind the gather into it (`ready`: a consumer's stream waits on it before
// reading the batch) and one recorded on a consumer's stream behind its reads (`freed`: the
// next gather into the slot waits on it). A space names its fences in
// `space_traits::ring_fences`: `NoRingFences` where a gather completes before `batch(k)`
// returns (every member does nothing), `CudaRingFences` where kernels gather on a stream.

#include <cstddef>
#include <vector>

#include "resident/config.hpp"
#include "resident/detail/cuda_resources.hpp"

#if RESIDENT_HAS_CUDA
#include "resident/cuda_space.hpp"
#endif

namespace resident::detail {

template <class Space>
class NoRingFences {
 public:
  using stream_type = typename Space::stream_type;
  void ensure(const Space& /*space*/, std::size_t /*slots*/) noexcept {}
  void before_fill(std::size_t /*slot*/, stream_type /*gatherer*/) const noexcept {}
  void after_fill(std::size_t /*slot*/, stream_type /*gatherer*/) const noexcept {}
  void wait(std::size_t /*slot*/, stream_type /*consumer*/) const noexcept {}
  void release(std::size_t /*slot*/, stream_type /*consumer*/) const noexcept {}
  void drain() const noexcept {}
};

#if RESIDENT_HAS_CUDA
class CudaRingFences {
 public:
  /// Events for `slots` slots, made once (a dataset's ring depth never changes) on the
  /// space's device, which every stream that records or waits on them must belong to.
  void ensure(const CudaSpace& space, std::size_t slots) {
    if (ready_.size() >= slots) return;
    const CudaDeviceScope scope(space.device_id());
    std::vector<CudaEvent> ready = create_events(slots), freed = create_events(slots);
    ready_.swap(ready);
    freed_.swap(freed);
  }
  /// The gather into `slot` on `gatherer` waits for the consumers that released the slot (a
  /// slot never released waits for nothing: an event never recorded is complete).
  void before_fill(std::size_t slot, cudaStream_t gatherer) const {
    RESIDENT_CUDA_TRY(cudaStreamWaitEvent(gatherer, freed_[slot].get(), 0));
  }
  void after_fill(std::size_t slot, cudaStream_t gatherer) const {
    RESIDENT_CUDA_TRY(cudaEventRecord(ready_[slot].get(), gatherer));
  }
  void wait(std::size_t slot, cudaStream_t consumer) const {
    RESIDENT_CUDA_TRY(cudaStreamWaitEvent(consumer, ready_[slot].get(), 0));
  }
  void release(std::size_t slot, cudaStream_t consumer) const {
    RESIDENT_CUDA_TRY(cudaEventRecord(freed_[slot].get(), consumer));
  }
  /// Waits on the host until every gather recorded and every consumer read released so far is
  /// done: the ring's memory may then be released.
  void drain() const {
    for (const CudaEvent& event : ready_) RESIDENT_CUDA_TRY(cudaEventSynchronize(event.get()));
    for (const CudaEvent& event : freed_) RESIDENT_CUDA_TRY(cudaEventSynchronize(event.get()));
  }

 private:
  std::vector<CudaEvent> ready_, freed_;
};
#endif

}  // namespace resident::detail
