// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// The rings a dataset's gathering epochs write their batches into: each an allocation of the
// dataset's space, checked against the capacity before it is made, with the fences that order it
// against consumer streams. The dataset lends one to each live gathering epoch, which holds it
// until it ends (see `LendingPool`). A ring's memory is shared: what keeps a gathered batch (a
// tensor over it: `owner()`) keeps the allocation it lies in after the ring is released.

#include <algorithm>
#include <cstddef>
#include <memory>
#include <string>
#include <utility>

#include "resident/detail/dataset/dataset_core.hpp"
#include "resident/detail/format_bytes.hpp"
#include "resident/detail/lending_pool.hpp"
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

/// @brief One gather ring: an allocation of the dataset's space that holds an epoch's ring
/// slots, and the fences that order each slot against the streams that read it. Its memory is
/// shared: what keeps a gathered batch (a tensor over it: `owner()`) keeps the allocation after the
/// ring is released.
template <class Space>
class GatherRing {
 public:
  using fences_type = typename space_traits<Space>::ring_fences;

  /// @brief Allocates `bytes` in the space of `core`, ordered on its stream.
  /// @throws CapacityError when the allocation is refused.
  template <class Core>
  GatherRing(const Core& core, std::size_t bytes)
      : memory_(std::make_shared<Allocation<Space>>(core.space(), bytes, core.stream(),
                                                    core.stream_keep_alive())) {}
  GatherRing(const GatherRing&) = delete;
  GatherRing& operator=(const GatherRing&) = delete;
  GatherRing(GatherRing&&) = delete;
  GatherRing& operator=(GatherRing&&) = delete;
  /// The memory goes once the reads of it that consumers released are done (its own release
  /// waits for the dataset's stream, which gathered into it), and once nothing else shares it.
  ~GatherRing() {
    try {
      fences_.drain();
    } catch (const Error&) {  // a failed device has nothing left to wait for
    }
  }

  [[nodiscard]] std::byte* data() const noexcept { return memory_->data(); }
  [[nodiscard]] std::size_t bytes() const noexcept { return memory_->bytes(); }
  /// @brief A share of the ring's allocation, pointing at its first byte: it stays allocated
  /// while the share lives.
  [[nodiscard]] std::shared_ptr<const void> owner() const noexcept {
    return std::shared_ptr<const void>(memory_, memory_->data());
  }
  [[nodiscard]] const fences_type& fences() const noexcept { return fences_; }
  /// @brief Fences for `slots` slots, made for the epoch that holds the ring (its depth, which
  /// only its layout knows: at most the batches there are).
  /// @throws what the fences' events throw.
  void ensure(const Space& space, std::size_t slots) { fences_.ensure(space, slots); }

 private:
  std::shared_ptr<Allocation<Space>> memory_;
  fences_type fences_;
};

/// @brief The gather rings a dataset lends its gathering epochs, one per live epoch (see
/// `LendingPool`): what a newer epoch gathers never lands in the ring of an older one that
/// lives, so the older one's views keep their values until that epoch itself moves past them or
/// ends.
template <class Space>
class GatherRings {
 public:
  using Loan = typename LendingPool<GatherRing<Space>>::Loan;

  /// @brief Lends `borrower` (see `LendingPool::lend`) a ring of at least `bytes` in `slots`
  /// slots: an idle one, or one allocated after a capacity check with the reserve of `core`'s
  /// config, counting the idle rings too narrow for it as free (they are released first). A
  /// refusal names the ring, what the dataset holds already (`held`, `held_bytes`: "the dataset
  /// itself" uploaded, "the chunk slots", "the token stream"), the rings its live epochs hold,
  /// and what to do; it leaves the rings as they were.
  /// @throws CapacityError when the ring does not fit; what the fences' events throw.
  template <class Core>
  [[nodiscard]] Loan lend(const std::weak_ptr<const void>& borrower, const Core& core,
                          std::size_t bytes, std::size_t slots, std::size_t held_bytes,
                          const char* held) {
    std::string refused_advice;  // what the capacity check would have said, for a refusal after it
    Loan loan = pool_.lend(
        borrower, [&](const GatherRing<Space>& ring) { return ring.bytes() >= bytes; },
        [&](std::size_t lent, std::size_t rings, std::size_t idle) {
          const CapacityVerdict verdict = check_capacity(core.space(), core.config().reserve_bytes,
                                                         bytes - std::min(bytes, idle));
          refused_advice = advice(core.config(), lent, rings, held_bytes, held);
          if (verdict.fits) return;
          CapacityVerdict shown = verdict;
          shown.needed_bytes = bytes;
          shown.free_bytes += idle;
          throw shown.refusal(refused_advice, "the gather ring");
        },
        [&] {
          try {
            return std::make_shared<GatherRing<Space>>(core, bytes);
          } catch (const CapacityError& refused) {
            // Past the check: the space's allocator itself refused (a memory resource's limit,
            // which its capacity does not show). The refusal names the ring all the same.
            throw CapacityError(
                refused.space_name(), bytes, refused.free_bytes(), refused.total_bytes(),
                refused.reserve_bytes(),
                "the space's allocator refused it past its capacity check, as a memory "
                "resource's limit does (" +
                    std::string(refused.what()) + "); " + refused_advice,
                "the gather ring");
          }
        });
    loan->ensure(core.space(), slots);  // lent to this borrower alone: no other thread uses it
    return loan;
  }

  /// @brief Allocates a ring of `bytes` now, idle until an epoch borrows it:
  /// what a dataset that planned its ring when it was made holds, so that nothing else in the
  /// space can take those bytes before its first gathering epoch.
  /// @throws CapacityError when the allocation is refused.
  template <class Core>
  void reserve(const Core& core, std::size_t bytes) {
    pool_.add(std::make_shared<GatherRing<Space>>(core, bytes));
  }

  /// @brief Bytes of every ring held: lent to live epochs, or idle for the next.
  [[nodiscard]] std::size_t bytes() const noexcept { return pool_.bytes(); }
  /// @brief Rings lent to live epochs now.
  [[nodiscard]] std::size_t lent() const noexcept { return pool_.lent(); }
  /// @brief A share of the ring holding the `bytes` at `first`, or null when none does.
  [[nodiscard]] std::shared_ptr<const void> owner_of(const void* first,
                                                     std::size_t bytes) const noexcept {
    std::shared_ptr<const void> found;
    pool_.visit([&](const GatherRing<Space>& ring, bool /*lent*/) {
      const std::byte* begin = ring.data();
      const auto* at = static_cast<const std::byte*>(first);
      if (at >= begin && at + bytes <= begin + ring.bytes()) found = ring.owner();
    });
    return found;
  }

 private:
  static std::string advice(const DatasetConfig& config, std::size_t lent, std::size_t rings,
                            std::size_t held_bytes, const char* held) {
    std::string advice = std::string(held) + " (" + format_bytes(held_bytes) + ") held already";
    if (lent != 0)
      advice += ", and " + std::to_string(lent) + " live epoch" + (lent == 1 ? "" : "s") +
                " of this dataset hold" + (lent == 1 ? "s" : "") + " a gather ring each (" +
                format_bytes(rings) +
                " in all): a view stays valid while its epoch lives, so a newer epoch never "
                "gathers into an older one's ring; end the older epochs first (destroy them, or "
                "let them go out of scope), or";
    return advice + (lent != 0 ? " " : "; ") +
           "a gathering epoch (Shuffle::samples, a conversion, an augmentation, a padded token "
           "batch or batch_indices()) needs this ring of " +
           std::to_string(config.ring_depth) +
           " batches besides: lower DatasetOptions::ring_depth or batch_size, lower the "
           "reserve, or use Shuffle::batches, which is zero-copy and needs no ring";
  }

  LendingPool<GatherRing<Space>> pool_;
};

}  // namespace resident::detail
