// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0

// The host copy team through the public API: DatasetOptions::gather_threads, whatever its value
// (the default, one, several, far more than the hardware has), never changes a batch: every
// shuffle, transform and remainder policy, preloaded and streamed, on every space that gathers
// here (on CudaSpace the kernels gather and the option is ignored). The batches are large
// enough for the team to cut each into several blocks.

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "resident/augment.hpp"
#include "resident/convert.hpp"
#include "resident/device_dataset.hpp"
#include "resident/image_layout.hpp"
#include "resident/streaming_dataset.hpp"
#include "support/epoch_bytes.hpp"
#include "support/spaces.hpp"

namespace {

using resident::DatasetOptions;
using resident::EpochOptions;
using resident::HostTensor;
using resident::Remainder;
using resident::Shuffle;

// CIFAR-shaped rows: a batch of 100 is 300 KiB, four blocks of the gather's 64 KiB.
constexpr std::size_t kRows = 203, kBatch = 100;
constexpr std::size_t kPixels = std::size_t{3} * 32 * 32;

struct Images {
  Images() : pixels(kRows * kPixels), labels(kRows) {
    for (std::size_t i = 0; i < pixels.size(); ++i)
      pixels[i] = static_cast<std::uint8_t>((i * 2654435761u) >> 11);
    for (std::size_t i = 0; i < kRows; ++i) labels[i] = static_cast<std::int32_t>(i * 7);
  }
  [[nodiscard]] HostTensor<const std::uint8_t> x() const {
    return {pixels.data(), {kRows, 3, 32, 32}};
  }
  [[nodiscard]] HostTensor<const std::int32_t> y() const { return {labels.data(), {kRows}}; }
  std::vector<std::uint8_t> pixels;
  std::vector<std::int32_t> labels;
};

enum class Transform { none, convert, augment, all };

using Record = resident::testing::EpochBytes;

template <class Dataset, class Epoch>
Record record(Dataset& ds, Epoch&& epoch) {
  return resident::testing::record_bytes(ds, std::forward<Epoch>(epoch));
}

template <class Dataset>
Record record(Dataset& ds, const EpochOptions& options, Transform transform) {
  const auto normalize = resident::convert<0>(resident::Normalize{1.0f / 255, -0.5f});
  const auto image = resident::ImageLayout::chw(3, 32, 32);
  switch (transform) {
    case Transform::none:
      return record(ds, ds.epoch(options));
    case Transform::convert:
      return record(ds, ds.epoch(options, normalize));
    case Transform::augment:
      return record(ds, ds.epoch(options, resident::augment<0>(image, resident::RandomCrop{4},
                                                               resident::RandomFlip{})));
    case Transform::all:
      break;
  }
  return record(ds, ds.epoch(options, normalize,
                             resident::augment<0>(image, resident::RandomCrop{4},
                                                  resident::RandomFlip{}, resident::Cutout{8})));
}

DatasetOptions options_with(unsigned gather_threads, Remainder remainder) {
  DatasetOptions options;
  options.batch_size = kBatch;
  options.remainder = remainder;
  options.reserve_bytes = 0;
  options.gather_threads = gather_threads;
  options.streaming.chunk_batches = 1;
  return options;
}

template <class Space>
using GatherTeam = resident::testing::OverGatheringSpaces<Space>;
TYPED_TEST_SUITE(GatherTeam, resident::testing::SpaceTypes, resident::testing::SpaceName);

TYPED_TEST(GatherTeam, GatherThreadsNeverChangeABatch) {
  const Images data;
  const auto space = resident::testing::budgeted_space<TypeParam>();
  for (const Remainder remainder : {Remainder::partial, Remainder::pad}) {
    const auto made = [&](unsigned threads) {
      return resident::DeviceDataset<TypeParam, std::uint8_t, std::int32_t>(
          space, options_with(threads, remainder), data.x(), data.y());
    };
    auto reference = made(1);
    for (const unsigned threads : {0u, 2u, 3u, 1000u}) {
      auto ds = made(threads);
      for (const Transform transform :
           {Transform::none, Transform::convert, Transform::augment, Transform::all}) {
        for (const std::uint64_t epoch : {0, 1}) {
          const EpochOptions options{5, epoch, Shuffle::samples};
          ASSERT_EQ(record(ds, options, transform), record(reference, options, transform))
              << threads << " threads, transform " << static_cast<int>(transform) << ", remainder "
              << resident::remainder_name(remainder) << ", epoch " << epoch;
        }
      }
    }
  }
}

TYPED_TEST(GatherTeam, GatherThreadsNeverChangeAStreamedBatch) {
  const Images data;
  const auto space = resident::testing::budgeted_space<TypeParam>();
  const auto made = [&](unsigned threads) {
    return resident::StreamingDataset<TypeParam, std::uint8_t, std::int32_t>(
        space, options_with(threads, Remainder::pad), data.x(), data.y());
  };
  auto reference = made(1);
  for (const unsigned threads : {0u, 2u, 1000u}) {
    auto ds = made(threads);
    for (const Transform transform : {Transform::none, Transform::all}) {
      for (const Shuffle shuffle : {Shuffle::batches, Shuffle::samples}) {
        const EpochOptions options{9, 1, shuffle};
        ASSERT_EQ(record(ds, options, transform), record(reference, options, transform))
            << threads << " threads, transform " << static_cast<int>(transform);
      }
    }
  }
}

}  // namespace
