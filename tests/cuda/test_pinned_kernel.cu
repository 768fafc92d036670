// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// Kernels reading a CudaHostPinnedSpace dataset in place, over the bus: zero-copy batches and
// the batches a Shuffle::samples epoch gathered with the host's copy threads. Every batch's sum,
// computed on the device from the mapped memory, must equal the host's.
#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <vector>

#include "resident/resident.hpp"
#include "support/spaces.hpp"

namespace {

using resident::BatchView;
using resident::CudaHostPinnedSpace;
using resident::DeviceDataset;
using resident::HostTensor;
using resident::Shuffle;

__global__ void sum_rows(BatchView<const std::int64_t> ids, unsigned long long* sum) {
  unsigned long long local = 0;
  for (std::size_t row = threadIdx.x; row < ids.valid_rows(); row += blockDim.x)
    local += static_cast<unsigned long long>(ids.data()[row]);
  atomicAdd(sum, local);
}

// Copies a batch's rows after a delay, as a training step that reads them late would: the host
// has gone on to gather and load the next batches by then.
__global__ void copy_late(const std::int32_t* rows, std::size_t n, std::int32_t* out) {
  if (threadIdx.x == 0)
    for (int i = 0; i < 20; ++i) __nanosleep(1000);
  __syncthreads();
  for (std::size_t i = threadIdx.x; i < n; i += blockDim.x) out[i] = rows[i];
}

// Every batch of `epoch` read by a late kernel on `reader` (after `wait`, before `release`
// where `release`), with no host wait between batches.
template <class Epoch>
std::vector<std::int32_t> read_late(Epoch&& epoch, std::size_t batch_size, cudaStream_t reader,
                                    bool release) {
  const std::size_t total = epoch.size() * batch_size;  // every batch is full (padded)
  std::int32_t* device = nullptr;
  EXPECT_EQ(cudaMalloc(&device, total * sizeof(std::int32_t)), cudaSuccess);
  for (std::size_t k = 0; k < epoch.size(); ++k) {
    const auto [view] = epoch.batch(k);
    if (release) epoch.wait(k, reader);
    copy_late<<<1, 128, 0, reader>>>(view.data(), view.size(), device + k * batch_size);
    if (release) epoch.release(k, reader);
  }
  return resident::testing::take_back(device, total, reader);
}

class PinnedKernel : public ::testing::Test {
 protected:
  void SetUp() override { resident::testing::skip_unless_usable<CudaHostPinnedSpace>(); }
};

TEST_F(PinnedKernel, KernelsReadZeroCopyAndGatheredBatchesInPlace) {
  constexpr std::size_t n = 10000, batch = 128;
  std::vector<std::int64_t> ids(n);
  std::iota(ids.begin(), ids.end(), std::int64_t{0});
  resident::DatasetOptions options;
  options.batch_size = batch;
  DeviceDataset<CudaHostPinnedSpace, std::int64_t> ds(
      CudaHostPinnedSpace{}, options, HostTensor<const std::int64_t>(ids.data(), {n}));
  unsigned long long* sum = nullptr;
  ASSERT_EQ(cudaMallocManaged(&sum, sizeof(unsigned long long)), cudaSuccess);
  for (const Shuffle shuffle : {Shuffle::none, Shuffle::samples}) {
    auto epoch = ds.epoch({11, 2, shuffle});
    for (std::size_t k = 0; k < epoch.size(); ++k) {
      const auto [view] = epoch.batch(k);
      unsigned long long expected = 0;
      for (std::size_t row = 0; row < view.valid_rows(); ++row)
        expected += static_cast<unsigned long long>(view.data()[row]);  // host reads it too
      *sum = 0;
      sum_rows<<<1, 256>>>(view, sum);
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      ASSERT_EQ(*sum, expected) << "batch " << k << (shuffle == Shuffle::none ? "" : " gathered");
    }
  }
  (void)cudaFree(sum);
}

}  // namespace

namespace {

// Kernels launched asynchronously read page-locked batches in place while the host writes the
// next ones into the same memory: a gathered batch's ring slot, or a streamed chunk's slot, is
// written again only after the reads enqueued before it (on the dataset's stream as they are
// enqueued; on another stream through wait/release). Every kernel sees its own batch.
TEST_F(PinnedKernel, LateKernelsReadEveryBatchBeforeItsSlotIsWrittenAgain) {
  constexpr std::size_t rows = 600, batch = 16;
  std::vector<std::int32_t> y(rows);
  std::iota(y.begin(), y.end(), 0);
  const HostTensor<const std::int32_t> tensor(y.data(), {rows});
  resident::DatasetOptions options;
  options.batch_size = batch;
  options.remainder = resident::Remainder::pad;
  DeviceDataset<resident::HostSpace, std::int32_t> host(resident::HostSpace{}, options, tensor);
  const auto expected = [&](Shuffle shuffle) {
    std::vector<std::int32_t> read;
    for (const auto& [view] : host.epoch({3, 1, shuffle}))
      read.insert(read.end(), view.data(), view.data() + view.size());
    return read;
  };
  cudaStream_t other = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking), cudaSuccess);
  for (const bool on_other : {false, true}) {
    SCOPED_TRACE(on_other ? "kernels on another stream" : "kernels on the dataset's stream");
    {
      DeviceDataset<CudaHostPinnedSpace, std::int32_t> ds(CudaHostPinnedSpace{}, options, tensor);
      EXPECT_EQ(read_late(ds.epoch({3, 1, Shuffle::samples}), batch, on_other ? other : ds.stream(),
                          on_other),
                expected(Shuffle::samples))
          << "gathered batches";
    }
    {
      resident::DatasetOptions streamed = options;
      streamed.streaming.chunk_batches = 2;  // 19 chunks through 4 slots
      streamed.streaming.order = resident::StreamOrder::whole_epoch;
      resident::StreamingDataset<CudaHostPinnedSpace, std::int32_t> ds(CudaHostPinnedSpace{},
                                                                       streamed, tensor);
      ASSERT_GT(ds.num_chunks(), ds.chunk_slots());
      EXPECT_EQ(read_late(ds.epoch({3, 1, Shuffle::batches}), batch, on_other ? other : ds.stream(),
                          on_other),
                expected(Shuffle::batches))
          << "streamed batches";
    }
  }
  EXPECT_EQ(cudaStreamDestroy(other), cudaSuccess);
}

}  // namespace
