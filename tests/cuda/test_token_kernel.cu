// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// Token datasets on the device, compiled by nvcc so that their gathers launch the kernels: the
// host suite's cases (every order, remainder policy and shard count; the permutation's order)
// against the same reference, and the windows' unaligned targets copied by the narrower words.
#include <gtest/gtest.h>

#include <cstdint>

#include "resident/resident.hpp"
#include "support/spaces.hpp"
#include "support/token_checks.hpp"

namespace {

using resident::CudaHostPinnedSpace;
using resident::CudaSpace;

class DeviceTokens : public ::testing::Test {
 protected:
  void SetUp() override { resident::testing::skip_unless_usable<CudaSpace>(); }
};

TEST_F(DeviceTokens, EveryOrderRemainderAndShardServesEachWindowOnceWithYOneTokenOn) {
  resident::testing::check_token_orders<CudaSpace, std::uint16_t>(CudaSpace{0});
  resident::testing::check_token_orders<CudaHostPinnedSpace, std::uint16_t>(CudaHostPinnedSpace{});
}

TEST_F(DeviceTokens, EveryTokenTypeFollowsThePermutation) {
  resident::testing::check_token_reference_order<CudaSpace, std::uint16_t>(CudaSpace{0});
  resident::testing::check_token_reference_order<CudaSpace, std::uint32_t>(CudaSpace{0});
  resident::testing::check_token_reference_order<CudaSpace, std::int32_t>(CudaSpace{0});
}

}  // namespace
