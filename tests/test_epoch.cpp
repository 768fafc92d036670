// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "resident/epoch.hpp"
#include "resident/resident.hpp"
#include "support/epoch_checks.hpp"
#include "support/spaces.hpp"

namespace {

using resident::CapacityError;
using resident::DeviceDataset;
using resident::HostSpace;
using resident::HostTensor;
using resident::Remainder;
using resident::Shuffle;
using resident::testing::epoch_options;
using resident::testing::read_back;
using resident::testing::record_epoch;

std::vector<std::int64_t> row_ids(std::size_t n) {
  std::vector<std::int64_t> ids(n);
  std::iota(ids.begin(), ids.end(), std::int64_t{0});
  return ids;
}

template <class Space>
using TypedEpoch = resident::testing::OverSpaces<Space>;
TYPED_TEST_SUITE(TypedEpoch, resident::testing::SpaceTypes, resident::testing::SpaceName);

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

TEST(Epoch, HostEpochsServeEveryRowOnceUnderEveryShuffle) {
  resident::testing::check_every_row_once(HostSpace{},
                                          {Shuffle::none, Shuffle::batches, Shuffle::samples});
}

TEST(Epoch, HostGatherMatchesAReferenceGather) {
  resident::testing::check_gather_matches_reference(HostSpace{});
}

TEST(Epoch, HostConversionMatchesTheReferenceBitForBit) {
  resident::testing::check_conversion_bitwise(HostSpace{}, Shuffle::none);
  resident::testing::check_conversion_bitwise(HostSpace{}, Shuffle::samples);
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

TEST(Epoch, ANewerGatheringEpochRetiresTheOlderOne) {
  const auto ids = row_ids(64);
  DeviceDataset<HostSpace, std::int64_t> ds(HostSpace{}, epoch_options(16, Remainder::drop),
                                            HostTensor<const std::int64_t>(ids.data(), {64}));
  auto older = ds.epoch({0, 0, Shuffle::samples});
  auto newer = ds.epoch({0, 1, Shuffle::samples});
  EXPECT_NO_THROW((void)newer.batch(0));
  EXPECT_THROW((void)older.batch(0), resident::Error);
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

#if RESIDENT_HAS_CUDA
// half and bfloat16 storage converts to float on the host too (the same conversion code).
TEST(Epoch, HalfAndBfloat16StorageConvertToFloat) {
  constexpr std::size_t n = 40;
  std::vector<__half> halves(n * 2);
  std::vector<__nv_bfloat16> brains(n * 2);
  for (std::size_t i = 0; i < halves.size(); ++i) {
    halves[i] = __float2half(static_cast<float>(i) * 0.25f);
    brains[i] = __float2bfloat16(static_cast<float>(i) * 0.5f);
  }
  DeviceDataset<HostSpace, __half, __nv_bfloat16> ds(
      HostSpace{}, epoch_options(8, Remainder::drop),
      HostTensor<const __half>(halves.data(), {n, 2}),
      HostTensor<const __nv_bfloat16>(brains.data(), {n, 2}));
  auto epoch = ds.epoch({0, 0, Shuffle::samples}, resident::convert<0>(resident::Normalize{2, 1}));
  for (std::size_t k = 0; k < epoch.size(); ++k) {
    const auto [x, b] = epoch.batch(k);
    static_assert(std::is_same_v<decltype(x), const resident::BatchView<const float>>);
    static_assert(std::is_same_v<decltype(b), const resident::BatchView<const __nv_bfloat16>>);
    const auto ids = read_back(ds.space(), ds.stream(), epoch.batch_indices(k));
    for (std::size_t r = 0; r < x.rows(); ++r)
      for (std::size_t e = 0; e < 2; ++e) {
        const std::size_t at = static_cast<std::size_t>(ids[r]) * 2 + e;
        EXPECT_EQ(x.row(r)[e], static_cast<float>(at) * 0.25f * 2 + 1);
        EXPECT_EQ(__bfloat162float(b.row(r)[e]), static_cast<float>(at) * 0.5f);
      }
  }
}

// Compiled by g++, a gathering epoch on the device cannot launch its kernels: it says so.
TEST(Epoch, DeviceGatherInAHostTranslationUnitSaysToUseNvcc) {
  resident::testing::skip_unless_usable<resident::CudaSpace>();
  if (::testing::Test::IsSkipped() || ::testing::Test::HasFatalFailure()) return;
  const auto ids = row_ids(10);
  DeviceDataset<resident::CudaSpace, std::int64_t> ds(
      resident::CudaSpace{0}, epoch_options(5, Remainder::drop),
      HostTensor<const std::int64_t>(ids.data(), {10}));
  auto epoch = ds.epoch({0, 0, Shuffle::samples});
  try {
    (void)epoch.batch(0);
    FAIL() << "a g++ translation unit launched a kernel";
  } catch (const resident::InvalidArgument& error) {
    EXPECT_NE(std::string(error.what()).find("nvcc"), std::string::npos) << error.what();
  }
}
#endif

}  // namespace
