// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// Test support: ZIP archives built byte by byte, as NumPy's zipfile writes them or with any
// field made wrong, so that each refusal of the .npz reader can be shown on a file of its own.

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "resident/npy.hpp"

namespace resident::testing {

/// The `.npy` image of `values` with `shape`, as `npy::save` writes it.
template <class T>
std::string npy_image(const std::vector<T>& values, const Shape& shape) {
  return npy::detail::prefix_bytes(npy::dtype_of<T>(), shape) +
         std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
}

/// Raw deflate of `bytes`, as ZIP stores it.
inline std::string raw_deflate(const std::string& bytes) {
  z_stream stream{};
  deflateInit2(&stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&stream, bytes.size()), '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  stream.avail_in = static_cast<uInt>(bytes.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  deflate(&stream, Z_FINISH);
  out.resize(stream.total_out);
  deflateEnd(&stream);
  return out;
}

/// One member of a built archive: its name and uncompressed bytes, and what to make wrong.
struct ZipMember {
  ZipMember(std::string name, std::string data, bool deflate = false)
      : name(std::move(name)), data(std::move(data)), deflate(deflate) {}

  std::string name;
  std::string data;                                // uncompressed bytes
  bool deflate = false;                            // method 8 and deflated bytes, else method 0
  std::optional<std::string> stored_bytes;         // the bytes in the archive, in place of `data`'s
  std::optional<std::uint16_t> method;             // in both headers, in place of 0 or 8
  std::uint16_t flags = 0;                         // in both headers
  std::optional<std::uint32_t> crc;                // in both headers, in place of the right one
  std::optional<std::uint64_t> uncompressed_size;  // in both headers
  bool zip64 = false;  // sizes as 0xffffffff with a ZIP64 extra field, in both headers
};

/// A built archive and where its records begin.
struct ZipBytes {
  std::string bytes;
  std::vector<std::size_t> local_offsets;  // each member's local header
  std::vector<std::size_t> central_offsets;
  std::size_t directory_offset = 0;
  std::size_t end_offset = 0;  // the end of central directory record
};

inline void put(std::string& out, std::uint64_t value, std::size_t bytes) {
  for (std::size_t byte = 0; byte < bytes; ++byte)
    out += static_cast<char>((value >> (8 * byte)) & 0xff);
}

/// Overwrites `bytes` bytes at `at` of `archive` with `value`, little-endian.
inline void patch(std::string& archive, std::size_t at, std::uint64_t value, std::size_t bytes) {
  std::string field;
  put(field, value, bytes);
  archive.replace(at, bytes, field);
}

/// An archive of `members`; with `zip64_end`, ZIP64 end records too (as for huge archives).
inline ZipBytes build_zip(const std::vector<ZipMember>& members, bool zip64_end = false) {
  ZipBytes zip;
  std::string directory;
  for (const ZipMember& member : members) {
    const std::string stored = member.stored_bytes
                                   ? *member.stored_bytes
                                   : (member.deflate ? raw_deflate(member.data) : member.data);
    const std::uint32_t crc = member.crc.value_or(
        static_cast<std::uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(member.data.data()),
                                         static_cast<uInt>(member.data.size()))));
    const std::uint64_t size = member.uncompressed_size.value_or(member.data.size());
    const std::uint16_t method = member.method.value_or(member.deflate ? 8 : 0);
    std::string extra;
    if (member.zip64) {
      put(extra, 1, 2);
      put(extra, 16, 2);
      put(extra, size, 8);
      put(extra, stored.size(), 8);
    }
    const auto common = [&](std::string& out) {
      put(out, member.flags, 2);
      put(out, method, 2);
      put(out, 0, 2);
      put(out, 0x21, 2);
      put(out, crc, 4);
      put(out, member.zip64 ? 0xffffffff : stored.size(), 4);
      put(out, member.zip64 ? 0xffffffff : size, 4);
      put(out, member.name.size(), 2);
      put(out, extra.size(), 2);
    };
    zip.local_offsets.push_back(zip.bytes.size());
    put(zip.bytes, 0x04034b50, 4);
    put(zip.bytes, 45, 2);
    common(zip.bytes);
    zip.bytes += member.name + extra + stored;

    zip.central_offsets.push_back(directory.size());
    put(directory, 0x02014b50, 4);
    put(directory, 0x032d, 2);
    put(directory, 45, 2);
    common(directory);
    put(directory, 0, 2);  // comment
    put(directory, 0, 2);  // disk
    put(directory, 0, 2);
    put(directory, 0644u << 16, 4);
    put(directory, zip.local_offsets.back(), 4);
    directory += member.name + extra;
  }
  zip.directory_offset = zip.bytes.size();
  for (std::size_t& offset : zip.central_offsets) offset += zip.directory_offset;
  zip.bytes += directory;
  if (zip64_end) {
    const std::size_t record = zip.bytes.size();
    put(zip.bytes, 0x06064b50, 4);
    put(zip.bytes, 44, 8);
    put(zip.bytes, 45, 2);
    put(zip.bytes, 45, 2);
    put(zip.bytes, 0, 8);
    put(zip.bytes, members.size(), 8);
    put(zip.bytes, members.size(), 8);
    put(zip.bytes, directory.size(), 8);
    put(zip.bytes, zip.directory_offset, 8);
    put(zip.bytes, 0x07064b50, 4);
    put(zip.bytes, 0, 4);
    put(zip.bytes, record, 8);
    put(zip.bytes, 1, 4);
  }
  zip.end_offset = zip.bytes.size();
  put(zip.bytes, 0x06054b50, 4);
  put(zip.bytes, 0, 4);
  put(zip.bytes, zip64_end ? 0xffff : members.size(), 2);
  put(zip.bytes, zip64_end ? 0xffff : members.size(), 2);
  put(zip.bytes, zip64_end ? 0xffffffff : directory.size(), 4);
  put(zip.bytes, zip64_end ? 0xffffffff : zip.directory_offset, 4);
  put(zip.bytes, 0, 2);
  return zip;
}

/// @brief Writes at `path` a ZIP64 archive of one stored member `name`: the `.npy` header
/// `prefix` followed by `data_bytes` bytes that are a hole of the file (zeros that take no
/// disk), then the ZIP64 end records, past 4 GiB when the data is. Its CRC-32 is left 0 (check
/// it and the archive is refused). False when the file cannot be written.
inline bool write_sparse_member_archive(const std::string& path, const std::string& name,
                                        const std::string& prefix, std::uint64_t data_bytes) {
  ZipMember member(name, prefix);
  member.zip64 = true;
  member.crc = 0;
  member.uncompressed_size = prefix.size() + data_bytes;
  ZipBytes zip = build_zip({member}, true);
  const std::uint64_t member_bytes = prefix.size() + data_bytes;
  const std::size_t extra = 2 + 2 + 8;  // the compressed size, after the extra's id, size, size
  patch(zip.bytes, 30 + name.size() + extra, member_bytes, 8);
  patch(zip.bytes, zip.central_offsets[0] + 46 + name.size() + extra, member_bytes, 8);
  const std::size_t record = zip.bytes.size() - 22 - 20 - 56;  // the ZIP64 end record
  patch(zip.bytes, record + 48, zip.directory_offset + data_bytes, 8);
  patch(zip.bytes, record + 56 + 8, record + data_bytes, 8);
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  const std::size_t head = zip.directory_offset;  // up to the end of the member's prefix
  const std::size_t tail = zip.bytes.size() - head;
  const bool written =
      ::pwrite(fd, zip.bytes.data(), head, 0) == static_cast<::ssize_t>(head) &&
      ::pwrite(fd, zip.bytes.data() + head, tail, static_cast<::off_t>(head + data_bytes)) ==
          static_cast<::ssize_t>(tail);
  return ::close(fd) == 0 && written;
}

}  // namespace resident::testing
