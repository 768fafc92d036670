// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// Test support over the simulated runtime: gates that hold back work enqueued on a stream
// until the test opens them, so that a test decides which of two unordered operations runs
// first, and a missing order fails in every run rather than by chance.

#include <cstddef>
#include <future>
#include <mutex>
#include <vector>

namespace resident::testing {

/// @brief `count` gates, each closed until `open(k)`; any still closed open when the gates go,
/// so that no stream waits on them forever (a failed test's streams still drain). Make them
/// after the datasets whose streams wait on them, so that they open first. Thread-safe.
class Gates {
 public:
  explicit Gates(std::size_t count) : gates_(count) {
    for (auto& gate : gates_) opened_.push_back(gate.get_future().share());
  }
  Gates(const Gates&) = delete;
  Gates& operator=(const Gates&) = delete;
  ~Gates() { open_all(); }
  /// @brief What work on a stream waits on (`opened(k).wait()`) before it goes on.
  [[nodiscard]] std::shared_future<void> opened(std::size_t k) const { return opened_[k]; }
  /// @brief Opens gate `k` (again: nothing); from any thread.
  void open(std::size_t k) {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (!open_[k]) gates_[k].set_value();
    open_[k] = true;
  }
  void open_all() {
    for (std::size_t k = 0; k < gates_.size(); ++k) open(k);
  }

 private:
  std::mutex mutex_;  // threads open gates while others do (open_'s bits share words)
  std::vector<std::promise<void>> gates_;
  std::vector<std::shared_future<void>> opened_;
  std::vector<bool> open_ = std::vector<bool>(gates_.size(), false);
};

}  // namespace resident::testing
