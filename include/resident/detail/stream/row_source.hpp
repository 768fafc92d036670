// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "resident/detail/io/background_fill.hpp"
#include "resident/detail/io/bus_faults.hpp"
#include "resident/detail/io/file_io.hpp"
#include "resident/detail/io/file_mapping.hpp"
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
/// caller keeps alive, host memory the source owns (rows inflated or read once, shared by the
/// source's copies), a file's mapping read in place (whole-epoch order: rows in any order, from
/// the page cache), or files read with `pread` a chunk at a time (window order). Every read of a
/// file, mapped or not, is checked against the file's identity when it was opened.
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

  /// @brief `owned_memory`'s rows, filled by `filling` in the background: a read waits for
  /// the rows it reads.
  static RowSource filled_memory(std::shared_ptr<const std::byte> data,
                                 std::shared_ptr<const BackgroundFill> filling, std::size_t rows,
                                 std::size_t row_bytes, std::size_t held_bytes) {
    RowSource source = owned_memory(std::move(data), rows, row_bytes, held_bytes);
    source.filling_ = std::move(filling);
    return source;
  }

  /// @brief Rows of `row_bytes` bytes from byte `first_byte` of `mapping`, read in place; the
  /// source holds the mapping (and its file open). `mapped_bytes`: the bytes of them a rank
  /// reads (what its page cache holds for it).
  static RowSource mapped(std::shared_ptr<const FileMapping> mapping, std::size_t first_byte,
                          std::size_t rows, std::size_t row_bytes, std::size_t mapped_bytes) {
    RowSource source = memory(mapping->data() + first_byte, rows, row_bytes);
    source.mapping_ = std::move(mapping);
    source.mapped_bytes_ = mapped_bytes;
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

  /// @brief Rows `rows[i]` of `base` as row `i`, for each `i` (a subset of a streamed
  /// dataset): the same bytes or files, shared with `base`'s copies. A selection of a
  /// selection selects from the first one's base.
  static RowSource selected(const RowSource& base,
                            const std::shared_ptr<const std::vector<std::size_t>>& rows) {
    RowSource source;
    source.rows_ = rows->size();
    source.row_bytes_ = base.row_bytes_;
    source.owned_bytes_ = base.owned_bytes_;
    source.mapped_bytes_ = base.mapped_bytes_;
    if (base.base_ == nullptr) {
      source.base_ = std::make_shared<const RowSource>(base);
      source.selection_ = rows;
      return source;
    }
    auto through = std::make_shared<std::vector<std::size_t>>(rows->size());
    for (std::size_t row = 0; row < rows->size(); ++row)
      (*through)[row] = (*base.selection_)[(*rows)[row]];
    source.base_ = base.base_;
    source.selection_ = std::move(through);
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
  /// The source's first byte when it is host memory (borrowed, owned or mapped), else null
  /// (also for a selection of such rows, which do not lie one after another).
  [[nodiscard]] const std::byte* memory() const noexcept { return memory_; }
  /// Whether the rows are in host memory: `memory()`'s, or the rows a selection takes of them.
  [[nodiscard]] bool in_memory() const noexcept {
    return memory_ != nullptr || (base_ != nullptr && base_->memory_ != nullptr);
  }
  /// Whether the source selects rows of another (see `selected`).
  [[nodiscard]] bool selects() const noexcept { return base_ != nullptr; }
  /// The host memory the rows lie in, read in place: `memory()`, or for a selection its
  /// base's (row `i` then lies at base row `selected_rows()[i]`); null where they are not in
  /// memory.
  [[nodiscard]] const std::byte* rows_memory() const noexcept {
    return base_ != nullptr ? base_->memory_ : memory_;
  }
  /// A selection's base row of each of its rows, or null for a source that selects none.
  [[nodiscard]] const std::size_t* selected_rows() const noexcept {
    return base_ != nullptr ? selection_->data() : nullptr;
  }
  /// Bytes of host memory this source owns (shared with its copies); 0 for memory the caller
  /// keeps alive and for files.
  [[nodiscard]] std::size_t owned_bytes() const noexcept { return owned_bytes_; }

  /// Bytes of a file's mapping this source reads in place; 0 for memory and for files read.
  [[nodiscard]] std::size_t mapped_bytes() const noexcept { return mapped_bytes_; }
  /// The mapping the source reads (a selection, its base's), or null.
  [[nodiscard]] const FileMapping* mapping() const noexcept {
    return base_ != nullptr ? base_->mapping_.get() : mapping_.get();
  }

  /// @brief Waits until rows `[0, end_row)` are in memory (those this source fills in the
  /// background; nothing for other sources).
  /// @throws what the filling threw; Cancelled when its progress callback stopped it first.
  void await_rows(std::size_t end_row) const {
    if (filling_) filling_->wait_until(end_row * row_bytes_);
  }
  /// @brief Waits until every row is in memory and the filling's last checks are done.
  /// @throws as `await_rows`.
  void await_all() const {
    if (base_) return base_->await_all();
    if (filling_) filling_->wait_all();
  }

  /// @brief Refuses a mapped source whose file changed since it was opened: what was read from
  /// the mapping may mix old and new bytes (or zeros where the file was cut: see
  /// `BusFaultRegistration`). Call it after reading the mapping directly, before what was read
  /// is served; nothing for other sources (`read` checks files itself).
  /// @throws FormatError naming the change.
  void check_mapping() const {
    if (base_) return base_->check_mapping();
    if (mapping_) mapping_->file().check_unchanged("while streaming", changed_file_advice(false));
  }

  /// @brief Tells the kernel that rows `[first, first + count)` of a file (or a file's
  /// mapping) will be read soon, so that its readahead fetches them while earlier rows are
  /// copied (a hint: nothing for memory, and nothing where the kernel ignores it).
  void advise_will_read(std::size_t first, std::size_t count) const noexcept {
    if (count == 0) return;
    if (base_) {  // each run of consecutive rows of the base
      const std::size_t* base_rows = selection_->data() + first;
      for_each_run(base_rows, count, [this, base_rows](std::size_t at, std::size_t run) {
        base_->advise_will_read(base_rows[at], run);
      });
      return;
    }
    if (mapping_) {
      static const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
      const auto begin = reinterpret_cast<std::uintptr_t>(memory_ + first * row_bytes_);  // NOLINT
      const std::uintptr_t start = begin / page * page;
      (void)::madvise(reinterpret_cast<void*>(start),  // NOLINT: the rows' first page
                      begin + count * row_bytes_ - start, MADV_WILLNEED);
      return;
    }
    if (memory_ != nullptr) return;
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
    if (base_) return base_->gather(selection_->data() + first, count, into);
    if (memory_ != nullptr) {
      await_rows(first + count);
      const BusFaultsDelivered faults;  // a mapped file cut meanwhile: zeros, then the check
      std::memcpy(into, memory_ + first * row_bytes_, bytes);
      check_mapping();
      return;
    }
    std::byte* to = into;  // each file's part after the one before
    for_each_span(first, count,
                  [this, &to](const FileSpan& span, std::size_t offset, std::size_t part) {
                    read_span(*span.file, offset, part, to);
                    to += part;
                  });
  }

  /// @brief Copies rows `rows[i]` for `i < count`, one after another, into host memory at
  /// `into` (a mapping is checked once, after the last).
  /// @throws what `read` throws.
  void gather(const std::size_t* rows, std::size_t count, std::byte* into) const {
    if (base_) {  // the base's rows, a block at a time on the stack: no allocation per piece
      std::array<std::size_t, 256> base_rows;
      for (std::size_t done = 0; done < count; done += base_rows.size()) {
        const std::size_t block = std::min(base_rows.size(), count - done);
        for (std::size_t r = 0; r < block; ++r) base_rows[r] = (*selection_)[rows[done + r]];
        base_->gather(base_rows.data(), block, into + done * row_bytes_);
      }
      return;
    }
    if (memory_ == nullptr) {  // a read for each run of consecutive rows
      for_each_run(rows, count, [this, rows, into](std::size_t at, std::size_t run) {
        read(rows[at], run, into + at * row_bytes_);
      });
      return;
    }
    if (filling_ && count != 0) await_rows(*std::max_element(rows, rows + count) + 1);
    const BusFaultsDelivered faults;
    for (std::size_t r = 0; r < count; ++r)
      std::memcpy(into + r * row_bytes_, memory_ + rows[r] * row_bytes_, row_bytes_);
    check_mapping();
  }

 private:
  // Calls `run(at, rows)` for each run of `rows` rows from `list[at]` on that `list` holds
  // one after another (`list[at + i] == list[at] + i`), in order.
  template <class Run>
  static void for_each_run(const std::size_t* list, std::size_t count, Run&& run) {
    for (std::size_t at = 0, length = 0; at < count; at += length) {
      length = 1;
      while (at + length < count && list[at + length] == list[at] + length) ++length;
      run(at, length);
    }
  }

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
    const std::string advice = changed_file_advice(once_);
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

  static std::string changed_file_advice(bool once) {
    return once ? "keep a file unchanged while a dataset is made from it"
                : "keep a streamed file unchanged until the dataset is destroyed (a new dataset "
                  "reads it as it is now)";
  }

  const std::byte* memory_ = nullptr;
  std::shared_ptr<const FileMapping> mapping_;  // keeps `memory_` mapped when it is a file's
  std::size_t mapped_bytes_ = 0;
  std::shared_ptr<const std::byte> owner_;         // keeps `memory_` alive when the source owns it
  std::shared_ptr<const BackgroundFill> filling_;  // fills `memory_`, when it is not filled yet
  std::size_t owned_bytes_ = 0;
  std::shared_ptr<const std::vector<FileSpan>> spans_;  // the files, when the rows are read there
  std::size_t data_offset_ = 0;                         // in the spans end to end
  std::size_t rows_ = 0;
  std::size_t row_bytes_ = 0;
  bool once_ = false;  // read while a dataset is made, not while it streams
  // A selection's rows: row `r` is row `(*selection_)[r]` of `*base_` (see `selected`).
  std::shared_ptr<const RowSource> base_;
  std::shared_ptr<const std::vector<std::size_t>> selection_;
};

}  // namespace resident::detail
