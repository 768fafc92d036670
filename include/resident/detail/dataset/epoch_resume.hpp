// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// What an epoch writes into its `EpochState`, and what a dataset checks before it resumes an
// epoch from one: that the state is of this epoch (seed, number, shuffle) of a dataset of the
// same shape, cut into the same order (docs/resume.md).

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "resident/dataset_options.hpp"
#include "resident/detail/compact.hpp"
#include "resident/detail/dataset/epoch_order.hpp"
#include "resident/detail/dataset/shard_geometry.hpp"
#include "resident/epoch_options.hpp"
#include "resident/epoch_state.hpp"
#include "resident/error.hpp"
#include "resident/permutation.hpp"
#include "resident/shape.hpp"
#include "resident/shard.hpp"

namespace resident::detail {

/// @brief What an owner adds to its order's identity beyond rows, shapes and types: a token
/// dataset's windows, a window-order stream's chunking (which its order depends on).
struct OrderKey {
  std::uint64_t key = 0;
  bool window = false;  ///< A stream in window order: resumes only as it was cut.
};

/// @brief The dataset's side of a state: what the epoch's order depends on.
struct EpochFacts {
  std::uint64_t rows = 0;
  std::uint64_t parts = 1;
  Sharding sharding = Sharding::partitioned;
  Remainder remainder = Remainder::partial;
  OrderKey order{};
  std::uint32_t fingerprint = 0;
};

/// @brief The facts of a dataset cut by `geometry`, with these rows' shapes and element kinds.
template <std::size_t Fields>
EpochFacts epoch_facts(const ShardGeometry& geometry, const std::array<Shape, Fields>& shapes,
                       const std::array<ElementKind, Fields>& kinds, const OrderKey& order) {
  EpochFacts facts;
  facts.rows = geometry.total_rows;
  facts.parts = geometry.parts;
  facts.sharding = geometry.sharding;
  facts.remainder = geometry.remainder;
  facts.order = order;
  std::uint64_t hash = mix64(geometry.total_rows ^ 0x66696e676572ULL);  // "finger"
  for (std::size_t field = 0; field < Fields; ++field) {
    hash = mix64(hash ^ shapes[field].rank());
    for (std::size_t axis = 0; axis < shapes[field].rank(); ++axis)
      hash = mix64(hash ^ shapes[field][axis]);
    hash = mix64(hash ^ kinds[field].bytes);
    for (const char* name = kinds[field].name; *name != '\0'; ++name)
      hash = mix64(hash ^ static_cast<unsigned char>(*name));
  }
  hash = mix64(hash ^ order.key);
  facts.fingerprint = static_cast<std::uint32_t>(hash ^ (hash >> 32));
  return facts;
}

/// @brief Makes and reads `EpochState`s for the epochs.
struct EpochStateAccess {
  /// @brief The state of `order`'s epoch before its batch `k`.
  static EpochState make(const EpochFacts& facts, const EpochOrder& order, std::size_t k) {
    EpochState state;
    state.options_ = order.options;
    state.position_ = order.position(k);
    state.finished_ = k >= order.batches();
    state.rows_ = facts.rows;
    state.global_batch_ = order.block_rows;
    state.parts_ = facts.parts;
    state.sharding_ = facts.sharding;
    state.remainder_ = facts.remainder;
    state.window_order_ = facts.order.window;
    state.fingerprint_ = facts.fingerprint;
    return state;
  }

  /// @brief Where `options`' epoch of a dataset with `facts` resumes from `state`.
  /// @throws InvalidArgument naming every figure that differs and what to do.
  static EpochStart start(const EpochState& state, const EpochOptions& options,
                          const EpochFacts& facts) {
    std::string differs;
    const auto compare = [&differs](const char* what, const std::string& saved,
                                    const std::string& here) {
      if (saved == here) return;
      differs +=
          std::string(differs.empty() ? "" : "; ") + what + " " + saved + " (here " + here + ")";
    };
    if (state.global_batch_ == 0) {
      differs = "a default-made state, which no epoch saved";
    } else {
      compare("seed", std::to_string(state.options_.seed), std::to_string(options.seed));
      compare("epoch", std::to_string(state.options_.epoch), std::to_string(options.epoch));
      compare("shuffle", shuffle_name(state.options_.shuffle), shuffle_name(options.shuffle));
      compare("rows", std::to_string(state.rows_), std::to_string(facts.rows));
      compare("sharding", sharding_name(state.sharding_), sharding_name(facts.sharding));
      if (facts.sharding == Sharding::partitioned && state.sharding_ == facts.sharding)
        compare("DatasetOptions::parts", std::to_string(state.parts_), std::to_string(facts.parts));
      compare("remainder", remainder_name(state.remainder_), remainder_name(facts.remainder));
      compare("order", state.window_order_ ? "a stream's window order" : "the epoch order",
              facts.order.window ? "a stream's window order" : "the epoch order");
      if (differs.empty() && state.fingerprint_ != facts.fingerprint)
        differs = "the dataset's fingerprint " + std::to_string(state.fingerprint_) + " (here " +
                  std::to_string(facts.fingerprint) +
                  "): its row shapes or element types differ, or a token dataset's stride, a "
                  "window-order stream's chunking, world size or batch size, or a mixture's "
                  "shares, period or sources' rows, or a phase of it that begins before the "
                  "state's position (under Shuffle::batches, in the state's epoch)";
    }
    if (!differs.empty())
      throw InvalidArgument(
          "resident: the epoch state was saved by another epoch or dataset: " + differs +
          "; resume with the EpochOptions the state was saved with (state.options()) and a "
          "dataset made from the same data with the same remainder, sharding and "
          "DatasetOptions::parts, or start the epoch from its beginning");
    return {state.position_, state.global_batch_};
  }

 private:
  static const char* shuffle_name(Shuffle shuffle) noexcept {
    constexpr const char* names[] = {"none", "batches", "samples"};
    const auto index = static_cast<std::size_t>(shuffle);
    return index < 3 ? names[index] : "unknown";
  }
};

}  // namespace resident::detail
