// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// Every loader given a path that is not a regular .npy file (a FIFO, a socket, a device, a
// directory, links to them, paths that cannot name a file), and writers that fail or write over
// the file they read: each is refused with a typed error, never a hang, a crash or a lost file.
// A FIFO blocks open() until a writer comes, so a loader that opens before it checks hangs here:
// ctest's timeout turns that into a failure of the one test.

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <numeric>
#include <string>
#include <vector>

#include "resident/resident.hpp"
#include "support/spaces.hpp"
#include "support/temp_npy.hpp"
#include "support/unprivileged.hpp"

namespace {

namespace npy = resident::npy;
using resident::DatasetOptions;
using resident::FormatError;
using resident::Shape;
using resident::testing::TempNpy;

/// A scratch path with the process id in its name, removed (file, link or empty folder) at the
/// end of the test.
struct ScratchPath {
  explicit ScratchPath(const std::string& name)
      : path(::testing::TempDir() + "resident_files_" + name + "_" + std::to_string(::getpid())) {
    std::remove(path.c_str());
  }
  ~ScratchPath() { std::remove(path.c_str()); }
  ScratchPath(const ScratchPath&) = delete;
  ScratchPath& operator=(const ScratchPath&) = delete;
  std::string path;
};

DatasetOptions small_batches() {
  DatasetOptions options;
  options.batch_size = 2;
  options.reserve_bytes = 0;
  return options;
}

/// Runs `load` and expects a FormatError naming `path` whose reason holds every one of `words`.
template <class Load>
void expect_refused(const char* loader, const std::string& path,
                    const std::vector<std::string>& words, Load load) {
  SCOPED_TRACE(loader);
  try {
    load();
    ADD_FAILURE() << loader << " accepted " << path;
  } catch (const FormatError& error) {
    EXPECT_EQ(error.path(), path);
    for (const std::string& word : words)
      EXPECT_NE(error.reason().find(word), std::string::npos)
          << "'" << word << "' is missing from: " << error.what();
  }
}

/// Every reader of .npy files refuses `path` with a FormatError that says each of `words`.
void expect_every_loader_refuses(const std::string& path, const std::vector<std::string>& words) {
  const auto space = resident::HostSpace::with_budget(1 << 20);
  expect_refused("npy::load", path, words, [&] { (void)npy::load(path); });
  expect_refused("npy::read_header", path, words, [&] { (void)npy::read_header(path); });
  expect_refused("load_dataset", path, words, [&] {
    (void)resident::load_dataset<resident::HostSpace, float>(space, small_batches(), path);
  });
  expect_refused("load_streaming_dataset", path, words, [&] {
    (void)resident::load_streaming_dataset<resident::HostSpace, float>(space, small_batches(),
                                                                       path);
  });
  expect_refused("make_dataset", path, words, [&] {
    (void)resident::make_dataset<resident::HostSpace, float>(space, small_batches(), path);
  });
  EXPECT_EQ(space.used_bytes(), 0u);
}

/// What a refusal of a file of the kind `kind` must say: the kind, and what was expected.
std::vector<std::string> not_regular(const std::string& kind) {
  return {"is a " + kind, "a regular .npy file was expected"};
}

TEST(NonRegularFiles, AFifoIsRefusedByEveryLoaderWithoutBlocking) {
  const ScratchPath fifo("fifo");
  ASSERT_EQ(::mkfifo(fifo.path.c_str(), 0600), 0) << std::strerror(errno);
  expect_every_loader_refuses(fifo.path, not_regular("FIFO"));
}

TEST(NonRegularFiles, ASymlinkToAFifoIsRefusedByEveryLoaderWithoutBlocking) {
  const ScratchPath fifo("link_target_fifo");
  const ScratchPath link("link_to_fifo");
  ASSERT_EQ(::mkfifo(fifo.path.c_str(), 0600), 0) << std::strerror(errno);
  ASSERT_EQ(::symlink(fifo.path.c_str(), link.path.c_str()), 0) << std::strerror(errno);
  expect_every_loader_refuses(link.path, not_regular("FIFO"));
}

TEST(NonRegularFiles, ASocketIsRefusedByEveryLoader) {
  const ScratchPath socket_path("socket");
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0) << std::strerror(errno);
  ::sockaddr_un address{};
  address.sun_family = AF_UNIX;
  ASSERT_LT(socket_path.path.size(), sizeof(address.sun_path)) << "the temp folder's path is long";
  std::strcpy(address.sun_path, socket_path.path.c_str());  // NOLINT: length checked above
  ASSERT_EQ(::bind(fd, reinterpret_cast<const ::sockaddr*>(&address), sizeof(address)), 0)
      << std::strerror(errno);
  expect_every_loader_refuses(socket_path.path, not_regular("socket"));
  ::close(fd);
}

TEST(NonRegularFiles, CharacterDevicesAreRefusedByEveryLoader) {
  expect_every_loader_refuses("/dev/zero", not_regular("character device"));
  expect_every_loader_refuses("/dev/null", not_regular("character device"));
}

TEST(NonRegularFiles, ADirectoryIsRefusedByEveryLoader) {
  const ScratchPath folder("folder");
  ASSERT_EQ(::mkdir(folder.path.c_str(), 0700), 0) << std::strerror(errno);
  expect_every_loader_refuses(folder.path, not_regular("directory"));
}

TEST(NonRegularFiles, PathsThatNameNoFileAreRefusedByEveryLoader) {
  expect_every_loader_refuses("", {"the path is empty", "pass the path of a .npy file"});

  const std::vector<float> values(4, 1.0f);
  const TempNpy file("trailing_slash", values, {2, 2});
  expect_every_loader_refuses(file.path + "/", {"cannot open", "Not a directory"});

  const ScratchPath loop("loop");
  ASSERT_EQ(::symlink(loop.path.c_str(), loop.path.c_str()), 0) << std::strerror(errno);
  expect_every_loader_refuses(loop.path, {"cannot open", "symbolic links"});
}

// Root reads files whatever their permissions: as root, the loaders run as `nobody`.
TEST(NonRegularFiles, AFileWithoutReadPermissionIsRefusedByEveryLoader) {
  const std::vector<float> values(4, 1.0f);
  const TempNpy file("unreadable", values, {2, 2});
  ASSERT_EQ(::chmod(file.path.c_str(), 0200), 0) << std::strerror(errno);
  resident::testing::as_unprivileged([&] {
    expect_every_loader_refuses(file.path, {"cannot open", "Permission denied"});
  });
}

// /proc files are regular but report size 0 whatever they hold: refused as empty, not read.
TEST(NonRegularFiles, AProcFileIsRefusedByEveryLoader) {
  expect_every_loader_refuses("/proc/self/status", {"the file is empty"});
}

// A header may claim any shape; what the file holds is checked against it before anything is
// allocated for it.
TEST(NonRegularFiles, AHeaderClaimingMoreThanTheFileHoldsIsRefusedByEveryLoader) {
  const std::vector<float> values(6, 1.0f);
  const TempNpy file("claims_more", values, {3, 2});
  const std::string huge = file.path + ".huge";
  const std::string more = file.path + ".more";
  for (const auto& [path, shape] : {std::pair{huge, std::string("(1099511627776, 2)")},
                                    std::pair{more, std::string("(4, 2)")}}) {
    SCOPED_TRACE(shape);
    std::ifstream in(file.path, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::string old_shape = "(3, 2)";
    const std::size_t at = bytes.find(old_shape);
    ASSERT_NE(at, std::string::npos);
    bytes.replace(at, old_shape.size(), shape);
    bytes.erase(127, shape.size() - old_shape.size());  // padding: the header keeps its length
    resident::testing::write_file(path, bytes);
    expect_every_loader_refuses(path, {"the data is shorter than the shape requires"});
    std::remove(path.c_str());
  }
}

// npy::load maps the file; saving over it must not truncate what the mapping shows (SIGBUS),
// and the path must end with the new data, whole.
TEST(SaveOverALoadedFile, KeepsTheLoadedArrayAndWritesTheNewOne) {
  std::vector<float> values(4096);
  std::iota(values.begin(), values.end(), 0.0f);
  const TempNpy file("save_over_loaded", values, {4096});
  const npy::Array loaded = npy::load(file.path);
  ASSERT_TRUE(loaded.mapped());
  npy::save(file.path, loaded.as<float>());  // the same data, read from the mapping
  const npy::Array again = npy::load(file.path);
  ASSERT_EQ(again.shape(), Shape{4096});
  EXPECT_EQ(std::memcmp(again.data(), values.data(), again.bytes()), 0);

  std::vector<float> other(2048, -1.0f);
  npy::save(file.path, other.data(), Shape{2048});
  EXPECT_EQ(loaded.as<float>().data()[4095], 4095.0f);  // the old mapping still reads old data
  EXPECT_EQ(npy::load(file.path).shape(), Shape{2048});
}

// A save that fails after it began writing (here: over the process's file size limit) throws,
// removes its temporary and leaves the old file as it was.
TEST(FailedSave, MidWayLeavesTheOldFileAndNoTemporary) {
  const std::vector<float> old_values(16, 7.0f);
  const TempNpy file("failed_mid_way", old_values, {16});
  std::signal(SIGXFSZ, SIG_IGN);  // a write past the limit then fails with EFBIG
  ::rlimit saved{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &saved), 0);
  ::rlimit limited = saved;
  limited.rlim_cur = ::rlim_t{64} * 1024;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &limited), 0) << std::strerror(errno);
  const std::vector<float> big(1 << 20, 1.0f);  // 4 MiB, over the limit
  try {
    npy::save(file.path, big.data(), Shape{big.size()});
    ADD_FAILURE() << "a save over the file size limit succeeded";
  } catch (const resident::Error& error) {
    EXPECT_NE(std::string(error.what()).find(file.path), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find(std::strerror(EFBIG)), std::string::npos)
        << error.what();
  }
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &saved), 0);
  const npy::Array kept = npy::load(file.path);
  ASSERT_EQ(kept.shape(), Shape{16});
  EXPECT_EQ(kept.as<float>().data()[15], 7.0f);
  EXPECT_EQ(resident::testing::temporaries_left(::testing::TempDir()), std::vector<std::string>{});
}

// Writing to something that is not a regular file would block (a FIFO) or replace what is
// there (a directory, a device): refused, and left as it was.
TEST(FailedSave, ANonRegularTargetIsRefusedAndLeftAsItWas) {
  const ScratchPath fifo("save_fifo");
  ASSERT_EQ(::mkfifo(fifo.path.c_str(), 0600), 0) << std::strerror(errno);
  const std::vector<float> values(4, 1.0f);
  for (const std::string& path : {fifo.path, std::string("/dev/null")}) {
    SCOPED_TRACE(path);
    struct ::stat before {};
    ASSERT_EQ(::stat(path.c_str(), &before), 0);
    try {
      npy::save(path, values.data(), Shape{4});
      ADD_FAILURE() << "saved to " << path;
    } catch (const resident::Error& error) {
      EXPECT_NE(std::string(error.what()).find("not a regular file"), std::string::npos)
          << error.what();
    }
    struct ::stat after {};
    ASSERT_EQ(::stat(path.c_str(), &after), 0);
    EXPECT_EQ(after.st_ino, before.st_ino);
    EXPECT_EQ(after.st_mode, before.st_mode);
  }
}

}  // namespace
