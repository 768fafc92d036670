// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <type_traits>

#include "resident/error.hpp"

namespace {

using resident::CapacityError;
using resident::CudaError;

constexpr std::size_t MiB = std::size_t{1} << 20;
constexpr std::size_t GiB = std::size_t{1} << 30;

TEST(Error, HierarchyDerivesFromStandardTypes) {
  static_assert(std::is_base_of_v<std::runtime_error, resident::Error>);
  static_assert(std::is_base_of_v<resident::Error, resident::InvalidArgument>);
  static_assert(std::is_base_of_v<resident::Error, CapacityError>);
  static_assert(std::is_base_of_v<resident::Error, CudaError>);
}

TEST(Error, FormatsBytesInBinaryUnits) {
  using resident::detail::format_bytes;
  EXPECT_EQ(format_bytes(0), "0 B");
  EXPECT_EQ(format_bytes(1023), "1023 B");
  EXPECT_EQ(format_bytes(1024), "1.0 KiB");
  EXPECT_EQ(format_bytes(512 * MiB), "512.0 MiB");
  EXPECT_EQ(format_bytes(80 * GiB), "80.0 GiB");
  EXPECT_EQ(format_bytes(1024 * 1024 - 1), "1.0 MiB");  // never "1024.0 KiB"
}

TEST(CapacityError, CarriesFiguresAndSaysWhatToDo) {
  const std::size_t needed = 3 * GiB + GiB / 5;  // 3.2 GiB
  const std::size_t free = 2 * GiB + GiB / 10 + 512 * MiB;
  const CapacityError error("cuda:0", needed, free, 80 * GiB, 512 * MiB);
  EXPECT_EQ(error.space_name(), "cuda:0");
  EXPECT_EQ(error.needed_bytes(), needed);
  EXPECT_EQ(error.free_bytes(), free);
  EXPECT_EQ(error.total_bytes(), 80 * GiB);
  EXPECT_EQ(error.reserve_bytes(), 512 * MiB);
  const std::string message = error.what();
  EXPECT_EQ(message.rfind(
                "resident: dataset needs 3.2 GiB on cuda:0 but only 2.1 GiB of 80.0 GiB is free "
                "after a 512.0 MiB reserve; use a compact dtype, shard it, or stream it",
                0),
            0u)
      << message;
  EXPECT_NE(message.find("needed " + std::to_string(needed) + " B"), std::string::npos);
}

TEST(CapacityError, ReserveLargerThanFreeLeavesNothingUsable) {
  const CapacityError error("host", 10, 100, 1000, 200);
  EXPECT_NE(std::string(error.what()).find("only 0 B of 1000 B is free after a 200 B reserve"),
            std::string::npos)
      << error.what();
}

TEST(CudaError, KeepsCodeCallAndPlace) {
  const CudaError error(2, "cudaMalloc(&p, n)", "space.hpp", 42, "resident: it failed");
  EXPECT_EQ(error.code(), 2);
  EXPECT_EQ(error.call(), "cudaMalloc(&p, n)");
  EXPECT_EQ(error.file(), "space.hpp");
  EXPECT_EQ(error.line(), 42);
  EXPECT_STREQ(error.what(), "resident: it failed");
}

}  // namespace
