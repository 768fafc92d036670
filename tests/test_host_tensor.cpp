// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <vector>

#include "resident/error.hpp"
#include "resident/host_tensor.hpp"

namespace {

using resident::HostTensor;
using resident::InvalidArgument;

TEST(HostTensor, ReportsShapeSizeAndBytes) {
  std::vector<float> data(std::size_t{10} * 4 * 2);
  const HostTensor<const float> tensor(data.data(), {10, 4, 2});
  EXPECT_EQ(tensor.data(), data.data());
  EXPECT_EQ(tensor.rows(), 10u);
  EXPECT_EQ(tensor.shape(), (resident::Shape{10, 4, 2}));
  EXPECT_EQ(tensor.row_shape(), (resident::Shape{4, 2}));
  EXPECT_EQ(tensor.size(), 80u);
  EXPECT_EQ(tensor.bytes(), 80u * sizeof(float));
  EXPECT_EQ(tensor.row_elements(), 8u);
  EXPECT_EQ(tensor.row_bytes(), 32u);
}

TEST(HostTensor, MutableViewConvertsToConstView) {
  std::vector<std::int32_t> labels(5);
  const HostTensor<std::int32_t> writable(labels.data(), {5});
  const HostTensor<const std::int32_t> readonly = writable;
  EXPECT_EQ(readonly.data(), labels.data());
  EXPECT_EQ(readonly.rows(), 5u);
}

TEST(HostTensor, RefusesRankZero) {
  const float value = 1.0f;
  EXPECT_THROW(HostTensor<const float>(&value, resident::Shape{}), InvalidArgument);
}

TEST(HostTensor, RefusesNullDataUnlessEmpty) {
  EXPECT_THROW(HostTensor<const float>(nullptr, {3, 2}), InvalidArgument);
  const HostTensor<const float> empty(nullptr, {0, 2});
  EXPECT_EQ(empty.bytes(), 0u);
  EXPECT_EQ(HostTensor<const float>{}.rows(), 0u);
}

TEST(HostTensor, RefusesByteSizeOverflow) {
  const double value = 0;
  const auto rows = std::numeric_limits<std::size_t>::max() / 4;
  try {
    (void)HostTensor<const double>(&value, {rows});
    FAIL() << "a tensor of " << rows << " doubles was accepted";
  } catch (const InvalidArgument& error) {
    EXPECT_NE(std::string(error.what()).find("overflows"), std::string::npos) << error.what();
  }
}

}  // namespace
