// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0

// A file's mapping read in place (detail/io/file_mapping.hpp) and the faults of a file cut
// under it (detail/io/bus_faults.hpp): a read past the new end gets zeros and the check after
// it refuses the file; a fault outside every registered mapping still ends the process.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstddef>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "resident/detail/io/bus_faults.hpp"
#include "resident/detail/io/file_mapping.hpp"
#include "resident/detail/stream/row_source.hpp"
#include "resident/error.hpp"

namespace {

using resident::detail::BusFaultRegistration;
using resident::detail::FileMapping;
using resident::detail::ReadFile;

const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));

/// A scratch file of `bytes` bytes, byte i being `i % 251`, removed at the end.
struct Scratch {
  Scratch(const std::string& name, std::size_t bytes)
      : path(::testing::TempDir() + "resident_mapping_" + std::to_string(::getpid()) + "_" + name) {
    std::vector<unsigned char> data(bytes);
    for (std::size_t i = 0; i < bytes; ++i) data[i] = static_cast<unsigned char>(i % 251);
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    EXPECT_GE(fd, 0);
    EXPECT_EQ(::write(fd, data.data(), bytes), static_cast<::ssize_t>(bytes));
    ::close(fd);
  }
  ~Scratch() { std::remove(path.c_str()); }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  std::string path;
};

std::shared_ptr<const ReadFile> open(const Scratch& file) {
  return std::make_shared<const ReadFile>(file.path, "scratch file");
}

TEST(FileMapping, MapsTheRangeFromAnyOffset) {
  const Scratch file("offsets", 5 * page + 17);
  for (const std::size_t offset : {std::size_t{0}, std::size_t{1}, page - 1, page, 3 * page + 5}) {
    const std::size_t bytes = 5 * page + 17 - offset;
    const auto mapping = FileMapping::map(open(file), offset, bytes, 0, 0);
    ASSERT_NE(mapping, nullptr);
    EXPECT_EQ(mapping->bytes(), bytes);
    EXPECT_FALSE(mapping->reading_ahead());
    EXPECT_EQ(mapping->read_ahead_bytes(), 0u);
    for (std::size_t i = 0; i < bytes; i += 97)
      ASSERT_EQ(static_cast<unsigned char>(mapping->data()[i]), (offset + i) % 251) << i;
  }
}

TEST(FileMapping, ReadsItsRangeAheadAndStops) {
  const std::size_t bytes = 3 * resident::detail::read_ahead_step + 5;
  const Scratch file("ahead", bytes);
  for (const std::size_t first : {std::size_t{0}, page + 3}) {
    const auto mapping = FileMapping::map(open(file), 0, bytes, first, bytes - first);
    ASSERT_NE(mapping, nullptr);
    while (mapping->reading_ahead()) std::this_thread::yield();
    EXPECT_EQ(mapping->read_ahead_bytes(), bytes - first);
  }
  // A file cut short stops the reader where its reads come up short.
  const auto cut = FileMapping::map(open(file), 0, bytes, 0, bytes);
  ASSERT_NE(cut, nullptr);
  ASSERT_EQ(::truncate(file.path.c_str(), static_cast<::off_t>(page)), 0);
  while (cut->reading_ahead()) std::this_thread::yield();
  EXPECT_LE(cut->read_ahead_bytes(), bytes);
}

TEST(FileMapping, GoesWhileItsReaderIsStillReading) {
  const Scratch file("sparse", 0);
  ASSERT_EQ(::truncate(file.path.c_str(), static_cast<::off_t>(std::size_t{1} << 30)), 0);
  for (int i = 0; i < 8; ++i) {
    const auto mapping =
        FileMapping::map(open(file), 0, std::size_t{1} << 30, 0, std::size_t{1} << 30);
    ASSERT_NE(mapping, nullptr);
  }  // each destructor stops and joins its reader
}

// A read past the end of a file cut under its mapping gets zeros, on any thread, and the
// source's check refuses what was read.
TEST(BusFaults, AReadPastACutFileGetsZerosAndTheCheckRefusesIt) {
  const Scratch file("cut", 4 * page);
  const auto mapping = FileMapping::map(open(file), 0, 4 * page, 0, 0);
  ASSERT_NE(mapping, nullptr);
  const auto source = resident::detail::RowSource::mapped(mapping, 0, 4, page, 4 * page);
  std::vector<std::byte> row(page);
  source.read(3, 1, row.data());
  EXPECT_EQ(static_cast<unsigned char>(row[0]), (3 * page) % 251);
  ASSERT_EQ(::truncate(file.path.c_str(), static_cast<::off_t>(page)), 0);
  const std::size_t absorbed = resident::detail::bus_fault_ranges.absorbed.load();
  std::thread reader([&] { EXPECT_THROW(source.read(2, 1, row.data()), resident::FormatError); });
  reader.join();
  EXPECT_EQ(row[0], std::byte{0});
  EXPECT_EQ(resident::detail::bus_fault_ranges.absorbed.load(), absorbed + 1);
  try {
    source.read(3, 1, row.data());
    ADD_FAILURE() << "a cut file was read on";
  } catch (const resident::FormatError& error) {
    EXPECT_NE(std::string(error.what())
                  .find("size changed from " + std::to_string(4 * page) + " to " +
                        std::to_string(page) + " bytes"),
              std::string::npos)
        << error.what();
  }
  // The rows before the cut are still the file's.
  EXPECT_EQ(static_cast<unsigned char>(mapping->data()[page - 1]), (page - 1) % 251);
}

// Once refused, a mapping stays refused: the zeros mapped over the pages past a cut stay, so a
// file put back as it was (its bytes and its modification time) must not be read on.
TEST(BusFaults, ARefusedMappingStaysRefusedWhenItsFileIsPutBack) {
  const Scratch file("put_back", 4 * page);
  const auto mapping = FileMapping::map(open(file), 0, 4 * page, 0, 0);
  ASSERT_NE(mapping, nullptr);
  const auto source = resident::detail::RowSource::mapped(mapping, 0, 4, page, 4 * page);
  struct ::stat before {};
  ASSERT_EQ(::stat(file.path.c_str(), &before), 0);
  ASSERT_EQ(::truncate(file.path.c_str(), static_cast<::off_t>(page)), 0);
  std::vector<std::byte> row(page);
  EXPECT_THROW(source.read(3, 1, row.data()), resident::FormatError);
  {  // Back as it was: the same bytes, size and modification time.
    const Scratch original("put_back_original", 4 * page);
    std::vector<char> bytes(4 * page);
    const int from = ::open(original.path.c_str(), O_RDONLY);
    ASSERT_EQ(::read(from, bytes.data(), bytes.size()), static_cast<::ssize_t>(bytes.size()));
    ::close(from);
    const int to = ::open(file.path.c_str(), O_WRONLY);
    ASSERT_EQ(::pwrite(to, bytes.data(), bytes.size(), 0), static_cast<::ssize_t>(bytes.size()));
    const ::timespec times[2] = {{0, UTIME_OMIT}, before.st_mtim};
    ASSERT_EQ(::futimens(to, times), 0);
    ::close(to);
  }
  EXPECT_NO_THROW(open(file)->check_unchanged("now", "nothing"));  // the metadata is as it was
  for (const std::size_t r : {std::size_t{0}, std::size_t{3}}) {
    try {
      source.read(r, 1, row.data());
      ADD_FAILURE() << "a refused mapping was read on, row " << r;
    } catch (const resident::FormatError& error) {
      EXPECT_NE(std::string(error.what()).find("size changed"), std::string::npos) << error.what();
    }
  }
}

// A thread that blocks every signal (as one that waits for them with sigwait does) still gets
// the refusal, not the kernel's kill: the reads let SIGBUS through while they run.
TEST(BusFaults, AThreadThatBlocksEverySignalStillGetsTheRefusal) {
  const Scratch file("blocked", 4 * page);
  const auto mapping = FileMapping::map(open(file), 0, 4 * page, 0, 0);
  ASSERT_NE(mapping, nullptr);
  const auto source = resident::detail::RowSource::mapped(mapping, 0, 4, page, 4 * page);
  ASSERT_EQ(::truncate(file.path.c_str(), static_cast<::off_t>(page)), 0);
  std::thread blocked([&] {
    ::sigset_t all;
    ::sigfillset(&all);
    ASSERT_EQ(::pthread_sigmask(SIG_BLOCK, &all, nullptr), 0);
    std::vector<std::byte> row(2 * page);
    const std::size_t rows[] = {2, 3};
    EXPECT_THROW(source.gather(rows, 2, row.data()), resident::FormatError);
    ::sigset_t now;
    ASSERT_EQ(::pthread_sigmask(SIG_BLOCK, nullptr, &now), 0);
    EXPECT_EQ(::sigismember(&now, SIGBUS), 1);  // the thread's mask is its own again
  });
  blocked.join();
}

// A fault in no registered mapping is not ours: it ends the process as it would have (or as
// the handler before ours says, a sanitizer's for one).
TEST(BusFaults, AFaultOutsideEveryRegisteredMappingStillEndsTheProcess) {
  const Scratch file("unregistered", 2 * page);
  const Scratch other("registered", page);
  const auto registered = FileMapping::map(open(other), 0, page, 0, 0);  // the handler is in
  ASSERT_NE(registered, nullptr);
  GTEST_FLAG_SET(death_test_style, "threadsafe");  // the readers' threads live on
  const auto ended = [](int status) {
    // Killed by the fault, or ended by a sanitizer's handler (an exit, or an abort).
    return WIFSIGNALED(status) ? WTERMSIG(status) == SIGBUS || WTERMSIG(status) == SIGABRT
                               : WIFEXITED(status) && WEXITSTATUS(status) != 0;
  };
  EXPECT_EXIT(
      {
        const ReadFile read(file.path, "scratch file");
        const auto range = resident::detail::MappedRange::of(read, 0, 2 * page);
        if (::truncate(file.path.c_str(), static_cast<::off_t>(page)) != 0) std::_Exit(0);
        const volatile std::byte past = range.data[page + 1];
        (void)past;
        std::_Exit(0);
      },
      ended, "");
}

// Places for registrations run out: the mapping that finds none is refused (the loaders then
// read the rows another way), and a place that is given back serves the next.
TEST(BusFaults, AMappingThatFindsNoPlaceIsRefused) {
  const Scratch file("places", page);
  std::vector<std::unique_ptr<BusFaultRegistration>> taken;
  std::vector<std::byte> anywhere(1);
  for (;;) {
    auto registration = std::make_unique<BusFaultRegistration>(anywhere.data(), 1);
    if (!registration->registered()) break;
    taken.push_back(std::move(registration));
    ASSERT_LE(taken.size(), resident::detail::bus_fault_places);
  }
  EXPECT_EQ(FileMapping::map(open(file), 0, page, 0, 0), nullptr);
  taken.pop_back();
  EXPECT_NE(FileMapping::map(open(file), 0, page, 0, 0), nullptr);
  EXPECT_FALSE(BusFaultRegistration(anywhere.data(), 0).registered());
}

}  // namespace
