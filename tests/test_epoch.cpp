// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "resident/epoch.hpp"
#include "resident/resident.hpp"
#include "support/epoch_checks.hpp"
#include "support/labelled_rows.hpp"
#include "support/spaces.hpp"

namespace {

using resident::CapacityError;
using resident::DeviceDataset;
using resident::HostSpace;
using resident::HostTensor;
using resident::Remainder;
using resident::Shuffle;
using resident::testing::epoch_options;
using resident::testing::LabelledRows;
using resident::testing::read_back;
using resident::testing::record_epoch;
using resident::testing::row_ids;

template <class Space>
using TypedEpoch = resident::testing::OverSpaces<Space>;
TYPED_TEST_SUITE(TypedEpoch, resident::testing::GatherSpaceTypes, resident::testing::SpaceName);

// Zero-copy epochs need no kernel, so g++ runs them on every space.
TYPED_TEST(TypedEpoch, ZeroCopyEpochsServeEveryRowOnce) {
  resident::testing::check_every_row_once(this->space_, {Shuffle::none, Shuffle::batches});
}

TYPED_TEST(TypedEpoch, ZeroCopyEpochsAreViewsIntoTheDataset) {
  const auto ids = row_ids(100);
  DeviceDataset<TypeParam, std::int64_t> ds(this->space_, epoch_options(10, Remainder::drop),
                                            HostTensor<const std::int64_t>(ids.data(), {100}));
  auto epoch = ds.epoch({1, 2, Shuffle::batches});
  EXPECT_FALSE(epoch.gathers());
  const resident::Permutation order(10, 1, 2);
  for (std::size_t k = 0; k < epoch.size(); ++k) {
    const auto [view] = epoch.batch(k);
    EXPECT_EQ(view.data(), std::get<0>(ds.batch(order(k))).data());
  }
  EXPECT_EQ(ds.ring_bytes(), 0u);  // nothing gathered, no ring
}

// Gathering epochs on every space whose gathers this program has, the space's own engine doing
// the work: a space that brings one (BlockGatherSpace) sees its engine called, and no other.
TYPED_TEST(TypedEpoch, GatheringEpochsServeEveryRowOnceThroughTheSpacesEngine) {
  if (!resident::testing::gathers_here<TypeParam>)
    GTEST_SKIP() << "skipped: needs nvcc: the device gather needs a translation unit compiled by "
                    "nvcc";
  const std::size_t before = resident::testing::BlockGather::gathers();
  resident::testing::check_every_row_once(this->space_, {Shuffle::samples});
  const std::size_t engine_gathers = resident::testing::BlockGather::gathers() - before;
  if (std::is_same_v<TypeParam, resident::testing::BlockGatherSpace>)
    EXPECT_GT(engine_gathers, 0u) << "the space's own engine gathered";
  else
    EXPECT_EQ(engine_gathers, 0u) << "another space's engine gathered";
}

// A gather engine is sized by the batch as gathered: a conversion to float counts four bytes
// an element, not the one the stored uint8_t takes.
TEST(Epoch, TheEngineIsMadeWithTheBytesOfTheBatchAsGathered) {
  const std::vector<std::uint8_t> pixels(std::size_t{20} * 12, 7);
  DeviceDataset<resident::testing::BlockGatherSpace, std::uint8_t> ds(
      resident::testing::BlockGatherSpace{}, epoch_options(5, Remainder::drop),
      HostTensor<const std::uint8_t>(pixels.data(), {20, 12}));
  auto converted = ds.epoch({0, 0, Shuffle::none}, resident::convert<0>(resident::Normalize{1, 0}));
  (void)converted.batch(0);
  EXPECT_EQ(resident::testing::BlockGather::last_batch_bytes(),
            std::size_t{5} * 12 * sizeof(float));
  auto plain = ds.epoch({0, 0, Shuffle::samples});
  (void)plain.batch(0);
  EXPECT_EQ(resident::testing::BlockGather::last_batch_bytes(), 5u * 12u);
}

// A gather that fails half-way leaves its slot empty, and the epoch says so, naming the
// failure, rather than serving or ordering what the slot held; the epoch goes on.
TEST(Epoch, AFailedGatherLeavesItsSlotEmptyAndTheEpochGoesOn) {
  const auto ids = row_ids(40);
  DeviceDataset<resident::testing::BlockGatherSpace, std::int64_t> ds(
      resident::testing::BlockGatherSpace{}, epoch_options(4, Remainder::drop),
      HostTensor<const std::int64_t>(ids.data(), {40}));
  auto epoch = ds.epoch({0, 0, Shuffle::samples});
  const std::size_t depth = ds.impl_core().config().ring_depth;
  ASSERT_LT(depth, epoch.size());
  (void)epoch.batch(0);
  resident::testing::BlockGather::fail_next() = true;
  EXPECT_THROW((void)epoch.batch(depth), resident::Error);  // the slot of batch 0
  try {
    epoch.wait(0, {});
    FAIL() << "wait found batch 0 in a slot whose gather failed";
  } catch (const resident::Error& error) {
    EXPECT_NE(std::string(error.what()).find("its gather failed"), std::string::npos)
        << error.what();
  }
  const auto again = std::get<0>(epoch.batch(depth));
  auto same = ds.epoch({0, 0, Shuffle::samples});
  const auto expected = std::get<0>(same.batch(depth));
  EXPECT_TRUE(std::equal(again.begin(), again.end(), expected.begin())) << "the same batch";
}

TEST(Epoch, HostEpochsServeEveryRowOnceUnderEveryShuffle) {
  resident::testing::check_every_row_once(HostSpace{},
                                          {Shuffle::none, Shuffle::batches, Shuffle::samples});
}

TEST(Epoch, HostGatherMatchesAReferenceGather) {
  resident::testing::check_gather_matches_reference(HostSpace{});
}

TEST(Epoch, GatheredViewLivesForRingDepthBatches) {
  resident::testing::check_ring_lifetime(HostSpace{});
}

TEST(Epoch, SameKeySameBatchesOtherEpochOtherBatches) {
  const auto ids = row_ids(500);
  DeviceDataset<HostSpace, std::int64_t> ds(HostSpace{}, epoch_options(32, Remainder::partial),
                                            HostTensor<const std::int64_t>(ids.data(), {500}));
  const auto first = record_epoch(ds, {42, 0, Shuffle::samples});
  EXPECT_EQ(record_epoch(ds, {42, 0, Shuffle::samples}).batches, first.batches);
  EXPECT_NE(record_epoch(ds, {42, 1, Shuffle::samples}).batches, first.batches);
  EXPECT_NE(record_epoch(ds, {43, 0, Shuffle::samples}).batches, first.batches);
  EXPECT_NE(record_epoch(ds, {42, 0, Shuffle::none}).batches, first.batches);
  EXPECT_NE(record_epoch(ds, {42, 0, Shuffle::batches}).batches,
            record_epoch(ds, {42, 0, Shuffle::none}).batches);
}

TEST(Epoch, BatchIndicesOfAZeroCopyEpochNameTheRows) {
  const auto ids = row_ids(20);
  DeviceDataset<HostSpace, std::int64_t> ds(HostSpace{}, epoch_options(8, Remainder::partial),
                                            HostTensor<const std::int64_t>(ids.data(), {20}));
  auto epoch = ds.epoch({0, 0, Shuffle::none});
  const auto indices = epoch.batch_indices(2);
  EXPECT_EQ(read_back(ds.space(), ds.stream(), indices),
            (std::vector<std::int64_t>{16, 17, 18, 19}));
  EXPECT_GT(ds.ring_bytes(), 0u);
}

TEST(Epoch, RingIsCountedInThePlanAndRefusedWhenItDoesNotFit) {
  const auto ids = row_ids(64);
  const HostTensor<const std::int64_t> tensor(ids.data(), {64});
  auto options = epoch_options(16, Remainder::drop, 2);
  const auto verdict = resident::plan(HostSpace::with_budget(1 << 20), options, tensor);
  // 2 slots x (16 x 8 bytes of data, 256-aligned, + 16 row ids x 8 bytes, 256-aligned).
  EXPECT_EQ(verdict.ring_bytes, 2u * (256 + 256));
  EXPECT_TRUE(verdict.fits_with_ring);

  const HostSpace tight = HostSpace::with_budget(64 * 8 + 600);  // the data, not the ring
  DeviceDataset<HostSpace, std::int64_t> ds(tight, options, tensor);
  EXPECT_FALSE(
      resident::plan(HostSpace::with_budget(64 * 8 + 600), options, tensor).fits_with_ring);
  try {
    auto epoch = ds.epoch({0, 0, Shuffle::samples});
    FAIL() << "a ring of 1 KiB fit in 600 bytes";
  } catch (const CapacityError& error) {
    EXPECT_EQ(error.needed_bytes(), 1024u);
    EXPECT_EQ(error.free_bytes(), 600u);
  }
  EXPECT_EQ(tight.used_bytes(), 64u * 8);  // the refusal took nothing
}

TEST(Epoch, GatheringEpochsAliveTogetherEachGatherIntoARingOfTheirOwn) {
  const auto ids = row_ids(64);
  DeviceDataset<HostSpace, std::int64_t> ds(HostSpace{}, epoch_options(16, Remainder::drop),
                                            HostTensor<const std::int64_t>(ids.data(), {64}));
  auto older = ds.epoch({0, 0, Shuffle::samples});
  const std::size_t one = ds.ring_bytes();
  auto newer = ds.epoch({0, 1, Shuffle::samples});
  EXPECT_EQ(ds.ring_bytes(), 2 * one);
  const auto [held] = older.batch(0);
  const std::vector<std::int64_t> values(held.data(), held.data() + held.rows());
  EXPECT_NO_THROW((void)newer.batch(0));
  EXPECT_NO_THROW((void)newer.batch(1));
  EXPECT_EQ(std::vector<std::int64_t>(held.data(), held.data() + held.rows()), values);
  EXPECT_NO_THROW((void)older.batch(1));
}

TEST(Epoch, WaitAndReleaseOnTheHostCheckTheBatchAndOrderNothing) {
  resident::testing::check_wait_and_release(HostSpace{});
}

TEST(Epoch, OutOfRangeNamesTheEpochSize) {
  const auto ids = row_ids(10);
  DeviceDataset<HostSpace, std::int64_t> ds(HostSpace{}, epoch_options(5, Remainder::drop),
                                            HostTensor<const std::int64_t>(ids.data(), {10}));
  auto epoch = ds.epoch({0, 0, Shuffle::samples});
  EXPECT_THROW((void)epoch.batch(2), std::out_of_range);
  EXPECT_THROW((void)epoch.batch_indices(2), std::out_of_range);
}

// The ring gathering epochs write into: sized by the rows a batch can hold and by the types a
// conversion writes, refused with its own figures when it does not fit.

/// A conversion to a type wider than float: each element becomes `double(x) * 0.5 + row`,
/// where the element index stands in for a per-element term, so that every output is distinct.
struct HalveToDouble {
  using output_type = double;
  template <class T>
  RESIDENT_HOST_DEVICE double operator()(T value, std::size_t element) const noexcept {
    return static_cast<double>(value) * 0.5 + static_cast<double>(element) * 1e-3;
  }
};

TEST(GatherRing, AConversionWiderThanFloatGetsSlotsOfItsWidth) {
  // 64 rows of 40 floats, batches of 16, two slots: each batch of doubles is 5 KiB, twice the
  // float slot. Batch k stays valid until batch k + 2 is gathered, so batch 0 is read after
  // batch 1: a slot sized for floats would have had its second half overwritten.
  constexpr std::size_t rows = 64;
  constexpr std::size_t columns = 40;
  const LabelledRows data(rows, columns);
  DeviceDataset<HostSpace, float, std::int32_t> ds(HostSpace::with_budget(std::size_t{1} << 20),
                                                   epoch_options(16, Remainder::drop), data.x(),
                                                   data.y());
  auto epoch = ds.epoch({4, 0, Shuffle::samples}, resident::convert<0>(HalveToDouble{}));
  const auto first = epoch.batch(0);
  const auto second = epoch.batch(1);
  for (const auto* batch : {&first, &second}) {
    const auto& [x, y] = *batch;
    static_assert(std::is_same_v<typename std::decay_t<decltype(x)>::value_type, double>);
    for (std::size_t r = 0; r < x.rows(); ++r)
      for (std::size_t e = 0; e < columns; ++e)
        ASSERT_EQ(x.data()[r * columns + e], static_cast<double>(y.data()[r]) * 0.5 + e * 1e-3)
            << "row " << r << ", element " << e;
  }
  EXPECT_GE(ds.ring_bytes(), std::size_t{2} * 16 * columns * sizeof(double));
}

TEST(GatherRing, SlotsHoldTheRowsABatchCanHaveNotTheBatchSize) {
  const LabelledRows data(100, 3);
  for (const Remainder remainder : {Remainder::drop, Remainder::partial}) {
    SCOPED_TRACE(resident::remainder_name(remainder));
    auto options = epoch_options(std::size_t{1} << 28, remainder);
    const auto plan = resident::plan(HostSpace{}, options, data.x(), data.y());
    // Two slots of at most 100 rows of 3 floats and a label, with row ids: a few KiB, not the
    // 12 GiB that 2^28-row slots would take.
    EXPECT_LT(plan.ring_bytes, std::size_t{16} << 10) << plan.ring_bytes;
    DeviceDataset<HostSpace, float, std::int32_t> ds(HostSpace{}, options, data.x(), data.y());
    EXPECT_EQ(resident::testing::epoch_label_sum(ds.epoch({2, 0, Shuffle::samples})),
              remainder == Remainder::drop ? 0 : data.label_sum());
    EXPECT_EQ(ds.ring_bytes(), plan.ring_bytes);
  }
  // Sharded: each of 4 ranks holds 25 rows, so a slot holds 25.
  auto options = epoch_options(std::size_t{1} << 28, Remainder::partial);
  options.shard = {1, 4, 1};
  const auto sharded = resident::plan(HostSpace{}, options, data.x(), data.y());
  options.shard = {};
  const auto whole = resident::plan(HostSpace{}, options, data.x(), data.y());
  EXPECT_LT(sharded.ring_bytes, whole.ring_bytes);
}

TEST(GatherRing, ARingThatDoesNotFitIsRefusedAsTheRingWithBothFigures) {
  // 1000 rows of 64 floats (256 KB) fit a 300 KB budget; two slots of 512 rows (264 KB) do not.
  const LabelledRows data(1000, 64);
  const auto space = HostSpace::with_budget(300'000);
  DeviceDataset<HostSpace, float, std::int32_t> ds(space, epoch_options(512, Remainder::partial),
                                                   data.x(), data.y());
  const std::size_t used = space.used_bytes();
  try {
    (void)ds.epoch({1, 0, Shuffle::samples});
    FAIL() << "the ring fitted";
  } catch (const CapacityError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("gather ring needs"), std::string::npos) << message;
    EXPECT_EQ(message.find("dataset needs"), std::string::npos) << message;
    EXPECT_NE(message.find("dataset itself (" + resident::detail::format_bytes(ds.bytes())),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("needed " + std::to_string(error.needed_bytes()) + " B"),
              std::string::npos)
        << message;
    for (const char* advice : {"ring_depth", "batch_size", "reserve", "Shuffle::batches"})
      EXPECT_NE(message.find(advice), std::string::npos) << advice << " in " << message;
  }
  // Nothing was taken, the dataset still serves, and a zero-copy epoch needs no ring.
  EXPECT_EQ(space.used_bytes(), used);
  EXPECT_EQ(ds.ring_bytes(), 0U);
  EXPECT_EQ(resident::testing::epoch_label_sum(ds.epoch({1, 0, Shuffle::batches})),
            data.label_sum());
}

/// Host memory that kernels can read, as far as the library knows: its gathers are the
/// kernels' (`default_space_traits` chooses `KernelGather` for a device-accessible space), which
/// a program has only where a unit compiled by nvcc (or the simulated runtime's harness) made
/// them.
class KernelReadHostSpace : public resident::HostSpace {
 public:
  using memory_space = KernelReadHostSpace;
  static constexpr bool device_accessible = true;
};
static_assert(std::is_same_v<resident::space_traits<KernelReadHostSpace>::gather_engine,
                             resident::detail::KernelGather>);

// In a program without the kernels, an epoch that would gather with them is refused when it is
// made, saying to use nvcc; its zero-copy epochs work, and asking one of them for row ids (a
// kernel too) is refused at that call. In a program with them, the same calls serve the rows.
TEST(Epoch, KernelGathersAreRefusedWhenMadeInAProgramWithoutTheirKernels) {
  const auto ids = row_ids(10);
  DeviceDataset<KernelReadHostSpace, std::int64_t> ds(
      KernelReadHostSpace{}, epoch_options(5, Remainder::drop),
      HostTensor<const std::int64_t>(ids.data(), {10}));
  // The advice names both ways out: an nvcc unit, or an engine that needs no kernels.
  const auto says_nvcc = [](const resident::InvalidArgument& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("nvcc"), std::string::npos) << message;
    EXPECT_NE(message.find("gather_engine"), std::string::npos) << message;
  };
  auto in_order = ds.epoch({0, 0, Shuffle::batches});
  EXPECT_FALSE(in_order.gathers());
  EXPECT_EQ(std::get<0>(in_order.batch(1)).size(), 5u);
  if (resident::testing::kernels_compiled) {
    std::int64_t sum = 0;
    for (const auto& [batch] : ds.epoch({0, 0, Shuffle::samples}))
      for (const std::int64_t id : batch) sum += id;
    EXPECT_EQ(sum, 45) << "every row once";
    const auto indices = in_order.batch_indices(1);
    EXPECT_EQ(indices.data()[0], std::get<0>(in_order.batch(1)).data()[0]) << "ids are row ids";
    return;
  }
  try {
    (void)ds.epoch({0, 0, Shuffle::samples});
    FAIL() << "an epoch without kernels was made to gather with them";
  } catch (const resident::InvalidArgument& error) {
    says_nvcc(error);
  }
  try {
    (void)in_order.batch_indices(1);
    FAIL() << "an epoch without kernels wrote row ids with them";
  } catch (const resident::InvalidArgument& error) {
    says_nvcc(error);
  }
}

}  // namespace
