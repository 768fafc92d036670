// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// The host pipeline under odd inputs: the one-pass host gather of every field (Shuffle::samples
// and conversions), the copy team's spinning hand-off, streaming-store copies, and a streaming
// dataset's pieces that a waiting reader copies too (StreamOptions::reader_copies). Each test
// compares bytes against a plain reference computed from the sources, and stops (never hangs)
// where a file changes or a copy fails while pieces are in flight.
//
// Three tests record defects they found, fixed since: a field of zero-byte rows streamed (a
// division by zero in the piece size) and a gather that throws into a ring slot (which kept
// claiming its previous batch). The others pin behaviour that held when they were written.
// Tests that may kill the process run their body in a child process (a death-test fork), with
// an alarm, so that a crash or a hang fails that test alone, also outside ctest.

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <numeric>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "resident/detail/copy_workers.hpp"
#include "resident/detail/host_memory.hpp"
#include "resident/resident.hpp"
#include "support/faulty_space.hpp"
#include "support/float_bits.hpp"
#include "support/temp_npy.hpp"

namespace {

using resident::testing::float_bits;

namespace npy = resident::npy;
using resident::CudaError;
using resident::DatasetOptions;
using resident::DeviceDataset;
using resident::EpochOptions;
using resident::FormatError;
using resident::HostSpace;
using resident::HostTensor;
using resident::Normalize;
using resident::Remainder;
using resident::Shuffle;
using resident::StreamingDataset;
using resident::testing::FaultInjector;
using resident::testing::FaultySpace;
using resident::testing::Operation;
using resident::testing::TempNpy;

/// Runs `body` in a forked child with an alarm of `seconds`: a crash (SIGFPE, SIGSEGV) or a hang
/// (SIGALRM) fails the calling test instead of ending the whole test program. The child exits 0
/// when `body` returned without a gtest failure.
/// With RESIDENT_TEST_IN_PROCESS set, `body` runs in the test's own process instead (for the
/// sanitizers, whose reports a child's exit would hide).
template <class Body>
void in_child(int seconds, Body body) {
  if (std::getenv("RESIDENT_TEST_IN_PROCESS") != nullptr) {
    body();
    return;
  }
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        ::alarm(static_cast<unsigned>(seconds));
        body();
        std::_Exit(::testing::Test::HasFailure() ? 1 : 0);
      },
      ::testing::ExitedWithCode(0), "")
      << "the body crashed, hung past " << seconds << " s, or failed (see its output above)";
}

DatasetOptions base_options(std::size_t batch, Remainder remainder) {
  DatasetOptions options;
  options.batch_size = batch;
  options.remainder = remainder;
  options.reserve_bytes = 0;
  return options;
}

DatasetOptions streaming(std::size_t batch, Remainder remainder, std::size_t chunk_batches,
                         bool reader_copies, std::size_t ring = 3, std::size_t prefetch = 2) {
  DatasetOptions options = base_options(batch, remainder);
  options.streaming.chunk_batches = chunk_batches;
  options.streaming.chunk_slots = ring;
  options.streaming.prefetch_chunks = prefetch;
  options.streaming.reader_copies = reader_copies;
  // Window order: the files are read chunk by chunk, as a file larger than the host's memory.
  options.streaming.order = resident::StreamOrder::window;
  return options;
}

/// Deterministic bytes for row `row`, element `e` of field `field` (no two nearby rows alike).
inline std::uint64_t mix(std::uint64_t row, std::uint64_t e, std::uint64_t field) {
  std::uint64_t z = row * 0x9E3779B97F4A7C15ull + e * 0xBF58476D1CE4E5B9ull + field * 0x94D049BB;
  z ^= z >> 31;
  z *= 0xD6E8FEB86CA77B15ull;
  return z ^ (z >> 29);
}

template <class T>
std::vector<T> filled(std::size_t rows, std::size_t row_elements, std::uint64_t field) {
  std::vector<T> values(rows * row_elements);
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t e = 0; e < row_elements; ++e) {
      const std::uint64_t bits = mix(r, e, field);
      if constexpr (std::is_floating_point_v<T>)
        values[r * row_elements + e] =
            static_cast<T>(static_cast<double>(bits % 100003) / 7.0 - 7000);
      else
        values[r * row_elements + e] = static_cast<T>(bits);
    }
  return values;
}

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

// ---------------------------------------------------------------------------------------------
// The one-pass host gather: every field against the batch's row ids.

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
        Five ds = make_five(data, base_options(batch, remainder));
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
  Five ds = make_five(data, base_options(8, Remainder::pad));
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
          HostSpace{}, base_options(batch, Remainder::pad),
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
      HostSpace{}, base_options(4, Remainder::partial),
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
    Five ds = make_five(data, base_options(batch, Remainder::partial));
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
      HostSpace{}, base_options(8192, Remainder::partial),
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

// A gather that fails half-way leaves its slot half overwritten. The epoch used to record the
// slot as still holding the batch that was there before, so asking for that batch again served
// the mixed rows; now the slot claims no batch once a fill starts. With ring_depth 2, batch 2
// goes into batch 0's slot.
TEST(OnePassGather, AGatherThatThrowsLeavesNoEarlierBatchClaimedInItsSlot) {
  constexpr std::size_t rows = 64;
  std::vector<std::int64_t> ids(rows);
  std::iota(ids.begin(), ids.end(), std::int64_t{0});
  DeviceDataset<HostSpace, std::int64_t> ds(HostSpace{}, base_options(8, Remainder::partial),
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
  Five ds = make_five(data, base_options(2048, Remainder::pad));
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
  auto second = ds.epoch({11, 10, Shuffle::samples});  // takes the ring
  EXPECT_THROW((void)first.batch(0), resident::Error);
  check(second, 2);
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
          HostSpace{}, base_options(batch, Remainder::partial),
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
          DatasetOptions options = base_options(batch, remainder);
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
  for (const auto& normalize :
       {Normalize::mean_std({0.5f, -1e30f, 7.0f}, {1e-30f, 3.0f, 0.125f}, 32, 1e20f),
        Normalize::mean_std({0.5f, -1e30f, 7.0f}, {1e-30f, 3.0f, 0.125f}, 1, 1e20f),
        Normalize{std::numeric_limits<float>::max(), 1.0f}}) {
    DeviceDataset<HostSpace, float> ds(HostSpace{}, base_options(512, Remainder::partial),
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
      HostSpace{}, base_options(4000, Remainder::pad), HostTensor<const float>(x.data(), {rows, 9}),
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

// ---------------------------------------------------------------------------------------------
// The copy team on its own.

TEST(CopyTeam, SlicesFromANonZeroBeginStartOnTheGranuleAndCoverOnce) {
  for (const unsigned threads : {2u, 3u, 8u}) {
    resident::detail::CopyWorkers workers(threads);
    for (const std::size_t granule : {std::size_t{1}, std::size_t{3}, std::size_t{64}}) {
      for (const std::size_t begin : {std::size_t{0}, std::size_t{5}, std::size_t{1000}}) {
        for (const std::size_t size :
             {std::size_t{1}, std::size_t{2}, std::size_t{7}, std::size_t{65}, std::size_t{4097}}) {
          std::vector<std::atomic<int>> hits(size);
          std::atomic<bool> off_granule{false};
          workers.for_each_slice(
              begin, begin + size,
              [&](std::size_t first, std::size_t last) {
                if ((first - begin) % granule != 0) off_granule = true;
                for (std::size_t i = first; i < last; ++i) ++hits[i - begin];
              },
              granule);
          EXPECT_FALSE(off_granule.load())
              << threads << " " << granule << " " << begin << " " << size;
          for (std::size_t i = 0; i < size; ++i) ASSERT_EQ(hits[i].load(), 1) << i;
        }
      }
    }
  }
}

// Every part throws: one exception comes back, and the team serves the next call in full.
TEST(CopyTeam, EveryPartThrowingGivesOneErrorAndTheTeamGoesOn) {
  resident::detail::CopyWorkers workers(4);
  for (int round = 0; round < 200; ++round) {
    EXPECT_THROW(workers.for_each_slice(
                     0, 4000, [](std::size_t, std::size_t) { throw std::logic_error("part"); }, 1),
                 std::logic_error);
    std::atomic<std::size_t> covered{0};
    workers.for_each_slice(
        0, 4000, [&](std::size_t f, std::size_t l) { covered += l - f; }, 1);
    ASSERT_EQ(covered.load(), 4000u);
    if (round % 50 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));  // asleep
  }
}

// A team destroyed right after a call, while its workers still spin, and one never used.
TEST(CopyTeam, DestroyedWhileSpinningOrUnused) {
  for (int round = 0; round < 300; ++round) {
    resident::detail::CopyWorkers workers(3);
    if (round % 3 == 0) continue;
    std::atomic<std::size_t> covered{0};
    workers.for_each_slice(
        0, 999, [&](std::size_t f, std::size_t l) { covered += l - f; }, 1);
    ASSERT_EQ(covered.load(), 999u);
  }
}

// ---------------------------------------------------------------------------------------------
// Streaming-store copies.

TEST(StreamingStores, HostCopiesEqualMemcpyAroundTheThresholdAtEveryMisalignment) {
  constexpr std::size_t threshold = resident::detail::streaming_store_threshold;
  std::vector<unsigned char> source(threshold * 2 + 256);
  for (std::size_t i = 0; i < source.size(); ++i)
    source[i] = static_cast<unsigned char>(mix(i, 0, 9));
  std::vector<unsigned char> target(source.size() + 256);
  for (const std::size_t bytes :
       {threshold - 64, threshold - 1, threshold, threshold + 1, threshold + 15, threshold + 63,
        threshold + 64, threshold + 65, threshold * 2 - 17}) {
    for (std::size_t to_offset = 0; to_offset < 64; to_offset += 5) {
      for (const std::size_t from_offset : {0, 1, 8, 15, 17, 63}) {
        std::fill(target.begin(), target.end(), 0x5A);
        HostSpace{}.copy_from_host(target.data() + to_offset, source.data() + from_offset, bytes,
                                   {});
        ASSERT_EQ(std::memcmp(target.data() + to_offset, source.data() + from_offset, bytes), 0)
            << bytes << " bytes, offsets " << to_offset << "/" << from_offset;
        for (std::size_t i = 0; i < to_offset; ++i) ASSERT_EQ(target[i], 0x5A) << i;
        for (std::size_t i = to_offset + bytes; i < target.size(); ++i)
          ASSERT_EQ(target[i], 0x5A) << i;
      }
    }
  }
}

// An upload whose fields are large and oddly sized (so copies straddle the threshold and the
// alignment gaps between fields), read back byte for byte.
TEST(StreamingStores, AnUploadOfOddlySizedLargeFieldsReadsBackExactly) {
  constexpr std::size_t rows = 9973;
  const std::vector<std::uint8_t> a = filled<std::uint8_t>(rows, 27, 41);   // 263 KiB
  const std::vector<double> b = filled<double>(rows, 3, 42);                // 233 KiB
  const std::vector<std::uint16_t> c = filled<std::uint16_t>(rows, 1, 43);  // 19 KiB
  for (const unsigned threads : {1u, 2u}) {
    DatasetOptions options = base_options(100, Remainder::pad);
    options.upload_threads = threads;
    options.upload_block_bytes = 300000;  // blocks that do not fall on fields
    DeviceDataset<HostSpace, std::uint8_t, double, std::uint16_t> ds(
        HostSpace{}, options, HostTensor<const std::uint8_t>(a.data(), {rows, 27}),
        HostTensor<const double>(b.data(), {rows, 3}),
        HostTensor<const std::uint16_t>(c.data(), {rows}));
    EXPECT_EQ(std::memcmp(ds.field<0>().data(), a.data(), a.size()), 0);
    EXPECT_EQ(std::memcmp(ds.field<1>().data(), b.data(), b.size() * sizeof(double)), 0);
    EXPECT_EQ(std::memcmp(ds.field<2>().data(), c.data(), c.size() * sizeof(std::uint16_t)), 0);
  }
}

// ---------------------------------------------------------------------------------------------
// Streaming: the reader's pieces.

/// One batch, all fields, as bytes (with each view's rows and valid rows).
template <class Batch>
std::string plain_bytes_of(const Batch& batch) {
  std::string bytes;
  std::apply(
      [&](const auto&... view) {
        ((bytes.append(reinterpret_cast<const char*>(view.data()), view.bytes()),
          bytes.append(std::to_string(view.rows()) + "/" + std::to_string(view.valid_rows()) +
                       ";")),
         ...);
      },
      batch);
  return bytes;
}

/// Every batch of one epoch of `ds`, all fields, as bytes.
template <class Dataset>
std::vector<std::string> epoch_bytes(Dataset& ds, EpochOptions options) {
  std::vector<std::string> out;
  auto epoch = ds.epoch(options);
  for (auto&& batch : epoch) out.push_back(plain_bytes_of(batch));
  return out;
}

/// Batches of `ds.batch(k)` in order, all fields, as bytes.
template <class Dataset>
std::vector<std::string> plain_bytes(Dataset& ds) {
  std::vector<std::string> out;
  for (std::size_t k = 0; k < ds.num_batches(); ++k) out.push_back(plain_bytes_of(ds.batch(k)));
  return out;
}

// A field whose rows have no bytes (shape {n, 0}: extents may be zero) beside a normal one.
// A DeviceDataset serves it; a StreamingDataset's producer divided the piece size by the row
// bytes and died of SIGFPE, until copies of no bytes were left out of the pieces.
TEST(ReaderPieces, AFieldOfZeroByteRowsStreamsFromMemory) {
  in_child(30, [] {
    std::vector<float> x(std::size_t{100} * 4, 1.0f);
    static const float nothing[1] = {};
    const HostTensor<const float> xt(x.data(), {100, 4});
    const HostTensor<const float> empty(nothing, {100, 0});
    DeviceDataset<HostSpace, float, float> preloaded(
        HostSpace{}, base_options(8, Remainder::partial), xt, empty);
    const auto expected = plain_bytes(preloaded);
    for (const bool reader_copies : {true, false}) {
      StreamingDataset<HostSpace, float, float> ds(
          HostSpace{}, streaming(8, Remainder::partial, 2, reader_copies), xt, empty);
      EXPECT_EQ(plain_bytes(ds), expected);
    }
  });
}

// The same from a .npy file of shape (n, 0), which died the same way.
TEST(ReaderPieces, AZeroWidthNpyFileStreams) {
  const std::vector<float> x(std::size_t{50} * 3, 2.0f);
  const std::vector<float> none;
  const TempNpy features("host_pipeline_zero_width_x", x, {50, 3});
  const TempNpy empty("host_pipeline_zero_width_e", none, {50, 0});
  in_child(30, [&] {
    auto ds = resident::load_streaming_dataset<HostSpace, float, float>(
        HostSpace{}, streaming(4, Remainder::pad, 3, true), features.path, empty.path);
    std::size_t batches = 0;
    for (auto [a, b] : ds.epoch({})) {
      EXPECT_EQ(b.bytes(), 0u);
      EXPECT_EQ(a.data()[0], 2.0f);
      ++batches;
    }
    EXPECT_EQ(batches, 13u);
  });
}

/// Three fields of rows that make chunks of many 1 MiB pieces (a 3 KiB-ish float row, an int8
/// row of 5, a label), or rows larger than a piece.
struct StreamSource {
  StreamSource(std::size_t n, std::size_t width)
      : rows(n),
        width(width),
        x(filled<float>(n, width, 51)),
        b(filled<std::int8_t>(n, 5, 52)),
        y(filled<std::int64_t>(n, 1, 53)) {}
  [[nodiscard]] HostTensor<const float> xt() const { return {x.data(), {rows, width}}; }
  [[nodiscard]] HostTensor<const std::int8_t> bt() const { return {b.data(), {rows, 5}}; }
  [[nodiscard]] HostTensor<const std::int64_t> yt() const { return {y.data(), {rows}}; }
  std::size_t rows;
  std::size_t width;
  std::vector<float> x;
  std::vector<std::int8_t> b;
  std::vector<std::int64_t> y;
};

using Streamed3 = StreamingDataset<HostSpace, float, std::int8_t, std::int64_t>;
using Preloaded3 = DeviceDataset<HostSpace, float, std::int8_t, std::int64_t>;

// reader_copies on or off: the same bytes as the preloaded dataset for Shuffle::none, and the
// same batches as each other for the shuffles, over remainders, batch sizes that do not divide
// the rows, rows larger than a piece, and every rank of partitioned and replicated shards.
TEST(ReaderPieces, OnOrOffServeTheSameBatchesOverShardsAndRemainders) {
  struct Case {
    std::size_t rows, width, batch, chunk_batches;
  };
  for (const Case c :
       {Case{3001, 800, 37, 11}, Case{17, 300000, 2, 3}, Case{1, 1, 4, 1}, Case{2000, 1, 1, 700}}) {
    const StreamSource source(c.rows, c.width);
    for (const Remainder remainder : {Remainder::drop, Remainder::partial, Remainder::pad}) {
      for (const auto sharding :
           {resident::Sharding::partitioned, resident::Sharding::replicated}) {
        for (int rank = 0; rank < 3; ++rank) {
          SCOPED_TRACE(
              std::to_string(c.rows) + " rows of " + std::to_string(c.width) + ", batch " +
              std::to_string(c.batch) + ", remainder " +
              std::to_string(static_cast<int>(remainder)) + ", rank " + std::to_string(rank) +
              (sharding == resident::Sharding::partitioned ? " partitioned" : " replicated"));
          DatasetOptions options = streaming(c.batch, remainder, c.chunk_batches, true);
          options.shard = {rank, 3, 0};
          options.sharding = sharding;
          std::optional<Preloaded3> preloaded;
          try {
            preloaded.emplace(HostSpace{}, options, source.xt(), source.bt(), source.yt());
          } catch (const resident::InvalidArgument&) {
            continue;  // a shard with no rows to serve under this policy
          }
          const auto expected = plain_bytes(*preloaded);
          std::vector<std::string> shuffled[2][2];
          for (const bool reader_copies : {true, false}) {
            options.streaming.reader_copies = reader_copies;
            Streamed3 ds(HostSpace{}, options, source.xt(), source.bt(), source.yt());
            ASSERT_EQ(plain_bytes(ds), expected) << "reader_copies " << reader_copies;
            shuffled[reader_copies][0] = epoch_bytes(ds, {4, 1, Shuffle::batches});
            shuffled[reader_copies][1] = epoch_bytes(ds, {4, 2, Shuffle::samples});
            ASSERT_EQ(epoch_bytes(ds, {4, 0, Shuffle::none}), expected);
          }
          EXPECT_EQ(shuffled[0][0], shuffled[1][0]);
          EXPECT_EQ(shuffled[0][1], shuffled[1][1]);
        }
      }
    }
  }
}

// A lone chunk (every batch in one slot, nothing to prefetch) and a ring of two slots with one
// ahead, where the reader helps with the slot it just gave up: the preloaded bytes.
TEST(ReaderPieces, ALoneChunkAndATwoSlotRingServeThePreloadedBytes) {
  const StreamSource source(2500, 900);
  Preloaded3 preloaded(HostSpace{}, base_options(33, Remainder::pad), source.xt(), source.bt(),
                       source.yt());
  const auto expected = plain_bytes(preloaded);
  for (const std::size_t chunk_batches : {std::size_t{13}, std::size_t{1000}}) {
    for (const bool reader_copies : {true, false}) {
      Streamed3 ds(HostSpace{}, streaming(33, Remainder::pad, chunk_batches, reader_copies, 2, 1),
                   source.xt(), source.bt(), source.yt());
      EXPECT_EQ(plain_bytes(ds), expected)
          << "chunks of " << chunk_batches << ", reader_copies " << reader_copies;
      EXPECT_EQ(epoch_bytes(ds, {}), expected);
    }
  }
}

// Zero rows and one row streamed, with the reader copying: an empty epoch, then one batch.
TEST(ReaderPieces, ZeroRowsAndOneRowStream) {
  for (const std::size_t rows : {std::size_t{0}, std::size_t{1}}) {
    const StreamSource source(rows, 3);
    for (const Remainder remainder : {Remainder::partial, Remainder::pad, Remainder::drop}) {
      Streamed3 ds(HostSpace{}, streaming(4, remainder, 2, true), source.xt(), source.bt(),
                   source.yt());
      const std::size_t batches = rows == 0 || remainder == Remainder::drop ? 0 : 1;
      EXPECT_EQ(ds.num_batches(), batches);
      EXPECT_EQ(epoch_bytes(ds, {1, 0, Shuffle::samples}).size(), batches);
      EXPECT_THROW((void)ds.batch(batches), std::out_of_range);
      if (batches == 1) {
        const auto [x, b, y] = ds.batch(0);
        EXPECT_EQ(y.valid_rows(), 1u);
        EXPECT_EQ(y.data()[0], source.y[0]);
        for (std::size_t e = 0; e < 3; ++e)
          EXPECT_EQ(float_bits(x.data()[e]), float_bits(source.x[e]));
      }
    }
  }
}

// Random access that jumps back and forth while pieces are in flight, and passes restarted by
// another epoch after a batch or two: always the right batch.
TEST(ReaderPieces, JumpsAndRestartsWhilePiecesAreInFlightServeTheRightBatch) {
  const StreamSource source(6000, 700);  // 2.7 KiB rows, chunks of 8 batches of 64: ~1.4 MiB
  Preloaded3 preloaded(HostSpace{}, base_options(64, Remainder::pad), source.xt(), source.bt(),
                       source.yt());
  const auto expected = plain_bytes(preloaded);
  Streamed3 ds(HostSpace{}, streaming(64, Remainder::pad, 8, true, 4, 3), source.xt(), source.bt(),
               source.yt());
  const std::size_t order[] = {0, 1, 2, 50, 3, 93, 92, 91, 8, 0, 9, 10, 11, 12, 90, 89, 16, 17};
  for (int round = 0; round < 4; ++round)
    for (const std::size_t k : order) {
      ASSERT_LT(k, expected.size());
      ASSERT_EQ(plain_bytes_of(ds.batch(k)), expected[k]) << "batch " << k;
    }
  for (std::uint64_t e = 0; e < 6; ++e) {
    auto epoch = ds.epoch({1, e, Shuffle::batches});
    auto it = epoch.begin();
    for (std::uint64_t step = 0; step <= e % 3; ++step) ++it;  // abandoned after a few
  }
  EXPECT_EQ(plain_bytes(ds), expected);
}

// Datasets destroyed, moved and move-assigned over while their producer and reader share a
// chunk's pieces: no hang, no crash, and every allocation returned.
TEST(ReaderPieces, DestroyedOrMovedWhilePiecesAreInFlight) {
  const StreamSource source(4000, 2000);  // 8 KiB rows, chunks of 4 batches of 64: 2 MiB
  auto injector = std::make_shared<FaultInjector>();
  injector->count_only();
  const FaultySpace<HostSpace> space(HostSpace{}, injector);
  in_child(120, [&] {
    for (int round = 0; round < 40; ++round) {
      StreamingDataset<FaultySpace<HostSpace>, float, std::int8_t, std::int64_t> ds(
          space, streaming(64, Remainder::partial, 4, true, 3, 2), source.xt(), source.bt(),
          source.yt());
      const auto [x, b, y] = ds.batch(static_cast<std::size_t>(round % 7));
      ASSERT_EQ(y.data()[0], source.y[static_cast<std::size_t>(round % 7) * 64]);
      if (round % 3 == 1) {
        auto moved = std::move(ds);
        (void)moved.batch(9);
      } else if (round % 3 == 2) {
        StreamingDataset<FaultySpace<HostSpace>, float, std::int8_t, std::int64_t> other(
            space, streaming(64, Remainder::partial, 4, true, 3, 2), source.xt(), source.bt(),
            source.yt());
        (void)other.batch(1);
        other = std::move(ds);
        (void)other.batch(2);
      }
    }
    EXPECT_EQ(injector->live_allocations(), 0u);
    EXPECT_EQ(injector->live_bytes(), 0u);
  });
}

// A copy that fails on either thread (the producer's or the reader's, pieces of 1 MiB in
// chunks of several): each armed fault surfaces once as its CudaError from the batch whose
// chunk failed, the pass goes on at the next batch, and a clean pass after it is exact.
TEST(ReaderPieces, AFailedCopyOnEitherThreadFailsOneBatchAndThePassGoesOn) {
  const StreamSource source(1200, 1000);  // 4 KiB rows: chunks of 3 batches of 100 = 1.2 MiB
  Preloaded3 preloaded(HostSpace{}, base_options(100, Remainder::partial), source.xt(), source.bt(),
                       source.yt());
  const auto expected = plain_bytes(preloaded);
  in_child(240, [&] {
    auto injector = std::make_shared<FaultInjector>();
    const FaultySpace<HostSpace> space(HostSpace{}, injector);
    for (const bool reader_copies : {true, false}) {
      StreamingDataset<FaultySpace<HostSpace>, float, std::int8_t, std::int64_t> ds(
          space, streaming(100, Remainder::partial, 3, reader_copies, 2, 1), source.xt(),
          source.bt(), source.yt());
      injector->count_only();
      ASSERT_EQ(plain_bytes(ds), expected);
      const std::size_t copies = injector->count(Operation::copy);
      ASSERT_GT(copies, 8u);
      for (std::size_t k = 1; k <= copies; ++k) {
        injector->arm(Operation::copy, k);
        std::size_t errors = 0;
        for (std::size_t batch = 0; batch < ds.num_batches(); ++batch) {
          try {
            const auto b = ds.batch(batch);
            std::string bytes;
            std::apply(
                [&](const auto&... view) {
                  ((bytes.append(reinterpret_cast<const char*>(view.data()), view.bytes()),
                    bytes.append(std::to_string(view.rows()) + "/" +
                                 std::to_string(view.valid_rows()) + ";")),
                   ...);
                },
                b);
            ASSERT_EQ(bytes, expected[batch]) << "fault " << k << ", batch " << batch;
          } catch (const CudaError& error) {
            ++errors;
            EXPECT_EQ(error.what(), injector->fault_message());
          }
        }
        EXPECT_EQ(errors, injector->fired() ? 1u : 0u) << "fault " << k << " of " << copies;
        injector->count_only();
        ASSERT_EQ(plain_bytes(ds), expected) << "after fault " << k;
      }
    }
  });
}

/// What a `ReaderFaultSpace` fails, and where: the first copy made on thread `reader` after it
/// is armed throws `ReaderFault`; every copy's thread is counted.
struct ReaderFaultState {
  std::thread::id reader;
  std::atomic<bool> armed{false};
  std::atomic<std::size_t> reader_copies{0};
  std::atomic<std::size_t> other_copies{0};
};

struct ReaderFault : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// The host space, except that the reader's thread fails a copy on request: the fault then
/// arises in a piece the reader runs, never in the producer's.
class ReaderFaultSpace {
 public:
  using memory_space = ReaderFaultSpace;
  using stream_type = HostSpace::stream_type;
  static constexpr bool device_accessible = false;  // as the memory-space concept asks

  ReaderFaultSpace() : state_(std::make_shared<ReaderFaultState>()) {}
  explicit ReaderFaultSpace(std::shared_ptr<ReaderFaultState> state) : state_(std::move(state)) {}

  [[nodiscard]] std::string name() const { return "reader-fault host"; }
  [[nodiscard]] std::size_t default_reserve_bytes() const noexcept { return 0; }
  [[nodiscard]] resident::Capacity capacity() const { return inner_.capacity(); }
  [[nodiscard]] void* allocate(std::size_t bytes) const { return inner_.allocate(bytes); }
  void deallocate(void* pointer, std::size_t bytes) const noexcept {
    inner_.deallocate(pointer, bytes);
  }
  [[nodiscard]] stream_type create_stream() const { return inner_.create_stream(); }
  void destroy_stream(stream_type stream) const noexcept { inner_.destroy_stream(stream); }
  void synchronize(stream_type stream) const { inner_.synchronize(stream); }
  void copy_from_host(void* destination, const void* source, std::size_t bytes,
                      stream_type stream) const {
    if (std::this_thread::get_id() == state_->reader) {
      ++state_->reader_copies;
      if (state_->armed.exchange(false)) throw ReaderFault("a copy on the reader's thread failed");
    } else {
      ++state_->other_copies;
    }
    inner_.copy_from_host(destination, source, bytes, stream);
  }
  void copy_to_host(void* destination, const void* source, std::size_t bytes,
                    stream_type stream) const {
    inner_.copy_to_host(destination, source, bytes, stream);
  }

 private:
  HostSpace inner_{};
  std::shared_ptr<ReaderFaultState> state_;
};

// A fault raised in a piece that the reader itself runs: batch() throws it as it was thrown
// (its own type), the pass goes on at the next batch, and nothing hangs. With reader_copies
// off the reader copies nothing.
TEST(ReaderPieces, AFaultInAPieceTheReaderRunsSurfacesAsThrown) {
  const StreamSource source(2400, 4000);  // 16 KiB rows: chunks of 8 batches of 64 = 8 MiB
  Preloaded3 preloaded(HostSpace{}, base_options(64, Remainder::partial), source.xt(), source.bt(),
                       source.yt());
  const auto expected = plain_bytes(preloaded);
  in_child(120, [&] {
    for (const bool reader_copies : {true, false}) {
      auto state = std::make_shared<ReaderFaultState>();
      state->reader = std::this_thread::get_id();
      StreamingDataset<ReaderFaultSpace, float, std::int8_t, std::int64_t> ds(
          ReaderFaultSpace(state), streaming(64, Remainder::partial, 8, reader_copies, 2, 1),
          source.xt(), source.bt(), source.yt());
      std::size_t faults = 0;
      // Armed until the reader's thread makes a copy: a reader that waits takes pieces, but
      // when it does is the scheduler's choice, so up to 40 passes.
      for (int pass = 0; pass < (reader_copies ? 40 : 3) && faults < 3; ++pass) {
        state->armed = true;
        for (std::size_t k = 0; k < ds.num_batches(); ++k) {
          try {
            ASSERT_EQ(plain_bytes_of(ds.batch(k)), expected[k])
                << "pass " << pass << " batch " << k;
          } catch (const ReaderFault&) {
            ++faults;
          }
        }
      }
      state->armed = false;
      if (reader_copies) {
        EXPECT_GT(state->reader_copies.load(), 0u) << "the reader never copied a piece";
        EXPECT_GT(faults, 0u) << "no fault arose on the reader's thread";
      } else {
        EXPECT_EQ(state->reader_copies.load(), 0u);
        EXPECT_EQ(faults, 0u);
      }
      EXPECT_EQ(plain_bytes(ds), expected) << "after the faults";
    }
  });
}

/// A streamed .npy of `rows` rows of `width` floats, with a label file.
struct StreamedFiles {
  StreamedFiles(const std::string& name, std::size_t rows, std::size_t width)
      : x(filled<float>(rows, width, 61)),
        y(filled<std::int64_t>(rows, 1, 62)),
        features(name + "_x", x, {rows, width}),
        labels(name + "_y", y, {rows}) {}
  std::vector<float> x;
  std::vector<std::int64_t> y;
  TempNpy features;
  TempNpy labels;
};

// Files whose rows are larger than a piece (1.5 MiB) or a byte each, streamed with the reader
// copying or not: the bytes of the same data streamed from memory.
TEST(ReaderPieces, FilesOfHugeRowsAndOfOneByteRowsStreamAsFromMemory) {
  constexpr std::size_t huge_rows = 13;
  constexpr std::size_t huge_width = 393216 + 3;  // 1.5 MiB + 12 bytes per row
  const std::vector<float> huge = filled<float>(huge_rows, huge_width, 91);
  const std::vector<std::uint8_t> tiny = filled<std::uint8_t>(huge_rows, 1, 92);
  const TempNpy huge_file("host_pipeline_huge_rows", huge, {huge_rows, huge_width});
  const TempNpy tiny_file("host_pipeline_tiny_rows", tiny, {huge_rows});
  DeviceDataset<HostSpace, float, std::uint8_t> preloaded(
      HostSpace{}, base_options(2, Remainder::pad),
      HostTensor<const float>(huge.data(), {huge_rows, huge_width}),
      HostTensor<const std::uint8_t>(tiny.data(), {huge_rows}));
  const auto expected = plain_bytes(preloaded);
  for (const bool reader_copies : {true, false}) {
    auto ds = resident::load_streaming_dataset<HostSpace, float, std::uint8_t>(
        HostSpace{}, streaming(2, Remainder::pad, 2, reader_copies, 2, 1), huge_file.path,
        tiny_file.path);
    EXPECT_EQ(plain_bytes(ds), expected) << "reader_copies " << reader_copies;
    EXPECT_EQ(epoch_bytes(ds, {}), expected);
  }
  constexpr std::size_t byte_rows = 3000001;  // one-byte rows: a piece of a million rows
  const std::vector<std::uint8_t> bytes = filled<std::uint8_t>(byte_rows, 1, 93);
  const TempNpy bytes_file("host_pipeline_byte_rows", bytes, {byte_rows});
  for (const bool reader_copies : {true, false}) {
    auto ds = resident::load_streaming_dataset<HostSpace, std::uint8_t>(
        HostSpace{}, streaming(100000, Remainder::partial, 7, reader_copies, 3, 2),
        bytes_file.path);
    std::size_t at = 0;
    for (auto [x] : ds.epoch({})) {
      ASSERT_EQ(std::memcmp(x.data(), bytes.data() + at, x.bytes()), 0) << at;
      at += x.rows();
    }
    EXPECT_EQ(at, byte_rows);
  }
}

enum class Change { truncate, extend, rewrite_in_place, remove, replace };

void change_file(const std::string& path, Change change) {
  struct ::stat status {};
  ASSERT_EQ(::stat(path.c_str(), &status), 0);
  switch (change) {
    case Change::truncate:
      ASSERT_EQ(::truncate(path.c_str(), status.st_size / 3), 0);
      break;
    case Change::extend:
      ASSERT_EQ(::truncate(path.c_str(), status.st_size + 4096), 0);
      break;
    case Change::rewrite_in_place: {
      std::FILE* file = std::fopen(path.c_str(), "r+b");
      ASSERT_NE(file, nullptr);
      std::fseek(file, status.st_size / 2, SEEK_SET);
      const char junk[64] = {1, 2, 3};
      std::fwrite(junk, 1, sizeof junk, file);
      std::fclose(file);
      // Make the mtime differ even on coarse clocks.
      const ::timespec times[2] = {{0, UTIME_OMIT}, {status.st_mtim.tv_sec + 5, 0}};
      ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0);
      break;
    }
    case Change::remove:
      ASSERT_EQ(std::remove(path.c_str()), 0);
      break;
    case Change::replace: {
      const std::vector<float> other(16, 9.0f);
      npy::save(path, other.data(), {4, 4});
      break;
    }
  }
}

// A streamed file changed under a running pass (truncated, extended, rewritten in place,
// removed, replaced), with the reader copying pieces or not: the pass meets a FormatError (no
// other error, no hang, no crash), only ever serves the file's original bytes, and so does
// every later pass until it ends.
TEST(ReaderPieces, AFileChangedUnderARunningPassGivesFormatErrorsAndNeverWrongBytes) {
  for (const Change change : {Change::truncate, Change::extend, Change::rewrite_in_place,
                              Change::remove, Change::replace}) {
    for (const bool reader_copies : {true, false}) {
      SCOPED_TRACE("change " + std::to_string(static_cast<int>(change)) + ", reader_copies " +
                   std::to_string(reader_copies));
      StreamedFiles files("host_pipeline_changed", 3000, 1000);  // 4 KiB rows, 12 MiB
      in_child(60, [&] {
        auto ds = resident::load_streaming_dataset<HostSpace, float, std::int64_t>(
            HostSpace{}, streaming(50, Remainder::partial, 6, reader_copies, 3, 2),
            files.features.path, files.labels.path);
        const std::size_t batches = ds.num_batches();
        std::size_t format_errors = 0;
        for (int pass = 0; pass < 2; ++pass) {
          for (std::size_t k = 0; k < batches; ++k) {
            if (pass == 0 && k == 1) change_file(files.features.path, change);
            try {
              const auto [x, y] = ds.batch(k);
              ASSERT_EQ(std::memcmp(x.data(), files.x.data() + k * 50 * 1000, x.bytes()), 0)
                  << "pass " << pass << " batch " << k << " served bytes that are not the file's";
              ASSERT_EQ(std::memcmp(y.data(), files.y.data() + k * 50, y.bytes()), 0);
            } catch (const FormatError& error) {
              ++format_errors;
              EXPECT_NE(std::string(error.what()).find("changed"), std::string::npos)
                  << error.what();
            }
          }
        }
        EXPECT_GT(format_errors, 0u) << "the change was never reported";
      });
    }
  }
}

// A reader helping with a chunk whose file read fails: the FormatError surfaces at the batch
// (the same type as with the producer alone) and the dataset recovers once the file is back.
TEST(ReaderPieces, APieceFailingOnTheReaderThreadSurfacesAsFormatError) {
  StreamedFiles files("host_pipeline_reader_fail", 2400, 2048);  // 8 KiB rows, 19 MiB
  in_child(60, [&] {
    auto ds = resident::load_streaming_dataset<HostSpace, float, std::int64_t>(
        HostSpace{}, streaming(100, Remainder::partial, 6, true, 2, 1), files.features.path,
        files.labels.path);
    (void)ds.batch(0);
    // Extended: every later read of this dataset fails, on whichever thread it runs.
    change_file(files.features.path, Change::extend);
    std::size_t format_errors = 0;
    std::size_t other_errors = 0;
    for (std::size_t k = 0; k < ds.num_batches(); ++k) {
      try {
        (void)ds.batch(k);
      } catch (const FormatError&) {
        ++format_errors;
      } catch (...) {
        ++other_errors;
      }
    }
    EXPECT_GT(format_errors, 0u);
    EXPECT_EQ(other_errors, 0u);
  });
}

}  // namespace
