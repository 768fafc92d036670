// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "resident/detail/io/file_io.hpp"
#include "resident/error.hpp"

namespace resident::detail {

/// @brief `bytes` bytes from byte `offset` of `file`: one file's part of the bytes a row source
/// reads, which may run on from one file into the next (token shards).
struct FileSpan {
  std::shared_ptr<const ReadFile> file;
  std::size_t offset = 0;
  std::size_t bytes = 0;
};

/// @brief Where a streaming dataset reads one field's rows from, every epoch: host memory the
/// caller keeps alive, host memory the source owns (rows read or inflated once, shared by the
/// source's copies), or files read with `pread` (not mapped: a mapped file that shrinks kills
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
    return files({FileSpan{std::move(file), data_offset, rows * row_bytes}}, 0, rows, row_bytes);
  }

  /// Rows of `row_bytes` bytes from byte `first_byte` of the bytes of `spans` end to end, the
  /// files held open as `file` holds its one.
  static RowSource files(std::vector<FileSpan> spans, std::size_t first_byte, std::size_t rows,
                         std::size_t row_bytes) {
    RowSource source;
    source.spans_ = std::make_shared<const std::vector<FileSpan>>(std::move(spans));
    source.data_offset_ = first_byte;
    source.rows_ = rows;
    source.row_bytes_ = row_bytes;
    return source;
  }

  /// The same rows, read once while a dataset is made from them (a preload) rather than every
  /// epoch: what a changed file's refusal says.
  [[nodiscard]] RowSource read_once() const {
    RowSource source = *this;
    source.once_ = true;
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
    for_each_span(first, count, [](const FileSpan& span, std::size_t offset, std::size_t bytes) {
      (void)::posix_fadvise(span.file->fd(), static_cast<::off_t>(offset),
                            static_cast<::off_t>(bytes), POSIX_FADV_WILLNEED);
    });
  }

  /// @brief Copies rows `[first, first + count)` into host memory at `into`.
  /// @throws FormatError when a file changed since it was opened (removed or replaced,
  /// truncated or extended, modified), or cannot be read.
  void read(std::size_t first, std::size_t count, std::byte* into) const {
    const std::size_t bytes = count * row_bytes_;
    if (bytes == 0) return;
    if (memory_ != nullptr) {
      std::memcpy(into, memory_ + first * row_bytes_, bytes);
      return;
    }
    std::byte* to = into;  // each file's part after the one before
    for_each_span(first, count,
                  [this, &to](const FileSpan& span, std::size_t offset, std::size_t part) {
                    read_span(*span.file, offset, part, to);
                    to += part;
                  });
  }

 private:
  // Calls `part(span, offset, bytes)` for each file's part of rows `[first, first + count)`, in
  // order: `bytes` bytes from byte `offset` of `span.file`.
  template <class Part>
  void for_each_span(std::size_t first, std::size_t count, Part&& part) const {
    std::size_t at = data_offset_ + first * row_bytes_;  // in the spans end to end
    std::size_t left = count * row_bytes_;
    for (const FileSpan& span : *spans_) {
      if (left == 0) return;
      if (at >= span.bytes) {
        at -= span.bytes;
        continue;
      }
      const std::size_t bytes = std::min(left, span.bytes - at);
      part(span, span.offset + at, bytes);
      left -= bytes;
      at = 0;
    }
  }

  // `bytes` bytes from byte `offset` of `file`, checked after the read, so that bytes read
  // while the file changed are never served.
  void read_span(const ReadFile& file, std::size_t offset, std::size_t bytes,
                 std::byte* into) const {
    const std::string during = once_ ? "while the dataset was made from it" : "while streaming";
    const std::string advice = once_ ? "keep a file unchanged while a dataset is made from it"
                                     : "keep a streamed file unchanged until the dataset is "
                                       "destroyed (a new dataset reads it as it is now)";
    std::size_t done = 0;
    while (done < bytes) {
      const ::ssize_t got =
          ::pread(file.fd(), into + done, bytes - done, static_cast<::off_t>(offset + done));
      if (got < 0 && errno == EINTR) continue;
      if (got < 0)
        throw FormatError(file.path(), offset + done,
                          "reading " + during + " failed: " + std::strerror(errno));
      if (got == 0) break;  // cut short under the read: the check below says how
      done += static_cast<std::size_t>(got);
    }
    file.check_unchanged(during, advice);
    if (done < bytes)
      throw FormatError(file.path(), offset + done,
                        "the file ended early though its size is as it was; " + advice);
  }

  const std::byte* memory_ = nullptr;
  std::shared_ptr<const std::byte> owner_;  // keeps `memory_` alive when the source owns it
  std::size_t owned_bytes_ = 0;
  std::shared_ptr<const std::vector<FileSpan>> spans_;  // the files, when the rows are read there
  std::size_t data_offset_ = 0;                         // in the spans end to end
  std::size_t rows_ = 0;
  std::size_t row_bytes_ = 0;
  bool once_ = false;  // read while a dataset is made, not while it streams
};

}  // namespace resident::detail
