// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// What an epoch bound to a consumer stream remembers (`Epoch::on`, `Epoch::batch(k, stream)`):
// the stream, and the batch handed out on a stream whose release is owed. A base of the epoch
// (CRTP), so that the epoch's move assignment, which assigns its bases before its members,
// releases the batch the target held while the target's ring and pass are still its own.

#include <cstddef>
#include <optional>
#include <utility>

namespace resident::detail {

template <class Epoch, class Stream>
class ConsumerHold {
 protected:
  /// The batch handed out on `stream` whose reads the next write of its memory must wait for.
  struct Held {
    std::size_t batch;
    Stream stream;
  };

  ConsumerHold() = default;
  ConsumerHold(const ConsumerHold&) = delete;
  ConsumerHold& operator=(const ConsumerHold&) = delete;
  /// Takes the binding and the owed release: `other` owes none.
  ConsumerHold(ConsumerHold&& other) noexcept
      : bound_(other.bound_), held_(std::exchange(other.held_, std::nullopt)) {}
  /// Releases what this epoch holds first (see the file comment), then takes `other`'s.
  ConsumerHold& operator=(ConsumerHold&& other) noexcept {
    if (this != &other) {
      static_cast<Epoch&>(*this).release_held_quietly();
      bound_ = other.bound_;
      held_ = std::exchange(other.held_, std::nullopt);
    }
    return *this;
  }
  ~ConsumerHold() = default;

  std::optional<Stream> bound_;  // the stream `batch(k)` orders each batch on (`on`)
  std::optional<Held> held_;     // the batch whose release is owed
};

}  // namespace resident::detail
