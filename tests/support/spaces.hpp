// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// Test support: the memory spaces every typed test runs over, how to tell whether one is
// usable on this machine, and how to read data back from one.

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "resident/resident.hpp"
#include "support/block_gather_space.hpp"

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

/// Waits for `reader`, copies the `count` values at device address `device` back to the host,
/// and frees them (`cudaMalloc`ed): the end of a test's reads on the device.
template <class T>
std::vector<T> take_back(T* device, std::size_t count, cudaStream_t reader) {
  std::vector<T> values(count);
  EXPECT_EQ(cudaStreamSynchronize(reader), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(values.data(), device, count * sizeof(T), cudaMemcpyDeviceToHost),
            cudaSuccess);
  EXPECT_EQ(cudaFree(device), cudaSuccess);
  return values;
}
/// The spaces of the typed tests that gather: every space, and one with a gather engine of its
/// own.
using GatherSpaceTypes =
    ::testing::Types<HostSpace, CudaSpace, CudaHostPinnedSpace, BlockGatherSpace>;
#else
using SpaceTypes = ::testing::Types<HostSpace>;
using GatherSpaceTypes = ::testing::Types<HostSpace, BlockGatherSpace>;
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

/// @brief The simulated machine changed by `change` (a callable taking a `simcuda::Machine&`)
/// for the scope, and back as it was after, where the CUDA runtime is the test suite's
/// simulation; nothing elsewhere (a real machine is what it is).
class SimulatedMachine {
 public:
#if RESIDENT_TEST_SIMULATED_CUDA
  template <class Change>
  explicit SimulatedMachine(Change change) : kept_(simcuda::machine()) {
    simcuda::Machine changed = kept_;
    change(changed);
    simcuda::configure(changed);
  }
  ~SimulatedMachine() { simcuda::configure(kept_); }

 private:
  simcuda::Machine kept_;
#else
  template <class Change>
  explicit SimulatedMachine(Change /*change*/) {}
#endif

 public:
  SimulatedMachine(const SimulatedMachine&) = delete;
  SimulatedMachine& operator=(const SimulatedMachine&) = delete;
};

/// @brief A machine without a CUDA device for the scope (where the runtime is simulated; the
/// tests of a machine without a device run only on one elsewhere).
class WithoutDevices : public SimulatedMachine {
 public:
  WithoutDevices() : SimulatedMachine([](auto& machine) { machine.devices = 0; }) {}
};

/// @brief Streams whose every operation waits up to `max_delay_us` before it runs, for the scope
/// (where the runtime is simulated): a read that is not ordered before a write then sees the
/// write. Elsewhere a device's own timing decides.
class SlowStreams : public SimulatedMachine {
 public:
  explicit SlowStreams(unsigned max_delay_us)
      : SimulatedMachine([max_delay_us](auto& machine) {
          machine.max_delay_us = max_delay_us;
          machine.delay_one_in = 1;
        }) {}
};

/// @brief A machine with `devices` CUDA devices for the scope (where the runtime is simulated;
/// elsewhere, a test that needs more devices than the machine has skips).
class WithDevices : public SimulatedMachine {
 public:
  explicit WithDevices(int devices)
      : SimulatedMachine([devices](auto& machine) { machine.devices = devices; }) {}
#if RESIDENT_TEST_SIMULATED_CUDA
  // The calling thread goes back to device 0 first, which every machine has: work on another
  // device leaves a thread that never chose one on that device (see CudaDeviceScope).
  ~WithDevices() { (void)cudaSetDevice(0); }
#endif
  WithDevices(const WithDevices&) = delete;
  WithDevices& operator=(const WithDevices&) = delete;
};

#if RESIDENT_HAS_CUDA
/// Fixture of the tests on two devices: the simulated machine has two for the test; a real
/// machine with fewer skips them.
class OnTwoDevices : public ::testing::Test {
 protected:
  void SetUp() override {
    skip_unless_usable<CudaSpace>();
    if (IsSkipped() || HasFatalFailure()) return;
    if (CudaSpace::device_count() < 2)
      GTEST_SKIP() << "skipped: fewer than two CUDA devices: this machine has "
                   << CudaSpace::device_count();
  }
  const WithDevices two_{2};
};

/// Page-locked host memory holding `values` (`cudaMallocHost`), freed with the object.
class PinnedCopy {
 public:
  explicit PinnedCopy(const std::vector<std::uint8_t>& values) : bytes_(values.size()) {
    EXPECT_EQ(cudaMallocHost(&pointer_, bytes_), cudaSuccess);
    if (pointer_ != nullptr) std::memcpy(pointer_, values.data(), bytes_);
  }
  ~PinnedCopy() { EXPECT_EQ(cudaFreeHost(pointer_), cudaSuccess); }
  PinnedCopy(const PinnedCopy&) = delete;
  PinnedCopy& operator=(const PinnedCopy&) = delete;
  [[nodiscard]] const std::uint8_t* data() const noexcept {
    return static_cast<const std::uint8_t*>(pointer_);
  }

 private:
  std::size_t bytes_;
  void* pointer_ = nullptr;
};
#endif

/// Whether this test program has the gather kernels of the epochs it makes: a unit compiled
/// by nvcc makes them, and so does the simulated runtime's harness (included first in every
/// unit of a simulated build, whatever its target defines).
#if defined(__CUDACC__) || defined(RESIDENT_TEST_KERNEL_HARNESS)
inline constexpr bool kernels_compiled = true;
#else
inline constexpr bool kernels_compiled = false;
#endif

/// Whether this test program can gather into `Space`: where its gathers run as kernels, only
/// where it has them.
template <class Space>
inline constexpr bool gathers_here =
    !std::is_same_v<typename space_traits<Space>::gather_engine, detail::KernelGather> ||
    kernels_compiled;

/// Names typed-test instances by space ("HostSpace", "CudaSpace", ...) instead of 0, 1.
struct SpaceName {
  template <class Space>
  static std::string GetName(int /*index*/) {
    if (std::is_same_v<Space, HostSpace>) return "HostSpace";
    if (std::is_same_v<Space, BlockGatherSpace>) return "BlockGatherSpace";
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

/// Whether `Space` can be given a byte budget (`with_budget`, `used_bytes`): the host spaces'
/// static `with_budget(bytes)`, or `CudaSpace`'s, of a space.
template <class Space, class = void>
struct has_budget : std::false_type {};
template <class Space>
struct has_budget<Space,
                  std::void_t<decltype(std::declval<const Space&>().with_budget(std::size_t{}))>>
    : std::true_type {};

/// A space for a test: spaces with budgets get 64 MiB, so that the test can check that its
/// accounting comes back to where it was; other spaces are the default device.
template <class Space>
Space budgeted_space() {
  if constexpr (has_budget<Space>::value)
    return Space{}.with_budget(std::size_t{64} << 20);
  else
    return Space{};
}

/// @brief A space of exactly `bytes` bytes, for tests of exact budgets: `with_budget(bytes)` where
/// the space has budgets; on the simulated device, the device itself, made `bytes` large while
/// this object lives (make it before the datasets, so that it outlives them; give them
/// `reserve_bytes = 0`, as a budget's default is). `available` is false elsewhere.
template <class Space>
class ExactSpace {
 public:
#if RESIDENT_TEST_SIMULATED_CUDA
  static constexpr bool on_device = std::is_same_v<Space, CudaSpace>;
#else
  static constexpr bool on_device = false;
#endif
  static constexpr bool available = has_budget<Space>::value || on_device;
  /// Whether the exact bytes are a budget (else the simulated device, whose allocations round
  /// up to its granule).
  static constexpr bool budgeted = has_budget<Space>::value && !on_device;

  explicit ExactSpace(std::size_t bytes)
      : machine_([&](auto& machine) {
          if (on_device) machine.device_bytes = bytes;
        }),
        space_(make(bytes)) {}

  [[nodiscard]] const Space& space() const noexcept { return space_; }
  /// Bytes the space has handed out.
  [[nodiscard]] std::size_t used() const {
    if constexpr (budgeted) {
      return space_.used_bytes();
    } else {
#if RESIDENT_TEST_SIMULATED_CUDA
      return simcuda::device_bytes_used();
#else
      return 0;
#endif
    }
  }

 private:
  // The simulated device itself where there is one (its own figures are what is tested), else
  // a budget.
  static Space make([[maybe_unused]] std::size_t bytes) {
    if constexpr (budgeted)
      return Space{}.with_budget(bytes);
    else
      return Space{};
  }

  SimulatedMachine machine_;
  Space space_;
};

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
