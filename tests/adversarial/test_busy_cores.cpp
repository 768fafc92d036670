// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0

// Gathering epochs on a machine whose every core is busy with other threads, as training
// machines are: the copy team's threads are taken off their cores at any point of a block, and
// every batch is still the one a quiet machine gives, bit for bit, whatever the team's size.
// (How fast it is under load is bench_epoch's BM_HostEpochVsPeers; this is what it serves.)

#include <gtest/gtest.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <thread>
#include <vector>

#include "resident/convert.hpp"
#include "resident/device_dataset.hpp"
#include "resident/host_space.hpp"
#include "resident/streaming_dataset.hpp"

namespace {

using resident::DatasetOptions;
using resident::EpochOptions;
using resident::HostSpace;
using resident::HostTensor;
using resident::Shuffle;

constexpr std::size_t kRows = 1001, kRowElements = 3072, kBatch = 128;

/// Threads that keep every core busy while this object lives.
class BusyCores {
 public:
  BusyCores() {
    for (unsigned core = 0; core < std::max(std::thread::hardware_concurrency(), 1u); ++core)
      spinners_.emplace_back([this] {
        for (volatile unsigned long spins = 0; !stop_.load(std::memory_order_relaxed);
             spins = spins + 1) {
        }
      });
  }
  ~BusyCores() {
    stop_ = true;
    for (auto& spinner : spinners_) spinner.join();
  }
  BusyCores(const BusyCores&) = delete;
  BusyCores& operator=(const BusyCores&) = delete;

 private:
  std::atomic<bool> stop_{false};
  std::vector<std::thread> spinners_;
};

/// Every batch of three epochs (samples, then samples with Normalize), bytes and valid rows.
template <class Dataset>
std::vector<std::vector<float>> batches_of(Dataset& ds) {
  std::vector<std::vector<float>> out;
  for (std::uint64_t epoch = 0; epoch < 3; ++epoch) {
    for (auto [x, y] : ds.epoch({3, epoch, Shuffle::samples})) {
      out.emplace_back(x.data(), x.data() + x.size());
      out.back().push_back(static_cast<float>(y.valid_rows()));
      for (std::size_t r = 0; r < y.rows(); ++r)
        out.back().push_back(static_cast<float>(y.data()[r]));
    }
    for (auto [x, y] : ds.epoch({3, epoch, Shuffle::samples},
                                resident::convert<0>(resident::Normalize{0.5f, 1.0f}))) {
      out.emplace_back(x.data(), x.data() + x.size());
      for (std::size_t r = 0; r < y.rows(); ++r)
        out.back().push_back(static_cast<float>(y.data()[r]));
    }
  }
  return out;
}

struct Rows {
  Rows() : x(kRows * kRowElements), y(kRows) {
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<std::uint8_t>(i * 131 >> 3);
    for (std::size_t i = 0; i < kRows; ++i) y[i] = static_cast<std::int32_t>(i);
  }
  std::vector<std::uint8_t> x;
  std::vector<std::int32_t> y;
};

DatasetOptions team_of(unsigned threads) {
  DatasetOptions options;
  options.batch_size = kBatch;
  options.reserve_bytes = 0;
  options.gather_threads = threads;
  return options;
}

TEST(BusyCores, PreloadedBatchesAreTheQuietMachinesBitForBit) {
  const Rows rows;
  const HostTensor<const std::uint8_t> x(rows.x.data(), {kRows, kRowElements});
  const HostTensor<const std::int32_t> y(rows.y.data(), {kRows});
  resident::DeviceDataset<HostSpace, std::uint8_t, std::int32_t> quiet(HostSpace{}, team_of(1), x,
                                                                       y);
  const auto expected = batches_of(quiet);
  const BusyCores load;
  for (const unsigned threads : {0u, 2u, 4u}) {
    resident::DeviceDataset<HostSpace, std::uint8_t, std::int32_t> ds(HostSpace{}, team_of(threads),
                                                                      x, y);
    EXPECT_EQ(batches_of(ds), expected) << threads << " threads";
  }
}

TEST(BusyCores, StreamedBatchesAreTheQuietMachinesBitForBit) {
  const Rows rows;
  const HostTensor<const std::uint8_t> x(rows.x.data(), {kRows, kRowElements});
  const HostTensor<const std::int32_t> y(rows.y.data(), {kRows});
  // Budgets that hold the chunk slots and the gather ring, not the data (3 MiB).
  const auto budget = [] { return HostSpace::with_budget(std::size_t{5} << 20); };
  resident::StreamingDataset<HostSpace, std::uint8_t, std::int32_t> quiet(budget(), team_of(1), x,
                                                                          y);
  const auto expected = batches_of(quiet);
  const BusyCores load;
  resident::StreamingDataset<HostSpace, std::uint8_t, std::int32_t> ds(budget(), team_of(0), x, y);
  EXPECT_EQ(batches_of(ds), expected);
}

}  // namespace
