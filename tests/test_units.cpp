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

}  // namespace
