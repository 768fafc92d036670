// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// The soak test's heap meter: every replaceable operator new and delete, counting the bytes the
// program holds through them. Unlike malloc's own statistics this figure does not move with
// the allocator's per-thread arenas and caches, so any change in it is the program's doing.
#include "counting_new.hpp"

#include <malloc.h>

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <new>

namespace {

std::atomic<std::size_t> live_bytes{0};

void* take(std::size_t bytes, std::size_t alignment) noexcept {
  if (bytes == 0) bytes = 1;
  void* pointer = nullptr;
  if (alignment <= alignof(std::max_align_t)) {
    pointer = std::malloc(bytes);
  } else {
    bytes = (bytes + alignment - 1) / alignment * alignment;  // aligned_alloc needs a multiple
    pointer = std::aligned_alloc(alignment, bytes);
  }
  if (pointer != nullptr) live_bytes.fetch_add(::malloc_usable_size(pointer));
  return pointer;
}

void* take_or_throw(std::size_t bytes, std::size_t alignment) {
  if (void* pointer = take(bytes, alignment)) return pointer;
  throw std::bad_alloc();
}

void give(void* pointer) noexcept {
  if (pointer == nullptr) return;
  live_bytes.fetch_sub(::malloc_usable_size(pointer));
  std::free(pointer);
}

constexpr std::size_t plain = 0;
std::size_t value(std::align_val_t alignment) { return static_cast<std::size_t>(alignment); }

}  // namespace

namespace resident::testing {
std::size_t heap_bytes_in_use() noexcept { return live_bytes.load(); }
}  // namespace resident::testing

void* operator new(std::size_t bytes) { return take_or_throw(bytes, plain); }
void* operator new[](std::size_t bytes) { return take_or_throw(bytes, plain); }
void* operator new(std::size_t bytes, std::align_val_t alignment) {
  return take_or_throw(bytes, value(alignment));
}
void* operator new[](std::size_t bytes, std::align_val_t alignment) {
  return take_or_throw(bytes, value(alignment));
}
void* operator new(std::size_t bytes, const std::nothrow_t& /*tag*/) noexcept {
  return take(bytes, plain);
}
void* operator new[](std::size_t bytes, const std::nothrow_t& /*tag*/) noexcept {
  return take(bytes, plain);
}
void* operator new(std::size_t bytes, std::align_val_t alignment,
                   const std::nothrow_t& /*tag*/) noexcept {
  return take(bytes, value(alignment));
}
void* operator new[](std::size_t bytes, std::align_val_t alignment,
                     const std::nothrow_t& /*tag*/) noexcept {
  return take(bytes, value(alignment));
}

void operator delete(void* pointer) noexcept { give(pointer); }
void operator delete[](void* pointer) noexcept { give(pointer); }
void operator delete(void* pointer, std::size_t /*bytes*/) noexcept { give(pointer); }
void operator delete[](void* pointer, std::size_t /*bytes*/) noexcept { give(pointer); }
void operator delete(void* pointer, std::align_val_t /*alignment*/) noexcept { give(pointer); }
void operator delete[](void* pointer, std::align_val_t /*alignment*/) noexcept { give(pointer); }
void operator delete(void* pointer, std::size_t /*bytes*/,
                     std::align_val_t /*alignment*/) noexcept {
  give(pointer);
}
void operator delete[](void* pointer, std::size_t /*bytes*/,
                       std::align_val_t /*alignment*/) noexcept {
  give(pointer);
}
void operator delete(void* pointer, const std::nothrow_t& /*tag*/) noexcept { give(pointer); }
void operator delete[](void* pointer, const std::nothrow_t& /*tag*/) noexcept { give(pointer); }
void operator delete(void* pointer, std::align_val_t /*alignment*/,
                     const std::nothrow_t& /*tag*/) noexcept {
  give(pointer);
}
void operator delete[](void* pointer, std::align_val_t /*alignment*/,
                       const std::nothrow_t& /*tag*/) noexcept {
  give(pointer);
}
