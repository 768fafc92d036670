// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// The g++ half of the mixed program (see mixed_units.hpp): it reads the dataset and the epoch
// the nvcc half made, makes an epoch of the same type itself (its kernels are the nvcc half's),
// and is refused an epoch type whose kernels no nvcc unit made.

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "cuda/mixed_units.hpp"
#include "support/spaces.hpp"

namespace {

using mixed_units::NormalizedEpoch;

template <class T>
std::vector<T> to_host(const resident::BatchView<const T>& view) {
  std::vector<T> host(view.size());
  RESIDENT_CUDA_TRY(cudaMemcpy(host.data(), view.data(), view.bytes(), cudaMemcpyDeviceToHost));
  return host;
}

// Every batch of `epoch` holds its rows normalised, each row once; returns the rows in order.
std::vector<std::int32_t> read(NormalizedEpoch& epoch) {
  std::vector<std::int32_t> order;
  for (const auto& [features, labels] : epoch) {
    RESIDENT_CUDA_TRY(cudaStreamSynchronize(epoch.dataset().stream()));
    const auto x = to_host(features);
    const auto y = to_host(labels);
    for (std::size_t r = 0; r < y.size(); ++r) {
      for (std::size_t e = 0; e < mixed_units::width; ++e) {
        const auto value =
            static_cast<float>(static_cast<std::size_t>(y[r]) * mixed_units::width + e);
        EXPECT_EQ(x[r * mixed_units::width + e], mixed_units::normalize(value, e));
      }
      order.push_back(y[r]);
    }
  }
  return order;
}

TEST(MixedUnits, AnEpochMadeByTheNvccUnitGathersInTheGxxUnitAndSoDoItsOwn) {
  resident::testing::skip_unless_usable<resident::CudaSpace>();
  if (::testing::Test::IsSkipped() || ::testing::Test::HasFatalFailure()) return;
  mixed_units::Dataset ds = mixed_units::make_dataset();  // made by nvcc, moved here
  NormalizedEpoch handed = mixed_units::make_epoch(ds, 3);
  const std::vector<std::int32_t> order = read(handed);
  ASSERT_EQ(order.size(), mixed_units::rows);
  std::vector<bool> seen(mixed_units::rows, false);
  for (const std::int32_t row : order) seen.at(static_cast<std::size_t>(row)) = true;
  EXPECT_EQ(std::count(seen.begin(), seen.end(), true), static_cast<long>(mixed_units::rows));

  // The same type made here: the nvcc unit's kernels gather it, in the same order.
  NormalizedEpoch own =
      ds.epoch({1, 3, resident::Shuffle::samples}, resident::convert<0>(mixed_units::normalize));
  EXPECT_EQ(read(own), order);
}

TEST(MixedUnits, AnEpochTypeNoNvccUnitMadeIsRefusedWhenMade) {
  resident::testing::skip_unless_usable<resident::CudaSpace>();
  if (::testing::Test::IsSkipped() || ::testing::Test::HasFatalFailure()) return;
  mixed_units::Dataset ds = mixed_units::make_dataset();
  try {
    (void)ds.epoch({1, 0, resident::Shuffle::samples},
                   resident::convert<1>(mixed_units::normalize));
    FAIL() << "an epoch whose kernels no unit compiled was made";
  } catch (const resident::InvalidArgument& error) {
    EXPECT_NE(std::string(error.what()).find("nvcc"), std::string::npos) << error.what();
  }
  // Its zero-copy epochs need no kernels.
  auto plain = ds.epoch({1, 0, resident::Shuffle::batches});
  EXPECT_FALSE(plain.gathers());
  EXPECT_EQ(std::get<1>(plain.batch(0)).rows(), mixed_units::batch_size);
}

}  // namespace
