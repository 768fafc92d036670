// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// Values at the edges of their domain that once could hang, reach past memory, divide by zero
// or serve a wrong result: each in a process of its own, so that a crash fails only its test.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "resident/resident.hpp"
#include "support/temp_npy.hpp"
#include "support/zip_builder.hpp"

namespace {

using resident::DatasetOptions;
using resident::DeviceDataset;
using resident::FormatError;
using resident::HostSpace;
using resident::HostTensor;
using resident::InvalidArgument;
using resident::Normalize;
using resident::Permutation;
using resident::Remainder;
using resident::Shape;
using resident::Shuffle;

constexpr std::uint64_t sizes[] = {1, 2, 5, 10, 1000, Permutation::max_size};

TEST(PermutationEdges, PositionsPastTheEndAreTheIdentityNeverAnEndlessWalk) {
  // The empty permutation has no index below its size to end a cycle walk on.
  EXPECT_EQ(Permutation{}(0), 0U);
  EXPECT_EQ(Permutation(0, 1, 2)(3), 3U);
  constexpr std::uint64_t max = std::numeric_limits<std::uint64_t>::max();
  for (const std::uint64_t n : sizes) {
    const Permutation p(n, 7, 3);
    for (const std::uint64_t i : {n, n + 1, 2 * n + 3, max}) EXPECT_EQ(p(i), i) << n << ", " << i;
    EXPECT_LT(p(n - 1), n);
  }
}

TEST(PermutationEdges, AtChecksThePosition) {
  for (const std::uint64_t n : sizes) {
    const Permutation p(n, 7, 3);
    EXPECT_THROW((void)p.at(n), std::out_of_range);
    EXPECT_EQ(p.at(0), p(0));
  }
  EXPECT_THROW((void)Permutation{}.at(0), std::out_of_range);
}

// ---------------------------------------------------------------------------------------
// Rows of zero bytes

// A field whose rows have no elements lies in no memory: alone in a dataset its allocation is
// empty (a null pointer), and a gather copies nothing from it, by every shuffle.
TEST(ZeroWidthEdges, EveryEpochOfZeroWidthRowsServesEveryRowAndCopiesNothing) {
  const std::vector<float> none(1);
  std::vector<std::int32_t> labels(10);
  for (std::size_t r = 0; r < labels.size(); ++r) labels[r] = static_cast<std::int32_t>(r);
  DatasetOptions options;
  options.batch_size = 3;
  options.reserve_bytes = 0;
  const HostTensor<const float> empty(none.data(), {10, 0});
  DeviceDataset<HostSpace, float> alone(HostSpace{}, options, empty);
  DeviceDataset<HostSpace, float, std::int32_t> beside(
      HostSpace{}, options, empty, HostTensor<const std::int32_t>(labels.data(), {10}));
  for (const Shuffle shuffle : {Shuffle::none, Shuffle::batches, Shuffle::samples}) {
    std::size_t rows = 0;
    for (auto [x] : alone.epoch({5, 0, shuffle})) {
      EXPECT_EQ(x.bytes(), 0U);
      rows += x.valid_rows();
    }
    EXPECT_EQ(rows, 10U);
    std::vector<std::int32_t> seen;
    for (auto [x, y] : beside.epoch({5, 0, shuffle}, resident::convert<0>(Normalize{2, 1}))) {
      EXPECT_EQ(x.bytes(), 0U);
      seen.insert(seen.end(), y.data(), y.data() + y.valid_rows());
    }
    std::sort(seen.begin(), seen.end());
    EXPECT_EQ(seen, labels);
  }
}

// ---------------------------------------------------------------------------------------
// Shapes whose rows overflow behind zero rows

/// A `.npy` image whose header claims `shape` for float32 data, with no data: what a damaged or
/// hostile header says.
std::string claimed_float_image(const Shape& shape) {
  return resident::testing::npy_image(std::vector<float>{}, shape);
}

constexpr std::size_t two_to_62 = std::size_t{1} << 62;

void expect_format_error(const std::function<void()>& read, const char* what) {
  try {
    read();
    ADD_FAILURE() << what << ": a shape whose row bytes overflow was accepted";
  } catch (const FormatError& error) {
    EXPECT_NE(std::string(error.what()).find("overflows 64 bits"), std::string::npos)
        << what << ": " << error.what();
  }
}

TEST(ShapeEdges, EveryReaderRefusesRowsWhoseBytesOverflowWhateverTheRowCount) {
  const std::string npy_path = resident::testing::scratch("overflowing_rows.npy");
  const std::string npz_path = resident::testing::scratch("overflowing_rows.npz");
  for (const Shape& shape : {Shape{0, two_to_62}, Shape{0, 3, two_to_62}, Shape{two_to_62, 0},
                             Shape{0, std::size_t{1} << 32, std::size_t{1} << 31}}) {
    SCOPED_TRACE(shape.to_string());
    resident::testing::write_file(npy_path, claimed_float_image(shape));
    expect_format_error([&] { (void)resident::npy::load(npy_path); }, "npy::load");
    expect_format_error([&] { (void)resident::npy::read_header(npy_path); }, "npy::read_header");
    expect_format_error(
        [&] {
          (void)resident::load_dataset<HostSpace, float>(HostSpace{}, DatasetOptions{}, npy_path);
        },
        "load_dataset");
    expect_format_error(
        [&] {
          (void)resident::load_token_file<std::int32_t>(HostSpace{}, DatasetOptions{}, {4, 4},
                                                        {npy_path});
        },
        "load_token_file");
    resident::testing::write_file(
        npz_path, resident::testing::build_zip({{"x.npy", claimed_float_image(shape)}}).bytes);
    expect_format_error([&] { (void)resident::npz::Archive(npz_path); }, "npz::Archive");
  }
  std::remove(npy_path.c_str());
  std::remove(npz_path.c_str());
}

TEST(ShapeEdges, WritersRefuseRowsWhoseBytesOverflowWhateverTheRowCount) {
  const std::string path = resident::testing::scratch("overflowing_rows_written.npy");
  const float* none = nullptr;
  EXPECT_THROW(resident::npy::save(path, none, Shape{0, two_to_62}), InvalidArgument);
  EXPECT_THROW(resident::npz::save(path, {{"x", resident::npy::DType::f4, none, {0, two_to_62}}}),
               InvalidArgument);
  std::remove(path.c_str());
}

// ---------------------------------------------------------------------------------------
// Normalize's channels

TEST(NormalizeEdges, AChannelSpanThatOverflowsIsRefusedWhenMade) {
  constexpr std::size_t max = std::numeric_limits<std::size_t>::max();
  // 3 x (SIZE_MAX / 3 + 1) wraps to 2 (every element would be channel 0); 2 x 2^63 wraps to 0
  // (a division by zero when an epoch checks the rows).
  for (const std::size_t stride : {max / 3 + 1, max / 2 + 1, max}) {
    EXPECT_THROW((void)Normalize::mean_std({0.5f, 0.5f, 0.5f}, {0.2f, 0.2f, 0.2f}, stride),
                 InvalidArgument)
        << stride;
  }
  EXPECT_THROW((void)Normalize::mean_std({0.5f, 0.5f}, {0.2f, 0.2f}, max / 2 + 1), InvalidArgument);
  const auto huge = resident::ImageLayout::chw(3, std::size_t{1} << 32, std::size_t{1} << 32);
  EXPECT_THROW((void)Normalize::mean_std({0.5f, 0.5f, 0.5f}, {0.2f, 0.2f, 0.2f}, huge),
               InvalidArgument);
  // The largest span that fits is accepted, and then refuses rows it does not divide.
  const auto widest = Normalize::mean_std({0.5f, 0.5f, 0.5f}, {0.2f, 0.2f, 0.2f}, max / 3);
  EXPECT_EQ(widest.channel_stride(), max / 3);
  EXPECT_THROW(widest.check_row_layout(48), InvalidArgument);
}

// Normalize{scale, offset} is constexpr and cannot refuse when made: an epoch that converts
// with non-finite figures is refused when it is made, before any batch is NaN.
TEST(NormalizeEdges, APlainNormalizeOfNonFiniteFiguresIsRefusedWhenItsEpochIsMade) {
  constexpr float nan = std::numeric_limits<float>::quiet_NaN();
  constexpr float inf = std::numeric_limits<float>::infinity();
  const std::vector<std::uint8_t> pixels(40, 7);
  DatasetOptions options;
  options.batch_size = 4;
  options.reserve_bytes = 0;
  DeviceDataset<HostSpace, std::uint8_t> ds(HostSpace{}, options,
                                            HostTensor<const std::uint8_t>(pixels.data(), {10, 4}));
  for (const Normalize& bad : {Normalize{nan, 0}, Normalize{1, inf}, Normalize{-inf, nan}}) {
    for (const Shuffle shuffle : {Shuffle::none, Shuffle::batches, Shuffle::samples}) {
      EXPECT_THROW((void)ds.epoch({1, 0, shuffle}, resident::convert<0>(bad)), InvalidArgument);
    }
  }
  for (auto [x] : ds.epoch({1, 0, Shuffle::samples}, resident::convert<0>(Normalize{2, 1}))) {
    EXPECT_EQ(x.data()[0], 15.0f);
  }
}

TEST(NormalizeEdges, ANonFiniteMeanStdOrScaleIsRefused) {
  constexpr float nan = std::numeric_limits<float>::quiet_NaN();
  constexpr float inf = std::numeric_limits<float>::infinity();
  for (const float bad : {nan, inf, -inf}) {
    EXPECT_THROW((void)Normalize::mean_std({bad}, {1.0f}, 1), InvalidArgument) << bad;
    EXPECT_THROW((void)Normalize::mean_std({0.0f}, {bad}, 1), InvalidArgument) << bad;
    EXPECT_THROW((void)Normalize::mean_std({0.0f, 0.0f}, {1.0f, bad}, 1), InvalidArgument) << bad;
    EXPECT_THROW((void)Normalize::mean_std({0.0f}, {1.0f}, 1, bad), InvalidArgument) << bad;
  }
  // A std so small that the quotient overflows a float.
  EXPECT_THROW((void)Normalize::mean_std({1.0f}, {1e-45f}, 1), InvalidArgument);
  const Normalize fine = Normalize::mean_std({0.5f}, {0.25f}, 1, 0.5f);
  EXPECT_TRUE(std::isfinite(fine.scale(0)) && std::isfinite(fine.offset(0)));
}

// ---------------------------------------------------------------------------------------
// A refusal when the dataset is made, never at its epochs

TEST(TokenEdges, APaddedBatchTooLargeForARingIsRefusedWhenTheDatasetIsMade) {
  std::vector<std::uint16_t> tokens(100);
  for (std::size_t i = 0; i < tokens.size(); ++i) tokens[i] = static_cast<std::uint16_t>(i);
  const HostTensor<const std::uint16_t> stream(tokens.data(), {tokens.size()});
  DatasetOptions options;
  options.remainder = Remainder::pad;
  options.reserve_bytes = 0;
  for (const std::size_t batch :
       {std::numeric_limits<std::size_t>::max(), std::size_t{1} << 62, std::size_t{1} << 61}) {
    options.batch_size = batch;
    EXPECT_THROW(
        (resident::TokenDataset<HostSpace, std::uint16_t>(HostSpace{}, options, {8, 8}, stream)),
        InvalidArgument)
        << batch;
    EXPECT_THROW((void)resident::plan(HostSpace{}, options, {8, 8}, stream), InvalidArgument)
        << batch;
  }
  // A batch of every window, padded, is still served.
  options.batch_size = 16;
  resident::TokenDataset<HostSpace, std::uint16_t> ds(HostSpace{}, options, {8, 8}, stream);
  std::size_t batches = 0;
  for (const Shuffle shuffle : {Shuffle::none, Shuffle::batches, Shuffle::samples})
    for (auto [x, y] : ds.epoch({1, 0, shuffle})) {
      EXPECT_EQ(x.rows(), 16U);
      EXPECT_EQ(y.rows(), 16U);
      ++batches;
    }
  EXPECT_EQ(batches, 3U);
}

}  // namespace
