// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "resident/error.hpp"
#include "resident/shape.hpp"

namespace {

using resident::InvalidArgument;
using resident::Shape;

TEST(Shape, AcceptsMixedIntegerExtentsWithoutNarrowingCasts) {
  const int rows = 60000;
  const std::int64_t height = 28;
  const Shape shape{rows, height, 28u};
  EXPECT_EQ(shape.rank(), 3u);
  EXPECT_EQ(shape.size(), 3u);
  EXPECT_EQ(shape[0], 60000u);
  EXPECT_EQ(shape.elements(), 60000u * 28u * 28u);
  EXPECT_EQ(shape.to_string(), "(60000, 28, 28)");
  EXPECT_EQ(Shape{5}.to_string(), "(5,)");
}

TEST(Shape, DropFrontAndPrependAreInverse) {
  const Shape shape{7, 3, 2};
  EXPECT_EQ(shape.drop_front(), (Shape{3, 2}));
  EXPECT_EQ(shape.drop_front().prepend(7), shape);
  EXPECT_EQ(Shape{}.elements(), 1u);
  EXPECT_NE(shape, (Shape{7, 3}));
}

TEST(Shape, RefusesNegativeExtent) {
  try {
    const Shape shape{4, -2};
    FAIL() << "accepted " << shape.to_string();
  } catch (const InvalidArgument& error) {
    EXPECT_NE(std::string(error.what()).find("extent 1 is -2"), std::string::npos) << error.what();
  }
}

TEST(Shape, RefusesElementCountOverflowEvenWithZeroRows) {
  constexpr auto huge = std::numeric_limits<std::size_t>::max() / 2;
  EXPECT_THROW((Shape{huge, 3}), InvalidArgument);
  // No rows, but one row would not be addressable: refused too.
  EXPECT_THROW((Shape{std::size_t{0}, huge, std::size_t{4}}), InvalidArgument);
  EXPECT_NO_THROW((Shape{std::size_t{0}, huge}));
}

TEST(Shape, RunTimeRankIsBounded) {
  EXPECT_EQ(Shape(std::vector<std::size_t>{2, 3}), (Shape{2, 3}));
  EXPECT_THROW(Shape(std::vector<std::size_t>(Shape::max_rank + 1, 1)), InvalidArgument);
}

}  // namespace
