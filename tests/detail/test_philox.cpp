// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// Philox4x32-10 (detail/philox.hpp), the counter-based generator of the augmentations' draws,
// against Random123's known answers.
#include <gtest/gtest.h>

#include <cstdint>

#include "resident/detail/philox.hpp"

namespace {

using resident::detail::PhiloxWords;

// Random123's known-answer vectors for Philox4x32-10.
TEST(Philox, MatchesTheKnownAnswers) {
  struct Vector {
    PhiloxWords counter;
    std::uint64_t key;
    PhiloxWords expected;
  };
  const Vector vectors[] = {
      {{{0, 0, 0, 0}}, 0, {{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}}},
      {{{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}},
       0xffffffffffffffffULL,
       {{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}}},
      {{{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}},
       0x299f31d0a4093822ULL,
       {{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}}},
  };
  for (const Vector& vector : vectors) {
    const PhiloxWords got = resident::detail::philox4x32(vector.counter, vector.key);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(got.word[i], vector.expected.word[i]) << "word " << i;
  }
}

}  // namespace
