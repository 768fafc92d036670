// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <type_traits>
#include <utility>
#include <vector>

namespace resident::detail {

/// @brief `count` owners made by `make()` in turn. Where one throws, the owners made so far are
/// released (each by its own destructor) before the exception leaves: a ring of events or
/// buffers never leaks the part made before a failure.
template <class Make>
auto make_owners(std::size_t count, Make make) -> std::vector<decltype(make())> {
  std::vector<decltype(make())> owners;
  owners.reserve(count);
  for (std::size_t index = 0; index < count; ++index) owners.push_back(make());
  return owners;
}

/// One allocation of a memory space, released on destruction (move-only RAII).
template <class Space>
class Allocation {
 public:
  Allocation() = default;
  /// @throws CapacityError (from the space) when the memory is not there.
  Allocation(const Space& space, std::size_t bytes)
      : space_(space), pointer_(space.allocate(bytes)), bytes_(bytes) {}
  Allocation(Allocation&& other) noexcept
      : space_(std::move(other.space_)),
        pointer_(std::exchange(other.pointer_, nullptr)),
        bytes_(std::exchange(other.bytes_, 0)) {}
  Allocation& operator=(Allocation&& other) noexcept {
    Allocation taken(std::move(other));
    swap(taken);
    return *this;
  }
  Allocation(const Allocation&) = delete;
  Allocation& operator=(const Allocation&) = delete;
  ~Allocation() { space_.deallocate(pointer_, bytes_); }

  void swap(Allocation& other) noexcept {
    std::swap(space_, other.space_);
    std::swap(pointer_, other.pointer_);
    std::swap(bytes_, other.bytes_);
  }

  [[nodiscard]] std::byte* data() const noexcept { return static_cast<std::byte*>(pointer_); }
  [[nodiscard]] std::size_t bytes() const noexcept { return bytes_; }

 private:
  Space space_{};
  void* pointer_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace resident::detail
