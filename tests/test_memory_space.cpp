// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// memory_space.hpp: one include for the spaces (HostSpace, CudaSpace where CUDA is built) and
// the traits that describe them.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "resident/device_dataset.hpp"
#include "resident/memory_space.hpp"
#include "resident/streaming_dataset.hpp"

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

/// A space that breaks the concept's promise of `field_alignment`: its memory starts 16 bytes
/// past it.
class MisalignedSpace : public resident::HostSpace {
 public:
  using memory_space = MisalignedSpace;
  MisalignedSpace() = default;
  explicit MisalignedSpace(resident::HostSpace space) : HostSpace(std::move(space)) {}
  [[nodiscard]] std::string name() const { return "misaligned"; }
  [[nodiscard]] void* allocate(std::size_t bytes) const {
    return static_cast<std::byte*>(HostSpace::allocate(bytes + kShift)) + kShift;
  }
  void deallocate(void* pointer, std::size_t bytes) const noexcept {
    if (pointer != nullptr)
      HostSpace::deallocate(static_cast<std::byte*>(pointer) - kShift, bytes + kShift);
  }
  static constexpr std::size_t kShift = 16;
};

// The kernels' vector loads and every field's base count on 256-byte aligned memory: a space
// that returns less is refused when the dataset is made, saying what it returned, and its
// memory goes back.
TEST(MemorySpace, MemoryAlignedToLessThanTheFieldAlignmentIsRefused) {
  static_assert(resident::is_memory_space_v<MisalignedSpace>);
  std::vector<float> x(std::size_t{64} * 4, 1.0f);
  const resident::HostTensor<const float> rows(x.data(), {64, 4});
  const MisalignedSpace space(resident::HostSpace::with_budget(1 << 20));
  resident::DatasetOptions options;
  options.batch_size = 8;
  try {
    const resident::DeviceDataset<MisalignedSpace, float> ds(space, options, rows);
    FAIL() << "misaligned memory was taken";
  } catch (const resident::InvalidArgument& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("'misaligned' returned"), std::string::npos) << message;
    EXPECT_NE(message.find("aligned to only 16 bytes"), std::string::npos) << message;
    EXPECT_NE(message.find("field_alignment (256 bytes"), std::string::npos) << message;
  }
  EXPECT_EQ(space.used_bytes(), 0u);
  EXPECT_THROW((resident::StreamingDataset<MisalignedSpace, float>(space, options, rows)),
               resident::InvalidArgument);
  EXPECT_EQ(space.used_bytes(), 0u);
}

#if RESIDENT_HAS_CUDA
TEST(MemorySpace, OneIncludeDeclaresTheCudaSpaceWhereCudaIsBuilt) {
  EXPECT_EQ(resident::CudaSpace{2}.name(), "cuda:2");  // no device needed to name one
  EXPECT_TRUE(resident::is_memory_space_v<resident::CudaSpace>);
  EXPECT_TRUE(resident::is_device_accessible_v<resident::CudaSpace>);
}
#endif

}  // namespace
