// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// @brief From `.npy` files, or the members of an `.npz` archive, to a dataset in one call:
/// `load_dataset` uploads them into a `DeviceDataset`, `load_streaming_dataset` streams them
/// through a `StreamingDataset`.

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "resident/dataset_options.hpp"
#include "resident/detail/file_io.hpp"
#include "resident/detail/inflate.hpp"
#include "resident/detail/layout.hpp"
#include "resident/detail/row_source.hpp"
#include "resident/detail/upload_plan.hpp"
#include "resident/device_dataset.hpp"
#include "resident/error.hpp"
#include "resident/npy.hpp"
#include "resident/npz.hpp"
#include "resident/progress.hpp"
#include "resident/streaming_dataset.hpp"

namespace resident {

namespace detail {

template <class Space, class... Ts, std::size_t... Field>
DeviceDataset<Space, Ts...> dataset_from_arrays(Space space, const DatasetOptions& options,
                                                const std::array<npy::Array, sizeof...(Ts)>& arrays,
                                                std::index_sequence<Field...> /*fields*/) {
  return DeviceDataset<Space, Ts...>(std::move(space), options, arrays[Field].template as<Ts>()...);
}

}  // namespace detail

/// @brief Loads one `.npy` file per field and uploads them:
/// `load_dataset<CudaSpace, std::uint8_t, std::int32_t>(CudaSpace{0}, options, "x.npy", "y.npy")`.
/// Every file is read and checked against `Ts...` (dtype, rank) and against the others (rows)
/// before any memory of the space is touched; the files are mapped, not copied, where they can
/// be, and released once the upload is done. Between upload chunks each mapped file is checked
/// against what it was when loaded: a file removed, replaced, truncated or modified meanwhile
/// gives a `FormatError` (and nothing of the dataset is kept). A file truncated in place while
/// a chunk is being copied from it still faults (SIGBUS), as any mapped file does: replace
/// files by a rename, as `npy::save` does, never in place.
/// @throws FormatError for a malformed file, a dtype that is not the field's type, or a file that
/// changed during the upload;
/// InvalidArgument when the files disagree on rows; whatever the constructor throws.
template <class Space, class... Ts, class... Paths>
DeviceDataset<Space, Ts...> load_dataset(Space space, const DatasetOptions& options,
                                         const Paths&... paths) {
  static_assert(sizeof...(Ts) >= 1, "name the field types: load_dataset<Space, float, int>(...)");
  static_assert(sizeof...(Paths) == sizeof...(Ts), "give one .npy path per field type");
  const std::array<npy::Array, sizeof...(Ts)> arrays{npy::load(std::string(paths))...};
  // The upload reads the files through their mappings: after each chunk (the caller's callback
  // included, which may be what changed them) a file that changed is refused before the next
  // chunk reads a mapping that may no longer be backed.
  DatasetOptions checked = options;
  checked.on_progress = [&arrays, callback = options.on_progress](const Progress& progress) {
    const bool go_on = !callback || callback(progress);
    for (const npy::Array& array : arrays) array.check_unchanged("while it was uploaded");
    return go_on;
  };
  return detail::dataset_from_arrays<Space, Ts...>(std::move(space), checked, arrays,
                                                   std::index_sequence_for<Ts...>{});
}

namespace detail {

/// One open `.npy` file per field (regular files only: see `ReadFile`).
template <std::size_t Fields>
using FieldFiles = std::array<std::shared_ptr<const ReadFile>, Fields>;

template <class... Paths>
FieldFiles<sizeof...(Paths)> open_field_files(const Paths&... paths) {
  return {std::make_shared<const ReadFile>(std::string(paths))...};
}

/// Refuses the header of field `field`'s array (`what`: "the array", "member 'x.npy'") when its
/// dtype is not `expected` or it has no rows.
inline void check_field_header(const std::string& path, std::size_t offset, const std::string& what,
                               const npy::Header& header, std::size_t field, npy::DType expected) {
  if (header.dtype != expected)
    throw FormatError(path, offset,
                      what + " holds " + npy::dtype_code(header.dtype) + " elements but field " +
                          std::to_string(field) + " is " + npy::dtype_code(expected) +
                          "; use the matching C++ type or convert the file");
  if (header.shape.rank() == 0)
    throw FormatError(path, offset, what + " is 0-d and has no rows; save it with shape (1,)");
}

/// The headers of the open `.npy` files, one per field, checked against the fields' types and
/// for rows.
template <class... Ts>
std::array<npy::Header, sizeof...(Ts)> read_field_headers(const FieldFiles<sizeof...(Ts)>& files) {
  std::array<npy::Header, sizeof...(Ts)> headers;
  constexpr std::array<npy::DType, sizeof...(Ts)> dtypes{npy::dtype_of<Ts>()...};
  for (std::size_t field = 0; field < sizeof...(Ts); ++field) {
    headers[field] = npy::detail::read_header(*files[field]);
    check_field_header(files[field]->path(), 0, "the array", headers[field], field, dtypes[field]);
  }
  return headers;
}

/// Refuses to stream an array that is not little-endian C-order: its rows are read as they lie.
/// `context` begins the reason ("member 'x.npy': ").
inline void refuse_unless_streamable(const std::string& path, std::size_t offset,
                                     const npy::Header& header, const std::string& context = {}) {
  if (!header.native_c_order())
    throw FormatError(path, offset,
                      context +
                          "streaming reads rows straight from the file, which needs little-endian "
                          "C-order data; re-save it with numpy.ascontiguousarray(a).astype('<" +
                          std::string(npy::dtype_code(header.dtype)) + "')");
}

/// A streaming dataset over rows read from files: field `f`'s array, whose header is
/// `headers[f]`, begins at byte `image_offsets[f]` of `files[f]`.
template <class Space, class... Ts, std::size_t... Field>
StreamingDataset<Space, Ts...> stream_rows(
    Space space, const DatasetOptions& options,
    const std::array<npy::Header, sizeof...(Ts)>& headers,
    const std::array<std::shared_ptr<const ReadFile>, sizeof...(Ts)>& files,
    const std::array<std::size_t, sizeof...(Ts)>& image_offsets,
    std::index_sequence<Field...> /*fields*/) {
  const auto layout =
      make_layout<sizeof...(Ts)>(options, {headers[Field].shape...}, {sizeof(Ts)...});
  return StreamFromSources<Space, Ts...>::make(
      std::move(space), options, layout,
      std::array<RowSource, sizeof...(Ts)>{
          RowSource::file(files[Field], image_offsets[Field] + headers[Field].data_offset,
                          headers[Field].shape[0], layout.row_bytes[Field])...},
      std::array<Shape, sizeof...(Ts)>{headers[Field].shape.drop_front()...});
}

// The rows are read from the descriptors the headers were read from: a file put at the path
// in between can never be streamed on the strength of another file's header.
template <class Space, class... Ts>
StreamingDataset<Space, Ts...> stream_files(Space space, const DatasetOptions& options,
                                            const FieldFiles<sizeof...(Ts)>& files) {
  const auto headers = read_field_headers<Ts...>(files);
  for (std::size_t field = 0; field < sizeof...(Ts); ++field)
    refuse_unless_streamable(files[field]->path(), 0, headers[field]);
  return stream_rows<Space, Ts...>(std::move(space), options, headers, files, {},
                                   std::index_sequence_for<Ts...>{});
}

}  // namespace detail

/// @brief Streams `.npy` files, one per field, never reading more of them than a chunk at a
/// time (so they may exceed the host's memory too):
/// `load_streaming_dataset<CudaSpace, std::uint8_t, std::int32_t>(space, options, "x.npy",
/// "y.npy")`. The files are checked (regular file, header, dtype, length, rows) before the space
/// is touched and held open; each read checks that its file is still the one opened: a file
/// removed or replaced (renamed over), truncated or extended, or modified (its modification time
/// changed, even by a touch that kept its bytes) since is refused. Keep streamed files unchanged
/// until the dataset is destroyed.
/// @throws FormatError for a path that is not a regular file (a FIFO, socket, device or
/// directory: refused before anything blocks), a malformed, mistyped, big-endian or Fortran-order
/// file; InvalidArgument when the files disagree on rows; whatever the constructor throws; and,
/// from the batches, FormatError when a file changed while streaming.
template <class Space, class... Ts, class... Paths>
StreamingDataset<Space, Ts...> load_streaming_dataset(Space space, const DatasetOptions& options,
                                                      const Paths&... paths) {
  static_assert(sizeof...(Ts) >= 1,
                "name the field types: load_streaming_dataset<Space, float, int>(...)");
  static_assert(sizeof...(Paths) == sizeof...(Ts), "give one .npy path per field type");
  return detail::stream_files<Space, Ts...>(std::move(space), options,
                                            detail::open_field_files(paths...));
}

namespace detail {

/// The keys of the archive members a dataset is made of, one per field.
template <std::size_t Fields>
using MemberKeys = std::array<std::string, Fields>;

/// The members of `archive` named by `keys`, checked against the fields' types and for rows.
template <class... Ts>
std::array<const npz::Member*, sizeof...(Ts)> field_members(const npz::Archive& archive,
                                                            const MemberKeys<sizeof...(Ts)>& keys) {
  std::array<const npz::Member*, sizeof...(Ts)> members{};
  constexpr std::array<npy::DType, sizeof...(Ts)> dtypes{npy::dtype_of<Ts>()...};
  for (std::size_t field = 0; field < sizeof...(Ts); ++field) {
    members[field] = &archive.member(keys[field]);
    check_field_header(archive.path(), members[field]->offset,
                       "member '" + members[field]->name + "'", members[field]->header, field,
                       dtypes[field]);
  }
  return members;
}

/// The layout of a dataset of `members`, from their headers alone.
template <class... Ts>
DatasetLayout<sizeof...(Ts)> member_layout(
    const DatasetOptions& options, const std::array<const npz::Member*, sizeof...(Ts)>& members) {
  std::array<Shape, sizeof...(Ts)> shapes;
  for (std::size_t field = 0; field < sizeof...(Ts); ++field)
    shapes[field] = members[field]->shape();
  return make_layout<sizeof...(Ts)>(options, shapes, {sizeof(Ts)...});
}

/// @brief Where one field's bytes come from when its dataset is uploaded from an archive: a
/// stored little-endian C-order member's mapping (nothing copied on the host), a deflated one's
/// inflater (inflated block by block into the upload's staging memory), or else the member read
/// and converted into host memory (big-endian or Fortran-order data). Stays where it was made:
/// the upload holds a pointer to its inflating reader.
class MemberUpload {
 public:
  MemberUpload(const npz::Archive& archive, const npz::Member& member) {
    const npy::Header& header = member.header;
    const std::size_t bytes = header.data_bytes();
    if (header.native_c_order() && member.compressed) {
      inflater_ =
          std::make_shared<MemberInflater>(archive.impl_file(), archive.impl_entry(member.name));
      read_ = [inflater = inflater_, header,
               fail = npz::detail::MemberFail{archive.path(), member.name, member.offset, true}](
                  std::size_t first, std::size_t count, std::byte* into) {
        inflater->read(header.data_offset + first, count, into);
        if (header.dtype == npy::DType::b1)
          npy::detail::check_bools(into, count, header.data_offset + first, fail);
      };
      source_.streamed = &read_;
      return;
    }
    if (header.native_c_order() && bytes != 0) {
      if (archive.options().verify_stored_crc) archive.verify_crc(member.name);
      MappedRange mapping =
          MappedRange::of(*archive.impl_file(), member.offset + header.data_offset, bytes);
      if (mapping.owner) {
        archive.check_unchanged("while it was loaded");
        if (header.dtype == npy::DType::b1)
          npy::detail::check_bools(
              mapping.data, bytes, member.offset + header.data_offset,
              npz::detail::MemberFail{archive.path(), member.name, member.offset, false});
        source_.memory = mapping.data;
        mapping_ = std::move(mapping.owner);
        return;
      }
    }
    array_ = archive.load(member.name);
    source_.memory = array_.data();
  }
  MemberUpload(const MemberUpload&) = delete;
  MemberUpload& operator=(const MemberUpload&) = delete;

  [[nodiscard]] FieldSource source() const noexcept { return source_; }

  /// Inflates what the upload left of a deflated member and checks its end and its CRC-32.
  void finish() const {
    if (inflater_) inflater_->finish();
  }

 private:
  npy::Array array_;                          // a member read into memory
  std::shared_ptr<const void> mapping_;       // or a stored member's mapping
  std::shared_ptr<MemberInflater> inflater_;  // or a deflated member's inflater...
  StreamedBytes read_;                        // ...read through this
  FieldSource source_;
};

}  // namespace detail

/// @brief Loads members of an `.npz` archive, one per field, and uploads them:
/// `load_dataset<CudaSpace, std::uint8_t, std::uint8_t>(space, options, "mnist.npz",
/// {"x_train", "y_train"})` (keys, or names with ".npy"). The plan is made from the members'
/// headers; the space's capacity is checked before any data is read or inflated. A stored member
/// (`numpy.savez`) with little-endian C-order data is mapped in place and copied into the upload
/// from the mapping, as a `.npy` file is; a deflated one (`numpy.savez_compressed`) is inflated
/// block by block straight into the upload's staging memory, never whole into the host's, and
/// its CRC-32 checked at the end (the parts of it a rank does not store are inflated too, to
/// check it); big-endian or Fortran-order members are read into host memory and converted
/// first. Between upload blocks the archive is checked for changes, as `.npy` files are.
/// @throws FormatError for a malformed archive or member (see `npz::Archive`), a CRC mismatch, a
/// member whose dtype is not the field's type, or an archive that changed during the upload;
/// InvalidArgument for an unknown key or members that disagree on rows; CapacityError when the
/// data does not fit; whatever the constructor throws.
template <class Space, class... Ts>
DeviceDataset<Space, Ts...> load_dataset(Space space, const DatasetOptions& options,
                                         const npz::Archive& archive,
                                         const detail::MemberKeys<sizeof...(Ts)>& keys) {
  static_assert(sizeof...(Ts) >= 1, "name the field types: load_dataset<Space, float, int>(...)");
  constexpr std::size_t fields = sizeof...(Ts);
  const auto members = detail::field_members<Ts...>(archive, keys);
  // The figures come from the headers: a member that would not fit is never inflated.
  const detail::CapacityVerdict verdict =
      detail::check_capacity(space, detail::reserve_for(space, options),
                             detail::member_layout<Ts...>(options, members).total_bytes);
  if (!verdict.fits) throw verdict.refusal();
  std::array<std::unique_ptr<detail::MemberUpload>, fields> uploads;
  detail::FieldSources<fields> sources;
  for (std::size_t field = 0; field < fields; ++field) {
    uploads[field] = std::make_unique<detail::MemberUpload>(archive, *members[field]);
    sources.shapes[field] = members[field]->shape();
    sources.sources[field] = uploads[field]->source();
  }
  DatasetOptions checked = options;
  checked.on_progress = [&archive, callback = options.on_progress](const Progress& progress) {
    const bool go_on = !callback || callback(progress);
    archive.check_unchanged("while it was uploaded");
    return go_on;
  };
  DeviceDataset<Space, Ts...> dataset(std::move(space), checked, sources);
  for (const auto& upload : uploads) upload->finish();
  return dataset;
}

/// @brief `load_dataset` over the archive at `archive` (opened with default `ArchiveOptions`).
template <class Space, class... Ts>
DeviceDataset<Space, Ts...> load_dataset(Space space, const DatasetOptions& options,
                                         const std::string& archive,
                                         const detail::MemberKeys<sizeof...(Ts)>& keys) {
  return load_dataset<Space, Ts...>(std::move(space), options, npz::Archive(archive), keys);
}

/// @brief Streams members of an `.npz` archive, one per field, as `.npy` files are streamed:
/// stored members (`numpy.savez`) with little-endian C-order data, read by offset from the
/// archive chunk by chunk, each read checking that the archive is unchanged.
/// @throws FormatError for a deflated member (`numpy.savez_compressed`): a streaming dataset
/// reads its chunks in any order, which a deflate stream gives only by inflating from its start
/// each time, so it is refused rather than made slow (save with `numpy.savez`, or preload with
/// `load_dataset`); for a big-endian or Fortran-order member, and what `load_dataset` refuses.
template <class Space, class... Ts>
StreamingDataset<Space, Ts...> load_streaming_dataset(
    Space space, const DatasetOptions& options, const npz::Archive& archive,
    const detail::MemberKeys<sizeof...(Ts)>& keys) {
  static_assert(sizeof...(Ts) >= 1,
                "name the field types: load_streaming_dataset<Space, float, int>(...)");
  constexpr std::size_t fields = sizeof...(Ts);
  const auto members = detail::field_members<Ts...>(archive, keys);
  std::array<npy::Header, fields> headers;
  std::array<std::shared_ptr<const detail::ReadFile>, fields> files;
  std::array<std::size_t, fields> offsets{};
  for (std::size_t field = 0; field < fields; ++field) {
    const npz::Member& member = *members[field];
    const std::string context = npz::detail::member_reason(member.name, "");
    if (member.compressed)
      throw FormatError(archive.path(), member.offset,
                        context +
                            "it is deflated (numpy.savez_compressed), and a StreamingDataset "
                            "reads its chunks in any order, which a deflate stream gives only by "
                            "inflating from its start each time; save the archive with "
                            "numpy.savez (stored members stream), or preload it with load_dataset");
    detail::refuse_unless_streamable(archive.path(), member.offset, member.header, context);
    if (archive.options().verify_stored_crc) archive.verify_crc(member.name);
    headers[field] = member.header;
    files[field] = archive.impl_file();
    offsets[field] = member.offset;
  }
  return detail::stream_rows<Space, Ts...>(std::move(space), options, headers, files, offsets,
                                           std::index_sequence_for<Ts...>{});
}

/// @brief `load_streaming_dataset` over the archive at `archive` (default `ArchiveOptions`).
template <class Space, class... Ts>
StreamingDataset<Space, Ts...> load_streaming_dataset(
    Space space, const DatasetOptions& options, const std::string& archive,
    const detail::MemberKeys<sizeof...(Ts)>& keys) {
  return load_streaming_dataset<Space, Ts...>(std::move(space), options, npz::Archive(archive),
                                              keys);
}

}  // namespace resident
