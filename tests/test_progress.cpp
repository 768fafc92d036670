// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// Progress and ProgressCallback: what an upload reports, once per chunk, and how its callback
// cancels it or stops it with an exception; typed over the memory spaces.
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "resident/device_dataset.hpp"
#include "resident/memory_space.hpp"
#include "resident/progress.hpp"
#include "support/chunked_upload.hpp"
#include "support/spaces.hpp"

namespace {

using resident::Cancelled;
using resident::DatasetOptions;
using resident::DeviceDataset;
using resident::HostTensor;
using resident::Progress;
using resident::ProgressCallback;
using resident::testing::chunked;
using resident::testing::kChunk;
using resident::testing::pattern;
using resident::testing::read_back;
using resident::testing::used_bytes;

TEST(Progress, FractionIsTheBytesDoneOverTheTotal) {
  EXPECT_DOUBLE_EQ((Progress{25, 100, 0.5}.fraction()), 0.25);
  EXPECT_DOUBLE_EQ((Progress{0, 4096, 0.0}.fraction()), 0.0);
  EXPECT_DOUBLE_EQ((Progress{4096, 4096, 2.0}.fraction()), 1.0);
  EXPECT_DOUBLE_EQ((Progress{1, 3, 0.0}.fraction()), 1.0 / 3.0);
}

TEST(Progress, AnEmptyUploadIsComplete) {
  const Progress nothing{};
  EXPECT_EQ(nothing.bytes_done, 0u);
  EXPECT_EQ(nothing.bytes_total, 0u);
  EXPECT_EQ(nothing.elapsed_seconds, 0.0);
  EXPECT_DOUBLE_EQ(nothing.fraction(), 1.0) << "0 of 0 bytes is all of them, not 0/0";
}

TEST(Progress, TheCallbackSaysWhetherToGoOn) {
  const ProgressCallback until_half = [](const Progress& progress) {
    return progress.fraction() < 0.5;
  };
  EXPECT_TRUE(until_half(Progress{10, 100, 0.0}));
  EXPECT_FALSE(until_half(Progress{50, 100, 0.0}));
  EXPECT_FALSE(static_cast<bool>(ProgressCallback{})) << "no callback by default";
  EXPECT_FALSE(static_cast<bool>(DatasetOptions{}.on_progress));
}

template <class Space>
using Upload = resident::testing::UploadFixture<Space>;
TYPED_TEST_SUITE(Upload, resident::testing::SpaceTypes, resident::testing::SpaceName);

TYPED_TEST(Upload, ProgressIsMonotonicPerChunkAndEndsAtTheTotal) {
  const std::size_t bytes = 10 * kChunk + 5;
  const auto source = pattern(bytes);
  std::vector<Progress> reports;
  DatasetOptions options = chunked();
  options.on_progress = [&reports](const Progress& progress) {
    reports.push_back(progress);
    return true;
  };
  const DeviceDataset<TypeParam, std::uint8_t> ds(
      this->space_, options, HostTensor<const std::uint8_t>(source.data(), {bytes}));
  ASSERT_EQ(reports.size(), 11u);  // one per chunk
  for (std::size_t i = 0; i < reports.size(); ++i) {
    EXPECT_EQ(reports[i].bytes_total, ds.bytes());
    if (i > 0) {
      EXPECT_GT(reports[i].bytes_done, reports[i - 1].bytes_done);
      EXPECT_GE(reports[i].elapsed_seconds, reports[i - 1].elapsed_seconds);
    }
  }
  EXPECT_EQ(reports.front().bytes_done, kChunk);
  EXPECT_EQ(reports.back().bytes_done, bytes);
  EXPECT_DOUBLE_EQ(reports.back().fraction(), 1.0);
}

TYPED_TEST(Upload, EmptyUploadReportsCompletionOnce) {
  int calls = 0;
  DatasetOptions options = chunked();
  options.on_progress = [&calls](const Progress& progress) {
    ++calls;
    EXPECT_EQ(progress.bytes_done, 0u);
    EXPECT_EQ(progress.bytes_total, 0u);
    return true;
  };
  const DeviceDataset<TypeParam, float> ds(this->space_, options,
                                           HostTensor<const float>(nullptr, {0, 4}));
  EXPECT_EQ(calls, 1);
}

TYPED_TEST(Upload, CancelAtFirstMiddleAndLastChunkReleasesEverything) {
  const std::size_t bytes = 6 * kChunk;
  const auto source = pattern(bytes);
  // A copy on purpose: the snapshot the source is compared with after each cancelled upload.
  // NOLINTNEXTLINE(performance-unnecessary-copy-initialization)
  const std::vector<std::uint8_t> pristine = source;
  const auto previous_data = pattern(100, 9);
  const DeviceDataset<TypeParam, std::uint8_t> previous(
      this->space_, chunked(), HostTensor<const std::uint8_t>(previous_data.data(), {100}));
  const auto used_before = used_bytes(this->space_);
  for (const std::size_t stop_at : {1, 3, 6}) {
    SCOPED_TRACE("cancel at report " + std::to_string(stop_at));
    std::size_t calls = 0;
    DatasetOptions options = chunked();
    options.on_progress = [&calls, stop_at](const Progress&) { return ++calls < stop_at; };
    try {
      const DeviceDataset<TypeParam, std::uint8_t> ds(
          this->space_, options, HostTensor<const std::uint8_t>(source.data(), {bytes}));
      FAIL() << "the upload was not cancelled";
    } catch (const Cancelled& cancelled) {
      EXPECT_EQ(cancelled.bytes_done(), stop_at * kChunk);
      EXPECT_EQ(cancelled.bytes_total(), bytes);
      EXPECT_NE(std::string(cancelled.what()).find("cancelled"), std::string::npos);
    }
    EXPECT_EQ(calls, stop_at);
    EXPECT_EQ(used_bytes(this->space_), used_before);
  }
  EXPECT_EQ(source, pristine);
  EXPECT_EQ(read_back(previous.space(), previous.stream(), previous.template field<0>()),
            previous_data);
}

TYPED_TEST(Upload, ExceptionFromTheCallbackPropagatesAndCleansUp) {
  const auto source = pattern(3 * kChunk);
  DatasetOptions options = chunked();
  options.on_progress = [](const Progress& progress) -> bool {
    if (progress.bytes_done >= 2 * kChunk) throw std::runtime_error("stop from the callback");
    return true;
  };
  EXPECT_THROW(
      (DeviceDataset<TypeParam, std::uint8_t>(
          this->space_, options, HostTensor<const std::uint8_t>(source.data(), {source.size()}))),
      std::runtime_error);
  EXPECT_EQ(used_bytes(this->space_).value_or(0), 0u);  // where the space accounts usage
}

}  // namespace
