// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// What a dataset lends its epochs: pieces of memory (gather rings, sets of chunk slots), one per
// live epoch that needs one, so that nothing another epoch does overwrites or frees the memory a
// live epoch's views lie in. A piece comes back when its epoch ends and is lent again to the next
// epoch. The pool keeps at most one idle piece beside those lent: a program that makes one epoch
// after another holds one piece (two while it makes the next epoch before the last ends, as
// `e = ds.epoch(...)` does, where the space has room for two), and a program that holds n epochs
// at once holds n. Lending and giving back may run on several threads at once.

#include <algorithm>
#include <cstddef>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "resident/error.hpp"

namespace resident::detail {

/// @brief A pool of `Piece`s (each with `bytes()`), lent one per borrower (see the file comment).
/// Move-only; a pool moved from holds nothing and lends nothing. Its loans keep what they lent
/// alive after the pool is gone.
template <class Piece>
class LendingPool {
  struct Entry {
    std::shared_ptr<Piece> piece;
    bool lent = false;
  };
  struct State {
    std::mutex mutex;
    std::vector<Entry> entries;
  };

 public:
  /// @brief One piece lent: given back when the loan is destroyed, moved over, or `reset`.
  class Loan {
   public:
    Loan() = default;
    Loan(Loan&& other) noexcept
        : state_(std::move(other.state_)), piece_(std::move(other.piece_)) {}
    Loan& operator=(Loan&& other) noexcept {
      Loan taken(std::move(other));
      std::swap(state_, taken.state_);
      std::swap(piece_, taken.piece_);
      return *this;  // `taken`, holding what this loan held, gives it back now
    }
    Loan(const Loan&) = delete;
    Loan& operator=(const Loan&) = delete;
    ~Loan() { reset(); }

    /// @brief Whether a piece is lent.
    [[nodiscard]] explicit operator bool() const noexcept { return piece_ != nullptr; }
    [[nodiscard]] Piece& operator*() const noexcept { return *piece_; }
    [[nodiscard]] Piece* operator->() const noexcept { return piece_.get(); }

    /// @brief Gives the piece back: lent again to the next borrower, or released when the pool
    /// holds a larger idle piece already (or is gone).
    void reset() noexcept {
      if (!piece_) return;
      std::shared_ptr<Piece> dropped;  // released after the lock
      {
        const std::lock_guard<std::mutex> lock(state_->mutex);
        auto& entries = state_->entries;
        const auto mine = std::find_if(entries.begin(), entries.end(),
                                       [&](const Entry& entry) { return entry.piece == piece_; });
        const auto idle = std::find_if(entries.begin(), entries.end(),
                                       [](const Entry& entry) { return !entry.lent; });
        if (idle == entries.end()) {
          mine->lent = false;
        } else if (idle->piece->bytes() < piece_->bytes()) {
          dropped = std::move(idle->piece);
          mine->lent = false;
          entries.erase(idle);
        } else {
          dropped = std::move(mine->piece);
          entries.erase(mine);
        }
      }
      piece_.reset();
      state_.reset();
    }

   private:
    friend class LendingPool;
    Loan(std::shared_ptr<State> state, std::shared_ptr<Piece> piece) noexcept
        : state_(std::move(state)), piece_(std::move(piece)) {}

    std::shared_ptr<State> state_;
    std::shared_ptr<Piece> piece_;
  };

  LendingPool() : state_(std::make_shared<State>()) {}
  LendingPool(LendingPool&&) noexcept = default;
  LendingPool& operator=(LendingPool&&) noexcept = default;
  LendingPool(const LendingPool&) = delete;
  LendingPool& operator=(const LendingPool&) = delete;
  ~LendingPool() = default;

  /// @brief Lends an idle piece that `fits(piece)`; else `make(lent, held)` (told how many
  /// pieces are lent now, and the bytes of all held) makes one, which is lent, and the idle pieces that did not fit are released. A
  /// `make` that throws leaves the pool as it was. The choice and the making are one step for
  /// borrowers on several threads.
  /// @throws what `make` throws; Error for a pool moved from.
  template <class Fits, class Make>
  [[nodiscard]] Loan lend(Fits&& fits, Make&& make) {
    if (!state_) throw Error("resident: a moved-from dataset lends no memory to an epoch");
    std::vector<std::shared_ptr<Piece>> dropped;  // released after the lock (declared before it)
    const std::lock_guard<std::mutex> lock(state_->mutex);
    auto& entries = state_->entries;
    for (Entry& entry : entries) {
      if (entry.lent || !fits(static_cast<const Piece&>(*entry.piece))) continue;
      entry.lent = true;
      return Loan(state_, entry.piece);
    }
    std::size_t held = 0;
    for (const Entry& entry : entries) held += entry.piece->bytes();
    std::shared_ptr<Piece> made = make(lent_locked(), held);
    for (Entry& entry : entries)
      if (!entry.lent) dropped.push_back(std::move(entry.piece));
    entries.erase(std::remove_if(entries.begin(), entries.end(),
                                 [](const Entry& entry) { return !entry.piece; }),
                  entries.end());
    entries.push_back({made, true});
    return Loan(state_, std::move(made));
  }

  /// @brief Adds `piece`, idle, for the first borrower (what a dataset plans when it is made).
  void add(std::shared_ptr<Piece> piece) {
    const std::lock_guard<std::mutex> lock(state_->mutex);
    state_->entries.push_back({std::move(piece), false});
  }

  /// @brief Pieces lent now (0 for a pool moved from). (A mutex that cannot be locked ends the
  /// program, as it does in every `noexcept` caller of these counts.)
  [[nodiscard]] std::size_t lent() const noexcept {
    if (!state_) return 0;
    const std::lock_guard<std::mutex> lock(state_->mutex);
    return lent_locked();
  }

  /// @brief Calls `visit(piece, lent)` for every piece held, under the pool's lock.
  template <class Visit>
  void visit(Visit&& visit) const {
    if (!state_) return;
    const std::lock_guard<std::mutex> lock(state_->mutex);
    for (const Entry& entry : state_->entries)
      visit(static_cast<const Piece&>(*entry.piece), entry.lent);
  }

  /// @brief Bytes of every piece held, lent or idle (0 for a pool moved from).
  [[nodiscard]] std::size_t bytes() const noexcept {
    std::size_t sum = 0;
    visit([&](const Piece& piece, bool /*lent*/) { sum += piece.bytes(); });
    return sum;
  }

 private:
  [[nodiscard]] std::size_t lent_locked() const noexcept {
    return static_cast<std::size_t>(
        std::count_if(state_->entries.begin(), state_->entries.end(),
                      [](const Entry& entry) { return entry.lent; }));
  }

  std::shared_ptr<State> state_;
};

}  // namespace resident::detail
