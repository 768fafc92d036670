// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// The umbrella header: it alone is included here, and a name from each part of the API works.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <numeric>
#include <string>
#include <type_traits>
#include <vector>

#include "resident/resident.hpp"

namespace {

TEST(Resident, TheUmbrellaHeaderBringsEveryPart) {
  // version, config, space_traits, error
  static_assert(RESIDENT_VERSION_MAJOR >= 0 && (RESIDENT_HAS_CUDA == 0 || RESIDENT_HAS_CUDA == 1));
  static_assert(resident::is_memory_space_v<resident::HostSpace>);
  static_assert(std::is_base_of_v<resident::Error, resident::FormatError>);
  // units, memory_space, shape, host_tensor
  using namespace resident::literals;
  const resident::HostSpace space = resident::HostSpace::with_budget(1_MiB);
  std::vector<std::int32_t> ids(20);
  std::iota(ids.begin(), ids.end(), 0);
  const resident::HostTensor<const std::int32_t> tensor(ids.data(), resident::Shape{20});
  // dataset_options, shard, progress, plan
  resident::DatasetOptions options;
  options.batch_size = 8;
  options.remainder = resident::Remainder::pad;
  options.shard = resident::Shard{0, 1, 0};
  std::size_t reports = 0;
  options.on_progress = [&reports](const resident::Progress& progress) {
    ++reports;
    return progress.fraction() <= 1.0;
  };
  EXPECT_TRUE(resident::plan(space, options, tensor).fits);
  // device_dataset, batch_view
  resident::DeviceDataset<resident::HostSpace, std::int32_t> ds(space, options, tensor);
  EXPECT_EQ(reports, 1u);
  const resident::BatchView<const std::int32_t> last = std::get<0>(ds.batch(2));
  EXPECT_EQ(last.valid_rows(), 4u);
  // epoch, convert, permutation
  auto epoch = ds.epoch({1, 0, resident::Shuffle::samples},
                        resident::convert<0>(resident::Normalize(1, 100)));
  const resident::Permutation order(20, 1, 0);
  EXPECT_EQ(std::get<0>(epoch.batch(0)).data()[0], static_cast<float>(order(0)) + 100);
  // npy, load_dataset, streaming_dataset, dataset
  const std::string path =
      ::testing::TempDir() + "resident_umbrella_" + std::to_string(::getpid()) + ".npy";
  resident::npy::save(path, tensor);
  EXPECT_EQ(resident::npy::load(path).dtype(), resident::npy::DType::i4);
  const auto loaded =
      resident::load_dataset<resident::HostSpace, std::int32_t>(space, options, path);
  std::remove(path.c_str());
  resident::StreamingDataset<resident::HostSpace, std::int32_t> streamed(space, options, tensor);
  auto made = resident::make_dataset(space, options, tensor);
  EXPECT_EQ(loaded.num_batches(), 3u);
  EXPECT_EQ(streamed.num_batches(), 3u);
  EXPECT_EQ(made.num_batches(), 3u);
}

}  // namespace
