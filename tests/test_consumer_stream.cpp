// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// Epochs bound to a consumer stream (`on(stream)`, `batch(k, stream)`): they serve what an
// unbound epoch serves, on every space; on a device, each batch is ordered on the stream
// after its gather, and the next write of its memory after the stream's reads of it.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <future>
#include <numeric>
#include <thread>
#include <tuple>
#include <vector>

#include "resident/device_dataset.hpp"
#include "resident/epoch.hpp"
#include "resident/streaming_dataset.hpp"
#include "support/spaces.hpp"
#if RESIDENT_TEST_SIMULATED_CUDA
#include "support/stream_gates.hpp"
#endif

namespace {

using resident::DatasetOptions;
using resident::EpochOptions;
using resident::HostTensor;
using resident::Shape;
using resident::Shuffle;
using resident::testing::read_back;

constexpr std::size_t columns = 4;

// Row r holds 8r + 1, ..., 8r + 4: every batch's values are known, and differ from every other's.
std::vector<std::int32_t> numbered_rows(std::size_t rows) {
  std::vector<std::int32_t> values(rows * columns);
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t c = 0; c < columns; ++c)
      values[r * columns + c] = static_cast<std::int32_t>(8 * r + c + 1);
  return values;
}

DatasetOptions options_of(std::size_t batch) {
  DatasetOptions options;
  options.batch_size = batch;
  options.reserve_bytes = 0;
  options.streaming.chunk_batches = 1;
  options.streaming.chunk_slots = 2;  // chunk k + 2 goes into chunk k's slot
  options.streaming.prefetch_chunks = 1;
  return options;
}

// Every batch of `epoch`, read back on the dataset's own stream.
template <class Dataset>
std::vector<std::vector<std::int32_t>> unbound_batches(Dataset& dataset,
                                                       const EpochOptions& options) {
  std::vector<std::vector<std::int32_t>> batches;
  auto epoch = dataset.epoch(options);
  for (auto [x] : epoch) batches.push_back(read_back(dataset.space(), dataset.stream(), x));
  return batches;
}

template <class Space>
class BoundEpoch : public resident::testing::OverGatheringSpaces<Space> {};
TYPED_TEST_SUITE(BoundEpoch, resident::testing::SpaceTypes, resident::testing::SpaceName);

// The same batches, read on the bound stream, whichever way they are asked for: by iterating
// an epoch bound with `on`, or by `batch(k, stream)` in any order; preloaded and streamed,
// zero-copy and gathered, for two epochs of each dataset.
TYPED_TEST(BoundEpoch, ServesWhatAnUnboundEpochServes) {
  using Space = TypeParam;
  const Space& space = this->space_;
  constexpr std::size_t rows = 53;
  const std::vector<std::int32_t> values = numbered_rows(rows);
  const HostTensor<const std::int32_t> tensor(values.data(), Shape{rows, columns});
  const auto consumer = space.create_stream();
  const auto check = [&](auto& dataset) {
    for (const Shuffle shuffle : {Shuffle::none, Shuffle::samples}) {
      for (std::uint64_t epoch = 0; epoch < 2; ++epoch) {
        SCOPED_TRACE(::testing::Message()
                     << "shuffle " << static_cast<int>(shuffle) << ", epoch " << epoch);
        const EpochOptions options{7, epoch, shuffle};
        const auto expected = unbound_batches(dataset, options);
        std::vector<std::vector<std::int32_t>> iterated;
        for (auto [x] : dataset.epoch(options).on(consumer))
          iterated.push_back(read_back(space, consumer, x));
        EXPECT_EQ(iterated, expected);
        auto taken = dataset.epoch(options);
        for (std::size_t k = taken.size(); k-- > 0;)
          EXPECT_EQ(read_back(space, consumer, std::get<0>(taken.batch(k, consumer))), expected[k])
              << "batch " << k << " asked for on a stream, last to first";
      }
    }
  };
  {
    resident::DeviceDataset<Space, std::int32_t> preloaded(space, options_of(5), tensor);
    check(preloaded);
  }
  {
    resident::StreamingDataset<Space, std::int32_t> streamed(space, options_of(5), tensor);
    check(streamed);
  }
  space.destroy_stream(consumer);
}

// Batches on a stream mixed with batches on none, in and out of order: the batch handed out
// on the stream is released before the next is taken, however it is asked for, so that a
// stream's reader can move to another chunk; each batch is still the unbound epoch's.
TYPED_TEST(BoundEpoch, BatchesOnAStreamMixWithBatchesOnNone) {
  using Space = TypeParam;
  const Space& space = this->space_;
  constexpr std::size_t rows = 203;
  const std::vector<std::int32_t> values = numbered_rows(rows);
  const HostTensor<const std::int32_t> tensor(values.data(), Shape{rows, columns});
  const auto consumer = space.create_stream();
  resident::StreamingDataset<Space, std::int32_t> streamed(space, options_of(5), tensor);
  for (const Shuffle shuffle : {Shuffle::none, Shuffle::samples}) {
    SCOPED_TRACE(::testing::Message() << "shuffle " << static_cast<int>(shuffle));
    const EpochOptions options{5, 2, shuffle};
    const auto expected = unbound_batches(streamed, options);
    auto epoch = streamed.epoch(options);
    // An unbound batch is read on the dataset's stream, a bound one on the consumer.
    for (std::size_t k = 0; k < epoch.size(); ++k) {
      const bool bound = k % 2 == 0;
      const auto [x] = bound ? epoch.batch(k, consumer) : epoch.batch(k);
      EXPECT_EQ(read_back(space, bound ? consumer : streamed.stream(), x), expected[k])
          << "batch " << k;
    }
    auto jumping = streamed.epoch(options);
    for (const std::size_t k : {3U, 20U, 4U, 39U, 0U}) {
      const bool bound = k != 20;
      const auto [x] = bound ? jumping.batch(k, consumer) : jumping.batch(k);
      EXPECT_EQ(read_back(space, bound ? consumer : streamed.stream(), x), expected[k])
          << "batch " << k;
      (void)jumping.batch_indices(k);
    }
  }
  space.destroy_stream(consumer);
}

#if RESIDENT_TEST_SIMULATED_CUDA
using resident::CudaSpace;
namespace simcuda = resident::testing::simcuda;

// Enqueues on `stream` a read of `view` into `seen`, held back until `opened`.
template <class View>
void read_later(cudaStream_t stream, const View& view, std::vector<std::int32_t>& seen,
                const std::shared_future<void>& opened) {
  ASSERT_EQ(simcuda::enqueue(stream,
                             [&seen, data = view.data(), count = view.size(), opened] {
                               opened.wait();
                               seen.resize(count);
                               simcuda::peek(seen.data(), data, count * sizeof(std::int32_t));
                             }),
            cudaSuccess);
}
// Gives an unordered copy or gather time to land before a gate opens.
void let_unordered_work_land() { std::this_thread::sleep_for(std::chrono::milliseconds(10)); }

using BoundCudaEpoch = resident::testing::OverGatheringSpaces<CudaSpace>;

// A gathering epoch bound to a stream: a read enqueued on the stream after `batch(k)` runs after
// batch k's gather, and the gather of batch k + ring_depth into the same slot runs after that
// read. Each order is forced by gates: the gathers are held back while the reads may run (a
// read not ordered after its gather then sees the slot's previous batch), and the reads while
// the next gathers are enqueued (a gather not ordered after the read overwrites the batch
// first), so that a missing `wait` or `release` fails in every run.
TEST_F(BoundCudaEpoch, ReadsComeAfterTheirGatherAndTheNextGatherIntoTheSlotAfterTheReads) {
  constexpr std::size_t rows = 64, batch = 8, batches = rows / batch;
  const std::vector<std::int32_t> values = numbered_rows(rows);
  const HostTensor<const std::int32_t> tensor(values.data(), Shape{rows, columns});
  const CudaSpace space{0};
  cudaStream_t consumer = space.create_stream();
  DatasetOptions options = options_of(batch);
  options.ring_depth = 2;
  const auto run = [&](auto& dataset) {
    const EpochOptions shuffled{11, 0, Shuffle::samples};
    const auto expected = unbound_batches(dataset, shuffled);
    {
      SCOPED_TRACE("reads after their gather");
      std::vector<std::vector<std::int32_t>> seen(batches);
      resident::testing::Gates gathers(batches), reads(batches);
      auto epoch = dataset.epoch(shuffled).on(consumer);
      for (std::size_t k = 0; k < batches; ++k) {
        ASSERT_EQ(
            simcuda::enqueue(dataset.stream(), [opened = gathers.opened(k)] { opened.wait(); }),
            cudaSuccess);
        const auto [x] = epoch.batch(k);
        read_later(consumer, x, seen[k], reads.opened(k));
        reads.open(k);  // the read may run now: only its order holds it behind the gather
        let_unordered_work_land();
        gathers.open(k);
      }
      ASSERT_EQ(cudaStreamSynchronize(consumer), cudaSuccess);
      for (std::size_t k = 0; k < batches; ++k)
        EXPECT_EQ(seen[k], expected[k]) << "the read of batch " << k << " ran before its gather";
    }
    {
      SCOPED_TRACE("the next gather into a slot after the reads of what it held");
      std::vector<std::vector<std::int32_t>> seen(batches);
      resident::testing::Gates reads(batches);
      auto epoch = dataset.epoch(shuffled).on(consumer);
      for (std::size_t k = 0; k < batches; ++k) {
        const auto [x] = epoch.batch(k);
        read_later(consumer, x, seen[k], reads.opened(k));
        if (k >= 2) {  // batch k's gather, into batch k - 2's slot, is enqueued
          let_unordered_work_land();
          reads.open(k - 2);
        }
      }
      reads.open_all();
      ASSERT_EQ(cudaStreamSynchronize(consumer), cudaSuccess);
      for (std::size_t k = 0; k < batches; ++k)
        EXPECT_EQ(seen[k], expected[k])
            << "batch " << k << "'s slot was gathered into again before its read";
    }
    {
      SCOPED_TRACE("the next epoch's gathers into the ring after the reads of the last batch");
      std::vector<std::int32_t> last;
      resident::testing::Gates reads(1);
      {
        auto epoch = dataset.epoch(shuffled).on(consumer);
        for (std::size_t k = 0; k + 1 < batches; ++k) (void)epoch.batch(k);
        const auto [x] = epoch.batch(batches - 1);
        read_later(consumer, x, last, reads.opened(0));
      }  // the epoch goes with its last batch's read held back, its ring to the next epoch
      auto next = dataset.epoch(shuffled).on(consumer);
      (void)next.batch(0);
      (void)next.batch(1);  // one of the two gathers into the slot the held read reads
      let_unordered_work_land();
      reads.open(0);
      ASSERT_EQ(cudaStreamSynchronize(consumer), cudaSuccess);
      EXPECT_EQ(last, expected[batches - 1])
          << "the next epoch gathered into the last batch's slot before its read";
    }
  };
  {
    resident::DeviceDataset<CudaSpace, std::int32_t> preloaded(space, options, tensor);
    run(preloaded);
  }
  {
    resident::StreamingDataset<CudaSpace, std::int32_t> streamed(space, options, tensor);
    run(streamed);
  }
  space.destroy_stream(consumer);
}

// A streamed epoch of zero-copy views (chunk slots) bound to a stream: the load of a chunk into
// a slot waits for the bound stream's reads of the batch it held, and the last batch's reads
// are waited for once the epoch goes, before the next epoch loads into its slot. Each read is
// held back until the load that would overwrite it has been enqueued and has had time to land.
TEST_F(BoundCudaEpoch, ChunkLoadsWaitForTheReadsOfTheBatchTheSlotHeld) {
  constexpr std::size_t rows = 80, batch = 8, batches = rows / batch;
  const std::vector<std::int32_t> values = numbered_rows(rows);
  void* locked = nullptr;  // the rows page-locked too: their chunks are copied without staging
  ASSERT_EQ(cudaMallocHost(&locked, values.size() * sizeof(std::int32_t)), cudaSuccess);
  std::copy(values.begin(), values.end(), static_cast<std::int32_t*>(locked));
  const CudaSpace space{0};
  cudaStream_t consumer = space.create_stream();
  for (const bool pinned : {false, true}) {
    SCOPED_TRACE(pinned ? "page-locked rows, copied directly"
                        : "pageable rows, copied through the staging buffers");
    const HostTensor<const std::int32_t> tensor(
        pinned ? static_cast<const std::int32_t*>(locked) : values.data(), Shape{rows, columns});
    resident::StreamingDataset<CudaSpace, std::int32_t> dataset(space, options_of(batch), tensor);
    const EpochOptions in_order{0, 0, Shuffle::none};
    const auto expected = unbound_batches(dataset, in_order);
    std::vector<std::vector<std::int32_t>> seen(batches + 1);
    resident::testing::Gates reads(batches + 1);
    {
      auto epoch = dataset.epoch(in_order).on(consumer);
      for (std::size_t k = 0; k < batches; ++k) {
        const auto [x] = epoch.batch(k);
        read_later(consumer, x, seen[k], reads.opened(k));
        if (k >= 2) {
          let_unordered_work_land();
          reads.open(k - 2);
        }
      }
      reads.open(batches - 2);
      let_unordered_work_land();
    }  // the epoch goes with its last batch's read still held back
    // The next epoch loads chunks 0 and 1 (prefetched) into the two slots, the second into the
    // last batch's: only the release the epoch owed when it went orders that load.
    auto next = dataset.epoch(in_order).on(consumer);
    const auto [first] = next.batch(0);
    let_unordered_work_land();
    reads.open(batches - 1);
    read_later(consumer, first, seen[batches], reads.opened(batches));
    reads.open(batches);
    ASSERT_EQ(cudaStreamSynchronize(consumer), cudaSuccess);
    for (std::size_t k = 0; k < batches; ++k)
      EXPECT_EQ(seen[k], expected[k])
          << "batch " << k << "'s slot was loaded again before its read";
    EXPECT_EQ(seen[batches], expected[0]);
  }
  space.destroy_stream(consumer);
  EXPECT_EQ(cudaFreeHost(locked), cudaSuccess);
}

// Page-locked memory that kernels read (CudaHostPinnedSpace): the host writes a ring slot or a
// chunk slot again only once the bound stream's reads of the batch it held are done, waiting on
// the host. Each read is held back until a thread opens it 10 ms after the batch two on is asked
// for: a write not ordered after the read lands first and the read sees the later batch.
TEST(BoundPinnedEpoch, TheHostWritesASlotAgainOnlyAfterTheBoundStreamsReads) {
  resident::testing::skip_unless_usable<resident::CudaHostPinnedSpace>();
  constexpr std::size_t rows = 64, batch = 8, batches = rows / batch;
  const std::vector<std::int32_t> values = numbered_rows(rows);
  const HostTensor<const std::int32_t> tensor(values.data(), Shape{rows, columns});
  const resident::CudaHostPinnedSpace space{};
  cudaStream_t consumer = space.create_stream();
  DatasetOptions options = options_of(batch);
  options.ring_depth = 2;
  const auto run = [&](auto& dataset, const EpochOptions& epoch_options) {
    const auto expected = unbound_batches(dataset, epoch_options);
    std::vector<std::vector<std::int32_t>> seen(batches);
    std::vector<std::thread> openers;
    {
      resident::testing::Gates reads(batches);
      auto epoch = dataset.epoch(epoch_options).on(consumer);
      for (std::size_t k = 0; k < batches; ++k) {
        if (k >= 2)
          openers.emplace_back([&reads, k] {
            let_unordered_work_land();
            reads.open(k - 2);
          });
        const auto [x] = epoch.batch(k);  // waits on the host for the read of batch k - 2
        read_later(consumer, x, seen[k], reads.opened(k));
      }
      for (std::thread& opener : openers) opener.join();
      reads.open_all();
      ASSERT_EQ(cudaStreamSynchronize(consumer), cudaSuccess);
    }
    for (std::size_t k = 0; k < batches; ++k)
      EXPECT_EQ(seen[k], expected[k])
          << "batch " << k << "'s slot was written again before its read";
  };
  {
    SCOPED_TRACE("a gathering epoch's ring");
    resident::DeviceDataset<resident::CudaHostPinnedSpace, std::int32_t> preloaded(space, options,
                                                                                   tensor);
    run(preloaded, EpochOptions{11, 0, Shuffle::samples});
  }
  {
    SCOPED_TRACE("a stream's chunk slots");
    resident::StreamingDataset<resident::CudaHostPinnedSpace, std::int32_t> streamed(space, options,
                                                                                     tensor);
    run(streamed, EpochOptions{0, 0, Shuffle::none});
  }
  space.destroy_stream(consumer);
}
#endif

}  // namespace
