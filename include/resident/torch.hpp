// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// @brief `to_tensor`: a view of a dataset's allocation as a `torch::Tensor` (libtorch, PyTorch's
/// C++ frontend), zero-copy, with shared ownership: the tensor keeps the dataset's memory alive
/// after the dataset is gone. Needs libtorch (CMake: `find_package(Torch)` and
/// `${TORCH_LIBRARIES}`, or the `RESIDENT_WITH_TORCH` option of this project's own targets);
/// empty without it, so the rest of the library never depends on it.

#if __has_include(<torch/torch.h>)

#include <torch/torch.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <vector>

#include "resident/batch_view.hpp"
#include "resident/detail/expects.hpp"
#include "resident/space_traits.hpp"

namespace resident {

namespace detail {

/// Whether libtorch has a scalar type for elements of `T` (libtorch 1.13 has no unsigned type
/// wider than a byte).
template <class T>
inline constexpr bool has_torch_dtype =
    std::is_same_v<T, bool> || std::is_same_v<T, std::uint8_t> || std::is_same_v<T, std::int8_t> ||
    std::is_same_v<T, std::int16_t> || std::is_same_v<T, std::int32_t> ||
    std::is_same_v<T, std::int64_t> || std::is_same_v<T, float> || std::is_same_v<T, double>;

/// libtorch's scalar type for elements of `T`.
template <class T>
constexpr c10::ScalarType torch_dtype() noexcept {
  static_assert(has_torch_dtype<T>,
                "libtorch has no scalar type for this element type (1.13 has no uint16, uint32 "
                "or uint64): convert the field while gathering (resident::convert) or store it "
                "as a signed type of the same width or wider");
  if constexpr (std::is_same_v<T, bool>) return torch::kBool;
  if constexpr (std::is_same_v<T, std::uint8_t>) return torch::kUInt8;
  if constexpr (std::is_same_v<T, std::int8_t>) return torch::kInt8;
  if constexpr (std::is_same_v<T, std::int16_t>) return torch::kInt16;
  if constexpr (std::is_same_v<T, std::int32_t>) return torch::kInt32;
  if constexpr (std::is_same_v<T, std::int64_t>) return torch::kInt64;
  if constexpr (std::is_same_v<T, float>) return torch::kFloat32;
  return torch::kFloat64;
}

/// The device a space's memory is on, as libtorch names it: a CUDA device's, or the host's
/// (page-locked host memory included, which libtorch reads as CPU memory).
template <class Space>
torch::Device torch_device(const Space& space) {
  constexpr int dlpack_cuda = 2;  // kDLCUDA
  if constexpr (space_traits<Space>::dlpack_device_type == dlpack_cuda)
    return {torch::kCUDA,
            static_cast<c10::DeviceIndex>(space_traits<Space>::dlpack_device_id(space))};
  else
    return torch::kCPU;
}

}  // namespace detail

/// @brief `view` (a field, or a zero-copy batch, of `dataset`: a `DeviceDataset` or a
/// `TokenDataset`) as a `torch::Tensor`: zero-copy, of `view.shape()`, contiguous, the dtype of
/// `T` and the device of the dataset's space (`kCUDA` with its index, or `kCPU`). The tensor
/// shares the dataset's allocation (`storage_owner()`): its memory stays valid while the tensor
/// lives, even after the dataset is destroyed. Read it only; the dataset's memory is const.
/// @note On `CudaSpace` the upload completed before the dataset was made, so a view needs no
/// stream order.
/// @throws InvalidArgument when `dataset` was moved from, or `view` is not inside its own
/// allocation (another dataset's view, or a batch gathered into an epoch's ring, whose slots
/// are reused every `ring_depth` batches).
template <class Dataset, class T>
[[nodiscard]] torch::Tensor to_tensor(const Dataset& dataset, BatchView<const T> view) {
  RESIDENT_EXPECTS(!dataset.moved_from(),
                   "to_tensor() was given a moved-from dataset, which holds no data; make the "
                   "tensor from the dataset the data was moved to");
  std::shared_ptr<const void> storage = dataset.storage_owner();
  const auto* base = static_cast<const std::byte*>(storage.get());
  const auto* first = reinterpret_cast<const std::byte*>(view.data());
  RESIDENT_EXPECTS(view.bytes() == 0 || (base != nullptr && first >= base &&
                                         first + view.bytes() <= base + dataset.bytes()),
                   "to_tensor() makes tensors of this dataset's own allocation (a field or a "
                   "zero-copy batch of it), but the view lies outside it: it is another "
                   "dataset's, or a gathering epoch's ring slot (reused every ring_depth "
                   "batches: clone such a tensor to keep it); pass the dataset the view came from");
  const Shape shape = view.shape();
  std::vector<std::int64_t> sizes(shape.rank());
  for (std::size_t axis = 0; axis < shape.rank(); ++axis)
    sizes[axis] = static_cast<std::int64_t>(shape[axis]);
  return torch::from_blob(
      const_cast<T*>(
          view.data()),  // NOLINT: libtorch takes mutable memory; documented as read-only
      sizes, [storage](void* /*data*/) {},  // the tensor's last reference releases the share
      torch::TensorOptions()
          .dtype(detail::torch_dtype<std::remove_cv_t<T>>())
          .device(detail::torch_device(dataset.space())));
}

}  // namespace resident

#endif  // __has_include(<torch/torch.h>)
