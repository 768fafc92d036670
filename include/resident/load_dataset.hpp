// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// @brief From `.npy` files, or the members of an `.npz` archive, to a dataset in one call:
/// `load_dataset` uploads them into a `DeviceDataset`, `load_streaming_dataset` streams them
/// through a `StreamingDataset`, and `make_dataset` does either, as `plan()` (here for
/// archives' members) says.

#include <algorithm>
#include <array>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "resident/dataset.hpp"
#include "resident/dataset_options.hpp"
#include "resident/detail/dataset/layout.hpp"
#include "resident/detail/dataset/shard_geometry.hpp"
#include "resident/detail/format_bytes.hpp"
#include "resident/detail/host_memory.hpp"
#include "resident/detail/io/file_io.hpp"
#include "resident/detail/io/host_staging.hpp"
#include "resident/detail/io/inflate.hpp"
#include "resident/detail/io/zip_directory.hpp"
#include "resident/detail/stream/row_source.hpp"
#include "resident/detail/upload/upload_plan.hpp"
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

/// @brief One field's rows, found and checked, before the loader decides where they stream
/// from: an array (`header`) whose `.npy` image begins at byte `image_offset` of `file` (a
/// `.npy` file, or a stored member of an archive), or in a deflated member of the archive
/// `file` (`deflated`).
struct FieldRows {
  std::shared_ptr<const ReadFile> file;  ///< The `.npy` file or the archive, open.
  std::size_t image_offset = 0;          ///< Where the `.npy` image (or the member's bytes) begins.
  npy::Header header;                    ///< The array's header (offsets within the image).
  std::optional<ZipEntry> deflated{};    ///< The member, when its bytes are deflated.
  std::string member{};                  ///< The member's name; empty for a `.npy` file.

  /// What the rows are, for messages: "x.npy", "member 'x.npy' of a.npz".
  [[nodiscard]] std::string what() const {
    return member.empty() ? file->path() : "member '" + member + "' of " + file->path();
  }
};

/// @brief Refuses to stream deflated members unless they can be inflated once into host
/// memory: their rows (`inflated` bytes) must fit in the host's `available` bytes.
/// @throws FormatError at the first deflated member, saying what to do.
template <std::size_t Fields>
void refuse_deflated_unless_inflatable(const std::array<FieldRows, Fields>& fields,
                                       std::size_t inflated, std::size_t available) {
  const auto first = std::find_if(fields.begin(), fields.end(),
                                  [](const FieldRows& rows) { return rows.deflated.has_value(); });
  if (first == fields.end()) return;
  const std::string deflated =
      npz::detail::member_reason(first->member, "it is deflated (numpy.savez_compressed), ");
  if (inflated > available) {
    const bool others = std::count_if(fields.begin(), fields.end(), [](const FieldRows& rows) {
                          return rows.deflated.has_value();
                        }) > 1;
    throw FormatError(
        first->file->path(), first->image_offset,
        deflated + "so it streams from host memory, inflated once when the dataset is made; it " +
            "would need " + std::to_string(inflated) + " bytes (" + format_bytes(inflated) +
            ") of host memory for its inflated rows" +
            (others ? " and those of the other deflated members" : "") + ", " +
            std::to_string(available) + " bytes (" + format_bytes(available) +
            ") are available; free host memory, save the archive uncompressed with numpy.savez "
            "(stored members stream from the file), or preload it with load_dataset");
  }
}

/// @brief The order a stream of `layout`'s rows from files takes (what `sources_of` decides
/// for files, from the same figures): `window` when asked for, or in automatic order when this
/// rank's rows do not fit in half of the host's available memory; else `whole_epoch`.
template <std::size_t Fields>
StreamOrder file_stream_order(StreamOrder order, const DatasetLayout<Fields>& layout) {
  if (order != StreamOrder::automatic) return order;
  const RowRange range = streamed_source_rows(layout.geometry, layout.source_rows);
  std::size_t bytes = 0;
  for (std::size_t field = 0; field < Fields; ++field)
    bytes += range.rows * layout.row_bytes[field];
  return bytes <= host_available_bytes() / 2 ? StreamOrder::whole_epoch : StreamOrder::window;
}

/// @brief Where a stream of `layout`'s rows from files reads them, by `order` (see
/// `StreamRows`): deflated fields (`deflated[field]`) from host memory they are inflated into
/// once; the others, in whole-epoch order, in place from the files' mappings (those whose
/// data is aligned for its type: `mappable[field]`; the others read once into host memory),
/// else from the files a chunk at a time. Counts the rows this rank streams
/// (`streamed_source_rows`).
template <std::size_t Fields>
StreamRows file_stream_rows(StreamOrder order, const DatasetLayout<Fields>& layout,
                            const std::array<bool, Fields>& deflated,
                            const std::array<bool, Fields>& mappable) {
  StreamRows rows{file_stream_order(order, layout), true, 0, 0};
  const RowRange range = streamed_source_rows(layout.geometry, layout.source_rows);
  for (std::size_t field = 0; field < Fields; ++field) {
    const std::size_t bytes = range.rows * layout.row_bytes[field];
    if (deflated[field] || (rows.order == StreamOrder::whole_epoch && !mappable[field]))
      rows.owned_bytes += bytes;
    else if (rows.order == StreamOrder::whole_epoch)
      rows.mapped_bytes += bytes;
  }
  return rows;
}

/// @brief Where each field's rows stream from, by `order` (see `StreamOrder`), counting only
/// the rows this rank streams (`streamed_source_rows`): deflated members are inflated once into
/// host memory, in the background (where they fit in the host's available memory; reads wait
/// for their rows, and `on_progress` hears of each step);
/// rows in files are read in place from the files' mappings in whole-epoch order, and in
/// automatic order where they fit in half of what the inflated rows leave of the host's available
/// memory (the page cache holds them; the other half is the training process's), else read from
/// their files chunk by chunk. A mapping is read ahead in the background when `read_ahead`.
/// @throws FormatError for deflated members that cannot be inflated, a read that fails or
/// finds a file changed; what `inflate_rows` throws.
template <std::size_t Fields>
std::array<RowSource, Fields> sources_of(const std::array<FieldRows, Fields>& fields,
                                         const DatasetLayout<Fields>& layout, StreamOrder order,
                                         bool read_ahead,
                                         const ProgressCallback& on_progress = {}) {
  const RowRange range = streamed_source_rows(layout.geometry, layout.source_rows);
  std::size_t inflated = 0;
  std::size_t in_files = 0;
  bool any_deflated = false;
  for (std::size_t field = 0; field < Fields; ++field) {
    const std::size_t bytes = range.rows * layout.row_bytes[field];  // at most the file's bytes
    any_deflated = any_deflated || fields[field].deflated.has_value();
    (fields[field].deflated ? inflated : in_files) += bytes;
  }
  const bool asks_host = any_deflated || order == StreamOrder::automatic;
  const std::size_t available = asks_host ? host_available_bytes() : 0;
  refuse_deflated_unless_inflatable(fields, inflated, available);
  const std::size_t left = asks_host ? available - inflated : 0;
  const bool map_files = order == StreamOrder::whole_epoch ||
                         (order == StreamOrder::automatic && in_files <= left / 2);
  // One report for every deflated member's inflating, as one upload reports its fields.
  const auto progress =
      any_deflated ? std::make_shared<FillProgress>(inflated, on_progress) : nullptr;

  std::array<RowSource, Fields> sources;
  for (std::size_t field = 0; field < Fields; ++field) {
    const FieldRows& rows = fields[field];
    const npy::Header& header = rows.header;
    const std::size_t row_bytes = layout.row_bytes[field];
    if (rows.deflated) {
      std::function<void(const std::byte*, std::size_t, std::size_t)> check;
      if (header.dtype == npy::DType::b1)  // as an upload from the member checks them
        check = [fail = npz::detail::MemberFail{rows.file->path(), rows.member, rows.image_offset,
                                                true}](const std::byte* bytes, std::size_t count,
                                                       std::size_t offset) {
          npy::detail::check_bools(bytes, count, offset, fail);
        };
      sources[field] = inflate_rows(rows.file, *rows.deflated, header.data_offset, header.shape[0],
                                    row_bytes, range, std::move(check), progress);
      continue;
    }
    const std::size_t data_offset = rows.image_offset + header.data_offset;
    sources[field] = map_files
                         ? map_rows(rows.file, data_offset, header.shape[0], row_bytes,
                                    npy::dtype_size(header.dtype), range, read_ahead, rows.what())
                         : RowSource::file(rows.file, data_offset, header.shape[0], row_bytes);
  }
  return sources;
}

/// A streaming dataset over `fields`' rows (see `sources_of`).
template <class Space, class... Ts, std::size_t... Field>
StreamingDataset<Space, Ts...> stream_rows(Space space, const DatasetOptions& options,
                                           const std::array<FieldRows, sizeof...(Ts)>& fields,
                                           std::index_sequence<Field...> /*fields*/) {
  const auto layout =
      make_layout<sizeof...(Ts)>(options, {fields[Field].header.shape...}, {sizeof(Ts)...});
  return FromSources::make<StreamingDataset<Space, Ts...>>(
      std::move(space), options, layout,
      sources_of(fields, layout, options.streaming.order, options.streaming.read_ahead,
                 options.on_progress),
      std::array<Shape, sizeof...(Ts)>{fields[Field].header.shape.drop_front()...});
}

// The rows are read from the descriptors the headers were read from: a file put at the path
// in between can never be streamed on the strength of another file's header.
template <class Space, class... Ts>
StreamingDataset<Space, Ts...> stream_files(Space space, const DatasetOptions& options,
                                            const FieldFiles<sizeof...(Ts)>& files) {
  const auto headers = read_field_headers<Ts...>(files);
  std::array<FieldRows, sizeof...(Ts)> fields;
  for (std::size_t field = 0; field < sizeof...(Ts); ++field) {
    refuse_unless_streamable(files[field]->path(), 0, headers[field]);
    fields[field].file = files[field];
    fields[field].header = headers[field];
  }
  return stream_rows<Space, Ts...>(std::move(space), options, fields,
                                   std::index_sequence_for<Ts...>{});
}

}  // namespace detail

/// @brief Streams `.npy` files, one per field:
/// `load_streaming_dataset<CudaSpace, std::uint8_t, std::int32_t>(space, options, "x.npy",
/// "y.npy")`. By `StreamOptions::order`: `window` reads the files a chunk at a time, never
/// more (so they may exceed the host's memory too); `whole_epoch` reads the rows in place from
/// the files' mappings, read ahead in the background (`StreamOptions::read_ahead`);
/// `automatic` does that where they fit in half of the host's available memory, else streams
/// windows. Making the dataset reads the headers only. The files are checked (regular file,
/// header, dtype, length, rows) before the space is touched and held open; each read (and each
/// batch gathered from a mapping) checks that its file is still the one opened: a file removed
/// or replaced (renamed over), truncated or extended, or modified (its modification time
/// changed, even by a touch that kept its bytes) since is refused, and what was read is never
/// served. Keep streamed files unchanged until the dataset is destroyed.
/// @throws FormatError for a path that is not a regular file (a FIFO, socket, device or
/// directory: refused before anything blocks), a malformed, mistyped, big-endian or Fortran-order
/// file, or one that changed while it was read; InvalidArgument when the files disagree on rows;
/// whatever the
/// constructor throws; and, from the batches, FormatError when a file changed while streaming.
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
  auto dataset =
      detail::FromSources::make<DeviceDataset<Space, Ts...>>(std::move(space), checked, sources);
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
/// stored members (`numpy.savez`) with little-endian C-order data are read by offset from the
/// archive (or in place from its mapping: see `StreamOptions::order`), each read checking that
/// the archive is unchanged. A deflated member (`numpy.savez_compressed`) is inflated once,
/// in the background from when the dataset is made, into host memory the dataset owns, and
/// streamed from there in either order (its size and CRC-32 checked as `load_dataset` checks
/// them): a deflate stream reads only front to back, and the chunks of an epoch are read in any
/// order. A batch waits for its own rows only; `DatasetOptions::on_progress` hears of each step
/// of the inflating, on the inflating thread, and `false` stops it (a batch past the inflated
/// rows then throws `Cancelled`). A rank of a partitioned job keeps only the rows it streams
/// (the whole member is still inflated, to check it).
/// @throws FormatError for a deflated member whose inflated rows are more than the host's
/// available memory (save with `numpy.savez`, or preload with `load_dataset`); for a
/// big-endian or Fortran-order member, and what `load_dataset` refuses; and, from the batches,
/// what inflating finds (corrupt deflate data, a wrong size or CRC-32, an archive changed).
template <class Space, class... Ts>
StreamingDataset<Space, Ts...> load_streaming_dataset(
    Space space, const DatasetOptions& options, const npz::Archive& archive,
    const detail::MemberKeys<sizeof...(Ts)>& keys) {
  static_assert(sizeof...(Ts) >= 1,
                "name the field types: load_streaming_dataset<Space, float, int>(...)");
  constexpr std::size_t fields = sizeof...(Ts);
  const auto members = detail::field_members<Ts...>(archive, keys);
  std::array<detail::FieldRows, fields> rows;
  for (std::size_t field = 0; field < fields; ++field) {
    const npz::Member& member = *members[field];
    detail::refuse_unless_streamable(archive.path(), member.offset, member.header,
                                     npz::detail::member_reason(member.name, ""));
    if (!member.compressed && archive.options().verify_stored_crc) archive.verify_crc(member.name);
    rows[field].file = archive.impl_file();
    rows[field].image_offset = member.offset;
    rows[field].header = member.header;
    rows[field].member = member.name;
    if (member.compressed) rows[field].deflated = archive.impl_entry(member.name);
  }
  return detail::stream_rows<Space, Ts...>(std::move(space), options, rows,
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

/// @brief `plan()` for `.npy` files, one per field: the figures `load_dataset` and
/// `make_dataset` decide with, from the files' headers alone (no data is read):
/// `plan<CudaSpace, std::uint8_t, std::int32_t>(space, options, "x.npy", "y.npy")`.
/// @throws FormatError for malformed or mistyped files; InvalidArgument as `plan()` does.
template <class Space, class... Ts, class... Paths,
          std::enable_if_t<(std::is_convertible_v<const Paths&, std::string> && ...), int> = 0>
[[nodiscard]] Plan plan(const Space& space, const DatasetOptions& options, const Paths&... paths) {
  static_assert(sizeof...(Ts) >= 1, "name the field types: plan<Space, float, int>(...)");
  static_assert(sizeof...(Paths) == sizeof...(Ts), "give one .npy path per field type");
  const auto headers = detail::read_field_headers<Ts...>(detail::open_field_files(paths...));
  std::array<Shape, sizeof...(Ts)> shapes;
  for (std::size_t field = 0; field < sizeof...(Ts); ++field) shapes[field] = headers[field].shape;
  const auto layout = detail::make_layout<sizeof...(Ts)>(options, shapes, {sizeof(Ts)...});
  std::array<bool, sizeof...(Ts)> mappable{};
  mappable.fill(true);  // a .npy file's data starts at a multiple of 64 bytes
  return detail::plan_layout(
      space, options, layout, {detail::element_kind<Ts>()...},
      detail::file_stream_rows(options.streaming.order, layout, {}, mappable));
}

/// @brief `make_dataset` for `.npy` files, one per field:
/// `make_dataset<CudaSpace, std::uint8_t, std::int32_t>(space, options, "x.npy", "y.npy")`.
/// Reads only the headers to plan; then maps and uploads the files (`load_dataset`) or streams
/// them (`load_streaming_dataset`), so files larger than the host's memory stream too. The
/// fallback and the refusals are those of the tensor overload.
/// @throws FormatError for malformed or mistyped files; what the chosen loader throws;
/// CapacityError when a rank of a replicated job would stream.
template <class Space, class... Ts, class... Paths,
          std::enable_if_t<(std::is_convertible_v<const Paths&, std::string> && ...), int> = 0>
Dataset<Space, Ts...> make_dataset(Space space, const DatasetOptions& options,
                                   const Paths&... paths) {
  static_assert(sizeof...(Ts) >= 1, "name the field types: make_dataset<Space, float, int>(...)");
  static_assert(sizeof...(Paths) == sizeof...(Ts), "give one .npy path per field type");
  const auto replan = [&](const DatasetOptions& planned) {
    return plan<Space, Ts...>(space, planned, paths...);
  };
  return detail::preload_or_stream<Dataset<Space, Ts...>>(
      options, replan(options),
      [&] { return load_dataset<Space, Ts...>(space, options, paths...); },
      [&](const DatasetOptions& streamed) {
        return load_streaming_dataset<Space, Ts...>(space, streamed, paths...);
      },
      replan);
}

/// @brief `plan()` for members of an `.npz` archive, one per field: the figures `load_dataset`
/// and `make_dataset` decide with, from the members' headers alone (no data is read or
/// inflated).
/// @throws what `load_dataset` throws for the archive and the keys before reading data;
/// InvalidArgument as `plan()` does.
template <class Space, class... Ts>
[[nodiscard]] Plan plan(const Space& space, const DatasetOptions& options,
                        const npz::Archive& archive,
                        const detail::MemberKeys<sizeof...(Ts)>& keys) {
  static_assert(sizeof...(Ts) >= 1, "name the field types: plan<Space, float, int>(...)");
  const auto members = detail::field_members<Ts...>(archive, keys);
  const auto layout = detail::member_layout<Ts...>(options, members);
  std::array<bool, sizeof...(Ts)> deflated{};
  std::array<bool, sizeof...(Ts)> mappable{};
  for (std::size_t field = 0; field < sizeof...(Ts); ++field) {
    deflated[field] = members[field]->compressed;
    mappable[field] =
        detail::mappable_at(members[field]->offset + members[field]->header.data_offset,
                            npy::dtype_size(members[field]->header.dtype));
  }
  return detail::plan_layout(
      space, options, layout, {detail::element_kind<Ts>()...},
      detail::file_stream_rows(options.streaming.order, layout, deflated, mappable));
}

/// @brief `plan()` for members of the archive at `archive` (default `ArchiveOptions`).
template <class Space, class... Ts>
[[nodiscard]] Plan plan(const Space& space, const DatasetOptions& options,
                        const std::string& archive, const detail::MemberKeys<sizeof...(Ts)>& keys) {
  return plan<Space, Ts...>(space, options, npz::Archive(archive), keys);
}

/// @brief `make_dataset` for members of an `.npz` archive, one per field:
/// `make_dataset<CudaSpace, std::uint8_t, std::uint8_t>(space, options, "mnist.npz",
/// {"x_train", "y_train"})`. Plans from the members' headers, then preloads
/// (`load_dataset`: stored members mapped, deflated ones inflated into the upload) or streams
/// (`load_streaming_dataset`: deflated members inflated once into host memory).
/// @throws FormatError for a malformed archive or a mistyped member, and when the data must be
/// streamed but a deflated member does not fit in host memory; what the chosen loader throws;
/// CapacityError when a rank
/// of a replicated job would stream.
template <class Space, class... Ts>
Dataset<Space, Ts...> make_dataset(Space space, const DatasetOptions& options,
                                   const npz::Archive& archive,
                                   const detail::MemberKeys<sizeof...(Ts)>& keys) {
  const auto replan = [&](const DatasetOptions& planned) {
    return plan<Space, Ts...>(space, planned, archive, keys);
  };
  return detail::preload_or_stream<Dataset<Space, Ts...>>(
      options, replan(options),
      [&] { return load_dataset<Space, Ts...>(space, options, archive, keys); },
      [&](const DatasetOptions& streamed) {
        return load_streaming_dataset<Space, Ts...>(space, streamed, archive, keys);
      },
      replan);
}

/// @brief `make_dataset` for members of the archive at `archive` (default `ArchiveOptions`).
template <class Space, class... Ts>
Dataset<Space, Ts...> make_dataset(Space space, const DatasetOptions& options,
                                   const std::string& archive,
                                   const detail::MemberKeys<sizeof...(Ts)>& keys) {
  return make_dataset<Space, Ts...>(std::move(space), options, npz::Archive(archive), keys);
}

}  // namespace resident
