// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// @brief `.npz` archives (`numpy.savez`, `numpy.savez_compressed`), as strictly as `.npy`
/// files: `Archive` lists the members from the central directory and their `.npy` headers
/// alone, maps stored members in place and inflates deflated ones; `save` writes archives
/// NumPy reads. Everything else is refused with a `FormatError` naming the archive, the member
/// and the reason.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "resident/detail/checked_math.hpp"
#include "resident/detail/host_memory.hpp"
#include "resident/detail/io/file_io.hpp"
#include "resident/detail/io/inflate.hpp"
#include "resident/detail/io/zip_directory.hpp"
#include "resident/detail/io/zip_writer.hpp"
#include "resident/error.hpp"
#include "resident/host_tensor.hpp"
#include "resident/npy.hpp"
#include "resident/shape.hpp"

namespace resident::npz {

/// @brief One array of an archive: its key, where its bytes lie, and what its `.npy` header
/// says.
struct Member {
  std::string key;                   ///< NumPy's key: the member's name without ".npy".
  std::string name;                  ///< The member's name in the archive: `key + ".npy"`.
  npy::Header header;                ///< The member's `.npy` header (offsets within the member).
  bool compressed = false;           ///< Deflated (`numpy.savez_compressed`), not stored.
  std::size_t compressed_bytes = 0;  ///< Bytes the member takes in the archive.
  std::size_t offset = 0;            ///< Where the member's bytes begin in the archive.
  std::uint32_t crc32 = 0;           ///< CRC-32 the archive records for the `.npy` bytes.

  /// @brief Element type.
  [[nodiscard]] npy::DType dtype() const noexcept { return header.dtype; }
  /// @brief The array's shape.
  [[nodiscard]] const Shape& shape() const noexcept { return header.shape; }
};

/// @brief How an `Archive` reads its members.
struct ArchiveOptions {
  /// @brief Check the CRC-32 of stored members too, before their data is used (which reads
  /// each such member once more); deflated members' CRC is always checked as they inflate.
  bool verify_stored_crc = false;
};

namespace detail {

/// Why `name` is not a member name NumPy writes (`<key>.npy`, the key a path without empty,
/// `.` or `..` parts, control characters or backslashes), or nothing when it is one.
inline std::string key_problem(std::string_view name) {
  constexpr std::string_view suffix = ".npy";
  constexpr std::size_t longest_name = 0xffff;  // a ZIP record's name length is 16 bits
  if (name.size() > longest_name)
    return "its name <key>.npy is " + std::to_string(name.size()) +
           " bytes, and a ZIP archive holds names of at most 65535";
  if (name.size() <= suffix.size() || name.substr(name.size() - suffix.size()) != suffix)
    return "its name is not <key>.npy, as numpy.savez names every array";
  const std::string_view key = name.substr(0, name.size() - suffix.size());
  if (std::any_of(key.begin(), key.end(), [](char c) {
        return static_cast<unsigned char>(c) < 0x20 || c == 0x7f || c == '\\';
      }))
    return "its key holds a control character or a backslash";
  for (std::size_t first = 0; first <= key.size();) {
    const std::size_t slash = std::min(key.find('/', first), key.size());
    const std::string_view part = key.substr(first, slash - first);
    if (part.empty() || part == "." || part == "..")
      return "its key has an empty, '.' or '..' path component";
    first = slash + 1;
  }
  return {};
}

/// @brief Refuses to save `key` in the archive at `path` unless NumPy would write it.
/// @throws InvalidArgument saying why (see `key_problem`).
inline void refuse_unless_key(const std::string& path, const std::string& key) {
  const std::string problem = key_problem(key + ".npy");
  if (!problem.empty())
    throw InvalidArgument("resident: cannot save key '" + key + "' in " + path + ": " + problem +
                          "; use a key such as x_train");
}

/// `member 'x.npy': ` before a reason.
inline std::string member_reason(const std::string& name, const std::string& reason) {
  return "member '" + name + "': " + reason;
}

/// Throws the `.npy` reader's refusals for a member of an archive: at offsets in the archive for
/// a stored member, at offsets of its inflated `.npy` image for a deflated one.
struct MemberFail {
  std::string path;
  std::string name;
  std::size_t offset = 0;  ///< Where the member's bytes begin in the archive.
  bool inflated = false;

  [[noreturn]] void operator()(std::size_t at, const std::string& reason) const {
    if (!inflated) throw FormatError(path, offset + at, member_reason(name, reason));
    throw FormatError(
        path, offset,
        member_reason(name, "at byte " + std::to_string(at) + " of its inflated .npy: " + reason));
  }
};

}  // namespace detail

/// @brief An `.npz` archive, open: its members listed with their dtypes and shapes from the
/// central directory and each member's `.npy` header alone (no data is read, a deflated member
/// is inflated only as far as its header).
///
/// Accepted: what `numpy.savez` and `numpy.savez_compressed` write, ZIP64 included (NumPy writes
/// ZIP64 extra fields for every member): members stored or deflated, named `<key>.npy`, each a
/// `.npy` image `npy::load` accepts. Refused, with a `FormatError` naming the archive, the member
/// and the reason: a bad or missing signature, a truncated archive or central directory, spanned
/// archives, sizes or offsets past the end of the file, members that overlap or share a name,
/// encrypted members, compression methods other than stored and deflate, a deflated size larger
/// than deflate can produce (1032 to 1), names that are not NumPy keys, a malformed `.npy`
/// inside, a header whose shape disagrees with the member's size, and (as members are read) a
/// CRC mismatch, deflate data that is corrupt, ends early or runs past its size.
/// @note The archive is held open; a member loaded from it (mapped) checks that the archive is
/// unchanged, as `npy::Array` does for a file. Copies share the open file. Reading never writes.
class Archive {
 public:
  /// @brief Opens the archive at `path` and reads its directory and every member's header.
  /// @throws FormatError as the class says.
  explicit Archive(const std::string& path, ArchiveOptions options = {})
      : file_(std::make_shared<const resident::detail::ReadFile>(path)), options_(options) {
    for (resident::detail::ZipEntry& entry : resident::detail::read_zip_directory(*file_)) {
      const std::string problem = detail::key_problem(entry.name);
      if (!problem.empty())
        fail(entry.header_offset,
             detail::member_reason(entry.name, problem) +
                 "; an .npz holds only arrays (save with numpy.savez or resident::npz::save)");
      Member listed;
      listed.name = entry.name;
      listed.key = entry.name.substr(0, entry.name.size() - 4);
      listed.compressed = entry.method == resident::detail::ZipEntry::deflated;
      listed.compressed_bytes = static_cast<std::size_t>(entry.compressed_size);
      listed.offset = static_cast<std::size_t>(entry.data_offset);
      listed.crc32 = entry.crc32;
      entries_.push_back(std::move(entry));
      listed.header = read_member_header(entries_.back());
      members_.push_back(std::move(listed));
    }
    file_->check_unchanged("while its directory was read",
                           "keep an archive unchanged while it is read");
  }

  /// @brief The archive, as passed to the constructor (empty once moved from).
  [[nodiscard]] const std::string& path() const noexcept {
    static const std::string none;
    return file_ ? file_->path() : none;
  }
  /// @brief The options it was opened with.
  [[nodiscard]] const ArchiveOptions& options() const noexcept { return options_; }
  /// @brief Every member, in the order of the central directory (none once moved from).
  [[nodiscard]] const std::vector<Member>& members() const noexcept { return members_; }

  /// @brief Whether the archive has a member of name `key` (".npy" included) or of key `key`;
  /// as in NumPy's `NpzFile`, a member's exact name wins over another member's key.
  [[nodiscard]] bool contains(std::string_view key) const noexcept { return find(key) != npos; }

  /// @brief The member of key (or name) `key`.
  /// @throws InvalidArgument naming the keys there are when there is none.
  [[nodiscard]] const Member& member(std::string_view key) const { return members_[index(key)]; }

  /// @brief Reads the member of key `key` as `npy::load` reads a file: a stored member whose
  /// data is little-endian C-order and aligned for its type in the archive is mapped in place,
  /// not copied; any other stored member is read and converted; a deflated member is inflated
  /// into memory (after a check that the host has room for it) and converted.
  /// @throws InvalidArgument for an unknown key; FormatError as the class says (CRC mismatch
  /// included, for stored members under `verify_stored_crc`); CapacityError when a deflated
  /// member is larger than the host's available memory.
  [[nodiscard]] npy::Array load(std::string_view key) const {
    const std::size_t at = index(key);
    const Member& found = members_[at];
    const resident::detail::ZipEntry& entry = entries_[at];
    check_unchanged_before(found);
    if (!found.compressed) {
      if (options_.verify_stored_crc) verify_crc(key);
      return npy::detail::ArrayFactory::load(file_, found.header, found.offset,
                                             stored_fail(found.name, found.offset));
    }
    const std::size_t bytes = found.header.data_bytes();
    refuse_unless_host_holds(found, bytes);
    std::vector<std::byte> raw(bytes);
    resident::detail::MemberInflater inflater(file_, entry);
    inflater.read(found.header.data_offset, bytes, raw.data());
    inflater.finish();
    if (found.dtype() == npy::DType::b1)
      npy::detail::check_bools(raw.data(), bytes, found.header.data_offset,
                               inflated_fail(found.name, found.offset));
    return npy::detail::ArrayFactory::converted(path(), found.header, found.offset, std::move(raw));
  }

  /// @brief Checks the CRC-32 of member `key` against the archive's record (reads the member;
  /// a deflated member is inflated and dropped).
  /// @throws InvalidArgument for an unknown key; FormatError on a mismatch.
  void verify_crc(std::string_view key) const {
    const std::size_t at = index(key);
    const Member& found = members_[at];
    check_unchanged_before(found);
    if (found.compressed) {
      resident::detail::MemberInflater(file_, entries_[at]).finish();
      return;
    }
    const std::uint32_t crc =
        resident::detail::crc32_of_file(*file_, found.offset, found.header.file_size);
    if (crc != found.crc32)
      fail(found.offset,
           detail::member_reason(found.name, resident::detail::crc_mismatch(crc, found.crc32)));
  }

  /// @brief Refuses an archive that changed since it was opened (see `npy::Array`).
  /// @param during when the check runs, for the message ("while it was uploaded")
  /// @throws FormatError naming the archive and what changed; Error once moved from.
  void check_unchanged(const std::string& during) const {
    if (!file_)
      throw Error(
          "resident: npz::Archive::check_unchanged called after the archive was moved "
          "from; use the archive it was moved to, or open the file again");
    file_->check_unchanged(during, "keep an archive unchanged while it is loaded and uploaded");
  }

  /// @cond impl
  // The open archive and a member's directory entry, for the dataset loaders.
  [[nodiscard]] const std::shared_ptr<const resident::detail::ReadFile>& impl_file()
      const noexcept {
    return file_;
  }
  [[nodiscard]] const resident::detail::ZipEntry& impl_entry(std::string_view key) const {
    return entries_[index(key)];
  }
  /// @endcond

 private:
  static constexpr std::size_t npos = static_cast<std::size_t>(-1);

  [[noreturn]] void fail(std::size_t offset, const std::string& reason) const {
    throw FormatError(path(), offset, reason);
  }

  // A member's exact name first, then its key, as NumPy looks them up: with members "x.npy"
  // and "x.npy.npy", "x.npy" is the first one.
  [[nodiscard]] std::size_t find(std::string_view key) const noexcept {
    for (std::size_t at = 0; at < members_.size(); ++at)
      if (members_[at].name == key) return at;
    for (std::size_t at = 0; at < members_.size(); ++at)
      if (members_[at].key == key) return at;
    return npos;
  }

  [[nodiscard]] std::size_t index(std::string_view key) const {
    if (!file_)
      throw Error("resident: npz::Archive asked for member '" + std::string(key) +
                  "' after it was moved from; use the archive it was moved to, or open the "
                  "file again");
    const std::size_t at = find(key);
    if (at != npos) return at;
    std::string keys;
    for (const Member& listed : members_) keys += (keys.empty() ? "" : ", ") + listed.key;
    throw InvalidArgument("resident: " + path() + " has no member '" + std::string(key) +
                          "'; its keys are: " + (keys.empty() ? "(none)" : keys));
  }

  // Before a member's data is read: a changed archive is refused naming the member, instead of
  // failing later as a short read of unknown cause.
  void check_unchanged_before(const Member& found) const {
    file_->check_unchanged("before member '" + found.name + "' was read",
                           "keep an archive unchanged while its members are read");
  }

  [[nodiscard]] detail::MemberFail stored_fail(const std::string& name, std::size_t offset) const {
    return {path(), name, offset, false};
  }
  [[nodiscard]] detail::MemberFail inflated_fail(const std::string& name,
                                                 std::size_t offset) const {
    return {path(), name, offset, true};
  }

  npy::Header read_member_header(const resident::detail::ZipEntry& entry) const {
    const auto size = static_cast<std::size_t>(entry.uncompressed_size);
    const auto offset = static_cast<std::size_t>(entry.data_offset);
    if (entry.method == resident::detail::ZipEntry::stored)
      return npy::detail::parse_header(
          size,
          [&](std::size_t at, std::size_t bytes, void* into) {
            resident::detail::read_exactly(path(), file_->fd(), into, bytes, offset + at);
          },
          stored_fail(entry.name, offset));
    resident::detail::MemberInflater inflater(file_, entry);
    return npy::detail::parse_header(
        size,
        [&](std::size_t at, std::size_t bytes, void* into) {
          inflater.read(at, bytes, static_cast<std::byte*>(into));
        },
        inflated_fail(entry.name, offset));
  }

  void refuse_unless_host_holds(const Member& found, std::size_t bytes) const {
    const Capacity host = resident::detail::host_capacity();
    if (bytes > host.free_bytes)
      throw CapacityError("host", bytes, host.free_bytes, host.total_bytes, 0,
                          "load it into a dataset (load_dataset inflates straight into the "
                          "upload) or save the archive uncompressed",
                          "inflating member '" + found.name + "' of " + path());
  }

  std::shared_ptr<const resident::detail::ReadFile> file_;
  ArchiveOptions options_;
  std::vector<Member> members_;
  std::vector<resident::detail::ZipEntry> entries_;  // members_[i]'s is entries_[i]
};

/// @brief How `save` writes each member.
enum class Compression {
  stored,    ///< As `numpy.savez`: the `.npy` bytes as they are (memory-mappable).
  deflated,  ///< As `numpy.savez_compressed`: deflated with zlib.
};

/// @brief One array to save: its key and its elements (C order, native byte order).
struct Entry {
  std::string key;                    ///< NumPy's key; the member is named `key + ".npy"`.
  npy::DType dtype = npy::DType::u1;  ///< Element type.
  const void* data = nullptr;         ///< `shape.elements()` elements, read during `save`.
  Shape shape{};                      ///< The array's shape (any rank, 0-d included).

  /// @brief `shape.elements()` elements of `dtype` at `data`.
  Entry(std::string key, npy::DType dtype, const void* data, const Shape& shape)
      : key(std::move(key)), dtype(dtype), data(data), shape(shape) {}
  /// @brief An array read by `npy::load` or `Archive::load`.
  Entry(std::string key, const npy::Array& array)
      : Entry(std::move(key), array.dtype(), array.data(), array.shape()) {}
  /// @brief A host tensor's elements.
  template <class T>
  Entry(std::string key, const HostTensor<T>& tensor)
      : Entry(std::move(key), npy::dtype_of<T>(), tensor.data(), tensor.shape()) {}
};

/// @brief Writes `entries` as an `.npz` archive NumPy reads (`numpy.load`): one member
/// `<key>.npy` each, stored or deflated, ZIP64 where a member or offset needs it. Written as
/// `npy::save` writes a file: to a temporary beside the path, synced, renamed over it; a loaded
/// archive (and its mapped members) keeps its data.
/// Names that are not ASCII carry the ZIP UTF-8 flag, as `numpy.savez` writes them.
/// @throws InvalidArgument for a key NumPy would not write (see `Archive`) or whose name a ZIP
/// archive cannot hold (over 65535 bytes), a key given twice, a byte size that overflows, or
/// null data for a non-empty array; Error when the file cannot be written (see `npy::save`).
inline void save(const std::string& path, const std::vector<Entry>& entries,
                 Compression compression = Compression::stored) {
  std::vector<std::string> heads;
  heads.reserve(entries.size());
  std::vector<std::vector<std::byte>> deflated;
  deflated.reserve(entries.size());
  std::vector<resident::detail::ZipMemberToWrite> members;
  for (const Entry& entry : entries) {
    const std::string name = entry.key + ".npy";
    detail::refuse_unless_key(path, entry.key);
    if (std::any_of(members.begin(), members.end(),
                    [&name](const resident::detail::ZipMemberToWrite& saved) {
                      return saved.name == name;
                    }))
      throw InvalidArgument("resident: key '" + entry.key + "' is given twice for " + path +
                            "; give each array a key of its own");
    const std::size_t bytes = resident::detail::checked_shape_bytes(
        entry.shape, npy::dtype_size(entry.dtype), "npz member byte size");
    npy::detail::refuse_null_data(path, "key '" + entry.key + "'", entry.data, bytes);
    heads.push_back(npy::detail::prefix_bytes(entry.dtype, entry.shape));
    const std::vector<resident::detail::ByteSpan> image{{heads.back().data(), heads.back().size()},
                                                        {entry.data, bytes}};
    resident::detail::ZipMemberToWrite member;
    member.name = name;
    member.uncompressed_size = image[0].size + image[1].size;
    member.crc32 = resident::detail::crc32_of(
        static_cast<const std::byte*>(image[1].data), image[1].size,
        resident::detail::crc32_of(static_cast<const std::byte*>(image[0].data), image[0].size));
    if (compression == Compression::deflated) {
      deflated.push_back(resident::detail::deflate_spans(image));
      member.method = resident::detail::ZipEntry::deflated;
      member.bytes = {{deflated.back().data(), deflated.back().size()}};
    } else {
      member.bytes = image;
    }
    members.push_back(std::move(member));
  }
  resident::detail::ZipRecordWriter records;
  std::vector<std::string> local_headers;
  local_headers.reserve(members.size());
  std::vector<resident::detail::ByteSpan> spans;
  for (const resident::detail::ZipMemberToWrite& member : members) {
    local_headers.push_back(records.local_header(member));
    spans.push_back({local_headers.back().data(), local_headers.back().size()});
    spans.insert(spans.end(), member.bytes.begin(), member.bytes.end());
  }
  const std::string directory = records.directory();
  spans.push_back({directory.data(), directory.size()});
  resident::detail::replace_file(path, spans);
}

}  // namespace resident::npz
