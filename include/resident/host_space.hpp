// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// @brief `HostSpace`: datasets in host memory, for CPU training and for every test on a
/// machine without a GPU; optionally bounded by a byte budget so that refusals can be forced.

#include <cstddef>
#include <cstring>
#include <memory>
#include <string>

#include "resident/detail/byte_budget.hpp"
#include "resident/detail/host_memory.hpp"
#include "resident/error.hpp"
#include "resident/space_traits.hpp"

namespace resident {

/// @brief The stream type of `HostSpace`: host copies complete on the calling thread, so
/// there is nothing to order; the tag keeps the interface the same as on a device.
struct HostStream {};

namespace detail {

/// @brief What the spaces of host memory share (`HostSpace`, `CudaHostPinnedSpace`): copies
/// by `memcpy`, complete when they return, whatever stream (of type `Stream`) they are given;
/// and an optional byte budget, shared by every copy of a space made `with_budget`. `Space` is
/// the space itself.
template <class Space, class Stream>
class HostMemorySpace {
 public:
  using stream_type = Stream;  ///< The space's streams; host copies need none.

  /// @brief A space whose capacity is `bytes`, shared by every dataset allocated in it.
  [[nodiscard]] static Space with_budget(std::size_t bytes) {
    Space space;
    static_cast<HostMemorySpace&>(space).budget_ = std::make_shared<ByteBudget>(bytes);
    return space;
  }

  /// @brief Two spaces are equal when they draw from the same budget (or both from none).
  friend bool operator==(const Space& a, const Space& b) noexcept {
    return a.HostMemorySpace::budget_ == b.HostMemorySpace::budget_;
  }
  /// @brief Whether the two spaces draw from different budgets.
  friend bool operator!=(const Space& a, const Space& b) noexcept { return !(a == b); }

  /// @brief Copies `bytes` from host memory `source` into this space; done when it returns.
  /// Large copies bypass the caches (`detail::copy_past_caches`): uploads and streamed
  /// chunks are written once and read much later.
  void copy_from_host(void* destination, const void* source, std::size_t bytes,
                      stream_type /*stream*/) const noexcept {
    if (bytes != 0) copy_past_caches(destination, source, bytes);
  }

  /// @brief Copies `bytes` from this space into host memory; done when it returns.
  void copy_to_host(void* destination, const void* source, std::size_t bytes,
                    stream_type /*stream*/) const noexcept {
    if (bytes != 0) std::memcpy(destination, source, bytes);
  }

  /// @brief Whether this space was made by `with_budget`.
  [[nodiscard]] bool has_budget() const noexcept { return budget_ != nullptr; }

  /// @brief Bytes currently allocated from the budget (0 for a space without budget).
  [[nodiscard]] std::size_t used_bytes() const noexcept { return budget_ ? budget_->used() : 0; }

  /// @brief Budget left and budget, or the OS's available and total memory.
  [[nodiscard]] Capacity capacity() const { return capacity_report().capacity; }
  /// @brief `capacity()`, and where its figures came from (the budget, or the OS's figures).
  [[nodiscard]] CapacityReport capacity_report() const {
    if (budget_) return budget_capacity(*budget_);
    return host_capacity_report();
  }

 protected:
  /// Takes `bytes` from the budget, then the memory from `allocate()`, which returns null
  /// when the system has no memory left and throws on any other failure; the budget gets the
  /// bytes back whenever no memory comes of it.
  /// @throws CapacityError (named `name`) when the budget or the system cannot supply them;
  /// what `allocate` throws.
  template <class Allocate>
  [[nodiscard]] void* allocate_within_budget(std::size_t bytes, const std::string& name,
                                             Allocate&& allocate) const {
    std::size_t used_seen = 0;
    if (budget_ && !budget_->try_take(bytes, used_seen))
      throw CapacityError(name, bytes, budget_->limit() - used_seen, budget_->limit(), 0);
    void* pointer = nullptr;
    try {
      pointer = allocate();
    } catch (...) {
      give_back(bytes);
      throw;
    }
    if (pointer != nullptr) return pointer;
    give_back(bytes);
    const Capacity now = host_capacity();  // the system, not the budget, refused
    throw CapacityError(name, bytes, now.free_bytes, now.total_bytes, 0);
  }

  /// Returns `bytes` to the budget (nothing without one).
  void give_back(std::size_t bytes) const noexcept {
    if (budget_) budget_->give_back(bytes);
  }

  std::shared_ptr<ByteBudget> budget_;  // null: the whole host
};

}  // namespace detail

/// @brief Host memory, 256-byte aligned (large blocks mapped with huge pages advised).
/// Copies of a space share its budget, so every dataset living in one `with_budget` space
/// draws from the same bytes.
/// @note Thread-safe: datasets may be created and destroyed in one space from many threads.
class HostSpace : public detail::HostMemorySpace<HostSpace, HostStream> {
 public:
  using memory_space = HostSpace;  ///< Kokkos-style self-name; see `is_memory_space_v`.
  static constexpr bool device_accessible = false;  ///< Kernels cannot read it (not pinned).

  /// @brief A `HostStream`: nothing to create.
  [[nodiscard]] stream_type create_stream() const noexcept { return {}; }
  /// @brief Nothing to destroy.
  void destroy_stream(stream_type /*stream*/) const noexcept {}
  /// @brief Nothing to wait for: copies complete when they return.
  void synchronize(stream_type /*stream*/) const noexcept {}

  /// @brief The whole host: capacity is the memory the OS reports available.
  HostSpace() = default;

  /// @brief "host".
  [[nodiscard]] std::string name() const { return "host"; }

  /// @brief No reserve inside a budget (the budget is the figure the caller chose); 256 MiB of
  /// the machine's memory otherwise, so that a dataset does not starve the process using it.
  [[nodiscard]] std::size_t default_reserve_bytes() const noexcept {
    return budget_ ? 0 : std::size_t{256} << 20;
  }

  /// @brief `bytes` of memory aligned to `field_alignment`; null for 0 bytes.
  /// @throws CapacityError when the budget or the system cannot supply them.
  [[nodiscard]] void* allocate(std::size_t bytes) const {
    if (bytes == 0) return nullptr;
    return allocate_within_budget(bytes, name(), [bytes] { return detail::allocate_host(bytes); });
  }

  /// @brief Releases memory from `allocate(bytes)`, with the same `bytes`.
  void deallocate(void* pointer, std::size_t bytes) const noexcept {
    if (pointer == nullptr) return;
    detail::deallocate_host(pointer, bytes);
    give_back(bytes);
  }
};

/// @brief `HostSpace`'s engines: the defaults, with files read straight into its memory.
template <>
struct space_traits<HostSpace> : default_space_traits<HostSpace> {
  static constexpr bool host_writable = true;  ///< See `default_space_traits`.
};

}  // namespace resident
