// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// What a dataset lends its epochs: pieces of memory (gather rings, sets of chunk slots), one per
// live epoch that needs one, so that nothing another epoch does overwrites or frees the memory a
// live epoch's views lie in. A piece comes back when its epoch ends (the epoch is destroyed, or
// its dataset object moved from, assigned or swapped, after which the epoch serves nothing) and
// is lent again to the next epoch. The pool keeps at most one idle piece beside those lent: a
// program that makes one epoch after another holds one piece (two while it makes the next epoch
// before the last ends, as `e = ds.epoch(...)` does, where the space has room for two), and a
// program that holds n epochs at once holds n. Lending and giving back may run on several threads
// at once.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "resident/error.hpp"

namespace resident::detail {

/// @brief A pool of `Piece`s (each with `bytes()`), lent one per borrower (see the file comment).
/// Move-only; a pool moved from holds nothing and lends nothing. It owns every piece, lent or
/// idle: when it goes, so do they (what must outlive it, a tensor over a ring, shares the
/// piece's memory, not the piece).
template <class Piece>
class LendingPool {
  struct Entry {
    std::shared_ptr<Piece> piece;
    std::uint64_t loan = 0;              // the loan that holds it (0: idle)
    std::weak_ptr<const void> borrower;  // expires once the borrower can use it no more
    [[nodiscard]] bool lent() const noexcept { return loan != 0 && !borrower.expired(); }
  };
  struct State {
    std::mutex mutex;
    std::vector<Entry> entries;
    std::uint64_t last_loan = 0;
  };

 public:
  /// @brief One piece lent: given back when the loan is destroyed, moved over, or `reset`. The
  /// pool owns the piece: once the pool is gone (its dataset destroyed or assigned over), the
  /// piece is released with it and the loan refers to nothing (its borrower, an epoch of that
  /// dataset, refuses every use first).
  class Loan {
   public:
    Loan() = default;
    Loan(Loan&& other) noexcept
        : state_(std::move(other.state_)),
          piece_(std::exchange(other.piece_, nullptr)),
          id_(std::exchange(other.id_, 0)) {}
    Loan& operator=(Loan&& other) noexcept {
      Loan taken(std::move(other));
      std::swap(state_, taken.state_);
      std::swap(piece_, taken.piece_);
      std::swap(id_, taken.id_);
      return *this;  // `taken`, holding what this loan held, gives it back now
    }
    Loan(const Loan&) = delete;
    Loan& operator=(const Loan&) = delete;
    ~Loan() { reset(); }

    /// @brief Whether a piece was lent (and not given back).
    [[nodiscard]] explicit operator bool() const noexcept { return piece_ != nullptr; }
    [[nodiscard]] Piece& operator*() const noexcept { return *piece_; }
    [[nodiscard]] Piece* operator->() const noexcept { return piece_; }

    /// @brief Gives the piece back: lent again to the next borrower, or released when the pool
    /// holds a larger idle piece already. Nothing when the pool is gone, or took the piece back
    /// already (its borrower could use it no more).
    void reset() noexcept {
      const std::uint64_t id = std::exchange(id_, 0);
      piece_ = nullptr;
      const std::shared_ptr<State> state = state_.lock();
      state_.reset();
      if (id == 0 || !state) return;
      std::shared_ptr<Piece> dropped;  // released after the lock
      const std::lock_guard<std::mutex> lock(state->mutex);
      auto& entries = state->entries;
      const auto mine = std::find_if(entries.begin(), entries.end(),
                                     [&](const Entry& entry) { return entry.loan == id; });
      if (mine == entries.end()) return;
      mine->loan = 0;
      mine->borrower.reset();
      const auto idle = std::find_if(entries.begin(), entries.end(), [&](const Entry& entry) {
        return &entry != &*mine && !entry.lent();
      });
      if (idle == entries.end()) return;
      // One idle piece is kept, the larger.
      const auto smaller = idle->piece->bytes() < mine->piece->bytes() ? idle : mine;
      dropped = std::move(smaller->piece);
      entries.erase(smaller);
    }

   private:
    friend class LendingPool;
    Loan(const std::shared_ptr<State>& state, Piece* piece, std::uint64_t id) noexcept
        : state_(state), piece_(piece), id_(id) {}

    std::weak_ptr<State> state_;
    Piece* piece_ = nullptr;
    std::uint64_t id_ = 0;
  };

  LendingPool() : state_(std::make_shared<State>()) {}
  LendingPool(LendingPool&&) noexcept = default;
  LendingPool& operator=(LendingPool&&) noexcept = default;
  LendingPool(const LendingPool&) = delete;
  LendingPool& operator=(const LendingPool&) = delete;
  ~LendingPool() = default;

  /// @brief Lends `borrower` (watched: once it expires, the piece counts as idle) an idle piece
  /// that `fits(piece)`. Else `check(lent, held, idle)` (told how many pieces are lent now, the
  /// bytes of all held, and of the idle ones, none of which fits) decides whether a new piece
  /// fits once the idle ones are released, and throws if not, leaving the pool as it was; then
  /// the idle pieces are released and `make()` makes the new one, which is lent. The choice and
  /// the making are one step for borrowers on several threads.
  /// @throws what `check` and `make` throw; Error for a pool moved from.
  template <class Fits, class Check, class Make>
  [[nodiscard]] Loan lend(const std::weak_ptr<const void>& borrower, Fits&& fits, Check&& check,
                          Make&& make) {
    if (!state_) throw Error("resident: a moved-from dataset lends no memory to an epoch");
    std::vector<std::shared_ptr<Piece>> dropped;  // released after the lock (declared before it)
    const std::lock_guard<std::mutex> lock(state_->mutex);
    auto& entries = state_->entries;
    std::size_t lent_now = 0;
    std::size_t held = 0;
    std::size_t idle = 0;
    for (Entry& entry : entries) {
      held += entry.piece->bytes();
      if (entry.lent()) {
        ++lent_now;
        continue;
      }
      if (fits(static_cast<const Piece&>(*entry.piece))) return lend_entry(entry, borrower);
      idle += entry.piece->bytes();
    }
    check(lent_now, held, idle);
    for (Entry& entry : entries)
      if (!entry.lent()) dropped.push_back(std::move(entry.piece));
    entries.erase(std::remove_if(entries.begin(), entries.end(),
                                 [](const Entry& entry) { return !entry.piece; }),
                  entries.end());
    dropped.clear();  // their memory is what `check` counted on
    entries.push_back({make(), 0, {}});
    return lend_entry(entries.back(), borrower);
  }

  /// @brief Adds `piece`, idle, for the first borrower (what a dataset plans when it is made).
  void add(std::shared_ptr<Piece> piece) {
    const std::lock_guard<std::mutex> lock(state_->mutex);
    state_->entries.push_back({std::move(piece), 0, {}});
  }

  /// @brief Pieces lent now (0 for a pool moved from). (A mutex that cannot be locked ends the
  /// program, as it does in every `noexcept` caller of these counts.)
  [[nodiscard]] std::size_t lent() const noexcept {
    std::size_t count = 0;
    visit([&](const Piece& /*piece*/, bool lent) { count += lent ? 1 : 0; });
    return count;
  }

  /// @brief Calls `visit(piece, lent)` for every piece held, under the pool's lock.
  template <class Visit>
  void visit(Visit&& visit) const {
    if (!state_) return;
    const std::lock_guard<std::mutex> lock(state_->mutex);
    for (const Entry& entry : state_->entries)
      visit(static_cast<const Piece&>(*entry.piece), entry.lent());
  }

  /// @brief Bytes of every piece held, lent or idle (0 for a pool moved from).
  [[nodiscard]] std::size_t bytes() const noexcept {
    std::size_t sum = 0;
    visit([&](const Piece& piece, bool /*lent*/) { sum += piece.bytes(); });
    return sum;
  }

 private:
  Loan lend_entry(Entry& entry, const std::weak_ptr<const void>& borrower) {
    entry.loan = ++state_->last_loan;
    entry.borrower = borrower;
    return Loan(state_, entry.piece.get(), entry.loan);
  }

  std::shared_ptr<State> state_;
};

}  // namespace resident::detail
