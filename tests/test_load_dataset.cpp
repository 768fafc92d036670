// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// load_dataset: from .npy files to a DeviceDataset in one call, the files checked against the
// field types and each other first, and against what they were after every upload chunk.
// load_streaming_dataset: where the streamed rows come from (files, or host memory the sources
// own: deflated members inflated once, files read once), by StreamOptions::order.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <mutex>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "resident/detail/stream/row_source.hpp"
#include "resident/host_space.hpp"
#include "resident/load_dataset.hpp"
#include "resident/npy.hpp"
#include "resident/npz.hpp"
#include "support/host_available.hpp"
#include "support/temp_npy.hpp"

namespace {

namespace npy = resident::npy;
namespace npz = resident::npz;
using resident::CapacityError;
using resident::DatasetOptions;
using resident::FormatError;
using resident::HostSpace;
using resident::Progress;
using resident::Shape;
using resident::Shuffle;
using resident::StreamOrder;
using resident::detail::RowSource;
using resident::testing::HostAvailable;
using resident::testing::scratch;
using resident::testing::TempNpy;

TEST(LoadDataset, FromNpyFilesToADataset) {
  const std::vector<std::uint8_t> pixels{1, 2, 3, 4, 5, 6, 7, 8};
  const std::vector<std::int32_t> labels{10, 20, 30, 40};
  const std::string x = scratch("x.npy"), y = scratch("y.npy");
  npy::save(x, pixels.data(), Shape{4, 2});
  npy::save(y, labels.data(), Shape{4});
  resident::DatasetOptions options;
  options.batch_size = 2;
  options.reserve_bytes = 0;
  const auto space = resident::HostSpace::with_budget(1 << 20);
  const auto ds =
      resident::load_dataset<resident::HostSpace, std::uint8_t, std::int32_t>(space, options, x, y);
  EXPECT_EQ(ds.num_rows(), 4u);
  const auto [xb, yb] = ds.batch(1);
  EXPECT_EQ(xb.data()[0], 5);
  EXPECT_EQ(yb.data()[1], 40);

  // A dtype that is not the field's, or files that disagree on rows: refused before the space
  // is touched.
  EXPECT_THROW(
      (resident::load_dataset<resident::HostSpace, float, std::int32_t>(space, options, x, y)),
      FormatError);
  const std::string short_y = scratch("short_y.npy");
  npy::save(short_y, labels.data(), Shape{3});
  EXPECT_THROW((resident::load_dataset<resident::HostSpace, std::uint8_t, std::int32_t>(
                   space, options, x, short_y)),
               resident::InvalidArgument);
  EXPECT_EQ(space.used_bytes(), ds.bytes());
  for (const auto& path : {x, y, short_y}) std::remove(path.c_str());
}

// plan() over .npy files: the figures of plan() over the same rows in memory, from the headers
// alone; a mistyped file refused as the loaders refuse it.
TEST(LoadDataset, PlanOverNpyFilesIsThePlanOverTheirRows) {
  std::vector<float> features(std::size_t{300} * 5);
  std::iota(features.begin(), features.end(), 0.0f);
  std::vector<std::int32_t> labels(300);
  std::iota(labels.begin(), labels.end(), 0);
  const TempNpy x("plan_x", features, Shape{300, 5});
  const TempNpy y("plan_y", labels, Shape{300});
  DatasetOptions options;
  options.batch_size = 7;
  options.remainder = resident::Remainder::pad;
  options.streaming.chunk_batches = 3;
  for (const std::size_t budget : {std::size_t{1} << 20, std::size_t{6000}}) {
    const auto space = HostSpace::with_budget(budget);
    const resident::Plan from_files =
        resident::plan<HostSpace, float, std::int32_t>(space, options, x.path, y.path);
    const resident::Plan from_rows =
        resident::plan(space, options, resident::HostTensor<const float>(features.data(), {300, 5}),
                       resident::HostTensor<const std::int32_t>(labels.data(), {300}));
    EXPECT_EQ(from_files.recommendation, from_rows.recommendation) << from_files.reason;
    EXPECT_EQ(from_files.needed_bytes, from_rows.needed_bytes);
    EXPECT_EQ(from_files.ring_bytes, from_rows.ring_bytes);
    EXPECT_EQ(from_files.stream_slots_bytes, from_rows.stream_slots_bytes);
    EXPECT_EQ(from_files.reason, from_rows.reason);
  }
  const auto plan_in = [&](std::size_t budget) {
    return resident::plan<HostSpace, float, std::int32_t>(HostSpace::with_budget(budget), options,
                                                          x.path, y.path);
  };
  // Both sides of the verdict: the rows fit a MiB, not 6000 bytes.
  EXPECT_EQ(plan_in(1 << 20).recommendation, resident::Recommendation::preload);
  EXPECT_NE(plan_in(6000).recommendation, resident::Recommendation::preload)
      << plan_in(6000).reason;
  EXPECT_THROW((void)(resident::plan<HostSpace, std::int32_t, std::int32_t>(HostSpace{}, options,
                                                                            x.path, y.path)),
               FormatError);
}

/// 4096 floats, 0 to 4095: an upload of four 4 KiB chunks.
std::vector<float> four_chunks() {
  std::vector<float> values(4096);
  std::iota(values.begin(), values.end(), 0.0f);
  return values;
}

DatasetOptions in_chunks_of_4_kib() {
  DatasetOptions options;
  options.batch_size = 64;
  options.reserve_bytes = 0;
  options.upload_block_bytes = 4096;
  return options;
}

// load_dataset checks the files after each report, but the reports are still the caller's:
// one per chunk, and returning false cancels the upload.
TEST(LoadDataset, TheCallersProgressCallbackIsCalledAndCanCancel) {
  const TempNpy file("load_progress", four_chunks(), {4096});
  const HostSpace space = HostSpace::with_budget(1 << 20);
  DatasetOptions options = in_chunks_of_4_kib();
  std::vector<std::size_t> reported;
  options.on_progress = [&reported](const Progress& progress) {
    reported.push_back(progress.bytes_done);
    return true;
  };
  const auto ds = resident::load_dataset<HostSpace, float>(space, options, file.path);
  EXPECT_EQ(reported, (std::vector<std::size_t>{4096, 8192, 12288, 16384}));
  EXPECT_EQ(ds.field<0>().data()[4095], 4095.0f);

  options.on_progress = [](const Progress& progress) { return progress.bytes_done < 8192; };
  try {
    (void)resident::load_dataset<HostSpace, float>(space, options, file.path);
    FAIL() << "the upload was not cancelled";
  } catch (const resident::Cancelled& cancelled) {
    EXPECT_EQ(cancelled.bytes_done(), 8192u);
  }
  EXPECT_EQ(space.used_bytes(), ds.bytes()) << "the cancelled upload kept nothing";
}

// A file saved over (npy::save renames a new file into place) while its mapping is uploaded is
// refused after the chunk that found it, with nothing of the dataset kept.
TEST(LoadDataset, AFileReplacedDuringTheUploadIsRefusedAndNothingKept) {
  const TempNpy file("load_replaced", four_chunks(), {4096});
  const std::vector<float> other(4096, -1.0f);
  const HostSpace space = HostSpace::with_budget(1 << 20);
  DatasetOptions options = in_chunks_of_4_kib();
  std::size_t reports = 0;
  options.on_progress = [&](const Progress& /*progress*/) {
    if (++reports == 1) npy::save(file.path, other.data(), Shape{4096});
    return true;
  };
  try {
    (void)resident::load_dataset<HostSpace, float>(space, options, file.path);
    FAIL() << "a file replaced mid-upload was uploaded";
  } catch (const FormatError& error) {
    EXPECT_EQ(error.path(), file.path);
    EXPECT_NE(error.reason().find("changed while it was uploaded: it was removed or replaced"),
              std::string::npos)
        << error.what();
  }
  EXPECT_EQ(reports, 1u) << "refused at the first chunk that followed the change";
  EXPECT_EQ(space.used_bytes(), 0u);
}

/// Row r of x holds 3 floats from 3r, row r of y holds r % 251.
struct Rows {
  explicit Rows(std::size_t n) : x(n * 3), y(n) {
    std::iota(x.begin(), x.end(), 0.0f);
    for (std::size_t r = 0; r < n; ++r) y[r] = static_cast<std::uint8_t>(r % 251);
  }
  std::vector<float> x;
  std::vector<std::uint8_t> y;
};

/// A scratch archive of `rows`' x and y, removed at the end of the test.
struct TempNpz {
  TempNpz(const std::string& name, const Rows& rows, npz::Compression compression)
      : path(::testing::TempDir() + name + "_" + std::to_string(::getpid()) + ".npz") {
    npz::save(path,
              {npz::Entry("x", npy::DType::f4, rows.x.data(), Shape{rows.y.size(), 3}),
               npz::Entry("y", npy::DType::u1, rows.y.data(), Shape{rows.y.size()})},
              compression);
  }
  ~TempNpz() { std::remove(path.c_str()); }
  TempNpz(const TempNpz&) = delete;
  TempNpz& operator=(const TempNpz&) = delete;
  std::string path;
};

// Chunks of 2 batches in 3 slots, 1 loading ahead, in `order`.
DatasetOptions in_chunks(StreamOrder order, std::size_t batch, resident::Remainder remainder) {
  DatasetOptions options;
  options.batch_size = batch;
  options.remainder = remainder;
  options.reserve_bytes = 0;
  options.streaming.chunk_batches = 2;
  options.streaming.chunk_slots = 3;
  options.streaming.prefetch_chunks = 1;
  options.streaming.order = order;
  return options;
}

DatasetOptions streamed_in_chunks(StreamOrder order) {
  return in_chunks(order, 16, resident::Remainder::partial);
}

/// Expects the batches of `streamed` and `preloaded` to be equal, byte for byte, under `shuffle`.
template <class Streamed, class Preloaded>
void expect_same_batches(Streamed& streamed, Preloaded& preloaded, Shuffle shuffle) {
  ASSERT_EQ(streamed.num_batches(), preloaded.num_batches());
  auto streamed_epoch = streamed.epoch({7, 3, shuffle});
  auto preloaded_epoch = preloaded.epoch({7, 3, shuffle});
  for (std::size_t k = 0; k < streamed.num_batches(); ++k) {
    const auto [x, y] = streamed_epoch.batch(k);
    const auto [expected_x, expected_y] = preloaded_epoch.batch(k);
    ASSERT_EQ(y.rows(), expected_y.rows()) << k;
    ASSERT_EQ(y.valid_rows(), expected_y.valid_rows()) << k;
    ASSERT_TRUE(std::equal(x.data(), x.data() + x.size(), expected_x.data())) << k;
    ASSERT_TRUE(std::equal(y.data(), y.data() + y.size(), expected_y.data())) << k;
  }
}

// A deflated member is inflated once into host memory and streamed from there: the batches are
// those of the dataset load_dataset preloads from it.
TEST(LoadStreamingDataset, DeflatedMembersStreamTheBatchesLoadDatasetServes) {
  const Rows rows(301);
  const TempNpz archive("stream_deflated", rows, npz::Compression::deflated);
  const HostAvailable plenty("1000000000");  // whatever the machine has free
  for (const StreamOrder order : {StreamOrder::automatic, StreamOrder::whole_epoch}) {
    const DatasetOptions options = streamed_in_chunks(order);
    auto preloaded = resident::load_dataset<HostSpace, float, std::uint8_t>(
        HostSpace{}, options, archive.path, {"x", "y"});
    auto streamed = resident::load_streaming_dataset<HostSpace, float, std::uint8_t>(
        HostSpace::with_budget(1 << 20), options, archive.path, {"x", "y"});
    for (const Shuffle shuffle : {Shuffle::none, Shuffle::batches}) {
      SCOPED_TRACE(std::string(resident::stream_order_name(order)) + ", " +
                   (shuffle == Shuffle::none ? "Shuffle::none" : "Shuffle::batches"));
      expect_same_batches(streamed, preloaded, shuffle);
    }
  }
}

// Deflated members that would not fit in the host's available memory are refused, saying how
// much they need and what to do; nothing of the space is taken.
TEST(LoadStreamingDataset, DeflatedMembersOverTheHostsMemoryAreRefusedNamingTheFix) {
  const Rows rows(301);
  const TempNpz archive("stream_deflated_big", rows, npz::Compression::deflated);
  const HostAvailable tiny("1000");  // the rows take 301 * 13 bytes
  const HostSpace space = HostSpace::with_budget(1 << 20);
  for (const StreamOrder order : {StreamOrder::automatic, StreamOrder::whole_epoch}) {
    try {
      (void)resident::load_streaming_dataset<HostSpace, float, std::uint8_t>(
          space, streamed_in_chunks(order), archive.path, {"x", "y"});
      FAIL() << "inflated members over the host's available memory";
    } catch (const FormatError& error) {
      EXPECT_EQ(error.path(), archive.path);
      for (const char* part :
           {"member 'x.npy': it is deflated", "would need 3913 bytes", "1000 bytes",
            "are available", "free host memory", "numpy.savez", "load_dataset"})
        EXPECT_NE(error.reason().find(part), std::string::npos) << part << ": " << error.what();
    }
  }
  EXPECT_EQ(space.used_bytes(), 0u);
}

// Window order reads chunks straight from the archive, which a deflate stream cannot give.
// Deflated members are inflated in the background, from when the dataset is made, and stream
// in window order too: the batches are those of the stored archive's window-order stream.
TEST(LoadStreamingDataset, DeflatedMembersStreamInWindowOrderToo) {
  const Rows rows(40);
  const TempNpz deflated("stream_deflated_window", rows, npz::Compression::deflated);
  const TempNpz stored("stream_stored_window", rows, npz::Compression::stored);
  auto inflated = resident::load_streaming_dataset<HostSpace, float, std::uint8_t>(
      HostSpace{}, streamed_in_chunks(StreamOrder::window), deflated.path, {"x", "y"});
  auto from_file = resident::load_streaming_dataset<HostSpace, float, std::uint8_t>(
      HostSpace{}, streamed_in_chunks(StreamOrder::window), stored.path, {"x", "y"});
  EXPECT_EQ(inflated.order(), StreamOrder::window);
  EXPECT_EQ(inflated.host_bytes(), 40u * 13);
  for (const Shuffle shuffle : {Shuffle::none, Shuffle::batches, Shuffle::samples})
    expect_same_batches(inflated, from_file, shuffle);
}

// The inflating reports each step to DatasetOptions::on_progress (one call at a time, on an
// inflating thread), which can stop it as it stops an upload: a batch whose rows were not
// inflated then throws Cancelled, and the rows inflated before serve as ever.
TEST(LoadStreamingDataset, InflatingInTheBackgroundReportsProgressAndCanBeCancelled) {
  constexpr std::size_t rows = std::size_t{12} << 20;  // 12 MiB of bytes: three steps
  std::vector<std::uint8_t> values(rows);
  for (std::size_t r = 0; r < rows; ++r) values[r] = static_cast<std::uint8_t>(r % 251);
  const std::string path =
      ::testing::TempDir() + "stream_deflated_progress_" + std::to_string(::getpid()) + ".npz";
  npz::save(path, {npz::Entry("y", npy::DType::u1, values.data(), Shape{rows})},
            npz::Compression::deflated);
  for (const bool cancel : {false, true}) {
    SCOPED_TRACE(cancel ? "cancelled after the first step" : "to the end");
    std::mutex mutex;
    std::vector<resident::Progress> reports;
    DatasetOptions options = in_chunks(StreamOrder::window, 4096, resident::Remainder::partial);
    options.on_progress = [&](const resident::Progress& progress) {
      const std::lock_guard<std::mutex> lock(mutex);
      reports.push_back(progress);
      return !cancel;
    };
    {
      auto ds = resident::load_streaming_dataset<HostSpace, std::uint8_t>(HostSpace{}, options,
                                                                          path, {"y"});
      const auto [first] = ds.batch(0);  // rows of the first step
      EXPECT_EQ(first.data()[300], 300 % 251);
      if (cancel) {
        EXPECT_THROW((void)ds.batch(ds.num_batches() - 1), resident::Cancelled);
      } else {
        const auto [last] = ds.batch(ds.num_batches() - 1);
        EXPECT_EQ(last.data()[last.rows() - 1], (rows - 1) % 251);
      }
    }  // the inflating thread is done: every report is in
    const std::lock_guard<std::mutex> lock(mutex);
    if (cancel) {
      ASSERT_EQ(reports.size(), 1u);
      EXPECT_EQ(reports[0].bytes_done, std::size_t{4} << 20);
      EXPECT_EQ(reports[0].bytes_total, rows);
      continue;
    }
    ASSERT_EQ(reports.size(), 3u);
    for (std::size_t k = 0; k < reports.size(); ++k) {
      EXPECT_EQ(reports[k].bytes_total, rows);
      EXPECT_EQ(reports[k].bytes_done, (k + 1) * (std::size_t{4} << 20));
    }
  }
  std::remove(path.c_str());
}

/// Reads batches of `ds` from the second on and expects a FormatError whose reason says `what`.
template <class Dataset>
void expect_error_while_streaming(Dataset& ds, const std::string& what) {
  try {
    for (std::size_t k = 1; k < ds.num_batches(); ++k) (void)ds.batch(k);
  } catch (const FormatError& error) {
    EXPECT_NE(error.reason().find(what), std::string::npos) << error.what();
    return;
  }
  ADD_FAILURE() << "streaming on must throw a FormatError saying '" << what << "'";
}

/// Expects every batch of `ds` under Shuffle::none to hold rows 0, 1, 2, ... of `ids` (4000 of
/// them, batches of 100).
template <class Dataset>
void expect_all_ids(Dataset& ds) {
  std::int64_t next = 0;
  for (auto [batch] : ds.epoch()) {
    for (std::size_t r = 0; r < batch.rows(); ++r) ASSERT_EQ(batch.data()[r], next++);
  }
  EXPECT_EQ(next, 4000);
}

DatasetOptions ids_in_chunks(StreamOrder order) {
  return in_chunks(order, 100, resident::Remainder::drop);
}

// In whole-epoch order a file's rows are read in place from its mapping, every epoch; in window
// order every chunk is read from the file. Either way a file removed, replaced, truncated or
// modified while it is streamed is refused at the next batch that reads it, never served: the
// truncation included, whose mapped pages past the new end would fault (SIGBUS).
TEST(LoadStreamingDataset, AFileThatChangesWhileStreamedIsRefusedInEveryOrder) {
  std::vector<std::int64_t> values(4000);
  std::iota(values.begin(), values.end(), std::int64_t{0});
  const HostAvailable plenty("1000000000");
  struct Change {
    const char* name;
    void (*apply)(const std::string& path);
    const char* reason;
  };
  const Change changes[] = {
      {"removed", [](const std::string& path) { ASSERT_EQ(std::remove(path.c_str()), 0); },
       "it was removed or replaced"},
      {"truncated",
       [](const std::string& path) { ASSERT_EQ(::truncate(path.c_str(), 128 + 1000 * 8), 0); },
       "size changed from 32128 to 8128"},
      {"replaced",
       [](const std::string& path) {
         const std::vector<std::int64_t> other(4000, -1);
         resident::npy::save(
             path, resident::HostTensor<const std::int64_t>(other.data(), resident::Shape{4000}));
       },
       "it was removed or replaced"},
      {"modified",
       [](const std::string& path) {
         const std::int64_t minus_one = -1;
         const int fd = ::open(path.c_str(), O_WRONLY);
         ASSERT_GE(fd, 0);
         for (std::size_t row = 0; row < 4000; ++row)
           ASSERT_EQ(::pwrite(fd, &minus_one, 8, static_cast<::off_t>(128 + row * 8)), 8);
         const ::timespec later[2] = {{0, UTIME_OMIT}, {::time(nullptr) + 10, 0}};
         ASSERT_EQ(::futimens(fd, later), 0);  // a later time than the file's, whatever the clock
         ::close(fd);
       },
       "it was modified since it was opened"},
  };
  for (const StreamOrder order : {StreamOrder::whole_epoch, StreamOrder::window}) {
    for (const resident::Shuffle shuffle : {resident::Shuffle::none, resident::Shuffle::samples}) {
      for (const Change& change : changes) {
        SCOPED_TRACE(std::string(resident::stream_order_name(order)) + ", " + change.name +
                     (shuffle == resident::Shuffle::none ? ", in order" : ", shuffled"));
        const TempNpy ids("stream_changed", values, {4000});
        auto ds = resident::load_streaming_dataset<HostSpace, std::int64_t>(
            HostSpace::with_budget(1 << 20), ids_in_chunks(order), ids.path);
        EXPECT_EQ(ds.order(), order);
        EXPECT_EQ(ds.mapped_bytes(), order == StreamOrder::whole_epoch ? 32000u : 0u);
        EXPECT_EQ(ds.host_bytes(), 0u);
        resident::EpochOptions options;
        options.shuffle = shuffle;
        auto epoch = ds.epoch(options);
        auto [first] = epoch.batch(0);
        EXPECT_EQ(first.rows(), 100u);
        change.apply(ids.path);
        try {
          for (std::size_t k = 1; k < epoch.size(); ++k) {
            auto [batch] = epoch.batch(k);
            // Rows served before the refusal are the file's as it was.
            for (std::size_t r = 0; r < batch.rows(); ++r) ASSERT_GE(batch.data()[r], 0);
          }
          ADD_FAILURE() << "a changed file streamed on";
        } catch (const FormatError& error) {
          EXPECT_NE(error.reason().find(change.reason), std::string::npos) << error.what();
        }
      }
    }
  }
}

// A file refused once stays refused, in either order, even when it is put back as it was (its
// size and modification time too): what was read meanwhile cannot be trusted.
TEST(LoadStreamingDataset, AFileRefusedOnceStaysRefusedWhenItIsPutBack) {
  std::vector<std::int64_t> values(4000);
  std::iota(values.begin(), values.end(), std::int64_t{0});
  for (const StreamOrder order : {StreamOrder::whole_epoch, StreamOrder::window}) {
    SCOPED_TRACE(resident::stream_order_name(order));
    const TempNpy ids("stream_put_back", values, {4000});
    struct ::stat before {};
    ASSERT_EQ(::stat(ids.path.c_str(), &before), 0);
    auto ds = resident::load_streaming_dataset<HostSpace, std::int64_t>(
        HostSpace::with_budget(1 << 20), ids_in_chunks(order), ids.path);
    const int fd = ::open(ids.path.c_str(), O_WRONLY);
    ASSERT_GE(fd, 0);
    const ::timespec later[2] = {{0, UTIME_OMIT}, {::time(nullptr) + 10, 0}};
    ASSERT_EQ(::futimens(fd, later), 0);
    expect_error_while_streaming(ds, "it was modified since it was opened");
    const ::timespec back[2] = {{0, UTIME_OMIT}, before.st_mtim};
    ASSERT_EQ(::futimens(fd, back), 0);
    ::close(fd);
    expect_error_while_streaming(ds, "it was modified since it was opened");
  }
}

// The inflating's progress callback may throw: the inflating stops, and the batches that wait
// for rows it did not inflate throw the callback's exception.
TEST(LoadStreamingDataset, AProgressCallbackThatThrowsStopsTheInflating) {
  constexpr std::size_t rows = std::size_t{12} << 20;  // three steps
  std::vector<std::uint8_t> values(rows, 3);
  const std::string path =
      ::testing::TempDir() + "stream_deflated_throws_" + std::to_string(::getpid()) + ".npz";
  npz::save(path, {npz::Entry("y", npy::DType::u1, values.data(), Shape{rows})},
            npz::Compression::deflated);
  DatasetOptions options = in_chunks(StreamOrder::window, 4096, resident::Remainder::partial);
  std::atomic<int> calls{0};
  options.on_progress = [&calls](const resident::Progress&) -> bool {
    ++calls;
    throw std::runtime_error("stop here");
  };
  {
    auto ds = resident::load_streaming_dataset<HostSpace, std::uint8_t>(HostSpace{}, options, path,
                                                                        {"y"});
    EXPECT_EQ(std::get<0>(ds.batch(0)).data()[0], 3u);  // the first step's rows
    try {
      (void)ds.batch(ds.num_batches() - 1);
      ADD_FAILURE() << "rows the inflating never reached were served";
    } catch (const std::runtime_error& error) {
      EXPECT_STREQ(error.what(), "stop here");
    }
  }
  EXPECT_EQ(calls.load(), 1);
  std::remove(path.c_str());
}

// Automatic order reads a file's rows in place from its mapping where they fit in half of the
// host's available memory (the page cache holds them for every epoch), and from the file chunk
// by chunk where they do not.
TEST(LoadStreamingDataset, AutomaticOrderMapsFilesWhereHalfTheHostsMemoryHoldsThem) {
  std::vector<std::int64_t> values(4000);
  std::iota(values.begin(), values.end(), std::int64_t{0});
  for (const char* available : {"64000", "63999"}) {  // the rows take 32000 bytes
    const HostAvailable host(available);
    const TempNpy ids("stream_automatic", values, {4000});
    auto ds = resident::load_streaming_dataset<HostSpace, std::int64_t>(
        HostSpace{}, ids_in_chunks(StreamOrder::automatic), ids.path);
    const bool mapped = std::string(available) == "64000";
    EXPECT_EQ(ds.order(), mapped ? StreamOrder::whole_epoch : StreamOrder::window);
    EXPECT_EQ(ds.mapped_bytes(), mapped ? 32000u : 0u);
    EXPECT_EQ(ds.host_bytes(), 0u);
    expect_all_ids(ds);
    expect_all_ids(ds);
  }
}

// Whole-epoch rows read from a file's mapping take no host memory of the dataset's own: a file
// larger than the host's available memory is streamed in that order when it is asked for (its
// pages come and go in the page cache).
TEST(LoadStreamingDataset, WholeEpochRowsFromAFileNeedNoHostMemoryOfTheirOwn) {
  std::vector<std::int64_t> values(4000);
  std::iota(values.begin(), values.end(), std::int64_t{0});
  const TempNpy ids("stream_whole_epoch_big", values, {4000});
  const HostAvailable tiny("31999");
  const HostSpace space = HostSpace::with_budget(1 << 20);
  auto ds = resident::load_streaming_dataset<HostSpace, std::int64_t>(
      space, ids_in_chunks(StreamOrder::whole_epoch), ids.path);
  EXPECT_EQ(ds.mapped_bytes(), 32000u);
  EXPECT_EQ(ds.host_bytes(), 0u);
  expect_all_ids(ds);
  const auto plan = resident::plan<HostSpace, std::int64_t>(
      space, ids_in_chunks(StreamOrder::whole_epoch), ids.path);
  EXPECT_EQ(plan.stream_mapped_bytes, 32000u);
  EXPECT_EQ(plan.stream_owned_bytes, 0u);
  std::ostringstream printed;
  printed << plan;
  EXPECT_NE(printed.str().find("host rows: 31.2 KiB mapped from the files (page cache: shared, "
                               "reclaimable), 0 B in host memory the dataset owns"),
            std::string::npos)
      << printed.str();
}

/// The sources `load_streaming_dataset` would stream `archive`'s x and y from.
std::array<RowSource, 2> sources_of(const npz::Archive& archive, const DatasetOptions& options) {
  std::array<resident::detail::FieldRows, 2> fields;
  for (std::size_t field = 0; field < 2; ++field) {
    const npz::Member& member = archive.member(field == 0 ? "x" : "y");
    fields[field].file = archive.impl_file();
    fields[field].image_offset = member.offset;
    fields[field].header = member.header;
    fields[field].member = member.name;
    if (member.compressed) fields[field].deflated = archive.impl_entry(member.name);
  }
  const auto layout = resident::detail::make_layout<2>(
      options, {fields[0].header.shape, fields[1].header.shape}, {sizeof(float), 1});
  return resident::detail::sources_of(fields, layout, options.streaming.order,
                                      options.streaming.read_ahead);
}

// The sources own the rows they hold in host memory, and a rank of a partitioned job holds (or
// reads from a mapping) only its part of them: the rows before and after it are never written,
// and take no memory.
TEST(LoadStreamingDataset, SourcesOwnTheRowsTheyHoldAndARankOnlyItsPart) {
  const Rows rows(301);
  const HostAvailable plenty("1000000000");
  for (const auto compression : {npz::Compression::stored, npz::Compression::deflated}) {
    const TempNpz file("stream_sources", rows, compression);
    const npz::Archive archive(file.path);
    // Stored members are read in place from the archive's mapping where their data is aligned
    // for its type (else read once); deflated ones are inflated into memory the sources own.
    const bool stored = compression == npz::Compression::stored;
    const auto held = [stored](const RowSource& source) {
      if (!stored) {
        EXPECT_EQ(source.mapped_bytes(), 0u);
      }
      EXPECT_EQ(source.mapped_bytes() != 0 && source.owned_bytes() != 0, false);
      return source.mapped_bytes() + source.owned_bytes();
    };
    DatasetOptions options = streamed_in_chunks(StreamOrder::whole_epoch);
    const auto whole = sources_of(archive, options);
    EXPECT_EQ(held(whole[0]) + held(whole[1]), 301u * 13);
    options.shard = {1, 2, 0};  // rows [151, 301)
    const auto part = sources_of(archive, options);
    EXPECT_EQ(held(part[0]), 150u * 12);
    EXPECT_EQ(held(part[1]), 150u);
    ASSERT_NE(part[1].memory(), nullptr);
    part[1].await_all();  // a deflated member inflates in the background
    for (std::size_t r = 151; r < 301; ++r) ASSERT_EQ(part[1].memory()[r], std::byte(r % 251));
    std::vector<float> x(3);
    part[0].read(300, 1, reinterpret_cast<std::byte*>(x.data()));
    EXPECT_EQ(x, (std::vector<float>{900, 901, 902}));

    options.streaming.order = StreamOrder::window;
    if (compression == npz::Compression::stored) {
      const auto from_file = sources_of(archive, options);
      EXPECT_EQ(from_file[0].memory(), nullptr);
      EXPECT_EQ(from_file[0].owned_bytes() + from_file[1].owned_bytes(), 0u);
    }
  }
}

}  // namespace
