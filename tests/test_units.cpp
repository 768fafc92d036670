// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <cstddef>

#include "resident/units.hpp"

namespace {

TEST(Units, ByteLiteralsAreBinaryUnits) {
  using namespace resident::literals;
  static_assert(3_KiB == 3072);
  static_assert(2_MiB == std::size_t{2} << 20);
  static_assert(2_GiB == std::size_t{2} << 30);
}

// The literals are ordinary size_t values at run time too, reached through `using namespace
// resident;` as well as through resident::literals.
TEST(Units, LiteralsAreByteCountsThroughEitherNamespace) {
  using namespace resident;
  const std::size_t reserve = 512_MiB;
  EXPECT_EQ(reserve, std::size_t{536870912});
  EXPECT_EQ(1_KiB, std::size_t{1024});
  EXPECT_EQ(0_GiB, std::size_t{0});
  EXPECT_EQ(1_GiB, 1024 * 1_MiB);
  EXPECT_EQ(1_MiB, 1024 * 1_KiB);
  EXPECT_EQ(3_GiB + 5_KiB, (std::size_t{3} << 30) + 5120);
}

}  // namespace
