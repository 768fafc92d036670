// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// Test support: the memory spaces every typed test runs over, how to tell whether one is
// usable on this machine, and how to read data back from one.

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "resident/resident.hpp"

#if RESIDENT_TEST_SIMULATED_CUDA
#include "simcuda/simcuda.hpp"
#endif

namespace resident::testing {

/// Why `Space` cannot run here (no device, no driver), or nothing when it can; a space that
/// wraps another (`Space::inner_space`, as the fault-injecting one does) runs where that runs.
template <class Space>
std::optional<std::string> unavailable_reason() {
  return unavailable_reason<typename Space::inner_space>();
}

template <>
inline std::optional<std::string> unavailable_reason<HostSpace>() {
  return std::nullopt;
}

#if RESIDENT_HAS_CUDA
template <>
inline std::optional<std::string> unavailable_reason<CudaSpace>() {
  try {
    CudaSpace{0}.ensure_usable();
  } catch (const CudaError& error) {
    return std::string(error.what());
  }
  return std::nullopt;
}
template <>
inline std::optional<std::string> unavailable_reason<CudaHostPinnedSpace>() {
  try {
    CudaHostPinnedSpace{}.ensure_usable();
  } catch (const CudaError& error) {
    return std::string(error.what());
  }
  return std::nullopt;
}
using SpaceTypes = ::testing::Types<HostSpace, CudaSpace, CudaHostPinnedSpace>;
#else
using SpaceTypes = ::testing::Types<HostSpace>;
#endif

/// Skips the running test, saying why, when `Space` is not usable here; fails it instead when
/// the environment sets RESIDENT_REQUIRE_CUDA (scripts/gpu-check.sh does), so that a GPU
/// machine on which the device went missing cannot pass by skipping. Call it from SetUp or
/// the start of a test: gtest runs no test body after a skip or a fatal failure.
template <class Space>
void skip_unless_usable() {
  const auto why = unavailable_reason<Space>();
  if (!why) return;
  if (std::getenv("RESIDENT_REQUIRE_CUDA") != nullptr)
    FAIL() << "RESIDENT_REQUIRE_CUDA is set, but " << *why;
  GTEST_SKIP() << "skipped: no CUDA device: " << *why;
}

/// @brief A machine without a CUDA device for the scope, where the CUDA runtime is the test
/// suite's simulation (the machine as it was comes back after); nothing elsewhere, where the
/// tests of a machine without a device run only on one.
class WithoutDevices {
 public:
#if RESIDENT_TEST_SIMULATED_CUDA
  WithoutDevices() : kept_(simcuda::machine()) {
    simcuda::Machine none = kept_;
    none.devices = 0;
    simcuda::configure(none);
  }
  ~WithoutDevices() { simcuda::configure(kept_); }

 private:
  simcuda::Machine kept_;
#else
  WithoutDevices() = default;
#endif

 public:
  WithoutDevices(const WithoutDevices&) = delete;
  WithoutDevices& operator=(const WithoutDevices&) = delete;
};

/// @brief A machine with `devices` CUDA devices for the scope, where the CUDA runtime is the test
/// suite's simulation (the machine as it was comes back after); nothing elsewhere, where a test
/// that needs more devices than the machine has skips.
class WithDevices {
 public:
#if RESIDENT_TEST_SIMULATED_CUDA
  explicit WithDevices(int devices) : kept_(simcuda::machine()) {
    simcuda::Machine more = kept_;
    more.devices = devices;
    simcuda::configure(more);
  }
  // The calling thread goes back to device 0 first, which every machine has: work on another
  // device leaves a thread that never chose one on that device (see CudaDeviceScope).
  ~WithDevices() {
    (void)cudaSetDevice(0);
    simcuda::configure(kept_);
  }

 private:
  simcuda::Machine kept_;
#else
  explicit WithDevices(int /*devices*/) {}
#endif

 public:
  WithDevices(const WithDevices&) = delete;
  WithDevices& operator=(const WithDevices&) = delete;
};

/// @brief Streams whose every operation waits up to `max_delay_us` before it runs, for the scope,
/// where the CUDA runtime is the test suite's simulation: a read that is not ordered before a write
/// then sees the write. Nothing elsewhere (a device's own timing decides).
class SlowStreams {
 public:
#if RESIDENT_TEST_SIMULATED_CUDA
  explicit SlowStreams(unsigned max_delay_us) : kept_(simcuda::machine()) {
    simcuda::Machine slow = kept_;
    slow.max_delay_us = max_delay_us;
    slow.delay_one_in = 1;
    simcuda::configure(slow);
  }
  ~SlowStreams() { simcuda::configure(kept_); }

 private:
  simcuda::Machine kept_;
#else
  explicit SlowStreams(unsigned /*max_delay_us*/) {}
#endif

 public:
  SlowStreams(const SlowStreams&) = delete;
  SlowStreams& operator=(const SlowStreams&) = delete;
};

/// Whether this translation unit can gather into `Space` (its gathers need kernels where the
/// space gathers with them, and kernels need nvcc).
template <class Space>
inline constexpr bool gathers_here =
    !space_traits<Space>::gathers_with_kernels || detail::kernels_available;

/// Names typed-test instances by space ("HostSpace", "CudaSpace", ...) instead of 0, 1.
struct SpaceName {
  template <class Space>
  static std::string GetName(int /*index*/) {
    if (std::is_same_v<Space, HostSpace>) return "HostSpace";
#if RESIDENT_HAS_CUDA
    return std::is_same_v<Space, CudaSpace> ? "CudaSpace" : "CudaHostPinnedSpace";
#else
    return "HostSpace";  // the only space of a build without the CUDA toolkit
#endif
  }
};

/// Fixture of the typed tests: skips, with the reason, where the space is not usable.
template <class Space>
class OverSpaces : public ::testing::Test {
 protected:
  void SetUp() override { skip_unless_usable<Space>(); }
  Space space_{};
};

/// Fixture of the typed tests that gather: also skips where this translation unit cannot
/// gather into the space (the device gathers need nvcc; tests/cuda/ compiles such cases so).
template <class Space>
class OverGatheringSpaces : public OverSpaces<Space> {
 protected:
  void SetUp() override {
    OverSpaces<Space>::SetUp();
    if (!gathers_here<Space>)
      GTEST_SKIP() << "skipped: needs nvcc: the device gather needs a translation unit "
                      "compiled by nvcc";
  }
};

/// Whether `Space` can be given a byte budget (`with_budget`, `used_bytes`).
template <class Space, class = void>
struct has_budget : std::false_type {};
template <class Space>
struct has_budget<Space, std::void_t<decltype(Space::with_budget(std::size_t{}))>>
    : std::true_type {};

/// A space for a test: spaces with budgets get 64 MiB, so that the test can check that its
/// accounting comes back to where it was; other spaces are the default device.
template <class Space>
Space budgeted_space() {
  if constexpr (has_budget<Space>::value)
    return Space::with_budget(std::size_t{64} << 20);
  else
    return Space{};
}

/// The bytes `space` has handed out, where it accounts them (a budgeted space).
template <class Space>
std::optional<std::size_t> used_bytes(const Space& space) {
  if constexpr (has_budget<Space>::value) return space.used_bytes();
  return std::nullopt;
}

/// Copies a view's elements back to the host (waits for the copy).
template <class Space, class T>
std::vector<std::remove_const_t<T>> read_back(const Space& space,
                                              typename Space::stream_type stream,
                                              BatchView<T> view) {
  std::vector<std::remove_const_t<T>> host(view.size());
  space.copy_to_host(host.data(), view.data(), view.bytes(), stream);
  space.synchronize(stream);
  return host;
}

}  // namespace resident::testing
