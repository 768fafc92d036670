// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// Concurrency: many threads sharing one budgeted space, many readers of one dataset, and an
// epoch iterated while another dataset uploads. Every check here holds under any interleaving;
// the tsan preset runs them under ThreadSanitizer, which also reports any data race they reach.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <iostream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "resident/resident.hpp"
#include "support/labelled_rows.hpp"
#include "support/spaces.hpp"

namespace {

using resident::CapacityError;
using resident::DatasetOptions;
using resident::DeviceDataset;
using resident::HostSpace;
using resident::HostTensor;
using resident::Remainder;
using resident::Shuffle;
using resident::testing::read_back;
using Rows = resident::testing::LabelledRows;

constexpr unsigned kThreads = 8;

DatasetOptions options_of(std::size_t batch) {
  DatasetOptions options;
  options.batch_size = batch;
  options.remainder = Remainder::drop;
  options.reserve_bytes = 0;
  return options;
}

/// Runs `body(thread_index)` on `threads` threads released together, and joins them.
template <class Body>
void run_together(unsigned threads, Body body) {
  std::atomic<unsigned> ready{0};
  std::vector<std::thread> team;
  team.reserve(threads);
  for (unsigned index = 0; index < threads; ++index) {
    team.emplace_back([&, index] {
      ++ready;
      while (ready.load() < threads) std::this_thread::yield();
      body(index);
    });
  }
  for (auto& thread : team) thread.join();
}

// Eight threads build and drop datasets in one budget that holds three at a time. The budget
// is never overdrawn (the datasets alive never need more than it), every refusal reports
// figures under which the data truly did not fit, and all of it comes back at the end.
TEST(Concurrency, DatasetsBuiltAndDroppedFromManyThreadsNeverOverdrawTheBudget) {
  const Rows rows(1000, 15);  // 64,000 B of fields
  using Dataset = DeviceDataset<HostSpace, float, std::int32_t>;
  const std::size_t dataset_bytes =
      Dataset(HostSpace{}, options_of(10), rows.x(), rows.y()).bytes();
  const std::size_t limit = dataset_bytes * 3 + dataset_bytes / 2;
  const HostSpace space = HostSpace::with_budget(limit);

  std::atomic<std::size_t> alive{0};
  std::atomic<std::size_t> most_alive{0};
  std::atomic<std::size_t> built{0};
  std::atomic<std::size_t> refused{0};
  std::atomic<std::size_t> inexact_refusals{0};
  std::atomic<std::size_t> overdrawn{0};
  run_together(kThreads, [&](unsigned /*index*/) {
    for (int attempt = 0; attempt < 60; ++attempt) {
      try {
        const Dataset dataset(space, options_of(10), rows.x(), rows.y());
        const std::size_t now = ++alive;
        std::size_t most = most_alive.load();
        while (now > most && !most_alive.compare_exchange_weak(most, now)) {
        }
        if (now * dataset_bytes > limit || space.used_bytes() > limit) ++overdrawn;
        const std::size_t probe = static_cast<std::size_t>(attempt) % dataset.num_batches();
        if (std::get<1>(dataset.batch(probe)).data()[0] != static_cast<std::int32_t>(probe * 10))
          ++overdrawn;  // a dataset handed someone else's memory would show here
        ++built;
        std::this_thread::yield();
        --alive;
      } catch (const CapacityError& error) {
        ++refused;
        if (error.needed_bytes() != dataset_bytes ||
            error.needed_bytes() <=
                resident::detail::usable_bytes(error.free_bytes(), error.reserve_bytes()))
          ++inexact_refusals;
      }
    }
  });
  EXPECT_EQ(overdrawn.load(), 0u);
  EXPECT_EQ(inexact_refusals.load(), 0u);
  EXPECT_EQ(built.load() + refused.load(), std::size_t{kThreads} * 60);
  EXPECT_LE(most_alive.load(), 3u);
  EXPECT_GT(built.load(), 0u);
  EXPECT_EQ(space.used_bytes(), 0u) << "every byte comes back once the datasets are gone";
  std::cout << "[ threads  ] " << built.load() << " datasets built, " << refused.load()
            << " refused, at most " << most_alive.load() << " alive at once (3 fit)\n";
}

template <class Space>
using ConcurrentReaders = resident::testing::OverSpaces<Space>;
TYPED_TEST_SUITE(ConcurrentReaders, resident::testing::SpaceTypes, resident::testing::SpaceName);

// batch(i) and zero-copy epochs are const reads of the dataset: any number of threads may use
// them at once and each sees exactly the batches one thread sees.
TYPED_TEST(ConcurrentReaders, BatchAndZeroCopyEpochsFromManyThreadsSeeTheSameData) {
  const Rows rows(4096, 8);
  DeviceDataset<TypeParam, float, std::int32_t> dataset(this->space_, options_of(64), rows.x(),
                                                        rows.y());
  std::atomic<std::size_t> wrong{0};
  run_together(kThreads, [&](unsigned index) {
    for (std::size_t i = 0; i < dataset.num_batches(); ++i) {
      const auto [features, labels] = dataset.batch((i + index) % dataset.num_batches());
      const auto got = read_back(dataset.space(), dataset.stream(), labels);
      const std::size_t first = ((i + index) % dataset.num_batches()) * 64;
      for (std::size_t r = 0; r < got.size(); ++r)
        if (got[r] != static_cast<std::int32_t>(first + r)) ++wrong;
    }
    std::int64_t sum = 0;
    for (const auto& [features, labels] : dataset.epoch({index, 0, Shuffle::batches}))
      for (const std::int32_t label : read_back(dataset.space(), dataset.stream(), labels))
        sum += label;
    if (sum != rows.label_sum()) ++wrong;
  });
  EXPECT_EQ(wrong.load(), 0u);
}

// One thread iterates sample-shuffled epochs (its gather threads included) while another builds
// and drops datasets of its own in the same budget: neither disturbs the other.
TEST(Concurrency, EpochIteratesWhileAnotherDatasetUploads) {
  const HostSpace space = HostSpace::with_budget(std::size_t{64} << 20);
  const Rows small(20000, 16);   // the epoch's dataset: 1.3 MB
  const Rows large(100000, 47);  // the uploads: 19 MB, copied by several threads
  DeviceDataset<HostSpace, float, std::int32_t> trained(space, options_of(256), small.x(),
                                                        small.y());
  std::atomic<bool> uploading{true};
  std::atomic<std::size_t> uploads{0};
  std::atomic<std::size_t> wrong{0};
  std::thread uploader([&] {
    DatasetOptions options = options_of(1000);
    options.upload_threads = 2;
    options.upload_block_bytes = std::size_t{1} << 20;
    while (uploading.load() || uploads.load() == 0) {
      const DeviceDataset<HostSpace, float, std::int32_t> uploaded(space, options, large.x(),
                                                                   large.y());
      const auto labels = uploaded.template field<1>();
      const auto features = uploaded.template field<0>();
      if (!std::equal(large.labels.begin(), large.labels.end(), labels.data()) ||
          !std::equal(large.features.begin(), large.features.end(), features.data()))
        ++wrong;
      ++uploads;
    }
  });
  for (std::uint64_t epoch = 0; epoch < 8; ++epoch) {
    // Each row at most once (drop leaves the last 31 of the order out), each with its features.
    std::vector<bool> seen(small.labels.size(), false);
    std::size_t rows_seen = 0;
    for (const auto& [features, labels] : trained.epoch({1, epoch, Shuffle::samples})) {
      for (std::size_t r = 0; r < labels.rows(); ++r) {
        const auto label = static_cast<std::size_t>(labels.data()[r]);
        if (label >= seen.size() || seen[label]) ++wrong;
        seen[std::min(label, seen.size() - 1)] = true;
        if (features.data()[r * 16 + 15] != static_cast<float>(label)) ++wrong;
      }
      rows_seen += labels.rows();
    }
    if (rows_seen != trained.num_batches() * 256) ++wrong;
  }
  uploading = false;
  uploader.join();
  EXPECT_EQ(wrong.load(), 0u);
  EXPECT_GT(uploads.load(), 0u);
  EXPECT_EQ(space.used_bytes(), trained.bytes() + trained.ring_bytes());
}

}  // namespace
