// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// The ring a dataset's gathering epochs write their batches into: one allocation of the
// dataset's space, grown (never shrunk) when an epoch needs wider slots, checked against the
// capacity before it is taken, with the fences that order it against consumer streams. The
// dataset owns it; an epoch claims it (a new generation retires the previous epoch's claim)
// and reaches it through its dataset after every lease check. Its memory is shared: what keeps
// a gathered batch (a tensor over it: `owner()`) keeps the allocation it lies in, after the ring
// has grown into another or the dataset is gone.

#include <cstddef>
#include <memory>
#include <string>
#include <utility>

#include "resident/detail/dataset/dataset_core.hpp"
#include "resident/detail/format_bytes.hpp"
#include "resident/detail/resources.hpp"
#include "resident/space_traits.hpp"

namespace resident::detail {

/// @brief The fences of a space whose gather ring nothing reads after `batch(k)` returns but
/// the host: every member does nothing. Fences order a dataset's gather ring against the
/// streams that read it: per ring slot, `ready` is recorded behind the gather into it (a
/// consumer's stream waits on it before reading the batch) and `freed` on a consumer's stream
/// behind its reads (the next gather into the slot waits on it). A space names its fences in
/// `space_traits::ring_fences` (the CUDA spaces': detail/cuda/ring_fences.hpp).
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

template <class Space>
class GatherRing {
 public:
  using fences_type = typename space_traits<Space>::ring_fences;

  /// @brief Makes the ring at least `bytes` (of `slots` slots) in `space`: a capacity check
  /// first, with the reserve of `config`; a refusal names the ring, what the dataset holds
  /// already (`held`, `held_bytes`: "the dataset itself" uploaded, or "the chunk slots") and
  /// what to lower, and leaves the ring held so far as it was. Then claims it: returns the new
  /// generation, which retires every earlier claim.
  /// @throws CapacityError when the ring does not fit; what the fences' events throw.
  template <class Core>
  std::size_t claim(const Core& core, std::size_t bytes, std::size_t slots, std::size_t held_bytes,
                    const char* held = "the dataset itself") {
    const Space& space = core.space();
    const DatasetConfig& config = core.config();
    if (this->bytes() < bytes) {
      const CapacityVerdict verdict = check_capacity(space, config.reserve_bytes, bytes);
      if (!verdict.fits)
        throw verdict.refusal(
            std::string(held) + " (" + format_bytes(held_bytes) +
                ") is held; a gathering epoch (Shuffle::samples, a conversion, an "
                "augmentation or batch_indices()) needs this ring of " +
                std::to_string(config.ring_depth) +
                " batches besides: lower DatasetOptions::ring_depth or batch_size, lower the "
                "reserve, or use Shuffle::batches, which is zero-copy and needs no ring",
            "the gather ring");
      auto grown = std::make_shared<Allocation<Space>>(space, bytes, core.stream(),
                                                       core.stream_keep_alive());
      // The old ring goes once the reads of it that consumers released are done (its own
      // release waits for the dataset's stream, which gathered into it), and once nothing else
      // shares it.
      fences_.drain();
      memory_.swap(grown);
    }
    fences_.ensure(space, slots);
    return ++generation_.get();
  }

  /// @brief Allocates the ring of `bytes` in `space` now, before any epoch claims it: what a
  /// dataset that planned its ring when it was made holds, so that nothing else in the space
  /// can take those bytes before its first gathering epoch.
  /// @throws CapacityError when the allocation is refused.
  template <class Core>
  void reserve(const Core& core, std::size_t bytes) {
    memory_ = std::make_shared<Allocation<Space>>(core.space(), bytes, core.stream(),
                                                  core.stream_keep_alive());
  }

  /// @brief The generation of the latest claim (0: never claimed).
  [[nodiscard]] std::size_t generation() const noexcept { return generation_.get(); }
  [[nodiscard]] std::byte* data() const noexcept { return memory_ ? memory_->data() : nullptr; }
  [[nodiscard]] std::size_t bytes() const noexcept { return memory_ ? memory_->bytes() : 0; }
  /// @brief A share of the ring's current allocation, pointing at its first byte (null when
  /// none is held): it stays allocated while the share lives.
  [[nodiscard]] std::shared_ptr<const void> owner() const noexcept {
    return memory_ ? std::shared_ptr<const void>(memory_, memory_->data()) : nullptr;
  }
  [[nodiscard]] const fences_type& fences() const noexcept { return fences_; }

 private:
  std::shared_ptr<Allocation<Space>> memory_;  // null until the first claim or reserve
  ResetOnMove<std::size_t> generation_;
  fences_type fences_;
};

}  // namespace resident::detail
