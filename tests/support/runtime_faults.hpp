// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// Test support: CUDA runtime calls failed on purpose, where the runtime is the test suite's
// simulation (tests/simcuda): what the machine holds (so that a test can check that a failure
// left nothing behind), one call failed for a scope, and every call of an entry point failed in
// turn. Only where RESIDENT_TEST_SIMULATED_CUDA is 1: a device cannot be told to fail.

#include <gtest/gtest.h>

#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

#include "resident/error.hpp"
#include "simcuda/simcuda.hpp"

namespace resident::testing {

/// What the simulated machine holds now: each device's memory, page-locked host memory,
/// streams and events.
struct Footprint {
  std::vector<std::size_t> device_bytes;
  std::size_t pinned_bytes = 0;
  std::size_t streams = 0;
  std::size_t events = 0;

  static Footprint now() {
    Footprint footprint;
    for (int device = 0; device < simcuda::machine().devices; ++device)
      footprint.device_bytes.push_back(simcuda::device_bytes_used(device));
    footprint.pinned_bytes = simcuda::pinned_bytes();
    footprint.streams = simcuda::live_streams();
    footprint.events = simcuda::live_events();
    return footprint;
  }
  friend bool operator==(const Footprint& a, const Footprint& b) {
    return a.device_bytes == b.device_bytes && a.pinned_bytes == b.pinned_bytes &&
           a.streams == b.streams && a.events == b.events;
  }
  friend bool operator!=(const Footprint& a, const Footprint& b) { return !(a == b); }
  friend std::ostream& operator<<(std::ostream& out, const Footprint& footprint) {
    out << "device bytes {";
    for (std::size_t device = 0; device < footprint.device_bytes.size(); ++device)
      out << (device == 0 ? "" : ", ") << footprint.device_bytes[device];
    return out << "}, page-locked bytes " << footprint.pinned_bytes << ", streams "
               << footprint.streams << ", events " << footprint.events;
  }
};

/// Fails a call of `entry_point` ("cudaEventRecord") with `error` during the scope: the next
/// one, or the one after `skip` others.
class FailingCall {
 public:
  FailingCall(const char* entry_point, cudaError_t error, std::size_t skip = 0) {
    simcuda::fail_call(skip, error, entry_point);
  }
  ~FailingCall() { simcuda::disarm(); }
  FailingCall(const FailingCall&) = delete;
  FailingCall& operator=(const FailingCall&) = delete;

  /// Whether the call failed.
  [[nodiscard]] bool fired() const { return simcuda::failure_fired(); }
};

/// Fails each call of `entry_point` that `work` makes, in turn (its first, then its second, ...
/// until `work` makes no more), with `error`. Each failure must surface from `work` as the
/// library's typed error (a `CudaError` with the code and naming the call, or a
/// `CapacityError` for `cudaErrorMemoryAllocation`), leave no error behind for a later call to
/// report, and leave the machine holding what it held before. Returns the calls failed.
template <class Work>
std::size_t fail_each_call(const char* entry_point, cudaError_t error, Work&& work) {
  for (std::size_t k = 0;; ++k) {
    SCOPED_TRACE(std::string(entry_point) + " #" + std::to_string(k + 1) + " fails");
    const Footprint before = Footprint::now();
    bool thrown = false;
    {
      const FailingCall failing(entry_point, error, k);
      try {
        work();
      } catch (const CudaError& failure) {
        thrown = true;
        EXPECT_EQ(failure.code(), static_cast<int>(error)) << failure.what();
        EXPECT_NE(failure.call().find(entry_point), std::string::npos) << failure.what();
      } catch (const CapacityError& failure) {
        thrown = true;
        EXPECT_EQ(error, cudaErrorMemoryAllocation) << failure.what();
      }
      if (!failing.fired()) {
        EXPECT_FALSE(thrown) << "an error without the failure";
        return k;  // `work` makes k calls of `entry_point`
      }
    }
    EXPECT_TRUE(thrown) << "the failure went unreported";
    EXPECT_EQ(cudaGetLastError(), cudaSuccess) << "the failure stays for a later call to report";
    EXPECT_EQ(Footprint::now(), before) << "the failure left resources behind";
    if (::testing::Test::HasFailure()) return k + 1;  // the first broken point says enough
  }
}

}  // namespace resident::testing
