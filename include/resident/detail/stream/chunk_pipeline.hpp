// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

#include "resident/detail/function_ref.hpp"

namespace resident::detail {

/// @brief The pieces of one chunk load that the producer shares with a reader waiting for the
/// chunk: the reader's core copies while it would otherwise sleep, and never while the reader
/// works on a batch. Guarded by the pipeline's mutex; a piece runs without it.
class SharedPieces {
 public:
  SharedPieces(std::mutex& mutex, std::condition_variable& changed) noexcept
      : mutex_(mutex), changed_(changed) {}

  /// @brief Producer thread: runs `piece(i)` for every `i < count`, here and on a reader that
  /// waits meanwhile (unless the pass was started unshared), and returns when every piece is done;
  /// rethrows the first exception a piece threw (after the other pieces ended).
  template <class Piece>
  void run(std::size_t count, Piece&& piece) {
    std::unique_lock<std::mutex> lock(mutex_);
    job_ = Job{count, 0, 0, FunctionRef<void(std::size_t)>(piece), nullptr};
    if (shared_) changed_.notify_all();
    while (job_.next < job_.count) run_one(lock);
    changed_.wait(lock, [&] { return job_.done == job_.count; });
    const std::exception_ptr error = job_.error;
    job_ = Job{};
    if (error) std::rethrow_exception(error);
  }

  /// Reader, under the pipeline's mutex: whether a piece is there to take.
  [[nodiscard]] bool available() const noexcept { return shared_ && job_.next < job_.count; }

  /// Whether readers take pieces (set before the producer starts).
  void share(bool shared) noexcept { shared_ = shared; }

  /// Under the pipeline's mutex (held by `lock`): runs the next piece without it.
  void run_one(std::unique_lock<std::mutex>& lock) noexcept {
    const std::size_t index = job_.next++;
    const FunctionRef<void(std::size_t)> piece = job_.piece;
    lock.unlock();
    std::exception_ptr error;
    try {
      piece(index);
    } catch (...) {
      error = std::current_exception();
    }
    lock.lock();
    if (error && !job_.error) job_.error = error;
    if (++job_.done == job_.count) changed_.notify_all();
  }

 private:
  struct Job {
    std::size_t count = 0;
    std::size_t next = 0;  // first piece not taken
    std::size_t done = 0;
    FunctionRef<void(std::size_t)> piece;  // the producer's, alive until every piece is done
    std::exception_ptr error;
  };

  std::mutex& mutex_;
  std::condition_variable& changed_;
  Job job_;
  bool shared_ = true;
};

/// @brief The producer side of a streaming pass: a thread that loads positions
/// `[first, count)` of a chunk order in turn, never more than `depth` positions ahead of the
/// one the reader holds, while the reader waits only for the position it needs.
///
/// `load(position)` runs on the producer thread; an exception it throws stops the pass and is
/// rethrown, as it was thrown, by the reader's next `acquire` of that position or a later one,
/// so that a failing file or device surfaces as its own typed error, never as a hang. It is
/// rethrown once: the pass is then over (`can_reach` is false), so that the reader's next
/// batch starts a new pass instead of meeting the stale error again.
class ChunkPipeline {
 public:
  /// Loads one position; may share its work through the pieces.
  using Load = std::function<void(std::size_t position, SharedPieces& pieces)>;

  ChunkPipeline() = default;
  ChunkPipeline(const ChunkPipeline&) = delete;
  ChunkPipeline& operator=(const ChunkPipeline&) = delete;
  ~ChunkPipeline() { stop(); }

  /// Starts loading positions `[first, count)`, at most `depth` ahead of the one held; a
  /// reader waiting in `acquire` runs shared pieces of the loads when `readers_help`.
  void start(std::size_t first, std::size_t count, std::size_t depth, bool readers_help,
             Load load) {
    stop();
    pieces_.share(readers_help);
    next_ = first;
    held_ = first;
    released_ = first;
    count_ = count;
    depth_ = depth;
    error_ = nullptr;
    failed_ = false;
    stopping_ = false;
    load_ = std::move(load);
    producer_ = std::thread([this] { produce(); });
  }

  /// Stops the producer (a load in progress completes first) and joins it.
  void stop() noexcept {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    changed_.notify_all();
    if (producer_.joinable()) producer_.join();
  }

  /// Whether `position` is one the running pass can still deliver (not behind the held one).
  [[nodiscard]] bool can_reach(std::size_t position) const noexcept {
    return producer_.joinable() && !failed_ && position >= held_ && position < count_;
  }

  /// @brief Lets the producer run up to `position + depth` and waits until `position` is
  /// loaded, running shared pieces of the loads meanwhile; rethrows the producer's exception if it
  /// failed at or before `position`. `release(p)` is called for every position given up before
  /// `keep_from` (at most `position`) and not given up yet, before the producer may reuse their
  /// slots: a reader that reads a window of positions at once keeps the window's first ones.
  template <class Release>
  void acquire(std::size_t position, std::size_t keep_from, Release&& release) {
    for (; released_ < keep_from; ++released_) release(released_);
    std::unique_lock<std::mutex> lock(mutex_);
    held_ = position;
    changed_.notify_all();
    for (;;) {
      changed_.wait(lock,
                    [&] { return next_ > position || error_ != nullptr || pieces_.available(); });
      if (next_ > position) return;
      if (error_ != nullptr) break;
      pieces_.run_one(lock);
    }
    failed_ = true;
    std::rethrow_exception(error_);
  }

 private:
  void produce() {
    for (;;) {
      std::size_t position = 0;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        changed_.wait(lock, [&] { return stopping_ || next_ <= held_ + depth_; });
        if (stopping_ || next_ >= count_) return;
        position = next_;
      }
      try {
        load_(position, pieces_);
      } catch (...) {
        const std::lock_guard<std::mutex> lock(mutex_);
        error_ = std::current_exception();
        changed_.notify_all();
        return;
      }
      {
        const std::lock_guard<std::mutex> lock(mutex_);
        next_ = position + 1;
      }
      changed_.notify_all();
    }
  }

  std::mutex mutex_;
  std::condition_variable changed_;
  SharedPieces pieces_{mutex_, changed_};
  std::thread producer_;
  Load load_;
  std::size_t next_ = 0;      // first position not loaded yet
  std::size_t held_ = 0;      // position the reader holds (or waits for)
  std::size_t released_ = 0;  // first position not given up (reader only)
  std::size_t count_ = 0;     // end of the order
  std::size_t depth_ = 0;
  std::exception_ptr error_;
  bool failed_ = false;  // the reader has been given error_: the pass delivers nothing more
  bool stopping_ = false;
};

}  // namespace resident::detail
