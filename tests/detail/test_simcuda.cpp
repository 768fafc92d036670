// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// The simulated CUDA runtime's own behaviour, where the tests run over it (simcuda/simcuda.hpp):
// stream-ordered allocation, whose frees take effect when their stream reaches them and whose
// pools keep freed blocks reserved until their release threshold or a trim gives them back,
// and the bounds that a kernel body's reach of device memory is held to. The other tests rely
// on both: a library that frees early, or a kernel that reads past its rows, must fail there.
#include <gtest/gtest.h>

#if RESIDENT_TEST_SIMULATED_CUDA
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <future>
#include <limits>
#include <string>
#include <vector>

#include "simcuda/kernel_harness.hpp"
#include "simcuda/simcuda.hpp"

namespace {

namespace simcuda = resident::testing::simcuda;

/// A stream of device 0, destroyed with the test.
class Stream {
 public:
  Stream() { EXPECT_EQ(cudaStreamCreate(&stream_), cudaSuccess); }
  ~Stream() { EXPECT_EQ(cudaStreamDestroy(stream_), cudaSuccess); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  operator cudaStream_t() const { return stream_; }  // NOLINT: used as the handle it is

 private:
  cudaStream_t stream_ = nullptr;
};

/// A pool attribute of 64 bits (the runtime's `cuuint64_t`, `uint64_t` in cuda.h).
std::uint64_t attribute(cudaMemPool_t pool, cudaMemPoolAttr which) {
  std::uint64_t value = 0;
  EXPECT_EQ(cudaMemPoolGetAttribute(pool, which, &value), cudaSuccess);
  return value;
}

std::uint64_t reserved(cudaMemPool_t pool) {
  return attribute(pool, cudaMemPoolAttrReservedMemCurrent);
}
std::uint64_t used(cudaMemPool_t pool) { return attribute(pool, cudaMemPoolAttrUsedMemCurrent); }

/// A pool of device 0's memory.
cudaMemPool_t make_pool() {
  cudaMemPoolProps properties{};
  properties.allocType = cudaMemAllocationTypePinned;
  properties.location.type = cudaMemLocationTypeDevice;
  properties.location.id = 0;
  cudaMemPool_t pool = nullptr;
  EXPECT_EQ(cudaMemPoolCreate(&pool, &properties), cudaSuccess);
  return pool;
}

/// Runs the death tests of its scope in a forked child, which maps device memory where this
/// process does, so that the addresses a message names are the ones the test knows (a child
/// that runs the program afresh maps it elsewhere). The statements that die take the machine's
/// lock alone, which no stream holds while idle.
class ForkedDeathTests {
 public:
  ForkedDeathTests() : kept_(GTEST_FLAG_GET(death_test_style)) {
    GTEST_FLAG_SET(death_test_style, "fast");
  }
  ~ForkedDeathTests() { GTEST_FLAG_SET(death_test_style, kept_); }
  ForkedDeathTests(const ForkedDeathTests&) = delete;
  ForkedDeathTests& operator=(const ForkedDeathTests&) = delete;

 private:
  std::string kept_;
};

/// An address as the simulation prints it (a regex that matches it as is: hex digits).
std::string address(const void* pointer) {
  char text[32];  // NOLINT(modernize-avoid-c-arrays): snprintf's buffer
  std::snprintf(text, sizeof text, "%p", pointer);
  return text;
}

// Work queued before a stream-ordered free still finds the memory: the block goes back (to the
// device, from the default pool at its release threshold of 0) only when the stream reaches the
// free, which a gate the test opens holds back.
TEST(SimulatedCuda, AnAsyncFreeTakesEffectWhenItsStreamReachesIt) {
  const Stream stream;
  cudaMemPool_t pool = nullptr;
  ASSERT_EQ(cudaDeviceGetDefaultMemPool(&pool, 0), cudaSuccess);
  EXPECT_EQ(attribute(pool, cudaMemPoolAttrReleaseThreshold), 0u);
  const std::size_t before = simcuda::device_bytes_used();
  constexpr std::size_t bytes = 4096;

  void* block = nullptr;
  ASSERT_EQ(cudaMallocAsync(&block, bytes, stream), cudaSuccess);
  ASSERT_NE(block, nullptr);
  EXPECT_TRUE(simcuda::is_device_pointer(block));
  EXPECT_EQ(cudaMemsetAsync(block, 0x5A, bytes, stream), cudaSuccess);
  std::promise<void> gate;
  const std::shared_future<void> opened = gate.get_future().share();
  std::vector<unsigned char> seen(bytes, 0);
  ASSERT_EQ(simcuda::enqueue(stream,
                             [&seen, opened, block] {
                               opened.wait();
                               std::memcpy(seen.data(), simcuda::reach(block, bytes), bytes);
                             }),
            cudaSuccess);
  ASSERT_EQ(cudaFreeAsync(block, stream), cudaSuccess);

  // Freed, but the stream has not reached the free: still allocated, still the pool's in use.
  EXPECT_EQ(simcuda::device_bytes_used(), before + bytes);
  EXPECT_EQ(used(pool), bytes);
  EXPECT_EQ(reserved(pool), bytes);
  EXPECT_EQ(cudaFreeAsync(block, stream), cudaErrorInvalidValue) << "freed twice";
  EXPECT_EQ(cudaFree(block), cudaErrorInvalidValue) << "a pool's block freed by cudaFree";
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);

  gate.set_value();
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  EXPECT_EQ(seen, std::vector<unsigned char>(bytes, 0x5A))
      << "work queued before the free saw the memory freed";
  EXPECT_EQ(simcuda::device_bytes_used(), before);
  EXPECT_EQ(used(pool), 0u);
  EXPECT_EQ(reserved(pool), 0u) << "a release threshold of 0 keeps nothing";
  EXPECT_EQ(attribute(pool, cudaMemPoolAttrUsedMemHigh), bytes);
}

// A pool whose release threshold keeps everything holds its freed blocks (reserved, not used,
// and still taken from the device) for its next allocations, until a trim gives them back.
TEST(SimulatedCuda, APoolKeepsFreedBlocksReservedUntilTrimmed) {
  const Stream stream;
  cudaMemPool_t pool = make_pool();
  ASSERT_NE(pool, nullptr);
  std::uint64_t keep_all = std::numeric_limits<std::uint64_t>::max();
  ASSERT_EQ(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep_all), cudaSuccess);
  const std::size_t before = simcuda::device_bytes_used();
  constexpr std::size_t bytes = std::size_t{1} << 20;

  void* first = nullptr;
  ASSERT_EQ(cudaMallocFromPoolAsync(&first, bytes, pool, stream), cudaSuccess);
  EXPECT_EQ(used(pool), bytes);
  EXPECT_EQ(reserved(pool), bytes);
  ASSERT_EQ(cudaFreeAsync(first, stream), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  EXPECT_EQ(used(pool), 0u);
  EXPECT_EQ(reserved(pool), bytes);
  EXPECT_EQ(simcuda::device_bytes_used(), before + bytes) << "the cache is the device's memory";

  // A smaller block comes from the cache: nothing more is taken from the device.
  void* second = nullptr;
  ASSERT_EQ(cudaMallocFromPoolAsync(&second, 1000, pool, stream), cudaSuccess);
  EXPECT_EQ(second, first);
  EXPECT_EQ(simcuda::device_bytes_used(), before + bytes);
  EXPECT_EQ(reserved(pool), bytes);
  ASSERT_EQ(cudaFreeAsync(second, stream), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  EXPECT_GT(reserved(pool), used(pool));
  EXPECT_EQ(attribute(pool, cudaMemPoolAttrReservedMemHigh), bytes);

  ASSERT_EQ(cudaMemPoolTrimTo(pool, 0), cudaSuccess);
  EXPECT_EQ(reserved(pool), 0u);
  EXPECT_EQ(simcuda::device_bytes_used(), before);
  std::uint64_t reset = 0;
  ASSERT_EQ(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReservedMemHigh, &reset), cudaSuccess);
  EXPECT_EQ(attribute(pool, cudaMemPoolAttrReservedMemHigh), 0u);
  EXPECT_EQ(cudaMemPoolDestroy(pool), cudaSuccess);
}

// A pool destroyed while a block is out lives on in the block: the memory goes back to the
// device when the block's free is reached, and the handle is gone at once.
TEST(SimulatedCuda, ADestroyedPoolGivesBackItsBlocksAsTheirFreesAreReached) {
  const Stream stream;
  cudaMemPool_t pool = make_pool();
  const std::size_t before = simcuda::device_bytes_used();
  void* block = nullptr;
  ASSERT_EQ(cudaMallocFromPoolAsync(&block, 512, pool, stream), cudaSuccess);
  ASSERT_EQ(cudaMemPoolDestroy(pool), cudaSuccess);
  EXPECT_EQ(cudaMemPoolTrimTo(pool, 0), cudaErrorInvalidValue);
  EXPECT_EQ(simcuda::device_bytes_used(), before + 512);
  ASSERT_EQ(cudaFreeAsync(block, stream), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  EXPECT_EQ(simcuda::device_bytes_used(), before);

  cudaMemPool_t default_pool = nullptr;
  ASSERT_EQ(cudaDeviceGetDefaultMemPool(&default_pool, 0), cudaSuccess);
  EXPECT_EQ(cudaMemPoolDestroy(default_pool), cudaErrorInvalidValue);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);
}

// The new entry points fail as the others do when told to, taking nothing.
TEST(SimulatedCuda, StreamOrderedAllocationCanBeMadeToFail) {
  const Stream stream;
  const std::size_t before = simcuda::device_bytes_used();
  void* block = nullptr;
  simcuda::fail_call(0, cudaErrorMemoryAllocation, "cudaMallocAsync");
  EXPECT_EQ(cudaMallocAsync(&block, 256, stream), cudaErrorMemoryAllocation);
  EXPECT_TRUE(simcuda::failure_fired());
  EXPECT_EQ(simcuda::device_bytes_used(), before);
  ASSERT_EQ(cudaMallocAsync(&block, 256, stream), cudaSuccess);
  simcuda::fail_call(0, cudaErrorLaunchFailure, "cudaFreeAsync");
  EXPECT_EQ(cudaFreeAsync(block, stream), cudaErrorLaunchFailure);
  EXPECT_TRUE(simcuda::failure_fired());
  simcuda::disarm();
  ASSERT_EQ(cudaFreeAsync(block, stream), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  EXPECT_EQ(simcuda::device_bytes_used(), before);
  (void)cudaGetLastError();
}

// A kernel body's reach of bytes outside one live allocation stops the program, naming the
// address, the bytes and the allocation nearest to them; within it, the body gets the memory.
TEST(SimulatedCudaDeathTest, AReachOutOfItsAllocationStopsNamingTheAddress) {
  const ForkedDeathTests forked;
  void* block = nullptr;
  ASSERT_EQ(cudaMalloc(&block, 100), cudaSuccess);
  auto* bytes = static_cast<unsigned char*>(block);
  EXPECT_NE(simcuda::reach(bytes, 100), nullptr);
  EXPECT_NE(simcuda::reach(bytes + 96, 4), nullptr);
  const std::string named = "reached 8 bytes at " + address(bytes + 96) +
                            ".*nearest allocation is " + address(block) + ", of 100 bytes";
  EXPECT_DEATH((void)simcuda::reach(bytes + 96, 8), named);
  // The kernels' reach counts elements: 26 ints of an allocation of 25.
  auto* ints = static_cast<int*>(block);
  EXPECT_EQ(resident::detail::SimulatedReach{}(ints, 25), simcuda::reach(ints));
  EXPECT_DEATH((void)resident::detail::SimulatedReach{}(ints, 26),
               "reached 104 bytes at " + address(ints));
  EXPECT_EQ(cudaFree(block), cudaSuccess);
}

// A block freed into a pool's cache is nobody's: a reach of it is a use after free.
TEST(SimulatedCudaDeathTest, AReachOfABlockFreedToAPoolStops) {
  const ForkedDeathTests forked;
  const Stream stream;
  cudaMemPool_t pool = make_pool();
  std::uint64_t keep_all = std::numeric_limits<std::uint64_t>::max();
  ASSERT_EQ(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep_all), cudaSuccess);
  void* block = nullptr;
  ASSERT_EQ(cudaMallocFromPoolAsync(&block, 256, pool, stream), cudaSuccess);
  EXPECT_NE(simcuda::reach(block, 256), nullptr);
  ASSERT_EQ(cudaFreeAsync(block, stream), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  EXPECT_DEATH((void)simcuda::reach(block, 8),
               "reached 8 bytes at " + address(block) + ".*freed to a memory pool");
  EXPECT_EQ(cudaMemPoolDestroy(pool), cudaSuccess);
}

}  // namespace

#endif  // RESIDENT_TEST_SIMULATED_CUDA
