// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <fstream>
#include <limits>
#include <new>
#include <string>

#include "resident/space_traits.hpp"

#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

namespace resident::detail {

/// Allocations at least this large are mapped directly (page aligned, huge pages advised):
/// first-touch page faults dominate a copy into fresh memory, and 2 MiB pages cut them 512x.
inline constexpr std::size_t host_mmap_threshold = std::size_t{2} << 20;

/// @brief Host memory aligned to `field_alignment`; null when the system refuses (never
/// throws, so callers decide how to report it). Zero bytes give null.
inline void* allocate_host(std::size_t bytes) noexcept {
  if (bytes == 0) return nullptr;
#if defined(__linux__)
  if (bytes >= host_mmap_threshold) {
    void* pointer =
        ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (pointer == MAP_FAILED) return nullptr;
    // Advice only: where transparent huge pages are off this fails and nothing changes.
    (void)::madvise(pointer, bytes, MADV_HUGEPAGE);
    return pointer;
  }
#endif
  return ::operator new (bytes, std::align_val_t{field_alignment}, std::nothrow);
}

/// @brief Releases memory from `allocate_host(bytes)`; `bytes` must be the same value.
inline void deallocate_host(void* pointer, std::size_t bytes) noexcept {
  if (pointer == nullptr) return;
#if defined(__linux__)
  if (bytes >= host_mmap_threshold) {
    (void)::munmap(pointer, bytes);
    return;
  }
#endif
  ::operator delete (pointer, std::align_val_t{field_alignment});
}

/// @brief Reads one "Key: N kB" line of /proc/meminfo, in bytes; 0 when absent.
inline std::size_t meminfo_bytes(const std::string& key) {
  std::ifstream meminfo("/proc/meminfo");
  std::string name;
  std::size_t kibibytes = 0;
  std::string unit;
  while (meminfo >> name >> kibibytes >> unit) {
    if (name == key + ":") return kibibytes * 1024;
  }
  return 0;
}

/// @brief A number from a cgroup v2 file ("max" or unreadable gives `fallback`).
inline std::size_t cgroup_bytes(const char* path, std::size_t fallback) {
  std::ifstream file(path);
  std::size_t value = 0;
  if (file >> value) return value;
  return fallback;
}

/// @brief Available and total host memory as the OS reports them, narrowed by a cgroup v2
/// memory limit when the process runs in one (containers, Slurm jobs): that limit, not the
/// machine's RAM, is what an allocation runs into.
inline Capacity host_capacity() {
  Capacity capacity{meminfo_bytes("MemAvailable"), meminfo_bytes("MemTotal")};
#if defined(__linux__)
  if (capacity.total_bytes == 0) {
    const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    capacity.total_bytes = static_cast<std::size_t>(::sysconf(_SC_PHYS_PAGES)) * page;
    capacity.free_bytes = static_cast<std::size_t>(::sysconf(_SC_AVPHYS_PAGES)) * page;
  }
#endif
  constexpr std::size_t unlimited = std::numeric_limits<std::size_t>::max();
  const std::size_t limit = cgroup_bytes("/sys/fs/cgroup/memory.max", unlimited);
  if (limit < capacity.total_bytes) {
    const std::size_t used = cgroup_bytes("/sys/fs/cgroup/memory.current", 0);
    const std::size_t left = limit > used ? limit - used : 0;
    capacity.total_bytes = limit;
    if (left < capacity.free_bytes) capacity.free_bytes = left;
  }
  return capacity;
}

}  // namespace resident::detail
