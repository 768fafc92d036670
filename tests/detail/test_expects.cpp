// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// RESIDENT_EXPECTS and RESIDENT_INVARIANT (detail/expects.hpp): a refused argument's message is
// the caller's sentence alone, a broken invariant's names the place in resident's sources.
#include <gtest/gtest.h>

#include <string>

#include "resident/detail/expects.hpp"
#include "resident/error.hpp"

namespace {

void expect_positive(int value) {
  RESIDENT_EXPECTS(value > 0, "value is " + std::to_string(value) + "; give a positive one");
}

// The line of the check below, for the message to name.
constexpr int invariant_line = __LINE__ + 2;
void keep_positive(int value) {
  RESIDENT_INVARIANT(value > 0, "value is " + std::to_string(value));
}

TEST(Expects, RefusesWithTheCallersSentenceAlone) {
  EXPECT_NO_THROW(expect_positive(1));
  try {
    expect_positive(-2);
    FAIL() << "a false condition passed";
  } catch (const resident::InvalidArgument& error) {
    EXPECT_STREQ(error.what(), "resident: value is -2; give a positive one")
        << "no file, line or condition: the caller acts on the sentence";
  }
}

TEST(Expects, BuildsTheMessageOnlyOnFailure) {
  int built = 0;
  const auto message = [&built] {
    ++built;
    return std::string("never read");
  };
  RESIDENT_EXPECTS(true, message());
  RESIDENT_INVARIANT(true, message());
  EXPECT_EQ(built, 0);
}

TEST(Invariant, NamesTheFileTheLineAndTheCondition) {
  EXPECT_NO_THROW(keep_positive(1));
  try {
    keep_positive(0);
    FAIL() << "a broken invariant passed";
  } catch (const resident::InvalidArgument& error) {
    FAIL() << "a broken invariant is resident's bug, not an invalid argument: " << error.what();
  } catch (const resident::Error& error) {
    const std::string message = error.what();
    const std::string place = std::string(__FILE__) + ":" + std::to_string(invariant_line);
    for (const std::string& part :
         {std::string("resident: internal invariant broken at "), place, std::string("value > 0"),
          std::string("value is 0"), std::string("a bug in resident")})
      EXPECT_NE(message.find(part), std::string::npos) << part << " not in: " << message;
  }
}

}  // namespace
