// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <memory>
#include <mutex>
#include <utility>

#include "resident/error.hpp"

namespace resident::detail {

/// @brief What an epoch holds to learn, before every use, whether the dataset object it was
/// made from still holds the data it was made from. Copyable; made by `DataToken::lease`.
class DataLease {
 public:
  DataLease() = default;
  DataLease(const DataLease&) = default;
  DataLease& operator=(const DataLease&) = default;
  /// @brief Takes `other`'s lease; `other` (an epoch moved from) says so on its next check.
  DataLease(DataLease&& other) noexcept
      : token_(std::move(other.token_)), state_(std::exchange(other.state_, State::moved_away)) {}
  DataLease& operator=(DataLease&& other) noexcept {
    if (this != &other) {
      token_ = std::move(other.token_);
      state_ = std::exchange(other.state_, State::moved_away);
    }
    return *this;
  }
  ~DataLease() = default;

  /// @brief What expires when the lease stops being valid (but for the lease object's own move):
  /// for what the epoch borrows from the dataset (see `LendingPool`).
  [[nodiscard]] std::weak_ptr<const void> watch() const noexcept {
    if (state_ != State::held) return {};
    return token_;
  }

  /// @brief Whether the dataset is still the one the lease was made from.
  [[nodiscard]] bool valid() const noexcept { return state_ == State::held && !token_.expired(); }

  /// @brief Throws `Error` unless `valid()`: the message says whether the dataset was already
  /// moved from when the epoch was made, changed since, or the epoch itself was moved from.
  void check() const {
    if (state_ == State::made_moved_from)
      throw Error(
          "resident: this epoch was made from a moved-from dataset, which holds no data; make "
          "the epoch from the dataset the data was moved to");
    if (state_ == State::moved_away)
      throw Error("resident: this epoch was moved from; use the epoch it was moved to");
    if (token_.expired())
      throw Error(
          "resident: this epoch's dataset was moved from, assigned, swapped or destroyed since "
          "the epoch was made, so the batches it would serve are not the dataset's any more; "
          "make a new epoch from the dataset that holds the data now");
  }

 private:
  friend class DataToken;
  enum class State { held, made_moved_from, moved_away };
  DataLease(std::weak_ptr<const bool> token, State state) noexcept
      : token_(std::move(token)), state_(state) {}

  std::weak_ptr<const bool> token_;
  State state_ = State::moved_away;
};

/// @brief A dataset object's identity for its epochs. Epochs keep a pointer to the dataset
/// object, not to its data, so whatever changes which data that object holds (a move from it,
/// a move into it, a swap, its destruction) must end their leases: every such change drops the
/// token the leases watch, and the next lease makes a new one. Moves and swaps allocate
/// nothing (so they stay `noexcept`); the token is made by the first lease.
/// @note `lease()` may be called from several threads at once; moves and swaps may not run
/// alongside any other use of the same dataset (as for any object).
class DataToken {
 public:
  DataToken() = default;
  DataToken(const DataToken&) = delete;
  DataToken& operator=(const DataToken&) = delete;

  /// @brief The new object holds a new token; `other` becomes moved from.
  DataToken(DataToken&& other) noexcept : moved_from_(other.moved_from_) { other.vacate(); }

  /// @brief Ends this object's leases and takes `other`'s state; `other` becomes moved from.
  DataToken& operator=(DataToken&& other) noexcept {
    if (this != &other) {
      token_.reset();
      moved_from_ = other.moved_from_;
      other.vacate();
    }
    return *this;
  }

  ~DataToken() = default;

  /// @brief Ends the leases of both objects, whose data trade places.
  void swap(DataToken& other) noexcept {
    token_.reset();
    other.token_.reset();
    std::swap(moved_from_, other.moved_from_);
  }

  /// @brief Whether the object's data was moved away (and nothing moved in since).
  [[nodiscard]] bool moved_from() const noexcept { return moved_from_; }

  /// @brief A lease valid until the object's data changes (never valid when moved from).
  /// @throws std::bad_alloc when the first token cannot be made.
  [[nodiscard]] DataLease lease() {
    if (moved_from_) return DataLease({}, DataLease::State::made_moved_from);
    const std::lock_guard<std::mutex> lock(mutex_);
    if (!token_) token_ = std::make_shared<const bool>(true);
    return DataLease(token_, DataLease::State::held);
  }

 private:
  void vacate() noexcept {
    token_.reset();
    moved_from_ = true;
  }

  std::mutex mutex_;  // only `lease()` makes the token concurrently
  std::shared_ptr<const bool> token_;
  bool moved_from_ = false;
};

}  // namespace resident::detail
