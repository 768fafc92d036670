// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// Test support: token datasets checked against a reference written from the definition (window
// w is tokens [w * stride, w * stride + context + 1), x its first context tokens, y its last),
// over every order, remainder policy and shard count; shared by the host suite and the CUDA
// suite, so that every space is held to the same cases.

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "resident/token_dataset.hpp"
#include "support/spaces.hpp"

namespace resident::testing {

/// A token stream whose every token differs from its neighbours: a window read from the wrong
/// place, or a target not one token on, shows.
template <class T>
std::vector<T> token_stream(std::size_t tokens) {
  std::vector<T> stream(tokens);
  for (std::size_t i = 0; i < tokens; ++i)
    stream[i] = static_cast<T>((i * 2654435761u) % 60000u + (i % 3));
  return stream;
}

/// One rank's epoch read back: per batch, the rows, the valid rows and each valid row's window.
struct TokenEpochRecord {
  std::vector<std::size_t> rows, valid;
  std::vector<std::size_t> windows;              // global window ids of the valid rows, in order
  std::vector<std::vector<std::uint8_t>> bytes;  // x then y of each batch, padding included
};

/// Reads every batch of `epoch` of `ds` back and checks each row against `stream`: `x` row r is
/// window w's first `context` tokens, `y` row r its last `context`, where w is the batch's row
/// id r (`batch_indices`) plus the rank's first window; padding rows are windows too.
template <class Dataset, class Epoch, class T>
void read_token_epoch(Dataset& ds, Epoch& epoch, const std::vector<T>& stream,
                      TokenEpochRecord& record) {
  const std::size_t context = ds.context();
  for (std::size_t k = 0; k < epoch.size(); ++k) {
    const auto [x, y] = epoch.batch(k);
    const auto xs = read_back(ds.space(), ds.stream(), x);
    const auto ys = read_back(ds.space(), ds.stream(), y);
    const auto ids = read_back(ds.space(), ds.stream(), epoch.batch_indices(k));
    EXPECT_EQ(x.rows(), y.rows());
    EXPECT_EQ(x.valid_rows(), y.valid_rows());
    EXPECT_EQ(x.row_elements(), context);
    EXPECT_EQ(ids.size(), x.rows());
    record.rows.push_back(x.rows());
    record.valid.push_back(x.valid_rows());
    std::vector<std::uint8_t> bytes(xs.size() * sizeof(T) * 2);
    if (!xs.empty()) {
      std::memcpy(bytes.data(), xs.data(), xs.size() * sizeof(T));
      std::memcpy(bytes.data() + xs.size() * sizeof(T), ys.data(), ys.size() * sizeof(T));
    }
    record.bytes.push_back(std::move(bytes));
    for (std::size_t r = 0; r < x.rows() && r < ids.size(); ++r) {
      // A padding row names the window it repeats; a rank that owns none pads from the stream's
      // first windows.
      const std::size_t window =
          static_cast<std::size_t>(ids[r]) + (ds.num_rows() == 0 ? 0 : ds.first_row());
      const std::size_t first = window * ds.stride();
      ASSERT_LE(first + context + 1, stream.size()) << "batch " << k << " row " << r;
      for (std::size_t t = 0; t < context; ++t) {
        ASSERT_EQ(xs[r * context + t], stream[first + t])
            << "x of batch " << k << " row " << r << " token " << t;
        ASSERT_EQ(ys[r * context + t], stream[first + t + 1])
            << "y of batch " << k << " row " << r << " token " << t;
        if (t + 1 < context) {
          ASSERT_EQ(ys[r * context + t], xs[r * context + t + 1]);
        }
      }
      if (r < x.valid_rows()) record.windows.push_back(window);
    }
  }
}

/// `read_token_epoch`'s record, returned.
template <class Dataset, class Epoch, class T>
TokenEpochRecord token_epoch(Dataset& ds, Epoch& epoch, const std::vector<T>& stream) {
  TokenEpochRecord record;
  read_token_epoch(ds, epoch, stream, record);
  return record;
}

/// The cases of the sweep: every order, remainder policy, shard count and sharding, stride
/// equal to the context or not.
struct TokenCase {
  Shuffle shuffle;
  Remainder remainder;
  int world;
  Sharding sharding;
  std::size_t stride;  // 0: the context
};

inline std::string token_case_name(const TokenCase& c) {
  return std::string(c.shuffle == Shuffle::none      ? "none"
                     : c.shuffle == Shuffle::batches ? "batches"
                                                     : "samples") +
         "/" + remainder_name(c.remainder) + "/world " + std::to_string(c.world) + "/" +
         sharding_name(c.sharding) + "/stride " + std::to_string(c.stride);
}

inline std::vector<TokenCase> token_cases() {
  std::vector<TokenCase> cases;
  for (Shuffle shuffle : {Shuffle::none, Shuffle::batches, Shuffle::samples})
    for (Remainder remainder : {Remainder::drop, Remainder::partial, Remainder::pad})
      for (int world : {1, 2, 3})
        for (Sharding sharding : {Sharding::partitioned, Sharding::replicated})
          for (std::size_t stride : {std::size_t{0}, std::size_t{5}}) {
            if (world == 1 && sharding == Sharding::replicated) continue;
            cases.push_back({shuffle, remainder, world, sharding, stride});
          }
  return cases;
}

/// Every case of `token_cases()` on `space`, two epochs each, over a stream whose windows do
/// not divide into the batches or the ranks: every rank's rows are the reference's windows, `y`
/// is `x` one token on, bit for bit; no window is served twice in an epoch (across the ranks
/// too); every rank takes the same steps with the same batch sizes; under `partial` and `pad`
/// every window is served, and under `drop` all but fewer than a round of batches.
template <class Space, class T>
void check_token_orders(const Space& space) {
  constexpr std::size_t context = 8, batch = 4;
  const std::vector<T> stream = token_stream<T>(317);  // 39 windows of 8 (+1): 9 tokens left
  for (const TokenCase& c : token_cases()) {
    SCOPED_TRACE(token_case_name(c));
    const TokenOptions window{context, c.stride};
    const std::size_t stride = c.stride == 0 ? context : c.stride;
    const std::size_t windows = (stream.size() - context - 1) / stride + 1;
    for (std::uint64_t e = 0; e < 2; ++e) {
      std::multiset<std::size_t> served;
      std::vector<std::size_t> steps;
      std::vector<std::vector<std::size_t>> rows_per_rank;
      for (int rank = 0; rank < c.world; ++rank) {
        DatasetOptions options;
        options.batch_size = batch;
        options.remainder = c.remainder;
        options.shard = {rank, c.world, 0};
        options.sharding = c.sharding;
        TokenDataset<Space, T> ds(space, options, window,
                                  HostTensor<const T>(stream.data(), Shape{stream.size()}));
        auto epoch = ds.epoch({7, e, c.shuffle});
        EXPECT_EQ(epoch.gathers(), c.shuffle == Shuffle::samples || stride != context);
        const TokenEpochRecord record = token_epoch(ds, epoch, stream);
        if (::testing::Test::HasFatalFailure()) return;
        served.insert(record.windows.begin(), record.windows.end());
        steps.push_back(record.rows.size());
        rows_per_rank.push_back(record.rows);
      }
      for (std::size_t window_id : served) EXPECT_EQ(served.count(window_id), 1u) << window_id;
      for (const auto& rows : rows_per_rank) EXPECT_EQ(rows, rows_per_rank[0]);
      if (c.remainder == Remainder::drop)
        EXPECT_GT(served.size() + static_cast<std::size_t>(c.world) * batch, windows);
      else
        EXPECT_EQ(served.size(), windows);
    }
  }
}

/// `Shuffle::samples` of one rank serves the windows in the order of the public `Permutation`
/// keyed by (seed, epoch), and `Shuffle::none` in order, both the same on every space.
template <class Space, class T>
void check_token_reference_order(const Space& space) {
  const std::vector<T> stream = token_stream<T>(4000);
  DatasetOptions options;
  options.batch_size = 16;
  options.remainder = Remainder::partial;
  TokenDataset<Space, T> ds(space, options, TokenOptions{32, 0},
                            HostTensor<const T>(stream.data(), Shape{stream.size()}));
  ASSERT_EQ(ds.num_rows(), (stream.size() - 33) / 32 + 1);
  for (Shuffle shuffle : {Shuffle::none, Shuffle::samples}) {
    auto epoch = ds.epoch({11, 3, shuffle});
    const TokenEpochRecord record = token_epoch(ds, epoch, stream);
    const Permutation order(ds.num_rows(), 11, 3);
    ASSERT_EQ(record.windows.size(), ds.num_rows());
    for (std::size_t p = 0; p < record.windows.size(); ++p)
      ASSERT_EQ(record.windows[p], shuffle == Shuffle::none ? p : order(p)) << p;
  }
}

}  // namespace resident::testing
