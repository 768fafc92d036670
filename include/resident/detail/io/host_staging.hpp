// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// Rows a streaming dataset reads in any order, every epoch, without a file read per row: a
// file's rows in place, from its mapping, or read once when it is made into host memory its
// sources own (a file that cannot be mapped; a deflated archive member's rows, inflated once,
// as a deflate stream reads front to back only).

#include <algorithm>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "resident/detail/dataset/shard_geometry.hpp"
#include "resident/detail/host_memory.hpp"
#include "resident/detail/io/file_io.hpp"
#include "resident/detail/io/file_mapping.hpp"
#include "resident/detail/io/inflate.hpp"
#include "resident/detail/io/zip_directory.hpp"
#include "resident/detail/stream/row_source.hpp"
#include "resident/error.hpp"
#include "resident/progress.hpp"

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace resident::detail {

/// @brief Host memory for `bytes` bytes of rows (at least one byte, so that even empty rows are
/// host memory), released when its last owner goes; null when the system refuses. Large ones
/// are mapped without reserving swap: a rank may write only its part of them, and pages never
/// written take no memory.
inline std::shared_ptr<std::byte> allocate_row_memory(std::size_t bytes) {
  const std::size_t size = std::max<std::size_t>(bytes, 1);
#if defined(__linux__)
  if (size >= host_mmap_threshold) {
    void* pointer = ::mmap(nullptr, size, PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (pointer == MAP_FAILED) return nullptr;
    (void)::madvise(pointer, size, MADV_HUGEPAGE);  // advice only, as in `allocate_host`
    // Should the control block's allocation throw, the deleter unmaps the pages.
    return std::shared_ptr<std::byte>(static_cast<std::byte*>(pointer),
                                      [size](std::byte* mapped) { ::munmap(mapped, size); });
  }
#endif
  void* pointer = allocate_host(size);
  if (pointer == nullptr) return nullptr;
  return std::shared_ptr<std::byte>(static_cast<std::byte*>(pointer),
                                    [size](std::byte* held) { deallocate_host(held, size); });
}

/// @brief `allocate_row_memory(bytes)` for the rows of `what` ("x.npy").
/// @throws CapacityError when the system refuses it.
inline std::shared_ptr<std::byte> row_memory_for(std::size_t bytes, const std::string& what) {
  std::shared_ptr<std::byte> memory = allocate_row_memory(bytes);
  if (memory) return memory;
  const Capacity host = host_capacity();
  throw CapacityError("host", bytes, host.free_bytes, host.total_bytes, 0,
                      "free host memory, or set StreamOptions::order to window to stream the "
                      "rows a chunk at a time",
                      "holding the rows of " + what + " in host memory");
}

/// @brief Rows `range` of `file` (a file source), read once into host memory the returned
/// source owns, with the checks of every streaming read: a read that fails or comes up short
/// and a file that changed since it was opened are refused. The returned source has the file
/// source's rows; those outside `range`, never read by the rank, are zero and take no memory.
/// @throws FormatError as `RowSource::read` does; CapacityError when the memory is refused.
inline RowSource read_rows_once(const RowSource& file, const std::string& what, RowRange range) {
  const std::size_t row_bytes = file.row_bytes();
  std::shared_ptr<std::byte> memory = row_memory_for(file.rows() * row_bytes, what);
  file.read_once().read(range.first, range.rows, memory.get() + range.first * row_bytes);
  return RowSource::owned_memory(std::move(memory), file.rows(), row_bytes, range.rows * row_bytes);
}

/// @brief Whether rows of elements of `element_bytes` bytes from byte `data_offset` of a file
/// can be read in place from its mapping: aligned for their type, as a gather reads them (an
/// archive member's data may start at any byte).
constexpr bool mappable_at(std::size_t data_offset, std::size_t element_bytes) noexcept {
  return element_bytes == 0 || data_offset % element_bytes == 0;
}

/// @brief A file's rows (`rows` rows of `row_bytes` bytes, of elements of `element_bytes`
/// bytes, from byte `data_offset` of `file`) read in place from a mapping of the file
/// (`FileMapping`), whose bytes of rows `range` are read ahead in the background when
/// `read_ahead`. Where the file cannot be mapped (no bytes, rows not aligned for their type:
/// `mappable_at`, or no mapping to be had), rows `range` are read once into host memory as
/// `read_rows_once` reads them.
/// @throws what `read_rows_once` throws, when it reads.
inline RowSource map_rows(std::shared_ptr<const ReadFile> file, std::size_t data_offset,
                          std::size_t rows, std::size_t row_bytes, std::size_t element_bytes,
                          RowRange range, bool read_ahead, const std::string& what) {
  const std::size_t first = range.first * row_bytes;
  const std::size_t bytes = range.rows * row_bytes;
  if (rows * row_bytes != 0 && mappable_at(data_offset, element_bytes)) {
    std::shared_ptr<const FileMapping> mapping =
        FileMapping::map(file, data_offset, rows * row_bytes, first, read_ahead ? bytes : 0);
    if (mapping) return RowSource::mapped(std::move(mapping), 0, rows, row_bytes, bytes);
  }
  return read_rows_once(RowSource::file(std::move(file), data_offset, rows, row_bytes), what,
                        range);
}

/// @brief Rows `range` of a deflated member (`entry` of the archive `file`; its array of
/// `rows` rows of `row_bytes` bytes begins at byte `data_offset` of its inflated image),
/// inflated once into host memory the returned source owns, in the background
/// (`BackgroundFill`): the source's reads wait for their rows. The whole member is inflated
/// front to back, the rows outside `range` dropped, and its end and CRC-32 checked, as an
/// upload from it checks them (`MemberInflater`); `check(rows, bytes, offset)` checks each
/// step's inflated bytes (NumPy booleans). Rows outside `range` are zero, as above.
/// `progress` hears of each step (null: nothing does).
/// @throws FormatError for a member the inflater refuses before reading; CapacityError when the
/// memory is refused; std::system_error when no thread can be started. What inflating finds
/// later (corrupt deflate data, a wrong size or CRC-32, an archive that changed) is thrown
/// by the reads that wait for it.
inline RowSource inflate_rows(std::shared_ptr<const ReadFile> file, ZipEntry entry,
                              std::size_t data_offset, std::size_t rows, std::size_t row_bytes,
                              RowRange range,
                              std::function<void(const std::byte*, std::size_t, std::size_t)> check,
                              std::shared_ptr<FillProgress> progress) {
  const std::string what = "member '" + entry.name + "' of " + file->path();
  std::shared_ptr<std::byte> memory = row_memory_for(rows * row_bytes, what);
  const auto inflater = std::make_shared<MemberInflater>(std::move(file), std::move(entry));
  std::shared_ptr<const BackgroundFill> filling = BackgroundFill::start(
      memory, range.first * row_bytes, (range.first + range.rows) * row_bytes,
      [inflater, data_offset, check = std::move(check)](std::size_t offset, std::size_t bytes,
                                                        std::byte* into) {
        inflater->read(data_offset + offset, bytes, into);
        if (check) check(into, bytes, data_offset + offset);
      },
      [inflater] { inflater->finish(); }, what, std::move(progress));
  return RowSource::filled_memory(std::move(memory), std::move(filling), rows, row_bytes,
                                  range.rows * row_bytes);
}

}  // namespace resident::detail
