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

// The README: "a batch size above the rows costs the rows there are, not the batch size". A
// DeviceDataset of 10 rows with batch_size SIZE_MAX serves one batch of 10 rows (partial) or
// none (drop). Found: the constructor (and plan()) throws InvalidArgument "chunk size overflows
// std::size_t (18446744073709551615 x 16); the shape is too large for this platform" -- a
// streaming figure (DatasetOptions::streaming is "ignored by DeviceDataset"), and the shape is
// 10 x 4.
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

// The streaming ring is sized by batch_size, not by the rows a batch can hold: 10 rows of 16 B
// (296 B stored) with batch_size 1000 get a ring of 64512 B (4 slots of 1000 rows), so a 32 KiB
// budget that holds the data 100 times over refuses the StreamingDataset with CapacityError.
// The gather ring was already fixed for this ("a slot holds the largest batch the dataset
// serves"); the streaming ring and plan().stream_ring_bytes should be too.
TEST(BatchAboveRows, TheStreamingRingHoldsTheRowsThereAreNotTheBatchSize) {
  const LabelledRows rows(10, 3);  // 12 + 4 = 16 bytes a row
  const DatasetOptions options = no_reserve(1000);
  const HostSpace space = budget(std::size_t{32} << 10);
  const resident::Plan plan = resident::plan(space, options, rows.x(), rows.y());
  const std::size_t slot = aligned(10 * 12) + aligned(10 * 4);
  EXPECT_LE(plan.stream_ring_bytes, options.streaming.ring_chunks * slot)
      << "plan() says the streaming ring of 10 rows takes " << plan.stream_ring_bytes << " B";
  try {
    const StreamingDataset ds(space, options, rows.x(), rows.y());
    EXPECT_LE(ds.bytes(), ds.ring_chunks() * slot);
  } catch (const resident::CapacityError& error) {
    ADD_FAILURE() << "10 rows (" << plan.needed_bytes << " B preloaded) cannot stream through a "
                  << "32 KiB budget: " << error.what();
  }
}

// --- Rings deeper than the data ------------------------------------------------------------

// StreamOptions::ring_chunks above the number of chunks: 10 rows in 2 chunks of one batch get
// a ring of 64 slots (32768 B for 296 B of data). A ring never needs more slots than there are
// chunks; plan() and the constructor should clamp it (or say so).
TEST(RingDeeperThanData, AStreamingRingHasNoMoreSlotsThanChunks) {
  const LabelledRows rows(10, 3);
  DatasetOptions options = no_reserve(5);
  options.streaming.chunk_batches = 1;
  options.streaming.ring_chunks = 64;
  const StreamingDataset ds(budget(), options, rows.x(), rows.y());
  ASSERT_EQ(ds.num_chunks(), 2U);
  const std::size_t slot = ds.bytes() / ds.ring_chunks();
  EXPECT_LE(ds.bytes(), ds.num_chunks() * slot)
      << "a ring of " << ds.ring_chunks() << " slots (" << ds.bytes() << " B) for "
      << ds.num_chunks() << " chunks of " << ds.data_bytes() << " B of data";
  const resident::Plan plan = resident::plan(budget(), options, rows.x(), rows.y());
  EXPECT_LE(plan.stream_ring_bytes, ds.num_chunks() * slot);
}

// DatasetOptions::ring_depth above the number of batches: 2 batches get a gather ring of 64
// slots (49152 B beside 296 B of data). Every view of the epoch stays valid with
// `num_batches()` slots already.
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

// DatasetOptions::streaming is documented "ignored by DeviceDataset", yet a DeviceDataset (and
// load_dataset, make_dataset's preload) refuses streaming options that only a stream could
// use: InvalidArgument "StreamOptions::ring_chunks (1) must exceed prefetch_chunks (2)".
TEST(IgnoredOptions, StreamOptionsDoNotStopADeviceDataset) {
  const LabelledRows rows(10, 3);
  DatasetOptions options = no_reserve(4);
  options.streaming.ring_chunks = 1;
  try {
    const DeviceDataset ds(budget(), options, rows.x(), rows.y());
    EXPECT_EQ(ds.num_batches(), 3U);
  } catch (const resident::Error& error) {
    ADD_FAILURE() << "a preloaded dataset was refused for its streaming options: " << error.what();
  }
}

// DatasetOptions::upload_threads is taken as given: 1000 starts 1000 threads for a 16 MiB
// upload (UINT_MAX would start threads until the system refuses, starving every process of the
// user). The default is "the hardware threads, at most 8"; an explicit value far above the
// hardware should be capped, or refused with InvalidArgument naming the option.
TEST(OptionsAtTheirMaximum, UploadThreadsAreBounded) {
  const auto threads_now = [] {
    std::ifstream status("/proc/self/status");
    for (std::string line; std::getline(status, line);)
      if (line.rfind("Threads:", 0) == 0) return std::stoi(line.substr(8));
    return -1;
  };
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

// --- Files ----------------------------------------------------------------------------------

// load_dataset maps the file and copies from the mapping during the upload; a file truncated in
// place while the upload runs (here from the progress callback, i.e. between two chunks) kills
// the process with SIGBUS inside HostSpace::copy_from_host. npy::load checks the file once
// after mapping, but not during the upload. Expected: a FormatError naming the file (as
// streaming gives), e.g. by checking the file between chunks or reading it with pread.
TEST(FileChangedDuringUpload, ATruncationMidUploadIsAFormatErrorNotSigbus) {
  std::vector<float> values(std::size_t{1} << 20, 1.0f);
  const resident::testing::TempNpy file("found_truncated_mid_upload", values,
                                        Shape{std::size_t{1} << 14, 64});
  DatasetOptions options = no_reserve(256);
  options.chunk_bytes = std::size_t{64} << 10;
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
// "Zero rows is legal", but exporting the field of an empty dataset is refused, with a message
// about gathered epoch batches and ring slots that has nothing to do with it. Expected: a
// tensor of shape (0, 4).
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

// Exporting from a moved-from dataset, or a view that belongs to another dataset, is refused
// (good) with the same sentence as a ring view: "to_dlpack() exports views of the dataset's own
// allocation (a field or a batch); copy gathered epoch batches first". It should say what was
// found: that the dataset was moved from (and to export from the one it moved to).
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

// Normalize::mean_std with 3 channels of 32*32 elements over rows of 12 elements: every element
// falls in channel 0 and the epoch silently normalises all of them with channel 0's mean and
// std. The row shape is known when the epoch is made; a channel layout that does not divide the
// row (channels x stride = 3072 against 12 elements) should be refused with InvalidArgument.
TEST(ConversionFit, AChannelLayoutThatDoesNotMatchTheRowsIsRefused) {
  const LabelledRows rows(8, 12);
  DeviceDataset ds(budget(), no_reserve(4), rows.x(), rows.y());
  const auto normalize =
      resident::Normalize::mean_std({0.5f, 0.25f, 0.125f}, {1.0f, 2.0f, 4.0f}, 32 * 32);
  const auto convert_all = [&] {
    auto epoch = ds.epoch({0, 0, Shuffle::none}, resident::convert<0>(normalize));
    (void)epoch.batch(0);
  };
  EXPECT_THROW(convert_all(), resident::InvalidArgument);
}

// --- Iterators ------------------------------------------------------------------------------

// `auto it = ds.epoch(...).begin();` keeps a pointer to the temporary epoch: dereferencing it
// reads a dead object (ASan: stack-use-after-scope in TenancyLease::check). Undefined
// behaviour, so a plain Debug build may pass by luck; the asan preset fails it. Epochs otherwise
// refuse every use after their dataset changed; an iterator that outlives its epoch should
// either keep what it needs alive or say so with a typed error.
TEST(IteratorLifetime, AnIteratorOfATemporaryEpochDoesNotReadADeadEpoch) {
  const LabelledRows rows(16, 4);
  DeviceDataset ds(budget(), no_reserve(4), rows.x(), rows.y());
  auto it = ds.epoch({1, 0, Shuffle::batches}).begin();
  try {
    const auto [x, y] = *it;
    EXPECT_EQ(y.rows(), 4U);
  } catch (const resident::Error&) {
    SUCCEED();  // a typed refusal is acceptable
  }
}

}  // namespace
