// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// load_dataset: from .npy files to a DeviceDataset in one call, the files checked against the
// field types and each other first, and against what they were after every upload chunk.
// load_streaming_dataset: where the streamed rows come from (files, or host memory the sources
// own: deflated members inflated once, files read once), by StreamOptions::order.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <numeric>
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
TEST(LoadStreamingDataset, DeflatedMembersAreRefusedInWindowOrder) {
  const Rows rows(40);
  const TempNpz archive("stream_deflated_window", rows, npz::Compression::deflated);
  try {
    (void)resident::load_streaming_dataset<HostSpace, float, std::uint8_t>(
        HostSpace{}, streamed_in_chunks(StreamOrder::window), archive.path, {"x", "y"});
    FAIL() << "a deflated member streamed in window order";
  } catch (const FormatError& error) {
    EXPECT_NE(error.reason().find("member 'x.npy': it is deflated"), std::string::npos);
    EXPECT_NE(error.reason().find("StreamOptions::order is window"), std::string::npos)
        << error.what();
    EXPECT_NE(error.reason().find("whole_epoch"), std::string::npos) << error.what();
  }
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

// In whole-epoch order a file's rows are read once, when the dataset is made: what happens to
// the file afterwards changes nothing. In window order every chunk is read from the file, and
// a file changed meanwhile is refused as before.
TEST(LoadStreamingDataset, WholeEpochRowsAreReadOnceAndWindowRowsEveryPass) {
  std::vector<std::int64_t> values(4000);
  std::iota(values.begin(), values.end(), std::int64_t{0});
  const HostAvailable plenty("1000000000");
  for (const bool remove : {false, true}) {
    const TempNpy ids("stream_read_once", values, {4000});
    auto ds = resident::load_streaming_dataset<HostSpace, std::int64_t>(
        HostSpace::with_budget(1 << 20), ids_in_chunks(StreamOrder::whole_epoch), ids.path);
    if (remove)
      ASSERT_EQ(std::remove(ids.path.c_str()), 0);
    else
      ASSERT_EQ(::truncate(ids.path.c_str(), 128 + 1000 * 8), 0);
    expect_all_ids(ds);
    expect_all_ids(ds);
  }
  const TempNpy ids("stream_window", values, {4000});
  auto ds = resident::load_streaming_dataset<HostSpace, std::int64_t>(
      HostSpace{}, ids_in_chunks(StreamOrder::window), ids.path);
  (void)ds.batch(0);
  ASSERT_EQ(::truncate(ids.path.c_str(), 128 + 1000 * 8), 0);
  expect_error_while_streaming(ds, "size changed from 32128 to 8128");
}

// Automatic order reads a file's rows once where they fit in half of the host's available
// memory, and streams them from the file chunk by chunk where they do not.
TEST(LoadStreamingDataset, AutomaticOrderReadsFilesOnceWhereHalfTheHostsMemoryHoldsThem) {
  std::vector<std::int64_t> values(4000);
  std::iota(values.begin(), values.end(), std::int64_t{0});
  for (const char* available : {"64000", "63999"}) {  // the rows take 32000 bytes
    const HostAvailable host(available);
    const TempNpy ids("stream_automatic", values, {4000});
    auto ds = resident::load_streaming_dataset<HostSpace, std::int64_t>(
        HostSpace{}, ids_in_chunks(StreamOrder::automatic), ids.path);
    (void)ds.batch(0);
    ASSERT_EQ(std::remove(ids.path.c_str()), 0);
    if (std::string(available) == "64000")
      expect_all_ids(ds);
    else
      expect_error_while_streaming(ds, "it was removed or replaced");
  }
}

// Whole-epoch order needs the rows in host memory: where they do not fit, the dataset is
// refused as any allocation that does not fit is, naming the option that streams them instead.
TEST(LoadStreamingDataset, WholeEpochRowsOverTheHostsMemoryAreACapacityError) {
  std::vector<std::int64_t> values(4000);
  const TempNpy ids("stream_whole_epoch_big", values, {4000});
  const HostAvailable tiny("31999");
  const HostSpace space = HostSpace::with_budget(1 << 20);
  try {
    (void)resident::load_streaming_dataset<HostSpace, std::int64_t>(
        space, ids_in_chunks(StreamOrder::whole_epoch), ids.path);
    FAIL() << "whole-epoch rows over the host's memory";
  } catch (const CapacityError& error) {
    EXPECT_EQ(error.needed_bytes(), 32000u);
    EXPECT_EQ(error.free_bytes(), 31999u);
    EXPECT_NE(std::string(error.what()).find("StreamOptions::order to window"), std::string::npos)
        << error.what();
  }
  EXPECT_EQ(space.used_bytes(), 0u);
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
  return resident::detail::sources_of(fields, layout, options.streaming.order);
}

// The sources own the rows they hold in host memory, and a rank of a partitioned job holds only
// its part of them (the rows before and after it are never written, and take no memory).
TEST(LoadStreamingDataset, SourcesOwnTheRowsTheyHoldAndARankOnlyItsPart) {
  const Rows rows(301);
  const HostAvailable plenty("1000000000");
  for (const auto compression : {npz::Compression::stored, npz::Compression::deflated}) {
    const TempNpz file("stream_sources", rows, compression);
    const npz::Archive archive(file.path);
    DatasetOptions options = streamed_in_chunks(StreamOrder::whole_epoch);
    const auto whole = sources_of(archive, options);
    EXPECT_EQ(whole[0].owned_bytes() + whole[1].owned_bytes(), 301u * 13);
    options.shard = {1, 2, 0};  // rows [151, 301)
    const auto part = sources_of(archive, options);
    EXPECT_EQ(part[0].owned_bytes(), 150u * 12);
    EXPECT_EQ(part[1].owned_bytes(), 150u);
    ASSERT_NE(part[1].memory(), nullptr);
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
