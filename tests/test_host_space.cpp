// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "resident/host_space.hpp"
#include "resident/space_traits.hpp"

namespace {

using resident::CapacityError;
using resident::HostSpace;

static_assert(resident::is_memory_space_v<HostSpace>);
static_assert(!resident::is_device_accessible_v<HostSpace>);
static_assert(!resident::is_memory_space_v<int>);

TEST(HostSpace, CapacityComesFromTheOperatingSystem) {
  const HostSpace host;
  const auto capacity = host.capacity();
  EXPECT_GT(capacity.total_bytes, 0u);
  EXPECT_GT(capacity.free_bytes, 0u);
  EXPECT_LE(capacity.free_bytes, capacity.total_bytes);
  EXPECT_EQ(host.name(), "host");
  EXPECT_FALSE(host.has_budget());
  EXPECT_EQ(host.default_reserve_bytes(), std::size_t{256} << 20);
}

TEST(HostSpace, BudgetIsSharedByCopies) {
  const HostSpace space = HostSpace::with_budget(10000);
  const HostSpace copy = space;  // NOLINT(performance-unnecessary-copy-initialization)
  EXPECT_EQ(space, copy);
  EXPECT_NE(space, HostSpace::with_budget(10000));
  void* block = copy.allocate(4000);
  EXPECT_EQ(space.used_bytes(), 4000u);
  EXPECT_EQ(space.capacity().free_bytes, 6000u);
  EXPECT_EQ(space.capacity().total_bytes, 10000u);
  space.deallocate(block, 4000);
  EXPECT_EQ(copy.used_bytes(), 0u);
}

TEST(HostSpace, RefusesPastTheBudgetWithExactFigures) {
  const HostSpace space = HostSpace::with_budget(1000);
  void* held = space.allocate(600);
  try {
    (void)space.allocate(401);
    FAIL() << "the budget was overdrawn";
  } catch (const CapacityError& error) {
    EXPECT_EQ(error.needed_bytes(), 401u);
    EXPECT_EQ(error.free_bytes(), 400u);
    EXPECT_EQ(error.total_bytes(), 1000u);
  }
  EXPECT_EQ(space.used_bytes(), 600u);
  void* rest = space.allocate(400);  // exactly what is left
  EXPECT_EQ(space.capacity().free_bytes, 0u);
  space.deallocate(rest, 400);
  space.deallocate(held, 600);
  EXPECT_EQ(space.used_bytes(), 0u);
}

TEST(HostSpace, AllocationsAreAlignedAndZeroBytesIsNull) {
  const HostSpace host;
  for (const std::size_t bytes : {std::size_t{1}, std::size_t{1000}, std::size_t{3} << 20}) {
    void* block = host.allocate(bytes);
    ASSERT_NE(block, nullptr);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(block) % resident::field_alignment, 0u);
    std::memset(block, 0xab, bytes);  // the whole block is writable (ASan checks it)
    host.deallocate(block, bytes);
  }
  EXPECT_EQ(host.allocate(0), nullptr);
}

TEST(HostSpace, CopiesBothWays) {
  const HostSpace host;
  const std::vector<std::uint8_t> source{1, 2, 3, 4, 5};
  void* block = host.allocate(source.size());
  host.copy_from_host(block, source.data(), source.size(), host.create_stream());
  std::vector<std::uint8_t> back(source.size());
  host.copy_to_host(back.data(), block, back.size(), {});
  EXPECT_EQ(back, source);
  host.deallocate(block, source.size());
}

// Large copies into the space take the streaming-store path: the same bytes as memcpy at every
// size around the threshold and every misalignment, and nothing written past the end.
TEST(HostSpace, LargeCopiesEqualMemcpyAtEveryAlignmentAndSize) {
  constexpr std::size_t threshold = resident::detail::streaming_store_threshold;
  std::vector<unsigned char> source(threshold * 4 + 64);
  for (std::size_t i = 0; i < source.size(); ++i) source[i] = static_cast<unsigned char>(i * 131);
  std::vector<unsigned char> target(source.size() + 64);
  for (const std::size_t bytes : {std::size_t{0}, std::size_t{1}, threshold - 1, threshold,
                                  threshold + 1, threshold * 3 + 61}) {
    for (const std::size_t to_offset : {0, 1, 7, 15, 16}) {
      for (const std::size_t from_offset : {0, 3}) {
        std::fill(target.begin(), target.end(), 0xAB);
        HostSpace{}.copy_from_host(target.data() + to_offset, source.data() + from_offset, bytes,
                                   {});
        ASSERT_EQ(std::memcmp(target.data() + to_offset, source.data() + from_offset, bytes), 0)
            << bytes << " bytes at offsets " << to_offset << ", " << from_offset;
        for (std::size_t i = 0; i < to_offset; ++i) ASSERT_EQ(target[i], 0xAB) << i;
        for (std::size_t i = to_offset + bytes; i < target.size(); ++i)
          ASSERT_EQ(target[i], 0xAB) << "byte " << i << " past a copy of " << bytes;
      }
    }
  }
}

}  // namespace
