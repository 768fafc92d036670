// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// @brief From `.npy` files to a dataset in one call: `load_dataset` uploads them into a
/// `DeviceDataset`, `load_streaming_dataset` streams them through a `StreamingDataset`.

#include <array>
#include <memory>
#include <string>
#include <utility>

#include "resident/dataset_options.hpp"
#include "resident/detail/file_io.hpp"
#include "resident/detail/layout.hpp"
#include "resident/detail/row_source.hpp"
#include "resident/device_dataset.hpp"
#include "resident/error.hpp"
#include "resident/npy.hpp"
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

/// The headers of the open `.npy` files, one per field, checked against the fields' types and
/// for rows.
template <class... Ts>
std::array<npy::Header, sizeof...(Ts)> read_field_headers(const FieldFiles<sizeof...(Ts)>& files) {
  std::array<npy::Header, sizeof...(Ts)> headers;
  std::array<std::string, sizeof...(Ts)> paths;
  constexpr std::array<npy::DType, sizeof...(Ts)> dtypes{npy::dtype_of<Ts>()...};
  for (std::size_t field = 0; field < sizeof...(Ts); ++field) {
    paths[field] = files[field]->path();
    headers[field] = npy::detail::read_header(*files[field]);
    const npy::Header& header = headers[field];
    if (header.dtype != dtypes[field])
      throw FormatError(paths[field], 0,
                        std::string("the array holds ") + npy::dtype_code(header.dtype) +
                            " elements but field " + std::to_string(field) + " is " +
                            npy::dtype_code(dtypes[field]) +
                            "; use the matching C++ type or convert the file");
    if (header.shape.rank() == 0)
      throw FormatError(paths[field], 0, "a 0-d array has no rows; save it with shape (1,)");
  }
  return headers;
}

// The rows are read from the descriptors the headers were read from: a file put at the path
// in between can never be streamed on the strength of another file's header.
template <class Space, class... Ts, std::size_t... Field>
StreamingDataset<Space, Ts...> stream_files(Space space, const DatasetOptions& options,
                                            const FieldFiles<sizeof...(Ts)>& files,
                                            std::index_sequence<Field...> /*fields*/) {
  const auto headers = read_field_headers<Ts...>(files);
  for (std::size_t field = 0; field < sizeof...(Ts); ++field) {
    const npy::Header& header = headers[field];
    if (header.big_endian || (header.fortran_order && header.shape.rank() > 1))
      throw FormatError(files[field]->path(), 0,
                        "streaming reads rows straight from the file, which needs little-endian "
                        "C-order data; re-save it with numpy.ascontiguousarray(a).astype('<" +
                            std::string(npy::dtype_code(header.dtype)) + "')");
  }
  const auto layout =
      make_layout<sizeof...(Ts)>(options, {headers[Field].shape...}, {sizeof(Ts)...});
  return StreamFromSources<Space, Ts...>::make(
      std::move(space), options, layout,
      std::array<RowSource, sizeof...(Ts)>{RowSource::file(files[Field], headers[Field].data_offset,
                                                           headers[Field].shape[0],
                                                           layout.row_bytes[Field])...},
      std::array<Shape, sizeof...(Ts)>{headers[Field].shape.drop_front()...});
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
                                            detail::open_field_files(paths...),
                                            std::index_sequence_for<Ts...>{});
}

}  // namespace resident
