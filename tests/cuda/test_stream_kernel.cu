// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// Kernels reading streamed batches with nothing but stream order between them and the copies:
// every batch's sum is written by a kernel enqueued on the dataset's stream, the host waits
// once at the end, and every sum must be right; the same on a stream of the reader's own,
// ordered by the epoch's wait and release. A chunk copied before its slot's readers were
// done, or read before its copy landed, gives a wrong sum.
#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <vector>

#include "resident/resident.hpp"
#include "support/spaces.hpp"

namespace {

using resident::BatchView;
using resident::CudaSpace;
using resident::HostTensor;
using resident::Shuffle;
using resident::StreamingDataset;

// One block per batch: the sum of its valid row ids, and a spin so that the copies behind it
// have every chance to overrun a slot still being read.
__global__ void batch_sum(BatchView<const std::int64_t> ids, long long spin_cycles,
                          unsigned long long* sum) {
  const long long start = clock64();
  while (clock64() - start < spin_cycles) {
  }
  unsigned long long local = 0;
  for (std::size_t row = threadIdx.x; row < ids.valid_rows(); row += blockDim.x)
    local += static_cast<unsigned long long>(ids.data()[row]);
  atomicAdd(sum, local);
}

class StreamKernel : public ::testing::Test {
 protected:
  void SetUp() override { resident::testing::skip_unless_usable<CudaSpace>(); }
};

// Sums every batch of a shuffled epoch with kernels on `consumer` (the dataset's stream when
// null; another stream ordered by the epoch's `wait` and `release` otherwise), from pageable
// and from page-locked sources, and checks that each batch came once and whole.
void check_streamed_sums(bool other_stream) {
  constexpr std::size_t n = 100000, batch = 100;
  std::vector<std::int64_t> ids(n);
  std::iota(ids.begin(), ids.end(), std::int64_t{0});
  resident::DatasetOptions options;
  options.batch_size = batch;
  options.reserve_bytes = 0;
  options.streaming = {4, 3, 2};  // 4 batches per chunk, 3 slots, 2 ahead: slots turn over fast
  for (const bool pinned : {false, true}) {
    SCOPED_TRACE(pinned ? "page-locked source" : "pageable source");
    std::int64_t* source = ids.data();
    if (pinned) {
      ASSERT_EQ(cudaMallocHost(&source, n * sizeof(std::int64_t)), cudaSuccess);
      std::copy(ids.begin(), ids.end(), source);
    }
    {
      StreamingDataset<CudaSpace, std::int64_t> ds(CudaSpace{0}, options,
                                                   HostTensor<const std::int64_t>(source, {n}));
      cudaStream_t consumer = ds.stream();
      if (other_stream)
        ASSERT_EQ(cudaStreamCreateWithFlags(&consumer, cudaStreamNonBlocking), cudaSuccess);
      unsigned long long* sums = nullptr;
      ASSERT_EQ(cudaMalloc(&sums, ds.num_batches() * sizeof(unsigned long long)), cudaSuccess);
      ASSERT_EQ(cudaMemsetAsync(sums, 0, ds.num_batches() * sizeof(unsigned long long), consumer),
                cudaSuccess);
      auto epoch = ds.epoch({3, 1, Shuffle::batches});
      for (std::size_t k = 0; k < epoch.size(); ++k) {
        const auto [batch_ids] = epoch.batch(k);
        if (other_stream) epoch.wait(k, consumer);
        batch_sum<<<1, 128, 0, consumer>>>(batch_ids, 20000, sums + k);
        if (other_stream) epoch.release(k, consumer);
      }
      std::vector<unsigned long long> got(ds.num_batches());
      ASSERT_EQ(cudaMemcpyAsync(got.data(), sums, got.size() * sizeof(unsigned long long),
                                cudaMemcpyDeviceToHost, consumer),
                cudaSuccess);
      ASSERT_EQ(cudaStreamSynchronize(consumer), cudaSuccess);
      // Each batch is 100 consecutive ids starting at a multiple of 100: its sum names it.
      std::vector<int> seen(ds.num_batches(), 0);
      for (const unsigned long long sum : got) {
        ASSERT_EQ((sum - 4950) % (batch * batch), 0u) << "a batch of torn or stale rows";
        const auto index = static_cast<std::size_t>((sum - 4950) / (batch * batch));
        ASSERT_LT(index, seen.size());
        ++seen[index];
      }
      for (const int count : seen) ASSERT_EQ(count, 1);
      (void)cudaFree(sums);
      if (other_stream) (void)cudaStreamDestroy(consumer);
    }
    if (pinned) (void)cudaFreeHost(source);
  }
}

TEST_F(StreamKernel, KernelsOnTheDatasetStreamSeeEveryChunkWithoutAHostWait) {
  check_streamed_sums(false);
}

TEST_F(StreamKernel, KernelsOnAnotherStreamSeeEveryChunkThroughWaitAndRelease) {
  check_streamed_sums(true);
}

}  // namespace
