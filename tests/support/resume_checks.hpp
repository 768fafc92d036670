// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// Test support: epochs stopped and resumed. A run's batches read back as bytes; a run resumed
// from a state after any batch, in a new dataset, compared with the run that never stopped;
// and jobs of several ranks (one dataset per rank in this process) that stop and resume on
// other world sizes, checked to serve every row of the epoch once.

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "resident/resident.hpp"
#include "support/batch_options.hpp"
#include "support/labelled_rows.hpp"
#include "support/spaces.hpp"

namespace resident::testing {

/// Every batch of a run, every field's bytes (padding included) with its valid rows.
using RunBytes = std::vector<std::vector<std::uint8_t>>;

/// Batch `k` of `epoch` (of `ds`) read back: each field's bytes, then the valid rows.
template <class Dataset, class Epoch>
std::vector<std::uint8_t> batch_bytes(Dataset& ds, Epoch& epoch, std::size_t k) {
  std::vector<std::uint8_t> bytes;
  std::apply(
      [&](const auto&... views) {
        const auto append = [&](const auto& view) {
          const auto host = read_back(ds.space(), ds.stream(), view);
          const std::size_t at = bytes.size();
          bytes.resize(at + host.size() * sizeof(host[0]) + sizeof(std::size_t));
          if (!host.empty())
            std::memcpy(bytes.data() + at, host.data(), host.size() * sizeof(host[0]));
          const std::size_t valid = view.valid_rows();
          std::memcpy(bytes.data() + bytes.size() - sizeof valid, &valid, sizeof valid);
        };
        (append(views), ...);
      },
      epoch.batch(k));
  return bytes;
}

/// Every batch of `epoch`, through its iterators (as a training loop reads it).
template <class Dataset, class Epoch>
RunBytes run_bytes(Dataset& ds, Epoch&& epoch) {
  RunBytes run;
  std::size_t k = 0;
  for (auto it = epoch.begin(); it != epoch.end(); ++it, ++k) {
    (void)*it;
    run.push_back(batch_bytes(ds, epoch, k));
  }
  return run;
}

/// The transforms an epoch of the resume sweeps is made with.
enum class Transform { none, convert, augment };

/// `use(epoch)` on `ds`'s epoch of `options` with `transform` (field 0 of rows of 4 values,
/// one 2 x 2 image each), resumed from `state` where one is given.
template <class Dataset, class Use>
void with_epoch(Dataset& ds, const EpochOptions& options, Transform transform,
                const EpochState* state, Use&& use) {
  const auto make = [&](auto... transforms) {
    if (state != nullptr) {
      use(ds.resume(options, *state, transforms...));
    } else {
      use(ds.epoch(options, transforms...));
    }
  };
  if (transform == Transform::none) make();
  if (transform == Transform::convert) make(convert<0>(Normalize{0.5f, -1.0f}));
  if (transform == Transform::augment)
    make(augment<0>(ImageLayout::chw(1, 2, 2), RandomCrop{1}, RandomFlip{}));
}

/// A job's step, every rank's valid labels together, sorted: the rows the step trained on.
using StepRows = std::vector<std::int32_t>;

/// What a job of several ranks served of one epoch: each step's rows, and how often each row
/// came.
struct JobRecord {
  std::vector<StepRows> steps;
  std::map<std::int32_t, int> served;
};

/// One phase of a job: `world` ranks of `batch` rows each take `steps` steps (all that are left
/// when there are fewer).
struct Phase {
  int world = 1;
  std::size_t batch = 1;
  std::size_t steps = static_cast<std::size_t>(-1);
};

/// Runs `phases` of a job over `data`, each rank a dataset that `make(options)` makes; each
/// phase after the first resumes from the state the last one saved (through its bytes). Every
/// rank of a phase must have the same batches and say the same state.
template <class Make>
JobRecord run_job(const std::vector<Phase>& phases, DatasetOptions options,
                  const EpochOptions& epoch, Make&& make) {
  JobRecord record;
  std::optional<EpochState> state;
  for (const Phase& phase : phases) {
    options.shard.world_size = phase.world;
    options.batch_size = phase.batch;
    std::vector<decltype(make(options))> ranks;
    for (int rank = 0; rank < phase.world; ++rank) {
      options.shard.rank = rank;
      options.shard.local_rank = rank;
      ranks.push_back(make(options));
    }
    std::vector<decltype(ranks[0].epoch(epoch))> epochs;
    for (auto& ds : ranks) epochs.push_back(state ? ds.resume(epoch, *state) : ds.epoch(epoch));
    const std::size_t size = epochs[0].size();
    for (auto& each : epochs) EXPECT_EQ(each.size(), size) << "ranks of one phase differ";
    const std::size_t steps = std::min(size, phase.steps);
    for (std::size_t k = 0; k < steps; ++k) {
      StepRows rows;
      for (std::size_t r = 0; r < ranks.size(); ++r) {
        const auto batch = epochs[r].batch(k);
        const auto labels = read_back(ranks[r].space(), ranks[r].stream(), std::get<1>(batch));
        const auto features = read_back(ranks[r].space(), ranks[r].stream(), std::get<0>(batch));
        const std::size_t columns = features.size() / std::max<std::size_t>(labels.size(), 1);
        for (std::size_t row = 0; row < std::get<1>(batch).valid_rows(); ++row) {
          rows.push_back(labels[row]);
          ++record.served[labels[row]];
          // The features of a row are its label: the batch's fields agree.
          EXPECT_EQ(features[row * columns], static_cast<float>(labels[row]));
        }
      }
      std::sort(rows.begin(), rows.end());
      record.steps.push_back(std::move(rows));
    }
    const EpochState saved = epochs[0].state(steps);
    for (auto& each : epochs) EXPECT_EQ(each.state(steps), saved) << "ranks say other states";
    state = EpochState::from_bytes(saved.to_bytes());
  }
  return record;
}

inline constexpr std::array<Shuffle, 3> shuffles{Shuffle::none, Shuffle::batches, Shuffle::samples};
inline constexpr std::array<Remainder, 3> remainders{Remainder::drop, Remainder::partial,
                                                     Remainder::pad};
inline constexpr std::array<Transform, 3> transforms{Transform::none, Transform::convert,
                                                     Transform::augment};

inline std::string describe(Shuffle shuffle, Transform transform, Remainder remainder,
                            std::size_t cut) {
  return "shuffle " + std::to_string(static_cast<int>(shuffle)) + ", transform " +
         std::to_string(static_cast<int>(transform)) + ", remainder " + remainder_name(remainder) +
         ", resumed before batch " + std::to_string(cut);
}

// The places a run is stopped at: before batch 0, 1, the middle one, the last, and at the end.
inline std::vector<std::size_t> cuts(std::size_t batches) {
  std::vector<std::size_t> at{0, 1, batches / 2, batches == 0 ? 0 : batches - 1, batches};
  at.erase(std::remove_if(at.begin(), at.end(), [&](std::size_t k) { return k > batches; }),
           at.end());
  std::sort(at.begin(), at.end());
  at.erase(std::unique(at.begin(), at.end()), at.end());
  return at;
}

// The dataset kinds every resume sweep runs over, made in `Space` from `data`.
enum class Kind { preloaded, whole_epoch_stream, window_stream, dataset };
inline constexpr std::array<Kind, 4> kinds{Kind::preloaded, Kind::whole_epoch_stream,
                                           Kind::window_stream, Kind::dataset};

template <class Space, class Use>
void with_dataset(Kind kind, const Space& space, DatasetOptions options, const LabelledRows& data,
                  Use&& use) {
  options.streaming.chunk_batches = 2;
  options.streaming.chunk_slots = 3;
  options.streaming.prefetch_chunks = 1;
  switch (kind) {
    case Kind::preloaded: {
      DeviceDataset<Space, float, std::int32_t> ds(space, options, data.x(), data.y());
      use(ds);
      return;
    }
    case Kind::whole_epoch_stream:
    case Kind::window_stream: {
      options.streaming.order =
          kind == Kind::window_stream ? StreamOrder::window : StreamOrder::whole_epoch;
      StreamingDataset<Space, float, std::int32_t> ds(space, options, data.x(), data.y());
      use(ds);
      return;
    }
    case Kind::dataset: {
      auto ds = make_dataset(space, options, data.x(), data.y());
      use(ds);
      return;
    }
  }
}

// Stops a run of every kind, shuffle, transform and remainder after each cut, and resumes it
// in a new dataset from the state's bytes: the batches left are the uninterrupted run's, bit
// for bit. `shift` resumes one batch later than the state says, which must be caught.
template <class Space>
void check_resume_equals_no_stop(const Space& space, std::size_t shift = 0) {
  const LabelledRows data(29, 4);
  for (const Kind kind : kinds)
    for (const Shuffle shuffle : shuffles)
      for (const Transform transform : transforms)
        for (const Remainder remainder : remainders) {
          const DatasetOptions options = batch_options(4, remainder);
          const EpochOptions epoch{7, 3, shuffle};
          RunBytes full;
          with_dataset(kind, space, options, data, [&](auto& ds) {
            with_epoch(ds, epoch, transform, nullptr,
                       [&](auto&& each) { full = run_bytes(ds, each); });
          });
          for (const std::size_t cut : cuts(full.size())) {
            const std::string what = describe(shuffle, transform, remainder, cut);
            EpochState state;
            with_dataset(kind, space, options, data, [&](auto& ds) {
              with_epoch(ds, epoch, transform, nullptr, [&](auto&& each) {
                for (std::size_t k = 0; k < cut; ++k) (void)each.batch(k);
                state = each.state();
                EXPECT_EQ(state, each.state(cut)) << what;
                if (shift != 0 && cut + shift <= each.size()) state = each.state(cut + shift);
              });
            });
            const EpochState read = EpochState::from_bytes(state.to_bytes());
            RunBytes rest;
            with_dataset(kind, space, options, data, [&](auto& ds) {
              with_epoch(ds, epoch, transform, &read,
                         [&](auto&& each) { rest = run_bytes(ds, each); });
            });
            const RunBytes expected(full.begin() + static_cast<std::ptrdiff_t>(cut), full.end());
            if (shift == 0) {
              EXPECT_EQ(rest, expected) << what;
            } else if (cut + shift <= full.size()) {
              EXPECT_NE(rest, expected) << what << ": a resume one batch late went unnoticed";
            }
          }
        }
}

// Runs of several ranks in this process, stopped and resumed on other world sizes: every row of
// the epoch is served exactly once across the ranks and the restarts (at most once under
// `drop`, which leaves the rest out); where the global batch is unchanged, every step trains on
// the rows of the run that never stopped.
template <bool Streamed, class Space>
void check_elastic(const Space& space, Sharding sharding, const std::vector<Shuffle>& shuffle_set,
                   const std::vector<Remainder>& remainder_set) {
  const LabelledRows data(24 * 9 + 7, 2);
  struct Transition {
    std::vector<int> worlds;
    std::vector<std::size_t> batches;
  };
  const std::vector<Transition> transitions{
      {{8, 4}, {24, 48}}, {{4, 8}, {48, 24}},        {{8, 6}, {24, 24}},
      {{6, 4}, {24, 24}}, {{2, 3, 4}, {24, 24, 24}},
  };
  for (const Shuffle shuffle : shuffle_set)
    for (const Remainder remainder : remainder_set)
      for (const Transition& transition : transitions)
        for (const std::size_t stop : {std::size_t{1}, std::size_t{2}}) {
          DatasetOptions options = batch_options(1, remainder);
          options.sharding = sharding;
          options.parts = 24;
          options.streaming.chunk_batches = 2;
          options.streaming.order = StreamOrder::whole_epoch;
          const EpochOptions epoch{11, 2, shuffle};
          const auto make = [&](const DatasetOptions& rank_options) {
            if constexpr (Streamed)
              return StreamingDataset<Space, float, std::int32_t>(space, rank_options, data.x(),
                                                                  data.y());
            else
              return DeviceDataset<Space, float, std::int32_t>(space, rank_options, data.x(),
                                                               data.y());
          };
          std::vector<Phase> phases;
          for (std::size_t i = 0; i < transition.worlds.size(); ++i)
            phases.push_back({transition.worlds[i], transition.batches[i],
                              i + 1 < transition.worlds.size() ? stop : Phase{}.steps});
          const JobRecord job = run_job(phases, options, epoch, make);
          const JobRecord whole =
              run_job({{transition.worlds[0], transition.batches[0]}}, options, epoch, make);
          std::string what = std::string(sharding_name(sharding)) +
                             (Streamed ? " streamed" : " preloaded") + ", shuffle " +
                             std::to_string(static_cast<int>(shuffle)) + ", remainder " +
                             remainder_name(remainder) + ", worlds";
          for (const int world : transition.worlds) what += " " + std::to_string(world);
          what += ", stopped after " + std::to_string(stop) + " steps";
          for (std::int32_t row = 0; row < static_cast<std::int32_t>(data.labels.size()); ++row) {
            const auto found = job.served.find(row);
            const int times = found == job.served.end() ? 0 : found->second;
            const auto in_whole = whole.served.find(row);
            if (remainder == Remainder::drop) {
              EXPECT_LE(times, 1) << what << ": row " << row;
            } else {
              EXPECT_EQ(times, 1) << what << ": row " << row;
              EXPECT_NE(in_whole, whole.served.end()) << what;
            }
          }
          bool same_global_batch = true;
          for (std::size_t i = 0; i < transition.worlds.size(); ++i)
            same_global_batch &= transition.worlds[i] * transition.batches[i] ==
                                 transition.worlds[0] * transition.batches[0];
          if (same_global_batch) {
            EXPECT_EQ(job.steps, whole.steps) << what;
          }
        }
}

// --- Token windows ---------------------------------------------------------------------------

/// A token stream whose token i is i: window w starts with token `w * stride`.
inline std::vector<std::uint32_t> counting_tokens(std::size_t tokens) {
  std::vector<std::uint32_t> stream(tokens);
  for (std::size_t i = 0; i < tokens; ++i) stream[i] = static_cast<std::uint32_t>(i);
  return stream;
}

/// `check_resume_equals_no_stop` for token datasets (strides of a view and of a gather, no
/// conversion and a conversion; token windows take no augmentation).
template <class Space>
void check_token_resume_equals_no_stop(const Space& space) {
  const std::vector<std::uint32_t> stream = counting_tokens(123);
  const HostTensor<const std::uint32_t> tokens(stream.data(), {stream.size()});
  for (const std::size_t stride : {std::size_t{4}, std::size_t{3}})
    for (const Shuffle shuffle : shuffles)
      for (const Remainder remainder : remainders)
        for (const bool converted : {false, true}) {
          const DatasetOptions options = batch_options(4, remainder);
          const TokenOptions window{4, stride};
          const EpochOptions epoch{3, 1, shuffle};
          const auto run = [&](const EpochState* state, std::size_t stop, EpochState* saved) {
            TokenDataset<Space, std::uint32_t> ds(space, options, window, tokens);
            const auto use = [&](auto&& each) {
              if (saved != nullptr) {
                *saved = each.state(stop);
                return RunBytes{};
              }
              return run_bytes(ds, each);
            };
            const auto make = [&](auto... transforms) {
              return state != nullptr ? use(ds.resume(epoch, *state, transforms...))
                                      : use(ds.epoch(epoch, transforms...));
            };
            return converted ? make(convert<0>(Normalize{0.5f, 0.0f})) : make();
          };
          const RunBytes full = run(nullptr, 0, nullptr);
          for (const std::size_t cut : cuts(full.size())) {
            EpochState state;
            (void)run(nullptr, cut, &state);
            const EpochState read = EpochState::from_bytes(state.to_bytes());
            const RunBytes expected(full.begin() + static_cast<std::ptrdiff_t>(cut), full.end());
            EXPECT_EQ(run(&read, 0, nullptr), expected)
                << "tokens, stride " << stride << ", converted " << converted << ", "
                << describe(shuffle, Transform::none, remainder, cut);
          }
        }
}

/// `check_elastic` for token windows: partitioned into 24 parts and replicated, ranks stop and
/// resume on other world sizes; every window is served once.
template <class Space>
void check_token_elastic(const Space& space, Sharding sharding) {
  const std::size_t windows = 24 * 5 + 7, context = 3;
  const std::vector<std::uint32_t> stream = counting_tokens(windows * context + 1);
  const HostTensor<const std::uint32_t> tokens(stream.data(), {stream.size()});
  for (const Shuffle shuffle : shuffles)
    for (const std::vector<int>& worlds : {std::vector<int>{8, 4}, std::vector<int>{2, 3, 4}}) {
      DatasetOptions options = batch_options(24, Remainder::partial);
      options.sharding = sharding;
      options.parts = 24;
      const EpochOptions epoch{5, 0, shuffle};
      std::map<std::uint32_t, int> served;
      std::optional<EpochState> state;
      for (std::size_t phase = 0; phase < worlds.size(); ++phase) {
        options.shard.world_size = worlds[phase];
        std::vector<TokenDataset<Space, std::uint32_t>> ranks;
        for (int rank = 0; rank < worlds[phase]; ++rank) {
          options.shard.rank = rank;
          options.shard.local_rank = rank;
          ranks.emplace_back(space, options, TokenOptions{context, 0}, tokens);
        }
        std::vector<decltype(ranks[0].epoch(epoch))> epochs;
        for (auto& ds : ranks) epochs.push_back(state ? ds.resume(epoch, *state) : ds.epoch(epoch));
        const std::size_t steps = phase + 1 < worlds.size() ? 1 : epochs[0].size();
        for (std::size_t k = 0; k < steps; ++k)
          for (std::size_t r = 0; r < ranks.size(); ++r) {
            const auto batch = epochs[r].batch(k);
            const auto x = read_back(ranks[r].space(), ranks[r].stream(), std::get<0>(batch));
            const auto y = read_back(ranks[r].space(), ranks[r].stream(), std::get<1>(batch));
            for (std::size_t row = 0; row < std::get<0>(batch).valid_rows(); ++row) {
              ++served[x[row * context] / context];
              EXPECT_EQ(y[row * context], x[row * context] + 1) << "y is x one token on";
            }
          }
        state = EpochState::from_bytes(epochs[0].state(steps).to_bytes());
      }
      for (std::uint32_t w = 0; w < windows; ++w)
        EXPECT_EQ(served[w], 1) << "window " << w << ", " << sharding_name(sharding) << ", shuffle "
                                << static_cast<int>(shuffle) << ", from " << worlds[0] << " ranks";
    }
}

}  // namespace resident::testing
