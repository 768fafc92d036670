// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// The host's memory as the library counts it (detail/host_memory.hpp): the figure the
// environment sets overrides the system's, and values that are not a number are ignored.
#include <gtest/gtest.h>

#include <cstddef>

#include "resident/detail/host_memory.hpp"
#include "support/host_available.hpp"

namespace {

using resident::testing::HostAvailable;

TEST(HostAvailableBytes, TheEnvironmentOverridesTheSystemsFigure) {
  {
    const HostAvailable tiny("12345");
    EXPECT_EQ(resident::detail::host_available_bytes(), 12345u);
  }
  {
    const HostAvailable zero("0");
    EXPECT_EQ(resident::detail::host_available_bytes(), 0u);
  }
  const std::size_t system = resident::detail::host_capacity().free_bytes;
  EXPECT_GT(system, 0u);
  for (const char* ignored : {"", "junk", "12k", "-1", "99999999999999999999999"}) {
    const HostAvailable not_a_number(ignored);
    EXPECT_GT(resident::detail::host_available_bytes(), 0u) << ignored;
    EXPECT_NE(resident::detail::host_available_bytes(), 12345u) << ignored;
  }
}

}  // namespace
