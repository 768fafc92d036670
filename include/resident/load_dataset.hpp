// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// @brief `load_dataset`: from `.npy` files to a `DeviceDataset` in one call.

#include <array>
#include <string>
#include <utility>

#include "resident/dataset_options.hpp"
#include "resident/device_dataset.hpp"
#include "resident/npy.hpp"
#include "resident/progress.hpp"

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

}  // namespace resident
