// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "resident/device_dataset.hpp"
#include "resident/memory_space.hpp"
#include "support/epoch_checks.hpp"
#include "support/spaces.hpp"

namespace {

using resident::BatchView;
using resident::CapacityError;
using resident::DatasetOptions;
using resident::DeviceDataset;
using resident::HostSpace;
using resident::HostTensor;
using resident::InvalidArgument;
using resident::Remainder;
using resident::testing::epoch_options;
using resident::testing::read_back;
using resident::testing::row_ids;

std::vector<float> iota_floats(std::size_t count) {
  std::vector<float> values(count);
  std::iota(values.begin(), values.end(), 0.0f);
  return values;
}

DatasetOptions options(std::size_t batch_size, Remainder remainder = Remainder::partial) {
  DatasetOptions result;
  result.batch_size = batch_size;
  result.remainder = remainder;
  result.reserve_bytes = 0;
  return result;
}

template <class Space>
using TypedDataset = resident::testing::OverSpaces<Space>;
TYPED_TEST_SUITE(TypedDataset, resident::testing::SpaceTypes, resident::testing::SpaceName);

TYPED_TEST(TypedDataset, BatchArithmeticOverRowsAndBatchSizes) {
  constexpr std::size_t width = 3;
  for (const std::size_t rows : {0, 1, 2, 7, 63, 64, 65, 100, 257, 1000}) {
    const auto values = iota_floats(rows * width);
    const HostTensor<const float> x(values.data(), {rows, width});
    for (const std::size_t batch : {1, 3, 64, 256, 1000, 5000}) {
      for (const Remainder remainder : {Remainder::drop, Remainder::partial}) {
        SCOPED_TRACE("rows " + std::to_string(rows) + ", batch " + std::to_string(batch) +
                     (remainder == Remainder::drop ? ", drop" : ", partial"));
        const DeviceDataset<TypeParam, float> ds(this->space_, options(batch, remainder), x);
        const std::size_t full = rows / batch;
        const bool short_tail = rows % batch != 0 && remainder == Remainder::partial;
        ASSERT_EQ(ds.num_batches(), full + (short_tail ? 1 : 0));
        ASSERT_EQ(ds.num_rows(), rows);
        ASSERT_EQ(ds.batch_size(), batch);
        std::size_t served = 0;
        for (std::size_t i = 0; i < ds.num_batches(); ++i) {
          const auto [xb] = ds.batch(i);
          const std::size_t expected_rows = (i < full) ? batch : rows % batch;
          ASSERT_EQ(xb.rows(), expected_rows);
          ASSERT_EQ(xb.data(), ds.template field<0>().data() + served * width);
          served += xb.rows();
        }
        EXPECT_EQ(served, remainder == Remainder::drop ? full * batch : rows);
        EXPECT_THROW((void)ds.batch(ds.num_batches()), std::out_of_range);
      }
    }
  }
}

TYPED_TEST(TypedDataset, BatchIsAZeroCopyPointerOffset) {
  const auto values = iota_floats(std::size_t{1000} * 4);
  const HostTensor<const float> x(values.data(), {1000, 4});
  const DeviceDataset<TypeParam, float> ds(this->space_, options(64), x);
  const float* base = ds.template field<0>().data();
  for (std::size_t i = 0; i < ds.num_batches(); ++i) {
    const auto [xb] = ds.batch(i);
    EXPECT_EQ(xb.data(), base + i * 64 * 4);
    EXPECT_EQ(std::get<0>(ds.batch(i)).data(), xb.data());  // the same bytes every time
    EXPECT_EQ(xb.row_shape(), (resident::Shape{4}));
  }
  // The views point into the dataset's memory, never into the caller's.
  EXPECT_NE(static_cast<const void*>(base), static_cast<const void*>(values.data()));
}

TYPED_TEST(TypedDataset, MultiFieldRoundTripInOneAlignedAllocation) {
  constexpr std::size_t rows = 7;  // odd sizes make every field end off alignment
  std::vector<std::uint8_t> pixels(rows * 3);
  std::iota(pixels.begin(), pixels.end(), std::uint8_t{1});
  std::vector<std::int16_t> labels(rows);
  std::iota(labels.begin(), labels.end(), std::int16_t{-3});
  std::vector<double> weights(rows * 2);
  std::iota(weights.begin(), weights.end(), 0.5);
  const DeviceDataset<TypeParam, std::uint8_t, std::int16_t, double> ds(
      this->space_, options(4), HostTensor<const std::uint8_t>(pixels.data(), {rows, 3}),
      HostTensor<const std::int16_t>(labels.data(), {rows}),
      HostTensor<const double>(weights.data(), {rows, 2}));

  const auto* first = reinterpret_cast<const std::byte*>(ds.template field<0>().data());
  const auto* second = reinterpret_cast<const std::byte*>(ds.template field<1>().data());
  const auto* third = reinterpret_cast<const std::byte*>(ds.template field<2>().data());
  for (const auto* base : {first, second, third})
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(base) % resident::field_alignment, 0u);
  // One allocation: the fields follow each other at the next 256-byte boundary.
  EXPECT_EQ(second - first, 256);
  EXPECT_EQ(third - first, 512);
  EXPECT_EQ(ds.bytes(), 512 + rows * 2 * sizeof(double));

  EXPECT_EQ(read_back(ds.space(), ds.stream(), ds.template field<0>()), pixels);
  EXPECT_EQ(read_back(ds.space(), ds.stream(), ds.template field<1>()), labels);
  EXPECT_EQ(read_back(ds.space(), ds.stream(), ds.template field<2>()), weights);
  const auto [p, l, w] = ds.batch(1);  // rows 4..6
  EXPECT_EQ(read_back(ds.space(), ds.stream(), l), (std::vector<std::int16_t>{1, 2, 3}));
  EXPECT_EQ(p.rows(), 3u);
  EXPECT_EQ(w.size(), 6u);
}

TYPED_TEST(TypedDataset, ZeroRowsIsLegalAndServesNoBatches) {
  const HostTensor<const float> x(nullptr, {0, 5});
  const DeviceDataset<TypeParam, float> ds(this->space_, options(8), x);
  EXPECT_EQ(ds.num_rows(), 0u);
  EXPECT_EQ(ds.num_batches(), 0u);
  EXPECT_EQ(ds.bytes(), 0u);
  EXPECT_TRUE(ds.empty());
  EXPECT_EQ(ds.template field<0>().rows(), 0u);
  EXPECT_THROW((void)ds.batch(0), std::out_of_range);
}

TYPED_TEST(TypedDataset, OutOfRangeNamesTheValidRange) {
  const auto values = iota_floats(10);
  const DeviceDataset<TypeParam, float> ds(this->space_, options(4, Remainder::drop),
                                           HostTensor<const float>(values.data(), {10}));
  try {
    (void)ds.batch(2);
    FAIL() << "batch 2 of 2 was served";
  } catch (const std::out_of_range& error) {
    EXPECT_NE(
        std::string(error.what()).find("has 2 batches (10 rows, batch size 4, remainder drop)"),
        std::string::npos)
        << error.what();
  }
}

TYPED_TEST(TypedDataset, RefusesWhenReserveExceedsFreeAndLeavesEverythingIntact) {
  const auto values = iota_floats(std::size_t{256} * 2);
  const HostTensor<const float> x(values.data(), {256, 2});
  const DeviceDataset<TypeParam, float> previous(this->space_, options(16), x);
  const auto before = read_back(previous.space(), previous.stream(), previous.template field<0>());

  DatasetOptions greedy = options(16);
  const std::size_t free = this->space_.capacity().free_bytes;
  greedy.reserve_bytes = free + (std::size_t{1} << 30);  // more than any concurrent change
  try {
    const DeviceDataset<TypeParam, float> refused(this->space_, greedy, x);
    FAIL() << "a reserve above the free memory was accepted";
  } catch (const CapacityError& error) {
    EXPECT_EQ(error.needed_bytes(), std::size_t{256} * 2 * sizeof(float));
    EXPECT_EQ(error.reserve_bytes(), *greedy.reserve_bytes);
    EXPECT_EQ(error.space_name(), this->space_.name());
    EXPECT_NE(std::string(error.what()).find("use a compact dtype, shard it, or stream it"),
              std::string::npos);
  }
  EXPECT_EQ(values, iota_floats(std::size_t{256} * 2));  // the caller's data is untouched
  EXPECT_EQ(read_back(previous.space(), previous.stream(), previous.template field<0>()), before);
  const DeviceDataset<TypeParam, float> again(this->space_, options(16), x);  // space reusable
  EXPECT_EQ(again.num_batches(), 16u);
}

TYPED_TEST(TypedDataset, MismatchedRowsAreRefusedBeforeAnyAllocation) {
  const auto values = iota_floats(100);
  const std::vector<std::int32_t> labels(99);
  try {
    const DeviceDataset<TypeParam, float, std::int32_t> ds(
        this->space_, options(10), HostTensor<const float>(values.data(), {100}),
        HostTensor<const std::int32_t>(labels.data(), {99}));
    FAIL() << "fields of 100 and 99 rows were accepted";
  } catch (const InvalidArgument& error) {
    EXPECT_NE(std::string(error.what()).find("field 1 has 99 rows"), std::string::npos)
        << error.what();
  }
}

TYPED_TEST(TypedDataset, ZeroBatchSizeIsRefused) {
  const auto values = iota_floats(10);
  EXPECT_THROW((DeviceDataset<TypeParam, float>(this->space_, options(0),
                                                HostTensor<const float>(values.data(), {10}))),
               InvalidArgument);
}

TYPED_TEST(TypedDataset, ByteSizeOverflowAcrossFieldsIsRefused) {
  // Each field is addressable on its own; together they are not. Refused from the shapes
  // alone: not one byte is read or allocated (the data pointer covers a single byte).
  const std::uint8_t byte = 0;
  const std::size_t half = std::numeric_limits<std::size_t>::max() / 2 + 1;
  const HostTensor<const std::uint8_t> huge(&byte, {half});
  try {
    const DeviceDataset<TypeParam, std::uint8_t, std::uint8_t> ds(this->space_, options(1), huge,
                                                                  huge);
    FAIL() << "an allocation of 2^64 bytes was planned";
  } catch (const InvalidArgument& error) {
    EXPECT_NE(std::string(error.what()).find("overflows"), std::string::npos) << error.what();
  }
}

TYPED_TEST(TypedDataset, MoveLeavesTheSourceEmpty) {
  const auto values = iota_floats(100);
  DeviceDataset<TypeParam, float> source(this->space_, options(10),
                                         HostTensor<const float>(values.data(), {100}));
  const float* data = source.template field<0>().data();
  const std::size_t bytes = source.bytes();

  DeviceDataset<TypeParam, float> moved(std::move(source));
  EXPECT_EQ(moved.template field<0>().data(), data);
  EXPECT_EQ(moved.bytes(), bytes);
  EXPECT_EQ(moved.num_batches(), 10u);
  // NOLINTBEGIN(bugprone-use-after-move): the moved-from state is what is tested
  EXPECT_EQ(source.num_rows(), 0u);
  EXPECT_EQ(source.num_batches(), 0u);
  EXPECT_EQ(source.bytes(), 0u);
  EXPECT_EQ(source.template field<0>().data(), nullptr);
  EXPECT_THROW((void)source.batch(0), std::out_of_range);

  DeviceDataset<TypeParam, float> assigned(this->space_, options(5),
                                           HostTensor<const float>(values.data(), {10}));
  assigned = std::move(moved);
  EXPECT_EQ(assigned.template field<0>().data(), data);
  EXPECT_EQ(assigned.num_batches(), 10u);
  EXPECT_EQ(moved.num_batches(), 0u);
  // NOLINTEND(bugprone-use-after-move)
  EXPECT_EQ(read_back(assigned.space(), assigned.stream(), assigned.template field<0>()), values);
  static_assert(!std::is_copy_constructible_v<DeviceDataset<TypeParam, float>>);
  static_assert(std::is_nothrow_move_constructible_v<DeviceDataset<TypeParam, float>>);
}

TYPED_TEST(TypedDataset, PlanAgreesWithTheConstructor) {
  const auto values = iota_floats(std::size_t{300} * 3);
  const std::vector<std::int32_t> labels(300);
  const HostTensor<const float> x(values.data(), {300, 3});
  const HostTensor<const std::int32_t> y(labels.data(), {300});
  const auto verdict = resident::plan(this->space_, options(64, Remainder::drop), x, y);
  const DeviceDataset ds(this->space_, options(64, Remainder::drop), x, y);  // deduced types
  static_assert(std::is_same_v<decltype(ds), const DeviceDataset<TypeParam, float, std::int32_t>>);
  EXPECT_TRUE(verdict.fits);
  EXPECT_EQ(verdict.needed_bytes, ds.bytes());
  EXPECT_EQ(verdict.num_batches, ds.num_batches());
  EXPECT_EQ(verdict.num_rows, ds.num_rows());
}

// Remainder::pad: the padding rows are stored with the dataset, after its real rows.

TEST(Epoch, PadFillsTheLastBatchAndSaysHowManyRowsAreReal) {
  const auto ids = row_ids(10);
  const DeviceDataset<HostSpace, std::int64_t> ds(HostSpace{}, epoch_options(4, Remainder::pad),
                                                  HostTensor<const std::int64_t>(ids.data(), {10}));
  ASSERT_EQ(ds.num_batches(), 3u);
  const auto [last] = ds.batch(2);
  EXPECT_EQ(last.rows(), 4u);
  EXPECT_EQ(last.valid_rows(), 2u);
  EXPECT_EQ(read_back(ds.space(), ds.stream(), last), (std::vector<std::int64_t>{8, 9, 0, 1}));
  EXPECT_EQ(std::get<0>(ds.batch(0)).valid_rows(), 4u);
  EXPECT_EQ(ds.field<0>().rows(), 10u);  // the field view holds the real rows only
  EXPECT_EQ(ds.bytes(), 12u * sizeof(std::int64_t));
}

TEST(Epoch, PadCyclesWhenTheBatchExceedsTheRows) {
  const auto ids = row_ids(3);
  const DeviceDataset<HostSpace, std::int64_t> ds(HostSpace{}, epoch_options(8, Remainder::pad),
                                                  HostTensor<const std::int64_t>(ids.data(), {3}));
  const auto [only] = ds.batch(0);
  EXPECT_EQ(read_back(ds.space(), ds.stream(), only),
            (std::vector<std::int64_t>{0, 1, 2, 0, 1, 2, 0, 1}));
  EXPECT_EQ(only.valid_rows(), 3u);
}

// Budgeted host spaces: the accounting behind exact refusals.

TEST(DeviceDataset, RefusesWhenNeededExceedsFreeWithExactFigures) {
  const HostSpace space = HostSpace::with_budget(4096);
  const auto values = iota_floats(1025);  // 4100 bytes
  const HostTensor<const float> x(values.data(), {1025});
  try {
    const DeviceDataset<HostSpace, float> ds(space, options(32), x);
    FAIL() << "4100 bytes fit in a 4096-byte budget";
  } catch (const CapacityError& error) {
    EXPECT_EQ(error.needed_bytes(), 4100u);
    EXPECT_EQ(error.free_bytes(), 4096u);
    EXPECT_EQ(error.total_bytes(), 4096u);
    EXPECT_EQ(error.reserve_bytes(), 0u);
    EXPECT_NE(std::string(error.what())
                  .find("dataset needs 4.0 KiB on host but only 4.0 KiB of "
                        "4.0 KiB is free after a 0 B reserve"),
              std::string::npos)
        << error.what();
  }
  EXPECT_EQ(space.used_bytes(), 0u);
  const DeviceDataset<HostSpace, float> fits(space, options(32),
                                             HostTensor<const float>(values.data(), {1024}));
  EXPECT_EQ(space.used_bytes(), 4096u);
  EXPECT_EQ(space.capacity().free_bytes, 0u);
}

TEST(DeviceDataset, DatasetsInOneBudgetDrawFromTheSameBytes) {
  const HostSpace space = HostSpace::with_budget(6000);
  const auto values = iota_floats(1000);  // 4000 bytes
  const HostTensor<const float> x(values.data(), {1000});
  {
    const DeviceDataset<HostSpace, float> first(space, options(10), x);
    EXPECT_EQ(space.used_bytes(), 4000u);
    EXPECT_THROW((DeviceDataset<HostSpace, float>(space, options(10), x)), CapacityError);
    EXPECT_EQ(space.used_bytes(), 4000u);
  }
  EXPECT_EQ(space.used_bytes(), 0u);
  const DeviceDataset<HostSpace, float> second(space, options(10), x);
  EXPECT_EQ(second.num_batches(), 100u);
}

// A space whose capacity query promises more than its allocator gives: the race in which
// another process takes memory between the check and the allocation.
class OverpromisingSpace : public HostSpace {
 public:
  using memory_space = OverpromisingSpace;
  explicit OverpromisingSpace(HostSpace inner = HostSpace::with_budget(100))
      : HostSpace(std::move(inner)) {}
  [[nodiscard]] resident::Capacity capacity() const { return {1u << 30, 1u << 30}; }
};

TEST(DeviceDataset, AllocationFailureAfterAPassingCheckIsACapacityError) {
  const OverpromisingSpace space;
  const auto values = iota_floats(1000);
  EXPECT_THROW((DeviceDataset<OverpromisingSpace, float>(
                   space, options(10), HostTensor<const float>(values.data(), {1000}))),
               CapacityError);
  EXPECT_EQ(space.used_bytes(), 0u);
}

// A space whose second copy fails: the construction must give back its allocation.
class FailingCopySpace : public HostSpace {
 public:
  using memory_space = FailingCopySpace;
  explicit FailingCopySpace(HostSpace inner = HostSpace::with_budget(1u << 20))
      : HostSpace(std::move(inner)) {}
  void copy_from_host(void* destination, const void* source, std::size_t bytes,
                      stream_type stream) const {
    if (++*copies_ == 2) throw resident::Error("injected copy failure");
    HostSpace::copy_from_host(destination, source, bytes, stream);
  }

 private:
  std::shared_ptr<int> copies_ = std::make_shared<int>(0);
};

TEST(DeviceDataset, FailedUploadReleasesItsAllocation) {
  const FailingCopySpace space;
  const auto values = iota_floats(64);
  const HostTensor<const float> x(values.data(), {64});
  EXPECT_THROW((DeviceDataset<FailingCopySpace, float, float>(space, options(8), x, x)),
               resident::Error);
  EXPECT_EQ(space.used_bytes(), 0u);
  EXPECT_EQ(values, iota_floats(64));
}

// DatasetOptions::streaming is ignored by a DeviceDataset: options a StreamingDataset would
// refuse (no prefetch, a ring no larger than its prefetch, sizes at their maximum) change
// nothing.
TEST(DeviceDataset, IgnoresStreamOptionsEvenInvalidOnes) {
  const auto values = iota_floats(10);
  const HostTensor<const float> x(values.data(), {10});
  constexpr std::size_t max = std::numeric_limits<std::size_t>::max();
  for (const resident::StreamOptions streaming :
       {resident::StreamOptions{0, 1, 2}, resident::StreamOptions{0, 4, 0},
        resident::StreamOptions{1, max, 2}, resident::StreamOptions{max, max, max},
        resident::StreamOptions{max, 0, 0}}) {
    SCOPED_TRACE(std::to_string(streaming.chunk_batches) + ", " +
                 std::to_string(streaming.chunk_slots) + ", " +
                 std::to_string(streaming.prefetch_chunks));
    DatasetOptions opts = options(3);
    opts.streaming = streaming;
    const DeviceDataset<HostSpace, float> ds(HostSpace::with_budget(1 << 20), opts, x);
    EXPECT_EQ(ds.num_batches(), 4u);
  }
}

}  // namespace
