// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// config.hpp's two detection macros: RESIDENT_HAS_CUDA (is the CUDA runtime available to link?)
// and RESIDENT_HOST_DEVICE (is nvcc compiling this translation unit?).
#include <gtest/gtest.h>

#include <string>

// The value the build gives (the CMake target defines it from RESIDENT_ENABLE_CUDA); then,
// with it undefined, the one config.hpp works out from the include path, as it does without
// CMake. This translation unit includes no other header of resident, so nothing else sees the
// second value.
constexpr int kBuildHasCuda = RESIDENT_HAS_CUDA;
#undef RESIDENT_HAS_CUDA
#include "resident/config.hpp"
constexpr int kDetectedHasCuda = RESIDENT_HAS_CUDA;

#if __has_include(<cuda_runtime_api.h>)
constexpr int kRuntimeHeaderFound = 1;
#else
constexpr int kRuntimeHeaderFound = 0;
#endif

#define RESIDENT_TEST_SPELLED(...) #__VA_ARGS__
#define RESIDENT_TEST_SPELL(macro) RESIDENT_TEST_SPELLED(macro)

namespace {

RESIDENT_HOST_DEVICE constexpr int twice(int value) { return 2 * value; }

TEST(Config, TheBuildDefinesHasCudaFromResidentEnableCuda) {
  EXPECT_EQ(kBuildHasCuda, RESIDENT_TEST_ENABLE_CUDA);
}

TEST(Config, WithoutTheBuildHasCudaFollowsTheIncludePath) {
  EXPECT_EQ(kDetectedHasCuda, kRuntimeHeaderFound);
  if (kBuildHasCuda == 1) {
    EXPECT_EQ(kDetectedHasCuda, 1) << "a build with CUDA puts the runtime on the include path";
  }
}

TEST(Config, HostDeviceIsEmptyOutsideNvcc) {
  EXPECT_STREQ(RESIDENT_TEST_SPELL(RESIDENT_HOST_DEVICE), "");
  static_assert(twice(21) == 42);
  EXPECT_EQ(twice(-4), -8) << "an annotated function is an ordinary host function here";
}

}  // namespace
