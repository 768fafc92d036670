// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// Kernels reading streamed batches with nothing but stream order between them and the copies:
// every batch's sum is written by a kernel enqueued on the dataset's stream, the host waits
// once at the end, and every sum must be right; the same on a stream of the reader's own,
// ordered by the epoch's wait and release. A chunk copied before its slot's readers were
// done, or read before its copy landed, gives a wrong sum. Over the simulated runtime the
// kernel is host work enqueued on the stream.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <numeric>
#include <thread>
#include <vector>

#include "resident/resident.hpp"
#include "support/spaces.hpp"

namespace {

using resident::BatchView;
using resident::CudaSpace;
using resident::HostTensor;
using resident::Shuffle;
using resident::StreamingDataset;

#if defined(__CUDACC__)
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

void launch_batch_sum(BatchView<const std::int64_t> ids, unsigned long long* sum,
                      cudaStream_t stream) {
  batch_sum<<<1, 128, 0, stream>>>(ids, 20000, sum);
}
#else
// The same over the simulated runtime: the sum runs on the stream's thread, in order with its
// copies, after a spin of 20 us, reaching device memory as the simulation's kernels do.
void launch_batch_sum(BatchView<const std::int64_t> ids, unsigned long long* sum,
                      cudaStream_t stream) {
  namespace simcuda = resident::testing::simcuda;
  ASSERT_EQ(simcuda::enqueue(stream,
                             [ids, sum] {
                               std::this_thread::sleep_for(std::chrono::microseconds(20));
                               const auto* rows = static_cast<const std::int64_t*>(simcuda::reach(
                                   ids.data(), ids.valid_rows() * sizeof(std::int64_t)));
                               unsigned long long local = 0;
                               for (std::size_t row = 0; row < ids.valid_rows(); ++row)
                                 local += static_cast<unsigned long long>(rows[row]);
                               *static_cast<unsigned long long*>(
                                   simcuda::reach(sum, sizeof(unsigned long long))) += local;
                             }),
            cudaSuccess);
}
#endif

class StreamKernel : public ::testing::Test {
 protected:
  void SetUp() override { resident::testing::skip_unless_usable<CudaSpace>(); }
};

// How the kernels' stream is ordered after the batches.
enum class Reader { dataset_stream, wait_and_release, bound_epoch };

// Sums every batch of a shuffled epoch with kernels on `consumer` (the dataset's stream, or
// another stream ordered by the epoch's `wait` and `release`, or by an epoch bound to it), from
// pageable and from page-locked sources, and checks that each batch came once and whole.
void check_streamed_sums(Reader reader) {
  const bool other_stream = reader != Reader::dataset_stream;
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
      void* locked = nullptr;
      ASSERT_EQ(cudaMallocHost(&locked, n * sizeof(std::int64_t)), cudaSuccess);
      source = static_cast<std::int64_t*>(locked);
      std::copy(ids.begin(), ids.end(), source);
    }
    {
      StreamingDataset<CudaSpace, std::int64_t> ds(CudaSpace{0}, options,
                                                   HostTensor<const std::int64_t>(source, {n}));
      cudaStream_t consumer = ds.stream();
      if (other_stream) {
        ASSERT_EQ(cudaStreamCreateWithFlags(&consumer, cudaStreamNonBlocking), cudaSuccess);
      }
      void* device_sums = nullptr;
      ASSERT_EQ(cudaMalloc(&device_sums, ds.num_batches() * sizeof(unsigned long long)),
                cudaSuccess);
      auto* sums = static_cast<unsigned long long*>(device_sums);
      ASSERT_EQ(cudaMemsetAsync(sums, 0, ds.num_batches() * sizeof(unsigned long long), consumer),
                cudaSuccess);
      if (reader == Reader::bound_epoch) {
        std::size_t k = 0;
        for (const auto [batch_ids] : ds.epoch({3, 1, Shuffle::batches}).on(consumer))
          launch_batch_sum(batch_ids, sums + k++, consumer);
      } else {
        auto epoch = ds.epoch({3, 1, Shuffle::batches});
        for (std::size_t k = 0; k < epoch.size(); ++k) {
          const auto [batch_ids] = epoch.batch(k);
          if (other_stream) epoch.wait(k, consumer);
          launch_batch_sum(batch_ids, sums + k, consumer);
          if (other_stream) epoch.release(k, consumer);
        }
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
  check_streamed_sums(Reader::dataset_stream);
}

TEST_F(StreamKernel, KernelsOnAnotherStreamSeeEveryChunkThroughWaitAndRelease) {
  check_streamed_sums(Reader::wait_and_release);
}

TEST_F(StreamKernel, KernelsOnTheStreamAnEpochIsBoundToSeeEveryChunk) {
  check_streamed_sums(Reader::bound_epoch);
}

}  // namespace
