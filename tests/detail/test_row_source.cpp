// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// Where a streamed field's rows come from (detail/stream/row_source.hpp): memory a source owns
// is shared by its copies, released by the last, and counted; borrowed memory and files count
// nothing.
#include <gtest/gtest.h>

#include <cstddef>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "resident/detail/stream/row_source.hpp"
#include "support/temp_npy.hpp"

namespace {

using resident::detail::RowSource;
using resident::testing::TempNpy;

TEST(RowSource, OwnedMemoryIsSharedByCopiesAndCounted) {
  std::weak_ptr<const std::byte> watch;
  {
    std::shared_ptr<std::byte> bytes(new std::byte[24], std::default_delete<std::byte[]>());
    for (int b = 0; b < 24; ++b) bytes.get()[b] = static_cast<std::byte>(b);
    watch = bytes;
    std::optional<RowSource> source = RowSource::owned_memory(std::move(bytes), 3, 8, 24);
    const RowSource copy = *source;  // NOLINT: the copy is the point
    source.reset();
    EXPECT_FALSE(watch.expired()) << "a copy keeps the memory alive";
    EXPECT_EQ(copy.owned_bytes(), 24u);
    EXPECT_EQ(copy.rows(), 3u);
    ASSERT_NE(copy.memory(), nullptr);
    std::byte row[8];
    copy.read(2, 1, row);
    EXPECT_EQ(row[0], std::byte{16});
  }
  EXPECT_TRUE(watch.expired()) << "the last copy releases it";

  const std::vector<float> borrowed(6);
  EXPECT_EQ(RowSource::memory(borrowed.data(), 3, 8).owned_bytes(), 0u);
  const TempNpy file("row_source_file", borrowed, {3, 2});
  const auto open = std::make_shared<const resident::detail::ReadFile>(file.path);
  EXPECT_EQ(RowSource::file(open, 128, 3, 8).owned_bytes(), 0u);
}

}  // namespace
