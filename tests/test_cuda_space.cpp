// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// CudaSpace through the runtime API from a g++ translation unit: its behaviour both with and
// without a usable device (each machine runs the half that applies and skips the other).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <future>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "resident/cuda_space.hpp"
#include "resident/device_dataset.hpp"
#include "resident/error.hpp"
#include "resident/shard.hpp"
#include "resident/space_traits.hpp"
#include "resident/streaming_dataset.hpp"
#include "support/spaces.hpp"
#if RESIDENT_TEST_SIMULATED_CUDA
#include "support/runtime_faults.hpp"
#include "support/stream_gates.hpp"
#endif

#if RESIDENT_HAS_CUDA
namespace {

using resident::CudaError;
using resident::CudaSpace;

static_assert(resident::is_memory_space_v<CudaSpace>);
static_assert(resident::is_device_accessible_v<CudaSpace>);

bool has_device() { return CudaSpace::device_count() > 0; }

// Tests that need a device: skipped without one (failed under RESIDENT_REQUIRE_CUDA).
class CudaSpaceOnDevice : public ::testing::Test {
 protected:
  void SetUp() override { resident::testing::skip_unless_usable<CudaSpace>(); }
};

TEST(CudaSpace, NamesItsDevice) {
  EXPECT_EQ(CudaSpace{}.name(), "cuda:0");
  EXPECT_EQ(CudaSpace{3}.name(), "cuda:3");
  EXPECT_EQ(CudaSpace{3}.device_id(), 3);
  EXPECT_EQ(CudaSpace{0}, CudaSpace{});
  EXPECT_EQ(CudaSpace{}.default_reserve_bytes(), std::size_t{512} << 20);
}

// The device scope's policy: switch only to another device; restore the caller's device only
// where its primary context exists, since restoring one that does not (device 0 on a thread
// that never used CUDA) would create a context on a GPU the program never asked for.
TEST(CudaDeviceScope, SwitchesToAnotherDeviceOnly) {
  using resident::detail::plan_device_switch;
  for (const bool active : {false, true}) {
    const auto same = plan_device_switch(1, active, 1);
    EXPECT_FALSE(same.enter);
    EXPECT_FALSE(same.restore);
  }
  EXPECT_TRUE(plan_device_switch(0, true, 1).enter);
  EXPECT_TRUE(plan_device_switch(0, false, 1).enter);
}

TEST(CudaDeviceScope, RestoresOnlyADeviceWhoseContextExists) {
  using resident::detail::plan_device_switch;
  EXPECT_TRUE(plan_device_switch(0, true, 1).restore);    // the caller was using device 0
  EXPECT_FALSE(plan_device_switch(0, false, 1).restore);  // a fresh thread: 0 is only a default
  EXPECT_TRUE(plan_device_switch(2, true, 0).restore);
  EXPECT_FALSE(plan_device_switch(2, false, 0).restore);
}

TEST(CudaSpace, WithoutDeviceEveryUseThrowsAPlainCudaError) {
  [[maybe_unused]] const resident::testing::WithoutDevices none;
  if (has_device())
    GTEST_SKIP() << "skipped: a CUDA device is present: the test checks a machine without one";
  const CudaSpace space{0};
  for (const auto& use : {+[](const CudaSpace& s) { (void)s.capacity(); },
                          +[](const CudaSpace& s) { (void)s.allocate(1024); },
                          +[](const CudaSpace& s) { (void)s.create_stream(); }}) {
    try {
      use(space);
      FAIL() << "no error without a device";
    } catch (const CudaError& error) {
      EXPECT_NE(std::string(error.what()).find("no usable CUDA device or driver"),
                std::string::npos)
          << error.what();
      EXPECT_NE(error.code(), 0);
    }
  }
}

TEST_F(CudaSpaceOnDevice, DeviceIdPastTheCountThrowsCudaError) {
  try {
    (void)CudaSpace{CudaSpace::device_count()}.capacity();
    FAIL() << "a device past the count was accepted";
  } catch (const CudaError& error) {
    EXPECT_NE(std::string(error.what()).find("requested but this machine has"), std::string::npos)
        << error.what();
  }
}

TEST_F(CudaSpaceOnDevice, CapacityAndAllocationOnTheDevice) {
  const CudaSpace space{0};
  const auto capacity = space.capacity();
  EXPECT_GT(capacity.total_bytes, 0u);
  EXPECT_LE(capacity.free_bytes, capacity.total_bytes);
  void* block = space.allocate(1000);
  EXPECT_NE(block, nullptr);
  space.deallocate(block, 1000);
}

TEST_F(CudaSpaceOnDevice, AllocationBeyondTheDeviceIsACapacityError) {
  const CudaSpace space{0};
  const std::size_t too_much = space.capacity().total_bytes * 2;
  try {
    (void)space.allocate(too_much);
    FAIL() << "allocated twice the device's memory";
  } catch (const resident::CapacityError& error) {
    EXPECT_EQ(error.needed_bytes(), too_much);
    EXPECT_EQ(error.space_name(), "cuda:0");
  }
  void* block = space.allocate(16);  // the failure left no sticky error behind
  space.deallocate(block, 16);
}

TEST(Shard, CudaSpaceForShardRefusesWhatItCannotServe) {
  using resident::CudaSpace;
  // Shards that are not shards, whatever the machine.
  for (const resident::Shard bad :
       {resident::Shard{0, 1, -1}, resident::Shard{0, 1, 5}, resident::Shard{3, 2, 0},
        resident::Shard{-1, 2, 0}, resident::Shard{0, 0, 0}})
    EXPECT_THROW((void)CudaSpace::for_shard(bad), resident::InvalidArgument)
        << bad.rank << "/" << bad.world_size << "/" << bad.local_rank;
  const int devices = CudaSpace::device_count();
  if (devices == 0) {
    // No device: no rank can be served, rank 0 no more than rank 3.
    EXPECT_THROW((void)CudaSpace::for_shard({3, 4, 3}), resident::InvalidArgument);
    EXPECT_THROW((void)CudaSpace::for_shard({0, 1, 0}), resident::InvalidArgument);
  } else {
    EXPECT_EQ(CudaSpace::for_shard({0, 1, 0}).device_id(), 0);
    EXPECT_EQ(CudaSpace::for_shard({devices - 1, devices, devices - 1}).device_id(),
              devices == 1 ? 0 : devices - 1);
  }
}

// The ring fences of the kernel gathers, with a copy on the gathering stream standing in for
// the kernel: a consumer stream that waits on a slot reads what the gather wrote into it, and
// the next gather into the slot waits for the reads released on it. Rounds through two slots
// with every stream operation slowed, so that a missing order shows in some round.
TEST_F(CudaSpaceOnDevice, RingFencesOrderReadsAfterTheirGatherAndTheNextGatherAfterTheReads) {
  const resident::testing::SlowStreams slow(2000);
  constexpr std::size_t bytes = 4096;
  constexpr std::size_t rounds = 8;
  const CudaSpace space{0};
  resident::detail::CudaRingFences fences;
  fences.ensure(space, 2);
  cudaStream_t gatherer = space.create_stream();
  cudaStream_t consumer = space.create_stream();
  auto* slots = static_cast<std::uint8_t*>(space.allocate(2 * bytes));
  void* reads = nullptr;  // page-locked: the consumer's copies read the slot when they run
  ASSERT_EQ(cudaMallocHost(&reads, rounds * bytes), cudaSuccess);
  auto* read = static_cast<std::uint8_t*>(reads);
  for (std::size_t round = 0; round < rounds; ++round) {
    const std::size_t slot = round % 2;
    const std::vector<std::uint8_t> batch(bytes, static_cast<std::uint8_t>(round + 1));
    fences.before_fill(slot, gatherer);
    space.copy_from_host(slots + slot * bytes, batch.data(), bytes, gatherer);
    fences.after_fill(slot, gatherer);
    fences.wait(slot, consumer);
    space.copy_to_host(read + round * bytes, slots + slot * bytes, bytes, consumer);
    fences.release(slot, consumer);
  }
  fences.drain();
  for (std::size_t round = 0; round < rounds; ++round) {
    const std::vector<std::uint8_t> seen(read + round * bytes, read + (round + 1) * bytes);
    EXPECT_EQ(seen, std::vector<std::uint8_t>(bytes, static_cast<std::uint8_t>(round + 1)))
        << "round " << round << " read another batch than the one gathered for it";
  }
  EXPECT_EQ(cudaFreeHost(reads), cudaSuccess);
  space.deallocate(slots, 2 * bytes);
  space.destroy_stream(consumer);
  space.destroy_stream(gatherer);
}

#if RESIDENT_TEST_SIMULATED_CUDA
// Kernels read a stream's batches asynchronously, on the dataset's stream or on another one
// (ordered by `wait`/`release`), while the host asks for later batches: the load of a chunk into
// a slot waits for the reads of what the slot held, both where it copies page-locked rows
// directly and where it copies pageable rows through the staging buffers. Each read is held
// back on its stream until the load of the chunk two on (into the same slot: two slots, one
// batch a chunk) has been enqueued and has had time to land, so that a load not ordered after
// the read overwrites the batch before the read, in every run rather than by chance.
TEST_F(CudaSpaceOnDevice, KernelsReadEveryBatchBeforeItsSlotIsWrittenAgain) {
  constexpr std::size_t rows = 160;
  constexpr std::size_t columns = 4;
  constexpr std::size_t batch = 16;
  constexpr std::size_t batches = rows / batch;
  constexpr std::size_t bytes = rows * columns * sizeof(std::int32_t);
  // Row r holds 8r + 1, ..., 8r + 4: every batch's values are known, and differ from every
  // other's.
  const auto value = [](std::size_t row, std::size_t column) {
    return static_cast<std::int32_t>(8 * row + column + 1);
  };
  std::vector<std::int32_t> pageable(rows * columns);
  void* locked = nullptr;
  ASSERT_EQ(cudaMallocHost(&locked, bytes), cudaSuccess);
  auto* page_locked = static_cast<std::int32_t*>(locked);
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t c = 0; c < columns; ++c)
      pageable[r * columns + c] = page_locked[r * columns + c] = value(r, c);
  resident::DatasetOptions options;
  options.batch_size = batch;
  options.streaming.chunk_batches = 1;
  options.streaming.chunk_slots = 2;  // chunk k + 2 goes into chunk k's slot
  options.streaming.prefetch_chunks = 1;
  const CudaSpace space{0};
  cudaStream_t other = space.create_stream();
  for (const bool pinned : {false, true}) {
    SCOPED_TRACE(pinned ? "page-locked rows, copied directly"
                        : "pageable rows, copied through the staging buffers");
    const resident::HostTensor<const std::int32_t> tensor(pinned ? page_locked : pageable.data(),
                                                          {rows, columns});
    for (const bool on_other : {false, true}) {
      SCOPED_TRACE(on_other ? "reads on another stream" : "reads on the dataset's stream");
      std::vector<std::vector<std::int32_t>> seen(batches);
      {
        resident::StreamingDataset<CudaSpace, std::int32_t> ds(space, options, tensor);
        EXPECT_EQ(ds.chunk_slots(), 2u);
        EXPECT_EQ(ds.num_chunks(), batches);
        const cudaStream_t reader = on_other ? other : ds.stream();
        resident::testing::Gates gates(
            batches);  // after the dataset: opened before it waits for its streams
        auto epoch = ds.epoch({0, 0, resident::Shuffle::none});
        for (std::size_t k = 0; k < batches; ++k) {
          const auto view = std::get<0>(epoch.batch(k));
          if (on_other) epoch.wait(k, reader);
          EXPECT_EQ(
              resident::testing::simcuda::enqueue(
                  reader,
                  [&seen, k, data = view.data(), count = view.size(), opened = gates.opened(k)] {
                    opened.wait();
                    seen[k].resize(count);
                    resident::testing::simcuda::peek(seen[k].data(), data,
                                                     count * sizeof(std::int32_t));
                  }),
              cudaSuccess);
          if (on_other) epoch.release(k, reader);
          if (k >= 2) {
            // Batch k's load, into batch k - 2's slot, is enqueued: give a copy that would
            // not wait for the read time to land, then let the read run.
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
            gates.open(k - 2);
          }
        }
        gates.open_all();
        EXPECT_EQ(cudaStreamSynchronize(reader), cudaSuccess);
      }
      for (std::size_t k = 0; k < batches; ++k) {
        std::vector<std::int32_t> expected;
        for (std::size_t r = k * batch; r < (k + 1) * batch; ++r)
          for (std::size_t c = 0; c < columns; ++c) expected.push_back(value(r, c));
        EXPECT_EQ(seen[k], expected) << "the read of batch " << k << " saw other rows";
      }
    }
  }
  space.destroy_stream(other);
  EXPECT_EQ(cudaFreeHost(locked), cudaSuccess);
}

// A preload whose copy fails half-way while its stream is still busy: the page-locked staging
// buffers go only once the copies enqueued before the failure are done. The stream is held back
// by a gate until a thread opens it 20 ms on, after the constructor threw where it does not
// wait, so that a buffer released without waiting is released under a queued copy, which the
// simulation stops at.
TEST_F(CudaSpaceOnDevice, AFailedPreloadReleasesItsStagingOnlyAfterTheCopiesInFlight) {
  const CudaSpace space{0};
  cudaStream_t stream = space.create_stream();
  std::vector<float> values(std::size_t{64} * 1024);
  std::iota(values.begin(), values.end(), 0.0F);
  resident::DatasetOptions options;
  options.batch_size = 64;
  options.reserve_bytes = 0;
  options.stream = stream;
  options.upload_block_bytes = std::size_t{16} << 10;  // 16 blocks, two staging buffers
  options.staging_buffers = 2;
  {
    resident::testing::Gates gate(1);
    ASSERT_EQ(
        resident::testing::simcuda::enqueue(stream, [opened = gate.opened(0)] { opened.wait(); }),
        cudaSuccess);
    std::thread opener([&gate] {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      gate.open(0);
    });
    {
      const resident::testing::FailingCall failing("cudaMemcpyAsync", cudaErrorLaunchFailure, 1);
      using Dataset = resident::DeviceDataset<CudaSpace, float>;
      const resident::HostTensor<const float> tensor(values.data(), {values.size()});
      EXPECT_THROW(Dataset(space, options, tensor), CudaError);
      EXPECT_TRUE(failing.fired());
    }
    opener.join();
  }
  EXPECT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  space.destroy_stream(stream);
}
#endif

int current_device() {
  int device = -1;
  EXPECT_EQ(cudaGetDevice(&device), cudaSuccess);
  return device;
}

// Tests on two devices (the simulated machine has two for the test).
using CudaSpaceOnTwoDevices = resident::testing::OnTwoDevices;

TEST_F(CudaSpaceOnTwoDevices, EveryOperationRunsOnItsDeviceAndLeavesTheCallersCurrent) {
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);  // the caller works on device 0
  const CudaSpace space{1};
  EXPECT_GT(space.capacity().total_bytes, 0u);
  EXPECT_EQ(current_device(), 0);
  constexpr std::size_t count = 1000;
  void* block = space.allocate(count * sizeof(int));
  EXPECT_EQ(current_device(), 0);
  cudaPointerAttributes attributes{};
  ASSERT_EQ(cudaPointerGetAttributes(&attributes, block), cudaSuccess);
  EXPECT_EQ(attributes.device, 1) << "the allocation is not on the space's device";
  cudaStream_t stream = space.create_stream();
  EXPECT_EQ(current_device(), 0);
  std::vector<int> sent(count);
  std::iota(sent.begin(), sent.end(), -7);
  std::vector<int> received(count);
  space.copy_from_host(block, sent.data(), count * sizeof(int), stream);
  space.copy_to_host(received.data(), block, count * sizeof(int), stream);
  space.synchronize(stream);
  EXPECT_EQ(received, sent);
  EXPECT_EQ(current_device(), 0);
  space.destroy_stream(stream);
  space.deallocate(block, count * sizeof(int));
  EXPECT_EQ(current_device(), 0);
}

// A thread that never used CUDA reports device 0 without having made its context: working on
// device 1 from it must not make one (hundreds of MiB on a real GPU), so the thread is left on
// device 1, which no code of the caller's can have relied on.
TEST_F(CudaSpaceOnTwoDevices, AFreshThreadIsLeftOnTheDatasetsDeviceAndMakesNoContextOnDeviceZero) {
  if (resident::detail::primary_context_active(0))
    GTEST_SKIP() << "skipped: device 0's context exists already in this process; run the test "
                    "in a process of its own (as ctest does)";
  std::vector<std::int64_t> ids(100);
  std::iota(ids.begin(), ids.end(), std::int64_t{0});
  resident::DatasetOptions options;
  options.batch_size = 16;
  int device_after = -1;
  std::vector<std::int64_t> preloaded, streamed;
  std::thread worker([&] {
    const resident::HostTensor<const std::int64_t> tensor(ids.data(), {ids.size()});
    const resident::DeviceDataset<CudaSpace, std::int64_t> dataset(CudaSpace{1}, options, tensor);
    preloaded = resident::testing::read_back(dataset.space(), dataset.stream(), dataset.field<0>());
    resident::StreamingDataset<CudaSpace, std::int64_t> stream(CudaSpace{1}, options, tensor);
    for (const auto& [view] : stream.epoch({0, 0, resident::Shuffle::none})) {
      const auto batch = resident::testing::read_back(stream.space(), stream.stream(), view);
      streamed.insert(streamed.end(), batch.begin(), batch.end());
    }
    device_after = current_device();
  });
  worker.join();
  EXPECT_EQ(preloaded, ids);
  EXPECT_EQ(streamed, ids);
  EXPECT_EQ(device_after, 1);
  EXPECT_FALSE(resident::detail::primary_context_active(0))
      << "work on device 1 from a fresh thread made a context on device 0";
}

#if RESIDENT_TEST_SIMULATED_CUDA
using resident::testing::FailingCall;
using resident::testing::Footprint;

// Failing calls of the simulated runtime: a device cannot be told to fail.

TEST_F(CudaSpaceOnTwoDevices, AFailedDeviceSwitchIsACudaErrorNamingTheCallAndTakesNothing) {
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);  // the caller works on device 0
  const CudaSpace space{1};
  for (const char* call : {"cudaGetDevice", "cudaSetDevice"}) {
    SCOPED_TRACE(call);
    const Footprint before = Footprint::now();
    const FailingCall failing(call, cudaErrorInvalidDevice);
    try {
      (void)space.allocate(4096);
      ADD_FAILURE() << "allocated although " << call << " failed";
    } catch (const CudaError& error) {
      EXPECT_EQ(error.call(), call);
      EXPECT_EQ(error.code(), cudaErrorInvalidDevice);
      const std::string message = error.what();
      EXPECT_NE(message.find(std::string(call) + " failed"), std::string::npos) << message;
      EXPECT_NE(message.find("cudaErrorInvalidDevice (invalid device ordinal)"), std::string::npos)
          << message;
    }
    EXPECT_TRUE(failing.fired());
    EXPECT_EQ(Footprint::now(), before);
    EXPECT_EQ(cudaGetLastError(), cudaSuccess);
    EXPECT_EQ(current_device(), 0);
  }
}

// Releases never throw: where the device cannot be made current, the memory and the stream are
// released all the same (the runtime finds their device), and no error is left behind.
TEST_F(CudaSpaceOnTwoDevices, AReleaseWhoseDeviceCannotBeMadeCurrentStillReleases) {
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);  // the caller works on device 0
  const Footprint before = Footprint::now();
  const CudaSpace space{1};
  void* block = space.allocate(4096);
  cudaStream_t stream = space.create_stream();
  ASSERT_NE(Footprint::now(), before);
  {
    const FailingCall failing("cudaGetDevice", cudaErrorInvalidDevice);
    space.deallocate(block, 4096);
    EXPECT_TRUE(failing.fired());
  }
  {
    const FailingCall failing("cudaGetDevice", cudaErrorInvalidDevice);
    space.destroy_stream(stream);
    EXPECT_TRUE(failing.fired());
  }
  EXPECT_EQ(Footprint::now(), before);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_EQ(current_device(), 0);
}

TEST_F(CudaSpaceOnDevice, AFailedRuntimeCallIsACudaErrorNamingTheCallTheErrorAndWhatToDo) {
  const CudaSpace space{0};
  const Footprint before = Footprint::now();
  const FailingCall failing("cudaStreamCreateWithFlags", cudaErrorNotSupported);
  try {
    (void)space.create_stream();
    FAIL() << "a stream was made although cudaStreamCreateWithFlags failed";
  } catch (const CudaError& error) {
    EXPECT_EQ(error.code(), cudaErrorNotSupported);
    EXPECT_EQ(error.call(), "cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking)");
    EXPECT_NE(error.file().find("detail/cuda/resources.hpp"), std::string::npos) << error.file();
    const std::string message = error.what();
    for (const char* part :
         {"resident: CUDA call cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) failed at",
          "cudaErrorNotSupported (operation not supported)",
          "; check the device with nvidia-smi, or run under compute-sanitizer"})
      EXPECT_NE(message.find(part), std::string::npos) << part << " not in: " << message;
  }
  EXPECT_EQ(Footprint::now(), before);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess)
      << "the failure stays for an unrelated later call to report";
}

// A runtime that cannot count its devices (a driver older than the runtime) is a machine
// without a usable device: no devices to count, and a use says what was found and what to do.
TEST_F(CudaSpaceOnDevice, ARuntimeThatCannotCountItsDevicesHasNoneAndSaysWhy) {
  {
    const FailingCall failing("cudaGetDeviceCount", cudaErrorInsufficientDriver);
    EXPECT_EQ(CudaSpace::device_count(), 0);
    EXPECT_TRUE(failing.fired());
  }
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  const FailingCall failing("cudaGetDeviceCount", cudaErrorInsufficientDriver);
  try {
    CudaSpace{0}.ensure_usable();
    FAIL() << "usable although the runtime could not count the devices";
  } catch (const CudaError& error) {
    EXPECT_EQ(error.code(), cudaErrorInsufficientDriver);
    const std::string message = error.what();
    for (const char* part : {"no usable CUDA device or driver", "cuda:0 requested",
                             "cudaErrorInsufficientDriver", "use resident::HostSpace here"})
      EXPECT_NE(message.find(part), std::string::npos) << part << " not in: " << message;
  }
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}
#endif

}  // namespace
#endif
