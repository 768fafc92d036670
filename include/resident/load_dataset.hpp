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
/// be, and released once the upload is done.
/// @throws FormatError for a malformed file or a dtype that is not the field's type;
/// InvalidArgument when the files disagree on rows; whatever the constructor throws.
template <class Space, class... Ts, class... Paths>
DeviceDataset<Space, Ts...> load_dataset(Space space, const DatasetOptions& options,
                                         const Paths&... paths) {
  static_assert(sizeof...(Ts) >= 1, "name the field types: load_dataset<Space, float, int>(...)");
  static_assert(sizeof...(Paths) == sizeof...(Ts), "give one .npy path per field type");
  const std::array<npy::Array, sizeof...(Ts)> arrays{npy::load(std::string(paths))...};
  return detail::dataset_from_arrays<Space, Ts...>(std::move(space), options, arrays,
                                                   std::index_sequence_for<Ts...>{});
}

}  // namespace resident
