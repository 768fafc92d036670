// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// The ring gathering epochs write into: sized by the rows a batch can hold and by the types a
// conversion writes, refused with its own figures when it does not fit.

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

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

}  // namespace
