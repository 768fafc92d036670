// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// @brief The device memory resources that come with resident, for `CudaSpace::with_resource`:
/// `CudaMallocResource` (plain `cudaMalloc`, what a `CudaSpace` uses without one) and
/// `CudaPoolResource` (a stream-ordered pool of its own). libtorch's caching allocator is
/// `TorchCudaResource`, in `resident/torch.hpp`; rmm's `device_async_resource_ref` is taken
/// as it is. Declared only when `RESIDENT_HAS_CUDA` is 1.
///
/// A resource is any stream-ordered resource of CCCL's `cuda::mr` concepts, as CCCL 3.1 and
/// later spell it (`cuda::mr::resource`: `allocate(stream, bytes, alignment)`,
/// `deallocate(stream, pointer, bytes, alignment)`, `allocate_sync`, `deallocate_sync`, `==`;
/// rmm 25.12 and later) or as CCCL 3.0 does, the CUDA 13.0 toolkit's (`cuda::mr::async_resource`:
/// `allocate_async(bytes, alignment, stream)`, `deallocate_async(pointer, bytes, alignment,
/// stream)`, `allocate`, `deallocate`, `==`); the stream is a `cuda::stream_ref`. A dataset only
/// calls the stream-ordered pair, on its stream. The resources here have both spellings. A resource
/// that caches device memory it does not use (a pool) may also say how much, as `std::size_t
/// idle_bytes() const`: the capacity check counts those bytes as free, since the dataset can have
/// them (see docs/interop.md, "Sharing the GPU with a framework").

#include "resident/config.hpp"

#if RESIDENT_HAS_CUDA
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "resident/detail/cuda/device.hpp"
#include "resident/detail/cuda/error.hpp"
#include "resident/detail/format_bytes.hpp"
#include "resident/error.hpp"
#include "resident/space_traits.hpp"
#include "resident/stream_ref.hpp"

#if RESIDENT_HAS_CUDA_STREAM_REF && __has_include(<cuda/memory_resource>)
#include <cuda/version>
#endif
#if RESIDENT_HAS_CUDA_STREAM_REF && __has_include(<cuda/memory_resource>) && \
    (CCCL_VERSION >= 3001000 || defined(LIBCUDACXX_ENABLE_EXPERIMENTAL_MEMORY_RESOURCE))
#include <cuda/memory_resource>
/// @brief 1 where CCCL's memory resource properties are declared (CCCL 3.1 and later, or a
/// unit of CCCL 3.0 that defines `LIBCUDACXX_ENABLE_EXPERIMENTAL_MEMORY_RESOURCE`, as rmm's
/// do): the resources then say that their memory is `cuda::mr::device_accessible`, so that
/// they convert to rmm's `device_async_resource_ref`.
#define RESIDENT_HAS_CUDA_MEMORY_RESOURCE 1
#else
/// @brief 0: CCCL's memory resource properties are not declared in this unit.
#define RESIDENT_HAS_CUDA_MEMORY_RESOURCE 0
#endif

namespace resident {

namespace detail {

/// Refuses an alignment the CUDA allocators do not promise (they give 256 bytes, no more).
inline void check_device_alignment(std::size_t alignment, const char* resource) {
  if (alignment == 0 || alignment > field_alignment || (alignment & (alignment - 1)) != 0)
    throw InvalidArgument(std::string("resident: ") + resource + " was asked for an alignment of " +
                          std::to_string(alignment) +
                          " bytes; it gives a power of two up to 256 bytes, as cudaMalloc does; "
                          "ask for 256 or less");
}

/// The `CapacityError` of a device allocation the driver refused: the device's figures now.
[[noreturn]] inline void throw_device_full(std::size_t bytes, const char* call) {
  (void)cudaGetLastError();
  std::size_t free = 0, total = 0;
  (void)cudaMemGetInfo(&free, &total);
  (void)cudaGetLastError();
  int device = 0;
  (void)cudaGetDevice(&device);
  throw CapacityError("cuda:" + std::to_string(device), bytes, free, total, 0,
                      std::string(call) +
                          " found no room; free memory on the device, use a "
                          "compact dtype, shard it, or stream it");
}

/// The calls of CCCL 3.1's resource concepts (`allocate(stream, bytes, alignment)`,
/// `deallocate(stream, ...)`, `allocate_sync`, `deallocate_sync`) over those of CCCL 3.0's
/// (`allocate_async(bytes, alignment, stream)`, ..., `allocate(bytes, alignment)`), so that a
/// resource of resident's meets the concept of whichever CCCL a program compiles with: the CUDA
/// 13.0 toolkit's (3.0), or a newer one (rmm's). A CRTP base: `Resource` is the resource.
template <class Resource>
class ResourceCalls {
 public:
  /// @brief `allocate_async(bytes, alignment, stream)`, in CCCL 3.1's order.
  [[nodiscard]] void* allocate(StreamRef stream, std::size_t bytes, std::size_t alignment) {
    return self().allocate_async(bytes, alignment, stream);
  }
  /// @brief `deallocate_async(pointer, bytes, alignment, stream)`, in CCCL 3.1's order.
  void deallocate(StreamRef stream, void* pointer, std::size_t bytes,
                  std::size_t alignment) noexcept {
    self().deallocate_async(pointer, bytes, alignment, stream);
  }
  /// @brief `allocate(bytes, alignment)`, as CCCL 3.1 names it.
  [[nodiscard]] void* allocate_sync(std::size_t bytes, std::size_t alignment = field_alignment) {
    return self().allocate(bytes, alignment);
  }
  /// @brief `deallocate(pointer, bytes, alignment)`, as CCCL 3.1 names it.
  void deallocate_sync(void* pointer, std::size_t bytes,
                       std::size_t alignment = field_alignment) noexcept {
    self().deallocate(pointer, bytes, alignment);
  }

 private:
  Resource& self() noexcept { return static_cast<Resource&>(*this); }
};

}  // namespace detail

/// @brief Plain `cudaMalloc` and `cudaFree` on the current device: what a `CudaSpace` without a
/// resource allocates with. Stateless; every two compare equal.
///
/// `cudaMalloc` is not stream-ordered: `allocate_async` allocates at once, and
/// `deallocate_async` first waits on the host for the work enqueued on the stream so far, so
/// that the free comes after every use of the memory ordered on that stream.
class CudaMallocResource : public detail::ResourceCalls<CudaMallocResource> {
 public:
  using ResourceCalls::allocate;
  using ResourceCalls::deallocate;
  /// @brief `bytes` of device memory (null for 0).
  /// @throws CapacityError when the device has no room; CudaError on any other failure;
  /// InvalidArgument for an alignment above 256 bytes.
  [[nodiscard]] void* allocate(std::size_t bytes, std::size_t alignment = field_alignment) const {
    detail::check_device_alignment(alignment, "CudaMallocResource");
    if (bytes == 0) return nullptr;
    void* pointer = nullptr;
    const cudaError_t status = cudaMalloc(&pointer, bytes);
    if (status == cudaErrorMemoryAllocation) detail::throw_device_full(bytes, "cudaMalloc");
    if (status != cudaSuccess) detail::throw_cuda_error(status, "cudaMalloc", __FILE__, __LINE__);
    return pointer;
  }
  /// @brief Releases memory from `allocate` (`cudaFree`); never throws.
  void deallocate(void* pointer, std::size_t /*bytes*/,
                  std::size_t /*alignment*/ = field_alignment) const noexcept {
    if (pointer != nullptr) detail::assert_released(cudaFree(pointer));
  }
  /// @brief `allocate(bytes, alignment)`: usable on `stream` (and any other) at once.
  [[nodiscard]] void* allocate_async(std::size_t bytes, std::size_t alignment,
                                     StreamRef /*stream*/) const {
    return allocate(bytes, alignment);
  }
  /// @brief Waits for `stream`'s work so far on the host, then `deallocate`; never throws.
  void deallocate_async(void* pointer, std::size_t bytes, std::size_t alignment,
                        StreamRef stream) const noexcept {
    if (pointer == nullptr) return;
    if (cudaStreamSynchronize(stream.get()) != cudaSuccess) (void)cudaGetLastError();
    deallocate(pointer, bytes, alignment);
  }

  friend constexpr bool operator==(const CudaMallocResource& /*a*/,
                                   const CudaMallocResource& /*b*/) noexcept {
    return true;
  }
  friend constexpr bool operator!=(const CudaMallocResource& a,
                                   const CudaMallocResource& b) noexcept {
    return !(a == b);
  }
};

/// @brief A stream-ordered pool of device memory of its own: `cudaMallocFromPoolAsync` on a
/// private `cudaMemPool_t` of one device (not the device's default pool, which other code of
/// the process shares), keeping what is freed for the next allocation instead of giving it back
/// to the driver at each synchronisation. Copies share the pool (as rmm's resources do, and as
/// CCCL's resource refs ask); the pool goes, its memory back to the device, with the last copy.
/// A space given one as an rvalue keeps a copy; one given an lvalue references it, which must
/// then outlive the datasets that allocate from it.
///
/// Its `idle_bytes()`, memory the pool holds but has not handed out, count as free in a
/// `CudaSpace`'s capacity check. `trim` gives them back to the device.
class CudaPoolResource : public detail::ResourceCalls<CudaPoolResource> {
 public:
  using ResourceCalls::allocate;
  using ResourceCalls::deallocate;
  /// @brief An empty pool on device `device_id`.
  /// @throws CudaError when the device has no pool support or cannot be reached.
  explicit CudaPoolResource(int device_id = 0) : device_id_(device_id) {
    const detail::CudaDeviceScope scope(device_id_);
    cudaMemPoolProps properties{};
    properties.allocType = cudaMemAllocationTypePinned;
    properties.handleTypes = cudaMemHandleTypeNone;
    properties.location.type = cudaMemLocationTypeDevice;
    properties.location.id = device_id_;
    cudaMemPool_t made = nullptr;
    RESIDENT_CUDA_TRY(cudaMemPoolCreate(&made, &properties));
    pool_ = std::shared_ptr<CUmemPoolHandle_st>(made, DestroyPool{device_id_});
    // Keep freed memory for the next allocation: a pool that gave it back at every
    // synchronisation would allocate from the driver again each epoch.
    std::uint64_t keep = UINT64_MAX;
    RESIDENT_CUDA_TRY(cudaMemPoolSetAttribute(made, cudaMemPoolAttrReleaseThreshold, &keep));
  }
  /// @brief Shares `other`'s pool.
  CudaPoolResource(const CudaPoolResource& other) = default;
  /// @brief Takes `other`'s share of its pool; `other` holds none after (see `pool()`).
  CudaPoolResource(CudaPoolResource&& other) noexcept
      : device_id_(other.device_id_), pool_(std::move(other.pool_)) {}
  /// @brief Shares `other`'s pool (this one's goes with its last copy).
  CudaPoolResource& operator=(const CudaPoolResource& other) = default;
  /// @brief Takes `other`'s share of its pool (this one's goes with its last copy).
  CudaPoolResource& operator=(CudaPoolResource&& other) noexcept {
    device_id_ = other.device_id_;
    pool_ = std::move(other.pool_);
    return *this;
  }
  ~CudaPoolResource() =
      default;  ///< The pool goes, its memory back to the device, with its last copy.

  /// @brief The pool's device.
  [[nodiscard]] int device_id() const noexcept { return device_id_; }
  /// @brief The pool's handle (null once moved from), for `cudaMemPool*` calls of your own.
  [[nodiscard]] cudaMemPool_t pool() const noexcept { return pool_.get(); }

  /// @brief `bytes` from the pool, usable by work enqueued on `stream` from now on (null for
  /// 0 bytes).
  /// @throws CapacityError when the pool cannot grow that much; CudaError on any other
  /// failure; InvalidArgument for an alignment above 256 bytes, or a moved-from pool.
  [[nodiscard]] void* allocate_async(std::size_t bytes, std::size_t alignment, StreamRef stream) {
    detail::check_device_alignment(alignment, "CudaPoolResource");
    check_pool();
    if (bytes == 0) return nullptr;
    const detail::CudaDeviceScope scope(device_id_);
    void* pointer = nullptr;
    const cudaError_t status = cudaMallocFromPoolAsync(&pointer, bytes, pool_.get(), stream.get());
    if (status == cudaErrorMemoryAllocation)
      detail::throw_device_full(bytes, "cudaMallocFromPoolAsync");
    if (status != cudaSuccess)
      detail::throw_cuda_error(status, "cudaMallocFromPoolAsync", __FILE__, __LINE__);
    return pointer;
  }
  /// @brief Returns memory from the pool to it once the work enqueued on `stream` so far is
  /// done (`cudaFreeAsync`); never throws.
  void deallocate_async(void* pointer, std::size_t /*bytes*/, std::size_t /*alignment*/,
                        StreamRef stream) noexcept {
    if (pointer == nullptr) return;
    const detail::CudaDeviceScope scope(device_id_, std::nothrow);
    detail::assert_released(cudaFreeAsync(pointer, stream.get()));
  }
  /// @brief `allocate_async` on the calling thread's default stream, waited for.
  [[nodiscard]] void* allocate(std::size_t bytes, std::size_t alignment = field_alignment) {
    void* pointer = allocate_async(bytes, alignment, StreamRef(cudaStreamPerThread));
    if (pointer != nullptr) {
      const detail::CudaDeviceScope scope(device_id_);
      const cudaError_t status = cudaStreamSynchronize(cudaStreamPerThread);
      if (status != cudaSuccess) {
        deallocate_async(pointer, bytes, alignment, StreamRef(cudaStreamPerThread));
        detail::throw_cuda_error(status, "cudaStreamSynchronize", __FILE__, __LINE__);
      }
    }
    return pointer;
  }
  /// @brief `deallocate_async` on the calling thread's default stream, waited for; never throws.
  void deallocate(void* pointer, std::size_t bytes,
                  std::size_t alignment = field_alignment) noexcept {
    if (pointer == nullptr) return;
    deallocate_async(pointer, bytes, alignment, StreamRef(cudaStreamPerThread));
    const detail::CudaDeviceScope scope(device_id_, std::nothrow);
    if (cudaStreamSynchronize(cudaStreamPerThread) != cudaSuccess) (void)cudaGetLastError();
  }

  /// @brief Bytes the pool holds from the device (`cudaMemPoolAttrReservedMemCurrent`).
  /// @throws CudaError when the pool cannot be asked.
  [[nodiscard]] std::size_t reserved_bytes() const {
    return attribute(cudaMemPoolAttrReservedMemCurrent);
  }
  /// @brief Bytes the pool has handed out and not had back (`cudaMemPoolAttrUsedMemCurrent`).
  /// @throws CudaError when the pool cannot be asked.
  [[nodiscard]] std::size_t used_bytes() const { return attribute(cudaMemPoolAttrUsedMemCurrent); }
  /// @brief Bytes the pool holds but has not handed out: what an allocation can have without
  /// the driver, and what a `CudaSpace`'s capacity check counts as free besides the device's.
  /// @throws CudaError when the pool cannot be asked.
  [[nodiscard]] std::size_t idle_bytes() const {
    const std::size_t reserved = reserved_bytes(), used = used_bytes();
    return reserved > used ? reserved - used : 0;
  }
  /// @brief Gives idle memory back to the device until the pool holds at most `keep_bytes`
  /// (`cudaMemPoolTrimTo`).
  /// @throws CudaError when the pool cannot be trimmed.
  void trim(std::size_t keep_bytes = 0) const {
    check_pool();
    const detail::CudaDeviceScope scope(device_id_);
    RESIDENT_CUDA_TRY(cudaMemPoolTrimTo(pool_.get(), keep_bytes));
  }

  /// @brief The same pool.
  friend bool operator==(const CudaPoolResource& a, const CudaPoolResource& b) noexcept {
    return a.pool_ == b.pool_;
  }
  friend bool operator!=(const CudaPoolResource& a, const CudaPoolResource& b) noexcept {
    return !(a == b);
  }

 private:
  void check_pool() const {
    if (pool_ == nullptr)
      throw InvalidArgument(
          "resident: a moved-from CudaPoolResource holds no pool: expected the resource the "
          "pool was moved to; allocate from that one");
  }
  [[nodiscard]] std::size_t attribute(cudaMemPoolAttr which) const {
    check_pool();
    const detail::CudaDeviceScope scope(device_id_);
    std::uint64_t value = 0;
    RESIDENT_CUDA_TRY(cudaMemPoolGetAttribute(pool_.get(), which, &value));
    return static_cast<std::size_t>(value);
  }

  // Destroys the pool with the last copy; never throws.
  struct DestroyPool {
    int device;
    void operator()(cudaMemPool_t pool) const noexcept {
      const detail::CudaDeviceScope scope(device, std::nothrow);
      detail::assert_released(cudaMemPoolDestroy(pool));
    }
  };

  int device_id_;
  std::shared_ptr<CUmemPoolHandle_st> pool_;  // null once moved from
};

#if RESIDENT_HAS_CUDA_MEMORY_RESOURCE
// Outside the classes, so that every unit sees the same class definitions whether it declares
// CCCL's properties or not; found by argument-dependent lookup, as CCCL asks.
/// @brief `CudaMallocResource`'s memory is device memory.
constexpr void get_property(const CudaMallocResource& /*resource*/,
                            cuda::mr::device_accessible /*property*/) noexcept {}
/// @brief `CudaPoolResource`'s memory is device memory.
constexpr void get_property(const CudaPoolResource& /*resource*/,
                            cuda::mr::device_accessible /*property*/) noexcept {}
#endif

}  // namespace resident

#endif  // RESIDENT_HAS_CUDA
