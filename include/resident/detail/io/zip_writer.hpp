// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// @brief The records of a ZIP archive as NumPy's zipfile writes them (local headers, the
/// central directory, the end records), ZIP64 where a figure needs it; and raw deflate.

#include <zlib.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "resident/detail/io/file_io.hpp"
#include "resident/detail/io/inflate.hpp"
#include "resident/detail/io/zip_format.hpp"
#include "resident/error.hpp"

namespace resident::detail {

/// @brief One member to write: its name, method and figures, and its bytes as they go into the
/// archive (compressed when deflated).
struct ZipMemberToWrite {
  std::string name;
  std::uint16_t method = ZipEntry::stored;
  std::uint32_t crc32 = 0;
  std::uint64_t uncompressed_size = 0;
  std::vector<ByteSpan> bytes;  ///< The member's bytes in the archive, one span after another.

  [[nodiscard]] std::uint64_t compressed_size() const noexcept {
    return std::accumulate(
        bytes.begin(), bytes.end(), std::uint64_t{0},
        [](std::uint64_t total, const ByteSpan& span) { return total + span.size; });
  }
};

/// Appends `value` to `out` as `bytes` little-endian bytes.
inline void put_le(std::string& out, std::uint64_t value, std::size_t bytes) {
  for (std::size_t byte = 0; byte < bytes; ++byte)
    out += static_cast<char>((value >> (8 * byte)) & 0xff);
}

/// @brief The records around the members of an archive, in the order they are written: call
/// `local_header` for each member before its bytes, then `directory` once.
class ZipRecordWriter {
 public:
  /// The local header of `member`, which begins at the current offset (advanced past it and
  /// the member's bytes). Sizes that need them go into a ZIP64 extra field.
  std::string local_header(const ZipMemberToWrite& member) {
    const bool zip64 =
        needs_zip64(member.uncompressed_size) || needs_zip64(member.compressed_size());
    std::string header;
    put_le(header, zip::local_signature, 4);
    put_le(header, zip64 ? 45 : 20, 2);  // version needed to extract: 4.5 for ZIP64
    put_le(header, flags(member), 2);    // no encryption, sizes in the header
    put_le(header, member.method, 2);
    put_le(header, 0, 2);       // modification time 00:00:00
    put_le(header, 0x0021, 2);  // and date 1980-01-01: archives of the same arrays are equal
    put_le(header, member.crc32, 4);
    put_le(header, zip64 ? 0xffffffff : member.compressed_size(), 4);
    put_le(header, zip64 ? 0xffffffff : member.uncompressed_size, 4);
    put_le(header, member.name.size(), 2);
    put_le(header, zip64 ? 20 : 0, 2);
    header += member.name;
    if (zip64) {
      put_le(header, zip::zip64_extra_id, 2);
      put_le(header, 16, 2);
      put_le(header, member.uncompressed_size, 8);
      put_le(header, member.compressed_size(), 8);
    }
    std::string entry = central_entry(member, offset_);
    directory_ += entry;
    ++entries_;
    offset_ += header.size() + member.compressed_size();
    return header;
  }

  /// The central directory of the members written, and the end records.
  [[nodiscard]] std::string directory() const {
    std::string out = directory_;
    const std::uint64_t directory_offset = offset_, directory_bytes = directory_.size();
    const bool zip64 =
        entries_ >= 0xffff || needs_zip64(directory_offset) || needs_zip64(directory_bytes);
    if (zip64) {
      const std::uint64_t record_offset = directory_offset + directory_bytes;
      put_le(out, zip::zip64_end_signature, 4);
      put_le(out, zip::zip64_end_bytes - 12, 8);
      put_le(out, 45, 2);  // made by
      put_le(out, 45, 2);  // needed
      put_le(out, 0, 4);
      put_le(out, 0, 4);
      put_le(out, entries_, 8);
      put_le(out, entries_, 8);
      put_le(out, directory_bytes, 8);
      put_le(out, directory_offset, 8);
      put_le(out, zip::zip64_locator_signature, 4);
      put_le(out, 0, 4);
      put_le(out, record_offset, 8);
      put_le(out, 1, 4);
    }
    put_le(out, zip::end_signature, 4);
    put_le(out, 0, 4);  // this disk, the directory's disk
    put_le(out, std::min<std::uint64_t>(entries_, 0xffff), 2);
    put_le(out, std::min<std::uint64_t>(entries_, 0xffff), 2);
    put_le(out, std::min<std::uint64_t>(directory_bytes, 0xffffffff), 4);
    put_le(out, std::min<std::uint64_t>(directory_offset, 0xffffffff), 4);
    put_le(out, 0, 2);  // no comment
    return out;
  }

 private:
  static bool needs_zip64(std::uint64_t figure) noexcept { return figure >= 0xffffffff; }

  /// The general purpose flags: bit 11 (names in UTF-8) where the name is not ASCII, as
  /// Python's zipfile (and so `numpy.savez`) sets it; readers decode other names as CP437.
  static std::uint16_t flags(const ZipMemberToWrite& member) noexcept {
    const bool ascii = std::all_of(member.name.begin(), member.name.end(),
                                   [](char c) { return static_cast<unsigned char>(c) < 0x80; });
    return ascii ? 0 : zip::flag_utf8_name;
  }

  static std::string central_entry(const ZipMemberToWrite& member, std::uint64_t offset) {
    std::string extra;
    const auto wide = [&extra](std::uint64_t figure) -> std::uint64_t {
      if (!needs_zip64(figure)) return figure;
      put_le(extra, figure, 8);
      return 0xffffffff;
    };
    const std::uint64_t uncompressed = wide(member.uncompressed_size);
    const std::uint64_t compressed = wide(member.compressed_size());
    const std::uint64_t header_offset = wide(offset);
    const bool zip64 = !extra.empty();
    std::string entry;
    put_le(entry, zip::central_signature, 4);
    put_le(entry, 0x0300 | (zip64 ? 45 : 20), 2);  // made by: Unix, version 2.0 or 4.5
    put_le(entry, zip64 ? 45 : 20, 2);
    put_le(entry, flags(member), 2);
    put_le(entry, member.method, 2);
    put_le(entry, 0, 2);
    put_le(entry, 0x0021, 2);
    put_le(entry, member.crc32, 4);
    put_le(entry, compressed, 4);
    put_le(entry, uncompressed, 4);
    put_le(entry, member.name.size(), 2);
    put_le(entry, zip64 ? 4 + extra.size() : 0, 2);
    put_le(entry, 0, 2);            // comment
    put_le(entry, 0, 2);            // disk
    put_le(entry, 0, 2);            // internal attributes
    put_le(entry, 0644u << 16, 4);  // external attributes: a regular file, rw-r--r--
    put_le(entry, header_offset, 4);
    entry += member.name;
    if (zip64) {
      put_le(entry, zip::zip64_extra_id, 2);
      put_le(entry, extra.size(), 2);
      entry += extra;
    }
    return entry;
  }

  std::string directory_;
  std::uint64_t offset_ = 0;
  std::uint64_t entries_ = 0;
};

/// @brief Raw deflate (no zlib header, as ZIP wants) of `spans`, one after another, at zlib's
/// default level, as NumPy's savez_compressed writes.
/// @throws Error when zlib fails (out of memory).
inline std::vector<std::byte> deflate_spans(const std::vector<ByteSpan>& spans) {
  z_stream stream{};
  if (::deflateInit2(&stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, -MAX_WBITS, 8,
                     Z_DEFAULT_STRATEGY) != Z_OK)
    throw Error("resident: zlib could not start deflating (out of memory?)");
  std::vector<std::byte> out;
  std::vector<std::byte> buffer(inflate_input_bytes);
  const auto drain = [&](const Bytef* input, std::size_t bytes, int flush) {
    stream.next_in = const_cast<Bytef*>(input);  // NOLINT: zlib's API is not const-correct
    stream.avail_in = static_cast<uInt>(bytes);
    int status = Z_OK;
    do {
      stream.next_out = reinterpret_cast<Bytef*>(buffer.data());  // NOLINT
      stream.avail_out = static_cast<uInt>(buffer.size());
      status = ::deflate(&stream, flush);
      if (status == Z_STREAM_ERROR) throw Error("resident: zlib failed while deflating");
      out.insert(out.end(), buffer.data(), buffer.data() + (buffer.size() - stream.avail_out));
    } while (stream.avail_out == 0 || (flush == Z_FINISH && status != Z_STREAM_END));
  };
  try {
    for (const ByteSpan& span : spans)
      for (std::size_t done = 0; done < span.size;) {
        const std::size_t bytes = std::min(span.size - done, zlib_piece_bytes);
        drain(static_cast<const Bytef*>(span.data) + done, bytes, Z_NO_FLUSH);
        done += bytes;
      }
    drain(nullptr, 0, Z_FINISH);
  } catch (...) {
    (void)::deflateEnd(&stream);
    throw;
  }
  (void)::deflateEnd(&stream);
  return out;
}

}  // namespace resident::detail
