// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// @brief libtorch (PyTorch's C++ frontend) over a dataset's memory, zero-copy, with shared
/// ownership: `to_tensors(epoch, k)`, batch `k` as `torch::Tensor`s ordered on libtorch's current
/// stream, and `to_tensor(dataset, view)`, one view as a tensor. A tensor keeps the memory it
/// reads alive after the epoch and the dataset are gone. Needs libtorch (CMake:
/// `find_package(Torch)` and `${TORCH_LIBRARIES}`, or the `RESIDENT_WITH_TORCH` option of this
/// project's own targets); empty without it, so the rest of the library never depends on it.

#if __has_include(<torch/torch.h>)

#include <torch/torch.h>
#include <torch/version.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "resident/batch_view.hpp"
#include "resident/config.hpp"
#include "resident/dataset.hpp"
#include "resident/detail/dataset/data_token.hpp"
#include "resident/detail/expects.hpp"
#include "resident/space_traits.hpp"

#if !defined(RESIDENT_TORCH_HAS_CUDA)
/// @brief 1 where libtorch was built with CUDA, so that `to_tensors` orders batches on its
/// current CUDA stream (its CUDA build installs `c10/cuda/impl/cuda_cmake_macros.h`; the CPU
/// build ships c10/cuda's other headers without the library); define it to override.
#if RESIDENT_HAS_CUDA && __has_include(<c10/cuda/impl/cuda_cmake_macros.h>)
#define RESIDENT_TORCH_HAS_CUDA 1
#else
#define RESIDENT_TORCH_HAS_CUDA 0
#endif
#endif
#if RESIDENT_TORCH_HAS_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAStream.h>

#include <new>

#include "resident/cuda_space.hpp"
#endif

/// @brief 1 where libtorch has unsigned tensors wider than a byte (`kUInt16`, `kUInt32`,
/// `kUInt64`, from 2.3 on): a macro, because the names of those types do not exist before.
#define RESIDENT_TORCH_HAS_WIDE_UNSIGNED \
  (TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 3))

namespace resident {

namespace detail {

/// Whether libtorch has unsigned tensors wider than a byte (from 2.3 on).
inline constexpr bool torch_has_wide_unsigned = RESIDENT_TORCH_HAS_WIDE_UNSIGNED;

/// Whether libtorch has a scalar type for elements of `T`.
template <class T>
inline constexpr bool has_torch_dtype =
    std::is_same_v<T, bool> || std::is_same_v<T, std::uint8_t> || std::is_same_v<T, std::int8_t> ||
    std::is_same_v<T, std::int16_t> || std::is_same_v<T, std::int32_t> ||
    std::is_same_v<T, std::int64_t> || std::is_same_v<T, float> || std::is_same_v<T, double> ||
    (torch_has_wide_unsigned &&
     (std::is_same_v<T, std::uint16_t> || std::is_same_v<T, std::uint32_t> ||
      std::is_same_v<T, std::uint64_t>));

/// libtorch's scalar type for elements of `T`.
template <class T>
constexpr c10::ScalarType torch_dtype() noexcept {
  static_assert(has_torch_dtype<T>,
                "libtorch has no scalar type for this element type (before 2.3 it has no "
                "uint16, uint32 or uint64): convert the field while gathering "
                "(resident::convert), store it as a signed type of the same width or wider (a "
                "TokenDataset's tokens as std::int32_t), or use libtorch 2.3 or later");
  if constexpr (std::is_same_v<T, bool>) return torch::kBool;
  if constexpr (std::is_same_v<T, std::uint8_t>) return torch::kUInt8;
  if constexpr (std::is_same_v<T, std::int8_t>) return torch::kInt8;
  if constexpr (std::is_same_v<T, std::int16_t>) return torch::kInt16;
  if constexpr (std::is_same_v<T, std::int32_t>) return torch::kInt32;
  if constexpr (std::is_same_v<T, std::int64_t>) return torch::kInt64;
  if constexpr (std::is_same_v<T, float>) return torch::kFloat32;
#if RESIDENT_TORCH_HAS_WIDE_UNSIGNED
  if constexpr (std::is_same_v<T, std::uint16_t>) return c10::ScalarType::UInt16;
  if constexpr (std::is_same_v<T, std::uint32_t>) return c10::ScalarType::UInt32;
  if constexpr (std::is_same_v<T, std::uint64_t>) return c10::ScalarType::UInt64;
#endif
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

/// Whether tensors can share `Dataset`'s memory: it says which of its allocations holds a view
/// (`impl_owner_of`), as every dataset does.
template <class Dataset, class = void>
struct shares_memory : std::false_type {};
template <class Dataset>
struct shares_memory<Dataset, std::void_t<decltype(std::declval<const Dataset&>().impl_owner_of(
                                  std::declval<const void*>(), std::size_t{}))>> : std::true_type {
};

/// Refuses, with a sentence, a dataset whose memory tensors cannot share.
template <class Dataset>
constexpr bool check_shares_memory() noexcept {
  static_assert(shares_memory<Dataset>::value,
                "to_tensor and to_tensors make tensors of a dataset's memory: pass the "
                "DeviceDataset, StreamingDataset or TokenDataset the view came from");
  return shares_memory<Dataset>::value;
}

/// `view` as a tensor on `device` that holds `share` until libtorch frees it.
template <class T>
torch::Tensor tensor_sharing(std::shared_ptr<const void> share, BatchView<const T> view,
                             torch::Device device) {
  const Shape shape = view.shape();
  std::vector<std::int64_t> sizes(shape.rank());
  for (std::size_t axis = 0; axis < shape.rank(); ++axis)
    sizes[axis] = static_cast<std::int64_t>(shape[axis]);
  return torch::from_blob(
      const_cast<T*>(view.data()),  // NOLINT: libtorch takes mutable memory; documented read-only
      sizes, [share = std::move(share)](void* /*data*/) {},  // the last reference drops the share
      torch::TensorOptions().dtype(torch_dtype<std::remove_cv_t<T>>()).device(device));
}

/// The stream libtorch reads a space's batches on: its current CUDA stream (of the space's
/// device) where the space's streams are CUDA streams and libtorch has CUDA; else `own`, the
/// dataset's stream, with which every read is in order already.
template <class Space>
typename Space::stream_type torch_stream([[maybe_unused]] const Space& space,
                                         typename Space::stream_type own) {
#if RESIDENT_TORCH_HAS_CUDA
  if constexpr (std::is_same_v<typename Space::stream_type, cudaStream_t>) {
    // Page-locked host memory is read on the current device's stream (index -1).
    const torch::Device device = torch_device(space);
    return c10::cuda::getCurrentCUDAStream(device.is_cuda() ? device.index() : -1).stream();
  }
#endif
  return own;
}

}  // namespace detail

#if RESIDENT_TORCH_HAS_CUDA
/// @brief libtorch's CUDA caching allocator as a memory resource, for
/// `CudaSpace::with_resource`: a dataset allocated from it shows in
/// `torch::cuda::memory_allocated` (`c10::cuda::CUDACachingAllocator::getDeviceStats`), memory
/// libtorch has cached serves it, and what it frees serves libtorch's next tensors, so that
/// resident and the model draw from one pool instead of two that compete. Its `idle_bytes()`
/// (reserved minus allocated) count as free in the capacity check. Stateless: every two compare
/// equal. Declared where libtorch was built with CUDA (`RESIDENT_TORCH_HAS_CUDA`).
///
/// The caching allocator is stream-ordered: a block is allocated for the stream it is asked on
/// (the dataset's) and, once freed, is handed to later work on that stream at once. A dataset
/// frees on its stream, after every read it ordered there; order reads of its memory on other
/// streams before destroying it (`Epoch::release` does, for the batches it hands out).
class TorchCudaResource : public detail::ResourceCalls<TorchCudaResource> {
 public:
  using ResourceCalls::allocate;
  using ResourceCalls::deallocate;
  /// @brief `bytes` from libtorch's cache for work on `stream` (`raw_alloc_with_stream`); null
  /// for 0 bytes.
  /// @throws std::bad_alloc when libtorch is out of memory (the space makes it a
  /// `CapacityError` with its figures); InvalidArgument for an alignment above 256 bytes;
  /// c10::Error for any other failure.
  [[nodiscard]] void* allocate_async(std::size_t bytes, std::size_t alignment,
                                     StreamRef stream) const {
    detail::check_device_alignment(alignment, "TorchCudaResource");
    if (bytes == 0) return nullptr;
    try {
      return c10::cuda::CUDACachingAllocator::raw_alloc_with_stream(bytes, stream.get());
    } catch (const c10::Error& error) {
      // Its out-of-memory error has changed name across releases; its sentence has not.
      if (std::string(error.what()).find("out of memory") != std::string::npos)
        throw std::bad_alloc();
      throw;
    }
  }
  /// @brief Returns memory to libtorch's cache (`raw_delete`), for later work on the stream it
  /// was allocated for; never throws.
  void deallocate_async(void* pointer, std::size_t /*bytes*/, std::size_t /*alignment*/,
                        StreamRef /*stream*/) const noexcept {
    if (pointer != nullptr) c10::cuda::CUDACachingAllocator::raw_delete(pointer);
  }
  /// @brief `allocate_async` on libtorch's current stream of the current device.
  /// @throws what `allocate_async` throws.
  [[nodiscard]] void* allocate(std::size_t bytes, std::size_t alignment = field_alignment) const {
    return allocate_async(bytes, alignment, StreamRef(c10::cuda::getCurrentCUDAStream().stream()));
  }
  /// @brief `deallocate_async`; never throws.
  void deallocate(void* pointer, std::size_t bytes,
                  std::size_t alignment = field_alignment) const noexcept {
    deallocate_async(pointer, bytes, alignment, StreamRef(cudaStreamPerThread));
  }
  /// @brief Bytes libtorch holds on the current device but has not handed out: reserved minus
  /// allocated, as `torch.cuda.memory_reserved() - torch.cuda.memory_allocated()` says.
  [[nodiscard]] std::size_t idle_bytes() const {
    const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(c10::cuda::current_device());
    constexpr std::size_t aggregate = 0;  // StatType::AGGREGATE, whose namespace has moved
    const std::int64_t reserved = stats.reserved_bytes[aggregate].current;
    const std::int64_t allocated = stats.allocated_bytes[aggregate].current;
    return reserved > allocated ? static_cast<std::size_t>(reserved - allocated) : 0;
  }
  friend constexpr bool operator==(const TorchCudaResource& /*a*/,
                                   const TorchCudaResource& /*b*/) noexcept {
    return true;
  }
  friend constexpr bool operator!=(const TorchCudaResource& a,
                                   const TorchCudaResource& b) noexcept {
    return !(a == b);
  }
};
#if RESIDENT_HAS_CUDA_MEMORY_RESOURCE
/// @brief `TorchCudaResource`'s memory is device memory (see resident/cuda_resource.hpp).
constexpr void get_property(const TorchCudaResource& /*resource*/,
                            cuda::mr::device_accessible /*property*/) noexcept {}
#endif
#endif  // RESIDENT_TORCH_HAS_CUDA

/// @brief `view` (a field, or a batch, of `dataset`: a `DeviceDataset`, a `StreamingDataset`
/// or a `TokenDataset`) as a `torch::Tensor`: zero-copy, of `view.shape()`, contiguous, the
/// dtype of `T` and the device of the dataset's space (`kCUDA` with its index, or `kCPU`). The
/// tensor shares the memory the view lies in, so that memory stays allocated while the tensor
/// lives, even after the epoch and the dataset are destroyed. Read it only; the dataset's memory
/// is const.
/// - A field, or a zero-copy batch (`Shuffle::none`, `Shuffle::batches`) of a preloaded
///   dataset: the dataset's allocation (`storage_owner()`). On `CudaSpace` its upload completed
///   before the dataset was made, so the tensor needs no stream order.
/// - A batch a stream serves as a view of its chunk slots: the slots' allocation, whose values
///   are those of the batch until the epoch's reader is `chunk_slots - prefetch_chunks` chunks
///   on, or the epoch ends (the same rule as the view's; clone the tensor to keep them longer).
///   On `CudaSpace` the load that next writes the slot waits for libtorch's stream's reads
///   before the release (`to_tensors(epoch, k)` orders both); it does not wait for the release
///   on the host, where reading on past the rule's bound overwrites the slot.
/// - A gathered batch (`Shuffle::samples`, a conversion, an augmentation): the epoch's ring
///   slot, whose values are those of batch `k` until the epoch gathers batch `k + ring_depth`
///   into the same slot or ends (docs/epochs.md, "How long a view lives"; clone the tensor to
///   keep them longer). On `CudaSpace` the gather is
///   ordered on `dataset.stream()`; `to_tensors(epoch, k)` orders libtorch's stream after it.
/// @throws InvalidArgument when `dataset` was moved from, when `view` is not in its memory
/// (another dataset's view), or when the tensor would be a CUDA tensor and libtorch has no CUDA
/// (`torch::cuda::is_available()` is false).
template <class Dataset, class T>
[[nodiscard]] torch::Tensor to_tensor(const Dataset& dataset, BatchView<const T> view) {
  if constexpr (!detail::check_shares_memory<Dataset>()) {
    return {};  // refused above, when compiled
  } else {
    RESIDENT_EXPECTS(!dataset.moved_from(),
                     "to_tensor() was given a moved-from dataset, which holds no data; make the "
                     "tensor from the dataset the data was moved to");
    std::shared_ptr<const void> share = dataset.impl_owner_of(view.data(), view.bytes());
    RESIDENT_EXPECTS(share != nullptr || view.bytes() == 0,
                     "to_tensor() makes tensors of this dataset's own memory (a field, or a batch "
                     "of its current epochs), but the view lies outside it: it is another "
                     "dataset's, or a gathered batch of an epoch whose ring the dataset has "
                     "since released; pass the dataset the view came from, or take the batch as "
                     "it is served with to_tensors(epoch, k)");
    const torch::Device device = detail::torch_device(dataset.space());
    RESIDENT_EXPECTS(!device.is_cuda() || torch::cuda::is_available(),
                     "to_tensor() makes CUDA tensors of this dataset's device memory, but this "
                     "libtorch has no CUDA (torch::cuda::is_available() is false: a CPU-only "
                     "build, or no driver); link a libtorch built with CUDA (PyTorch's CUDA "
                     "wheel: CMAKE_PREFIX_PATH=$(python3 -c 'import torch; "
                     "print(torch.utils.cmake_prefix_path)')), or keep the dataset in a host "
                     "space");
    return detail::tensor_sharing(std::move(share), view, device);
  }
}

namespace detail {

/// The stream libtorch reads `epoch`'s batches on (see `torch_stream`).
template <class Epoch>
auto consumer_of(Epoch& epoch) {
  return torch_stream(epoch.dataset().space(), epoch.dataset().stream());
}
/// That of the epoch a `Dataset`'s epoch holds, preloaded or streamed.
template <class Owner, class Conversion, class Augment>
auto consumer_of(DatasetEpoch<Owner, Conversion, Augment>& epoch) {
  if (auto* preloaded = epoch.impl_preloaded()) return consumer_of(*preloaded);
  return consumer_of(*epoch.impl_streamed());
}

template <class Epoch, class Batch, std::size_t... Field>
std::array<torch::Tensor, sizeof...(Field)> tensors_in(const Epoch& epoch, const Batch& batch,
                                                       std::index_sequence<Field...> /*fields*/) {
  return {to_tensor(epoch.dataset(), std::get<Field>(batch))...};
}
/// Batch `k` of `epoch`, taken on `consumer`, as tensors (see `to_tensor`).
template <class Epoch>
auto tensors_of(Epoch& epoch, std::size_t k, typename Epoch::stream_type consumer) {
  return tensors_in(epoch, epoch.batch(k, consumer),
                    std::make_index_sequence<std::tuple_size_v<typename Epoch::batch_type>>{});
}
/// Those of the epoch a `Dataset`'s epoch holds, preloaded or streamed.
template <class Owner, class Conversion, class Augment>
auto tensors_of(DatasetEpoch<Owner, Conversion, Augment>& epoch, std::size_t k,
                typename DatasetEpoch<Owner, Conversion, Augment>::stream_type consumer) {
  if (auto* preloaded = epoch.impl_preloaded()) return tensors_of(*preloaded, k, consumer);
  return tensors_of(*epoch.impl_streamed(), k, consumer);
}

}  // namespace detail

/// @brief Batch `k` of an epoch as `torch::Tensor`s, one per field (see `to_tensor`), ordered
/// on libtorch's current stream: what `to_tensors(epoch, k)` returns. Tuple-like
/// (`auto [x, y] = resident::to_tensors(epoch, k);`) and indexable (`batch[0]`).
///
/// On a CUDA space, with a libtorch built with CUDA, libtorch's current stream of the space's
/// device is the consumer: it waits for the batch when the object is made (`Epoch::wait`), and
/// the batch's memory is released to the epoch's next gather into its slot behind the work
/// enqueued on that stream when the object is destroyed (`Epoch::release`), as PyTorch's
/// `record_stream` does for its allocator. Keep the object for the training step (the
/// structured binding above keeps it to the end of the scope). Elsewhere (the host, a libtorch
/// without CUDA) there is nothing to order and both are no-ops.
///
/// The tensors may outlive this object, the epoch and the dataset: their memory stays
/// allocated. A gathered batch's values stay those of batch `k` until the epoch gathers batch
/// `k + ring_depth` into the same slot, or ends; clone a tensor that must keep them longer.
template <class Epoch>
class TensorBatch {
  using stream_type = typename Epoch::stream_type;

 public:
  /// @brief Fields in a batch.
  static constexpr std::size_t fields = std::tuple_size_v<typename Epoch::batch_type>;

  /// @brief Use `to_tensors(epoch, k)`.
  /// @throws what `epoch.batch(k)`, `to_tensor` and `epoch.wait(k, stream)` throw.
  TensorBatch(Epoch& epoch, std::size_t k)
      : epoch_(&epoch),
        lease_(epoch.impl_lease()),
        k_(k),
        consumer_(detail::consumer_of(epoch)),
        tensors_(detail::tensors_of(epoch, k, consumer_)),
        held_(true) {}
  /// @brief Takes `other`'s tensors and its release; `other` holds undefined tensors after
  /// (`operator[]` and `get` give tensors whose `defined()` is false), keeps its `index()`,
  /// releases nothing, and is a batch again once one is assigned to it.
  TensorBatch(TensorBatch&& other) noexcept
      : epoch_(other.epoch_),
        lease_(std::move(other.lease_)),
        k_(other.k_),
        consumer_(other.consumer_),
        tensors_(std::move(other.tensors_)),
        held_(std::exchange(other.held_, false)) {}
  /// @brief Releases this batch (as the destructor does), then takes `other`'s.
  TensorBatch& operator=(TensorBatch&& other) noexcept {
    if (this != &other) {
      release_quietly();
      epoch_ = other.epoch_;
      lease_ = std::move(other.lease_);
      k_ = other.k_;
      tensors_ = std::move(other.tensors_);
      consumer_ = other.consumer_;
      held_ = std::exchange(other.held_, false);
    }
    return *this;
  }
  TensorBatch(const TensorBatch&) = delete;
  TensorBatch& operator=(const TensorBatch&) = delete;
  /// @brief Releases the batch (see the class note), unless `release()` did already; an error
  /// of that release is dropped (call `release()` to see it).
  ~TensorBatch() { release_quietly(); }

  /// @brief Releases the batch now, behind the work enqueued on libtorch's stream so far
  /// (`Epoch::release`); the tensors stay. Nothing is done a second time, or once the epoch is
  /// destroyed or moved (no later gather of it can overwrite the batch). On the host there is
  /// nothing to order, but the epoch's checks still apply.
  /// @throws what `Epoch::release` throws: Error when the epoch has gathered batch
  /// `k + ring_depth` into the slot already (the batch is gone: release it before), or when its
  /// dataset was moved from or destroyed; CudaError when the event cannot be recorded.
  void release() {
    if (!std::exchange(held_, false) || !lease_.valid()) return;
    epoch_->release(k_, consumer_);
  }

  /// @brief The batch's number in its epoch.
  [[nodiscard]] std::size_t index() const noexcept { return k_; }
  /// @brief Field `field`'s tensor.
  /// @throws std::out_of_range when `field >= fields`.
  [[nodiscard]] const torch::Tensor& operator[](std::size_t field) const {
    if (field >= fields)
      throw std::out_of_range("resident: TensorBatch field " + std::to_string(field) +
                              " is out of range; the batch has " + std::to_string(fields) +
                              " fields; use an index below " + std::to_string(fields));
    return tensors_[field];
  }
  /// @brief Field `Field`'s tensor, for structured bindings.
  template <std::size_t Field>
  [[nodiscard]] const torch::Tensor& get() const noexcept {
    return std::get<Field>(tensors_);
  }

 private:
  void release_quietly() noexcept {
    try {
      release();
    } catch (...) {  // NOLINT(bugprone-empty-catch): a destructor reports nothing
    }
  }

  Epoch* epoch_;
  detail::DataLease lease_;  // of the epoch object: valid while `epoch_` may be used
  std::size_t k_;
  stream_type consumer_;  // before the tensors: the batch is taken on it
  std::array<torch::Tensor, fields> tensors_;
  bool held_ = false;  // whether the wait was done and the release is still owed
};

/// @brief Batch `k` of `epoch` (of any dataset: a `DeviceDataset`, a `StreamingDataset`, a
/// `TokenDataset`, or what `make_dataset`, `load_dataset` and `load_token_file` return,
/// preloaded or streamed; any shuffle, conversion or augmentation) as one `torch::Tensor` per
/// field, ordered on libtorch's current stream; see `TensorBatch`. The same loop runs whichever
/// way the plan chose to hold the data. `for (std::size_t k = 0; k < epoch.size(); ++k) { auto [x,
/// y] = resident::to_tensors(epoch, k); ... }`
/// @throws what `TensorBatch`'s constructor throws.
template <class Epoch>
[[nodiscard]] TensorBatch<Epoch> to_tensors(Epoch& epoch, std::size_t k) {
  return TensorBatch<Epoch>(epoch, k);
}

}  // namespace resident

/// @cond
template <class Epoch>
struct std::tuple_size<resident::TensorBatch<Epoch>>
    : std::integral_constant<std::size_t, resident::TensorBatch<Epoch>::fields> {};
template <std::size_t Field, class Epoch>
struct std::tuple_element<Field, resident::TensorBatch<Epoch>> {
  using type = const torch::Tensor;
};
/// @endcond

#endif  // __has_include(<torch/torch.h>)
