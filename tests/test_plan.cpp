// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <cstdint>
#include <sstream>
#include <vector>

#include "resident/host_space.hpp"
#include "resident/plan.hpp"

namespace {

using resident::DatasetOptions;
using resident::HostSpace;
using resident::HostTensor;

TEST(Plan, CountsAlignedBytesAndBatchesWithoutAllocating) {
  const HostSpace space = HostSpace::with_budget(10000);
  const std::vector<float> x(100 * 3);     // 1200 bytes, next field at 1280
  const std::vector<std::int32_t> y(100);  // 400 bytes
  DatasetOptions options;
  options.batch_size = 32;
  options.remainder = resident::Remainder::drop;
  const auto verdict = resident::plan(space, options, HostTensor<const float>(x.data(), {100, 3}),
                                      HostTensor<const std::int32_t>(y.data(), {100}));
  EXPECT_EQ(verdict.needed_bytes, 1280u + 400u);
  EXPECT_EQ(verdict.free_bytes, 10000u);
  EXPECT_EQ(verdict.total_bytes, 10000u);
  EXPECT_EQ(verdict.reserve_bytes, 0u);  // a budget has no default reserve
  EXPECT_EQ(verdict.num_rows, 100u);
  EXPECT_EQ(verdict.num_batches, 3u);
  EXPECT_TRUE(verdict.fits);
  EXPECT_EQ(verdict.space_name, "host");
  EXPECT_EQ(space.used_bytes(), 0u);
  std::ostringstream printed;
  printed << verdict;
  EXPECT_EQ(printed.str(), verdict.reason);
  EXPECT_NE(verdict.reason.find("fits: needs 1.6 KiB on host"), std::string::npos)
      << verdict.reason;
}

TEST(Plan, ReserveDecidesAtTheExactByte) {
  const HostSpace space = HostSpace::with_budget(5000);
  const std::vector<std::uint8_t> x(1000);
  const HostTensor<const std::uint8_t> tensor(x.data(), {1000});
  DatasetOptions options;
  options.reserve_bytes = 4000;
  EXPECT_TRUE(resident::plan(space, options, tensor).fits);
  options.reserve_bytes = 4001;
  const auto refused = resident::plan(space, options, tensor);
  EXPECT_FALSE(refused.fits);
  EXPECT_EQ(refused.reason, refused.refusal().what());
  EXPECT_EQ(refused.refusal().needed_bytes(), 1000u);
  EXPECT_EQ(refused.refusal().reserve_bytes(), 4001u);
}

TEST(Plan, DefaultReserveComesFromTheSpace) {
  const std::vector<std::uint8_t> x(10);
  const auto verdict =
      resident::plan(HostSpace{}, DatasetOptions{}, HostTensor<const std::uint8_t>(x.data(), {10}));
  EXPECT_EQ(verdict.reserve_bytes, HostSpace{}.default_reserve_bytes());
}

}  // namespace
