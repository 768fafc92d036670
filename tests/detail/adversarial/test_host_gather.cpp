// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// The one-pass host gather (detail/gather/host_gather.hpp) under odd inputs, through the
// gathering epochs of a host DeviceDataset: five fields of mixed types under every remainder,
// zero rows, one-byte rows and zero-byte rows, Normalize by channel and other conversions
// bitwise against their op (special floats included), conversions that throw on any thread of
// the copy team, epochs abandoned, interleaved and after a move, and every rank of a shard.
// Each position of each field is compared with the row its row id names in the sources.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "resident/resident.hpp"
#include "support/batch_options.hpp"
#include "support/float_bits.hpp"
#include "support/mixed_values.hpp"

namespace {

using resident::DatasetOptions;
using resident::DeviceDataset;
using resident::HostSpace;
using resident::HostTensor;
using resident::Normalize;
using resident::Remainder;
using resident::Shuffle;
using resident::testing::batch_options;
using resident::testing::filled;
using resident::testing::float_bits;
using resident::testing::mix;

/// Five fields of mixed types and widths: int8 x3, uint16 x5, float x7, double x2, int64 x1.
struct FiveFields {
  explicit FiveFields(std::size_t n)
      : rows(n),
        a(filled<std::int8_t>(n, 3, 0)),
        b(filled<std::uint16_t>(n, 5, 1)),
        c(filled<float>(n, 7, 2)),
        d(filled<double>(n, 2, 3)),
        e(filled<std::int64_t>(n, 1, 4)) {}

  [[nodiscard]] auto tensors() const {
    return std::make_tuple(HostTensor<const std::int8_t>(a.data(), {rows, 3}),
                           HostTensor<const std::uint16_t>(b.data(), {rows, 5}),
                           HostTensor<const float>(c.data(), {rows, 7}),
                           HostTensor<const double>(d.data(), {rows, 2}),
                           HostTensor<const std::int64_t>(e.data(), {rows}));
  }

  std::size_t rows;
  std::vector<std::int8_t> a;
  std::vector<std::uint16_t> b;
  std::vector<float> c;
  std::vector<double> d;
  std::vector<std::int64_t> e;
};

using Five = DeviceDataset<HostSpace, std::int8_t, std::uint16_t, float, double, std::int64_t>;

Five make_five(const FiveFields& data, const DatasetOptions& options) {
  const auto [a, b, c, d, e] = data.tensors();
  return Five(HostSpace{}, options, a, b, c, d, e);
}

/// Row `r` of view `view` equals row `row` of `source` (`row_elements` each), bitwise.
template <class View, class T>
::testing::AssertionResult row_matches(const View& view, std::size_t r,
                                       const std::vector<T>& source, std::size_t row,
                                       std::size_t row_elements) {
  if (std::memcmp(view.data() + r * row_elements, source.data() + row * row_elements,
                  row_elements * sizeof(T)) == 0)
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "position " << r << " does not hold row " << row;
}

// Many fields of mixed types, every remainder policy, batch sizes that divide the rows and do
// not, smaller than the team and large enough for the team (>= 128 KiB): each position of each
// field holds the row its row id names, and the row ids of an epoch cover the rows once.
TEST(OnePassGather, FiveMixedFieldsEveryRemainderMatchTheirRowIds) {
  for (const std::size_t rows :
       {std::size_t{1}, std::size_t{2}, std::size_t{37}, std::size_t{5003}}) {
    const FiveFields data(rows);
    for (const Remainder remainder : {Remainder::drop, Remainder::partial, Remainder::pad}) {
      for (const std::size_t batch : {std::size_t{1}, std::size_t{3}, std::size_t{64},
                                      std::size_t{2500}, std::size_t{6000}}) {
        SCOPED_TRACE(std::to_string(rows) + " rows, batch " + std::to_string(batch) +
                     ", remainder " + std::to_string(static_cast<int>(remainder)));
        Five ds = make_five(data, batch_options(batch, remainder));
        for (const std::uint64_t epoch_number : {0u, 1u}) {
          auto epoch = ds.epoch({7, epoch_number, Shuffle::samples});
          std::vector<std::size_t> seen(rows, 0);
          for (std::size_t k = 0; k < epoch.size(); ++k) {
            const auto [a, b, c, d, e] = epoch.batch(k);
            const auto ids = epoch.batch_indices(k);
            ASSERT_EQ(ids.rows(), a.rows());
            for (std::size_t r = 0; r < a.rows(); ++r) {
              const auto row = static_cast<std::size_t>(ids.data()[r]);
              ASSERT_LT(row, rows) << "position " << r;
              ASSERT_TRUE(row_matches(a, r, data.a, row, 3));
              ASSERT_TRUE(row_matches(b, r, data.b, row, 5));
              ASSERT_TRUE(row_matches(c, r, data.c, row, 7));
              ASSERT_TRUE(row_matches(d, r, data.d, row, 2));
              ASSERT_TRUE(row_matches(e, r, data.e, row, 1));
              if (r < a.valid_rows()) ++seen[row];
            }
          }
          const std::size_t served =
              static_cast<std::size_t>(std::count(seen.begin(), seen.end(), std::size_t{1}));
          EXPECT_EQ(std::count_if(seen.begin(), seen.end(), [](std::size_t n) { return n > 1; }), 0)
              << "a row served twice as a valid row";
          if (remainder != Remainder::drop)
            EXPECT_EQ(served, rows);
          else
            EXPECT_EQ(served, rows / batch * batch);
        }
      }
    }
  }
}

// Zero rows: no batches, no gather, nothing thrown.
TEST(OnePassGather, ZeroRowsGiveAnEmptyGatheringEpoch) {
  const FiveFields data(0);
  Five ds = make_five(data, batch_options(8, Remainder::pad));
  auto epoch = ds.epoch({1, 0, Shuffle::samples});
  EXPECT_EQ(epoch.size(), 0u);
  std::size_t batches = 0;
  for (const auto& batch : epoch) {
    (void)batch;
    ++batches;
  }
  EXPECT_EQ(batches, 0u);
  auto converted = ds.epoch({1, 0, Shuffle::none}, resident::convert<2>(Normalize{2.0f, 1.0f}));
  EXPECT_EQ(converted.size(), 0u);
}

/// Normalize layouts over rows of `elements`: CHW of 3 x `plane`, HWC of `plane` x 3, rows of
/// two CHW images, one scale and offset, and a single-channel mean_std.
std::vector<std::pair<std::string, Normalize>> layouts(std::size_t plane) {
  return {
      {"scale_offset", Normalize{1.0f / 255, -0.5f}},
      {"chw",
       Normalize::mean_std({0.485f, 0.456f, 0.406f}, {0.229f, 0.224f, 0.225f}, plane, 1.0f / 255)},
      {"hwc",
       Normalize::mean_std({0.485f, 0.456f, 0.406f}, {0.229f, 0.224f, 0.225f}, 1, 1.0f / 255)},
      {"chw_two_images_per_row",
       Normalize::mean_std({0.1f, 0.2f, 0.3f}, {0.7f, 0.11f, 0.13f}, plane / 2, 0.5f)},
      {"one_channel", Normalize::mean_std({3.0f}, {0.3f}, 5, 1.0f)},
      {"eight_channels_hwc",
       Normalize::mean_std({1, 2, 3, 4, 5, 6, 7, 8},
                           {0.5f, 1.5f, 2.5f, 3.5f, 4.5f, 5.5f, 6.5f, 7.5f}, 1, 1.0f)},
  };
}

// Normalize by channel runs against `op(value, element)`, bitwise, for every stored type the
// docs list, CHW and HWC rows, among unconverted fields, at batch sizes below and above the
// team's threshold.
template <class T>
void expect_normalize_matches_op() {
  constexpr std::size_t plane = 48;            // 3 channels x 48 elements per row, or 48 x 3
  constexpr std::size_t elements = 3 * plane;  // also 8 x 18: the eight-channel HWC layout fits
  constexpr std::size_t rows = 1500;
  const std::vector<T> images = filled<T>(rows, elements, 11);
  const std::vector<std::int32_t> labels = filled<std::int32_t>(rows, 1, 12);
  const std::vector<std::uint8_t> tags = filled<std::uint8_t>(rows, 3, 13);
  for (const auto& [name, normalize] : layouts(plane)) {
    for (const std::size_t batch : {std::size_t{7}, std::size_t{1024}}) {
      SCOPED_TRACE(name + ", batch " + std::to_string(batch));
      DeviceDataset<HostSpace, std::uint8_t, T, std::int32_t> ds(
          HostSpace{}, batch_options(batch, Remainder::pad),
          HostTensor<const std::uint8_t>(tags.data(), {rows, 3}),
          HostTensor<const T>(images.data(), {rows, elements}),
          HostTensor<const std::int32_t>(labels.data(), {rows}));
      for (const Shuffle shuffle : {Shuffle::none, Shuffle::samples}) {
        auto epoch = ds.epoch({3, 1, shuffle}, resident::convert<1>(normalize));
        for (std::size_t k = 0; k < epoch.size(); ++k) {
          const auto [t, x, y] = epoch.batch(k);
          static_assert(std::is_same_v<decltype(x.data()), const float*>);
          const auto ids = epoch.batch_indices(k);
          for (std::size_t r = 0; r < x.rows(); ++r) {
            const auto row = static_cast<std::size_t>(ids.data()[r]);
            ASSERT_TRUE(row_matches(t, r, tags, row, 3));
            ASSERT_TRUE(row_matches(y, r, labels, row, 1));
            for (std::size_t e = 0; e < elements; ++e) {
              const float expected = normalize(images[row * elements + e], e);
              const float got = x.data()[r * elements + e];
              ASSERT_EQ(float_bits(got), float_bits(expected))
                  << "batch " << k << " position " << r << " element " << e << ": " << got
                  << " where op(value, element) gives " << expected;
            }
          }
        }
      }
    }
  }
}

TEST(OnePassGather, NormalizeOfUint8MatchesTheOpBitwise) {
  expect_normalize_matches_op<std::uint8_t>();
}
TEST(OnePassGather, NormalizeOfInt8MatchesTheOpBitwise) {
  expect_normalize_matches_op<std::int8_t>();
}
TEST(OnePassGather, NormalizeOfUint16MatchesTheOpBitwise) {
  expect_normalize_matches_op<std::uint16_t>();
}
TEST(OnePassGather, NormalizeOfInt64MatchesTheOpBitwise) {
  expect_normalize_matches_op<std::int64_t>();
}
TEST(OnePassGather, NormalizeOfFloatMatchesTheOpBitwise) { expect_normalize_matches_op<float>(); }
TEST(OnePassGather, NormalizeOfDoubleMatchesTheOpBitwise) { expect_normalize_matches_op<double>(); }

// A layout that does not fit the converted field's rows is refused when the epoch is made.
TEST(OnePassGather, ANormalizeLayoutThatDoesNotFitTheRowsIsRefused) {
  const std::vector<std::uint8_t> images(std::size_t{10} * 10);
  DeviceDataset<HostSpace, std::uint8_t> ds(
      HostSpace{}, batch_options(4, Remainder::partial),
      HostTensor<const std::uint8_t>(images.data(), {10, 10}));
  EXPECT_THROW(
      (void)ds.epoch({}, resident::convert<0>(Normalize::mean_std({0, 0, 0}, {1, 1, 1}, 1))),
      resident::InvalidArgument);
}

/// A conversion to a type wider than the stored one and than float.
struct ToDouble {
  using output_type = double;
  double operator()(float value, std::size_t element) const noexcept {
    return static_cast<double>(value) * 3.0 + static_cast<double>(element) * 1e-9;
  }
};

/// A conversion to a narrower integer type, element dependent.
struct LowByte {
  using output_type = std::uint8_t;
  std::uint8_t operator()(std::int64_t value, std::size_t element) const noexcept {
    return static_cast<std::uint8_t>(value + static_cast<std::int64_t>(element));
  }
};

TEST(OnePassGather, ConversionsWiderAndNarrowerThanTheStoredTypeMatchTheOp) {
  constexpr std::size_t rows = 3001;
  const FiveFields data(rows);
  for (const std::size_t batch : {std::size_t{5}, std::size_t{3000}}) {
    Five ds = make_five(data, batch_options(batch, Remainder::partial));
    {
      auto epoch = ds.epoch({5, 2, Shuffle::samples}, resident::convert<2>(ToDouble{}));
      for (std::size_t k = 0; k < epoch.size(); ++k) {
        const auto [a, b, c, d, e] = epoch.batch(k);
        static_assert(std::is_same_v<decltype(c.data()), const double*>);
        const auto ids = epoch.batch_indices(k);
        for (std::size_t r = 0; r < c.rows(); ++r) {
          const auto row = static_cast<std::size_t>(ids.data()[r]);
          ASSERT_TRUE(row_matches(a, r, data.a, row, 3));
          ASSERT_TRUE(row_matches(d, r, data.d, row, 2));
          for (std::size_t x = 0; x < 7; ++x)
            ASSERT_EQ(c.data()[r * 7 + x], ToDouble{}(data.c[row * 7 + x], x)) << k << " " << r;
        }
      }
    }
    {
      auto epoch = ds.epoch({5, 3, Shuffle::batches}, resident::convert<4>(LowByte{}));
      for (std::size_t k = 0; k < epoch.size(); ++k) {
        const auto [a, b, c, d, e] = epoch.batch(k);
        const auto ids = epoch.batch_indices(k);
        for (std::size_t r = 0; r < e.rows(); ++r) {
          const auto row = static_cast<std::size_t>(ids.data()[r]);
          ASSERT_TRUE(row_matches(b, r, data.b, row, 5));
          ASSERT_EQ(e.data()[r], LowByte{}(data.e[row], 0)) << k << " " << r;
        }
      }
    }
  }
}

/// A conversion that throws on one row id: the gather's error must reach the caller.
struct ThrowsOnRow {
  using output_type = float;
  std::int64_t bad_value;
  float operator()(std::int64_t value, std::size_t /*element*/) const {
    if (value == bad_value) throw std::runtime_error("conversion refused a value");
    return static_cast<float>(value);
  }
};

// An exception a conversion throws on any thread of the team is rethrown by batch(k), and the
// epoch goes on serving other batches correctly.
TEST(OnePassGather, AConversionThatThrowsOnAnyThreadSurfacesFromBatch) {
  constexpr std::size_t rows = 40000;  // 4 fields wide enough for the team at batch 8192
  std::vector<std::int64_t> ids(rows);
  std::iota(ids.begin(), ids.end(), std::int64_t{0});
  const std::vector<float> wide = filled<float>(rows, 16, 21);
  DeviceDataset<HostSpace, float, std::int64_t> ds(
      HostSpace{}, batch_options(8192, Remainder::partial),
      HostTensor<const float>(wide.data(), {rows, 16}),
      HostTensor<const std::int64_t>(ids.data(), {rows}));
  for (const std::int64_t bad : {std::int64_t{0}, std::int64_t{8191}, std::int64_t{4100}}) {
    auto epoch = ds.epoch({}, resident::convert<1>(ThrowsOnRow{bad}));
    EXPECT_THROW((void)epoch.batch(0), std::runtime_error) << "row " << bad;
    const auto [x, y] = epoch.batch(2);
    for (std::size_t r = 0; r < y.rows(); ++r)
      ASSERT_EQ(y.data()[r], static_cast<float>(16384 + r));
  }
}

// A gather that fails half-way leaves its slot half overwritten, so the slot claims no batch
// once a fill starts: asked for again, the batch the slot held before is gathered anew rather
// than served as the mixed rows. With ring_depth 2, batch 2 goes into batch 0's slot.
TEST(OnePassGather, AGatherThatThrowsLeavesNoEarlierBatchClaimedInItsSlot) {
  constexpr std::size_t rows = 64;
  std::vector<std::int64_t> ids(rows);
  std::iota(ids.begin(), ids.end(), std::int64_t{0});
  DeviceDataset<HostSpace, std::int64_t> ds(HostSpace{}, batch_options(8, Remainder::partial),
                                            HostTensor<const std::int64_t>(ids.data(), {rows}));
  auto epoch = ds.epoch({}, resident::convert<0>(ThrowsOnRow{20}));  // in batch 2, position 4
  {
    const auto [x] = epoch.batch(0);
    ASSERT_EQ(x.data()[0], 0.0f);
  }
  EXPECT_THROW((void)epoch.batch(2), std::runtime_error);
  const auto [x] = epoch.batch(0);  // batch 0 again: its slot was partly overwritten by batch 2
  for (std::size_t r = 0; r < x.rows(); ++r)
    EXPECT_EQ(x.data()[r], static_cast<float>(r))
        << "batch 0 position " << r << " holds another batch's row";
}

// Epochs in a row, abandoned mid-way, interleaved, and after the dataset moved.
TEST(OnePassGather, EpochsInARowAbandonedInterleavedAndAfterAMove) {
  constexpr std::size_t rows = 4099;
  const FiveFields data(rows);
  Five ds = make_five(data, batch_options(2048, Remainder::pad));
  const auto check = [&](auto& epoch, std::size_t k) {
    const auto [a, b, c, d, e] = epoch.batch(k);
    const auto ids = epoch.batch_indices(k);
    for (std::size_t r = 0; r < a.rows(); ++r) {
      const auto row = static_cast<std::size_t>(ids.data()[r]);
      ASSERT_TRUE(row_matches(b, r, data.b, row, 5));
      ASSERT_TRUE(row_matches(d, r, data.d, row, 2));
    }
  };
  for (std::uint64_t e = 0; e < 4; ++e) {
    auto epoch = ds.epoch({11, e, Shuffle::samples});
    check(epoch, 0);
    if (e % 2 == 0) continue;  // abandoned after one batch
    for (std::size_t k = 0; k < epoch.size(); ++k) check(epoch, k);
  }
  auto first = ds.epoch({11, 9, Shuffle::samples});
  check(first, 1);
  auto second = ds.epoch({11, 10, Shuffle::samples});  // a ring of its own
  check(first, 0);
  check(second, 2);
  check(first, 2);
  Five moved = std::move(ds);
  EXPECT_THROW((void)second.batch(0), resident::Error);
  EXPECT_THROW((void)second.size(), resident::Error);
  auto third = moved.epoch({11, 10, Shuffle::samples});
  for (std::size_t k = 0; k < third.size(); ++k) check(third, k);
}

// One-byte rows, batches far smaller than the team and far larger (one batch of all rows).
TEST(OnePassGather, OneByteRowsAtEveryBatchSize) {
  for (const std::size_t rows : {std::size_t{1}, std::size_t{3}, std::size_t{300000}}) {
    std::vector<std::uint8_t> bytes = filled<std::uint8_t>(rows, 1, 31);
    for (const std::size_t batch :
         {std::size_t{1}, std::size_t{2}, std::size_t{131072}, std::size_t{400000}}) {
      DeviceDataset<HostSpace, std::uint8_t> ds(
          HostSpace{}, batch_options(batch, Remainder::partial),
          HostTensor<const std::uint8_t>(bytes.data(), {rows}));
      auto epoch = ds.epoch({2, 2, Shuffle::samples});
      std::size_t served = 0;
      for (std::size_t k = 0; k < epoch.size(); ++k) {
        const auto [x] = epoch.batch(k);
        const auto ids = epoch.batch_indices(k);
        for (std::size_t r = 0; r < x.rows(); ++r)
          ASSERT_EQ(x.data()[r], bytes[static_cast<std::size_t>(ids.data()[r])])
              << rows << " rows, batch " << batch << ", position " << r;
        served += x.rows();
      }
      EXPECT_EQ(served, rows);
    }
  }
}

/// The identity as a conversion: a gathered epoch that must equal the zero-copy one.
struct Same {
  using output_type = float;
  float operator()(float value, std::size_t /*element*/) const noexcept { return value; }
};

// A converting epoch gathers; with the identity it must serve the bytes the zero-copy epoch of
// the same order serves, for every rank of partitioned and replicated shards and every
// remainder (the row order, the replicas and the padding all go through the one-pass gather).
TEST(OnePassGather, AnIdentityConversionEqualsTheZeroCopyEpochOnEveryShard) {
  constexpr std::size_t rows = 2003;
  const FiveFields data(rows);
  for (const auto sharding : {resident::Sharding::partitioned, resident::Sharding::replicated}) {
    for (int rank = 0; rank < 3; ++rank) {
      for (const Remainder remainder : {Remainder::drop, Remainder::partial, Remainder::pad}) {
        for (const std::size_t batch : {std::size_t{9}, std::size_t{700}}) {
          DatasetOptions options = batch_options(batch, remainder);
          options.shard = {rank, 3, 0};
          options.sharding = sharding;
          Five ds = make_five(data, options);
          for (const Shuffle shuffle : {Shuffle::none, Shuffle::batches}) {
            SCOPED_TRACE("rank " + std::to_string(rank) + ", batch " + std::to_string(batch) +
                         ", remainder " + std::to_string(static_cast<int>(remainder)) +
                         ", shuffle " + std::to_string(static_cast<int>(shuffle)));
            auto plain = ds.epoch({8, 3, shuffle});
            auto gathered = ds.epoch({8, 3, shuffle}, resident::convert<2>(Same{}));
            ASSERT_EQ(plain.size(), gathered.size());
            for (std::size_t k = 0; k < plain.size(); ++k) {
              const auto [a0, b0, c0, d0, e0] = plain.batch(k);
              const auto [a1, b1, c1, d1, e1] = gathered.batch(k);
              ASSERT_EQ(a0.rows(), a1.rows());
              ASSERT_EQ(a0.valid_rows(), a1.valid_rows());
              ASSERT_EQ(std::memcmp(a0.data(), a1.data(), a0.bytes()), 0) << k;
              ASSERT_EQ(std::memcmp(b0.data(), b1.data(), b0.bytes()), 0) << k;
              ASSERT_EQ(std::memcmp(c0.data(), c1.data(), c0.bytes()), 0) << k;
              ASSERT_EQ(std::memcmp(d0.data(), d1.data(), d0.bytes()), 0) << k;
              ASSERT_EQ(std::memcmp(e0.data(), e1.data(), e0.bytes()), 0) << k;
            }
          }
        }
      }
    }
  }
}

// NaN, infinities, signed zeros, subnormals and extremes through Normalize's channel runs:
// bitwise what op(value, element) gives.
TEST(OnePassGather, NormalizeOfSpecialFloatsMatchesTheOpBitwise) {
  const float specials[] = {0.0f,
                            -0.0f,
                            std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(),
                            std::numeric_limits<float>::quiet_NaN(),
                            -std::numeric_limits<float>::quiet_NaN(),
                            std::numeric_limits<float>::denorm_min(),
                            std::numeric_limits<float>::min(),
                            std::numeric_limits<float>::max(),
                            -std::numeric_limits<float>::max(),
                            1e-30f,
                            3.3f};
  constexpr std::size_t elements =
      std::size_t{12} * 8;  // 3 channels of 32 (CHW), or 32 pixels of 3 (HWC)
  constexpr std::size_t rows = 900;
  std::vector<float> values(rows * elements);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = specials[mix(i, 0, 71) % 12];
  // The largest factor mean_std accepts is finite (1e8 / 1e-30 = 1e38, near FLT_MAX): the
  // specials and the extremes overflow to infinity in the product, not in the factor.
  for (const auto& normalize :
       {Normalize::mean_std({0.5f, -1e30f, 7.0f}, {1e-30f, 3.0f, 0.125f}, 32, 1e8f),
        Normalize::mean_std({0.5f, -1e30f, 7.0f}, {1e-30f, 3.0f, 0.125f}, 1, 1e8f),
        Normalize{std::numeric_limits<float>::max(), 1.0f}}) {
    DeviceDataset<HostSpace, float> ds(HostSpace{}, batch_options(512, Remainder::partial),
                                       HostTensor<const float>(values.data(), {rows, elements}));
    auto epoch = ds.epoch({1, 1, Shuffle::samples}, resident::convert<0>(normalize));
    for (std::size_t k = 0; k < epoch.size(); ++k) {
      const auto [x] = epoch.batch(k);
      const auto ids = epoch.batch_indices(k);
      for (std::size_t r = 0; r < x.rows(); ++r)
        for (std::size_t e = 0; e < elements; ++e) {
          const float input = values[static_cast<std::size_t>(ids.data()[r]) * elements + e];
          const float expected = normalize(input, e);
          ASSERT_EQ(float_bits(x.data()[r * elements + e]), float_bits(expected))
              << "input " << input << " element " << e << ": " << x.data()[r * elements + e]
              << " vs " << expected;
        }
    }
  }
}

// A field of zero-byte rows beside others in a gathering epoch (and converted): the gather
// copies nothing for it and the other fields are right.
TEST(OnePassGather, AFieldOfZeroByteRowsGathersBesideOthers) {
  constexpr std::size_t rows = 5000;
  const std::vector<float> x = filled<float>(rows, 9, 81);
  static const std::uint8_t nothing[1] = {};
  DeviceDataset<HostSpace, float, std::uint8_t> ds(
      HostSpace{}, batch_options(4000, Remainder::pad),
      HostTensor<const float>(x.data(), {rows, 9}),
      HostTensor<const std::uint8_t>(nothing, {rows, 0}));
  for (const bool convert_empty : {false, true}) {
    const auto check = [&](auto& epoch) {
      for (std::size_t k = 0; k < epoch.size(); ++k) {
        const auto [a, b] = epoch.batch(k);
        const auto ids = epoch.batch_indices(k);
        EXPECT_EQ(b.bytes(), 0u);
        for (std::size_t r = 0; r < a.rows(); ++r)
          ASSERT_TRUE(row_matches(a, r, x, static_cast<std::size_t>(ids.data()[r]), 9));
      }
    };
    if (convert_empty) {
      auto epoch = ds.epoch({2, 0, Shuffle::samples}, resident::convert<1>(Normalize{2.0f, 0.0f}));
      check(epoch);
    } else {
      auto epoch = ds.epoch({2, 0, Shuffle::samples});
      check(epoch);
    }
  }
}

}  // namespace
