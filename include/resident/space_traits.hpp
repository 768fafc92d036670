// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// @brief What makes a type a memory space, and the traits that ask about one (after Kokkos'
/// `is_memory_space` and `SpaceAccessibility`).
///
/// A memory space `S` is a default-constructible, copyable class (datasets keep a copy, and
/// a moved-from dataset a default one) that provides:
/// - `using memory_space = S;`, `using stream_type = ...;` (default-constructible: the
///   value of "no stream"), `static constexpr bool device_accessible` (whether kernels can
///   read its memory);
/// - `std::string name() const` ("host", "cuda:0") and `Capacity capacity() const`
///   (optionally `CapacityReport capacity_report() const`, which says where the figures came
///   from);
/// - `std::size_t default_reserve_bytes() const`: the reserve used when `DatasetOptions`
///   names none;
/// - `void* allocate(std::size_t) const` (throws `CapacityError` when memory runs out; returns
///   null for 0 bytes; otherwise memory aligned to `field_alignment`, 256 bytes, as `cudaMalloc`
///   and rmm give it: the fields' bases, and the kernels' vector loads, count on it; a dataset
///   refuses other memory with `InvalidArgument`) and
///   `void deallocate(void*, std::size_t) const noexcept`; optionally, the stream-ordered pair
///   `void* allocate(std::size_t, stream_type) const` and
///   `void deallocate(void*, std::size_t, stream_type) const noexcept`, which a dataset then
///   uses for everything it allocates on its stream (its data, its rings, its chunk slots)
///   instead of waiting for the stream on the host before each release;
/// - `stream_type create_stream() const`, `void destroy_stream(stream_type) const noexcept`,
///   `void synchronize(stream_type) const`;
/// - `copy_from_host(dst, src, bytes, stream)` and `copy_to_host(dst, src, bytes, stream)`,
///   ordered on `stream`; the copy is complete once `synchronize(stream)` returns.
///
/// That is enough for every dataset, epoch and stream to work in the space, through the
/// defaults of `space_traits`. What a space does better than the defaults (its own upload
/// engine, streaming transport, gather engine, stream ordering, DLPack device) it says by
/// specialising `space_traits` beside its own definition, as `CudaSpace` and
/// `CudaHostPinnedSpace` do: the one place to extend.

#include <cstddef>
#include <string>
#include <type_traits>
#include <utility>

#include "resident/stream_ref.hpp"  // CUstream_st: the traits recognise CUDA streams by it

namespace resident {

/// @brief Free and total bytes of a memory space, as its `capacity()` reports them.
struct Capacity {
  std::size_t free_bytes = 0;   ///< Bytes that can be allocated now.
  std::size_t total_bytes = 0;  ///< Bytes the space holds in all.
};

/// @brief A space's capacity and where its figures came from, as a space's optional
/// `capacity_report()` gives them, for plans and refusals. A space without one reports its
/// `capacity()` with no source.
struct CapacityReport {
  Capacity capacity{};  ///< The figures.
  /// @brief Where they came from ("cudaMemGetInfo (...) + ... the memory resource holds but
  /// does not use", "a budget of ..."); empty where the space does not say.
  std::string source{};
};

namespace detail {

/// @brief Whether `Space` says where its capacity's figures came from (`capacity_report()`).
template <class Space, class = void>
struct has_capacity_report : std::false_type {};
template <class Space>
struct has_capacity_report<
    Space, std::enable_if_t<std::is_same_v<decltype(std::declval<const Space&>().capacity_report()),
                                           CapacityReport>>> : std::true_type {};

/// @brief `space.capacity_report()`, or its `capacity()` with no source.
template <class Space>
CapacityReport capacity_report(const Space& space) {
  if constexpr (has_capacity_report<Space>::value)
    return space.capacity_report();
  else
    return {space.capacity(), {}};
}

/// @brief Bytes left for a dataset once `reserve` is set aside from `free` (0 when the reserve
/// is larger): the one figure every capacity check compares against.
constexpr std::size_t usable_bytes(std::size_t free, std::size_t reserve) noexcept {
  return free > reserve ? free - reserve : 0;
}

/// @brief What `space_traits::device_scope` gives a space without devices: nothing to make
/// current.
struct NoDeviceScope {};

/// @brief What a gather engine is made with, once per gathering epoch (see
/// `default_space_traits::gather_engine`).
struct GatherSetup {
  unsigned threads = 0;         ///< `DatasetOptions::gather_threads` (0: the engine decides).
  std::size_t batch_bytes = 0;  ///< Bytes of the epoch's largest batch, all fields together.
};

// The default engines of `space_traits`, defined in the headers named.
struct CopyTeamUpload;  // host_upload.hpp
template <class Space>
class HostChunkTransport;  // host_chunk_transport.hpp
template <class Space>
class NoRingFences;  // detail/gather/gather_ring.hpp
class HostGather;    // detail/gather/host_gather.hpp
class KernelGather;  // detail/gather/kernel_gather.hpp

}  // namespace detail

/// @brief The defaults of `space_traits`, for specialisations to inherit and override in
/// part. They suit a space whose copies complete on the calling thread (the host space and
/// spaces built on it, such as the fault-injecting test spaces): every byte goes through the
/// space's `copy_from_host`, so a space that wraps another sees every copy.
template <class Space>
struct default_space_traits {
  /// @brief The upload engine: `upload_engine::upload(space, destination, plan, options,
  /// stream)` copies an upload plan into the space (the host copy team by default).
  using upload_engine = detail::CopyTeamUpload;
  /// @brief How a `StreamingDataset` loads chunks into its slots (the producer thread copies
  /// them, done when its load returns, by default).
  using chunk_transport = detail::HostChunkTransport<Space>;
  /// @brief How a gathering epoch orders its ring against consumer streams (`Epoch::wait`,
  /// `Epoch::release`): nothing to order by default (gathers complete before `batch(k)`).
  using ring_fences = detail::NoRingFences<Space>;
  /// @brief How a gathering epoch writes its batches into its ring: one engine per epoch, its
  /// gathers ordered on the dataset's stream (the contract: docs/api.md, "Adding a memory
  /// space"). By default kernels where they can read the memory, one per field
  /// (`detail::KernelGather`), and the host's copy threads elsewhere (`detail::HostGather`).
  using gather_engine =
      std::conditional_t<Space::device_accessible, detail::KernelGather, detail::HostGather>;
  /// @brief Whether host code may write the space's memory directly, so that files are read
  /// straight into it rather than through `copy_from_host` (off by default: a wrapping space
  /// must see every byte).
  static constexpr bool host_writable = false;
  /// @brief Whether `DatasetOptions::stream` (a CUDA stream) names the dataset's stream.
  static constexpr bool takes_caller_stream =
      std::is_same_v<typename Space::stream_type, CUstream_st*>;
  /// @brief Checks, when a dataset is made, that the caller's stream (`DatasetOptions::stream`,
  /// where `takes_caller_stream`) can order the space's work; nothing by default.
  static constexpr void check_caller_stream(const Space& /*space*/,
                                            typename Space::stream_type /*stream*/) noexcept {}
  /// @brief DLPack's `DLDeviceType` of the space's memory (`kDLCPU` = 1 by default).
  static constexpr int dlpack_device_type = 1;
  /// @brief DLPack's device id of `space`'s memory.
  static constexpr int dlpack_device_id(const Space& /*space*/) noexcept { return 0; }
  /// @brief Makes the space's device current until the returned scope ends, where the space
  /// has devices; nothing by default, so that code that launches work is the same everywhere.
  static constexpr detail::NoDeviceScope device_scope(const Space& /*space*/) noexcept {
    return {};
  }
};

/// @brief How datasets, epochs and streams work in memory space `Space`: the customisation
/// point of a space. Specialise it beside the space, deriving from `default_space_traits`
/// and overriding what the space does better (see `default_space_traits` for each member).
template <class Space>
struct space_traits : default_space_traits<Space> {};

/// @brief Alignment of every field's base inside a dataset allocation, in bytes: enough for
/// vectorised loads, cp.async and TMA, and the granule `cudaMalloc` itself guarantees.
inline constexpr std::size_t field_alignment = 256;

/// @brief Whether `S` is a memory space (it names itself as `S::memory_space`).
template <class S, class = void>
struct is_memory_space : std::false_type {};
template <class S>
struct is_memory_space<S, std::void_t<typename S::memory_space>>
    : std::is_same<typename S::memory_space, S> {};
/// @brief `is_memory_space<S>::value`.
template <class S>
inline constexpr bool is_memory_space_v = is_memory_space<S>::value;

/// @brief Whether kernels can read memory of space `S` directly.
template <class S>
struct is_device_accessible : std::bool_constant<S::device_accessible> {};
/// @brief `is_device_accessible<S>::value`.
template <class S>
inline constexpr bool is_device_accessible_v = is_device_accessible<S>::value;

}  // namespace resident
