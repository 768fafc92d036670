// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include "resident/version.hpp"

TEST(Version, HeaderMatchesTheCMakeProject) {
  EXPECT_EQ(RESIDENT_VERSION_MAJOR, RESIDENT_PROJECT_VERSION_MAJOR);
  EXPECT_EQ(RESIDENT_VERSION_MINOR, RESIDENT_PROJECT_VERSION_MINOR);
  EXPECT_EQ(RESIDENT_VERSION_PATCH, RESIDENT_PROJECT_VERSION_PATCH);
}
