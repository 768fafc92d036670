// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// memory_space.hpp: one include for the spaces (HostSpace, CudaSpace where CUDA is built) and
// the traits that describe them.
#include <gtest/gtest.h>

#include <string>

#include "resident/memory_space.hpp"

namespace {

TEST(MemorySpace, OneIncludeDeclaresTheHostSpaceAndTheTraits) {
  const resident::HostSpace budget = resident::HostSpace::with_budget(4096);
  const resident::Capacity capacity = budget.capacity();
  EXPECT_EQ(capacity.total_bytes, 4096u);
  EXPECT_EQ(capacity.free_bytes, 4096u);
  EXPECT_EQ(budget.name(), "host");
  EXPECT_TRUE(resident::is_memory_space_v<resident::HostSpace>);
  EXPECT_FALSE(resident::is_device_accessible_v<resident::HostSpace>);
}

#if RESIDENT_HAS_CUDA
TEST(MemorySpace, OneIncludeDeclaresTheCudaSpaceWhereCudaIsBuilt) {
  EXPECT_EQ(resident::CudaSpace{2}.name(), "cuda:2");  // no device needed to name one
  EXPECT_TRUE(resident::is_memory_space_v<resident::CudaSpace>);
  EXPECT_TRUE(resident::is_device_accessible_v<resident::CudaSpace>);
}
#endif

}  // namespace
