// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// The upload measured next to its baselines in the same iteration, shared by bench_upload
// (every size) and bench_batch_view (one size, beside the cost of batch(i)).

#include <benchmark/benchmark.h>
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <new>
#include <numeric>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "resident/resident.hpp"
#include "support/cuda_timer.hpp"

namespace resident::bench {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

inline DatasetOptions upload_options() {
  DatasetOptions options;
  options.reserve_bytes = 0;
  return options;
}

/// Bytes/s of the upload, and for each baseline (timed over the same iterations) its GB/s and
/// `ratio_to_<baseline>` = upload rate / baseline rate: above 1 means the upload is faster.
inline void report_upload(benchmark::State& state, std::size_t bytes, double upload_seconds,
                          std::initializer_list<std::pair<const char*, double>> baselines) {
  const double total = static_cast<double>(bytes) * static_cast<double>(state.iterations());
  state.SetBytesProcessed(static_cast<std::int64_t>(total));
  state.counters["upload_GBps"] = total / upload_seconds / 1e9;
  for (const auto& [name, baseline_seconds] : baselines) {
    state.counters[std::string(name) + "_GBps"] = total / baseline_seconds / 1e9;
    state.counters["ratio_to_" + std::string(name)] = baseline_seconds / upload_seconds;
  }
}

/// Runs `work(index)` for every index below `threads` at once, the calling thread taking 0.
template <class Work>
void on_threads(std::size_t threads, Work work) {
  std::vector<std::thread> team;
  for (std::size_t index = 1; index < threads; ++index) team.emplace_back(work, index);
  work(0);
  for (auto& thread : team) thread.join();
}

/// `[first, last)` of slice `index` of `bytes` cut into `threads` slices of whole 4 KiB pages.
inline std::pair<std::size_t, std::size_t> page_slice(std::size_t bytes, std::size_t threads,
                                                      std::size_t index) {
  const std::size_t slice = (bytes / threads + 4095) / 4096 * 4096;
  const std::size_t first = std::min(bytes, index * slice);
  return {first, index + 1 == threads ? bytes : std::min(bytes, first + slice)};
}

/// Fresh memory as the host space maps it: `mmap` with large pages advised.
inline void* map_fresh(std::size_t bytes) {
  void* target = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (target == MAP_FAILED) throw std::bad_alloc();
  (void)::madvise(target, bytes, MADV_HUGEPAGE);
  return target;
}

/// The fastest plain copy into fresh memory: `map_fresh`, then one `std::memcpy` per thread
/// over equal slices, then `munmap`. Written here with nothing of the library, as the limit an
/// upload into fresh memory is held to.
inline void copy_into_fresh_huge_pages(const void* source, std::size_t bytes, std::size_t threads) {
  void* target = map_fresh(bytes);
  on_threads(threads, [&](std::size_t index) {
    const auto [first, last] = page_slice(bytes, threads, index);
    std::memcpy(static_cast<char*>(target) + first, static_cast<const char*>(source) + first,
                last - first);
  });
  benchmark::DoNotOptimize(target);
  ::munmap(target, bytes);
}

/// What faulting fresh memory costs alone, the part of an upload no copy avoids: `map_fresh`,
/// then one write to every 4 KiB page by the same threads (the kernel clears each page, large
/// or small, as it is first written), then `munmap`.
inline void fault_fresh_huge_pages(std::size_t bytes, std::size_t threads) {
  auto* target = static_cast<volatile char*>(map_fresh(bytes));
  on_threads(threads, [&](std::size_t index) {
    const auto [first, last] = page_slice(bytes, threads, index);
    for (std::size_t at = first; at < last; at += 4096) target[at] = 1;
  });
  ::munmap(const_cast<char*>(target), bytes);
}

/// HostSpace upload (capacity check, allocation, parallel copy, release) against, in the same
/// iteration: `malloc` + `std::memcpy` into fresh memory (`memcpy`, what a plain copy costs),
/// `std::memcpy` into memory touched before (`memcpy_warm`), the upload's threads copying into
/// memory touched before (`copy_warm`, the DRAM limit of a copy), the same threads copying
/// into fresh large pages (`fresh_limit`, see `copy_into_fresh_huge_pages`) and faulting
/// fresh large pages alone (`fault`; `ratio_to_fault` is then the share of the upload's time
/// that faulting alone takes). `ratio_to_fault_plus_copy` is (fault + copy_warm) time over the
/// upload's: near 1 when the upload costs what faulting its memory and copying into it cost,
/// so that what separates it from a copy into touched memory is the faulting.
inline void BM_HostUploadVsMemcpy(benchmark::State& state) {
  const auto bytes = static_cast<std::size_t>(state.range(0));
  const std::size_t threads = detail::upload_thread_count(0, bytes);
  std::vector<std::uint8_t> source(bytes);
  std::iota(source.begin(), source.end(), std::uint8_t{0});
  std::vector<std::uint8_t> warm(bytes, 1);
  const HostTensor<const std::uint8_t> tensor(source.data(), {bytes});
  // One untimed round first: in a VM the first touch of memory the guest handed back to the
  // hypervisor costs several times a copy, once per process, and would otherwise be the only
  // iteration timed at large sizes.
  { const DeviceDataset<HostSpace, std::uint8_t> ds(HostSpace{}, upload_options(), tensor); }
  std::free(std::memcpy(std::malloc(bytes), source.data(), bytes));
  double upload = 0, fresh = 0, touched = 0, team = 0, limit = 0, fault = 0;
  for (auto _ : state) {
    auto start = Clock::now();
    {
      const DeviceDataset<HostSpace, std::uint8_t> ds(HostSpace{}, upload_options(), tensor);
      benchmark::DoNotOptimize(ds.field<0>().data());
    }
    const double upload_seconds = seconds_since(start);
    upload += upload_seconds;

    start = Clock::now();
    void* target = std::malloc(bytes);
    std::memcpy(target, source.data(), bytes);
    benchmark::DoNotOptimize(target);
    std::free(target);
    fresh += seconds_since(start);

    start = Clock::now();
    std::memcpy(warm.data(), source.data(), bytes);
    benchmark::DoNotOptimize(warm.data());
    benchmark::ClobberMemory();
    touched += seconds_since(start);

    start = Clock::now();
    on_threads(threads, [&](std::size_t index) {
      const auto [first, last] = page_slice(bytes, threads, index);
      std::memcpy(warm.data() + first, source.data() + first, last - first);
    });
    benchmark::ClobberMemory();
    team += seconds_since(start);

    start = Clock::now();
    copy_into_fresh_huge_pages(source.data(), bytes, threads);
    limit += seconds_since(start);

    start = Clock::now();
    fault_fresh_huge_pages(bytes, threads);
    fault += seconds_since(start);
    state.SetIterationTime(upload_seconds);
  }
  report_upload(state, bytes, upload,
                {{"memcpy", fresh},
                 {"memcpy_warm", touched},
                 {"copy_warm", team},
                 {"fresh_limit", limit},
                 {"fault", fault}});
  state.counters["ratio_to_fault_plus_copy"] = (fault + team) / upload;
}

#if RESIDENT_HAS_CUDA
/// CudaSpace upload, from pageable memory (`range(1) == 0`) or from pinned memory (1), against
/// `cudaMemcpy` from pinned memory (`pinned`, the practical bus limit) and from pageable memory
/// (`naive`), both timed with CUDA events in the same iteration. The upload is timed end to
/// end on the host clock (allocation, staging, final synchronisation), as a caller waits.
inline void BM_CudaUploadVsMemcpy(benchmark::State& state) {
  if (CudaSpace::device_count() == 0) {
    state.SkipWithError("no CUDA device on this machine");
    return;
  }
  const auto bytes = static_cast<std::size_t>(state.range(0));
  const bool from_pinned = state.range(1) != 0;
  std::vector<std::uint8_t> pageable(bytes, 7);
  void* pinned = nullptr;
  void* device = nullptr;
  RESIDENT_CUDA_TRY(cudaMallocHost(&pinned, bytes));
  std::memset(pinned, 7, bytes);
  RESIDENT_CUDA_TRY(cudaMalloc(&device, bytes));
  CudaTimer timer;
  const HostTensor<const std::uint8_t> tensor(
      from_pinned ? static_cast<const std::uint8_t*>(pinned) : pageable.data(), {bytes});
  double upload = 0, pinned_copy = 0, pageable_copy = 0;
  for (auto _ : state) {
    const auto begin = Clock::now();
    {
      const DeviceDataset<CudaSpace, std::uint8_t> ds(CudaSpace{0}, upload_options(), tensor);
      benchmark::DoNotOptimize(ds.field<0>().data());
    }
    const double upload_seconds = seconds_since(begin);
    upload += upload_seconds;
    pinned_copy += timer.copy(device, pinned, bytes);
    pageable_copy += timer.copy(device, pageable.data(), bytes);
    state.SetIterationTime(upload_seconds);
  }
  report_upload(state, bytes, upload, {{"pinned", pinned_copy}, {"naive", pageable_copy}});
  state.SetLabel(from_pinned ? "from pinned" : "from pageable");
  (void)cudaFree(device);
  (void)cudaFreeHost(pinned);
}

/// The alternative to staging, measured so that the default can be chosen from figures:
/// page-lock the source itself in chunks of `range(1)` bytes (`cudaHostRegister`), copy each
/// chunk as soon as it is locked while the previous one transfers, unlock it after its
/// transfer. Against pinned `cudaMemcpy` (`ratio_to_pinned`) in the same iteration.
inline void BM_CudaRegisterChunksThenCopy(benchmark::State& state) {
  if (CudaSpace::device_count() == 0) {
    state.SkipWithError("no CUDA device on this machine");
    return;
  }
  const auto bytes = static_cast<std::size_t>(state.range(0));
  const auto chunk = static_cast<std::size_t>(state.range(1));
  // Page-aligned source and chunks, so that no two registrations share a page.
  auto* source = static_cast<std::uint8_t*>(std::aligned_alloc(4096, bytes));
  std::memset(source, 7, bytes);
  void* pinned = nullptr;
  void* device = nullptr;
  RESIDENT_CUDA_TRY(cudaMallocHost(&pinned, bytes));
  RESIDENT_CUDA_TRY(cudaMalloc(&device, bytes));
  CudaTimer timer;
  std::vector<cudaEvent_t> done(bytes / chunk + 1);
  for (auto& event : done)
    RESIDENT_CUDA_TRY(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
  double registered = 0, pinned_copy = 0;
  for (auto _ : state) {
    const auto begin = Clock::now();
    for (std::size_t first = 0, index = 0; first < bytes; first += chunk, ++index) {
      const std::size_t n = std::min(chunk, bytes - first);
      RESIDENT_CUDA_TRY(cudaHostRegister(source + first, n, cudaHostRegisterDefault));
      RESIDENT_CUDA_TRY(cudaMemcpyAsync(static_cast<std::uint8_t*>(device) + first, source + first,
                                        n, cudaMemcpyHostToDevice));
      RESIDENT_CUDA_TRY(cudaEventRecord(done[index]));
      if (index > 0) {
        RESIDENT_CUDA_TRY(cudaEventSynchronize(done[index - 1]));
        RESIDENT_CUDA_TRY(cudaHostUnregister(source + first - chunk));
      }
    }
    RESIDENT_CUDA_TRY(cudaDeviceSynchronize());
    RESIDENT_CUDA_TRY(cudaHostUnregister(source + (bytes - 1) / chunk * chunk));
    const double seconds = seconds_since(begin);
    registered += seconds;
    pinned_copy += timer.copy(device, pinned, bytes);
    state.SetIterationTime(seconds);
  }
  report_upload(state, bytes, registered, {{"pinned", pinned_copy}});
  for (auto event : done) (void)cudaEventDestroy(event);
  (void)cudaFree(device);
  (void)cudaFreeHost(pinned);
  std::free(source);
}
#endif

}  // namespace resident::bench
