// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// CudaSpace over a memory resource: what a dataset allocates from it and frees to it, on which
// stream; the capacity check that counts what a resource holds unused; a resource or a budget
// that limits the space; and the resources that come with resident.
#if !defined(LIBCUDACXX_ENABLE_EXPERIMENTAL_MEMORY_RESOURCE)
#define LIBCUDACXX_ENABLE_EXPERIMENTAL_MEMORY_RESOURCE  // as rmm's units define it
#endif
#include <gtest/gtest.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <new>
#include <numeric>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "resident/cuda_resource.hpp"
#include "resident/cuda_space.hpp"
#include "resident/dataset.hpp"
#include "resident/device_dataset.hpp"
#include "resident/plan.hpp"
#include "resident/streaming_dataset.hpp"
#include "resident/units.hpp"
#include "support/spaces.hpp"
#if RESIDENT_TEST_SIMULATED_CUDA
#include "support/stream_gates.hpp"
#endif

#if RESIDENT_HAS_CUDA
namespace {

using resident::CapacityError;
using resident::CudaMallocResource;
using resident::CudaPoolResource;
using resident::CudaSpace;
using resident::DatasetOptions;
using resident::DeviceDataset;
using resident::EpochOptions;
using resident::HostTensor;
using resident::Shape;
using resident::Shuffle;
using resident::StreamingDataset;
using resident::StreamRef;

class CudaResource : public ::testing::Test {
 protected:
  void SetUp() override { resident::testing::skip_unless_usable<CudaSpace>(); }
};

/// One call a resource saw.
struct Call {
  bool allocation;  // else a deallocation
  void* pointer;
  std::size_t bytes;
  cudaStream_t stream;
};

/// A resource that records every call it gets, backed by `cudaMalloc`; it refuses
/// (`std::bad_alloc`, as rmm's resources do) past `limit` bytes live. The synchronous pair
/// counts apart: a dataset must not use it.
class CountingResource {
 public:
  explicit CountingResource(std::size_t limit = SIZE_MAX) : limit_(limit) {}

  [[nodiscard]] void* allocate_async(std::size_t bytes, std::size_t alignment, StreamRef stream) {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (bytes > limit_ - live_) throw std::bad_alloc();
    void* pointer = CudaMallocResource{}.allocate(bytes, alignment);
    live_ += bytes;
    calls_.push_back({true, pointer, bytes, stream.get()});
    return pointer;
  }
  void deallocate_async(void* pointer, std::size_t bytes, std::size_t alignment, StreamRef stream) {
    const std::lock_guard<std::mutex> lock(mutex_);
    CudaMallocResource{}.deallocate_async(pointer, bytes, alignment, stream);
    live_ -= bytes;
    calls_.push_back({false, pointer, bytes, stream.get()});
  }
  [[nodiscard]] void* allocate(std::size_t bytes, std::size_t alignment) {
    ++synchronous_;
    return CudaMallocResource{}.allocate(bytes, alignment);
  }
  void deallocate(void* pointer, std::size_t bytes, std::size_t alignment) {
    ++synchronous_;
    CudaMallocResource{}.deallocate(pointer, bytes, alignment);
  }
  friend bool operator==(const CountingResource& a, const CountingResource& b) noexcept {
    return &a == &b;
  }
  [[maybe_unused]] friend bool operator!=(const CountingResource& a,
                                          const CountingResource& b) noexcept {
    return !(a == b);
  }

  [[nodiscard]] std::vector<Call> calls() const {
    const std::lock_guard<std::mutex> lock(mutex_);
    return calls_;
  }
  [[nodiscard]] std::size_t synchronous() const { return synchronous_; }

 private:
  mutable std::mutex mutex_;
  std::size_t limit_;
  std::size_t live_ = 0;
  std::vector<Call> calls_;
  std::size_t synchronous_ = 0;
};

#if RESIDENT_HAS_CUDA_MEMORY_RESOURCE
static_assert(cuda::mr::async_resource_with<CudaMallocResource, cuda::mr::device_accessible>);
static_assert(cuda::mr::async_resource_with<CudaPoolResource, cuda::mr::device_accessible>);
static_assert(cuda::mr::async_resource<CountingResource>);
#endif

// Rows of `columns` floats, row r holding r * columns + c; labels r.
struct Rows {
  explicit Rows(std::size_t count, std::size_t columns = 8)
      : x(count * columns), y(count), shape{count, columns} {
    std::iota(x.begin(), x.end(), 0.0F);
    std::iota(y.begin(), y.end(), std::int32_t{0});
  }
  [[nodiscard]] HostTensor<const float> features() const { return {x.data(), shape}; }
  [[nodiscard]] HostTensor<const std::int32_t> labels() const {
    return {y.data(), Shape{y.size()}};
  }
  std::vector<float> x;
  std::vector<std::int32_t> y;
  Shape shape;
};

DatasetOptions options_of(std::size_t batch) {
  DatasetOptions options;
  options.batch_size = batch;
  options.reserve_bytes = 0;
  return options;
}

// Every allocation the resource saw was freed once, with its bytes, and both on `stream`;
// returns how many there were.
std::size_t expect_paired_on(const std::vector<Call>& calls, cudaStream_t stream) {
  std::size_t allocations = 0;
  for (const Call& call : calls) {
    EXPECT_EQ(call.stream, stream) << (call.allocation ? "an allocation" : "a free") << " of "
                                   << call.bytes << " bytes on another stream";
    if (!call.allocation) continue;
    ++allocations;
    std::size_t frees = 0;
    for (const Call& other : calls)
      frees += !other.allocation && other.pointer == call.pointer && other.bytes == call.bytes;
    EXPECT_EQ(frees, 1U) << "the allocation of " << call.bytes << " bytes was freed " << frees
                         << " times";
  }
  return allocations;
}

TEST_F(CudaResource, APreloadedDatasetAndItsRingAreOneAllocationEachOnTheDatasetsStream) {
  CountingResource counting;
  const Rows rows(100);
  cudaStream_t stream = nullptr;
  {
    DeviceDataset<CudaSpace, float, std::int32_t> dataset(
        CudaSpace(0).with_resource(counting), options_of(16), rows.features(), rows.labels());
    stream = dataset.stream();
    ASSERT_EQ(counting.calls().size(), 1U) << "the dataset is one allocation";
    EXPECT_EQ(counting.calls()[0].bytes, dataset.bytes());
    EpochOptions shuffled;
    shuffled.shuffle = Shuffle::samples;
    std::size_t seen = 0;
    for (auto [x, y] : dataset.epoch(shuffled)) seen += y.rows();
    EXPECT_EQ(seen, 100U);
    EXPECT_EQ(counting.calls().size(), 2U) << "a gathering epoch adds its ring, and no more";
  }
  const std::vector<Call> calls = counting.calls();
  EXPECT_EQ(calls.size(), 4U);
  EXPECT_EQ(expect_paired_on(calls, stream), 2U);
  EXPECT_EQ(counting.synchronous(), 0U) << "a dataset allocates in stream order only";
}

TEST_F(CudaResource, AStreamsChunkSlotsAndItsRingAreOneAllocationEachOnItsStream) {
  CountingResource counting;
  const Rows rows(100);
  cudaStream_t stream = nullptr;
  {
    DatasetOptions options = options_of(10);
    options.streaming.chunk_batches = 2;
    options.streaming.chunk_slots = 2;
    options.streaming.prefetch_chunks = 1;
    StreamingDataset<CudaSpace, float, std::int32_t> dataset(
        CudaSpace(0).with_resource(counting), options, rows.features(), rows.labels());
    stream = dataset.stream();
    ASSERT_FALSE(counting.calls().empty());
    EXPECT_EQ(counting.calls()[0].bytes, dataset.bytes()) << "the chunk slots are one allocation";
    const std::size_t made = counting.calls().size();
    EXPECT_LE(made, 2U) << "the slots, and the ring the stream plans beside them";
    EpochOptions converted;
    converted.shuffle = Shuffle::batches;
    std::size_t seen = 0;
    for (auto [x, y] : dataset.epoch(
             converted, resident::convert<0>(resident::Normalize::mean_std({0.0F}, {1.0F}, 1))))
      seen += y.rows();
    EXPECT_EQ(seen, 100U);
    EXPECT_EQ(counting.calls().size(), 2U) << "a gathering epoch has a ring, and no more";
  }
  const std::vector<Call> calls = counting.calls();
  EXPECT_EQ(calls.size(), 4U);
  EXPECT_EQ(expect_paired_on(calls, stream), 2U);
  EXPECT_EQ(counting.synchronous(), 0U);
}

#if RESIDENT_TEST_SIMULATED_CUDA
// A framework's caching allocator in miniature: it holds `held` bytes of the device from the
// start and hands out parts of them (a bump allocator, all returned together), so that the
// device reports them used while the resource can still give them.
class CachingResource {
 public:
  explicit CachingResource(std::size_t held) : held_(held) {
    block_ = static_cast<std::byte*>(CudaMallocResource{}.allocate(held));
  }
  CachingResource(const CachingResource&) = delete;
  CachingResource& operator=(const CachingResource&) = delete;
  ~CachingResource() { CudaMallocResource{}.deallocate(block_, held_); }

  [[nodiscard]] void* allocate_async(std::size_t bytes, std::size_t /*alignment*/,
                                     StreamRef /*stream*/) {
    const std::size_t size = (bytes + 255) / 256 * 256;
    if (size > held_ - handed_) throw std::bad_alloc();
    void* pointer = block_ + handed_;
    handed_ += size;
    return pointer;
  }
  void deallocate_async(void* /*pointer*/, std::size_t /*bytes*/, std::size_t /*alignment*/,
                        StreamRef stream) {
    EXPECT_EQ(cudaStreamSynchronize(stream.get()), cudaSuccess);
  }
  [[nodiscard]] void* allocate(std::size_t bytes, std::size_t alignment) {
    return allocate_async(bytes, alignment, StreamRef(cudaStreamPerThread));
  }
  void deallocate(void* /*pointer*/, std::size_t /*bytes*/, std::size_t /*alignment*/) {}
  [[nodiscard]] std::size_t idle_bytes() const { return held_ - handed_; }
  friend bool operator==(const CachingResource& a, const CachingResource& b) noexcept {
    return &a == &b;
  }
  [[maybe_unused]] friend bool operator!=(const CachingResource& a,
                                          const CachingResource& b) noexcept {
    return !(a == b);
  }

 private:
  std::size_t held_;
  std::size_t handed_ = 0;
  std::byte* block_ = nullptr;
};

// 64 MiB of device memory, 70 % of it held by the resource: a dataset of 30 MiB fits only with
// that memory counted.
TEST_F(CudaResource, MemoryAResourceHoldsUnusedCountsAsFree) {
  using namespace resident::literals;
  const resident::testing::SimulatedMachine small(
      [](auto& machine) { machine.device_bytes = 64_MiB; });
  const Rows rows(30_MiB / (256 * sizeof(float)), 256);
  const DatasetOptions options = options_of(1024);
  CachingResource cache(64_MiB / 10 * 7);
  const CudaSpace pooled = CudaSpace(0).with_resource(cache);

  const resident::Plan with_cache = resident::plan(pooled, options, rows.features());
  EXPECT_TRUE(with_cache.fits) << with_cache;
  EXPECT_NE(with_cache.capacity_source.find("the memory resource holds but does not use"),
            std::string::npos)
      << with_cache.capacity_source;
  {
    const DeviceDataset<CudaSpace, float> dataset(pooled, options, rows.features());
    EXPECT_EQ(dataset.num_rows(), rows.shape[0]);
  }

  const CudaSpace plain(0);
  const resident::Plan without = resident::plan(plain, options, rows.features());
  EXPECT_FALSE(without.fits) << without;
  EXPECT_NE(without.recommendation, resident::Recommendation::preload) << without;
  try {
    const DeviceDataset<CudaSpace, float> refused(plain, options, rows.features());
    ADD_FAILURE() << "30 MiB preloaded beside a 44.8 MiB cache on a 64 MiB device";
  } catch (const CapacityError& error) {
    EXPECT_EQ(error.needed_bytes(), without.needed_bytes);
    EXPECT_LT(error.free_bytes(), 20_MiB) << error.what();
    EXPECT_EQ(error.total_bytes(), 64_MiB) << error.what();
  }
  const auto streamed = resident::make_dataset(plain, options, rows.features());
  EXPECT_TRUE(streamed.is_streaming()) << streamed.plan();
}
#endif

// A resource that allows less than the dataset: the preload allocation is refused when the
// dataset is made (its `std::bad_alloc` a CapacityError with figures), `make_dataset` streams
// every batch as the preloaded dataset would serve it, and a limit below even the chunk slots
// is refused when made.
TEST_F(CudaResource, AResourceThatLimitsBelowTheDataMakesItStreamOrRefuseWhenMade) {
  const Rows rows(200, 16);
  DatasetOptions options = options_of(10);
  options.streaming.chunk_batches = 2;
  options.streaming.chunk_slots = 2;
  options.streaming.prefetch_chunks = 1;
  const std::size_t data_bytes = rows.x.size() * sizeof(float) + rows.y.size() * sizeof(int);
  CountingResource limited(data_bytes / 2);
  const CudaSpace space = CudaSpace(0).with_resource(limited);
  try {
    const DeviceDataset<CudaSpace, float, std::int32_t> refused(space, options, rows.features(),
                                                                rows.labels());
    ADD_FAILURE() << "a dataset preloaded past its resource's limit";
  } catch (const CapacityError& error) {
    EXPECT_NE(std::string(error.what()).find("the memory resource refused"), std::string::npos)
        << error.what();
    EXPECT_GT(error.needed_bytes(), data_bytes / 2);
  }
  auto dataset = resident::make_dataset(space, options, rows.features(), rows.labels());
  ASSERT_TRUE(dataset.is_streaming()) << dataset.plan();
  EXPECT_NE(dataset.plan().reason.find("preload allocation was"), std::string::npos)
      << dataset.plan().reason;
  for (int epoch = 0; epoch < 2; ++epoch) {
    EpochOptions shuffled;
    shuffled.shuffle = Shuffle::samples;
    shuffled.epoch = static_cast<std::uint64_t>(epoch);
    auto served = dataset.epoch(shuffled);
    std::vector<int> seen(rows.y.size(), 0);
    for (std::size_t k = 0; k < served.size(); ++k) {
      auto [x, y] = served.batch(k);
      std::vector<std::int32_t> labels(y.rows());
      dataset.space().synchronize(dataset.stream());
      ASSERT_EQ(cudaMemcpy(labels.data(), y.data(), y.bytes(), cudaMemcpyDeviceToHost),
                cudaSuccess);
      for (const std::int32_t label : labels) ++seen[static_cast<std::size_t>(label)];
      (void)x;
    }
    EXPECT_EQ(seen, std::vector<int>(rows.y.size(), 1)) << "epoch " << epoch;
  }

  CountingResource tiny(1024);
  EXPECT_THROW((void)resident::make_dataset(CudaSpace(0).with_resource(tiny), options,
                                            rows.features(), rows.labels()),
               CapacityError);
  EXPECT_TRUE(tiny.calls().empty()) << "nothing is left allocated by a refusal";
}

// The same with automatic chunks: a stream sized from the figures that let the preload pass
// would be refused too, so its chunks shrink until its slots are allocated; and where even
// chunks of one batch are refused, the refusal says that both were.
TEST_F(CudaResource, AResourceLimitShrinksTheFallbackStreamsChunksUntilTheyFit) {
  using namespace resident::literals;
  const Rows rows(4000, 120);  // 1.9 MiB: one automatic chunk would hold it all
  const DatasetOptions options = options_of(16);
  CountingResource limited(1_MiB);
  auto dataset = resident::make_dataset(CudaSpace(0).with_resource(limited), options,
                                        rows.features(), rows.labels());
  ASSERT_TRUE(dataset.is_streaming()) << dataset.plan();
  EXPECT_LT(dataset.streaming()->bytes(), 1_MiB);
  EXPECT_NE(dataset.plan().reason.find("preload allocation was"), std::string::npos)
      << dataset.plan().reason;
  std::size_t rows_seen = 0;
  for (auto [x, y] : dataset.epoch({1, 0, Shuffle::batches})) rows_seen += y.rows();
  EXPECT_EQ(rows_seen, rows.shape[0]);

  CountingResource tiny(rows.shape[1] * sizeof(float) * 8);  // less than one batch
  try {
    (void)resident::make_dataset(CudaSpace(0).with_resource(tiny), options, rows.features(),
                                 rows.labels());
    ADD_FAILURE() << "a stream's one-batch chunk slots past the resource's limit";
  } catch (const CapacityError& error) {
    const std::string what = error.what();
    EXPECT_NE(what.find("preload allocation of"), std::string::npos) << what;
    EXPECT_NE(what.find("chunk slots of one batch each"), std::string::npos) << what;
  }
}

// A ring refused by the resource past the capacity check is named as the ring, when the
// epoch is made.
TEST_F(CudaResource, ARingTheResourceRefusesIsNamedWhenTheEpochIsMade) {
  const Rows rows(100);
  const std::size_t data_bytes = rows.x.size() * sizeof(float) + 256;
  CountingResource limited(data_bytes + 256);
  DeviceDataset<CudaSpace, float> dataset(CudaSpace(0).with_resource(limited), options_of(10),
                                          rows.features());
  try {
    auto epoch = dataset.epoch({1, 0, Shuffle::samples});
    ADD_FAILURE() << "a ring past the resource's limit";
  } catch (const CapacityError& error) {
    EXPECT_NE(std::string(error.what()).find("the gather ring needs"), std::string::npos)
        << error.what();
  }
  auto zero_copy = dataset.epoch({1, 0, Shuffle::batches});
  EXPECT_EQ(zero_copy.size(), 10U) << "a zero-copy epoch needs no ring";
}

// A resource that says it holds more than the device has, or cannot say.
class SayingResource : public CountingResource {
 public:
  explicit SayingResource(bool throws) : throws_(throws) {}
  [[nodiscard]] std::size_t idle_bytes() const {
    if (throws_) throw std::runtime_error("the pool cannot be asked");
    return SIZE_MAX;
  }

 private:
  bool throws_;
};

TEST_F(CudaResource, WhatAResourceHoldsIsNeverCountedPastTheDevice) {
  SayingResource huge(false), failing(true);
  const resident::Capacity counted = CudaSpace(0).with_resource(huge).capacity();
  EXPECT_EQ(counted.free_bytes, counted.total_bytes);
  EXPECT_THROW((void)CudaSpace(0).with_resource(failing).capacity(), std::runtime_error);
}

// Without `==`, a resource is equal only to itself.
struct Incomparable {
  [[nodiscard]] void* allocate_async(std::size_t bytes, std::size_t alignment, StreamRef stream) {
    return CudaMallocResource{}.allocate_async(bytes, alignment, stream);
  }
  void deallocate_async(void* pointer, std::size_t bytes, std::size_t alignment, StreamRef stream) {
    CudaMallocResource{}.deallocate_async(pointer, bytes, alignment, stream);
  }
};

TEST_F(CudaResource, ABudgetIsTheCapacityEveryCopyOfTheSpaceSharesAndRefusesPastIt) {
  using namespace resident::literals;
  const CudaSpace budget = CudaSpace(0).with_budget(1_MiB);
  EXPECT_TRUE(budget.has_budget());
  EXPECT_EQ(budget.default_reserve_bytes(), 0U);
  const resident::Capacity before = budget.capacity();
  EXPECT_EQ(before.free_bytes, 1_MiB);
  EXPECT_EQ(before.total_bytes, 1_MiB);
  const std::string source = budget.capacity_report().source;
  EXPECT_NE(source.find("a budget of 1.0 MiB (0 B used)"), std::string::npos) << source;
  const CudaSpace copy = budget;  // NOLINT(performance-unnecessary-copy-initialization)
  EXPECT_EQ(copy, budget);
  EXPECT_NE(CudaSpace(0).with_budget(1_MiB), budget) << "another budget is another space";
  void* taken = copy.allocate(768_KiB);
  EXPECT_EQ(budget.used_bytes(), 768_KiB);
  EXPECT_EQ(budget.capacity().free_bytes, 256_KiB);
  try {
    (void)budget.allocate(512_KiB);
    ADD_FAILURE() << "an allocation past the budget";
  } catch (const CapacityError& error) {
    EXPECT_EQ(error.free_bytes(), 256_KiB);
    EXPECT_EQ(error.total_bytes(), 1_MiB);
    EXPECT_NE(std::string(error.what()).find("with_budget"), std::string::npos) << error.what();
  }
  EXPECT_EQ(budget.used_bytes(), 768_KiB) << "a refusal takes nothing";
  copy.deallocate(taken, 768_KiB);
  EXPECT_EQ(budget.used_bytes(), 0U);
  const Rows rows(100);
  EXPECT_FALSE(resident::plan(CudaSpace(0).with_budget(1_KiB), options_of(10), rows.features(),
                              rows.labels())
                   .fits);
}

TEST_F(CudaResource, APoolKeepsWhatADatasetFreedAndTheCapacityCountsItAsFree) {
  CudaPoolResource pool(0);
  const CudaSpace space = CudaSpace(0).with_resource(pool);
  EXPECT_TRUE(space.has_resource());
  const Rows rows(1000);
  std::size_t bytes = 0;
  {
    const DeviceDataset<CudaSpace, float, std::int32_t> dataset(space, options_of(10),
                                                                rows.features(), rows.labels());
    bytes = dataset.bytes();
    EXPECT_GE(pool.used_bytes(), bytes) << "the dataset's allocation, as the pool rounds it";
  }
  EXPECT_EQ(pool.used_bytes(), 0U) << "the dataset freed on its stream, once the stream got there";
  EXPECT_GE(pool.reserved_bytes(), bytes) << "the pool keeps what was freed";
  EXPECT_EQ(pool.idle_bytes(), pool.reserved_bytes());
  const resident::Capacity counted = space.capacity();
  const resident::Capacity device = CudaSpace(0).capacity();
  EXPECT_EQ(counted.free_bytes, device.free_bytes + pool.idle_bytes());
  pool.trim();
  EXPECT_EQ(pool.reserved_bytes(), 0U);

  const CudaPoolResource copy = pool;  // NOLINT(performance-unnecessary-copy-initialization)
  EXPECT_EQ(copy, pool) << "copies share the pool";
  EXPECT_EQ(copy.pool(), pool.pool());
  CudaPoolResource moved = std::move(pool);
  EXPECT_EQ(pool.pool(), nullptr);  // NOLINT(bugprone-use-after-move): moved from is empty
  EXPECT_THROW((void)pool.allocate_async(256, 256, StreamRef(cudaStreamPerThread)),
               resident::InvalidArgument);
  EXPECT_THROW((void)moved.allocate_async(256, 512, StreamRef(cudaStreamPerThread)),
               resident::InvalidArgument)
      << "an alignment cudaMalloc does not give";
}

#if RESIDENT_TEST_SIMULATED_CUDA
// A dataset destroyed while work on its stream still reads it: the pool takes the memory back
// when the stream reaches the free, after that work. The copy is held back by a gate until the
// dataset is gone, so that a free on another stream lands first, in every run.
TEST_F(CudaResource, APoolTakesADatasetsMemoryBackWhenItsStreamGetsThere) {
  CudaPoolResource pool(0);
  const CudaSpace space = CudaSpace(0).with_resource(pool);
  cudaStream_t stream = space.create_stream();
  DatasetOptions options = options_of(10);
  options.stream = stream;
  const Rows rows(100);
  const std::size_t bytes = rows.x.size() * sizeof(float);
  void* host = nullptr;  // page-locked: the copy reads the device when it runs
  ASSERT_EQ(cudaMallocHost(&host, bytes), cudaSuccess);
  {
    resident::testing::Gates gate(1);
    {
      const DeviceDataset<CudaSpace, float> dataset(space, options, rows.features());
      ASSERT_EQ(
          resident::testing::simcuda::enqueue(stream, [opened = gate.opened(0)] { opened.wait(); }),
          cudaSuccess);
      ASSERT_EQ(
          cudaMemcpyAsync(host, dataset.field<0>().data(), bytes, cudaMemcpyDeviceToHost, stream),
          cudaSuccess);
    }  // destroyed with the copy of its field still held back on its stream
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    gate.open(0);
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  }
  const auto* copied = static_cast<const float*>(host);
  EXPECT_EQ(std::vector<float>(copied, copied + rows.x.size()), rows.x)
      << "the pool handed the memory on before the stream's copy of it";
  EXPECT_EQ(pool.used_bytes(), 0U);
  EXPECT_EQ(cudaFreeHost(host), cudaSuccess);
  space.destroy_stream(stream);
}

// The same for a stream's chunk slots: a batch (a view of a slot) copied on the dataset's stream
// after the dataset is gone reads the rows it held. The gate opens from a thread 20 ms on,
// whether or not the dataset's destruction waits for its stream.
TEST_F(CudaResource, APoolTakesAStreamsChunkSlotsBackWhenItsStreamGetsThere) {
  CudaPoolResource pool(0);
  const CudaSpace space = CudaSpace(0).with_resource(pool);
  cudaStream_t stream = space.create_stream();
  DatasetOptions options = options_of(10);
  options.stream = stream;
  options.streaming.chunk_batches = 2;
  options.streaming.chunk_slots = 2;
  options.streaming.prefetch_chunks = 1;
  const Rows rows(100);
  const std::size_t bytes = std::size_t{10} * 8 * sizeof(float);
  void* host = nullptr;
  ASSERT_EQ(cudaMallocHost(&host, bytes), cudaSuccess);
  {
    resident::testing::Gates gate(1);
    std::thread opener;
    {
      StreamingDataset<CudaSpace, float> dataset(space, options, rows.features());
      auto epoch = dataset.epoch({0, 0, Shuffle::none});
      const auto [x] = epoch.batch(0);
      ASSERT_EQ(
          resident::testing::simcuda::enqueue(stream, [opened = gate.opened(0)] { opened.wait(); }),
          cudaSuccess);
      ASSERT_EQ(cudaMemcpyAsync(host, x.data(), bytes, cudaMemcpyDeviceToHost, stream),
                cudaSuccess);
      opener = std::thread([&gate] {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        gate.open(0);
      });
    }  // destroyed with the copy of its first batch held back on its stream
    opener.join();
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  }
  const auto* copied = static_cast<const float*>(host);
  EXPECT_EQ(std::vector<float>(copied, copied + 80),
            std::vector<float>(rows.x.begin(), rows.x.begin() + 80))
      << "the pool handed the chunk slots on before the stream's copy of them";
  EXPECT_EQ(pool.used_bytes(), 0U);
  EXPECT_EQ(cudaFreeHost(host), cudaSuccess);
  space.destroy_stream(stream);
}
#endif

// A pool given as an rvalue is kept by the space and its copies: it lives as long as they do.
TEST_F(CudaResource, ASpaceKeepsAResourceItIsGivenAsAnRvalue) {
  const Rows rows(100);
  const CudaSpace space = CudaSpace(0).with_resource(CudaPoolResource(0));
  const DeviceDataset<CudaSpace, float> dataset(space, options_of(10), rows.features());
  std::vector<float> first(8);
  dataset.space().synchronize(dataset.stream());
  ASSERT_EQ(cudaMemcpy(first.data(), dataset.field<0>().data(), 8 * sizeof(float),
                       cudaMemcpyDeviceToHost),
            cudaSuccess);
  EXPECT_EQ(first, std::vector<float>(rows.x.begin(), rows.x.begin() + 8));
}

TEST_F(CudaResource, SpacesAreEqualWhenTheirDeviceResourceAndBudgetAre) {
  CudaPoolResource pool(0);
  CountingResource counting;
  const CudaSpace plain(0);
  EXPECT_EQ(plain, CudaSpace(0));
  EXPECT_EQ(plain.with_resource(pool), plain.with_resource(pool)) << "the same pool referenced";
  EXPECT_NE(plain.with_resource(pool), plain);
  EXPECT_NE(plain.with_resource(pool), plain.with_resource(counting));
  EXPECT_EQ(plain.with_resource(CudaMallocResource{}), plain.with_resource(CudaMallocResource{}))
      << "stateless resources of one type compare equal";
  EXPECT_FALSE(plain.has_resource());
  EXPECT_FALSE(plain.has_budget());
  EXPECT_EQ(plain.with_resource(pool), plain.with_resource(CudaPoolResource(pool)))
      << "the same pool, referenced or kept";
  Incomparable first, second;
  EXPECT_EQ(plain.with_resource(first), plain.with_resource(first));
  EXPECT_NE(plain.with_resource(first), plain.with_resource(second));
}

#if RESIDENT_HAS_CUDA_MEMORY_RESOURCE
// What rmm passes everywhere, `device_async_resource_ref`, is CCCL's async_resource_ref of
// device-accessible memory: it goes to `with_resource` as it is.
TEST_F(CudaResource, ACcclResourceRefPassesStraightThrough) {
  CudaPoolResource pool(0);
  const cuda::mr::async_resource_ref<cuda::mr::device_accessible> ref{pool};
  const Rows rows(100);
  {
    const DeviceDataset<CudaSpace, float> dataset(CudaSpace(0).with_resource(ref), options_of(10),
                                                  rows.features());
    EXPECT_GE(pool.used_bytes(), dataset.bytes());
  }
  EXPECT_EQ(pool.used_bytes(), 0U);
}
#endif

}  // namespace
#endif  // RESIDENT_HAS_CUDA
