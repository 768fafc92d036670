// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// @brief zlib over an archive member: raw inflate, piece by piece into memory the caller
/// names (an upload's staging buffer), every length checked against the member's figures; and
/// CRC-32 over bytes in memory or in a file.

#include <zlib.h>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "resident/detail/expects.hpp"
#include "resident/detail/io/file_io.hpp"
#include "resident/detail/io/zip_directory.hpp"
#include "resident/error.hpp"

namespace resident::detail {

/// Bytes zlib is handed at once: its counts are `uInt`.
inline constexpr std::size_t zlib_piece_bytes = std::size_t{1} << 30;
/// Compressed bytes read from the file at once.
inline constexpr std::size_t inflate_input_bytes = std::size_t{256} << 10;

/// @brief CRC-32 (zlib's) of `bytes` bytes at `data`, continuing from `crc`.
inline std::uint32_t crc32_of(const std::byte* data, std::size_t bytes, std::uint32_t crc = 0) {
  uLong value = crc;
  for (std::size_t done = 0; done < bytes;) {
    const std::size_t piece = std::min(bytes - done, zlib_piece_bytes);
    value = ::crc32(value, reinterpret_cast<const Bytef*>(data + done),  // NOLINT
                    static_cast<uInt>(piece));
    done += piece;
  }
  return static_cast<std::uint32_t>(value);
}

/// @brief The reason a member whose bytes give CRC-32 `found` is refused.
inline std::string crc_mismatch(std::uint32_t found, std::uint32_t recorded) {
  return "CRC-32 mismatch: its bytes give 0x" + hex(found) + ", the archive records 0x" +
         hex(recorded) + "; the archive is corrupt (write it again)";
}

/// @brief CRC-32 of bytes `[offset, offset + bytes)` of `file`, read in pieces.
inline std::uint32_t crc32_of_file(const ReadFile& file, std::size_t offset, std::size_t bytes) {
  std::vector<std::byte> buffer(std::min(bytes, inflate_input_bytes));
  std::uint32_t crc = 0;
  for (std::size_t done = 0; done < bytes;) {
    const std::size_t piece = std::min(bytes - done, buffer.size());
    read_exactly(file.path(), file.fd(), buffer.data(), piece, offset + done);
    crc = crc32_of(buffer.data(), piece, crc);
    done += piece;
  }
  return crc;
}

/// @brief Inflates one deflated member of an archive front to back, from its bytes in the
/// file, in the pieces a caller asks for by position: a read ahead of the position continues
/// the stream (the bytes between are inflated and dropped), a read behind it starts the stream
/// again from the member's first byte. Never reads a byte of the file outside the member's
/// compressed bytes, never writes more than asked for, and refuses, with a `FormatError` naming
/// the archive and the member: corrupt deflate data, a stream that ends before the member's
/// uncompressed size or would go on past it, compressed bytes left over after it, and a CRC-32
/// that does not match (checked once the last byte is out: see `finish`).
class MemberInflater {
 public:
  /// @param file the archive, open; held for the inflater's life
  /// @param entry the member: a deflated one, checked by `read_zip_directory`
  MemberInflater(std::shared_ptr<const ReadFile> file, ZipEntry entry)
      : file_(std::move(file)),
        entry_(std::move(entry)),
        input_(static_cast<std::size_t>(
            std::min<std::uint64_t>(entry_.compressed_size, inflate_input_bytes))) {
    if (::inflateInit2(&stream_, -MAX_WBITS) != Z_OK)
      throw Error("resident: zlib could not start inflating " + file_->path() +
                  " (out of memory?)");
    start();
  }
  ~MemberInflater() { (void)::inflateEnd(&stream_); }
  MemberInflater(const MemberInflater&) = delete;
  MemberInflater& operator=(const MemberInflater&) = delete;

  /// @brief The member's uncompressed bytes `[first, first + bytes)` into `into`.
  /// @throws FormatError as the class says; Error (a broken invariant) for a range past the
  /// member's size, which its callers, bounded by the member's header, never ask for.
  void read(std::uint64_t first, std::size_t bytes, std::byte* into) {
    RESIDENT_INVARIANT(
        first <= entry_.uncompressed_size && bytes <= entry_.uncompressed_size - first,
        "bytes [" + std::to_string(first) + ", +" + std::to_string(bytes) + ") of member '" +
            entry_.name + "' lie past its " + std::to_string(entry_.uncompressed_size) + " bytes");
    if (first < position_) start();
    skip_to(first);
    produce(into, bytes);
  }

  /// @brief Inflates what is left of the member, dropping it, and checks that the stream ends
  /// exactly at the member's size and compressed size, with the right CRC-32. Once is enough:
  /// later calls check nothing again.
  /// @throws FormatError as the class says.
  void finish() {
    if (verified_) return;
    skip_to(entry_.uncompressed_size);
    // The stream must end here: one byte of room more shows whether it would go on.
    while (!ended_) {
      std::byte extra{};
      stream_.next_out = reinterpret_cast<Bytef*>(&extra);  // NOLINT
      stream_.avail_out = 1;
      step();
      if (stream_.avail_out == 0)
        fail(entry_.data_offset + consumed(), "it inflates past the " +
                                                  std::to_string(entry_.uncompressed_size) +
                                                  " bytes its header declares");
    }
    if (consumed() != entry_.compressed_size)
      fail(entry_.data_offset + consumed(),
           std::to_string(entry_.compressed_size - consumed()) +
               " compressed bytes follow the end of its deflate stream");
    if (crc_ != entry_.crc32) fail(entry_.data_offset, crc_mismatch(crc_, entry_.crc32));
    file_->check_unchanged("while a member was inflated",
                           "keep an archive unchanged while it is loaded");
    verified_ = true;
  }

 private:
  [[noreturn]] void fail(std::uint64_t offset, const std::string& reason) const {
    throw FormatError(file_->path(), static_cast<std::size_t>(offset),
                      "member '" + entry_.name + "': " + reason);
  }

  /// Compressed bytes handed to zlib so far.
  [[nodiscard]] std::uint64_t consumed() const noexcept { return read_ - stream_.avail_in; }

  void start() {
    if (::inflateReset(&stream_) != Z_OK)
      throw Error("resident: zlib could not restart inflating " + file_->path());
    stream_.next_in = nullptr;
    stream_.avail_in = 0;
    read_ = 0;
    position_ = 0;
    crc_ = 0;
    ended_ = false;
  }

  /// One call of inflate into the output zlib is set up for; refills the input first.
  void step() {
    if (stream_.avail_in == 0 && read_ < entry_.compressed_size) {
      const std::size_t piece = static_cast<std::size_t>(
          std::min<std::uint64_t>(entry_.compressed_size - read_, input_.size()));
      read_exactly(file_->path(), file_->fd(), input_.data(), piece,
                   static_cast<std::size_t>(entry_.data_offset + read_));
      stream_.next_in = input_.data();
      stream_.avail_in = static_cast<uInt>(piece);
      read_ += piece;
    }
    const uInt room = stream_.avail_out;
    Bytef* const out = stream_.next_out;
    const int status = ::inflate(&stream_, Z_NO_FLUSH);
    crc_ = crc32_of(reinterpret_cast<const std::byte*>(out), room - stream_.avail_out,  // NOLINT
                    crc_);
    position_ += room - stream_.avail_out;
    if (status == Z_STREAM_END) {
      ended_ = true;
    } else if (status == Z_BUF_ERROR && stream_.avail_in == 0 && read_ == entry_.compressed_size) {
      fail(entry_.data_offset + read_,
           "its compressed bytes end before its deflate stream does "
           "(truncated or corrupt)");
    } else if (status != Z_OK && status != Z_BUF_ERROR) {
      fail(entry_.data_offset + consumed(),
           std::string("its deflate data is corrupt (zlib: ") +
               (stream_.msg != nullptr ? stream_.msg : "error " + std::to_string(status)) + ")");
    }
  }

  /// The next `bytes` uncompressed bytes into `into`.
  void produce(std::byte* into, std::size_t bytes) {
    for (std::size_t done = 0; done < bytes;) {
      if (ended_)
        fail(entry_.data_offset + consumed(), "its deflate stream ends after " +
                                                  std::to_string(position_) +
                                                  " bytes, but its "
                                                  "header declares " +
                                                  std::to_string(entry_.uncompressed_size));
      stream_.next_out = reinterpret_cast<Bytef*>(into + done);  // NOLINT
      stream_.avail_out = static_cast<uInt>(std::min(bytes - done, zlib_piece_bytes));
      const std::uint64_t before = position_;
      step();
      done += static_cast<std::size_t>(position_ - before);
    }
  }

  /// Inflates and drops bytes up to position `target`.
  void skip_to(std::uint64_t target) {
    if (position_ >= target) return;
    std::vector<std::byte> dropped(
        static_cast<std::size_t>(std::min<std::uint64_t>(target - position_, inflate_input_bytes)));
    while (position_ < target) {
      const std::size_t piece =
          static_cast<std::size_t>(std::min<std::uint64_t>(target - position_, dropped.size()));
      produce(dropped.data(), piece);
    }
  }

  std::shared_ptr<const ReadFile> file_;
  ZipEntry entry_;
  std::vector<Bytef> input_;
  z_stream stream_{};
  std::uint64_t read_ = 0;      // compressed bytes read from the file
  std::uint64_t position_ = 0;  // uncompressed bytes produced
  std::uint32_t crc_ = 0;       // of the uncompressed bytes produced
  bool ended_ = false;          // inflate returned Z_STREAM_END
  bool verified_ = false;       // finish() found everything in order
};

}  // namespace resident::detail
