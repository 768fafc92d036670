// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// load_dataset: from .npy files to a DeviceDataset in one call, the files checked against the
// field types and each other first, and against what they were after every upload chunk.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <numeric>
#include <string>
#include <vector>

#include "resident/host_space.hpp"
#include "resident/load_dataset.hpp"
#include "resident/npy.hpp"
#include "support/temp_npy.hpp"

namespace {

namespace npy = resident::npy;
using resident::DatasetOptions;
using resident::FormatError;
using resident::HostSpace;
using resident::Progress;
using resident::Shape;
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
  options.chunk_bytes = 4096;
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

}  // namespace
