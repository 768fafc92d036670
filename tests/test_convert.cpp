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
#include <utility>
#include <vector>

#include "resident/convert.hpp"
#include "resident/detail/gather/host_gather.hpp"
#include "resident/resident.hpp"
#include "support/epoch_checks.hpp"
#include "support/spaces.hpp"

namespace {

using resident::DeviceDataset;
using resident::HostSpace;
using resident::HostTensor;
using resident::ImageLayout;
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

constexpr float means[] = {0.49f, 0.48f, 0.45f, 0.1f, 0.9f, 0.3f, 0.7f, 0.2f};
constexpr float stds[] = {0.25f, 0.24f, 0.26f, 0.5f, 0.3f, 0.7f, 0.11f, 0.9f};

/// `Normalize::mean_std` of the first `sizeof...(C)` of `means` and `stds`.
template <std::size_t... C>
Normalize first_channels(std::index_sequence<C...> /*channels*/, std::size_t stride) {
  return Normalize::mean_std({means[C]...}, {stds[C]...}, stride, 1.0f / 255);
}

/// Element `e` of a row of `channels` channels of `stride` elements as `mean_std` defines it,
/// written out: channel `(e / stride) % channels`, `(x * input_scale - mean) / std` as
/// `x * (input_scale / std) + (-mean / std)` in double, rounded to float once.
float reference_normalized(float x, std::size_t e, std::size_t channels, std::size_t stride) {
  const std::size_t c = (e / stride) % channels;
  const float scale = (1.0f / 255) / stds[c];
  const float offset = -means[c] / stds[c];
  return static_cast<float>(static_cast<double>(x) * static_cast<double>(scale) +
                            static_cast<double>(offset));
}

/// The host's row conversion of `channels` channels against the reference, for the strides of
/// HWC rows (1), CHW rows and between, and rows that end inside a period; uint8 and float rows.
template <std::size_t Channels>
void check_host_row_conversion() {
  std::vector<std::uint8_t> pixels(3077);  // a CIFAR row and 5 elements more
  std::vector<float> values(pixels.size());
  for (std::size_t i = 0; i < pixels.size(); ++i) {
    pixels[i] = static_cast<std::uint8_t>(i * 97 % 256);
    values[i] = static_cast<float>(i * 7919 % 1000) * 0.37f - 150.0f;
  }
  const auto check = [](const auto& row, std::size_t elements, std::size_t stride) {
    const Normalize normalize = first_channels(std::make_index_sequence<Channels>{}, stride);
    const resident::detail::RowConverter<Normalize> convert(normalize);
    std::vector<float> got(elements);
    convert(row.data(), got.data(), elements);
    for (std::size_t e = 0; e < elements; ++e)
      ASSERT_EQ(bits(got[e]),
                bits(reference_normalized(static_cast<float>(row[e]), e, Channels, stride)))
          << Channels << " channels of stride " << stride << ", element " << e << " of " << elements
          << (sizeof row[e] == 1 ? " (uint8)" : " (float)");
  };
  for (const std::size_t stride : {1, 2, 3, 5, 8, 9, 16, 17, 64, 1024})
    for (const std::size_t elements : {pixels.size(), std::size_t{3072}, std::size_t{7}}) {
      check(pixels, elements, stride);
      check(values, elements, stride);
    }
}

TEST(Normalize, HostRowConversionOfEveryLayoutMatchesAStraightforwardReference) {
  check_host_row_conversion<1>();
  check_host_row_conversion<2>();
  check_host_row_conversion<3>();
  check_host_row_conversion<4>();
  check_host_row_conversion<5>();
  check_host_row_conversion<8>();
}

// CIFAR-shaped rows normalized per channel, as Keras (HWC) and PyTorch (CHW) store them, with
// and without an augmentation between: every element of every batch equals the reference.
TEST(Epoch, MeanStdOfHwcAndChwRowsMatchesAStraightforwardReference) {
  constexpr std::size_t n = 37;
  for (const ImageLayout layout : {ImageLayout::hwc(32, 32, 3), ImageLayout::chw(3, 32, 32),
                                   ImageLayout::hwc(5, 7, 4), ImageLayout::chw(4, 5, 7)}) {
    const std::size_t row = layout.elements();
    std::vector<std::uint8_t> images(n * row);
    for (std::size_t i = 0; i < images.size(); ++i)
      images[i] = static_cast<std::uint8_t>(i * 2654435761U % 251);
    const std::vector<std::size_t> shape =
        layout.order == ImageLayout::Order::chw
            ? std::vector<std::size_t>{n, layout.channels, layout.height, layout.width}
            : std::vector<std::size_t>{n, layout.height, layout.width, layout.channels};
    DeviceDataset<HostSpace, std::uint8_t> ds(HostSpace{}, epoch_options(8, Remainder::partial),
                                              HostTensor<const std::uint8_t>(images.data(), shape));
    const Normalize normalize =
        layout.channels == 3
            ? first_channels(std::make_index_sequence<3>{}, layout.channel_stride())
            : first_channels(std::make_index_sequence<4>{}, layout.channel_stride());
    const auto check = [&](auto& epoch, const char* how) {
      for (std::size_t k = 0; k < epoch.size(); ++k) {
        const auto [x] = epoch.batch(k);
        const auto ids = read_back(ds.space(), ds.stream(), epoch.batch_indices(k));
        for (std::size_t r = 0; r < x.valid_rows(); ++r) {
          const auto id = static_cast<std::size_t>(ids[r]);
          for (std::size_t e = 0; e < row; ++e)
            ASSERT_EQ(bits(x.row(r)[e]),
                      bits(reference_normalized(images[id * row + e], e, layout.channels,
                                                layout.channel_stride())))
                << layout.describe() << " " << how << ", batch " << k << " row " << r << " element "
                << e;
        }
      }
    };
    auto plain = ds.epoch({3, 1, Shuffle::samples}, resident::convert<0>(normalize));
    check(plain, "converted");
    auto augmented = ds.epoch({3, 1, Shuffle::samples}, resident::convert<0>(normalize),
                              resident::augment<0>(layout));
    check(augmented, "augmented (no ops) and converted");
  }
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
