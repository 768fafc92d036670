// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0

// Rows filled in the background (detail/io/background_fill.hpp): a reader waits for its own
// bytes only, except the last, which are published only after the end's check; a failed check
// refuses every later read, the rows filled before it included.

#include <gtest/gtest.h>

#include <chrono>
#include <cstddef>
#include <cstring>
#include <future>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>

#include "resident/detail/io/background_fill.hpp"
#include "resident/error.hpp"
#include "resident/progress.hpp"

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

// What `wait` throws (any exception), or "nothing".
template <class Wait>
std::string thrown(Wait&& wait) {
  try {
    wait();
  } catch (const std::exception& error) {
    return error.what();
  }
  return "nothing";
}

// Fills that report to one progress: when the callback throws on one fill's report, a reader of
// the other gets that exception too (not a Cancelled that tells it to return true), and a
// callback that returns false cancels both. The first fill's step waits until the second's
// report has stopped the callback, so that the first learns of the stop from the progress.
TEST(BackgroundFill, EveryFillOfAProgressEndsWithWhatTheCallbackThrew) {
  for (const bool throws : {true, false}) {
    SCOPED_TRACE(throws ? "the callback throws" : "the callback returns false");
    std::promise<void> stopped;
    auto stopped_once = stopped.get_future().share();
    const auto progress = std::make_shared<resident::detail::FillProgress>(
        2 * total, [&, throws](const resident::Progress&) -> bool {
          stopped.set_value();
          if (throws) throw std::runtime_error("the callback's error");
          return false;
        });
    const auto first = BackgroundFill::start(
        block(), 0, total,
        [stopped_once](std::size_t, std::size_t bytes, std::byte* into) {
          stopped_once.wait();
          std::memset(into, 1, bytes);
        },
        [] {}, "member 'x.npy' of a.npz", progress);
    const auto second = BackgroundFill::start(
        block(), 0, total, fill_ones, [] {}, "member 'y.npy' of a.npz", progress);
    const std::string expected = throws ? "the callback's error" : "cancelled by the progress";
    for (const auto* filling : {first.get(), second.get()}) {
      EXPECT_NE(thrown([&] { filling->wait_until(total); }).find(expected), std::string::npos);
      EXPECT_NE(thrown([&] { filling->wait_all(); }).find(expected), std::string::npos);
    }
    // The second fill's first step was filled before its report stopped the callback: its rows
    // stay served.
    EXPECT_NO_THROW(second->wait_until(1));
  }
}

}  // namespace
