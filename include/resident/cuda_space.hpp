// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// @brief `CudaSpace`: datasets in the global memory of one CUDA device, from the memory
/// resource it is given (`cudaMalloc` by default). Uses the runtime API only, so a g++ translation
/// unit that links `CUDA::cudart` can use it; declared only when `RESIDENT_HAS_CUDA` is 1.

#include "resident/config.hpp"

#if RESIDENT_HAS_CUDA
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <string>
#include <type_traits>
#include <utility>

#include "resident/cuda_resource.hpp"
#include "resident/detail/byte_budget.hpp"
#include "resident/detail/cuda/chunk_transport.hpp"
#include "resident/detail/cuda/device.hpp"
#include "resident/detail/cuda/device_resource.hpp"
#include "resident/detail/cuda/error.hpp"
#include "resident/detail/cuda/resources.hpp"
#include "resident/detail/cuda/ring_fences.hpp"
#include "resident/detail/cuda/upload.hpp"
#include "resident/detail/format_bytes.hpp"
#include "resident/detail/gather/kernel_gather.hpp"
#include "resident/error.hpp"
#include "resident/shard.hpp"
#include "resident/space_traits.hpp"

namespace resident {

/// @brief Global memory of CUDA device `device_id()`: the dataset's one allocation (and its
/// rings and chunk slots) from a memory resource, `cudaMalloc` unless `with_resource` names
/// another; capacity from `cudaMemGetInfo` and what the resource holds unused, or from a
/// budget (`with_budget`); copies with `cudaMemcpyAsync` on a stream.
/// @note Constructing a `CudaSpace` touches no driver; every operation first checks that the
/// device exists and throws `CudaError` saying so plainly when there is no usable device or
/// driver. Each operation makes its device current for its duration only. Copies of a space
/// share its resource and its budget; two spaces are equal when they have the same device,
/// the same resource and the same budget.
class CudaSpace {
 public:
  using memory_space = CudaSpace;    ///< Kokkos-style self-name; see `is_memory_space_v`.
  using stream_type = cudaStream_t;  ///< Copies and gathers are ordered on a CUDA stream.
  static constexpr bool device_accessible = true;  ///< Kernels on its device read it.

  /// @brief Device `device_id` (default 0), allocating with `cudaMalloc`; nothing is checked
  /// until the space is used.
  explicit CudaSpace(int device_id = 0) noexcept : device_id_(device_id) {}
  /// @brief The same device, sharing the resource and the budget. A space has no move: moving
  /// one copies it, so that a space moved from still allocates from its resource and budget.
  CudaSpace(const CudaSpace&) = default;
  CudaSpace& operator=(const CudaSpace&) = default;  ///< As the copy constructor.
  ~CudaSpace() = default;

  /// @brief The device of a rank: `shard.local_rank` (so each rank on a node takes its own
  /// GPU), or device 0 where the process sees a single device (launchers that set
  /// `CUDA_VISIBLE_DEVICES` per rank).
  /// @throws InvalidArgument for a shard `validate` refuses (a rank or local rank outside
  /// `[0, world_size)`), when no device is visible, or when the local rank is not below the
  /// devices visible (more ranks per node than GPUs).
  [[nodiscard]] static CudaSpace for_shard(const Shard& shard = shard_from_env()) {
    validate(shard);
    return CudaSpace(detail::device_for_local_rank(shard.local_rank, device_count()));
  }

  /// @brief This space, allocating from `resource` instead: any stream-ordered resource of
  /// CCCL's `cuda::mr` concepts, in either CCCL's spelling (rmm's `device_async_resource_ref`,
  /// `CudaPoolResource`, `TorchCudaResource`; see resident/cuda_resource.hpp). An lvalue is
  /// referenced, and must outlive every dataset of the space; an rvalue (a resource ref, or a
  /// resource moved in) is kept, shared by the space's copies, and so is a copy of a const
  /// resource ref. Every allocation and free is
  /// ordered on the dataset's stream (`allocate_async`, `deallocate_async`), and the capacity
  /// check counts the resource's `idle_bytes()` as free where it has them.
  template <class Resource>
  [[nodiscard]] CudaSpace with_resource(Resource&& resource) const {
    static_assert(
        detail::is_device_resource<std::remove_cv_t<std::remove_reference_t<Resource>>>::value,
        "CudaSpace::with_resource takes a stream-ordered memory resource of CCCL's cuda::mr "
        "concepts: allocate(cuda::stream_ref, bytes, alignment) returning void* and "
        "deallocate(cuda::stream_ref, pointer, bytes, alignment) (CCCL 3.1 and later, rmm 25.12 "
        "and later), or allocate_async(bytes, alignment, cuda::stream_ref) and "
        "deallocate_async(pointer, bytes, alignment, cuda::stream_ref) (CCCL 3.0), as rmm's "
        "device_async_resource_ref and resident::CudaPoolResource have");
    CudaSpace space = *this;
    space.resource_ = detail::make_device_resource(std::forward<Resource>(resource));
    return space;
  }
  /// @brief This space, with a capacity of `bytes` shared by every dataset allocated in it
  /// (and in its copies), as `HostSpace::with_budget`: the capacity check reports the budget
  /// left instead of asking the device, and an allocation past it throws `CapacityError`. For
  /// a GPU shared with a framework whose pool the device's figures cannot see into.
  [[nodiscard]] CudaSpace with_budget(std::size_t bytes) const {
    CudaSpace space = *this;
    space.budget_ = std::make_shared<detail::ByteBudget>(bytes);
    return space;
  }
  /// @brief Whether this space allocates from a resource given to `with_resource`.
  [[nodiscard]] bool has_resource() const noexcept { return resource_ != nullptr; }
  /// @brief Whether this space was made by `with_budget`.
  [[nodiscard]] bool has_budget() const noexcept { return budget_ != nullptr; }
  /// @brief Bytes currently allocated from the budget (0 for a space without budget).
  [[nodiscard]] std::size_t used_bytes() const noexcept { return budget_ ? budget_->used() : 0; }

  /// @brief The device's number among those this process sees (`CUDA_VISIBLE_DEVICES`
  /// renumbers them); not checked until the space is used.
  [[nodiscard]] int device_id() const noexcept { return device_id_; }
  /// @brief "cuda:" and the device id, e.g. "cuda:0".
  [[nodiscard]] std::string name() const { return "cuda:" + std::to_string(device_id_); }

  /// @brief Number of CUDA devices this process can use; 0 without a driver or device.
  [[nodiscard]] static int device_count() noexcept {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) {
      (void)cudaGetLastError();
      return 0;
    }
    return count;
  }

  /// @brief Throws `CudaError` unless this space's device exists and its driver works.
  void ensure_usable() const {
    const int count = detail::usable_device_count(name() + " requested");
    if (device_id_ < 0 || device_id_ >= count) {
      throw CudaError(
          static_cast<int>(cudaErrorInvalidDevice), "cudaGetDeviceCount", __FILE__, __LINE__,
          "resident: " + name() + " requested but this machine has " + std::to_string(count) +
              " CUDA device(s); pass a device id from 0 to count - 1 "
              "(CUDA_VISIBLE_DEVICES renumbers them)");
    }
  }

  /// @brief What a dataset can have: the budget left, of the budget (`with_budget`); else the
  /// device's free bytes (`cudaMemGetInfo`) plus what the resource holds but does not use (its
  /// `idle_bytes()`, where it has them: a pool's cache, which the device counts as used),
  /// of the device's total (never more).
  /// @throws CudaError without a usable device; what the resource's `idle_bytes()` throws.
  [[nodiscard]] Capacity capacity() const { return capacity_report().capacity; }
  /// @brief `capacity()`, and where its figures came from: "cudaMemGetInfo (...)", plus the
  /// bytes the resource holds but does not use where they are counted, or "a budget of ...".
  /// @throws what `capacity()` throws.
  [[nodiscard]] CapacityReport capacity_report() const {
    ensure_usable();
    if (budget_) return detail::budget_capacity(*budget_);
    const detail::CudaDeviceScope scope(device_id_);
    CapacityReport report;
    Capacity& figures = report.capacity;
    RESIDENT_CUDA_TRY(cudaMemGetInfo(&figures.free_bytes, &figures.total_bytes));
    report.source = "cudaMemGetInfo (" + detail::format_bytes(figures.free_bytes) + " free of " +
                    detail::format_bytes(figures.total_bytes) + ")";
    if (resource_ && resource_->reports_idle()) {
      const std::size_t idle = resource_->idle_bytes();
      // What a resource holds came from the device: the sum is never more than the device has.
      figures.free_bytes = idle > figures.total_bytes - figures.free_bytes
                               ? figures.total_bytes
                               : figures.free_bytes + idle;
      report.source +=
          " + " + detail::format_bytes(idle) + " the memory resource holds but does not use";
    }
    return report;
  }

  /// @brief 512 MiB: room for the CUDA context's growth, cuBLAS workspaces and a small
  /// model; set `DatasetOptions::reserve_bytes` to your model's footprint for anything larger.
  /// No reserve inside a budget (the budget is the figure the caller chose).
  [[nodiscard]] std::size_t default_reserve_bytes() const noexcept {
    return budget_ ? 0 : std::size_t{512} << 20;
  }

  /// @brief `bytes` of device memory (256-byte aligned), usable by work enqueued on `stream`
  /// from now on: from the resource (`allocate_async`), within the budget; null for 0.
  /// @throws CapacityError when the budget, the device or the resource has no room (a resource's
  /// `std::bad_alloc` becomes one, with the space's figures); CudaError on any other failure.
  [[nodiscard]] void* allocate(std::size_t bytes, stream_type stream) const {
    if (bytes == 0) return nullptr;
    ensure_usable();
    std::size_t used_seen = 0;
    if (budget_ && !budget_->try_take(bytes, used_seen))
      throw CapacityError(name(), bytes, budget_->limit() - used_seen, budget_->limit(), 0,
                          "raise the space's budget (CudaSpace::with_budget), use a compact "
                          "dtype, shard it, or stream it");
    try {
      const detail::CudaDeviceScope scope(device_id_);
      if (!resource_) return CudaMallocResource{}.allocate_async(bytes, field_alignment, stream);
      try {
        return resource_->allocate(bytes, stream);
      } catch (const std::bad_alloc&) {
        throw refused_by_resource(bytes);
      }
    } catch (...) {
      if (budget_) budget_->give_back(bytes);
      throw;
    }
  }
  /// @brief Returns memory from `allocate(bytes, stream)` once the work enqueued on `stream` so
  /// far is done (the resource's `deallocate_async`; with `cudaMalloc`, a host wait for the
  /// stream, then `cudaFree`); never throws (see `detail::assert_released`).
  void deallocate(void* pointer, std::size_t bytes, stream_type stream) const noexcept {
    if (pointer == nullptr) return;
    {
      const detail::CudaDeviceScope scope(device_id_, std::nothrow);
      if (resource_)
        resource_->deallocate(pointer, bytes, stream);
      else
        CudaMallocResource{}.deallocate_async(pointer, bytes, field_alignment, stream);
    }
    if (budget_) budget_->give_back(bytes);
  }
  /// @brief `allocate(bytes, stream)` on the calling thread's default stream
  /// (`cudaStreamPerThread`), waited for: memory any stream may use at once.
  /// @throws what `allocate(bytes, stream)` throws.
  [[nodiscard]] void* allocate(std::size_t bytes) const {
    void* pointer = allocate(bytes, cudaStreamPerThread);
    if (resource_ && pointer != nullptr) {
      const detail::CudaDeviceScope scope(device_id_);
      if (const cudaError_t status = cudaStreamSynchronize(cudaStreamPerThread);
          status != cudaSuccess) {
        deallocate(pointer, bytes, cudaStreamPerThread);
        detail::throw_cuda_error(status, "cudaStreamSynchronize", __FILE__, __LINE__);
      }
    }
    return pointer;
  }
  /// @brief Returns memory from `allocate(bytes)`, which no stream may still use; never throws.
  void deallocate(void* pointer, std::size_t bytes) const noexcept {
    deallocate(pointer, bytes, cudaStreamPerThread);
  }

  /// @brief A non-blocking stream on this device (it does not serialise with stream 0).
  [[nodiscard]] stream_type create_stream() const {
    ensure_usable();
    const detail::CudaDeviceScope scope(device_id_);
    return detail::create_stream().release();
  }

  /// @brief Destroys a stream from `create_stream` (nothing for null); never throws (see
  /// `detail::assert_released`).
  void destroy_stream(stream_type stream) const noexcept {
    if (stream == nullptr) return;
    const detail::CudaDeviceScope scope(device_id_, std::nothrow);
    detail::assert_released(cudaStreamDestroy(stream));
  }

  /// @brief Waits on the host until the work enqueued on `stream` is done
  /// (`cudaStreamSynchronize`).
  /// @throws CudaError when the wait fails, or reports an earlier asynchronous error.
  void synchronize(stream_type stream) const {
    const detail::CudaDeviceScope scope(device_id_);
    RESIDENT_CUDA_TRY(cudaStreamSynchronize(stream));
  }

  /// @brief Enqueues a host-to-device copy on `stream`.
  void copy_from_host(void* destination, const void* source, std::size_t bytes,
                      stream_type stream) const {
    if (bytes == 0) return;
    const detail::CudaDeviceScope scope(device_id_);
    RESIDENT_CUDA_TRY(cudaMemcpyAsync(destination, source, bytes, cudaMemcpyHostToDevice, stream));
  }

  /// @brief Enqueues a device-to-host copy on `stream`.
  void copy_to_host(void* destination, const void* source, std::size_t bytes,
                    stream_type stream) const {
    if (bytes == 0) return;
    const detail::CudaDeviceScope scope(device_id_);
    RESIDENT_CUDA_TRY(cudaMemcpyAsync(destination, source, bytes, cudaMemcpyDeviceToHost, stream));
  }

  /// @brief The same device, the same resource (or both `cudaMalloc`) and the same budget.
  friend bool operator==(const CudaSpace& a, const CudaSpace& b) noexcept {
    const bool same_resource =
        a.resource_ == b.resource_ ||
        (a.resource_ != nullptr && b.resource_ != nullptr && a.resource_->same(*b.resource_));
    return a.device_id_ == b.device_id_ && same_resource && a.budget_ == b.budget_;
  }
  friend bool operator!=(const CudaSpace& a, const CudaSpace& b) noexcept { return !(a == b); }

 private:
  // A resource's `std::bad_alloc`, with the figures the space reports now.
  [[nodiscard]] CapacityError refused_by_resource(std::size_t bytes) const {
    Capacity now;
    try {
      now = capacity();
    } catch (const Error&) {  // the figures are for the message only
    }
    return CapacityError(name(), bytes, now.free_bytes, now.total_bytes, 0,
                         "the memory resource refused the allocation (std::bad_alloc): raise its "
                         "limit, free memory in it, use a compact dtype, shard it, or stream it");
  }

  int device_id_;
  std::shared_ptr<detail::DeviceResource> resource_;  // null: cudaMalloc
  std::shared_ptr<detail::ByteBudget> budget_;        // null: the device's figures
};

/// @brief `CudaSpace`'s engines: uploads staged through page-locked buffers (or copied
/// directly from page-locked sources), chunks streamed on a copy stream ordered by events,
/// gathers by kernels ordered against consumer streams by events, and the device made current
/// around each operation.
template <>
struct space_traits<CudaSpace> : default_space_traits<CudaSpace> {
  using upload_engine = detail::CudaUpload;            ///< See `default_space_traits`.
  using chunk_transport = detail::CudaChunkTransport;  ///< See `default_space_traits`.
  using ring_fences = detail::CudaRingFences;          ///< See `default_space_traits`.
  using gather_engine = detail::KernelGather;          ///< See `default_space_traits`.
  static constexpr bool takes_caller_stream = true;    ///< See `default_space_traits`.
  static constexpr int dlpack_device_type = 2;         ///< `kDLCUDA`.
  /// @brief The space's device.
  static int dlpack_device_id(const CudaSpace& space) noexcept { return space.device_id(); }
  /// @brief Makes the space's device current for the scope (see `detail::CudaDeviceScope`).
  static detail::CudaDeviceScope device_scope(const CudaSpace& space) {
    return detail::CudaDeviceScope(space.device_id());
  }
  /// @brief Refuses a stream the runtime does not know (destroyed, or not a stream) and a
  /// stream of another device than the space's: their copies and events would fail half-way.
  /// @throws InvalidArgument naming the stream's device and the space's.
  static void check_caller_stream(const CudaSpace& space, cudaStream_t stream) {
    const detail::CudaDeviceScope scope(space.device_id());  // cudaStreamPerThread's device
    int device = -1;
    const cudaError_t status = cudaStreamGetDevice(stream, &device);
    if (status != cudaSuccess) {
      (void)cudaGetLastError();
      throw InvalidArgument(
          "resident: DatasetOptions::stream is not a stream the CUDA runtime knows (" +
          std::string(cudaGetErrorName(status)) + "): expected a live stream of " + space.name() +
          "; pass a stream that outlives the dataset (not one already destroyed), or leave the "
          "option unset and the dataset makes its own");
    }
    if (device != space.device_id())
      throw InvalidArgument(
          "resident: DatasetOptions::stream belongs to cuda:" + std::to_string(device) +
          ", but the dataset's space is " + space.name() + "; pass a stream made on device " +
          std::to_string(space.device_id()) +
          " (cudaSetDevice first, then cudaStreamCreate), or leave the option "
          "unset and the dataset makes its own");
  }
};

}  // namespace resident

#endif  // RESIDENT_HAS_CUDA
