// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "resident/detail/function_ref.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <emmintrin.h>
#endif

namespace resident::detail {

/// Uploads below this many bytes stay on the calling thread: starting threads costs more than
/// the copy.
inline constexpr std::size_t parallel_upload_threshold = std::size_t{4} << 20;

/// @brief Threads an upload of `bytes` uses: `requested`, at most the hardware threads (0: the
/// hardware threads, at most 8), and 1 for small uploads.
inline unsigned upload_thread_count(unsigned requested, std::size_t bytes) noexcept {
  if (bytes < parallel_upload_threshold) return 1;
  const unsigned hardware = std::max(std::thread::hardware_concurrency(), 1u);
  // More threads than the hardware runs never speed a copy, and a huge request would start
  // threads until the system refuses.
  if (requested != 0) return std::min(requested, hardware);
  return std::min(hardware, 8u);
}

/// Gathered batches (all fields together) at least this large are split across threads. A
/// batch is gathered again every step, so the team lives for the whole epoch and its start-up
/// is paid once; what each batch pays is the hand-off, a few microseconds (`CopyWorkers`).
/// Measured with bench_epoch on 2 cores against the same build kept on one thread: CIFAR
/// batches of 256 rows (0.8 MB) gather 1.8 to 2.1 times faster on two threads, of 64 rows
/// (0.2 MB) 1.6 to 1.9 times; the threshold sits below the smallest batch measured.
inline constexpr std::size_t parallel_gather_threshold = std::size_t{128} << 10;

/// @brief Threads an epoch gathering batches of `batch_bytes` uses: the hardware threads, at
/// most 8, or 1 for small batches.
inline unsigned gather_thread_count(std::size_t batch_bytes) noexcept {
  if (batch_bytes < parallel_gather_threshold) return 1;
  return std::clamp(std::thread::hardware_concurrency(), 1u, 8u);
}

/// One step of a spin wait: tells the core that this is a spin (cheaper for a sibling
/// hyper-thread, and no memory-order mis-speculation when the awaited store lands).
inline void spin_pause() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

/// @brief A fixed team of threads that splits a range into equal slices and runs a function
/// on each slice at once (the calling thread takes the first). Memory bandwidth, not one core,
/// bounds a copy, so a few threads copy several times faster.
///
/// The hand-off costs microseconds, not a condition-variable round trip: a worker that finished
/// a slice spins for `spin_budget` on the next call's generation before it sleeps, so that the
/// batches of an epoch, which follow each other closely, reach an awake team. A caller that
/// computes between calls for longer than that finds the workers asleep and pays one wake-up
/// (tens of microseconds); the spin never takes a computing caller's core for longer than the
/// budget per call.
class CopyWorkers {
 public:
  /// How long an idle worker spins for the next call before it sleeps.
  static constexpr std::chrono::microseconds spin_budget{50};

  /// @param threads team size including the calling thread; when the system refuses a thread,
  /// the team is smaller (never an error: one thread still does all the work).
  explicit CopyWorkers(unsigned threads) {
    for (unsigned index = 1; index < threads; ++index) {
      try {
        workers_.emplace_back([this, index] { serve(index); });
      } catch (const std::system_error&) {
        break;
      }
    }
  }

  ~CopyWorkers() {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      stopping_.store(true);
    }
    wake_.notify_all();
    for (auto& worker : workers_) worker.join();
  }

  CopyWorkers(const CopyWorkers&) = delete;
  CopyWorkers& operator=(const CopyWorkers&) = delete;

  [[nodiscard]] unsigned size() const noexcept {
    return static_cast<unsigned>(workers_.size()) + 1;
  }

  /// @brief Runs `slice(first, last)` on `size()` disjoint parts of `[begin, end)` in parallel
  /// and returns when all are done; rethrows the first exception a part threw. Parts start at
  /// multiples of `granule` from `begin` (64 by default: byte slices then never share a cache
  /// line); the last part runs to `end`.
  template <class Slice>
  void for_each_slice(std::size_t begin, std::size_t end, Slice&& slice, std::size_t granule = 64) {
    const std::size_t parts = size();
    const std::size_t step = ((end - begin) / parts + granule - 1) / granule * granule;
    if (parts == 1 || end - begin <= granule) {  // nothing to share: no hand-off at all
      if (begin < end) slice(begin, end);
      return;
    }
    job_ = Job{begin, end, step, parts, FunctionRef<void(std::size_t, std::size_t)>(slice)};
    error_ = nullptr;
    pending_.store(workers_.size(), std::memory_order_relaxed);
    // Sequentially consistent with the workers' `sleepers_` increment: either this call sees a
    // worker that went to sleep and wakes it, or that worker sees the new generation.
    generation_.fetch_add(1);
    if (sleepers_.load() != 0) {
      { const std::lock_guard<std::mutex> lock(mutex_); }
      wake_.notify_all();
    }
    run_part(0);
    // The other parts started at the same time and are as long: a short spin, then yields in
    // case a worker was asleep or descheduled.
    for (unsigned spins = 0; pending_.load(std::memory_order_acquire) != 0; ++spins) {
      if (spins < 4096)
        spin_pause();
      else
        std::this_thread::yield();
    }
    if (error_) std::rethrow_exception(error_);
  }

 private:
  // The slicing of one for_each_slice call: part `index` is [begin + step * index, + step),
  // the last part running to `end`.
  struct Job {
    std::size_t begin = 0;
    std::size_t end = 0;
    std::size_t step = 0;
    std::size_t parts = 0;
    FunctionRef<void(std::size_t, std::size_t)> slice;  // the caller's, alive for the call
  };

  void run_part(unsigned index) noexcept {
    try {
      const std::size_t first = std::min(job_.end, job_.begin + job_.step * index);
      const std::size_t last =
          index + 1 == job_.parts ? job_.end : std::min(job_.end, first + job_.step);
      if (first < last) job_.slice(first, last);
    } catch (...) {
      const std::lock_guard<std::mutex> lock(mutex_);
      if (!error_) error_ = std::current_exception();
    }
  }

  // Waits for a generation other than `seen` (or stopping): spins for `spin_budget`, then
  // sleeps until woken.
  std::uint64_t await_generation(std::uint64_t seen) {
    using Clock = std::chrono::steady_clock;
    const auto spin_until = Clock::now() + spin_budget;
    for (unsigned spins = 1;; ++spins) {
      const std::uint64_t now = generation_.load(std::memory_order_acquire);
      if (now != seen || stopping_.load(std::memory_order_relaxed)) return now;
      spin_pause();
      if (spins % 64 == 0 && Clock::now() > spin_until) break;
    }
    std::unique_lock<std::mutex> lock(mutex_);
    sleepers_.fetch_add(1);
    wake_.wait(lock, [&] { return stopping_.load() || generation_.load() != seen; });
    sleepers_.fetch_sub(1);
    return generation_.load();
  }

  void serve(unsigned index) {
    std::uint64_t seen = 0;
    for (;;) {
      seen = await_generation(seen);
      if (stopping_.load()) return;
      run_part(index);
      pending_.fetch_sub(1, std::memory_order_release);
    }
  }

  std::vector<std::thread> workers_;
  std::mutex mutex_;  // guards error_, and the sleep of workers with `wake_`
  std::condition_variable wake_;
  Job job_;  // written before `generation_` is bumped, read by the workers after they see it
  std::atomic<std::uint64_t> generation_{0};
  std::atomic<std::size_t> pending_{0};  // workers still running the current call's parts
  std::atomic<unsigned> sleepers_{0};
  std::atomic<bool> stopping_{false};
  std::exception_ptr error_;
};

}  // namespace resident::detail
