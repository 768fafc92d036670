// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <algorithm>
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

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

/// Gathered batches at least this large are split across threads: a batch is gathered again
/// every step, so the thread team lives for the whole epoch and its start-up is paid once.
inline constexpr std::size_t parallel_gather_threshold = std::size_t{4} << 20;

/// @brief Threads an epoch gathering batches of `batch_bytes` uses: the hardware threads, at
/// most 8, or 1 for small batches.
inline unsigned gather_thread_count(std::size_t batch_bytes) noexcept {
  if (batch_bytes < parallel_gather_threshold) return 1;
  return std::clamp(std::thread::hardware_concurrency(), 1u, 8u);
}

/// @brief A fixed team of threads, alive for one upload, that splits a byte range into equal
/// slices and runs a function on each slice at once (the calling thread takes the first).
/// Memory bandwidth, not one core, bounds a copy, so a few threads copy several times faster.
class CopyWorkers {
 public:
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
      stopping_ = true;
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
  /// and returns when all are done; rethrows the first exception a part threw.
  void for_each_slice(std::size_t begin, std::size_t end,
                      const std::function<void(std::size_t, std::size_t)>& slice) {
    const std::size_t parts = size();
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      // Slices are cache-line multiples so that no two threads write the same line.
      job_ = Job{begin, end, ((end - begin) / parts + 63) & ~std::size_t{63}, parts, &slice};
      pending_ = workers_.size();
      error_ = nullptr;
      ++generation_;
    }
    wake_.notify_all();
    run_part(0);
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [this] { return pending_ == 0; });
    job_.slice = nullptr;  // the caller's function ends with this call
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
    const std::function<void(std::size_t, std::size_t)>* slice = nullptr;
  };

  void run_part(unsigned index) noexcept {
    try {
      const std::size_t first = std::min(job_.end, job_.begin + job_.step * index);
      const std::size_t last =
          index + 1 == job_.parts ? job_.end : std::min(job_.end, first + job_.step);
      if (first < last) (*job_.slice)(first, last);
    } catch (...) {
      const std::lock_guard<std::mutex> lock(mutex_);
      if (!error_) error_ = std::current_exception();
    }
  }

  void serve(unsigned index) {
    std::size_t seen = 0;
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [&] { return stopping_ || generation_ != seen; });
        if (stopping_) return;
        seen = generation_;
      }
      run_part(index);
      {
        const std::lock_guard<std::mutex> lock(mutex_);
        --pending_;
      }
      done_.notify_one();
    }
  }

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  Job job_;
  std::size_t generation_ = 0;
  std::size_t pending_ = 0;
  bool stopping_ = false;
  std::exception_ptr error_;
};

}  // namespace resident::detail
