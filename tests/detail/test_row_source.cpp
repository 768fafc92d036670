// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// Where a streamed field's rows come from (detail/stream/row_source.hpp): memory a source owns
// is shared by its copies, released by the last, and counted; borrowed memory and files count
// nothing.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
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

// A selection reads its rows of the base, from memory or from a file (runs of consecutive
// rows at once); a selection of a selection selects from the first one's base; both keep the
// base's bytes alive and answer as a source of their own rows.
TEST(RowSource, ASelectionReadsItsRowsOfTheBase) {
  std::vector<std::int32_t> values(40);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<std::int32_t>(i);
  const TempNpy file("row_source_selected", values, {20, 2});
  const auto open = std::make_shared<const resident::detail::ReadFile>(file.path);
  const auto rows = std::make_shared<const std::vector<std::size_t>>(
      std::vector<std::size_t>{19, 3, 4, 5, 5, 0, 1});
  const auto every_other =
      std::make_shared<const std::vector<std::size_t>>(std::vector<std::size_t>{0, 2, 4, 6});
  for (const RowSource& base :
       {RowSource::memory(values.data(), 20, 8), RowSource::file(open, 128, 20, 8)}) {
    const RowSource selected = RowSource::selected(base, rows);
    EXPECT_EQ(selected.rows(), 7u);
    EXPECT_EQ(selected.row_bytes(), 8u);
    EXPECT_TRUE(selected.selects());
    EXPECT_EQ(selected.memory(), nullptr) << "its rows are no run of memory";
    EXPECT_EQ(selected.in_memory(), base.memory() != nullptr);
    std::vector<std::int32_t> read(std::size_t{2} * 7);
    selected.read(0, 7, reinterpret_cast<std::byte*>(read.data()));  // NOLINT: the rows' bytes
    EXPECT_EQ(read, (std::vector<std::int32_t>{38, 39, 6, 7, 8, 9, 10, 11, 10, 11, 0, 1, 2, 3}));
    const std::size_t picked[] = {6, 0, 2};
    std::vector<std::int32_t> gathered(std::size_t{6});
    selected.gather(picked, 3, reinterpret_cast<std::byte*>(gathered.data()));  // NOLINT
    EXPECT_EQ(gathered, (std::vector<std::int32_t>{2, 3, 38, 39, 8, 9}));
    const RowSource twice = RowSource::selected(selected, every_other);
    EXPECT_EQ(twice.rows(), 4u);
    std::vector<std::int32_t> second(std::size_t{6});
    twice.read(1, 3, reinterpret_cast<std::byte*>(second.data()));  // NOLINT
    EXPECT_EQ(second, (std::vector<std::int32_t>{8, 9, 10, 11, 2, 3}));
  }
}

// A gather of more rows than a selection maps at once serves every row, runs that cross from
// one block to the next among them, from memory and from a file.
TEST(RowSource, ASelectionGathersListsLongerThanABlock) {
  std::vector<std::int32_t> values(1000);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<std::int32_t>(i * 3);
  const TempNpy file("row_source_long_gather", values, {1000});
  const auto open = std::make_shared<const resident::detail::ReadFile>(file.path);
  auto reversed = std::make_shared<std::vector<std::size_t>>(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) (*reversed)[i] = values.size() - 1 - i;
  for (const RowSource& base :
       {RowSource::memory(values.data(), 1000, 4), RowSource::file(open, 128, 1000, 4)}) {
    const RowSource selected = RowSource::selected(base, reversed);
    for (const std::size_t count : {std::size_t{255}, std::size_t{256}, std::size_t{257},
                                    std::size_t{700}, std::size_t{1000}}) {
      std::vector<std::size_t> picked(count);  // runs of 300 rows, then every third row
      for (std::size_t i = 0; i < count; ++i) picked[i] = i < 300 ? 100 + i : i * 3 % 1000;
      std::vector<std::int32_t> gathered(count);
      selected.gather(picked.data(), count,
                      reinterpret_cast<std::byte*>(gathered.data()));  // NOLINT
      for (std::size_t i = 0; i < count; ++i)
        ASSERT_EQ(gathered[i], values[999 - picked[i]]) << "row " << i << " of " << count;
    }
  }
}

}  // namespace
