// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// @brief `EpochState`: where a training run stands in an epoch, in 64 bytes, so that a run
/// stopped at any batch resumes where it stopped, on the same or another number of ranks
/// (docs/resume.md).

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "resident/dataset_options.hpp"
#include "resident/epoch_options.hpp"
#include "resident/error.hpp"
#include "resident/permutation.hpp"
#include "resident/shard.hpp"

namespace resident {

namespace detail {
struct EpochStateAccess;
}  // namespace detail

/// @brief Where a training run stands in one epoch: the epoch (seed, number, shuffle), the
/// rows of its global order served so far, what that order depends on, and a fingerprint of
/// the dataset. An epoch says it after any batch (`Epoch::state()`); the dataset makes the
/// rest of the epoch from it (`ds.epoch(options, state)`), on any world size the order can be
/// dealt to. A small value: copy it, compare it, keep it in a checkpoint as its 64 bytes
/// (`to_bytes`, `from_bytes`).
///
/// The position counts rows (token windows) of the epoch's global order, every rank's
/// together, as the batches handed to the training loop took them: it is the same on every
/// rank of a job after the same step.
class EpochState {
 public:
  /// @brief Bytes of `to_bytes()`.
  static constexpr std::size_t size_bytes = 64;
  /// @brief The version `to_bytes()` writes and `from_bytes` reads.
  static constexpr std::uint16_t format_version = 1;
  /// @brief The bytes of a state.
  using bytes_type = std::array<std::uint8_t, size_bytes>;

  /// @brief The beginning of epoch 0 of no dataset: resumes nothing (every dataset refuses it).
  EpochState() = default;

  /// @brief The epoch's options: seed, epoch number and shuffle.
  [[nodiscard]] EpochOptions options() const noexcept { return options_; }
  /// @brief Rows of the epoch's global order served before the position (every rank's).
  [[nodiscard]] std::uint64_t position() const noexcept { return position_; }
  /// @brief Whether every batch of the epoch was served: the run goes on with the next epoch.
  [[nodiscard]] bool finished() const noexcept { return finished_; }
  /// @brief Rows of the dataset (token windows of a token dataset), every rank's.
  [[nodiscard]] std::uint64_t rows() const noexcept { return rows_; }
  /// @brief Rows of one step when the epoch began (`world_size * batch_size`): the blocks a
  /// `Shuffle::batches` order permutes.
  [[nodiscard]] std::uint64_t global_batch() const noexcept { return global_batch_; }
  /// @brief The parts of a partitioned dataset (`DatasetOptions::parts`, resolved); 1 when
  /// replicated.
  [[nodiscard]] std::uint64_t parts() const noexcept { return parts_; }
  /// @brief How the rows were divided among the ranks.
  [[nodiscard]] Sharding sharding() const noexcept { return sharding_; }
  /// @brief The remainder policy the epoch was cut by.
  [[nodiscard]] Remainder remainder() const noexcept { return remainder_; }
  /// @brief Whether the epoch was a stream's in window order (whose order also depends on
  /// its chunking: it resumes only on a stream of the same chunking and world size).
  [[nodiscard]] bool window_order() const noexcept { return window_order_; }
  /// @brief A hash of the dataset's shape: rows, row shapes, element types (and the stride of a
  /// token dataset whose windows do not tile the stream, a window-order stream's cut). Not of
  /// its contents.
  [[nodiscard]] std::uint32_t fingerprint() const noexcept { return fingerprint_; }

  /// @brief The state's 64 bytes, little-endian, with a version and a checksum.
  [[nodiscard]] bytes_type to_bytes() const noexcept {
    bytes_type bytes{};
    put(bytes, 0, magic, 4);
    put(bytes, 4, format_version, 2);
    bytes[6] = static_cast<std::uint8_t>(options_.shuffle);
    bytes[7] = static_cast<std::uint8_t>(sharding_);
    bytes[8] = static_cast<std::uint8_t>(remainder_);
    bytes[9] = static_cast<std::uint8_t>((finished_ ? 1U : 0U) | (window_order_ ? 2U : 0U));
    put(bytes, 12, fingerprint_, 4);
    put(bytes, 16, options_.seed, 8);
    put(bytes, 24, options_.epoch, 8);
    put(bytes, 32, position_, 8);
    put(bytes, 40, rows_, 8);
    put(bytes, 48, global_batch_, 8);
    put(bytes, 56, parts_, 4);
    put(bytes, 60, checksum(bytes), 4);
    return bytes;
  }

  /// @brief The state `to_bytes()` wrote.
  /// @throws FormatError when `bytes` is not 64 bytes, is not a state, has another version, or
  /// was altered (its checksum, or figures no epoch can have); nothing is made then.
  [[nodiscard]] static EpochState from_bytes(const void* data, std::size_t size) {
    const auto refuse = [](std::size_t at, const std::string& found) {
      throw FormatError("epoch state", at,
                        "expected the 64 bytes of an EpochState (version " +
                            std::to_string(format_version) + "), found " + found +
                            "; pass the bytes EpochState::to_bytes() wrote, unchanged");
    };
    if (size != size_bytes) refuse(std::min(size, size_bytes), std::to_string(size) + " bytes");
    if (data == nullptr) refuse(0, "a null pointer");
    bytes_type bytes{};
    for (std::size_t i = 0; i < size_bytes; ++i)
      bytes[i] = static_cast<const std::uint8_t*>(data)[i];
    if (get(bytes, 0, 4) != magic) refuse(0, "bytes that are not an epoch state");
    if (get(bytes, 4, 2) != format_version)
      refuse(4, "a state of version " + std::to_string(get(bytes, 4, 2)));
    if (get(bytes, 60, 4) != checksum(bytes))
      refuse(60, "a state whose checksum does not match its bytes (altered)");
    EpochState state;
    state.options_.shuffle = static_cast<Shuffle>(bytes[6]);
    state.sharding_ = static_cast<Sharding>(bytes[7]);
    state.remainder_ = static_cast<Remainder>(bytes[8]);
    state.finished_ = (bytes[9] & 1U) != 0;
    state.window_order_ = (bytes[9] & 2U) != 0;
    state.fingerprint_ = static_cast<std::uint32_t>(get(bytes, 12, 4));
    state.options_.seed = get(bytes, 16, 8);
    state.options_.epoch = get(bytes, 24, 8);
    state.position_ = get(bytes, 32, 8);
    state.rows_ = get(bytes, 40, 8);
    state.global_batch_ = get(bytes, 48, 8);
    state.parts_ = get(bytes, 56, 4);
    if (bytes[6] > 2 || bytes[7] > 1 || bytes[8] > 2 || bytes[9] > 3 || bytes[10] != 0 ||
        bytes[11] != 0 || state.position_ > state.rows_ || state.global_batch_ == 0 ||
        state.parts_ == 0)
      refuse(6,
             "figures no epoch has (a shuffle, sharding or remainder out of range, a position "
             "past the rows, or no batch or part)");
    return state;
  }
  /// @brief `from_bytes(bytes.data(), bytes.size())`.
  /// @throws what that throws.
  [[nodiscard]] static EpochState from_bytes(const bytes_type& bytes) {
    return from_bytes(bytes.data(), bytes.size());
  }

  /// @brief States are equal when every figure is.
  friend bool operator==(const EpochState& a, const EpochState& b) noexcept {
    return a.to_bytes() == b.to_bytes();
  }
  /// @brief States differ when any figure does.
  friend bool operator!=(const EpochState& a, const EpochState& b) noexcept { return !(a == b); }

 private:
  friend struct detail::EpochStateAccess;
  static constexpr std::uint64_t magic = 0x70657372;  // "rsep"

  static void put(bytes_type& bytes, std::size_t at, std::uint64_t value,
                  std::size_t width) noexcept {
    for (std::size_t i = 0; i < width; ++i)
      bytes[at + i] = static_cast<std::uint8_t>(value >> (8 * i));
  }
  [[nodiscard]] static std::uint64_t get(const bytes_type& bytes, std::size_t at,
                                         std::size_t width) noexcept {
    std::uint64_t value = 0;
    for (std::size_t i = 0; i < width; ++i) value |= std::uint64_t{bytes[at + i]} << (8 * i);
    return value;
  }
  // A mix of the first 60 bytes: any change of one bit changes it.
  [[nodiscard]] static std::uint32_t checksum(const bytes_type& bytes) noexcept {
    std::uint64_t hash = 0;
    for (std::size_t at = 0; at < 56; at += 8) hash = detail::mix64(hash ^ get(bytes, at, 8));
    hash = detail::mix64(hash ^ get(bytes, 56, 4));
    return static_cast<std::uint32_t>(hash ^ (hash >> 32));
  }

  EpochOptions options_{};
  std::uint64_t position_ = 0;
  std::uint64_t rows_ = 0;
  std::uint64_t global_batch_ = 0;
  std::uint64_t parts_ = 0;
  std::uint32_t fingerprint_ = 0;
  Sharding sharding_ = Sharding::partitioned;
  Remainder remainder_ = Remainder::partial;
  bool finished_ = false;
  bool window_order_ = false;
};

}  // namespace resident
