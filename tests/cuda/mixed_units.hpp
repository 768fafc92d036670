// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// A program of two translation units, one compiled by nvcc (mixed_units_nvcc.cu) and one by g++
// (mixed_units_gxx.cpp), that share one dataset type and one epoch type: the nvcc unit makes a
// dataset and an epoch and hands both to the g++ unit, which reads them and makes epochs of
// its own. Both units must see one definition of each class (same name, same members), which
// tests/cuda/one_definition.py checks in the two objects.

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "resident/resident.hpp"

namespace mixed_units {

using Dataset = resident::DeviceDataset<resident::CudaSpace, float, std::int32_t>;
inline constexpr std::size_t rows = 1000;
inline constexpr std::size_t width = 8;
inline constexpr std::size_t batch_size = 100;
/// The conversion both units use: value / 4 - 1.
inline constexpr resident::Normalize normalize{0.25f, -1.0f};

/// The epoch type the nvcc unit makes (and so compiles the kernels of), field 0 normalised: the
/// type `epoch()` returns, as each unit names it.
using NormalizedEpoch = decltype(std::declval<Dataset&>().epoch(resident::EpochOptions{},
                                                                resident::convert<0>(normalize)));

/// Row r's features: r * width + e, for element e.
std::vector<float> features();
/// Row r's label: r.
std::vector<std::int32_t> labels();

/// Made in the nvcc unit: the dataset on device 0, over `features()` and `labels()`.
Dataset make_dataset();
/// Made in the nvcc unit: a `Shuffle::samples` epoch of `ds` with field 0 normalised.
NormalizedEpoch make_epoch(Dataset& ds, std::uint64_t epoch);

}  // namespace mixed_units
