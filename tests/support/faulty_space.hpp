// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// Test support: a memory space that wraps another and fails the k-th allocation, copy or
// capacity query on request, counting every operation it sees, so that a test can walk every
// point of a construction, upload, epoch or streaming pass where the space can fail.

#include <array>
#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "resident/resident.hpp"

namespace resident::testing {

/// The operations of a memory space a fault can be injected into.
enum class Operation : std::size_t { allocate, copy, capacity };

inline constexpr std::array<Operation, 3> all_operations{Operation::allocate, Operation::copy,
                                                         Operation::capacity};

inline const char* operation_name(Operation operation) noexcept {
  switch (operation) {
    case Operation::allocate:
      return "allocation";
    case Operation::copy:
      return "copy";
    case Operation::capacity:
      return "capacity query";
  }
  return "operation";
}

/// Counts a space's operations and fails the one it is armed for; every copy of a
/// `FaultySpace` shares one, so the datasets, streams and producer threads that copy the space
/// all count against the same schedule. Thread-safe.
class FaultInjector {
 public:
  /// Counts from zero and fails nothing.
  void count_only() noexcept { arm_at(Operation::allocate, 0); }

  /// Counts from zero and fails the `k`-th (from 1) `operation`, once.
  void arm(Operation operation, std::size_t k) noexcept { arm_at(operation, k); }

  /// `operation`s seen since the last `arm` or `count_only`.
  [[nodiscard]] std::size_t count(Operation operation) const noexcept {
    return counts_[index(operation)].load();
  }
  /// Whether the armed fault was thrown.
  [[nodiscard]] bool fired() const noexcept { return fired_.load(); }
  /// The message of the fault thrown last.
  [[nodiscard]] std::string fault_message() const {
    const std::lock_guard<std::mutex> lock(mutex_);
    return message_;
  }
  /// Bytes allocated through the space and not yet released: what a leak would leave behind.
  [[nodiscard]] std::size_t live_bytes() const noexcept { return live_bytes_.load(); }
  /// Allocations not yet released.
  [[nodiscard]] std::size_t live_allocations() const noexcept { return live_allocations_.load(); }

  /// Called by the space before `operation`: counts it and says whether it must fail (and
  /// with which message).
  [[nodiscard]] bool should_fail(Operation operation, std::string& message) {
    const std::size_t seen = ++counts_[index(operation)];
    if (operation != armed_operation_.load() || seen != armed_k_.load()) return false;
    fired_ = true;
    message = std::string("resident::testing: injected fault: ") + operation_name(operation) +
              " #" + std::to_string(seen) + " failed";
    const std::lock_guard<std::mutex> lock(mutex_);
    message_ = message;
    return true;
  }
  void allocated(std::size_t bytes) noexcept {
    live_bytes_ += bytes;
    ++live_allocations_;
  }
  void released(std::size_t bytes) noexcept {
    live_bytes_ -= bytes;
    --live_allocations_;
  }

 private:
  static constexpr std::size_t index(Operation operation) noexcept {
    return static_cast<std::size_t>(operation);
  }
  void arm_at(Operation operation, std::size_t k) noexcept {
    for (auto& count : counts_) count = 0;
    fired_ = false;
    armed_operation_ = operation;
    armed_k_ = k;  // 0: never
  }

  std::array<std::atomic<std::size_t>, all_operations.size()> counts_{};
  std::atomic<Operation> armed_operation_{Operation::allocate};
  std::atomic<std::size_t> armed_k_{0};
  std::atomic<bool> fired_{false};
  std::atomic<std::size_t> live_bytes_{0};
  std::atomic<std::size_t> live_allocations_{0};
  mutable std::mutex mutex_;
  std::string message_;
};

/// A memory space that behaves as `Inner` except where its `FaultInjector` says an operation
/// fails. The errors are the ones the CUDA space raises for the same failures: `CapacityError`
/// for an allocation, `CudaError` for a copy and for a capacity query (`cudaMemGetInfo`).
template <class Inner>
class FaultySpace {
 public:
  using memory_space = FaultySpace;
  using inner_space = Inner;
  using stream_type = typename Inner::stream_type;
  static constexpr bool device_accessible = Inner::device_accessible;

  FaultySpace() : injector_(std::make_shared<FaultInjector>()) {}
  FaultySpace(Inner inner, std::shared_ptr<FaultInjector> injector)
      : inner_(std::move(inner)), injector_(std::move(injector)) {}

  [[nodiscard]] const Inner& inner() const noexcept { return inner_; }
  [[nodiscard]] FaultInjector& injector() const noexcept { return *injector_; }

  [[nodiscard]] std::string name() const { return "faulty " + inner_.name(); }
  [[nodiscard]] std::size_t default_reserve_bytes() const noexcept {
    return inner_.default_reserve_bytes();
  }

  [[nodiscard]] Capacity capacity() const {
    fail_as_cuda(Operation::capacity, "cudaMemGetInfo");
    return inner_.capacity();
  }

  [[nodiscard]] void* allocate(std::size_t bytes) const {
    if (bytes == 0) return nullptr;
    std::string message;
    if (injector_->should_fail(Operation::allocate, message))
      throw CapacityError(name(), bytes, 0, 0, 0, message);
    void* pointer = inner_.allocate(bytes);
    injector_->allocated(bytes);
    return pointer;
  }

  void deallocate(void* pointer, std::size_t bytes) const noexcept {
    if (pointer == nullptr) return;
    inner_.deallocate(pointer, bytes);
    injector_->released(bytes);
  }

  [[nodiscard]] stream_type create_stream() const { return inner_.create_stream(); }
  void destroy_stream(stream_type stream) const noexcept { inner_.destroy_stream(stream); }
  void synchronize(stream_type stream) const { inner_.synchronize(stream); }

  void copy_from_host(void* destination, const void* source, std::size_t bytes,
                      stream_type stream) const {
    fail_as_cuda(Operation::copy, "cudaMemcpyAsync");
    inner_.copy_from_host(destination, source, bytes, stream);
  }
  void copy_to_host(void* destination, const void* source, std::size_t bytes,
                    stream_type stream) const {
    fail_as_cuda(Operation::copy, "cudaMemcpyAsync");
    inner_.copy_to_host(destination, source, bytes, stream);
  }

  friend bool operator==(const FaultySpace& a, const FaultySpace& b) noexcept {
    return a.inner_ == b.inner_ && a.injector_ == b.injector_;
  }
  friend bool operator!=(const FaultySpace& a, const FaultySpace& b) noexcept { return !(a == b); }

 private:
  void fail_as_cuda(Operation operation, const char* call) const {
    std::string message;
    if (!injector_->should_fail(operation, message)) return;
    constexpr int launch_failure = 719;  // cudaErrorLaunchFailure: what a lost device reports
    throw CudaError(launch_failure, call, __FILE__, __LINE__, message);
  }

  Inner inner_{};
  std::shared_ptr<FaultInjector> injector_;
};

}  // namespace resident::testing
