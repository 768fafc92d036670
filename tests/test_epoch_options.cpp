// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// EpochOptions and Shuffle: the defaults, and that seed and epoch alone decide an order.
#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <vector>

#include "resident/device_dataset.hpp"
#include "resident/epoch_options.hpp"
#include "resident/host_space.hpp"

namespace {

using resident::EpochOptions;
using resident::HostSpace;
using resident::HostTensor;
using resident::Shuffle;

TEST(EpochOptions, DefaultsAreTheFirstEpochInOrder) {
  const EpochOptions options;
  EXPECT_EQ(options.seed, 0u);
  EXPECT_EQ(options.epoch, 0u);
  EXPECT_EQ(options.shuffle, Shuffle::none);
  const EpochOptions braced{7, 3, Shuffle::samples};  // the documented field order
  EXPECT_EQ(braced.seed, 7u);
  EXPECT_EQ(braced.epoch, 3u);
  EXPECT_EQ(braced.shuffle, Shuffle::samples);
}

// The first row of each batch of a Shuffle::batches epoch of `ds`, in epoch order.
template <class Dataset>
std::vector<std::int64_t> batch_starts(Dataset& ds, const EpochOptions& options) {
  std::vector<std::int64_t> starts;
  auto epoch = ds.epoch(options);
  for (std::size_t k = 0; k < epoch.size(); ++k)
    starts.push_back(std::get<0>(epoch.batch(k)).data()[0]);
  return starts;
}

TEST(EpochOptions, SeedAndEpochAloneDecideTheOrder) {
  std::vector<std::int64_t> ids(400);
  std::iota(ids.begin(), ids.end(), std::int64_t{0});
  resident::DatasetOptions options;
  options.batch_size = 10;
  resident::DeviceDataset<HostSpace, std::int64_t> ds(
      HostSpace{}, options, HostTensor<const std::int64_t>(ids.data(), {400}));
  const auto first = batch_starts(ds, {1, 0, Shuffle::batches});
  EXPECT_EQ(batch_starts(ds, {1, 0, Shuffle::batches}), first) << "reproducible";
  EXPECT_NE(batch_starts(ds, {1, 1, Shuffle::batches}), first) << "a new epoch";
  EXPECT_NE(batch_starts(ds, {2, 0, Shuffle::batches}), first) << "a new seed";
  std::vector<std::int64_t> in_order(40);
  for (std::size_t k = 0; k < in_order.size(); ++k) in_order[k] = static_cast<std::int64_t>(k * 10);
  EXPECT_EQ(batch_starts(ds, {9, 9, Shuffle::none}), in_order) << "none ignores the seed";
}

}  // namespace
