// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// @brief Export a field or batch of a dataset as a DLPack tensor (PyTorch, JAX, CuPy, ...),
/// zero-copy, with shared ownership: the tensor keeps the dataset's memory alive after the
/// dataset is gone. Needs the DLPack header (Debian's `libdlpack-dev`); empty without it.

#if __has_include(<dlpack/dlpack.h>)
#include <dlpack/dlpack.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>

#include "resident/batch_view.hpp"
#include "resident/config.hpp"
#include "resident/device_dataset.hpp"
#include "resident/error.hpp"
#include "resident/space_traits.hpp"

#if RESIDENT_HAS_CUDA
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#endif

/// @brief 1 when the DLPack header has the versioned ABI (DLPack 1.0 and later).
#if defined(DLPACK_MAJOR_VERSION) && DLPACK_MAJOR_VERSION >= 1
#define RESIDENT_DLPACK_VERSIONED 1
#else
#define RESIDENT_DLPACK_VERSIONED 0
#endif

namespace resident {

#if RESIDENT_DLPACK_VERSIONED
/// @brief What `to_dlpack` returns: `DLManagedTensorVersioned`, flagged read-only.
using DLPackTensor = DLManagedTensorVersioned;
#else
/// @brief What `to_dlpack` returns: `DLManagedTensor` (this DLPack header predates 1.0).
using DLPackTensor = DLManagedTensor;
#endif

namespace detail {

template <class T>
constexpr DLDataType dlpack_dtype() noexcept {
  using U = std::remove_cv_t<T>;
  constexpr auto bits = static_cast<std::uint8_t>(sizeof(U) * 8);
  if constexpr (std::is_same_v<U, bool>) {
#if RESIDENT_DLPACK_VERSIONED || (defined(DLPACK_VERSION) && DLPACK_VERSION >= 80)
    return {kDLBool, 8, 1};  // 1.0 dropped DLPACK_VERSION for DLPACK_MAJOR/MINOR_VERSION
#else
    return {kDLUInt, 8, 1};  // DLPack before 0.8 has no bool code
#endif
  }
#if RESIDENT_HAS_CUDA
  else if constexpr (std::is_same_v<U, __half>) {
    return {kDLFloat, 16, 1};
  } else if constexpr (std::is_same_v<U, __nv_bfloat16>) {
    return {kDLBfloat, 16, 1};
  }
#endif
  else if constexpr (std::is_floating_point_v<U>) {
    return {kDLFloat, bits, 1};
  } else {
    static_assert(std::is_integral_v<U>, "no DLPack type for this element type");
    return {std::is_signed_v<U> ? static_cast<std::uint8_t>(kDLInt)
                                : static_cast<std::uint8_t>(kDLUInt),
            bits, 1};
  }
}

/// Owns what a DLPack tensor points at: the dataset's storage, and the shape array.
struct DLPackContext {
  std::shared_ptr<const void> storage;
  std::int64_t shape[Shape::max_rank] = {};  // NOLINT(modernize-avoid-c-arrays): C ABI
  DLPackTensor tensor{};
};

}  // namespace detail

/// @brief `view` (a field or a batch of `dataset`) as a DLPack tensor: device type and id of the
/// dataset's space (`space_traits<Space>::dlpack_device_type` and `dlpack_device_id`), C-contiguous
/// (null strides), `data` the view's first element and `byte_offset` 0 (the array API's convention:
/// consumers such as `torch.from_dlpack` ignore `byte_offset`). The caller owns the result and
/// calls its `deleter` once; until then the memory stays valid, even after `dataset` is destroyed.
/// An empty view (a field of a dataset without rows) exports as a tensor with no elements.
/// @throws InvalidArgument when `dataset` was moved from, or `view` is not inside its own
/// allocation (a view of another dataset, or of an epoch's ring, whose slots are reused every
/// `ring_depth` batches and cannot be exported).
template <class Space, class... Ts, class T>
[[nodiscard]] DLPackTensor* to_dlpack(const DeviceDataset<Space, Ts...>& dataset,
                                      BatchView<const T> view) {
  RESIDENT_EXPECTS(!dataset.moved_from(),
                   "to_dlpack() was given a moved-from dataset, which holds no data; export "
                   "from the dataset the data was moved to");
  const std::shared_ptr<const void> storage = dataset.storage_owner();
  const auto* base = static_cast<const std::byte*>(storage.get());
  const auto* first = reinterpret_cast<const std::byte*>(view.data());
  RESIDENT_EXPECTS(view.bytes() == 0 || (base != nullptr && first >= base &&
                                         first + view.bytes() <= base + dataset.bytes()),
                   "to_dlpack() exports views of this dataset's own allocation (a field or a "
                   "batch of it), but the view lies outside it: it is another dataset's, or a "
                   "gathering epoch's ring slot (reused every ring_depth batches: copy such "
                   "batches first); pass the dataset the view came from");
  auto context = std::make_unique<detail::DLPackContext>();
  context->storage = storage;
  const Shape shape = view.shape();
  for (std::size_t axis = 0; axis < shape.rank(); ++axis)
    context->shape[axis] = static_cast<std::int64_t>(shape[axis]);
  DLTensor& tensor = context->tensor.dl_tensor;
  tensor.data = const_cast<std::byte*>(first);  // NOLINT: DLPack's field is not const
  tensor.byte_offset = 0;
  tensor.ndim = static_cast<std::int32_t>(shape.rank());
  tensor.shape = context->shape;
  tensor.strides = nullptr;
  tensor.dtype = detail::dlpack_dtype<T>();
  tensor.device = {static_cast<DLDeviceType>(space_traits<Space>::dlpack_device_type),
                   space_traits<Space>::dlpack_device_id(dataset.space())};
  context->tensor.manager_ctx = context.get();
  context->tensor.deleter = [](DLPackTensor* self) {
    delete static_cast<detail::DLPackContext*>(self->manager_ctx);
  };
#if RESIDENT_DLPACK_VERSIONED
  context->tensor.version = {DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION};
  context->tensor.flags = DLPACK_FLAG_BITMASK_READ_ONLY;
#endif
  return &context.release()->tensor;
}

}  // namespace resident

#endif  // __has_include(<dlpack/dlpack.h>)
