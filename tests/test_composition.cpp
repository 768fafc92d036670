// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0

// Features composed: every source a dataset can be made from (host tensors, a .npy file per
// field, stored and deflated .npz members) under a budget that preloads it and one that makes
// `make_dataset` stream it, times every shuffle, transform, remainder policy and rank of a
// one- and a two-rank job. Every cell serves the batches of the preloaded dataset of the same
// data bit for bit, within its budget; the window order serves the right rows.

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <numeric>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "resident/augment.hpp"
#include "resident/convert.hpp"
#include "resident/dataset.hpp"
#include "resident/device_dataset.hpp"
#include "resident/image_layout.hpp"
#include "resident/npy.hpp"
#include "resident/npz.hpp"
#include "support/epoch_bytes.hpp"
#include "support/epoch_checks.hpp"
#include "support/small_images.hpp"
#include "support/spaces.hpp"

namespace {

using resident::DatasetOptions;
using resident::EpochOptions;
using resident::HostTensor;
using resident::Remainder;
using resident::Shuffle;

constexpr std::size_t kRows = 403, kBatch = 8;
// Usable bytes that make every source stream: the data needs about 21 KiB, the chunk slots and
// the gather ring of these options about 7 KiB.
constexpr std::size_t kStreamUsable = std::size_t{10} << 10;

/// The matrix's images: every cell's data.
struct Images : resident::testing::SmallImages {
  Images() : SmallImages(kRows) {}
};

/// The files of the data, removed with this object.
struct Files {
  explicit Files(const Images& data) {
    const std::string base =
        ::testing::TempDir() + "composition_" + std::to_string(::getpid()) + "_";
    x_npy = base + "x.npy";
    y_npy = base + "y.npy";
    stored = base + "stored.npz";
    deflated = base + "deflated.npz";
    resident::npy::save(x_npy, data.x());
    resident::npy::save(y_npy, data.y());
    const std::vector<resident::npz::Entry> entries{{"x", data.x()}, {"y", data.y()}};
    resident::npz::save(stored, entries);
    resident::npz::save(deflated, entries, resident::npz::Compression::deflated);
  }
  Files(const Files&) = delete;
  Files& operator=(const Files&) = delete;
  ~Files() {
    for (const std::string* path : {&x_npy, &y_npy, &stored, &deflated}) std::remove(path->c_str());
  }
  std::string x_npy, y_npy, stored, deflated;
};

enum class Source { tensors, npy, stored_npz, deflated_npz };
const char* source_name(Source source) {
  switch (source) {
    case Source::tensors:
      return "tensors";
    case Source::npy:
      return ".npy";
    case Source::stored_npz:
      return "stored .npz";
    case Source::deflated_npz:
      return "deflated .npz";
  }
  return "?";
}

// `all`: the images normalized, augmented and served HWC, the labels cast to int64 (a conversion
// per field).
enum class Transform { none, convert, augment, all };
const char* transform_name(Transform transform) {
  switch (transform) {
    case Transform::none:
      return "none";
    case Transform::convert:
      return "convert";
    case Transform::augment:
      return "augment";
    case Transform::all:
      return "all";
  }
  return "?";
}

auto normalize() { return resident::convert<0>(resident::Normalize{1.0f / 255, -0.5f}); }
auto augmentation() {
  return resident::augment<0>(resident::ImageLayout::chw(3, 4, 4), resident::RandomCrop{1},
                              resident::RandomFlip{});
}

using Record = resident::testing::EpochBytes;

template <class Dataset, class Epoch>
Record record(Dataset& ds, Epoch&& epoch) {
  return resident::testing::record_bytes(ds, std::forward<Epoch>(epoch));
}

template <class Dataset>
Record record(Dataset& ds, const EpochOptions& options, Transform transform) {
  switch (transform) {
    case Transform::none:
      return record(ds, ds.epoch(options));
    case Transform::convert:
      return record(ds, ds.epoch(options, normalize()));
    case Transform::augment:
      return record(ds, ds.epoch(options, augmentation()));
    case Transform::all:
      return record(ds, resident::testing::every_transform_epoch(ds, options));
  }
  return {};
}

/// Options of the cells: chunks of 2 batches, 3 slots, 1 loading ahead.
DatasetOptions cell_options(Remainder remainder, int rank, int world) {
  DatasetOptions options;
  options.batch_size = kBatch;
  options.remainder = remainder;
  options.shard = {rank, world, 0};
  options.reserve_bytes = 0;
  options.streaming.chunk_batches = 2;
  options.streaming.chunk_slots = 3;
  options.streaming.prefetch_chunks = 1;
  return options;
}

template <class Space>
using Images8 = resident::Dataset<Space, std::uint8_t, std::int32_t>;

template <class Space>
Images8<Space> make(const Space& space, const DatasetOptions& options, Source source,
                    const Images& data, const Files& files) {
  switch (source) {
    case Source::tensors:
      return resident::make_dataset(space, options, data.x(), data.y());
    case Source::npy:
      return resident::make_dataset<Space, std::uint8_t, std::int32_t>(space, options, files.x_npy,
                                                                       files.y_npy);
    case Source::stored_npz:
      return resident::make_dataset<Space, std::uint8_t, std::int32_t>(space, options, files.stored,
                                                                       {"x", "y"});
    case Source::deflated_npz:
      break;
  }
  return resident::make_dataset<Space, std::uint8_t, std::int32_t>(space, options, files.deflated,
                                                                   {"x", "y"});
}

/// Every valid label of an epoch once at most, and as many as the epoch serves.
void expect_right_rows(const Record& epoch, std::size_t served) {
  const std::set<std::int32_t> distinct(epoch.labels.begin(), epoch.labels.end());
  EXPECT_EQ(distinct.size(), epoch.labels.size()) << "a row served twice";
  EXPECT_EQ(epoch.labels.size(), served);
  for (const std::int32_t label : epoch.labels) ASSERT_LT(static_cast<std::size_t>(label), kRows);
}

template <class Space>
using Composition = resident::testing::OverGatheringSpaces<Space>;
TYPED_TEST_SUITE(Composition, resident::testing::GatherSpaceTypes, resident::testing::SpaceName);

// The matrix: source x budget x shuffle x transform x remainder x rank of 1 and 2 ranks. Each
// cell is made (preloaded or streamed, as the budget decides) and serves, epoch after epoch,
// the batches of the DeviceDataset of the same tensors bit for bit.
TYPED_TEST(Composition, EveryCellServesThePreloadedBatches) {
  const Images data;
  const Files files(data);
  const auto space = resident::testing::budgeted_space<TypeParam>();
  std::size_t cells = 0, streamed = 0;
  for (const int world : {1, 2}) {
    for (int rank = 0; rank < world; ++rank) {
      for (const Remainder remainder : {Remainder::drop, Remainder::partial, Remainder::pad}) {
        const DatasetOptions options = cell_options(remainder, rank, world);
        resident::DeviceDataset<TypeParam, std::uint8_t, std::int32_t> reference(
            space, options, data.x(), data.y());
        for (const bool stream : {false, true}) {
          for (const Source source :
               {Source::tensors, Source::npy, Source::stored_npz, Source::deflated_npz}) {
            DatasetOptions budget = options;
            if (stream) budget.reserve_bytes = space.capacity().free_bytes - kStreamUsable;
            auto ds = make(space, budget, source, data, files);
            ASSERT_EQ(ds.is_streaming(), stream) << ds.plan();
            streamed += ds.is_streaming() ? 1 : 0;
            for (const Shuffle shuffle : {Shuffle::none, Shuffle::batches, Shuffle::samples}) {
              for (const Transform transform :
                   {Transform::none, Transform::convert, Transform::augment, Transform::all}) {
                SCOPED_TRACE(
                    std::string(source_name(source)) + ", " + (stream ? "streamed" : "preloaded") +
                    ", rank " + std::to_string(rank) + " of " + std::to_string(world) + ", " +
                    resident::remainder_name(remainder) + ", " +
                    resident::testing::shuffle_name(shuffle) + ", " + transform_name(transform));
                for (const std::uint64_t epoch : {0, 1}) {
                  const EpochOptions epoch_options{11, epoch, shuffle};
                  const Record expected = record(reference, epoch_options, transform);
                  const Record got = record(ds, epoch_options, transform);
                  ASSERT_EQ(got.valid, expected.valid);
                  ASSERT_TRUE(got == expected) << "the batches differ from the preloaded ones";
                }
                ++cells;
              }
            }
          }
        }
      }
    }
  }
  EXPECT_EQ(cells, 3u * 3 * 2 * 4 * 3 * 4);
  EXPECT_EQ(streamed, 3u * 3 * 4);
}

// Files streamed in window order (as files larger than the host's memory are) serve every row
// at most once per epoch, as many as the epoch serves, under every shuffle, transform and
// remainder; under drop a shuffled epoch leaves out other rows each epoch, and every row is
// served within as many epochs as rows are left out, plus one (here 3 + 1).
TYPED_TEST(Composition, TheWindowOrderServesTheRightRows) {
  const Images data;
  const Files files(data);
  const auto space = resident::testing::budgeted_space<TypeParam>();
  for (const Remainder remainder : {Remainder::drop, Remainder::partial, Remainder::pad}) {
    DatasetOptions options = cell_options(remainder, 0, 1);
    options.reserve_bytes = space.capacity().free_bytes - kStreamUsable;
    options.streaming.order = resident::StreamOrder::window;
    auto ds = make(space, options, Source::npy, data, files);
    ASSERT_TRUE(ds.is_streaming());
    ASSERT_EQ(ds.streaming()->order(), resident::StreamOrder::window);
    const std::size_t served = remainder == Remainder::drop ? kRows / kBatch * kBatch : kRows;
    for (const Shuffle shuffle : {Shuffle::none, Shuffle::batches, Shuffle::samples}) {
      std::set<std::int32_t> over_epochs;
      for (const Transform transform :
           {Transform::none, Transform::convert, Transform::augment, Transform::all}) {
        SCOPED_TRACE(std::string(resident::remainder_name(remainder)) + ", " +
                     resident::testing::shuffle_name(shuffle) + ", " + transform_name(transform));
        for (const std::uint64_t epoch : {0, 1, 2, 3}) {
          const Record got = record(ds, {5, epoch, shuffle}, transform);
          expect_right_rows(got, served);
          over_epochs.insert(got.labels.begin(), got.labels.end());
        }
      }
      if (shuffle != Shuffle::none) {
        EXPECT_EQ(over_epochs.size(), kRows) << "a row never served over 4 epochs";
      }
    }
  }
}

}  // namespace
