// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// @brief A strict reader of a ZIP archive's central directory (the container of NumPy's
/// `.npz`): every figure is checked against the file's length and against the others before
/// anything is read by it, and anything NumPy does not write (encryption, other compression
/// methods, spanned archives, overlapping members) is refused.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "resident/detail/io/file_io.hpp"
#include "resident/detail/io/zip_format.hpp"
#include "resident/error.hpp"

namespace resident::detail {

/// `value` in hexadecimal, at least `digits` digits.
inline std::string hex(std::uint64_t value, std::size_t digits = 8) {
  static constexpr char digit_of[] = "0123456789abcdef";
  std::string text;
  do {
    text.insert(text.begin(), digit_of[value & 0xf]);
    value >>= 4;
  } while (value != 0 || text.size() < digits);
  return text;
}

/// Little-endian fields of a record read from the archive, each read checked against the
/// record's length.
class ZipRecord {
 public:
  ZipRecord(const std::byte* data, std::size_t size) : data_(data), size_(size) {}

  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] bool has(std::size_t at, std::size_t bytes) const noexcept {
    return at <= size_ && bytes <= size_ - at;
  }
  [[nodiscard]] std::uint64_t field(std::size_t at, std::size_t bytes) const noexcept {
    std::uint64_t value = 0;
    for (std::size_t byte = bytes; byte-- > 0;)
      value = (value << 8) | std::to_integer<std::uint64_t>(data_[at + byte]);
    return value;
  }
  [[nodiscard]] std::uint16_t u16(std::size_t at) const noexcept {
    return static_cast<std::uint16_t>(field(at, 2));
  }
  [[nodiscard]] std::uint32_t u32(std::size_t at) const noexcept {
    return static_cast<std::uint32_t>(field(at, 4));
  }
  [[nodiscard]] std::uint64_t u64(std::size_t at) const noexcept { return field(at, 8); }
  [[nodiscard]] bool signature(std::size_t at, std::uint32_t expected) const noexcept {
    return has(at, 4) && u32(at) == expected;
  }
  /// The `bytes` bytes at `at`, as a record of their own (`has(at, bytes)` must hold).
  [[nodiscard]] ZipRecord sub(std::size_t at, std::size_t bytes) const noexcept {
    return {data_ + at, bytes};
  }
  [[nodiscard]] std::string text(std::size_t at, std::size_t bytes) const {
    return {reinterpret_cast<const char*>(data_ + at), bytes};  // NOLINT
  }

 private:
  const std::byte* data_;
  std::size_t size_;
};

/// The signatures and fixed sizes of the records of a ZIP archive (APPNOTE 6.3, section 4.3).

/// @brief Reads and checks the central directory of the ZIP archive open as `file`, and each
/// member's local header; reads no member's data. `file` is named in every error, with the
/// member where there is one.
class ZipDirectoryReader {
 public:
  explicit ZipDirectoryReader(const ReadFile& file)
      : file_(file), path_(file.path()), size_(file.identity().size) {}

  [[nodiscard]] std::vector<ZipEntry> read() {
    if (size_ < zip::end_bytes)
      fail(0, size_ == 0 ? "the file is empty, not an .npz archive"
                         : "the file is " + std::to_string(size_) +
                               " bytes, too short to be a ZIP archive (an .npz with no "
                               "arrays has 22)");
    const End end = find_end();
    std::vector<std::byte> directory(static_cast<std::size_t>(end.directory_bytes));
    read_exactly(path_, file_.fd(), directory.data(), directory.size(),
                 static_cast<std::size_t>(end.directory_offset));
    std::vector<ZipEntry> entries;
    const ZipRecord record(directory.data(), directory.size());
    std::size_t at = 0;
    while (at < record.size()) {
      if (entries.size() == end.entries)
        fail(end.directory_offset + at, "the central directory holds more entries than the " +
                                            std::to_string(end.entries) + " its end record counts");
      entries.push_back(read_entry(record, at, end.directory_offset));
    }
    if (entries.size() != end.entries)
      fail(end.directory_offset + at, "the central directory is truncated: its end record counts " +
                                          std::to_string(end.entries) + " entries, it holds " +
                                          std::to_string(entries.size()));
    for (ZipEntry& entry : entries) read_local_header(entry, end.directory_offset);
    refuse_overlaps(entries);
    return entries;
  }

 private:
  struct End {
    std::uint64_t entries = 0;
    std::uint64_t directory_bytes = 0;
    std::uint64_t directory_offset = 0;
  };

  [[noreturn]] void fail(std::uint64_t offset, const std::string& reason) const {
    throw FormatError(path_, static_cast<std::size_t>(offset), reason);
  }
  [[noreturn]] void fail(const std::string& member, std::uint64_t offset,
                         const std::string& reason) const {
    fail(offset, "member '" + member + "': " + reason);
  }

  std::vector<std::byte> read_bytes(std::uint64_t offset, std::size_t bytes) const {
    std::vector<std::byte> data(bytes);
    read_exactly(path_, file_.fd(), data.data(), bytes, static_cast<std::size_t>(offset));
    return data;
  }

  /// The end of central directory record (and its ZIP64 form, where the archive has one): it
  /// must end the file, its comment running exactly to the last byte.
  End find_end() const {
    const std::size_t tail_bytes = static_cast<std::size_t>(
        std::min<std::uint64_t>(size_, zip::end_bytes + zip::max_comment_bytes));
    const std::uint64_t tail_offset = size_ - tail_bytes;
    const std::vector<std::byte> tail = read_bytes(tail_offset, tail_bytes);
    const ZipRecord record(tail.data(), tail.size());
    std::size_t at = tail_bytes - zip::end_bytes + 1;
    bool found = false;
    while (at-- > 0) {
      if (record.signature(at, zip::end_signature) &&
          at + zip::end_bytes + record.u16(at + 20) == tail_bytes) {
        found = true;
        break;
      }
    }
    if (!found)
      fail(size_,
           "no end of central directory record ends the file: it is not a ZIP archive "
           "(an .npz is one), or it was truncated; write it again with numpy.savez");
    const std::uint64_t end_offset = tail_offset + at;
    if (record.u16(at + 4) != 0 || record.u16(at + 6) != 0)
      fail(end_offset,
           "the archive spans several disks, which NumPy never writes; join it into "
           "one file");
    End end;
    end.entries = record.u16(at + 10);
    if (record.u16(at + 8) != end.entries)
      fail(end_offset + 8, "the end record's entry counts disagree (" +
                               std::to_string(record.u16(at + 8)) + " on this disk, " +
                               std::to_string(end.entries) + " in all)");
    end.directory_bytes = record.u32(at + 12);
    end.directory_offset = record.u32(at + 16);
    std::uint64_t directory_end = end_offset;
    if (end_offset >= zip::zip64_locator_bytes) {
      const std::vector<std::byte> locator_bytes =
          read_bytes(end_offset - zip::zip64_locator_bytes, zip::zip64_locator_bytes);
      const ZipRecord locator(locator_bytes.data(), locator_bytes.size());
      if (locator.signature(0, zip::zip64_locator_signature)) {
        const std::uint64_t locator_offset = end_offset - zip::zip64_locator_bytes;
        directory_end = read_zip64_end(locator, locator_offset, end);
      }
    }
    if (end.directory_offset > directory_end ||
        end.directory_bytes != directory_end - end.directory_offset)
      fail(end.directory_offset,
           "the central directory is truncated or misplaced: it claims bytes [" +
               std::to_string(end.directory_offset) + ", +" + std::to_string(end.directory_bytes) +
               ") but must end at byte " + std::to_string(directory_end) +
               ", where its end record begins");
    if (end.directory_bytes > zip::max_directory_bytes)
      fail(end.directory_offset, "the central directory claims " +
                                     std::to_string(end.directory_bytes) +
                                     " bytes, more than an .npz can sensibly need (256 MiB)");
    if (end.entries > end.directory_bytes / zip::central_bytes)
      fail(end.directory_offset,
           "the end record counts " + std::to_string(end.entries) + " entries, more than its " +
               std::to_string(end.directory_bytes) + "-byte central directory can hold");
    return end;
  }

  /// Reads the ZIP64 end record the locator at `locator_offset` points at into `end`; returns
  /// where it begins, which is where the central directory must end.
  std::uint64_t read_zip64_end(const ZipRecord& locator, std::uint64_t locator_offset,
                               End& end) const {
    if (locator.u32(4) != 0 || locator.u32(16) != 1)
      fail(locator_offset, "the ZIP64 locator names several disks, which NumPy never writes");
    const std::uint64_t record_offset = locator.u64(8);
    if (record_offset > locator_offset || locator_offset - record_offset < zip::zip64_end_bytes)
      fail(locator_offset, "the ZIP64 locator points at byte " + std::to_string(record_offset) +
                               ", where no ZIP64 end record fits before it");
    const std::vector<std::byte> bytes = read_bytes(record_offset, zip::zip64_end_bytes);
    const ZipRecord record(bytes.data(), bytes.size());
    if (!record.signature(0, zip::zip64_end_signature))
      fail(record_offset, "the ZIP64 locator points at byte " + std::to_string(record_offset) +
                              ", which holds no ZIP64 end record");
    if (record.u64(4) + 12 != locator_offset - record_offset)
      fail(record_offset + 4, "the ZIP64 end record's size (" + std::to_string(record.u64(4)) +
                                  ") does not reach the locator that follows it");
    if (record.u32(16) != 0 || record.u32(20) != 0)
      fail(record_offset, "the ZIP64 end record names several disks, which NumPy never writes");
    const std::uint64_t on_disk = record.u64(24), entries = record.u64(32);
    if (on_disk != entries)
      fail(record_offset + 24, "the ZIP64 end record's entry counts disagree (" +
                                   std::to_string(on_disk) + " on this disk, " +
                                   std::to_string(entries) + " in all)");
    const auto widen = [](std::uint64_t narrow, std::uint64_t all_ones, std::uint64_t wide) {
      return narrow == all_ones ? wide : narrow;
    };
    const std::uint64_t wide_entries = widen(end.entries, 0xffff, entries);
    const std::uint64_t wide_bytes = widen(end.directory_bytes, 0xffffffff, record.u64(40));
    const std::uint64_t wide_offset = widen(end.directory_offset, 0xffffffff, record.u64(48));
    if (wide_entries != entries || wide_bytes != record.u64(40) || wide_offset != record.u64(48))
      fail(record_offset,
           "the ZIP64 end record and the end record disagree on the central "
           "directory (entries, size or offset)");
    end.entries = entries;
    end.directory_bytes = wide_bytes;
    end.directory_offset = wide_offset;
    return record_offset;
  }

  /// The ZIP64 extended information of an entry: the 8-byte figures of those of its 4-byte
  /// ones that are all ones, in order, in the extra field of id 1 (APPNOTE 4.5.3).
  void widen_zip64(const std::string& name, const ZipRecord& extra, std::uint64_t extra_offset,
                   std::vector<std::uint64_t*> wide) const {
    bool seen = false;
    for (std::size_t at = 0; at < extra.size();) {
      if (!extra.has(at, 4))
        fail(name, extra_offset + at, "an extra field's header runs past the extra fields");
      const std::uint16_t id = extra.u16(at), bytes = extra.u16(at + 2);
      if (!extra.has(at + 4, bytes))
        fail(name, extra_offset + at,
             "an extra field of " + std::to_string(bytes) + " bytes runs past the extra fields");
      if (id == zip::zip64_extra_id) {
        if (seen) fail(name, extra_offset + at, "the ZIP64 extra field appears twice");
        seen = true;
        if (bytes < 8 * wide.size())
          fail(name, extra_offset + at,
               "the ZIP64 extra field holds " + std::to_string(bytes) + " bytes, but the " +
                   std::to_string(wide.size()) + " figures marked 0xffffffff need " +
                   std::to_string(8 * wide.size()));
        for (std::size_t figure = 0; figure < wide.size(); ++figure)
          *wide[figure] = extra.u64(at + 4 + 8 * figure);
      }
      at += 4 + std::size_t{bytes};
    }
    if (!seen && !wide.empty())
      fail(name, extra_offset,
           "sizes or offsets are marked 0xffffffff (ZIP64) but there is "
           "no ZIP64 extra field to hold them");
  }

  ZipEntry read_entry(const ZipRecord& directory, std::size_t& at,
                      std::uint64_t directory_offset) const {
    const std::uint64_t where = directory_offset + at;
    if (!directory.has(at, zip::central_bytes) || !directory.signature(at, zip::central_signature))
      fail(where, directory.has(at, zip::central_bytes)
                      ? "a central directory entry lacks its signature PK\\1\\2"
                      : "the central directory is truncated inside an entry");
    const std::size_t name_bytes = directory.u16(at + 28), extra_bytes = directory.u16(at + 30),
                      comment_bytes = directory.u16(at + 32);
    if (!directory.has(at + zip::central_bytes, name_bytes + extra_bytes + comment_bytes))
      fail(where,
           "the central directory is truncated inside an entry's name, extra field or "
           "comment");
    ZipEntry entry;
    entry.name = directory.text(at + zip::central_bytes, name_bytes);
    if (entry.name.empty()) fail(where, "a central directory entry has an empty name");
    const std::uint16_t flags = directory.u16(at + 8);
    refuse_flags(entry.name, where + 8, flags);
    entry.method = directory.u16(at + 10);
    refuse_method(entry.name, where + 10, entry.method);
    entry.crc32 = directory.u32(at + 16);
    entry.compressed_size = directory.u32(at + 20);
    entry.uncompressed_size = directory.u32(at + 24);
    std::uint64_t disk = directory.u16(at + 34);
    entry.header_offset = directory.u32(at + 42);
    std::vector<std::uint64_t*> wide;
    if (entry.uncompressed_size == 0xffffffff) wide.push_back(&entry.uncompressed_size);
    if (entry.compressed_size == 0xffffffff) wide.push_back(&entry.compressed_size);
    if (entry.header_offset == 0xffffffff) wide.push_back(&entry.header_offset);
    if (disk == 0xffff) wide.push_back(&disk);
    widen_zip64(entry.name, directory.sub(at + zip::central_bytes + name_bytes, extra_bytes),
                where + zip::central_bytes + name_bytes, wide);
    if (disk != 0)
      fail(entry.name, where + 34,
           "it starts on disk " + std::to_string(disk) +
               " of a spanned archive, which NumPy never writes");
    at += zip::central_bytes + name_bytes + extra_bytes + comment_bytes;
    return entry;
  }

  void refuse_flags(const std::string& name, std::uint64_t where, std::uint16_t flags) const {
    if (flags & (zip::flag_encrypted | zip::flag_strong_encryption | zip::flag_masked_headers))
      fail(name, where,
           "it is encrypted (general purpose flags 0x" + hex(flags, 4) +
               "), which resident does not read; save the archive without a "
               "password");
  }

  void refuse_method(const std::string& name, std::uint64_t where, std::uint16_t method) const {
    if (method == ZipEntry::stored || method == ZipEntry::deflated) return;
    fail(name, where,
         "compression method " + std::to_string(method) + method_name(method) +
             " is not supported (0, stored, as numpy.savez writes, and 8, deflate, "
             "as numpy.savez_compressed writes, are)");
  }

  static std::string method_name(std::uint16_t method) {
    switch (method) {
      case 12:
        return " (bzip2)";
      case 14:
        return " (LZMA)";
      case 93:
        return " (Zstandard)";
      case 99:
        return " (AES encryption)";
      default:
        return "";
    }
  }

  /// The local header of `entry` must agree with its central directory entry; sets where the
  /// member's data begins and checks that it ends before the central directory.
  void read_local_header(ZipEntry& entry, std::uint64_t directory_offset) const {
    const std::uint64_t at = entry.header_offset;
    if (at > directory_offset || directory_offset - at < zip::local_bytes)
      fail(entry.name, at,
           "its local header at byte " + std::to_string(at) +
               " does not lie before the central directory (byte " +
               std::to_string(directory_offset) + ")");
    const std::vector<std::byte> fixed = read_bytes(at, zip::local_bytes);
    const ZipRecord local(fixed.data(), fixed.size());
    if (!local.signature(0, zip::local_signature))
      fail(entry.name, at, "its local header lacks its signature PK\\3\\4");
    const std::size_t name_bytes = local.u16(26), extra_bytes = local.u16(28);
    if (directory_offset - at - zip::local_bytes < name_bytes + extra_bytes)
      fail(entry.name, at,
           "its local header's name and extra field run into the central "
           "directory");
    const std::vector<std::byte> variable =
        read_bytes(at + zip::local_bytes, name_bytes + extra_bytes);
    const ZipRecord names(variable.data(), variable.size());
    if (names.text(0, name_bytes) != entry.name)
      fail(entry.name, at + zip::local_bytes,
           "the local header names it '" + names.text(0, name_bytes) + "'");
    const std::uint16_t flags = local.u16(6);
    refuse_flags(entry.name, at + 6, flags);
    if (local.u16(8) != entry.method)
      fail(entry.name, at + 8,
           "the local header says compression method " + std::to_string(local.u16(8)) +
               ", the central directory " + std::to_string(entry.method));
    if (!(flags & zip::flag_data_descriptor)) {
      std::uint64_t compressed = local.u32(18), uncompressed = local.u32(22);
      std::vector<std::uint64_t*> wide;
      if (uncompressed == 0xffffffff) wide.push_back(&uncompressed);
      if (compressed == 0xffffffff) wide.push_back(&compressed);
      widen_zip64(entry.name, names.sub(name_bytes, extra_bytes),
                  at + zip::local_bytes + name_bytes, wide);
      if (local.u32(14) != entry.crc32 || compressed != entry.compressed_size ||
          uncompressed != entry.uncompressed_size)
        fail(entry.name, at + 14,
             "the local header and the central directory disagree on its CRC or sizes (local " +
                 std::to_string(compressed) + " compressed, " + std::to_string(uncompressed) +
                 " uncompressed; central " + std::to_string(entry.compressed_size) + ", " +
                 std::to_string(entry.uncompressed_size) + ")");
    }
    entry.data_offset = at + zip::local_bytes + name_bytes + extra_bytes;
    if (entry.compressed_size > directory_offset - entry.data_offset)
      fail(entry.name, entry.data_offset,
           "its " + std::to_string(entry.compressed_size) +
               " bytes run past the start of the "
               "central directory (byte " +
               std::to_string(directory_offset) +
               "): the archive is truncated or the size is wrong");
    if (entry.method == ZipEntry::stored && entry.compressed_size != entry.uncompressed_size)
      fail(entry.name, at,
           "it is stored, yet its compressed size (" + std::to_string(entry.compressed_size) +
               ") is not its uncompressed size (" + std::to_string(entry.uncompressed_size) + ")");
    if (entry.method == ZipEntry::deflated &&
        entry.uncompressed_size / zip::max_deflate_ratio > entry.compressed_size)
      fail(entry.name, at,
           "it claims " + std::to_string(entry.uncompressed_size) + " bytes inflated from " +
               std::to_string(entry.compressed_size) +
               ", more than deflate can ever produce (1032 to 1): a zip bomb "
               "or a corrupt size");
  }

  /// No two members may share bytes: each member's local header and data lie before the next
  /// member's local header; no two members share a name.
  void refuse_overlaps(const std::vector<ZipEntry>& entries) const {
    std::vector<const ZipEntry*> order(entries.size());
    std::transform(entries.begin(), entries.end(), order.begin(),
                   [](const ZipEntry& entry) { return &entry; });
    std::sort(order.begin(), order.end(), [](const ZipEntry* a, const ZipEntry* b) {
      return a->header_offset < b->header_offset;
    });
    for (std::size_t index = 1; index < order.size(); ++index) {
      const ZipEntry& before = *order[index - 1];
      const ZipEntry& after = *order[index];
      if (before.data_offset + before.compressed_size > after.header_offset)
        fail(after.name, after.header_offset,
             "it overlaps member '" + before.name + "' (bytes [" +
                 std::to_string(before.header_offset) + ", " +
                 std::to_string(before.data_offset + before.compressed_size) + "))");
    }
    std::vector<std::string_view> names(entries.size());
    std::transform(entries.begin(), entries.end(), names.begin(),
                   [](const ZipEntry& entry) { return std::string_view(entry.name); });
    std::sort(names.begin(), names.end());
    const auto twice = std::adjacent_find(names.begin(), names.end());
    if (twice != names.end())
      fail(std::string(*twice), 0, "two members have this name; NumPy writes each key once");
  }

  const ReadFile& file_;
  std::string path_;
  std::uint64_t size_;
};

/// @brief The members of the ZIP archive open as `file`, checked (see `ZipDirectoryReader`).
/// @throws FormatError naming the archive, the member where there is one, and the reason.
inline std::vector<ZipEntry> read_zip_directory(const ReadFile& file) {
  return ZipDirectoryReader(file).read();
}

}  // namespace resident::detail
