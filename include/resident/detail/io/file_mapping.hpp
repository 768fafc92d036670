// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// A streamed file read in place: its rows are gathered from a read-only mapping (the page
// cache's pages, shared with every other reader of the file and reclaimable, never copied into
// memory of the process), while a background thread reads the rows ahead in file order, so
// that a cold file comes in at the disk's sequential speed rather than by a random page fault
// per row, and the first batch waits for its own rows only.

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "resident/detail/io/bus_faults.hpp"
#include "resident/detail/io/file_io.hpp"

namespace resident::detail {

/// Bytes the background reader takes at a time: what it checks for residence, reads, and
/// stops between.
inline constexpr std::size_t read_ahead_step = std::size_t{4} << 20;

/// @brief Bytes `[offset, offset + bytes)` of an open file, mapped read-only to be read in
/// place, with a reader thread that reads part of them ahead; shared by the sources that read
/// it, unmapped (the reader stopped first) when the last one goes.
class FileMapping {
 public:
  /// @brief Maps bytes `[offset, offset + bytes)` of `file` and, when `ahead_bytes` is not 0,
  /// starts reading bytes `[ahead_first, ahead_first + ahead_bytes)` of the mapping ahead, in
  /// order. Null when the range cannot be mapped or its faults cannot be absorbed (see
  /// `BusFaultRegistration`): the caller then reads the rows another way.
  static std::shared_ptr<const FileMapping> map(std::shared_ptr<const ReadFile> file,
                                                std::size_t offset, std::size_t bytes,
                                                std::size_t ahead_first, std::size_t ahead_bytes) {
    MappedRange range = MappedRange::of(*file, offset, bytes);
    if (!range.owner) return nullptr;
    std::shared_ptr<FileMapping> mapping(
        new FileMapping(std::move(file), offset, bytes, std::move(range)));
    if (!mapping->registration_.registered()) return nullptr;
    if (ahead_bytes != 0) mapping->start_reading_ahead(ahead_first, ahead_bytes);
    return mapping;
  }
  FileMapping(const FileMapping&) = delete;
  FileMapping& operator=(const FileMapping&) = delete;
  ~FileMapping() {
    stop_.store(true);
    if (reader_.joinable()) reader_.join();
  }

  /// Byte `offset` of the file, in the mapping.
  [[nodiscard]] const std::byte* data() const noexcept { return range_.data; }
  [[nodiscard]] std::size_t bytes() const noexcept { return bytes_; }
  [[nodiscard]] const ReadFile& file() const noexcept { return *file_; }
  /// @brief Bytes the reader has read ahead or found cached so far (it stops at the end of its
  /// range, at a read that fails, or when the mapping goes).
  [[nodiscard]] std::size_t read_ahead_bytes() const noexcept { return read_ahead_.load(); }
  /// @brief Whether the reader is still reading (false once done, failed or stopped, and when
  /// none was started).
  [[nodiscard]] bool reading_ahead() const noexcept { return reading_.load(); }

 private:
  FileMapping(std::shared_ptr<const ReadFile> file, std::size_t offset, std::size_t bytes,
              MappedRange range)
      : file_(std::move(file)),
        offset_(offset),
        bytes_(bytes),
        range_(std::move(range)),
        registration_(range_.data, bytes) {}

  void start_reading_ahead(std::size_t first, std::size_t bytes) {
    reading_.store(true);
    try {
      reader_ = std::thread([this, first, bytes] { read_ahead(first, bytes); });
    } catch (const std::system_error&) {
      reading_.store(false);  // no thread: the batches read their rows themselves
    }
  }

  // Reader thread: each step of `[first, first + bytes)` that is not all in the page cache,
  // read with `pread` (into a buffer of its own: the pages stay out of the process's memory
  // until a batch reads them).
  void read_ahead(std::size_t first, std::size_t bytes) noexcept {
    try {
      const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
      const std::unique_ptr<std::byte[]> buffer(new std::byte[read_ahead_step]);
      std::vector<unsigned char> cached(read_ahead_step / page + 2);
      const auto* base = reinterpret_cast<const std::byte*>(  // NOLINT: the mapping's first page
          reinterpret_cast<std::uintptr_t>(range_.data) / page * page);  // NOLINT
      for (std::size_t at = first; at < first + bytes && !stop_.load();) {
        const std::size_t step = std::min(read_ahead_step, first + bytes - at);
        const std::byte* start = range_.data + at;
        const std::size_t skip = static_cast<std::size_t>(start - base) / page * page;
        const std::size_t length = static_cast<std::size_t>(start + step - (base + skip));
        bool all_cached = ::mincore(const_cast<std::byte*>(base + skip), length,  // NOLINT
                                    cached.data()) == 0;
        for (std::size_t p = 0; all_cached && p < (length + page - 1) / page; ++p)
          all_cached = (cached[p] & 1U) != 0;
        // The next step is asked for before this one is read, so that the disk always has the
        // next reads queued.
        if (at + step < first + bytes)
          (void)::posix_fadvise(file_->fd(), static_cast<::off_t>(offset_ + at + step),
                                static_cast<::off_t>(read_ahead_step), POSIX_FADV_WILLNEED);
        for (std::size_t done = 0; !all_cached && done < step && !stop_.load();) {
          const ::ssize_t got = ::pread(file_->fd(), buffer.get(), step - done,
                                        static_cast<::off_t>(offset_ + at + done));
          if (got < 0 && errno == EINTR) continue;
          if (got <= 0) {
            reading_.store(false);  // the batches' checks say what happened to the file
            return;
          }
          done += static_cast<std::size_t>(got);
        }
        at += step;
        read_ahead_.store(at - first);
      }
    } catch (...) {  // no buffer: the batches read their rows themselves
    }
    reading_.store(false);
  }

  std::shared_ptr<const ReadFile> file_;
  std::size_t offset_;
  std::size_t bytes_;
  MappedRange range_;
  BusFaultRegistration registration_;  // before the mapping goes
  std::atomic<bool> stop_{false};
  std::atomic<bool> reading_{false};
  std::atomic<std::size_t> read_ahead_{0};
  std::thread reader_;  // last: started once everything it reads is made
};

}  // namespace resident::detail
