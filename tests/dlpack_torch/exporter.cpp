// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
//
// resident_dlpack_exporter: a shared library with a C ABI (no Python headers needed, so that it
// loads into any Python through ctypes) that exports one field or batch of a small dataset
// through `resident::to_dlpack`, on the host or on a CUDA device, for test_dlpack_torch.py to
// hand to torch.from_dlpack (or numpy.from_dlpack on the host).
//
// The dataset: rows 0..rows-1, batch size `batch_size`; field 0 float32 (rows, 3), values
// 3 * row + column + 0.5; field 1 int32 (rows,), 1000 + row. It is destroyed before the call
// returns, so every export also shows that the tensor keeps the memory alive on its own.
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>
#include <tuple>
#include <vector>

#include "resident/dlpack.hpp"
#include "resident/resident.hpp"

#if !__has_include(<dlpack/dlpack.h>)
#error "resident_dlpack_exporter needs a DLPack header"
#endif

namespace {

std::string last_error;  // NOLINT(cppcoreguidelines-avoid-non-const-global-variables): C ABI

template <class Space>
resident::DLPackTensor* export_view(const Space& space, std::size_t rows, std::size_t batch_size,
                                    int field, long batch) {
  std::vector<float> features(rows * 3);
  std::vector<std::int32_t> labels(rows);
  for (std::size_t row = 0; row < rows; ++row) {
    for (std::size_t column = 0; column < 3; ++column)
      features[row * 3 + column] = static_cast<float>(row * 3 + column) + 0.5F;
    labels[row] = static_cast<std::int32_t>(1000 + row);
  }
  resident::DatasetOptions options;
  options.batch_size = batch_size;
  const resident::DeviceDataset<Space, float, std::int32_t> dataset(
      space, options, resident::HostTensor<const float>(features.data(), {rows, 3}),
      resident::HostTensor<const std::int32_t>(labels.data(), {rows}));
  if (batch < 0)
    return field == 0 ? resident::to_dlpack(dataset, dataset.template field<0>())
                      : resident::to_dlpack(dataset, dataset.template field<1>());
  const auto views = dataset.batch(static_cast<std::size_t>(batch));
  return field == 0 ? resident::to_dlpack(dataset, std::get<0>(views))
                    : resident::to_dlpack(dataset, std::get<1>(views));
}

}  // namespace

extern "C" {

/// The (major, minor) DLPack version of the header this library was built with, as
/// 100 * major + minor: a major of 1 or more means the export is a DLManagedTensorVersioned.
__attribute__((visibility("default"))) int resident_exporter_dlpack_version() {
#if defined(DLPACK_MAJOR_VERSION)
  return 100 * DLPACK_MAJOR_VERSION + DLPACK_MINOR_VERSION;
#else
  return DLPACK_VERSION / 100 * 100 + DLPACK_VERSION / 10 % 10;
#endif
}

/// CUDA devices this library sees (0 when it was built without CUDA, or there is none).
__attribute__((visibility("default"))) int resident_exporter_cuda_devices() {
#if RESIDENT_HAS_CUDA
  return resident::CudaSpace::device_count();
#else
  return 0;
#endif
}

/// Field `field` (0 or 1) of batch `batch` (or the whole field when `batch` < 0) of the dataset
/// above, on the host (`device` < 0) or on CUDA device `device`; the caller owns the tensor.
/// Null on failure, with resident_exporter_error() saying why.
__attribute__((visibility("default"))) void* resident_exporter_export(int device, std::size_t rows,
                                                                      std::size_t batch_size,
                                                                      int field, long batch) {
  try {
    last_error.clear();
    if (device < 0) return export_view(resident::HostSpace{}, rows, batch_size, field, batch);
#if RESIDENT_HAS_CUDA
    return export_view(resident::CudaSpace{device}, rows, batch_size, field, batch);
#else
    last_error = "this exporter was built without CUDA; export from the host (device -1)";
#endif
  } catch (const std::exception& error) {
    last_error = error.what();
  }
  return nullptr;
}

/// Why the last resident_exporter_export failed ("" when it did not).
__attribute__((visibility("default"))) const char* resident_exporter_error() {
  return last_error.c_str();
}

}  // extern "C"
