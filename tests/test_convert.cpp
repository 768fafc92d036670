// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// Conversions applied while an epoch gathers a batch: Normalize on its own, convert<Field>, and
// converted epochs against a host reference.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "resident/convert.hpp"
#include "resident/resident.hpp"
#include "support/epoch_checks.hpp"
#include "support/spaces.hpp"

namespace {

using resident::DeviceDataset;
using resident::HostSpace;
using resident::HostTensor;
using resident::InvalidArgument;
using resident::Normalize;
using resident::Remainder;
using resident::Shuffle;
using resident::testing::epoch_options;
using resident::testing::read_back;

/// The bits of `value`, so that a comparison tells -0 from 0 and compares NaNs.
std::uint32_t bits(float value) {
  std::uint32_t out = 0;
  static_assert(sizeof out == sizeof value);
  std::memcpy(&out, &value, sizeof out);
  return out;
}

/// The message of the InvalidArgument that `call` throws, or "no error".
template <class Call>
std::string refusal_of(Call&& call) {
  try {
    call();
  } catch (const InvalidArgument& error) {
    return error.what();
  }
  return "no error";
}

TEST(Normalize, TheDefaultIsTheIdentityExactForSixteenBitIntegers) {
  const Normalize identity;
  for (int value = std::numeric_limits<std::int16_t>::min();
       value <= std::numeric_limits<std::int16_t>::max(); ++value)
    ASSERT_EQ(identity(static_cast<std::int16_t>(value), 3), static_cast<float>(value)) << value;
  for (int value = 0; value <= std::numeric_limits<std::uint16_t>::max(); ++value)
    ASSERT_EQ(identity(static_cast<std::uint16_t>(value), 0), static_cast<float>(value)) << value;
  EXPECT_EQ(identity(2.5f, 0), 2.5f);
}

// out = float(double(x) * double(scale) + double(offset)), the same for every element.
TEST(Normalize, ScaleAndOffsetAreComputedInDoubleAndRoundedOnce) {
  const float scale = 1.0f / 255, offset = -0.485f;
  const Normalize normalize(scale, offset);
  for (int value = 0; value < 256; ++value) {
    const auto x = static_cast<std::uint8_t>(value);
    const double exact = static_cast<double>(value) * static_cast<double>(scale);
    const auto expected = static_cast<float>(exact + static_cast<double>(offset));
    ASSERT_EQ(bits(normalize(x, 0)), bits(expected)) << value;
    ASSERT_EQ(normalize(x, 17), normalize(x, 0)) << "one channel: the element does not matter";
  }
  EXPECT_EQ(Normalize(2.0f, 1.0f)(std::int32_t{-4}, 0), -7.0f);
}

// CHW rows: channel c is a run of `channel_stride` elements; HWC rows: channel = element % C.
TEST(Normalize, MeanStdPicksEachElementsChannelByTheStride) {
  // Channel 0: (x - 0.5) / 0.5 = 2x - 1; channel 1: (x - 0.25) / 0.25 = 4x - 1; channel 2: x.
  const auto chw = Normalize::mean_std({0.5f, 0.25f}, {0.5f, 0.25f}, 2);
  std::vector<float> got;
  for (std::size_t e = 0; e < 8; ++e) got.push_back(chw(1.0f, e));
  EXPECT_EQ(got, (std::vector<float>{1, 1, 3, 3, 1, 1, 3, 3}));

  const auto hwc = Normalize::mean_std({0.5f, 0.25f, 0.0f}, {0.5f, 0.25f, 1.0f}, 1);
  got.clear();
  for (std::size_t e = 0; e < 6; ++e) got.push_back(hwc(std::uint8_t{2}, e));
  EXPECT_EQ(got, (std::vector<float>{3, 7, 2, 3, 7, 2}));

  // torchvision's ToTensor then Normalize: x / 255 first.
  const auto scaled = Normalize::mean_std({0.5f}, {0.25f}, 1, 1.0f / 255);
  EXPECT_FLOAT_EQ(scaled(std::uint8_t{255}, 0), 2.0f);
  EXPECT_FLOAT_EQ(scaled(std::uint8_t{0}, 5), -2.0f);
}

TEST(Normalize, MeanStdRefusesWhatItCannotApplySayingWhy) {
  EXPECT_NE(refusal_of([] {
              (void)Normalize::mean_std({0.5f, 0.5f}, {0.5f}, 1);
            }).find("got 2 means and 1 stds"),
            std::string::npos);
  EXPECT_NE(refusal_of([] { (void)Normalize::mean_std({}, {}, 1); }).find("1 to 8"),
            std::string::npos);
  EXPECT_NE(
      refusal_of([] {
        (void)Normalize::mean_std({1, 1, 1, 1, 1, 1, 1, 1, 1}, {1, 1, 1, 1, 1, 1, 1, 1, 1}, 1);
      }).find("got 9 means"),
      std::string::npos);
  EXPECT_NE(refusal_of([] {
              (void)Normalize::mean_std({0.5f}, {0.5f}, 0);
            }).find("channel stride above 0"),
            std::string::npos);
  EXPECT_NE(refusal_of([] {
              (void)Normalize::mean_std({0.5f, 0.5f}, {0.5f, 0.0f}, 1);
            }).find("std of channel 1 is 0"),
            std::string::npos);
  EXPECT_EQ(refusal_of([] {
              (void)Normalize::mean_std({1, 2, 3, 4, 5, 6, 7, 8}, {1, 1, 1, 1, 1, 1, 1, 1}, 1);
            }),
            "no error")
      << Normalize::max_channels << " channels are allowed";
}

TEST(Normalize, RowLayoutMustHoldWholeImages) {
  const auto three_by_four = Normalize::mean_std({0, 0, 0}, {1, 1, 1}, 4);  // 12 per image
  EXPECT_EQ(refusal_of([&] { three_by_four.check_row_layout(12); }), "no error");
  EXPECT_EQ(refusal_of([&] { three_by_four.check_row_layout(36); }), "no error");
  const std::string refused = refusal_of([&] { three_by_four.check_row_layout(10); });
  EXPECT_NE(refused.find("3 channels of 4 elements each (12 per image)"), std::string::npos)
      << refused;
  EXPECT_NE(refused.find("rows have 10 elements"), std::string::npos) << refused;
  EXPECT_EQ(refusal_of([] { Normalize(2, 1).check_row_layout(7); }), "no error")
      << "one channel fits any row";
}

/// A conversion of the caller's own: adds `k`.
struct AddConstant {
  using output_type = float;
  float k;
  template <class T>
  float operator()(T value, std::size_t /*element*/) const noexcept {
    return static_cast<float>(value) + k;
  }
};

TEST(Convert, NamesTheFieldAndKeepsTheOperation) {
  const auto normalized = resident::convert<1>(Normalize(2, 0));
  static_assert(
      std::is_same_v<std::decay_t<decltype(normalized)>, resident::FieldConversion<1, Normalize>>);
  EXPECT_EQ(normalized.field, 1u);
  EXPECT_EQ(normalized.op(std::uint8_t{3}, 0), 6.0f);
  const auto added = resident::convert<0>(AddConstant{1.5f});
  EXPECT_EQ(added.field, 0u);
  EXPECT_EQ(added.op.k, 1.5f);
  EXPECT_EQ(added.op(std::int32_t{2}, 9), 3.5f);
  static_assert(!std::is_same_v<resident::NoConversion, std::decay_t<decltype(added)>>);
}

TEST(Epoch, HostConversionMatchesTheReferenceBitForBit) {
  resident::testing::check_conversion_bitwise(HostSpace{}, Shuffle::none);
  resident::testing::check_conversion_bitwise(HostSpace{}, Shuffle::samples);
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
#endif

}  // namespace
