// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0

// Rows filled in the background (detail/io/background_fill.hpp): a reader waits for its own
// bytes only, except the last, which are published only after the end's check; a failed check
// refuses every later read, the rows filled before it included.

#include <gtest/gtest.h>

#include <chrono>
#include <cstddef>
#include <cstring>
#include <memory>
#include <string>
#include <thread>

#include "resident/detail/io/background_fill.hpp"
#include "resident/error.hpp"

namespace {

using resident::FormatError;
using resident::detail::BackgroundFill;
using resident::detail::fill_step_bytes;

constexpr std::size_t total = fill_step_bytes + 1;  // two steps, the second of one byte

std::shared_ptr<std::byte> block() {
  return std::shared_ptr<std::byte>(new std::byte[total], std::default_delete<std::byte[]>());
}

void fill_ones(std::size_t, std::size_t bytes, std::byte* into) { std::memset(into, 1, bytes); }

// The end's check is slow and refuses: a reader of the last byte must see the refusal, never
// the byte, however early it asks.
TEST(BackgroundFill, TheLastBytesWaitForTheEndsCheck) {
  const auto filling = BackgroundFill::start(
      block(), 0, total, fill_ones,
      [] {
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        throw FormatError("a.npz", 0, "its CRC-32 is wrong");
      },
      "member 'y.npy' of a.npz", nullptr);
  EXPECT_THROW(filling->wait_until(total), FormatError);
  EXPECT_LT(filling->filled_bytes(), total);
  // Once refused, every read is, the first step's bytes included.
  EXPECT_THROW(filling->wait_until(1), FormatError);
  EXPECT_THROW(filling->wait_all(), FormatError);
}

TEST(BackgroundFill, AnEndThatChecksCleanServesEveryByte) {
  const auto memory = block();
  const auto filling = BackgroundFill::start(
      memory, 0, total, fill_ones, [] {}, "rows", nullptr);
  filling->wait_until(total);
  EXPECT_EQ(filling->filled_bytes(), total);
  EXPECT_EQ(memory.get()[total - 1], std::byte{1});
  filling->wait_all();
}

TEST(BackgroundFill, AnEmptyRangeIsCheckedToo) {
  const auto filling = BackgroundFill::start(
      block(), 0, 0, fill_ones, [] { throw FormatError("a.npz", 0, "its CRC-32 is wrong"); },
      "rows", nullptr);
  EXPECT_THROW(filling->wait_all(), FormatError);
}

}  // namespace
