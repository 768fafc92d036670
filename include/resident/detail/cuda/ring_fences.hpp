// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// The gather ring's fences of the CUDA spaces (see `NoRingFences` in gather_ring.hpp for the
// protocol): `CudaRingFences` where kernels gather on a stream, `PinnedRingFences` where the
// host gathers into memory that kernels read. The members that take the space are templates
// over it, so that this header needs no definition of the space, whose header includes it.

#include "resident/config.hpp"

#if RESIDENT_HAS_CUDA
#include <cuda_runtime_api.h>

#include <cstddef>
#include <vector>

#include "resident/detail/cuda/error.hpp"
#include "resident/detail/cuda/resources.hpp"

namespace resident::detail {

class CudaRingFences {
 public:
  /// Events for `slots` slots, made once (a dataset's ring depth never changes) on the
  /// space's device, which every stream that records or waits on them must belong to.
  template <class Space>
  void ensure(const Space& space, std::size_t slots) {
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

/// @brief Host gathers into page-locked memory that kernels read: a gather into a slot first
/// waits, on the host, for the reads of the batch the slot held. Reads on other streams are
/// released explicitly (`freed`); reads on the dataset's stream are covered as they are
/// enqueued: each gather first records `used` for the slot filled before it on the dataset's
/// stream, behind the work enqueued so far (the reads of that batch, asked for before this
/// one), so that a slot's next gather waits for the reads of the batch it held and not for
/// those of the batches since.
class PinnedRingFences {
 public:
  /// Events for `slots` slots on the device current now, as the dataset's stream is.
  template <class Space>
  void ensure(const Space& /*space*/, std::size_t slots) {
    if (freed_.size() >= slots) return;
    std::vector<CudaEvent> freed = create_events(slots), used = create_events(slots);
    freed_.swap(freed);
    used_.swap(used);
    last_filled_ = none;
  }
  void before_fill(std::size_t slot, cudaStream_t gatherer) const {
    if (last_filled_ != none)
      RESIDENT_CUDA_TRY(cudaEventRecord(used_[last_filled_].get(), gatherer));
    last_filled_ = none;  // should a wait below throw, the record above stands alone
    RESIDENT_CUDA_TRY(cudaEventSynchronize(freed_[slot].get()));
    RESIDENT_CUDA_TRY(cudaEventSynchronize(used_[slot].get()));
    last_filled_ = slot;
  }
  void after_fill(std::size_t /*slot*/, cudaStream_t /*gatherer*/) const noexcept {}
  /// Nothing: the host's gather is complete when `batch(k)` returns.
  void wait(std::size_t /*slot*/, cudaStream_t /*consumer*/) const noexcept {}
  void release(std::size_t slot, cudaStream_t consumer) const {
    RESIDENT_CUDA_TRY(cudaEventRecord(freed_[slot].get(), consumer));
  }
  /// Waits on the host for every read released or covered so far.
  void drain() const {
    for (const CudaEvent& event : freed_) RESIDENT_CUDA_TRY(cudaEventSynchronize(event.get()));
    for (const CudaEvent& event : used_) RESIDENT_CUDA_TRY(cudaEventSynchronize(event.get()));
  }

 private:
  static constexpr std::size_t none = static_cast<std::size_t>(-1);
  std::vector<CudaEvent> freed_, used_;
  mutable std::size_t last_filled_ = none;  // the slot of the latest gather
};

}  // namespace resident::detail

#endif  // RESIDENT_HAS_CUDA
