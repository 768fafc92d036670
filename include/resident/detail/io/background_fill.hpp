// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// Rows a stream owns, filled once in the background (a deflated archive member's, inflated):
// making the dataset starts the filling and returns, and a batch waits only for its own rows
// (a window-order epoch starts on the filled prefix). A deflate stream reads front to back
// only, so the rows come in order, a step at a time, each step reported to the progress
// callback, which can stop the filling as it can stop an upload.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <utility>

#include "resident/detail/format_bytes.hpp"
#include "resident/error.hpp"
#include "resident/progress.hpp"

namespace resident::detail {

/// Bytes filled between two reports (and two checks of the stop flag).
inline constexpr std::size_t fill_step_bytes = std::size_t{4} << 20;

/// @brief The progress of the fills of one dataset, reported together: after each step of any
/// of them, `callback` hears of the bytes all of them have filled, one call at a time (on the
/// filling threads); `false` stops them all, and so does an exception it throws, which every
/// fill then ends with (`thrown`): a reader of any of them gets the callback's exception.
class FillProgress {
 public:
  FillProgress(std::size_t total, ProgressCallback callback)
      : total_(total), callback_(std::move(callback)), start_(std::chrono::steady_clock::now()) {}

  /// @brief Counts `bytes` more filled and reports; false once the callback asked to stop.
  bool report(std::size_t bytes) {
    const std::lock_guard<std::mutex> lock(mutex_);
    done_ += bytes;
    if (callback_ && !stopped_) {
      const Progress progress{
          done_, total_,
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count()};
      stopped_ = true;  // unless the callback returns true: an exception stops every fill
      try {
        stopped_ = !callback_(progress);
      } catch (...) {
        thrown_ = std::current_exception();
        throw;
      }
    }
    return !stopped_;
  }
  /// @brief Whether the callback asked to stop.
  [[nodiscard]] bool stopped() const {
    const std::lock_guard<std::mutex> lock(mutex_);
    return stopped_;
  }
  /// @brief What the callback threw to stop, or null (it returned false, or goes on).
  [[nodiscard]] std::exception_ptr thrown() const {
    const std::lock_guard<std::mutex> lock(mutex_);
    return thrown_;
  }

 private:
  std::size_t total_;
  ProgressCallback callback_;
  std::chrono::steady_clock::time_point start_;
  mutable std::mutex mutex_;
  std::size_t done_ = 0;
  bool stopped_ = false;
  std::exception_ptr thrown_;
};

/// @brief Bytes `[first, last)` of a memory block, filled in order by a thread of its own: each
/// step by `fill(offset, bytes, into)`, then `finish()` once; readers wait for the bytes they
/// read. Stops (and joins its thread) when destroyed.
class BackgroundFill {
 public:
  using Fill = std::function<void(std::size_t offset, std::size_t bytes, std::byte* into)>;

  /// @brief Starts filling bytes `[first, last)` of `memory` (its owner is held).
  /// @param what the rows, for messages ("member 'x.npy' of a.npz")
  /// @param progress told of each step (null: none), and asked whether to go on
  /// @throws std::system_error when no thread can be started.
  static std::shared_ptr<const BackgroundFill> start(std::shared_ptr<std::byte> memory,
                                                     std::size_t first, std::size_t last, Fill fill,
                                                     std::function<void()> finish, std::string what,
                                                     std::shared_ptr<FillProgress> progress) {
    std::shared_ptr<BackgroundFill> filling(
        new BackgroundFill(std::move(memory), first, last, std::move(fill), std::move(finish),
                           std::move(what), std::move(progress)));
    filling->thread_ = std::thread([raw = filling.get()] { raw->run(); });
    return filling;
  }
  BackgroundFill(const BackgroundFill&) = delete;
  BackgroundFill& operator=(const BackgroundFill&) = delete;
  ~BackgroundFill() {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    if (thread_.joinable()) thread_.join();
  }

  /// @brief Waits until bytes `[first, end)` are filled (none past the range are ever filled:
  /// they need no wait). Once filling failed, every call throws: bytes filled before the
  /// failure was found (a CRC-32 checked at the end) may be wrong.
  /// @throws what filling threw (FormatError for corrupt data, a wrong size or CRC-32, an
  /// archive that changed; what the progress callback threw); Cancelled when the callback
  /// stopped it first.
  void wait_until(std::size_t end) const {
    end = std::min(end, last_);
    if (end <= filled_.load(std::memory_order_acquire) && !failed_.load()) return;
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [&] { return end <= filled_.load() || ended_; });
    if (failed_.load()) std::rethrow_exception(error_);
    if (end <= filled_.load()) return;
    if (error_) std::rethrow_exception(error_);  // what the progress callback threw
    throw Cancelled(filled_.load() - first_, last_ - first_,
                    "resident: filling the rows of " + what_ +
                        " in the background was cancelled by the progress callback after " +
                        format_bytes(filled_.load() - first_) + " of " +
                        format_bytes(last_ - first_) +
                        "; the rows after them cannot be served (return true from "
                        "DatasetOptions::on_progress to let it finish, or make a new dataset)");
  }
  /// @brief Waits until every byte is filled and the end checked (`finish`).
  /// @throws as `wait_until`, and what `finish` threw.
  void wait_all() const {
    wait_until(last_);
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [&] { return ended_; });
    if (error_) std::rethrow_exception(error_);
  }
  /// @brief Bytes filled so far, from `first`.
  [[nodiscard]] std::size_t filled_bytes() const noexcept {
    return filled_.load(std::memory_order_acquire) - first_;
  }

 private:
  BackgroundFill(std::shared_ptr<std::byte> memory, std::size_t first, std::size_t last, Fill fill,
                 std::function<void()> finish, std::string what,
                 std::shared_ptr<FillProgress> progress)
      : memory_(std::move(memory)),
        first_(first),
        last_(last),
        fill_(std::move(fill)),
        finish_(std::move(finish)),
        what_(std::move(what)),
        progress_(std::move(progress)),
        filled_(first) {}

  void run() noexcept {
    try {
      for (std::size_t at = first_; at < last_;) {
        if (stopping()) return end_with(nullptr);
        if (progress_ && progress_->stopped()) return end_with(progress_->thrown(), false);
        const std::size_t bytes = std::min(fill_step_bytes, last_ - at);
        fill_(at, bytes, memory_.get() + at);
        at += bytes;
        // The last bytes are published only once the end is checked: a reader of the last rows
        // must never see them before a CRC-32 that refuses them.
        if (at == last_) finish_();
        {
          const std::lock_guard<std::mutex> lock(mutex_);
          filled_.store(at, std::memory_order_release);
        }
        done_.notify_all();
        // A stop of the callback's (another fill's report may have been the one that threw) is
        // no fault of the rows: the filled ones stay served.
        try {
          if (progress_ && !progress_->report(bytes)) return end_with(progress_->thrown(), false);
        } catch (...) {
          return end_with(std::current_exception(), false);
        }
      }
      if (first_ == last_) finish_();
      end_with(nullptr);
    } catch (...) {
      end_with(std::current_exception());
    }
  }

  [[nodiscard]] bool stopping() const {
    const std::lock_guard<std::mutex> lock(mutex_);
    return stop_;
  }

  // Ends the filling: done (no `error`), stopped, or `failed` (the rows filled may be wrong).
  void end_with(std::exception_ptr error, bool failed = true) noexcept {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      failed_.store(failed && error != nullptr);
      error_ = std::move(error);
      ended_ = true;
    }
    done_.notify_all();
  }

  std::shared_ptr<std::byte> memory_;
  std::size_t first_;
  std::size_t last_;
  Fill fill_;
  std::function<void()> finish_;
  std::string what_;
  std::shared_ptr<FillProgress> progress_;
  mutable std::mutex mutex_;
  mutable std::condition_variable done_;
  std::atomic<std::size_t> filled_;  // bytes [first_, filled_) are in
  std::atomic<bool> failed_{false};  // filling threw: every read refused
  bool stop_ = false;
  bool ended_ = false;  // filled and finished, failed, or stopped
  std::exception_ptr error_;
  std::thread thread_;  // last: started once everything it reads is made
};

}  // namespace resident::detail
