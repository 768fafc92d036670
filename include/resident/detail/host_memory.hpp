// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <string>

#include "resident/space_traits.hpp"

#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace resident::detail {

/// Copies at least this large bypass the caches on their way in (`copy_past_caches`).
inline constexpr std::size_t streaming_store_threshold = std::size_t{256} << 10;

#if defined(__SSE2__)
/// @brief Copies `bytes` (at least 64) with non-temporal stores. Out of line: it is only called
/// for large copies, and inlined into a caller whose small copies read a small array, the
/// compiler would warn of reads past that array on the path it cannot tell is never taken.
[[gnu::noinline]] inline void copy_with_streaming_stores(unsigned char* to,
                                                         const unsigned char* from,
                                                         std::size_t bytes) noexcept {
  // Non-temporal stores need 16-byte aligned targets: the head up to alignment is copied as
  // usual, then 64 bytes (a line) at a time, then the tail.
  const std::size_t head = (16 - reinterpret_cast<std::uintptr_t>(to) % 16) % 16;
  std::memcpy(to, from, head);
  to += head;
  from += head;
  bytes -= head;
  auto* out = reinterpret_cast<__m128i*>(to);               // NOLINT: aligned above
  const auto* in = reinterpret_cast<const __m128i*>(from);  // NOLINT: unaligned loads
  const std::size_t lines = bytes / 64;
  for (std::size_t line = 0; line < lines; ++line, out += 4, in += 4) {
    const __m128i a = _mm_loadu_si128(in);
    const __m128i b = _mm_loadu_si128(in + 1);
    const __m128i c = _mm_loadu_si128(in + 2);
    const __m128i d = _mm_loadu_si128(in + 3);
    _mm_stream_si128(out, a);
    _mm_stream_si128(out + 1, b);
    _mm_stream_si128(out + 2, c);
    _mm_stream_si128(out + 3, d);
  }
  std::memcpy(to + lines * 64, from + lines * 64, bytes - lines * 64);
  _mm_sfence();  // the stores are weakly ordered: make them visible before the copy returns
}
#endif

/// @brief `memcpy`, but a copy of `streaming_store_threshold` bytes or more writes with
/// non-temporal stores: an upload or a streamed chunk is not read again before much more
/// memory has been written, so caching it only costs a read of every destination line first
/// (measured on 2 cores: 1 MiB pieces into a 48 MiB ring at 6 GB/s cached, 9 GB/s streamed,
/// where one 256 MiB `memcpy` runs at 10 GB/s). Plain `memcpy` where SSE2 is not there.
inline void copy_past_caches(void* destination, const void* source, std::size_t bytes) noexcept {
  if (bytes == 0) return;  // empty rows or fields may come with null pointers
#if defined(__SSE2__)
  if (bytes >= streaming_store_threshold) {
    copy_with_streaming_stores(static_cast<unsigned char*>(destination),
                               static_cast<const unsigned char*>(source), bytes);
    return;
  }
#endif
  std::memcpy(destination, source, bytes);
}

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

/// The large page that `advise_large_pages` asks for (x86-64, and AArch64 with 4 KiB pages).
inline constexpr std::size_t large_page_bytes = std::size_t{2} << 20;

/// @brief Asks the kernel to back the whole large pages within `bytes` at `address` by large
/// pages, now (`MADV_COLLAPSE`, Linux 6.1 and later: the small pages are copied into large ones
/// in place). Rows read in random order then cost no TLB miss each. Advice only: the contents
/// never change, and neither does the mapping (no flag is set on it, so a caller's
/// `MADV_NOHUGEPAGE` or `PR_SET_THP_DISABLE` still holds: the kernel then declines). Only large
/// pages whose small pages are all in memory are asked for: collapsing fills in the others, and
/// rows never written (a sparse mapping) would take memory they do not take now. Memory the
/// kernel will not collapse (file mappings, page-locked pages, older kernels, no large page
/// free) stays as it is.
inline void advise_large_pages(const void* address, std::size_t bytes) noexcept {
#if defined(__linux__)
  constexpr int collapse = 25;  // MADV_COLLAPSE, which older C libraries do not define
  constexpr std::size_t most_small_pages = 512;
  const auto small_page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  const std::size_t small_pages = large_page_bytes / small_page;
  const auto start = reinterpret_cast<std::uintptr_t>(address);
  const std::uintptr_t first = (start + large_page_bytes - 1) & ~(large_page_bytes - 1);
  const std::uintptr_t last = (start + bytes) & ~(large_page_bytes - 1);
  if (address == nullptr || last <= first || small_pages > most_small_pages) return;
  unsigned char resident[most_small_pages];  // NOLINT(modernize-avoid-c-arrays): mincore's
  // The address `at` as a pointer into the rows (no integer-to-pointer cast).
  auto* const rows = static_cast<std::byte*>(const_cast<void*>(address));
  const auto page = [&](std::uintptr_t at) { return static_cast<void*>(rows + (at - start)); };
  const auto advise = [&](std::uintptr_t from, std::uintptr_t to) {
    if (from != to) (void)::madvise(page(from), to - from, collapse);
  };
  std::uintptr_t run = first;  // the first large page of the run asked for next
  for (std::uintptr_t at = first; at < last; at += large_page_bytes) {
    const bool whole = ::mincore(page(at), large_page_bytes, resident) == 0 &&
                       std::all_of(resident, resident + small_pages,
                                   [](unsigned char state) { return (state & 1) != 0; });
    if (whole) continue;
    advise(run, at);
    run = at + large_page_bytes;
  }
  advise(run, last);
#else
  (void)address;
  (void)bytes;
#endif
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

/// @brief The text of a small file (its first `most` bytes), empty where it cannot be read.
/// (Not <fstream>: its parse cost would land on every unit that includes a dataset.)
inline std::string small_file_text(const char* path, std::size_t most = 16384) {
  std::string text;
  if (std::FILE* file = std::fopen(path, "re")) {
    text.resize(most);
    text.resize(std::fread(text.data(), 1, most, file));
    (void)std::fclose(file);
  }
  return text;
}

/// @brief The decimal number at the start of `text` (after blanks), if there is one.
inline bool leading_number(const char* text, std::size_t& value) {
  while (*text == ' ' || *text == '\t') ++text;
  if (*text < '0' || *text > '9') return false;
  char* end = nullptr;
  errno = 0;
  const unsigned long long number = std::strtoull(text, &end, 10);
  if (errno != 0) return false;
  value = static_cast<std::size_t>(number);
  return true;
}

/// @brief Reads one "Key: N kB" line of /proc/meminfo, in bytes; 0 when absent.
inline std::size_t meminfo_bytes(const std::string& key) {
  const std::string text = small_file_text("/proc/meminfo");
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t end = std::min(text.find('\n', at), text.size());
    if (text.compare(at, key.size() + 1, key + ":") == 0) {
      std::size_t kibibytes = 0;
      return leading_number(text.c_str() + at + key.size() + 1, kibibytes) ? kibibytes * 1024 : 0;
    }
    at = end + 1;
  }
  return 0;
}

/// @brief A number from a cgroup v2 file ("max" or unreadable gives `fallback`).
inline std::size_t cgroup_bytes(const char* path, std::size_t fallback) {
  std::size_t value = 0;
  return leading_number(small_file_text(path).c_str(), value) ? value : fallback;
}

/// @brief Available and total host memory as the OS reports them, narrowed by a cgroup v2
/// memory limit when the process runs in one (containers, Slurm jobs): that limit, not the
/// machine's RAM, is what an allocation runs into.
inline CapacityReport host_capacity_report() {
  CapacityReport report{{meminfo_bytes("MemAvailable"), meminfo_bytes("MemTotal")},
                        "/proc/meminfo's MemAvailable and MemTotal"};
  Capacity& capacity = report.capacity;
#if defined(__linux__)
  if (capacity.total_bytes == 0) {
    report.source = "sysconf's available and physical pages";
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
    report.source += ", narrowed by the cgroup's memory.max and memory.current";
  }
  return report;
}

/// @brief `host_capacity_report()`'s figures.
inline Capacity host_capacity() { return host_capacity_report().capacity; }

/// @brief Host memory a process can still take without pushing the system into swap or the
/// OOM killer: `host_capacity().free_bytes` (MemAvailable, narrowed by a cgroup limit). What
/// decides whether a streamed dataset's rows are read into host memory once.
/// @note Override hook for tests and for capping what a process counts on: the environment
/// variable `RESIDENT_HOST_AVAILABLE_BYTES`, set to a decimal byte count, replaces the figure
/// (read at every call; a value that is not a number is ignored).
inline std::size_t host_available_bytes() {
  if (const char* figure = std::getenv("RESIDENT_HOST_AVAILABLE_BYTES");
      figure != nullptr && *figure != '\0') {
    constexpr std::size_t most = std::numeric_limits<std::size_t>::max();
    std::size_t bytes = 0;
    bool number = true;
    for (const char* digit = figure; *digit != '\0' && number; ++digit) {
      const auto value = static_cast<std::size_t>(*digit - '0');
      number = *digit >= '0' && *digit <= '9' && bytes <= (most - value) / 10;
      bytes = bytes * 10 + value;
    }
    if (number) return bytes;
  }
  return host_capacity().free_bytes;
}

}  // namespace resident::detail
