// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// Conversions applied while an epoch gathers a batch: Normalize on its own, convert<Field>, and
// converted epochs against a host reference.
#include <gtest/gtest.h>

#include <cmath>
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

// --- Cast -----------------------------------------------------------------------------------

// The widenings compile, and nothing that could change a value does.
static_assert(resident::Cast<std::int64_t>::accepts<std::uint8_t>);
static_assert(resident::Cast<std::int64_t>::accepts<std::int32_t>);
static_assert(resident::Cast<std::int64_t>::accepts<std::uint32_t>);
static_assert(resident::Cast<std::int32_t>::accepts<std::uint16_t>);
static_assert(resident::Cast<std::int32_t>::accepts<std::int32_t>);
static_assert(resident::Cast<float>::accepts<std::uint16_t>);
static_assert(resident::Cast<double>::accepts<float>);
static_assert(resident::Cast<double>::accepts<std::int32_t>);
static_assert(!resident::Cast<std::int32_t>::accepts<std::uint32_t>);
static_assert(!resident::Cast<std::int64_t>::accepts<std::uint64_t>);
static_assert(!resident::Cast<std::uint64_t>::accepts<std::int8_t>);
static_assert(!resident::Cast<std::int16_t>::accepts<std::int32_t>);
static_assert(!resident::Cast<float>::accepts<std::int32_t>);
static_assert(!resident::Cast<float>::accepts<double>);
static_assert(!resident::Cast<std::int64_t>::accepts<float>);
static_assert(!resident::Cast<bool>::accepts<std::uint8_t>);
#if RESIDENT_HAS_CUDA
static_assert(resident::Cast<float>::accepts<__half>);
static_assert(resident::Cast<double>::accepts<__nv_bfloat16>);
static_assert(!resident::Cast<std::int32_t>::accepts<__half>);
#endif

TEST(Cast, KeepsEveryValueAtTheEndsOfTheStoredType) {
  const resident::Cast<std::int64_t> to_long;
  EXPECT_EQ(to_long(std::numeric_limits<std::int32_t>::min(), 0), -2147483648LL);
  EXPECT_EQ(to_long(std::numeric_limits<std::uint32_t>::max(), 7), 4294967295LL);
  EXPECT_EQ(to_long(std::uint8_t{255}, 0), 255);
  const resident::Cast<std::int32_t> to_int;
  EXPECT_EQ(to_int(std::uint16_t{65535}, 0), 65535);
  EXPECT_EQ(resident::Cast<double>{}(-0.0f, 0), 0.0);
  EXPECT_TRUE(std::signbit(resident::Cast<double>{}(-0.0f, 0)));
  static_assert(std::is_same_v<resident::Cast<std::int64_t>::output_type, std::int64_t>);
}

// --- Channel statistics --------------------------------------------------------------------

// The figures of the same images stored CHW and HWC agree with a plain two-pass reference, and
// a Normalize made of them gives every channel of the epoch's batches mean 0 and deviation 1.
TEST(ChannelStatistics, MatchAPlainReferenceInEitherLayoutAndNormalizeToZeroAndOne) {
  constexpr std::size_t n = 53, c = 3, h = 5, w = 7;
  std::vector<std::uint8_t> chw(n * c * h * w), hwc(chw.size());
  for (std::size_t r = 0; r < n; ++r)
    for (std::size_t ch = 0; ch < c; ++ch)
      for (std::size_t p = 0; p < h * w; ++p) {
        const auto value = static_cast<std::uint8_t>((r * 131 + p * 17 + ch * 70) % 256 / (ch + 1));
        chw[(r * c + ch) * h * w + p] = value;
        hwc[(r * h * w + p) * c + ch] = value;
      }
  const auto from_chw =
      resident::channel_statistics(HostTensor<const std::uint8_t>(chw.data(), {n, c, h, w}),
                                   ImageLayout::chw(c, h, w), 1.0f / 255);
  const auto from_hwc =
      resident::channel_statistics(HostTensor<const std::uint8_t>(hwc.data(), {n, h, w, c}),
                                   ImageLayout::hwc(h, w, c), 1.0f / 255);
  EXPECT_EQ(from_chw.values, n * h * w);
  for (std::size_t ch = 0; ch < c; ++ch) {
    double sum = 0, squares = 0;
    for (std::size_t r = 0; r < n; ++r)
      for (std::size_t p = 0; p < h * w; ++p) sum += chw[(r * c + ch) * h * w + p] / 255.0;
    const double mean = sum / static_cast<double>(n * h * w);
    for (std::size_t r = 0; r < n; ++r)
      for (std::size_t p = 0; p < h * w; ++p) {
        const double deviation = chw[(r * c + ch) * h * w + p] / 255.0 - mean;
        squares += deviation * deviation;
      }
    const double std = std::sqrt(squares / static_cast<double>(n * h * w));
    EXPECT_NEAR(from_chw.mean[ch], mean, 1e-6) << ch;
    EXPECT_NEAR(from_chw.std[ch], std, 1e-6) << ch;
    EXPECT_EQ(from_chw.mean[ch], from_hwc.mean[ch]) << ch;
    EXPECT_EQ(from_chw.std[ch], from_hwc.std[ch]) << ch;
  }
  // Normalized by them, every channel of an epoch has mean 0 and deviation 1.
  const ImageLayout layout = ImageLayout::hwc(h, w, c);
  DeviceDataset<HostSpace, std::uint8_t> ds(
      HostSpace{}, epoch_options(8, Remainder::partial),
      HostTensor<const std::uint8_t>(hwc.data(), {n, h, w, c}));
  const auto normalize = Normalize::mean_std(from_hwc.mean, from_hwc.std, layout, 1.0f / 255);
  std::vector<double> sum(c), squares(c);
  for (auto [x] : ds.epoch({1, 0, Shuffle::samples}, resident::convert<0>(normalize)))
    for (std::size_t r = 0; r < x.valid_rows(); ++r)
      for (std::size_t e = 0; e < layout.elements(); ++e) {
        sum[e % c] += x.row(r)[e];
        squares[e % c] += static_cast<double>(x.row(r)[e]) * x.row(r)[e];
      }
  for (std::size_t ch = 0; ch < c; ++ch) {
    const auto count = static_cast<double>(n * h * w);
    EXPECT_NEAR(sum[ch] / count, 0.0, 1e-5) << ch;
    EXPECT_NEAR(squares[ch] / count, 1.0, 1e-4) << ch;
  }
}

// Values far from zero with a small spread: E[x^2] - E[x]^2 would lose every digit of it.
TEST(ChannelStatistics, ASmallDeviationFarFromZeroKeepsItsDigits) {
  std::vector<float> values(1000);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = 1.0e6f + (i % 2 == 0 ? 0.5f : -0.5f);
  const auto stats = resident::channel_statistics(HostTensor<const float>(values.data(), {250, 4}),
                                                  ImageLayout::chw(1, 2, 2));
  EXPECT_EQ(stats.mean[0], 1.0e6f);
  EXPECT_FLOAT_EQ(stats.std[0], 0.5f);
  const std::vector<double> constant(12, 3.0);
  const auto flat = resident::channel_statistics(HostTensor<const double>(constant.data(), {3, 4}),
                                                 ImageLayout::hwc(1, 2, 2));
  EXPECT_EQ(flat.std, (std::vector<float>{0.0f, 0.0f}));
  EXPECT_EQ(flat.mean, (std::vector<float>{3.0f, 3.0f}));
}

template <class Space>
using StatisticsInASpace = resident::testing::OverSpaces<Space>;
TYPED_TEST_SUITE(StatisticsInASpace, resident::testing::SpaceTypes, resident::testing::SpaceName);

// A dataset's field, read from the space's memory in blocks of rows, gives the figures of its
// host tensor bit for bit, in either layout (4.6 MB of images: more than one block).
TYPED_TEST(StatisticsInASpace, AFieldInTheSpaceGivesTheHostTensorsFigures) {
  constexpr std::size_t n = 1501, c = 3, side = 32, elements = c * side * side;
  std::vector<std::uint8_t> pixels(n * elements);
  for (std::size_t i = 0; i < pixels.size(); ++i)
    pixels[i] = static_cast<std::uint8_t>((i * 2654435761u) >> 11);
  for (const ImageLayout image :
       {ImageLayout::chw(c, side, side), ImageLayout::hwc(side, side, c)}) {
    const HostTensor<const std::uint8_t> rows(pixels.data(), {n, elements});
    const DeviceDataset<TypeParam, std::uint8_t> ds(this->space_,
                                                    epoch_options(64, Remainder::drop), rows);
    const auto in_space = resident::channel_statistics<0>(ds, image, 1.0f / 255);
    const auto on_host = resident::channel_statistics(rows, image, 1.0f / 255);
    EXPECT_EQ(in_space.mean, on_host.mean);
    EXPECT_EQ(in_space.std, on_host.std);
    EXPECT_EQ(in_space.values, n * side * side);
  }
  const DeviceDataset<TypeParam, std::uint8_t> empty(
      this->space_, epoch_options(64, Remainder::drop),
      HostTensor<const std::uint8_t>(pixels.data(), {0, elements}));
  EXPECT_NE(refusal_of([&] {
              (void)resident::channel_statistics<0>(empty, ImageLayout::chw(c, side, side));
            }).find("has no rows"),
            std::string::npos);
}

TEST(ChannelStatistics, RefusesWhatItCannotMeasureSayingWhy) {
  std::vector<float> values(36, 1.0f);
  const HostTensor<const float> rows(values.data(), {3, 12});
  EXPECT_NE(refusal_of([&] {
              (void)resident::channel_statistics(rows, ImageLayout::chw(3, 2, 3));
            }).find("has 18 elements, but the rows have 12"),
            std::string::npos);
  EXPECT_NE(refusal_of([&] {
              (void)resident::channel_statistics(rows, ImageLayout::hwc(1, 1, 12));
            }).find("has 12 channels; Normalize takes 1 to 8"),
            std::string::npos);
  EXPECT_NE(refusal_of([&] {
              (void)resident::channel_statistics(HostTensor<const float>(values.data(), {0, 12}),
                                                 ImageLayout::chw(3, 2, 2));
            }).find("has no rows"),
            std::string::npos);
  values[7] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_NE(refusal_of([&] {
              (void)resident::channel_statistics(rows, ImageLayout::chw(3, 2, 2));
            }).find("channel 1 has a mean or deviation that is not a finite float"),
            std::string::npos);
  EXPECT_NE(refusal_of([&] {
              (void)resident::channel_statistics(rows, ImageLayout::chw(3, 2, 2),
                                                 std::numeric_limits<float>::infinity());
            }).find("input_scale is inf"),
            std::string::npos);
}

// --- A conversion per field, on every space ---------------------------------------------------

template <class Space>
using PerField = resident::testing::OverGatheringSpaces<Space>;
TYPED_TEST_SUITE(PerField, resident::testing::GatherSpaceTypes, resident::testing::SpaceName);

/// Images of 3 x 4 x 4 bytes and int32 labels at both ends of their range.
struct LabelledImages {
  explicit LabelledImages(std::size_t n) : pixels(n * 48), labels(n) {
    for (std::size_t i = 0; i < pixels.size(); ++i)
      pixels[i] = static_cast<std::uint8_t>(i * 2654435761U >> 11);
    for (std::size_t i = 0; i < n; ++i)
      labels[i] = i % 3 == 0   ? std::numeric_limits<std::int32_t>::min() + static_cast<int>(i)
                  : i % 3 == 1 ? std::numeric_limits<std::int32_t>::max() - static_cast<int>(i)
                               : static_cast<std::int32_t>(i);
  }
  [[nodiscard]] HostTensor<const std::uint8_t> x() const {
    return {pixels.data(), {labels.size(), 4, 4, 3}};
  }
  [[nodiscard]] HostTensor<const std::int32_t> y() const {
    return {labels.data(), {labels.size()}};
  }
  std::vector<std::uint8_t> pixels;
  std::vector<std::int32_t> labels;
};

// x normalized and y cast to int64 in one epoch, named in either order and beside an
// augmentation: x is the x of the epoch that converts x alone, bit for bit, and y is the stored
// labels widened; on a preloaded and a streamed dataset, every shuffle and remainder.
TYPED_TEST(PerField, EachFieldTakesItsOwnConversionInOneEpoch) {
  constexpr std::size_t n = 37;
  const LabelledImages data(n);
  const auto normalize = resident::convert<0>(Normalize::mean_std(
      {0.5f, 0.4f, 0.3f}, {0.2f, 0.25f, 0.3f}, ImageLayout::hwc(4, 4, 3), 1.0f / 255));
  const auto cast = resident::convert<1>(resident::Cast<std::int64_t>{});
  const auto crop = resident::augment<0>(ImageLayout::hwc(4, 4, 3), resident::RandomCrop{1},
                                         resident::RandomFlip{});
  for (const Remainder remainder : {Remainder::drop, Remainder::partial, Remainder::pad}) {
    resident::DatasetOptions options = epoch_options(8, remainder);
    options.streaming.chunk_batches = 2;
    DeviceDataset<TypeParam, std::uint8_t, std::int32_t> preloaded(this->space_, options, data.x(),
                                                                   data.y());
    resident::StreamingDataset<TypeParam, std::uint8_t, std::int32_t> streamed(
        this->space_, options, data.x(), data.y());
    for (const Shuffle shuffle : {Shuffle::none, Shuffle::batches, Shuffle::samples}) {
      SCOPED_TRACE(std::string(resident::remainder_name(remainder)) + ", " +
                   resident::testing::shuffle_name(shuffle));
      const resident::EpochOptions at{5, 2, shuffle};
      const auto check = [&](auto& ds, auto&& reference, auto&& both, const char* how) {
        ASSERT_EQ(both.size(), reference.size()) << how;
        for (std::size_t k = 0; k < both.size(); ++k) {
          const auto [x, y] = both.batch(k);
          static_assert(std::is_same_v<decltype(x), const resident::BatchView<const float>>);
          static_assert(std::is_same_v<decltype(y), const resident::BatchView<const std::int64_t>>);
          const auto got_x = read_back(ds.space(), ds.stream(), x);
          const auto got_y = read_back(ds.space(), ds.stream(), y);
          const auto [want_x, want_y] = reference.batch(k);
          ASSERT_EQ(got_x, read_back(ds.space(), ds.stream(), want_x)) << how << ", batch " << k;
          const auto labels = read_back(ds.space(), ds.stream(), want_y);
          ASSERT_EQ(got_y, std::vector<std::int64_t>(labels.begin(), labels.end()))
              << how << ", batch " << k;
          ASSERT_EQ(y.valid_rows(), want_y.valid_rows());
        }
      };
      check(preloaded, preloaded.epoch(at, normalize), preloaded.epoch(at, normalize, cast),
            "preloaded");
      check(preloaded, preloaded.epoch(at, normalize, crop),
            preloaded.epoch(at, cast, crop, normalize), "preloaded, augmented");
      check(streamed, streamed.epoch(at, normalize), streamed.epoch(at, cast, normalize),
            "streamed");
      check(streamed, streamed.epoch(at, crop, normalize),
            streamed.epoch(at, normalize, crop, cast), "streamed, augmented");
    }
  }
}

// llm.c's uint16 tokens served as int32 (as a libtorch without uint16 takes them): x and y
// both cast, every window's values those of the stored tokens, in every shuffle.
TYPED_TEST(PerField, TokenWindowsCastBothFields) {
  std::vector<std::uint16_t> tokens(301);
  for (std::size_t i = 0; i < tokens.size(); ++i)
    tokens[i] = static_cast<std::uint16_t>(65535 - i * 211 % 65536);
  resident::DatasetOptions options;
  options.batch_size = 4;
  options.remainder = Remainder::partial;
  resident::TokenDataset<TypeParam, std::uint16_t> ds(
      this->space_, options, resident::TokenOptions{16, 0},
      HostTensor<const std::uint16_t>(tokens.data(), {tokens.size()}));
  for (const Shuffle shuffle : {Shuffle::none, Shuffle::batches, Shuffle::samples}) {
    SCOPED_TRACE(resident::testing::shuffle_name(shuffle));
    const resident::EpochOptions at{3, 1, shuffle};
    auto plain = ds.epoch(at);
    auto cast = ds.epoch(at, resident::convert<1>(resident::Cast<std::int32_t>{}),
                         resident::convert<0>(resident::Cast<std::int32_t>{}));
    ASSERT_EQ(cast.size(), plain.size());
    for (std::size_t k = 0; k < cast.size(); ++k) {
      const auto [x, y] = cast.batch(k);
      static_assert(std::is_same_v<decltype(x), const resident::BatchView<const std::int32_t>>);
      const auto [want_x, want_y] = plain.batch(k);
      const auto stored_x = read_back(ds.space(), ds.stream(), want_x);
      const auto stored_y = read_back(ds.space(), ds.stream(), want_y);
      ASSERT_EQ(read_back(ds.space(), ds.stream(), x),
                std::vector<std::int32_t>(stored_x.begin(), stored_x.end()));
      ASSERT_EQ(read_back(ds.space(), ds.stream(), y),
                std::vector<std::int32_t>(stored_y.begin(), stored_y.end()));
    }
  }
}

}  // namespace
