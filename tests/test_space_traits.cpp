// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// What makes a type a memory space, the traits that ask about one, Capacity, and a space written
// from the protocol alone holding a dataset.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <new>
#include <numeric>
#include <string>
#include <vector>

#include "resident/device_dataset.hpp"
#include "resident/host_space.hpp"
#include "resident/plan.hpp"
#include "resident/space_traits.hpp"
#include "resident/streaming_dataset.hpp"

namespace {

using resident::Capacity;
using resident::is_device_accessible_v;
using resident::is_memory_space_v;

/// What a `LedgerSpace` and its copies have done.
struct Ledger {
  std::size_t budget = 0;
  std::size_t live_bytes = 0;
  std::size_t allocations = 0;
  std::size_t copies_in = 0;
  int streams = 0;
};

/// A memory space written from the protocol space_traits.hpp states, and nothing else: host
/// memory from the C allocator, a stream that is a number, and a ledger of what it was asked.
class LedgerSpace {
 public:
  using memory_space = LedgerSpace;
  using stream_type = int;
  static constexpr bool device_accessible = false;

  LedgerSpace() : ledger_(std::make_shared<Ledger>()) { ledger_->budget = 1 << 20; }

  [[nodiscard]] const Ledger& ledger() const noexcept { return *ledger_; }

  [[nodiscard]] std::string name() const { return "ledger"; }
  [[nodiscard]] Capacity capacity() const {
    return {ledger_->budget - ledger_->live_bytes, ledger_->budget};
  }
  [[nodiscard]] std::size_t default_reserve_bytes() const noexcept { return 0; }

  [[nodiscard]] void* allocate(std::size_t bytes) const {
    if (bytes == 0) return nullptr;
    const std::size_t rounded = (bytes + resident::field_alignment - 1) /
                                resident::field_alignment * resident::field_alignment;
    void* block = std::aligned_alloc(resident::field_alignment, rounded);
    if (block == nullptr) throw std::bad_alloc();
    ledger_->live_bytes += bytes;
    ++ledger_->allocations;
    return block;
  }
  void deallocate(void* pointer, std::size_t bytes) const noexcept {
    if (pointer == nullptr) return;
    std::free(pointer);  // NOLINT(cppcoreguidelines-no-malloc): the C allocator, on purpose
    ledger_->live_bytes -= bytes;
  }

  [[nodiscard]] stream_type create_stream() const { return ++ledger_->streams; }
  void destroy_stream(stream_type /*stream*/) const noexcept { --ledger_->streams; }
  void synchronize(stream_type /*stream*/) const {}

  void copy_from_host(void* destination, const void* source, std::size_t bytes,
                      stream_type /*stream*/) const {
    std::memcpy(destination, source, bytes);
    ++ledger_->copies_in;
  }
  void copy_to_host(void* destination, const void* source, std::size_t bytes,
                    stream_type /*stream*/) const {
    std::memcpy(destination, source, bytes);
  }

 private:
  std::shared_ptr<Ledger> ledger_;
};

/// Names a memory space that is not itself: not a space.
struct NamesAnother {
  using memory_space = resident::HostSpace;
};

/// A space that kernels can read, as far as the trait is concerned.
struct Readable {
  using memory_space = Readable;
  static constexpr bool device_accessible = true;
};

/// Derived from a space without naming itself: inherits HostSpace's `memory_space`.
class DerivedUnnamed : public resident::HostSpace {};

TEST(SpaceTraits, AMemorySpaceIsATypeThatNamesItself) {
  EXPECT_TRUE(is_memory_space_v<resident::HostSpace>);
  EXPECT_TRUE(is_memory_space_v<LedgerSpace>);
  EXPECT_TRUE(is_memory_space_v<Readable>);
  EXPECT_FALSE(is_memory_space_v<int>);
  EXPECT_FALSE(is_memory_space_v<NamesAnother>);
  EXPECT_FALSE(is_memory_space_v<DerivedUnnamed>) << "a derived space must name itself";
  EXPECT_FALSE(resident::is_memory_space<void*>::value);
}

TEST(SpaceTraits, DeviceAccessibilityIsWhatTheSpaceDeclares) {
  EXPECT_FALSE(is_device_accessible_v<resident::HostSpace>);
  EXPECT_FALSE(is_device_accessible_v<LedgerSpace>);
  EXPECT_TRUE(is_device_accessible_v<Readable>);
  EXPECT_TRUE(resident::is_device_accessible<Readable>::value);
}

TEST(SpaceTraits, FieldsAreAlignedTo256BytesAndCapacityStartsEmpty) {
  EXPECT_EQ(resident::field_alignment, 256u);
  const Capacity none;
  EXPECT_EQ(none.free_bytes, 0u);
  EXPECT_EQ(none.total_bytes, 0u);
}

// The one figure every capacity check compares against: free bytes less the reserve, never
// below zero.
TEST(SpaceTraits, UsableBytesAreTheFreeBytesLessTheReserve) {
  using resident::detail::usable_bytes;
  constexpr std::size_t max = std::numeric_limits<std::size_t>::max();
  EXPECT_EQ(usable_bytes(1000, 200), 800u);
  EXPECT_EQ(usable_bytes(1000, 0), 1000u);
  EXPECT_EQ(usable_bytes(1000, 1000), 0u);
  EXPECT_EQ(usable_bytes(200, 1000), 0u) << "a reserve above the free bytes leaves none";
  EXPECT_EQ(usable_bytes(max, max - 1), 1u);
  EXPECT_EQ(usable_bytes(0, max), 0u);
}

// 100 row ids in batches of 30, for a dataset in a `LedgerSpace`.
struct LedgerData {
  LedgerData() : values(100) { std::iota(values.begin(), values.end(), 0); }
  std::vector<std::int32_t> values;
  resident::HostTensor<const std::int32_t> tensor{values.data(), {100}};
  resident::DatasetOptions options = [] {
    resident::DatasetOptions batches_of_30;
    batches_of_30.batch_size = 30;
    return batches_of_30;
  }();
};

// The protocol is all a dataset needs: a space written from it alone is planned, uploaded to,
// read from and given back everything.
TEST(SpaceTraits, ASpaceWrittenFromTheProtocolHoldsADataset) {
  const LedgerData data;
  const auto& [values, tensor, options] = data;
  const LedgerSpace space;
  const auto verdict = resident::plan(space, options, tensor);
  EXPECT_TRUE(verdict.fits);
  EXPECT_EQ(verdict.space_name, "ledger");
  EXPECT_EQ(verdict.reserve_bytes, 0u) << "the space's default reserve";
  {
    const resident::DeviceDataset<LedgerSpace, std::int32_t> ds(space, options, tensor);
    EXPECT_EQ(space.ledger().live_bytes, verdict.needed_bytes);
    EXPECT_EQ(space.ledger().allocations, 1u);
    EXPECT_GE(space.ledger().copies_in, 1u);
    EXPECT_EQ(space.ledger().streams, 1) << "the dataset made its stream";
    EXPECT_EQ(ds.stream(), 1);
    ASSERT_EQ(ds.num_batches(), 4u);
    const auto [last] = ds.batch(3);
    std::vector<std::int32_t> back(last.rows());
    ds.space().copy_to_host(back.data(), last.data(), last.bytes(), ds.stream());
    EXPECT_EQ(back, (std::vector<std::int32_t>(values.begin() + 90, values.end())));
  }
  EXPECT_EQ(space.ledger().live_bytes, 0u) << "the dataset gave its memory back";
}

// Every stream a dataset makes with create_stream() it gives back with destroy_stream() (on
// CudaSpace a dataset that did not would leak one CUDA stream).
TEST(SpaceTraits, ADatasetDestroysTheStreamItMade) {
  const LedgerData data;
  const auto& [values, tensor, options] = data;
  const LedgerSpace space;
  {
    const resident::DeviceDataset<LedgerSpace, std::int32_t> ds(space, options, tensor);
    EXPECT_EQ(space.ledger().streams, 1);
  }
  EXPECT_EQ(space.ledger().streams, 0) << "a DeviceDataset kept its stream";
  {
    const resident::StreamingDataset<LedgerSpace, std::int32_t> ds(space, options, tensor);
    EXPECT_GE(space.ledger().streams, 1);
  }
  EXPECT_EQ(space.ledger().streams, 0) << "a StreamingDataset kept its stream";
}

}  // namespace
