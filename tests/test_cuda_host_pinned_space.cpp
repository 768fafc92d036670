// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// CudaHostPinnedSpace from a g++ translation unit: what it is (a space whose engines are the
// host's, exported as kDLCUDAHost), what it does without a device (refuses every allocation
// with a CudaError that says what to use instead, and leaves its budget as it was), and with
// one (a dataset uploaded into page-locked memory reads back on the host). The typed tests
// run every dataset, epoch and stream over it too (support/spaces.hpp).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <numeric>
#include <string>
#include <type_traits>
#include <vector>

#include "resident/cuda_host_pinned_space.hpp"
#include "resident/device_dataset.hpp"
#include "resident/plan.hpp"
#include "resident/space_traits.hpp"
#include "resident/streaming_dataset.hpp"
#include "support/spaces.hpp"
#if RESIDENT_TEST_SIMULATED_CUDA
#include "support/runtime_faults.hpp"
#endif

#if RESIDENT_HAS_CUDA
namespace {

using resident::CudaError;
using resident::CudaHostPinnedSpace;
using resident::DatasetOptions;
using resident::DeviceDataset;
using resident::HostTensor;
using Traits = resident::space_traits<CudaHostPinnedSpace>;

static_assert(resident::is_memory_space_v<CudaHostPinnedSpace>);
static_assert(resident::is_device_accessible_v<CudaHostPinnedSpace>);
static_assert(std::is_same_v<CudaHostPinnedSpace::stream_type, cudaStream_t>,
              "kernels read its batches on CUDA streams");
static_assert(std::is_same_v<Traits::gather_engine, resident::detail::HostGather>,
              "the host's copy threads gather host memory");
static_assert(Traits::host_writable, "files are read straight into it");
static_assert(Traits::dlpack_device_type == 3, "kDLCUDAHost");
static_assert(Traits::takes_caller_stream, "DatasetOptions::stream names the readers' stream");

bool has_device() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return count > 0;
}

DatasetOptions options(std::size_t batch) {
  DatasetOptions result;
  result.batch_size = batch;
  return result;
}

TEST(CudaHostPinnedSpace, NamesItselfAndKeepsTheHostsReserve) {
  EXPECT_EQ(CudaHostPinnedSpace{}.name(), "cuda_host_pinned");
  EXPECT_EQ(CudaHostPinnedSpace{}.default_reserve_bytes(), std::size_t{1} << 30);
  const auto budgeted = CudaHostPinnedSpace::with_budget(4096);
  EXPECT_EQ(budgeted.default_reserve_bytes(), 0u);
  EXPECT_EQ(budgeted.capacity().total_bytes, 4096u);
  EXPECT_EQ(budgeted.capacity().free_bytes, 4096u);
  EXPECT_EQ(budgeted, budgeted);
  EXPECT_NE(budgeted, CudaHostPinnedSpace::with_budget(4096));  // another budget
  EXPECT_GT(CudaHostPinnedSpace{}.capacity().total_bytes, 0u);  // the host's, device or not
}

// plan() asks only for the capacity, which is the host's: it answers without a device.
TEST(CudaHostPinnedSpace, PlansAgainstItsBudgetWithoutTouchingTheDriver) {
  std::vector<float> x(1000);
  const auto space = CudaHostPinnedSpace::with_budget(2048);
  const auto verdict =
      resident::plan(space, options(100), HostTensor<const float>(x.data(), {1000}));
  EXPECT_EQ(verdict.space_name, "cuda_host_pinned");
  EXPECT_FALSE(verdict.fits);  // 4000 bytes of floats in a 2048-byte budget
  EXPECT_EQ(verdict.total_bytes, 2048u);
  EXPECT_EQ(verdict.needed_bytes, 4000u);
}

TEST(CudaHostPinnedSpace, WithoutADeviceAllocationIsAPlainCudaErrorAndTheBudgetIsKept) {
  [[maybe_unused]] const resident::testing::WithoutDevices none;
  if (has_device())
    GTEST_SKIP() << "skipped: a CUDA device is present: the test checks a machine without one";
  const auto space = CudaHostPinnedSpace::with_budget(std::size_t{1} << 20);
  try {
    (void)space.allocate(4096);
    FAIL() << "allocate succeeded without a device";
  } catch (const CudaError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("cuda_host_pinned needs a CUDA device"), std::string::npos) << message;
    EXPECT_NE(message.find("use resident::HostSpace"), std::string::npos) << message;
  }
  EXPECT_EQ(space.used_bytes(), 0u);
  std::vector<std::int32_t> y(64);
  EXPECT_THROW((DeviceDataset<CudaHostPinnedSpace, std::int32_t>(
                   space, options(8), HostTensor<const std::int32_t>(y.data(), {64}))),
               CudaError);
  EXPECT_EQ(space.used_bytes(), 0u);
  EXPECT_NO_THROW(space.deallocate(nullptr, 0));
}

// Tests that need a device: skipped without one (failed under RESIDENT_REQUIRE_CUDA).
class CudaHostPinnedSpaceOnDevice : public ::testing::Test {
 protected:
  void SetUp() override { resident::testing::skip_unless_usable<CudaHostPinnedSpace>(); }
};

TEST_F(CudaHostPinnedSpaceOnDevice, ADatasetInPinnedMemoryIsReadableFromTheHost) {
  std::vector<std::int32_t> y(100);
  std::iota(y.begin(), y.end(), 7);
  const auto space = CudaHostPinnedSpace::with_budget(std::size_t{1} << 20);
  {
    DeviceDataset<CudaHostPinnedSpace, std::int32_t> ds(
        space, options(30), HostTensor<const std::int32_t>(y.data(), {100}));
    EXPECT_GT(space.used_bytes(), 0u);
    const auto [last] = ds.batch(3);  // rows 90..99, read in place: host memory
    ASSERT_EQ(last.rows(), 10u);
    EXPECT_EQ(last.data()[0], 97);
    EXPECT_EQ(last.data()[9], 106);
    cudaPointerAttributes attributes{};
    ASSERT_EQ(cudaPointerGetAttributes(&attributes, last.data()), cudaSuccess);
    EXPECT_EQ(attributes.type, cudaMemoryTypeHost);  // page-locked, as the driver sees it
  }
  EXPECT_EQ(space.used_bytes(), 0u);
}

// A budget refuses before the driver is asked (page-locking is slow, and the memory would be
// the rest of the machine's): the error gives the budget's figures, what is left of it.
TEST_F(CudaHostPinnedSpaceOnDevice,
       AnAllocationBeyondItsBudgetIsACapacityErrorWithTheBudgetsFigures) {
  const auto space = CudaHostPinnedSpace::with_budget(4096);
  void* held = space.allocate(1000);
  ASSERT_NE(held, nullptr);
#if RESIDENT_TEST_SIMULATED_CUDA
  const resident::testing::FailingCall driver_asked("cudaHostAlloc", cudaErrorMemoryAllocation);
#endif
  try {
    (void)space.allocate(3097);
    FAIL() << "allocated past the budget";
  } catch (const resident::CapacityError& error) {
    EXPECT_EQ(error.space_name(), "cuda_host_pinned");
    EXPECT_EQ(error.needed_bytes(), 3097u);
    EXPECT_EQ(error.free_bytes(), 3096u);
    EXPECT_EQ(error.total_bytes(), 4096u);
  }
#if RESIDENT_TEST_SIMULATED_CUDA
  EXPECT_FALSE(driver_asked.fired()) << "the driver was asked for memory the budget refused";
#endif
  EXPECT_EQ(space.used_bytes(), 1000u);
  space.deallocate(held, 1000);
  EXPECT_EQ(space.used_bytes(), 0u);
}

#if RESIDENT_TEST_SIMULATED_CUDA
using resident::testing::FailingCall;
using resident::testing::Footprint;

// Page-locking the system refuses (out of memory) is a CapacityError with the host's figures,
// since the system, not the budget, refused; any other failure is a CudaError naming the call.
// Either way the budget gets its bytes back and no error is left for a later call to report.
TEST_F(CudaHostPinnedSpaceOnDevice, AFailedPageLockIsATypedErrorAndReturnsTheBudget) {
  const auto space = CudaHostPinnedSpace::with_budget(std::size_t{1} << 20);
  const Footprint before = Footprint::now();
  {
    const FailingCall failing("cudaHostAlloc", cudaErrorMemoryAllocation);
    try {
      (void)space.allocate(4096);
      ADD_FAILURE() << "allocated although cudaHostAlloc ran out of memory";
    } catch (const resident::CapacityError& error) {
      EXPECT_EQ(error.space_name(), "cuda_host_pinned");
      EXPECT_EQ(error.needed_bytes(), 4096u);
      EXPECT_EQ(error.total_bytes(), resident::detail::host_capacity().total_bytes)
          << "not the host's figures";
    }
    EXPECT_TRUE(failing.fired());
  }
  EXPECT_EQ(space.used_bytes(), 0u);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  {
    const FailingCall failing("cudaHostAlloc", cudaErrorNotSupported);
    try {
      (void)space.allocate(4096);
      ADD_FAILURE() << "allocated although cudaHostAlloc failed";
    } catch (const CudaError& error) {
      EXPECT_EQ(error.call(), "cudaHostAlloc");
      EXPECT_EQ(error.code(), cudaErrorNotSupported);
      EXPECT_NE(std::string(error.what()).find("cudaErrorNotSupported"), std::string::npos)
          << error.what();
    }
    EXPECT_TRUE(failing.fired());
  }
  EXPECT_EQ(space.used_bytes(), 0u);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_EQ(Footprint::now(), before);
  void* memory = space.allocate(4096);  // and the next allocation succeeds
  EXPECT_NE(memory, nullptr);
  space.deallocate(memory, 4096);
}
#endif

// What kernels read of an epoch's batches: each batch's first field copied, asynchronously,
// from where the batch lies (page-locked memory) into device memory on `reader`, as a kernel
// would read it; the copies land after a delay. `wait`/`release` are the epoch's on `reader`
// (for a stream other than the dataset's), or nothing. Returns what the copies read.
template <class Epoch>
std::vector<std::int32_t> read_on_device(Epoch&& epoch, std::size_t batch_size, cudaStream_t reader,
                                         bool release) {
  const std::size_t total = epoch.size() * batch_size;  // every batch is full (padded)
  void* device = nullptr;
  EXPECT_EQ(cudaMalloc(&device, std::max<std::size_t>(total, 1) * sizeof(std::int32_t)),
            cudaSuccess);
  for (std::size_t k = 0; k < epoch.size(); ++k) {
    const auto view = std::get<0>(epoch.batch(k));
    EXPECT_EQ(view.size(), batch_size);
    if (release) epoch.wait(k, reader);
    EXPECT_EQ(cudaMemcpyAsync(static_cast<std::int32_t*>(device) + k * batch_size, view.data(),
                              view.bytes(), cudaMemcpyHostToDevice, reader),
              cudaSuccess);
    if (release) epoch.release(k, reader);
  }
  return resident::testing::take_back(static_cast<std::int32_t*>(device), total, reader);
}

// Every batch of the epoch, in order, as the host reads it on a `HostSpace` dataset.
template <class Epoch>
std::vector<std::int32_t> read_on_host(Epoch&& epoch) {
  std::vector<std::int32_t> read;
  for (const auto& [rows] : epoch) read.insert(read.end(), rows.data(), rows.data() + rows.size());
  return read;
}

// Kernels read page-locked batches asynchronously while the host writes the next ones: a
// gather into a ring slot, or a load into a chunk slot, waits for the reads of what the slot
// held. Reads on the dataset's stream are covered as they are enqueued; reads on another
// stream by `wait`/`release`. Every read sees its own batch (without the waits, the slow
// reads see later batches written over theirs).
TEST_F(CudaHostPinnedSpaceOnDevice, KernelsReadEveryBatchBeforeItsSlotIsWrittenAgain) {
  const resident::testing::SlowStreams slow(2000);
  constexpr std::size_t rows = 600;
  std::vector<std::int32_t> y(rows);
  std::iota(y.begin(), y.end(), 0);
  const HostTensor<const std::int32_t> tensor(y.data(), {rows});
  constexpr std::size_t batch = 16;
  DatasetOptions cut = options(batch);
  cut.remainder = resident::Remainder::pad;
  resident::DeviceDataset<resident::HostSpace, std::int32_t> host(resident::HostSpace{}, cut,
                                                                  tensor);
  const resident::EpochOptions samples{3, 1, resident::Shuffle::samples};
  const resident::EpochOptions batches{3, 1, resident::Shuffle::batches};
  cudaStream_t other = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking), cudaSuccess);
  for (const bool on_other : {false, true}) {
    SCOPED_TRACE(on_other ? "reads on another stream, released" : "reads on the dataset's stream");
    const auto space = CudaHostPinnedSpace::with_budget(std::size_t{1} << 20);
    {
      SCOPED_TRACE("a preloaded dataset's gathered batches (ring slots)");
      DeviceDataset<CudaHostPinnedSpace, std::int32_t> ds(space, cut, tensor);
      EXPECT_EQ(read_on_device(ds.epoch(samples), batch, on_other ? other : ds.stream(), on_other),
                read_on_host(host.epoch(samples)));
    }
    {
      SCOPED_TRACE("a stream's batches (views of chunk slots)");
      DatasetOptions streamed = cut;
      streamed.streaming.chunk_batches = 2;  // 19 chunks through 4 slots
      streamed.streaming.order = resident::StreamOrder::whole_epoch;
      resident::StreamingDataset<CudaHostPinnedSpace, std::int32_t> ds(space, streamed, tensor);
      ASSERT_GT(ds.num_chunks(), ds.chunk_slots());
      EXPECT_EQ(read_on_device(ds.epoch(batches), batch, on_other ? other : ds.stream(), on_other),
                read_on_host(host.epoch(batches)));
    }
    EXPECT_EQ(space.used_bytes(), 0u);
  }
  EXPECT_EQ(cudaStreamDestroy(other), cudaSuccess);
}

}  // namespace
#endif
