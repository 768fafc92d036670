// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <memory>
#include <string>
#include <utility>

#include "resident/detail/io/file_io.hpp"
#include "resident/error.hpp"

namespace resident::detail {

/// @brief Where a streaming dataset reads one field's rows from, every epoch: host memory the
/// caller keeps alive, host memory the source owns (rows read or inflated once, shared by the
/// source's copies), or a file read with `pread` (not mapped: a mapped file that shrinks kills
/// the process with SIGBUS, a read that comes up short is an error we can throw), each read
/// checked against the file's identity when it was opened.
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

  /// @brief Rows of `row_bytes` bytes at `data.get()`, host memory the source owns: its copies
  /// share it, and the last one to go releases it.
  /// @param held_bytes bytes of host memory the rows take: `rows * row_bytes`, or less where
  /// only some rows were written (anonymous pages never written take no memory)
  static RowSource owned_memory(std::shared_ptr<const std::byte> data, std::size_t rows,
                                std::size_t row_bytes, std::size_t held_bytes) {
    RowSource source = memory(data.get(), rows, row_bytes);
    source.owner_ = std::move(data);
    source.owned_bytes_ = held_bytes;
    return source;
  }

  /// Rows of `row_bytes` bytes from byte `data_offset` of `file`, held open: the file whose
  /// header was read and checked (for as many rows), so that no other file can come between.
  static RowSource file(std::shared_ptr<const ReadFile> file, std::size_t data_offset,
                        std::size_t rows, std::size_t row_bytes) {
    RowSource source;
    source.file_ = std::move(file);
    source.data_offset_ = data_offset;
    source.rows_ = rows;
    source.row_bytes_ = row_bytes;
    return source;
  }

  [[nodiscard]] std::size_t rows() const noexcept { return rows_; }
  [[nodiscard]] std::size_t row_bytes() const noexcept { return row_bytes_; }
  /// The source's first byte when it is host memory (borrowed or owned), else null.
  [[nodiscard]] const std::byte* memory() const noexcept { return memory_; }
  /// Bytes of host memory this source owns (shared with its copies); 0 for memory the caller
  /// keeps alive and for files.
  [[nodiscard]] std::size_t owned_bytes() const noexcept { return owned_bytes_; }

  /// @brief Tells the kernel that rows `[first, first + count)` of a file will be read soon,
  /// so that its readahead fetches them while earlier rows are copied (a hint: nothing for
  /// memory, and nothing where the kernel ignores it).
  void advise_will_read(std::size_t first, std::size_t count) const noexcept {
    if (memory_ != nullptr || count == 0) return;
    (void)::posix_fadvise(file_->fd(), static_cast<::off_t>(data_offset_ + first * row_bytes_),
                          static_cast<::off_t>(count * row_bytes_), POSIX_FADV_WILLNEED);
  }

  /// @brief Copies rows `[first, first + count)` into host memory at `into`.
  /// @throws FormatError when the file changed since it was opened (removed or replaced,
  /// truncated or extended, modified), or cannot be read.
  void read(std::size_t first, std::size_t count, std::byte* into) const {
    const std::size_t bytes = count * row_bytes_;
    if (bytes == 0) return;
    if (memory_ != nullptr) {
      std::memcpy(into, memory_ + first * row_bytes_, bytes);
      return;
    }
    const std::size_t offset = data_offset_ + first * row_bytes_;
    std::size_t done = 0;
    while (done < bytes) {
      const ::ssize_t got =
          ::pread(file_->fd(), into + done, bytes - done, static_cast<::off_t>(offset + done));
      if (got < 0 && errno == EINTR) continue;
      if (got < 0)
        throw FormatError(file_->path(), offset + done,
                          std::string("reading while streaming failed: ") + std::strerror(errno));
      if (got == 0) break;  // cut short under the read: the check below says how
      done += static_cast<std::size_t>(got);
    }
    // Checked after the read, so that rows read while the file changed are never served.
    file_->check_unchanged("while streaming",
                           "keep a streamed file unchanged until the dataset is destroyed (a "
                           "new dataset reads it as it is now)");
    if (done < bytes)
      throw FormatError(file_->path(), offset + done,
                        "the file ended early though its size is as it was; keep a streamed file "
                        "unchanged until the dataset is destroyed");
  }

 private:
  const std::byte* memory_ = nullptr;
  std::shared_ptr<const std::byte> owner_;  // keeps `memory_` alive when the source owns it
  std::size_t owned_bytes_ = 0;
  std::shared_ptr<const ReadFile> file_;
  std::size_t data_offset_ = 0;
  std::size_t rows_ = 0;
  std::size_t row_bytes_ = 0;
};

}  // namespace resident::detail
