// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "resident/error.hpp"
#include "resident/space_traits.hpp"

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

/// @brief Waits for the work on `stream` before something it uses is released: a release never
/// throws, and after a device failure (every call fails) nothing runs on the stream any more.
template <class Space>
void wait_before_release(const Space& space, typename Space::stream_type stream) noexcept {
  try {
    space.synchronize(stream);
  } catch (const Error&) {  // the device failed: there is nothing left to wait for
  }
}

/// @brief Whether `Space` allocates and frees in stream order (`allocate(bytes, stream)` and
/// `deallocate(pointer, bytes, stream)`, as `CudaSpace` does).
template <class Space, class = void>
struct stream_ordered : std::false_type {};
template <class Space>
struct stream_ordered<Space,
                      std::void_t<decltype(std::declval<const Space&>().allocate(
                                      std::size_t{}, typename Space::stream_type{})),
                                  decltype(std::declval<const Space&>().deallocate(
                                      nullptr, std::size_t{}, typename Space::stream_type{}))>>
    : std::true_type {};

/// @brief `bytes` of `space` for work on `stream`: in stream order where the space can.
template <class Space>
void* allocate_on(const Space& space, std::size_t bytes, typename Space::stream_type stream) {
  if constexpr (stream_ordered<Space>::value)
    return space.allocate(bytes, stream);
  else
    return space.allocate(bytes);
}

/// @brief One allocation of a memory space, released on destruction (move-only RAII).
///
/// An allocation that work on a stream reads or writes (an upload, gathers, chunk copies) is
/// ordered on that stream, and an owned stream is kept alive until it is released. A space with
/// the stream-ordered pair (`allocate(bytes, stream)`, `deallocate(pointer, bytes, stream)`)
/// allocates and frees on the stream itself; for any other, the release first waits for the
/// stream on the host, since a plain free is not stream-ordered: a space built on a pool would
/// hand the memory to the next allocation while the stream still works on it.
template <class Space>
class Allocation {
 public:
  using stream_type = typename Space::stream_type;

  Allocation() = default;
  /// @throws CapacityError (from the space) when the memory is not there; InvalidArgument
  /// when the space breaks its promise of `field_alignment` (the memory is given back first).
  Allocation(const Space& space, std::size_t bytes)
      : space_(space), pointer_(space.allocate(bytes)), bytes_(bytes) {
    check_alignment();
  }
  /// @brief Ordered on `stream` (see the class note), which `stream_owner` keeps alive (null
  /// for a stream the caller owns).
  /// @throws CapacityError (from the space) when the memory is not there.
  Allocation(const Space& space, std::size_t bytes, stream_type stream,
             std::shared_ptr<const void> stream_owner)
      : space_(space),
        pointer_(allocate_on(space, bytes, stream)),
        bytes_(bytes),
        stream_(stream),
        stream_owner_(std::move(stream_owner)),
        ordered_(true) {
    check_alignment();
  }
  Allocation(Allocation&& other) noexcept
      : space_(std::move(other.space_)),
        pointer_(std::exchange(other.pointer_, nullptr)),
        bytes_(std::exchange(other.bytes_, 0)),
        stream_(other.stream_),
        stream_owner_(std::move(other.stream_owner_)),
        ordered_(std::exchange(other.ordered_, false)) {}
  Allocation& operator=(Allocation&& other) noexcept {
    Allocation taken(std::move(other));
    swap(taken);
    return *this;
  }
  Allocation(const Allocation&) = delete;
  Allocation& operator=(const Allocation&) = delete;
  ~Allocation() { release(); }

  void swap(Allocation& other) noexcept {
    std::swap(space_, other.space_);
    std::swap(pointer_, other.pointer_);
    std::swap(bytes_, other.bytes_);
    std::swap(stream_, other.stream_);
    std::swap(stream_owner_, other.stream_owner_);
    std::swap(ordered_, other.ordered_);
  }

  [[nodiscard]] std::byte* data() const noexcept { return static_cast<std::byte*>(pointer_); }
  [[nodiscard]] std::size_t bytes() const noexcept { return bytes_; }

 private:
  void release() noexcept {
    if constexpr (stream_ordered<Space>::value) {
      if (ordered_) {
        space_.deallocate(pointer_, bytes_, stream_);
        return;
      }
    }
    if (pointer_ != nullptr && ordered_) wait_before_release(space_, stream_);
    space_.deallocate(pointer_, bytes_);
  }
  void check_alignment() {
    const auto address = reinterpret_cast<std::uintptr_t>(pointer_);
    if (address % field_alignment == 0) return;
    release();
    pointer_ = nullptr;
    throw InvalidArgument(
        "resident: memory space '" + space_.name() + "' returned " + std::to_string(bytes_) +
        " bytes aligned to only " + std::to_string(address & (~address + 1)) +
        " bytes; resident needs field_alignment (" + std::to_string(field_alignment) +
        " bytes, as cudaMalloc gives): make the space's allocate() return "
        "memory aligned to it");
  }

  Space space_{};
  void* pointer_ = nullptr;
  std::size_t bytes_ = 0;
  stream_type stream_{};
  std::shared_ptr<const void> stream_owner_;
  bool ordered_ = false;
};

}  // namespace resident::detail
