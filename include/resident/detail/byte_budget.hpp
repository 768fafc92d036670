// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// The byte budget of a space made `with_budget`: shared by every copy of the space, so that
// every dataset living in it draws from the same bytes, whatever memory it is.

#include <atomic>
#include <cstddef>

#include "resident/detail/format_bytes.hpp"
#include "resident/space_traits.hpp"

namespace resident::detail {

/// The byte budget shared by every copy of a `with_budget` space.
class ByteBudget {
 public:
  explicit ByteBudget(std::size_t limit) noexcept : limit_(limit) {}

  [[nodiscard]] std::size_t limit() const noexcept { return limit_; }
  [[nodiscard]] std::size_t used() const noexcept { return used_.load(std::memory_order_acquire); }

  /// Takes `bytes` from the budget atomically; false (and nothing taken) when it would not fit,
  /// so concurrent datasets can never overdraw it. On refusal `used_seen` is the usage that
  /// refused it: the figure a `CapacityError` must report, since re-reading the usage
  /// afterwards may find memory another thread has released since.
  [[nodiscard]] bool try_take(std::size_t bytes, std::size_t& used_seen) noexcept {
    std::size_t in_use = used_.load(std::memory_order_relaxed);
    do {
      if (bytes > limit_ - in_use) {
        used_seen = in_use;
        return false;
      }
    } while (!used_.compare_exchange_weak(in_use, in_use + bytes, std::memory_order_acq_rel,
                                          std::memory_order_relaxed));
    return true;
  }

  void give_back(std::size_t bytes) noexcept { used_.fetch_sub(bytes, std::memory_order_acq_rel); }

 private:
  std::size_t limit_;
  std::atomic<std::size_t> used_{0};
};

/// @brief What a space made `with_budget` reports as its capacity: the budget left, of the budget.
inline CapacityReport budget_capacity(const ByteBudget& budget) {
  const std::size_t used = budget.used();
  return {{budget.limit() - used, budget.limit()},
          "a budget of " + format_bytes(budget.limit()) + " (" + format_bytes(used) + " used)"};
}

}  // namespace resident::detail
