// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <memory>
#include <string>
#include <utility>

#include "resident/detail/checked_math.hpp"
#include "resident/error.hpp"

namespace resident::detail {

/// @brief Where a streaming dataset reads one field's rows from, every epoch: host memory the
/// caller keeps alive, or a file read with `pread` (not mapped: a mapped file that shrinks
/// kills the process with SIGBUS, a read that comes up short is an error we can throw).
class RowSource {
 public:
  RowSource() = default;

  /// Rows of `row_bytes` bytes at `data`, which must outlive every reader of this source.
  static RowSource memory(const void* data, std::size_t rows, std::size_t row_bytes) {
    RowSource source;
    source.memory_ = static_cast<const std::byte*>(data);
    source.rows_ = rows;
    source.row_bytes_ = row_bytes;
    return source;
  }

  /// Rows of `row_bytes` bytes from byte `data_offset` of the file at `path`, held open.
  /// @throws FormatError when the file cannot be opened.
  static RowSource file(const std::string& path, std::size_t data_offset, std::size_t rows,
                        std::size_t row_bytes) {
    RowSource source;
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
      throw FormatError(path, 0, std::string("cannot open the file: ") + std::strerror(errno));
    source.file_ = std::make_shared<OpenFile>(fd, path);
    source.data_offset_ = data_offset;
    source.rows_ = rows;
    source.row_bytes_ = row_bytes;
    return source;
  }

  [[nodiscard]] std::size_t rows() const noexcept { return rows_; }
  [[nodiscard]] std::size_t row_bytes() const noexcept { return row_bytes_; }
  /// The source's first byte when it is host memory, else null.
  [[nodiscard]] const std::byte* memory() const noexcept { return memory_; }

  /// @brief Copies rows `[first, first + count)` into host memory at `into`.
  /// @throws FormatError when the file was removed, is shorter than its rows need (truncated
  /// while streaming), or cannot be read.
  void read(std::size_t first, std::size_t count, std::byte* into) const {
    const std::size_t bytes = count * row_bytes_;
    if (bytes == 0) return;
    if (memory_ != nullptr) {
      std::memcpy(into, memory_ + first * row_bytes_, bytes);
      return;
    }
    const std::size_t offset = data_offset_ + first * row_bytes_;
    check_file(offset + bytes);
    for (std::size_t done = 0; done < bytes;) {
      const ::ssize_t got =
          ::pread(file_->fd, into + done, bytes - done, static_cast<::off_t>(offset + done));
      if (got < 0 && errno == EINTR) continue;
      if (got < 0)
        throw FormatError(file_->path, offset + done,
                          std::string("reading while streaming failed: ") + std::strerror(errno));
      if (got == 0) throw truncated(offset + done, offset + bytes);
      done += static_cast<std::size_t>(got);
    }
  }

 private:
  struct OpenFile {
    OpenFile(int descriptor, std::string file_path) : fd(descriptor), path(std::move(file_path)) {}
    int fd;
    std::string path;
    OpenFile(const OpenFile&) = delete;
    OpenFile& operator=(const OpenFile&) = delete;
    ~OpenFile() { ::close(fd); }
  };

  // A removed file stays readable through its descriptor; its link count says it is gone, and
  // streaming on from a file nobody can see again is refused rather than silently kept up.
  void check_file(std::size_t needed_end) const {
    struct ::stat status {};
    if (::fstat(file_->fd, &status) != 0)
      throw FormatError(file_->path, 0,
                        std::string("cannot stat while streaming: ") + std::strerror(errno));
    if (status.st_nlink == 0)
      throw FormatError(file_->path, 0,
                        "the file was removed while streaming; keep a streamed file in place "
                        "until the dataset is destroyed");
    if (static_cast<std::size_t>(status.st_size) < needed_end)
      throw truncated(static_cast<std::size_t>(status.st_size), needed_end);
  }

  [[nodiscard]] FormatError truncated(std::size_t size, std::size_t needed_end) const {
    return FormatError(file_->path, size,
                       "the file ended early: it was truncated while streaming (the rows read "
                       "need " +
                           std::to_string(needed_end) +
                           " bytes); keep a streamed file unchanged until the dataset is "
                           "destroyed");
  }

  const std::byte* memory_ = nullptr;
  std::shared_ptr<OpenFile> file_;
  std::size_t data_offset_ = 0;
  std::size_t rows_ = 0;
  std::size_t row_bytes_ = 0;
};

/// @brief A run of rows of one source, copied to byte `offset` of a chunk slot.
struct ChunkCopy {
  std::size_t offset = 0;             ///< Byte offset in the slot.
  const RowSource* source = nullptr;  ///< Whose rows.
  std::size_t first_row = 0;          ///< First row of the run.
  std::size_t rows = 0;               ///< Rows of the run.

  [[nodiscard]] std::size_t bytes() const noexcept { return rows * source->row_bytes(); }
};

}  // namespace resident::detail
