// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// A batch a program holds keeps its values whatever else the program does with the dataset:
// two epochs of a streamed dataset read in turn, a wider epoch made while an older one's view
// is held, padded token batches served to several threads at once. Each is a program that once
// saw a held view change, dangle or race; now the view holds, or the memory the newer epoch
// needs is refused with a typed error before anything is written.

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "resident/resident.hpp"

namespace {

using resident::CapacityError;
using resident::DatasetOptions;
using resident::EpochOptions;
using resident::HostSpace;
using resident::HostTensor;
using resident::Remainder;
using resident::Shuffle;
using resident::StreamOrder;

// 4096 rows of 16 floats (row r holds r), labels r, batches of 64.
struct Rows {
  static constexpr std::size_t rows = 4096;
  static constexpr std::size_t width = 16;
  Rows() : x(rows * width), y(rows) {
    for (std::size_t r = 0; r < rows; ++r) {
      y[r] = static_cast<std::int32_t>(r);
      for (std::size_t c = 0; c < width; ++c) x[r * width + c] = static_cast<float>(r);
    }
  }
  [[nodiscard]] HostTensor<const float> features() const { return {x.data(), {rows, width}}; }
  [[nodiscard]] HostTensor<const std::int32_t> labels() const { return {y.data(), {rows}}; }
  std::vector<float> x;
  std::vector<std::int32_t> y;
};

DatasetOptions batches_of_64() {
  DatasetOptions options;
  options.batch_size = 64;
  options.reserve_bytes = 0;
  return options;
}

// What reading two epochs batch by batch in turn did to the first one's views.
struct Interleaved {
  std::size_t batches = 0;  // batches of `a` read
  std::size_t changed = 0;  // views of `a` whose first label changed once `b` served a batch
  bool refused = false;     // `b` was refused its memory (CapacityError) before writing any
};

// The reported program: `a.batch(k)`, note its first label, `b.batch(k)`, read `a`'s view again.
template <class Dataset>
Interleaved interleave(Dataset& ds) {
  auto a = ds.epoch({7, 0, Shuffle::batches});
  auto b = ds.epoch({7, 1, Shuffle::batches});
  Interleaved seen;
  for (std::size_t k = 0; k < a.size(); ++k) {
    auto [xa, ya] = a.batch(k);
    const std::int32_t first = ya.data()[0];
    ++seen.batches;
    if (!seen.refused) {
      try {
        auto [xb, yb] = b.batch(k);
        EXPECT_EQ(yb.rows(), ya.rows());
      } catch (const CapacityError& refusal) {
        seen.refused = true;
        EXPECT_NE(std::string(refusal.what()).find("live epoch"), std::string::npos)
            << refusal.what();
      }
    }
    if (ya.data()[0] != first) ++seen.changed;
    EXPECT_EQ(xa.data()[0], static_cast<float>(ya.data()[0])) << "batch " << k;
  }
  return seen;
}

TEST(HeldViews, TwoEpochsOfAStreamedDatasetFromMakeDatasetKeepEachOthersViews) {
  const Rows data;
  // 150,000 bytes: too little for the data, so make_dataset streams it, and for one set of
  // chunk slots only: the second epoch is refused its own before it writes.
  auto tight = resident::make_dataset(HostSpace::with_budget(150000), batches_of_64(),
                                      data.features(), data.labels());
  ASSERT_TRUE(tight.is_streaming());
  const Interleaved refused = interleave(tight);
  EXPECT_EQ(refused.batches, 64U);
  EXPECT_EQ(refused.changed, 0U);
  EXPECT_TRUE(refused.refused);

  // Small chunks in a larger budget: each epoch has its slots, and both are served in full.
  DatasetOptions options = batches_of_64();
  options.streaming.chunk_batches = 2;
  auto roomy = resident::make_dataset(HostSpace::with_budget(200000), options, data.features(),
                                      data.labels());
  ASSERT_TRUE(roomy.is_streaming());
  const Interleaved served = interleave(roomy);
  EXPECT_EQ(served.batches, 64U);
  EXPECT_EQ(served.changed, 0U);
  EXPECT_FALSE(served.refused);
}

TEST(HeldViews, TwoEpochsOfAStreamingDatasetKeepEachOthersViewsInEitherOrder) {
  const Rows data;
  for (const StreamOrder order : {StreamOrder::window, StreamOrder::whole_epoch}) {
    for (const bool room : {false, true}) {
      SCOPED_TRACE(std::string(order == StreamOrder::window ? "window" : "whole-epoch") +
                   (room ? ", room for two sets of slots" : ", room for one"));
      DatasetOptions options = batches_of_64();
      options.streaming.order = order;
      options.streaming.chunk_batches = 3;  // 22 chunks of 4 slots: 4 x 3 x 4,352 bytes
      const std::size_t budget = room ? 150000 : 100000;
      resident::StreamingDataset<HostSpace, float, std::int32_t> ds(
          HostSpace::with_budget(budget), options, data.features(), data.labels());
      const Interleaved seen = interleave(ds);
      EXPECT_EQ(seen.batches, 64U);
      EXPECT_EQ(seen.changed, 0U);
      EXPECT_EQ(seen.refused, !room);
    }
  }
}

// A conversion to double: slots twice as wide as the planned floats.
struct ToDouble {
  using output_type = double;
  template <class T>
  RESIDENT_HOST_DEVICE double operator()(T value, std::size_t /*element*/) const noexcept {
    return static_cast<double>(value);
  }
};

TEST(HeldViews, AWiderEpochLeavesAnOlderEpochsGatheredViewInPlace) {
  const Rows data;
  resident::DeviceDataset<HostSpace, float, std::int32_t> ds(
      HostSpace::with_budget(std::size_t{1} << 22), batches_of_64(), data.features(),
      data.labels());
  auto e1 = ds.epoch({3, 0, Shuffle::samples});
  auto [x1, y1] = e1.batch(0);
  const std::size_t one_ring = ds.ring_bytes();
  const std::vector<std::int32_t> labels(y1.data(), y1.data() + y1.rows());
  auto e2 = ds.epoch({3, 1, Shuffle::samples}, resident::convert<0>(ToDouble{}));
  auto [x2, y2] = e2.batch(0);
  EXPECT_EQ(x2.data()[0], static_cast<double>(y2.data()[0]));
  // Read after e2 gathered: a freed ring would be a use after free, a shared one other rows.
  for (std::size_t r = 0; r < labels.size(); ++r) {
    ASSERT_EQ(y1.data()[r], labels[r]) << "row " << r;
    ASSERT_EQ(x1.data()[r * Rows::width], static_cast<float>(labels[r])) << "row " << r;
  }
  // Both epochs go on, each in its own ring.
  EXPECT_GT(ds.ring_bytes(), 2 * one_ring);  // e1's, and e2's of doubles
  auto [x1b, y1b] = e1.batch(1);
  EXPECT_EQ(x1b.data()[0], static_cast<float>(y1b.data()[0]));
}

// A token stream of 10,000 tokens (token t is t % 60,000), windows of 16, batches of 24:
// 624 windows, the last batch padded (Remainder::pad), so a zero-copy epoch gathers that one.
struct Tokens {
  Tokens() : tokens(10000) {
    for (std::size_t t = 0; t < tokens.size(); ++t)
      tokens[t] = static_cast<std::uint16_t>(t % 60000);
  }
  std::vector<std::uint16_t> tokens;
};

DatasetOptions padded_windows() {
  DatasetOptions options;
  options.batch_size = 25;
  options.remainder = Remainder::pad;
  options.reserve_bytes = 0;
  return options;
}

// Every row of `x` is 16 consecutive tokens, and `y` the same one on.
template <class Batch>
void expect_windows(const Batch& batch, std::size_t k) {
  const auto& [x, y] = batch;
  for (std::size_t r = 0; r < x.rows(); ++r) {
    const std::uint16_t first = x.data()[r * 16];
    for (std::size_t t = 0; t < 16; ++t) {
      ASSERT_EQ(x.data()[r * 16 + t], static_cast<std::uint16_t>(first + t)) << k << "/" << r;
      ASSERT_EQ(y.data()[r * 16 + t], static_cast<std::uint16_t>(first + t + 1)) << k << "/" << r;
    }
  }
}

TEST(HeldViews, ZeroCopyTokenEpochsOnSeveralThreadsEachGatherTheirPaddedBatch) {
  const Tokens data;
  resident::TokenDataset<HostSpace, std::uint16_t> ds(
      HostSpace::with_budget(std::size_t{1} << 22), padded_windows(), {16, 0},
      HostTensor<const std::uint16_t>(data.tokens.data(), {data.tokens.size()}));
  ASSERT_EQ(ds.num_batches(), 25U);  // 624 windows: the last batch holds 24, padded to 25
  std::vector<std::thread> threads;
  std::vector<std::size_t> served(3, 0);
  for (std::size_t t = 0; t < 3; ++t) {
    threads.emplace_back([&ds, &served, t] {
      for (std::uint64_t epoch = 0; epoch < 4; ++epoch) {
        auto e = ds.epoch({11, epoch, t == 0 ? Shuffle::none : Shuffle::batches});
        EXPECT_FALSE(e.gathers());
        for (std::size_t k = 0; k < e.size(); ++k) {
          expect_windows(e.batch(k), k);
          ++served[t];
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (const std::size_t count : served) EXPECT_EQ(count, 100U);
}

TEST(HeldViews, AnOlderZeroCopyTokenEpochServesItsPaddedBatchOnceANewerOneExists) {
  const Tokens data;
  resident::TokenDataset<HostSpace, std::uint16_t> ds(
      HostSpace::with_budget(std::size_t{1} << 22), padded_windows(), {16, 0},
      HostTensor<const std::uint16_t>(data.tokens.data(), {data.tokens.size()}));
  auto e1 = ds.epoch({5, 0, Shuffle::none});
  auto e2 = ds.epoch({5, 1, Shuffle::batches});
  const std::size_t last = e1.size() - 1;
  auto padded = e1.batch(last);
  expect_windows(padded, last);
  const std::vector<std::uint16_t> kept(std::get<0>(padded).data(),
                                        std::get<0>(padded).data() + std::get<0>(padded).size());
  expect_windows(e2.batch(last), last);
  EXPECT_EQ(std::get<1>(padded).valid_rows(), 24U);
  EXPECT_EQ(0, std::memcmp(kept.data(), std::get<0>(padded).data(), kept.size() * 2));
}

// What a dataset lends its epochs goes with the dataset: destroyed (or assigned over) while an
// epoch lives, the dataset gives every byte back, and the epoch refuses every use.
TEST(HeldViews, ADatasetDestroyedUnderItsLiveEpochsGivesBackWhatTheyBorrowed) {
  const Rows data;
  const HostSpace space = HostSpace::with_budget(std::size_t{1} << 22);
  DatasetOptions options = batches_of_64();
  options.streaming.chunk_batches = 2;
  auto preloaded = std::make_unique<resident::DeviceDataset<HostSpace, float, std::int32_t>>(
      space, options, data.features(), data.labels());
  auto gathering = preloaded->epoch({1, 0, Shuffle::samples});
  (void)gathering.batch(0);
  auto streamed = std::make_unique<resident::StreamingDataset<HostSpace, float, std::int32_t>>(
      space, options, data.features(), data.labels());
  auto viewing = streamed->epoch({1, 0, Shuffle::batches});
  (void)viewing.batch(0);
  EXPECT_GT(space.used_bytes(), 0U);
  preloaded.reset();
  streamed.reset();
  EXPECT_EQ(space.used_bytes(), 0U);
  EXPECT_THROW((void)gathering.batch(1), resident::Error);
  EXPECT_THROW((void)viewing.batch(1), resident::Error);
}

// A wider conversion after an epoch of the planned width ended: the idle ring it does not fit
// is released for it, so the order of the epochs does not decide whether it fits.
TEST(HeldViews, AWiderEpochAfterANarrowerOneEndedFitsWhereItFitsFirst) {
  const Rows data;
  DatasetOptions options = batches_of_64();
  DatasetOptions wide = options;
  wide.ring_element_bytes = sizeof(double);
  const resident::Plan planned = resident::plan(HostSpace{}, wide, data.features(), data.labels());
  resident::DeviceDataset<HostSpace, float, std::int32_t> ds(
      HostSpace::with_budget(planned.needed_bytes + planned.ring_bytes), options, data.features(),
      data.labels());
  { (void)ds.epoch({1, 0, Shuffle::samples}).batch(0); }
  auto wider = ds.epoch({1, 1, Shuffle::samples}, resident::convert<0>(ToDouble{}));
  const auto [x, y] = wider.batch(0);
  EXPECT_EQ(x.data()[0], static_cast<double>(y.data()[0]));
  EXPECT_LE(ds.ring_bytes(), planned.ring_bytes);  // the wider ring alone
}

// `batch_indices()` of a zero-copy epoch borrows its ring at its first call: where a live
// gathering epoch holds the only one the space has room for, that call is refused, and the
// epoch's zero-copy batches go on.
TEST(HeldViews, BatchIndicesOfAZeroCopyEpochAreRefusedAtTheirFirstCallWhereNoRingFits) {
  const Rows data;
  DatasetOptions options = batches_of_64();
  const resident::Plan planned =
      resident::plan(HostSpace{}, options, data.features(), data.labels());
  resident::DeviceDataset<HostSpace, float, std::int32_t> ds(
      HostSpace::with_budget(planned.needed_bytes + planned.ring_bytes), options, data.features(),
      data.labels());
  auto training = ds.epoch({1, 0, Shuffle::samples});
  (void)training.batch(0);
  auto evaluation = ds.epoch({1, 0, Shuffle::none});
  (void)evaluation.batch(0);
  EXPECT_THROW((void)evaluation.batch_indices(0), CapacityError);
  const auto [x, y] = evaluation.batch(1);
  EXPECT_EQ(y.data()[0], 64);
  (void)training.batch(1);
}

}  // namespace
