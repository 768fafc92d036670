// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <limits>
#include <numeric>
#include <type_traits>
#include <vector>

#include "resident/batch_view.hpp"
#include "resident/error.hpp"

namespace {

using resident::BatchView;
using resident::Shape;

static_assert(std::is_trivially_copyable_v<BatchView<const float>>);
static_assert(std::is_trivially_copyable_v<BatchView<int>>);

TEST(BatchView, ReportsRowsSizeBytesAndShape) {
  std::vector<float> data(std::size_t{6} * 4 * 2);
  const BatchView<const float> view(data.data(), 6, Shape{4, 2});
  EXPECT_EQ(view.data(), data.data());
  EXPECT_EQ(view.rows(), 6u);
  EXPECT_EQ(view.row_shape(), (Shape{4, 2}));
  EXPECT_EQ(view.row_elements(), 8u);
  EXPECT_EQ(view.size(), 48u);
  EXPECT_EQ(view.bytes(), 48u * sizeof(float));
  EXPECT_EQ(view.shape(), (Shape{6, 4, 2}));
  EXPECT_EQ(view.end() - view.begin(), 48);
  EXPECT_EQ(view.row(2), data.data() + 16);
  EXPECT_FALSE(view.empty());
  EXPECT_TRUE(BatchView<const float>{}.empty());
}

TEST(BatchView, SubviewIsAPointerOffset) {
  std::vector<int> data(std::size_t{10} * 3);
  const BatchView<int> view(data.data(), 10, Shape{3});
  const auto part = view.subview(4, 5);
  EXPECT_EQ(part.data(), data.data() + 12);
  EXPECT_EQ(part.rows(), 5u);
  EXPECT_EQ(part.row_shape(), view.row_shape());
  const BatchView<const int> readonly = part;
  EXPECT_EQ(readonly.data(), part.data());
}

TEST(BatchView, RangesPastTheEndAreClampedToTheView) {
  std::vector<int> data(std::size_t{10} * 3);
  const BatchView<int> view(data.data(), 10, Shape{3});
  const auto tail = view.subview(8, 5);  // rows 8 and 9 are there, 10 to 12 are not
  EXPECT_EQ(tail.data(), data.data() + 24);
  EXPECT_EQ(tail.rows(), 2u);
  EXPECT_EQ(tail.valid_rows(), 2u);
  const auto none = view.subview(11, 3);
  EXPECT_EQ(none.rows(), 0u);
  EXPECT_EQ(none.end(), data.data() + data.size()) << "an empty view at the end, not past it";
  const std::size_t huge = std::numeric_limits<std::size_t>::max();
  EXPECT_EQ(view.subview(huge, huge).rows(), 0u);
  EXPECT_EQ(view.subview(3, huge).rows(), 7u);
  EXPECT_EQ(view.with_valid_rows(500).valid_rows(), 10u);
  EXPECT_EQ(view.with_valid_rows(4).valid_rows(), 4u);
}

#if __has_include(<cuda/std/mdspan>)
TEST(BatchView, MdspanIndexesRowMajor) {
  std::vector<float> data(std::size_t{5} * 3 * 2);
  std::iota(data.begin(), data.end(), 0.0f);
  const BatchView<const float> view(data.data(), 5, Shape{3, 2});
  const auto grid = view.to_mdspan<3>();
  EXPECT_EQ(grid.extent(0), 5u);
  EXPECT_EQ(grid.extent(1), 3u);
  EXPECT_EQ(grid.extent(2), 2u);
  for (std::size_t r = 0; r < 5; ++r)
    for (std::size_t i = 0; i < 3; ++i)
      for (std::size_t j = 0; j < 2; ++j) EXPECT_EQ(grid(r, i, j), data[(r * 3 + i) * 2 + j]);
}

TEST(BatchView, MdspanOfWrongRankThrowsNamingTheRightOne) {
  std::vector<float> data(std::size_t{4} * 3);
  const BatchView<const float> view(data.data(), 4, Shape{3});
  try {
    (void)view.to_mdspan<3>();
    FAIL() << "to_mdspan<3> accepted a rank-2 batch";
  } catch (const resident::InvalidArgument& error) {
    EXPECT_NE(std::string(error.what()).find("use to_mdspan<2>()"), std::string::npos)
        << error.what();
  }
}
#endif

}  // namespace
