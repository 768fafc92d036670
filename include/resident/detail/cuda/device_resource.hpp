// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// A `CudaSpace`'s memory resource behind one type: any stream-ordered resource of CCCL's
// `cuda::mr` concepts, in CCCL 3.0's spelling or in that of CCCL 3.1 and later (see
// resident/cuda_resource.hpp), kept or referenced, so that the space stays one copyable class
// whichever resource it allocates from.

#include "resident/config.hpp"

#if RESIDENT_HAS_CUDA
#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>
#include <type_traits>
#include <utility>

#include "resident/space_traits.hpp"
#include "resident/stream_ref.hpp"

namespace resident::detail {

/// The stream a resource is called with: CCCL's `cuda::stream_ref` where CCCL is there (what
/// the `cuda::mr` concept names), else `StreamRef`.
#if RESIDENT_HAS_CUDA_STREAM_REF
using resource_stream = cuda::stream_ref;
#else
using resource_stream = StreamRef;
#endif

/// Whether `Resource` has the stream-ordered half of CCCL's resource concept, the half a
/// dataset calls, as CCCL 3.1 and later spell it (`cuda::mr::resource`: `allocate(stream,
/// bytes, alignment)`, `deallocate(stream, pointer, bytes, alignment)`; rmm 25.12 and later).
template <class Resource, class = void>
struct has_stream_first_calls : std::false_type {};
template <class Resource>
struct has_stream_first_calls<
    Resource,
    std::enable_if_t<
        std::is_same_v<decltype(std::declval<Resource&>().allocate(std::declval<resource_stream>(),
                                                                   std::size_t{}, std::size_t{})),
                       void*> &&
        std::is_same_v<decltype(std::declval<Resource&>().deallocate(
                           std::declval<resource_stream>(), std::declval<void*>(), std::size_t{},
                           std::size_t{})),
                       void>>> : std::true_type {};

/// The same, as CCCL 3.0 spells it (`cuda::mr::async_resource`: `allocate_async(bytes,
/// alignment, stream)`, `deallocate_async(pointer, bytes, alignment, stream)`; the CUDA 13.0
/// toolkit's CCCL, rmm before 25.12).
template <class Resource, class = void>
struct has_async_calls : std::false_type {};
template <class Resource>
struct has_async_calls<
    Resource, std::enable_if_t<std::is_same_v<decltype(std::declval<Resource&>().allocate_async(
                                                  std::size_t{}, std::size_t{},
                                                  std::declval<resource_stream>())),
                                              void*> &&
                               std::is_same_v<decltype(std::declval<Resource&>().deallocate_async(
                                                  std::declval<void*>(), std::size_t{},
                                                  std::size_t{}, std::declval<resource_stream>())),
                                              void>>> : std::true_type {};

/// Whether `Resource` is a stream-ordered resource, in either spelling.
template <class Resource>
struct is_device_resource : std::bool_constant<has_stream_first_calls<Resource>::value ||
                                               has_async_calls<Resource>::value> {};

/// Whether `Resource` says how much memory it holds unused (`idle_bytes()`).
template <class Resource, class = void>
struct has_idle_bytes : std::false_type {};
template <class Resource>
struct has_idle_bytes<
    Resource, std::void_t<decltype(std::size_t{std::declval<const Resource&>().idle_bytes()})>>
    : std::true_type {};

/// The resource of a `CudaSpace`, whatever its type.
class DeviceResource {
 public:
  DeviceResource() = default;
  DeviceResource(const DeviceResource&) = delete;
  DeviceResource& operator=(const DeviceResource&) = delete;
  virtual ~DeviceResource() = default;

  /// `bytes` usable by work on `stream` from now on; throws what the resource throws.
  [[nodiscard]] virtual void* allocate(std::size_t bytes, cudaStream_t stream) = 0;
  /// Returns memory after the work enqueued on `stream` so far; never throws.
  virtual void deallocate(void* pointer, std::size_t bytes, cudaStream_t stream) noexcept = 0;
  /// Whether the resource says how much it holds unused.
  [[nodiscard]] virtual bool reports_idle() const noexcept = 0;
  /// What it holds unused (0 where it does not say); throws what the resource throws.
  [[nodiscard]] virtual std::size_t idle_bytes() const = 0;
  /// Whether both are the same resource (of one type, and equal).
  [[nodiscard]] virtual bool same(const DeviceResource& other) const noexcept = 0;
};

/// Whether two `Resource`s can be compared (`==`, as CCCL's concepts ask; a resource without it
/// is equal only to itself).
template <class Resource, class = void>
struct is_equality_comparable : std::false_type {};
template <class Resource>
struct is_equality_comparable<
    Resource,
    std::void_t<decltype(bool(std::declval<const Resource&>() == std::declval<const Resource&>()))>>
    : std::true_type {};

/// `DeviceResource` over a `Resource`, however it is held: what compares two of one type.
template <class Resource>
class DeviceResourceOf : public DeviceResource {
 public:
  [[nodiscard]] virtual const Resource& resource() const noexcept = 0;

  [[nodiscard]] bool same(const DeviceResource& other) const noexcept override {
    const auto* model = dynamic_cast<const DeviceResourceOf*>(&other);
    if (model == nullptr) return false;
    if (&model->resource() == &resource()) return true;
    if constexpr (is_equality_comparable<Resource>::value)
      return static_cast<bool>(model->resource() == resource());
    else
      return false;
  }
};

/// `DeviceResource` over `Resource`: `Held` is `Resource` (kept: a resource ref, or one moved
/// in) or `Resource*` (referenced: the caller's resource, which must outlive the space).
template <class Resource, class Held>
class DeviceResourceModel final : public DeviceResourceOf<std::remove_const_t<Resource>> {
 public:
  explicit DeviceResourceModel(Held held) : held_(std::move(held)) {}

  [[nodiscard]] void* allocate(std::size_t bytes, cudaStream_t stream) override {
    if constexpr (has_stream_first_calls<Resource>::value)
      return held().allocate(resource_stream(stream), bytes, alignment);
    else
      return held().allocate_async(bytes, alignment, resource_stream(stream));
  }
  void deallocate(void* pointer, std::size_t bytes, cudaStream_t stream) noexcept override {
    try {
      if constexpr (has_stream_first_calls<Resource>::value)
        held().deallocate(resource_stream(stream), pointer, bytes, alignment);
      else
        held().deallocate_async(pointer, bytes, alignment, resource_stream(stream));
    } catch (...) {  // NOLINT(bugprone-empty-catch): a release never throws (see Allocation)
    }
  }
  [[nodiscard]] bool reports_idle() const noexcept override {
    return has_idle_bytes<Resource>::value;
  }
  [[nodiscard]] std::size_t idle_bytes() const override {
    if constexpr (has_idle_bytes<Resource>::value)
      return held().idle_bytes();
    else
      return 0;
  }
  [[nodiscard]] const std::remove_const_t<Resource>& resource() const noexcept override {
    return held();
  }

 private:
  static constexpr std::size_t alignment = field_alignment;  // what every field relies on

  [[nodiscard]] Resource& held() const noexcept {
    if constexpr (std::is_pointer_v<Held>)
      return *held_;
    else
      return held_;
  }

  mutable Held held_;  // a resource's calls are not const (CCCL's concept calls them on `R&`)
};

/// Whether `resource` is kept (a copy, or moved in) rather than referenced: an rvalue, or a
/// const lvalue whose calls need it mutable (a const resource ref: refs are cheap to copy).
template <class Resource>
inline constexpr bool kept_resource =
    !std::is_lvalue_reference_v<Resource> ||
    (!is_device_resource<std::remove_reference_t<Resource>>::value &&
     std::is_copy_constructible_v<std::remove_cv_t<std::remove_reference_t<Resource>>>);

/// The `DeviceResource` of `resource`: referenced when it is an lvalue, kept otherwise (see
/// `kept_resource`).
template <class Resource>
std::shared_ptr<DeviceResource> make_device_resource(Resource&& resource) {
  if constexpr (!kept_resource<Resource>) {
    using Referenced = std::remove_reference_t<Resource>;  // const where the caller's is
    return std::make_shared<DeviceResourceModel<Referenced, Referenced*>>(&resource);
  } else {
    using Kept = std::remove_cv_t<std::remove_reference_t<Resource>>;
    return std::make_shared<DeviceResourceModel<Kept, Kept>>(std::forward<Resource>(resource));
  }
}

}  // namespace resident::detail

#endif  // RESIDENT_HAS_CUDA
