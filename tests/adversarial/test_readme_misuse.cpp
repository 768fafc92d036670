// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// Misuse and edge cases a user can reach from the README alone: batch sizes far above the row
// count, rings deeper than the data, option values at their maximum, files that change under an
// upload, long file names, exports of empty or moved-from datasets, conversions that do not fit
// the rows, and iterators that outlive their epoch. Each test states the behaviour the README
// promises (or the one a user would expect) and runs in its own process, so a crash fails only
// that test.

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "resident/resident.hpp"
#if __has_include(<dlpack/dlpack.h>)
#include "resident/dlpack.hpp"
#define RESIDENT_TEST_HAS_DLPACK 1
#else
#define RESIDENT_TEST_HAS_DLPACK 0
#endif
#include "support/labelled_rows.hpp"
#include "support/temp_npy.hpp"

namespace {

namespace npy = resident::npy;
using resident::DatasetOptions;
using resident::DeviceDataset;
using resident::EpochOptions;
using resident::HostSpace;
using resident::HostTensor;
using resident::Remainder;
using resident::Shape;
using resident::Shuffle;
using resident::StreamingDataset;
using resident::testing::LabelledRows;

HostSpace budget(std::size_t bytes = std::size_t{64} << 20) {
  return HostSpace::with_budget(bytes);
}

DatasetOptions no_reserve(std::size_t batch_size) {
  DatasetOptions options;
  options.batch_size = batch_size;
  options.reserve_bytes = 0;
  return options;
}

/// Bytes of `rows` rows of `data` rows: what a ring slot needs at most, each field 256-aligned.
std::size_t aligned(std::size_t bytes) { return (bytes + 255) / 256 * 256; }

// --- Batch sizes far above the rows -------------------------------------------------------

// A batch size above the rows costs the rows there are: 10 rows with batch_size SIZE_MAX are
// one batch of 10 rows (partial) or none (drop), and no streaming figure may overflow on the
// way (the streaming options are ignored by a DeviceDataset).
TEST(BatchAboveRows, AHugeBatchSizeIsOneBatchOfTheRowsThereAre) {
  const LabelledRows rows(10, 4);
  DatasetOptions options = no_reserve(std::numeric_limits<std::size_t>::max());
  for (const Remainder remainder : {Remainder::partial, Remainder::drop}) {
    options.remainder = remainder;
    SCOPED_TRACE(resident::remainder_name(remainder));
    try {
      const DeviceDataset ds(budget(), options, rows.x(), rows.y());
      ASSERT_EQ(ds.num_batches(), remainder == Remainder::partial ? 1U : 0U);
      if (remainder == Remainder::partial) {
        const auto [x, y] = ds.batch(0);
        EXPECT_EQ(y.rows(), 10U);
        EXPECT_EQ(y.valid_rows(), 10U);
      }
      const resident::Plan plan = resident::plan(budget(), options, rows.x(), rows.y());
      EXPECT_TRUE(plan.fits);
    } catch (const resident::Error& error) {
      ADD_FAILURE() << "10 rows with a batch size above them were refused: " << error.what();
    }
  }
}

// The chunk slots hold the rows a batch can have, not batch_size rows: 10 rows of 16 B with
// batch_size 1000 stream through a 32 KiB budget (4 slots of 1000 rows would take 64512 B).
TEST(BatchAboveRows, TheStreamingRingHoldsTheRowsThereAreNotTheBatchSize) {
  const LabelledRows rows(10, 3);  // 12 + 4 = 16 bytes a row
  const DatasetOptions options = no_reserve(1000);
  const HostSpace space = budget(std::size_t{32} << 10);
  const resident::Plan plan = resident::plan(space, options, rows.x(), rows.y());
  const std::size_t slot = aligned(std::size_t{10} * 12) + aligned(std::size_t{10} * 4);
  EXPECT_LE(plan.stream_slots_bytes, options.streaming.chunk_slots * slot)
      << "plan() says the chunk slots of 10 rows takes " << plan.stream_slots_bytes << " B";
  try {
    const StreamingDataset ds(space, options, rows.x(), rows.y());
    EXPECT_LE(ds.bytes(), ds.chunk_slots() * slot);
  } catch (const resident::CapacityError& error) {
    ADD_FAILURE() << "10 rows (" << plan.needed_bytes << " B preloaded) cannot stream through a "
                  << "32 KiB budget: " << error.what();
  }
}

// --- Rings deeper than the data ------------------------------------------------------------

// StreamOptions::chunk_slots above the number of chunks: 10 rows in 2 chunks of one batch need
// 2 slots, not 64 (a 32 KiB ring for 296 B of data); plan() says the same.
TEST(RingDeeperThanData, AStreamingRingHasNoMoreSlotsThanChunks) {
  const LabelledRows rows(10, 3);
  const auto ring_of = [&](std::size_t chunk_slots) {
    DatasetOptions options = no_reserve(5);
    options.streaming.chunk_batches = 1;
    options.streaming.prefetch_chunks = 1;
    options.streaming.chunk_slots = chunk_slots;
    const StreamingDataset ds(budget(), options, rows.x(), rows.y());
    EXPECT_EQ(ds.num_chunks(), 2U);
    EXPECT_EQ(ds.bytes(), resident::plan(budget(), options, rows.x(), rows.y()).stream_slots_bytes);
    return ds.bytes();
  };
  EXPECT_EQ(ring_of(64), ring_of(2)) << "a ring deeper than the chunks it can hold";
}

// DatasetOptions::ring_depth above the number of batches: 2 batches need 2 gather slots, not
// 64 (every view of the epoch stays valid with one slot per batch already).
TEST(RingDeeperThanData, AGatherRingHasNoMoreSlotsThanBatches) {
  const LabelledRows rows(10, 3);
  const auto ring_of = [&](std::size_t depth) {
    DatasetOptions options = no_reserve(5);
    options.ring_depth = depth;
    DeviceDataset ds(budget(), options, rows.x(), rows.y());
    EXPECT_EQ(ds.num_batches(), 2U);
    auto epoch = ds.epoch({1, 0, Shuffle::samples});
    (void)epoch.batch(0);
    EXPECT_EQ(ds.ring_bytes(), resident::plan(budget(), options, rows.x(), rows.y()).ring_bytes);
    return ds.ring_bytes();
  };
  EXPECT_EQ(ring_of(64), ring_of(2)) << "a ring deeper than the batches it can hold";
  EXPECT_LT(ring_of(1), ring_of(2));
}

// --- Options that do not apply --------------------------------------------------------------

// DatasetOptions::streaming is ignored by a DeviceDataset, even where a stream would refuse it
// ("StreamOptions::chunk_slots (1) must exceed prefetch_chunks (2)").
TEST(IgnoredOptions, StreamOptionsDoNotStopADeviceDataset) {
  const LabelledRows rows(10, 3);
  DatasetOptions options = no_reserve(4);
  options.streaming.chunk_slots = 1;
  try {
    const DeviceDataset ds(budget(), options, rows.x(), rows.y());
    EXPECT_EQ(ds.num_batches(), 3U);
  } catch (const resident::Error& error) {
    ADD_FAILURE() << "a preloaded dataset was refused for its streaming options: " << error.what();
  }
}

/// The threads this process runs now (Linux), -1 where unknown.
int threads_now() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("Threads:", 0) == 0) return std::stoi(line.substr(8));
  return -1;
}

// DatasetOptions::upload_threads far above the hardware is capped, never taken as given (1000,
// or UINT_MAX, would start threads until the system refuses).
TEST(OptionsAtTheirMaximum, UploadThreadsAreBounded) {
  std::vector<float> data((std::size_t{16} << 20) / sizeof(float), 1.0f);
  const HostTensor<const float> x(data.data(), {data.size() / 64, 64});
  DatasetOptions options = no_reserve(256);
  options.upload_threads = 1000;
  int peak = 0;
  options.on_progress = [&](const resident::Progress&) {
    peak = std::max(peak, threads_now());
    return true;
  };
  try {
    const DeviceDataset ds(budget(std::size_t{32} << 20), options, x);
  } catch (const resident::InvalidArgument& error) {
    EXPECT_NE(std::string(error.what()).find("upload_threads"), std::string::npos) << error.what();
    return;
  }
  const int bound = std::max(64, static_cast<int>(std::thread::hardware_concurrency()));
  EXPECT_LE(peak, bound) << "upload_threads = 1000 ran " << peak << " threads at once";
}

// DatasetOptions::gather_threads far above the hardware is capped in the same way: an epoch
// whose batches are gathered on the host runs at most the hardware's threads.
TEST(OptionsAtTheirMaximum, GatherThreadsAreBounded) {
  std::vector<std::uint8_t> data(std::size_t{4} << 20, 7);
  const HostTensor<const std::uint8_t> x(data.data(), {data.size() / 4096, 4096});
  DatasetOptions options = no_reserve(256);  // 1 MiB batches: split across the team
  options.gather_threads = std::numeric_limits<unsigned>::max();
  DeviceDataset ds(budget(std::size_t{32} << 20), options, x);
  const int before = threads_now();
  int peak = 0;
  for (auto [batch] : ds.epoch({1, 0, resident::Shuffle::samples})) {
    EXPECT_EQ(batch.data()[0], 7);
    peak = std::max(peak, threads_now());
  }
  const int bound = before + static_cast<int>(std::thread::hardware_concurrency());
  EXPECT_LE(peak, bound) << "gather_threads = UINT_MAX ran " << peak << " threads at once";
}

// --- Files ----------------------------------------------------------------------------------

// load_dataset copies from the files' mappings: a file truncated in place between two upload
// chunks (here from the progress callback) is refused with a FormatError before the next chunk
// reads a mapping that is no longer backed (which would raise SIGBUS).
TEST(FileChangedDuringUpload, ATruncationMidUploadIsAFormatErrorNotSigbus) {
  std::vector<float> values(std::size_t{1} << 20, 1.0f);
  const resident::testing::TempNpy file("readme_misuse_truncated_mid_upload", values,
                                        Shape{std::size_t{1} << 14, 64});
  DatasetOptions options = no_reserve(256);
  options.upload_block_bytes = std::size_t{64} << 10;
  int calls = 0;
  options.on_progress = [&](const resident::Progress&) {
    if (calls++ == 1) {
      EXPECT_EQ(::truncate(file.path.c_str(), 4096), 0);
    }
    return true;
  };
  const auto load = [&] {
    (void)resident::load_dataset<HostSpace, float>(budget(), options, file.path);
  };
  EXPECT_THROW(load(), resident::FormatError);
}

// A file whose own name is valid (250 characters, under NAME_MAX = 255) can be saved: the
// temporary beside it has a short name of its own, not the target's name with a suffix (which
// gave Error "creating a temporary file beside it: File name too long"). NumPy writes such a
// file.
TEST(SaveNames, AFileNameNearNameMaxCanBeSaved) {
  const std::string path =
      ::testing::TempDir() + std::string(245, 'a') + std::to_string(::getpid() % 10) + ".npy";
  ASSERT_LE(path.size() - path.rfind('/') - 1, 255U);
  const std::vector<float> values{1, 2, 3, 4};
  try {
    npy::save(path, values.data(), Shape{4});
    const npy::Array back = npy::load(path);
    EXPECT_EQ(back.shape()[0], 4U);
  } catch (const resident::Error& error) {
    ADD_FAILURE() << error.what();
  }
  std::remove(path.c_str());
}

// --- DLPack ---------------------------------------------------------------------------------

#if RESIDENT_TEST_HAS_DLPACK
// Zero rows is legal, and the field of an empty dataset exports as a tensor of shape (0, 4).
TEST(DLPackEdges, TheFieldOfAnEmptyDatasetExports) {
  const LabelledRows rows(0, 4);
  const DeviceDataset ds(budget(), no_reserve(8), rows.x(), rows.y());
  try {
    resident::DLPackTensor* tensor = resident::to_dlpack(ds, ds.field<0>());
    EXPECT_EQ(tensor->dl_tensor.ndim, 2);
    EXPECT_EQ(tensor->dl_tensor.shape[0], 0);
    tensor->deleter(tensor);
  } catch (const resident::Error& error) {
    ADD_FAILURE() << "an empty field was refused: " << error.what();
  }
}

// Exporting from a moved-from dataset is refused saying so (not with the sentence meant for
// ring views), and names the dataset to export from instead.
TEST(DLPackEdges, AMovedFromDatasetIsNamedAsSuch) {
  const LabelledRows rows(16, 4);
  DeviceDataset a(budget(), no_reserve(8), rows.x(), rows.y());
  const auto view = a.field<0>();
  const DeviceDataset b(std::move(a));
  try {
    resident::DLPackTensor* tensor = resident::to_dlpack(a, view);  // NOLINT: use after move
    tensor->deleter(tensor);
    ADD_FAILURE() << "exported from a moved-from dataset";
  } catch (const resident::Error& error) {
    EXPECT_NE(std::string(error.what()).find("moved"), std::string::npos) << error.what();
  }
  (void)b;
}
#endif

// --- Conversions that do not fit the rows ----------------------------------------------------

// Normalize::mean_std with 3 channels of 32*32 elements over rows of 12 elements would put every
// element in channel 0: the epoch refuses it with InvalidArgument when it is made.
TEST(ConversionFit, AChannelLayoutThatDoesNotMatchTheRowsIsRefused) {
  const LabelledRows rows(8, 12);
  DeviceDataset ds(budget(), no_reserve(4), rows.x(), rows.y());
  const auto normalize = resident::Normalize::mean_std({0.5f, 0.25f, 0.125f}, {1.0f, 2.0f, 4.0f},
                                                       std::size_t{32} * 32);
  const auto convert_all = [&] {
    auto epoch = ds.epoch({0, 0, Shuffle::none}, resident::convert<0>(normalize));
    (void)epoch.batch(0);
  };
  EXPECT_THROW(convert_all(), resident::InvalidArgument);
}

// --- Iterators ------------------------------------------------------------------------------

// `auto it = ds.epoch(...).begin();` keeps the address of a temporary epoch: dereferencing the
// iterator then throws a typed error instead of reading the dead epoch.
TEST(IteratorLifetime, AnIteratorOfATemporaryEpochDoesNotReadADeadEpoch) {
  const LabelledRows rows(16, 4);
  DeviceDataset ds(budget(), no_reserve(4), rows.x(), rows.y());
  auto it = ds.epoch({1, 0, Shuffle::batches}).begin();
  try {
    (void)*it;
    ADD_FAILURE() << "an iterator of a destroyed epoch served a batch";
  } catch (const resident::Error& error) {
    EXPECT_NE(std::string(error.what()).find("iterator's epoch was destroyed or moved"),
              std::string::npos)
        << error.what();
  }
  // An epoch moved away takes its iterators' right to serve with it; the one it moved to serves.
  auto epoch = ds.epoch({1, 0, Shuffle::batches});
  auto from_old = epoch.begin();
  auto moved = std::move(epoch);
  EXPECT_THROW((void)*from_old, resident::Error);
  EXPECT_EQ(std::get<1>(*moved.begin()).rows(), 4U);
}

}  // namespace
