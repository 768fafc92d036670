// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// @brief What makes a type a memory space, and the traits that ask about one (after Kokkos'
/// `is_memory_space` and `SpaceAccessibility`).
///
/// A memory space `S` provides:
/// - `using memory_space = S;`, `using stream_type = ...;`, `static constexpr bool
///   device_accessible` (whether kernels can read its memory);
/// - `std::string name() const` ("host", "cuda:0") and `Capacity capacity() const`;
/// - `std::size_t default_reserve_bytes() const`: the reserve used when `DatasetOptions`
///   names none;
/// - `void* allocate(std::size_t) const` (throws `CapacityError` when memory runs out; returns
///   null for 0 bytes) and `void deallocate(void*, std::size_t) const noexcept`;
/// - `stream_type create_stream() const`, `void destroy_stream(stream_type) const noexcept`,
///   `void synchronize(stream_type) const`;
/// - `copy_from_host(dst, src, bytes, stream)` and `copy_to_host(dst, src, bytes, stream)`,
///   ordered on `stream`; the copy is complete once `synchronize(stream)` returns.

#include <cstddef>
#include <type_traits>

namespace resident {

/// @brief Free and total bytes of a memory space, as its `capacity()` reports them.
struct Capacity {
  std::size_t free_bytes = 0;   ///< Bytes that can be allocated now.
  std::size_t total_bytes = 0;  ///< Bytes the space holds in all.
};

namespace detail {

/// @brief Bytes left for a dataset once `reserve` is set aside from `free` (0 when the reserve
/// is larger): the one figure every capacity check compares against.
constexpr std::size_t usable_bytes(std::size_t free, std::size_t reserve) noexcept {
  return free > reserve ? free - reserve : 0;
}

/// @brief What `device_scope` gives a space without devices: nothing to make current.
struct NoDeviceScope {};

/// @brief Makes the device of `space` current until the returned scope ends, where the space
/// has devices (`CudaSpace`, see cuda_space.hpp); nothing for every other space, so that code
/// that launches work is the same on every space.
template <class Space>
constexpr NoDeviceScope device_scope(const Space& /*space*/) noexcept {
  return {};
}

}  // namespace detail

/// @brief Alignment of every field's base inside a dataset allocation, in bytes: enough for
/// vectorised loads, cp.async and TMA, and the granule `cudaMalloc` itself guarantees.
inline constexpr std::size_t field_alignment = 256;

/// @brief Whether `S` is a memory space (it names itself as `S::memory_space`).
template <class S, class = void>
struct is_memory_space : std::false_type {};
template <class S>
struct is_memory_space<S, std::void_t<typename S::memory_space>>
    : std::is_same<typename S::memory_space, S> {};
template <class S>
inline constexpr bool is_memory_space_v = is_memory_space<S>::value;

/// @brief Whether kernels can read memory of space `S` directly.
template <class S>
struct is_device_accessible : std::bool_constant<S::device_accessible> {};
template <class S>
inline constexpr bool is_device_accessible_v = is_device_accessible<S>::value;

}  // namespace resident
