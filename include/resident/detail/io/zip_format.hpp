// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// The parts of the ZIP format (APPNOTE 6.3) that NumPy's `.npz` uses, shared by the reader
// (zip_directory.hpp) and the writer (zip_writer.hpp): record signatures and sizes, flags,
// limits, and what a member's directory entry says.

#include <cstddef>
#include <cstdint>
#include <string>

namespace resident::detail {

/// @brief One member of a ZIP archive, as its central directory entry and its local header
/// agree on it.
struct ZipEntry {
  std::string name;          ///< The member's name, as stored.
  std::uint16_t method = 0;  ///< 0 stored, 8 deflated: nothing else is accepted.
  std::uint32_t crc32 = 0;   ///< CRC-32 of the member's uncompressed bytes.
  std::uint64_t compressed_size = 0;
  std::uint64_t uncompressed_size = 0;
  std::uint64_t header_offset = 0;  ///< Where the member's local header begins.
  std::uint64_t data_offset = 0;    ///< Where the member's (compressed) bytes begin.

  static constexpr std::uint16_t stored = 0;    ///< `method` of a member kept as it is.
  static constexpr std::uint16_t deflated = 8;  ///< `method` of a deflated member.
};

namespace zip {
// Record signatures (APPNOTE 4.3.7, 4.3.12, 4.3.16, 4.3.14, 4.3.15).
inline constexpr std::uint32_t local_signature = 0x04034b50;
inline constexpr std::uint32_t central_signature = 0x02014b50;
inline constexpr std::uint32_t end_signature = 0x06054b50;
inline constexpr std::uint32_t zip64_end_signature = 0x06064b50;
inline constexpr std::uint32_t zip64_locator_signature = 0x07064b50;
// Bytes of the fixed part of each record.
inline constexpr std::size_t local_bytes = 30;
inline constexpr std::size_t central_bytes = 46;
inline constexpr std::size_t end_bytes = 22;
inline constexpr std::size_t zip64_end_bytes = 56;
inline constexpr std::size_t zip64_locator_bytes = 20;
// The ZIP64 extended information extra field's id.
inline constexpr std::uint16_t zip64_extra_id = 0x0001;
// General purpose bit flags.
inline constexpr std::uint16_t flag_encrypted = 1u << 0;
inline constexpr std::uint16_t flag_data_descriptor = 1u << 3;
inline constexpr std::uint16_t flag_strong_encryption = 1u << 6;
inline constexpr std::uint16_t flag_utf8_name = 1u << 11;
inline constexpr std::uint16_t flag_masked_headers = 1u << 13;
/// The longest archive comment: its length is a 16-bit field.
inline constexpr std::size_t max_comment_bytes = 0xffff;
/// Deflate's best ratio: 258 bytes from a match of two one-bit codes, 1032 bytes per byte.
inline constexpr std::uint64_t max_deflate_ratio = 1032;
/// A central directory larger than this is not an `.npz` (a million members).
inline constexpr std::uint64_t max_directory_bytes = std::uint64_t{256} << 20;
}  // namespace zip

}  // namespace resident::detail
