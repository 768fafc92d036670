// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// @brief The one way resident opens data files to read and writes them: a reader refuses what
/// is not a regular file before anything can block on it and can tell whether the file changed
/// since it was opened; a writer replaces a file whole, never truncating it in place.

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "resident/error.hpp"

namespace resident::detail {

/// What a file that is not a regular one is, in words.
inline std::string file_kind(::mode_t mode) {
  if (S_ISFIFO(mode)) return "FIFO (named pipe)";
  if (S_ISSOCK(mode)) return "socket";
  if (S_ISCHR(mode)) return "character device";
  if (S_ISBLK(mode)) return "block device";
  if (S_ISDIR(mode)) return "directory";
  return "special file";
}

/// What the metadata says of a file's contents: which file it is, how long, when last written.
struct FileIdentity {
  ::dev_t device = 0;
  ::ino_t inode = 0;
  std::size_t size = 0;
  ::timespec mtime{};

  static FileIdentity of(const struct ::stat& status) {
#if defined(__APPLE__)
    const ::timespec mtime = status.st_mtimespec;
#else
    const ::timespec mtime = status.st_mtim;
#endif
    return {status.st_dev, status.st_ino, static_cast<std::size_t>(status.st_size), mtime};
  }
};

/// `seconds.nanoseconds`, as `stat` prints a modification time.
inline std::string format_time(const ::timespec& time) {
  char nanoseconds[16];
  std::snprintf(nanoseconds, sizeof nanoseconds, "%09ld", static_cast<long>(time.tv_nsec));
  return std::to_string(static_cast<long long>(time.tv_sec)) + "." + nanoseconds;
}

/// @brief A regular file open for reading, closed on destruction; refuses anything else with a
/// `FormatError` before it can block (a FIFO's open waits for a writer, a device never ends).
class ReadFile {
 public:
  /// Opens `path` (following symbolic links) and records the file's identity; `kind` names
  /// the file expected in messages (".npy file").
  /// @throws FormatError for an empty path, a file that cannot be opened, or one that is not a
  /// regular file.
  explicit ReadFile(std::string path, std::string kind = ".npy file")
      : path_(std::move(path)), kind_(std::move(kind)) {
    if (path_.empty())
      throw FormatError(path_, 0, "the path is empty; pass the path of a " + kind_);
    // stat before open: a device is refused without opening it (an open can have effects of its
    // own), and a socket, which open() refuses with ENXIO, is named for what it is.
    struct ::stat status {};
    if (::stat(path_.c_str(), &status) != 0) throw cannot_open(errno);
    refuse_unless_regular(status.st_mode);
    // O_NONBLOCK: should a FIFO take the file's place after the stat, open returns at once and
    // the fstat below refuses it.
    fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd_ < 0) throw cannot_open(errno);
    if (::fstat(fd_, &status) != 0) {
      const int error = errno;
      ::close(fd_);
      throw FormatError(path_, 0,
                        std::string("cannot stat the open file: ") + std::strerror(error));
    }
    if (!S_ISREG(status.st_mode)) {
      ::close(fd_);
      refuse_unless_regular(status.st_mode);
    }
    // Reads of a regular file never block anyway; clear the flag so that none can be short.
    (void)::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) & ~O_NONBLOCK);
    identity_ = FileIdentity::of(status);
  }
  ~ReadFile() { ::close(fd_); }
  ReadFile(const ReadFile&) = delete;
  ReadFile& operator=(const ReadFile&) = delete;

  [[nodiscard]] int fd() const noexcept { return fd_; }
  [[nodiscard]] const std::string& path() const noexcept { return path_; }
  /// The file as it was when opened.
  [[nodiscard]] const FileIdentity& identity() const noexcept { return identity_; }

  /// @brief Refuses a file that is no longer the one opened: what was read from it may mix old
  /// and new contents. A same-size rewrite within the file system's timestamp granularity is
  /// the one change the metadata cannot show. Once refused, refused for good: a file put back
  /// as it was (its size and modification time too) may have been read meanwhile, and a
  /// mapping of it holds zeros where it was cut (see `BusFaultRegistration`).
  /// @param during when the change was found ("while streaming")
  /// @param advice what to do about it
  /// @throws FormatError naming what changed: removed or replaced, size, modification time.
  void check_unchanged(const std::string& during, const std::string& advice) const {
    {
      const std::lock_guard<std::mutex> lock(refusal_mutex_);
      if (!refusal_.empty()) throw FormatError(path_, 0, refusal_);
    }
    try {
      check_identity(during, advice);
    } catch (const FormatError& error) {
      const std::lock_guard<std::mutex> lock(refusal_mutex_);
      refusal_ = error.reason();  // every later check throws it before it looks at the file
      throw;
    }
  }

 private:
  void check_identity(const std::string& during, const std::string& advice) const {
    struct ::stat status {};
    if (::fstat(fd_, &status) != 0)
      throw FormatError(path_, 0,
                        "cannot stat the open file " + during + ": " + std::strerror(errno));
    const FileIdentity now = FileIdentity::of(status);
    std::string change;
    // A file renamed over or removed keeps its data for the descriptor, but nobody can open it
    // again: its link count is 0.
    if (status.st_nlink == 0)
      change = "it was removed or replaced (inode " + std::to_string(now.inode) +
               ", opened at this path, has no name left)";
    else if (now.size != identity_.size)
      change = "its size changed from " + std::to_string(identity_.size) + " to " +
               std::to_string(now.size) + " bytes (it was " +
               (now.size < identity_.size ? "truncated" : "extended") + ")";
    else if (now.mtime.tv_sec != identity_.mtime.tv_sec ||
             now.mtime.tv_nsec != identity_.mtime.tv_nsec)
      change = "it was modified since it was opened (mtime " + format_time(identity_.mtime) +
               ", now " + format_time(now.mtime) + ")";
    else
      return;
    throw FormatError(path_, 0, "the file changed " + during + ": " + change + "; " + advice);
  }

  [[nodiscard]] FormatError cannot_open(int error) const {
    return FormatError(path_, 0,
                       std::string("cannot open the file: ") + std::strerror(error) +
                           "; pass the path of a readable " + kind_);
  }

  void refuse_unless_regular(::mode_t mode) const {
    if (S_ISREG(mode)) return;
    throw FormatError(path_, 0,
                      "the path is a " + file_kind(mode) + ", not a regular file: a regular " +
                          kind_ +
                          " was expected (a pipe, socket, device or directory cannot be read "
                          "by offset or mapped); write the data to a file and pass its path");
  }

  std::string path_;
  std::string kind_;  // of file expected, for messages
  int fd_ = -1;
  FileIdentity identity_;
  mutable std::mutex refusal_mutex_;
  mutable std::string refusal_;  // why the file was refused, once it was
};

/// @brief Reads exactly `bytes` bytes at `offset` of the open file `fd` (named `path` in errors)
/// into `into`, retrying short reads.
/// @throws FormatError when the file ends first or a read fails.
inline void read_exactly(const std::string& path, int fd, void* into, std::size_t bytes,
                         std::size_t offset) {
  std::size_t done = 0;
  while (done < bytes) {
    const ::ssize_t got = ::pread(fd, static_cast<char*>(into) + done, bytes - done,
                                  static_cast<::off_t>(offset + done));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0)
      throw FormatError(path, offset + done,
                        got < 0 ? "reading failed: " + std::string(std::strerror(errno))
                                : std::string("the file ended early"));
    done += static_cast<std::size_t>(got);
  }
}

/// @brief A read-only mapping of bytes `[offset, offset + bytes)` of an open file (the mapping
/// itself starts at the page below `offset`), or nothing when the system refused it; the
/// owner unmaps it when the last copy goes.
struct MappedRange {
  std::shared_ptr<const void> owner;  ///< Null when the range could not be mapped.
  const std::byte* data = nullptr;    ///< Byte `offset` of the file, in the mapping.

  static MappedRange of(const ReadFile& file, std::size_t offset, std::size_t bytes) {
    static const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    const std::size_t start = offset / page * page;
    const std::size_t length = offset - start + bytes;
    void* base =
        ::mmap(nullptr, length, PROT_READ, MAP_PRIVATE, file.fd(), static_cast<::off_t>(start));
    if (base == MAP_FAILED) return {};
    MappedRange range;
    range.owner = std::shared_ptr<const void>(
        base, [length](const void* mapped) { ::munmap(const_cast<void*>(mapped), length); });
    range.data = static_cast<const std::byte*>(base) + (offset - start);
    return range;
  }
};

/// Bytes to write: `size` bytes from `data`.
struct ByteSpan {
  const void* data = nullptr;
  std::size_t size = 0;
};

/// The start of the names of the temporaries `replace_file` makes for this process.
inline std::string temporary_prefix() { return ".resident-" + std::to_string(::getpid()) + "-"; }

/// @brief A file made in `folder` to be renamed over another, removed on destruction unless
/// `rename_over` moved it into place. In the target's folder because a rename never crosses
/// file systems; created exclusively (never someone else's file) with mode 0666, so that the
/// umask applies as it would to the file itself; with a short name of its own, not the
/// target's name with a suffix, so that a target whose name is near NAME_MAX stays writable.
class TemporaryFile {
 public:
  /// Creates the file; `fd()` is negative, with `errno` saying why, when that failed.
  explicit TemporaryFile(const std::string& folder) {
    static std::atomic<unsigned long> serial{0};
    for (;;) {
      std::string name = folder + temporary_prefix() + std::to_string(serial.fetch_add(1)) + ".tmp";
      fd_ = ::open(name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
      if (fd_ >= 0) {
        name_ = std::move(name);
        return;
      }
      if (errno != EEXIST) return;
    }
  }
  TemporaryFile(const TemporaryFile&) = delete;
  TemporaryFile& operator=(const TemporaryFile&) = delete;
  ~TemporaryFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!name_.empty()) ::unlink(name_.c_str());
  }

  [[nodiscard]] int fd() const noexcept { return fd_; }
  /// Closes the file; false, with `errno` set, when closing reported an error.
  [[nodiscard]] bool close() noexcept { return ::close(std::exchange(fd_, -1)) == 0; }
  /// Renames the (closed) file over `target`; false, with `errno` set, when that failed.
  [[nodiscard]] bool rename_over(const std::string& target) {
    if (::rename(name_.c_str(), target.c_str()) != 0) return false;
    name_.clear();
    return true;
  }

 private:
  std::string name_;
  int fd_ = -1;
};

/// @brief Makes `spans`, one after another, the whole content of the file at `path`: written
/// to a temporary file in the same folder, synced, then renamed over the path. Readers of the
/// old file (a mapping `npy::load` made, say) keep its data, and a crash mid-way leaves the old
/// file whole. A new file gets the usual mode (0666 less the umask), an existing one keeps its
/// mode; a symbolic link at the path is followed, and the file it names replaced.
/// @throws Error naming the path and the system's reason; the temporary is removed and the old
/// file, if any, is left as it was.
inline void replace_file(const std::string& path, const std::vector<ByteSpan>& spans) {
  const auto failed = [&](const std::string& what, int error) {
    return Error("resident: cannot write " + path + ": " + what + ": " + std::strerror(error) +
                 "; the file at the path, if any, was left as it was");
  };
  if (path.empty()) throw Error("resident: cannot write a file at an empty path; pass a path");
  std::string target = path;
  struct ::stat status {};
  if (::lstat(path.c_str(), &status) == 0 && S_ISLNK(status.st_mode)) {
    const std::unique_ptr<char, void (*)(void*)> real(::realpath(path.c_str(), nullptr),
                                                      &std::free);
    if (!real) throw failed("resolving the symbolic link", errno);
    target = real.get();
  }
  const bool exists = ::stat(target.c_str(), &status) == 0;
  if (exists && !S_ISREG(status.st_mode))
    throw Error("resident: cannot write " + path + ": it is a " + file_kind(status.st_mode) +
                ", not a regular file, and would be replaced or block; pass the path of a "
                "regular file to write or create");

  TemporaryFile temporary(target.substr(0, target.rfind('/') + 1));  // "" is the working folder
  if (temporary.fd() < 0) throw failed("creating a temporary file beside it", errno);
  if (exists && ::fchmod(temporary.fd(), status.st_mode & 07777) != 0)
    throw failed("keeping its mode", errno);
  for (const ByteSpan& span : spans) {
    for (std::size_t done = 0; done < span.size;) {
      const ::ssize_t wrote =
          ::write(temporary.fd(), static_cast<const char*>(span.data) + done, span.size - done);
      if (wrote < 0 && errno == EINTR) continue;
      if (wrote < 0) throw failed("writing", errno);
      done += static_cast<std::size_t>(wrote);
    }
  }
  if (::fsync(temporary.fd()) != 0) throw failed("syncing", errno);
  if (!temporary.close()) throw failed("closing", errno);
  if (!temporary.rename_over(target)) throw failed("renaming the temporary over it", errno);
}

}  // namespace resident::detail
