// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0

// Whole-epoch streams read files in place: a stream of a 4 GiB file (a sparse one: its pages
// cost nothing to make) starts without reading it, holds none of it in the process's memory
// before the first batch, and a batch maps the pages of its own rows only. The same for a
// stored member of a ZIP64 archive whose data runs past 4 GiB.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <pthread.h>
#include <unistd.h>

#include <csignal>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "resident/host_space.hpp"
#include "resident/load_dataset.hpp"
#include "resident/npy.hpp"
#include "support/zip_builder.hpp"

namespace {

using resident::DatasetOptions;
using resident::HostSpace;
using resident::StreamOrder;

constexpr std::size_t row_bytes = 4096;
constexpr std::size_t rows = (std::size_t{4} << 30) / row_bytes + 3;  // past 4 GiB
constexpr std::size_t batch_rows = 256;                               // 1 MiB batches

/// Kibibytes of the process's resident memory of one kind: "RssFile" (pages of files mapped
/// into it) or "RssAnon".
std::size_t resident_kib(const std::string& kind) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind(kind + ":", 0) != 0) continue;
    std::istringstream figures(line.substr(kind.size() + 1));
    std::size_t kib = 0;
    figures >> kib;
    return kib;
  }
  return 0;
}

/// A sparse file in the test's scratch folder, removed at the end.
struct SparseFile {
  explicit SparseFile(const std::string& name)
      : path(::testing::TempDir() + "resident_in_place_" + std::to_string(::getpid()) + "_" +
             name) {}
  ~SparseFile() { std::remove(path.c_str()); }
  SparseFile(const SparseFile&) = delete;
  SparseFile& operator=(const SparseFile&) = delete;
  std::string path;
};

/// The `.npy` header of `rows` rows of `row_bytes` bytes.
std::string npy_prefix() {
  return resident::npy::detail::prefix_bytes(resident::npy::DType::u1,
                                             resident::Shape{rows, row_bytes});
}

/// Writes a `.npy` file of `rows` rows of zeros, a hole after its header.
void write_sparse_npy(const std::string& path) {
  const std::string prefix = npy_prefix();
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::write(fd, prefix.data(), prefix.size()), static_cast<::ssize_t>(prefix.size()));
  ASSERT_EQ(::ftruncate(fd, static_cast<::off_t>(prefix.size() + rows * row_bytes)), 0);
  ASSERT_EQ(::close(fd), 0);
}

DatasetOptions in_place(bool read_ahead) {
  DatasetOptions options;
  options.batch_size = batch_rows;
  options.streaming.order = StreamOrder::whole_epoch;
  options.streaming.chunk_batches = 1;
  options.streaming.read_ahead = read_ahead;
  return options;
}

/// Makes the dataset with `make`, then reads only its last batch, in order and shuffled, and
/// checks what the process's memory holds at each step.
template <class Make>
void expect_read_in_place(Make&& make) {
  {  // Once first, so that the code's own pages (file pages too) are in before anything counts.
    auto ds = make(in_place(false));
    resident::EpochOptions shuffled;
    shuffled.shuffle = resident::Shuffle::samples;
    auto epoch = ds.epoch();
    (void)epoch.batch(epoch.size() - 1);
    auto gathered = ds.epoch(shuffled);
    (void)gathered.batch(0);
  }
  for (const bool read_ahead : {false, true}) {
    SCOPED_TRACE(read_ahead ? "read ahead" : "no read ahead");
    const std::size_t file_before = resident_kib("RssFile");
    const std::size_t anon_before = resident_kib("RssAnon");
    auto ds = make(in_place(read_ahead));
    EXPECT_EQ(ds.order(), StreamOrder::whole_epoch);
    EXPECT_EQ(ds.mapped_bytes(), rows * row_bytes);
    EXPECT_EQ(ds.host_bytes(), 0u);
    // Nothing of the file is in the process before the first batch (a read ahead goes to the
    // page cache), and what the dataset allocates is well under the 64 MiB it may.
    const std::size_t file_made = resident_kib("RssFile");
    EXPECT_LT(file_made - file_before + resident_kib("RssAnon") - anon_before, 64u << 10);
    EXPECT_LT(file_made - file_before, 1u << 10);

    auto epoch = ds.epoch();
    const std::size_t last = epoch.size() - 1;
    const auto [tail] = epoch.batch(last);
    EXPECT_EQ(tail.rows(), rows % batch_rows);
    for (std::size_t byte = 0; byte < tail.rows() * row_bytes; ++byte)
      ASSERT_EQ(tail.data()[byte], 0u);
    // The batch's pages, and at most a kernel's fault-around (64 KiB) on each side.
    const std::size_t file_read = resident_kib("RssFile");
    EXPECT_LE(file_read - file_made, tail.rows() * row_bytes / 1024 + 128);

    resident::EpochOptions shuffled;
    shuffled.seed = 7;
    shuffled.shuffle = resident::Shuffle::samples;
    auto gathered = ds.epoch(shuffled);
    const auto [rows_of_last] = gathered.batch(gathered.size() - 1);
    EXPECT_EQ(rows_of_last.rows(), rows % batch_rows);
    // One page per row of the batch, each with its fault-around.
    EXPECT_LE(resident_kib("RssFile") - file_read, rows_of_last.rows() * (64 + 4) + 128);
  }
}

TEST(StreamInPlace, AWholeEpochStreamOfA4GiBFileMapsOnlyTheRowsItReads) {
  const SparseFile file("x.npy");
  write_sparse_npy(file.path);
  expect_read_in_place([&](const DatasetOptions& options) {
    return resident::load_streaming_dataset<HostSpace, std::uint8_t>(
        HostSpace::with_budget(std::size_t{16} << 20), options, file.path);
  });
}

TEST(StreamInPlace, AStoredMemberPast4GiBOfAZip64ArchiveIsReadInPlaceToo) {
  const SparseFile file("x.npz");
  ASSERT_TRUE(resident::testing::write_sparse_member_archive(file.path, "x.npy", npy_prefix(),
                                                             rows * row_bytes));
  const resident::npz::Archive archive(file.path);
  ASSERT_GT(archive.member("x").offset + rows * row_bytes, std::size_t{4} << 30);
  expect_read_in_place([&](const DatasetOptions& options) {
    return resident::load_streaming_dataset<HostSpace, std::uint8_t>(
        HostSpace::with_budget(std::size_t{16} << 20), options, archive, {"x"});
  });
}

// A caller that blocks every signal before it makes the dataset (its threads inherit the mask)
// still gets a FormatError from the batches after its file is cut, in order and shuffled, not
// the kernel's kill.
TEST(StreamInPlace, ACallerThatBlocksEverySignalStillGetsTheRefusal) {
  std::thread caller([] {
    ::sigset_t all;
    ::sigfillset(&all);
    ASSERT_EQ(::pthread_sigmask(SIG_BLOCK, &all, nullptr), 0);
    for (const resident::Shuffle shuffle : {resident::Shuffle::none, resident::Shuffle::samples}) {
      const SparseFile file("blocked.npy");
      std::vector<std::uint8_t> rows_written(64 * row_bytes, 7);
      resident::npy::save(file.path, rows_written.data(), resident::Shape{64, row_bytes});
      DatasetOptions options = in_place(true);
      options.batch_size = 4;
      auto ds = resident::load_streaming_dataset<HostSpace, std::uint8_t>(
          HostSpace::with_budget(std::size_t{1} << 20), options, file.path);
      resident::EpochOptions epoch_options;
      epoch_options.shuffle = shuffle;
      auto epoch = ds.epoch(epoch_options);
      (void)epoch.batch(0);
      ASSERT_EQ(::truncate(file.path.c_str(), 4096), 0);
      EXPECT_THROW(
          {
            for (std::size_t k = 1; k < epoch.size(); ++k) (void)epoch.batch(k);
          },
          resident::FormatError);
    }
  });
  caller.join();
}

}  // namespace
