// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// The upload path: chunking, parallel copies and staging, typed over the memory spaces, and the
// parts of the upload machinery (detail/) on their own. Progress reports and cancellation, the
// API of progress.hpp, are tested in test_progress.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <functional>
#include <mutex>
#include <numeric>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "resident/detail/copy_workers.hpp"
#include "resident/detail/upload/staged_upload.hpp"
#include "resident/detail/upload/upload_plan.hpp"
#include "resident/device_dataset.hpp"
#include "resident/memory_space.hpp"
#include "support/chunked_upload.hpp"
#include "support/spaces.hpp"
#if RESIDENT_TEST_SIMULATED_CUDA
#include "support/runtime_faults.hpp"
#endif

namespace {

using resident::DatasetOptions;
using resident::DeviceDataset;
using resident::HostSpace;
using resident::HostTensor;
using resident::Progress;
using resident::testing::chunked;
using resident::testing::kChunk;
using resident::testing::pattern;
using resident::testing::read_back;
using resident::testing::used_bytes;

// The whole allocation, gaps included, as bytes.
template <class Dataset>
std::vector<std::uint8_t> allocation_bytes(const Dataset& ds) {
  const auto* base = reinterpret_cast<const std::uint8_t*>(ds.template field<0>().data());
  return read_back(ds.space(), ds.stream(),
                   resident::BatchView<const std::uint8_t>(base, ds.bytes(), resident::Shape{}));
}

template <class Space>
using Upload = resident::testing::UploadFixture<Space>;
TYPED_TEST_SUITE(Upload, resident::testing::SpaceTypes, resident::testing::SpaceName);

TYPED_TEST(Upload, ContentSurvivesEverySizeAroundTheChunk) {
  for (const std::size_t bytes :
       {std::size_t{0}, std::size_t{1}, std::size_t{255}, std::size_t{4097}, kChunk - 1, kChunk,
        kChunk + 1, 5 * kChunk + 123}) {
    SCOPED_TRACE(std::to_string(bytes) + " bytes");
    const auto source = pattern(bytes);
    const DeviceDataset<TypeParam, std::uint8_t> ds(
        this->space_, chunked(), HostTensor<const std::uint8_t>(source.data(), {bytes}));
    EXPECT_EQ(read_back(ds.space(), ds.stream(), ds.template field<0>()), source);
  }
  EXPECT_EQ(used_bytes(this->space_).value_or(0), 0u);  // where the space accounts usage
}

TYPED_TEST(Upload, ParallelCopiesOfLargeChunksAreExact) {
  const std::size_t bytes = (std::size_t{9} << 20) + 77;  // above the parallel threshold
  const auto source = pattern(bytes, 3);
  DatasetOptions options = chunked(std::size_t{1} << 20);
  options.upload_threads = 3;
  const DeviceDataset<TypeParam, std::uint8_t> ds(
      this->space_, options, HostTensor<const std::uint8_t>(source.data(), {bytes}));
  EXPECT_EQ(read_back(ds.space(), ds.stream(), ds.template field<0>()), source);
}

TYPED_TEST(Upload, SourcesAtOddAlignments) {
  const auto buffer = pattern(3 * kChunk + 64, 5);
  for (const std::size_t skew : {1, 3, 7, 63}) {
    SCOPED_TRACE("skew " + std::to_string(skew));
    const std::size_t bytes = 2 * kChunk + 11;
    const DeviceDataset<TypeParam, std::uint8_t> ds(
        this->space_, chunked(), HostTensor<const std::uint8_t>(buffer.data() + skew, {bytes}));
    const auto back = read_back(ds.space(), ds.stream(), ds.template field<0>());
    EXPECT_TRUE(std::equal(back.begin(), back.end(), buffer.begin() + static_cast<long>(skew)));
  }
}

TYPED_TEST(Upload, FieldsStraddlingChunkBoundariesAndZeroedGaps) {
  constexpr std::size_t rows = 1001;
  const auto pixels = pattern(rows * 3, 1);  // 3003 bytes: ends inside the first chunk
  std::vector<float> features(rows * 2);     // 8008 bytes: spans chunks 1 to 3
  std::iota(features.begin(), features.end(), 0.25f);
  std::vector<std::int64_t> ids(rows);  // 8008 bytes
  std::iota(ids.begin(), ids.end(), std::int64_t{-500});
  const DeviceDataset<TypeParam, std::uint8_t, float, std::int64_t> ds(
      this->space_, chunked(1000),  // a chunk size that is no power of two
      HostTensor<const std::uint8_t>(pixels.data(), {rows, 3}),
      HostTensor<const float>(features.data(), {rows, 2}),
      HostTensor<const std::int64_t>(ids.data(), {rows}));
  EXPECT_EQ(read_back(ds.space(), ds.stream(), ds.template field<0>()), pixels);
  EXPECT_EQ(read_back(ds.space(), ds.stream(), ds.template field<1>()), features);
  EXPECT_EQ(read_back(ds.space(), ds.stream(), ds.template field<2>()), ids);
  const auto whole = allocation_bytes(ds);
  for (std::size_t at = 3003; at < 3072; ++at) ASSERT_EQ(whole[at], 0u) << "gap byte " << at;
  for (std::size_t at = 3072 + 8008; at < 11264; ++at) ASSERT_EQ(whole[at], 0u) << at;
}

TYPED_TEST(Upload, ZeroChunkOrStagingIsRefused) {
  const auto source = pattern(10);
  const HostTensor<const std::uint8_t> tensor(source.data(), {10});
  DatasetOptions options = chunked(0);
  EXPECT_THROW((DeviceDataset<TypeParam, std::uint8_t>(this->space_, options, tensor)),
               resident::InvalidArgument);
  options = chunked();
  options.staging_buffers = 0;
  EXPECT_THROW((DeviceDataset<TypeParam, std::uint8_t>(this->space_, options, tensor)),
               resident::InvalidArgument);
}

// The parts of the upload machinery, on their own.

TEST(CopyWorkers, SlicesCoverTheRangeExactlyOnce) {
  for (const unsigned threads : {1u, 2u, 5u}) {
    resident::detail::CopyWorkers workers(threads);
    for (const std::size_t granule : {1, 7, 64}) {
      for (const std::size_t size : {0, 1, 2, 63, 64, 65, 1000, 100003}) {
        std::vector<std::atomic<int>> hits(size);
        workers.for_each_slice(
            0, size,
            [&hits, granule](std::size_t first, std::size_t last) {
              if (first % granule != 0) throw std::logic_error("a slice off its granule");
              for (std::size_t i = first; i < last; ++i) ++hits[i];
            },
            granule);
        for (std::size_t i = 0; i < size; ++i)
          ASSERT_EQ(hits[i].load(), 1) << "element " << i << " of " << size << ", " << threads
                                       << " threads, granule " << granule;
      }
    }
  }
}

TEST(CopyWorkers, EveryThreadTakesItsPartWhetherTheTeamSpinsOrSlept) {
  resident::detail::CopyWorkers workers(2);
  ASSERT_EQ(workers.size(), 2u);
  const auto threads_of_one_call = [&workers] {
    std::mutex mutex;
    std::set<std::thread::id> ids;
    workers.for_each_slice(0, 1000, [&](std::size_t, std::size_t) {
      const std::lock_guard<std::mutex> lock(mutex);
      ids.insert(std::this_thread::get_id());
    });
    return ids.size();
  };
  EXPECT_EQ(threads_of_one_call(), 2u);  // the worker was awake since its start, or asleep
  EXPECT_EQ(threads_of_one_call(), 2u);  // straight after: the worker still spins
  std::this_thread::sleep_for(resident::detail::CopyWorkers::spin_budget * 40);
  EXPECT_EQ(threads_of_one_call(), 2u);  // long after: the worker slept and was woken
}

TEST(CopyWorkers, ThousandsOfCallsInARowEachRunEveryPartOnce) {
  resident::detail::CopyWorkers workers(3);
  std::atomic<std::size_t> covered{0};
  constexpr std::size_t calls = 20000;
  for (std::size_t call = 0; call < calls; ++call)
    workers.for_each_slice(
        0, 300, [&](std::size_t first, std::size_t last) { covered += last - first; }, 1);
  EXPECT_EQ(covered.load(), calls * 300);
}

TEST(CopyWorkers, RethrowsWhatASliceThrew) {
  resident::detail::CopyWorkers workers(3);
  EXPECT_THROW(workers.for_each_slice(0, 3000,
                                      [](std::size_t first, std::size_t) {
                                        if (first > 0) throw std::logic_error("slice failed");
                                      }),
               std::logic_error);
  int calls = 0;  // and the team still works afterwards
  workers.for_each_slice(0, 10, [&calls](std::size_t, std::size_t) { ++calls; });
  EXPECT_GE(calls, 1);
}

TEST(UploadPlan, PartsAlternateSourcesAndGapsInOrder) {
  const std::vector<std::byte> a(10), b(5);
  resident::detail::UploadPlan plan;
  plan.parts = {{0, 10, a.data()}, {16, 5, b.data()}};
  plan.total_bytes = 21;
  std::vector<std::string> parts;
  plan.for_each_part(8, 18, [&](std::size_t at, const std::byte* source, std::size_t n) {
    const std::string what = source == nullptr ? "gap" : source == a.data() + 8 ? "a" : "b";
    parts.push_back(what + "@" + std::to_string(at) + "+" + std::to_string(n));
  });
  EXPECT_EQ(parts, (std::vector<std::string>{"a@8+2", "gap@10+6", "b@16+2"}));
}

// A staging transport that runs a transfer only when it must (at the wait for its buffer, or
// at the end), as late as a copy engine ever could: a buffer refilled while its transfer is
// still pending corrupts the result.
class DeferredTransport {
 public:
  DeferredTransport(std::size_t ring, std::size_t bytes, bool honours_waits)
      : buffers_(ring, std::vector<std::byte>(bytes)), honours_waits_(honours_waits) {}

  [[nodiscard]] std::size_t buffer_count() const { return buffers_.size(); }
  [[nodiscard]] std::byte* buffer(std::size_t slot) { return buffers_[slot].data(); }
  void wait_until_free(std::size_t slot) {
    ++waits;
    if (!honours_waits_) return;
    std::size_t through = pending_.size();
    for (std::size_t i = 0; i < pending_.size(); ++i)
      if (pending_[i].slot == slot) through = i + 1;
    run(through);
  }
  void transfer(std::size_t slot, std::byte* destination, std::size_t bytes) {
    pending_.push_back({slot, destination, bytes});
  }
  void finish() { run(pending_.size()); }

  std::size_t waits = 0;

 private:
  struct Pending {
    std::size_t slot;
    std::byte* destination;
    std::size_t bytes;
  };
  void run(std::size_t count) {  // in stream order, like one copy engine
    for (std::size_t i = 0; i < count && i < pending_.size(); ++i)
      std::memcpy(pending_[i].destination, buffers_[pending_[i].slot].data(), pending_[i].bytes);
    pending_.erase(pending_.begin(),
                   pending_.begin() + static_cast<long>(std::min(count, pending_.size())));
  }

  std::vector<std::vector<std::byte>> buffers_;
  std::vector<Pending> pending_;
  bool honours_waits_;
};

struct StagedCase {
  std::vector<std::uint8_t> a = pattern(3000, 1), b = pattern(7001, 2), c = pattern(1234, 3);
  resident::detail::UploadPlan plan;
  std::vector<std::byte> expected;
  StagedCase() {
    const auto bytes = [](const std::vector<std::uint8_t>& v) {
      return reinterpret_cast<const std::byte*>(v.data());
    };
    plan.parts = {{0, a.size(), bytes(a)}, {3072, b.size(), bytes(b)}, {10240, c.size(), bytes(c)}};
    plan.total_bytes = 10240 + c.size();
    expected.resize(plan.total_bytes);
    plan.for_each_part(0, plan.total_bytes,
                       [&](std::size_t at, const std::byte* from, std::size_t n) {
                         if (from != nullptr) std::memcpy(expected.data() + at, from, n);
                       });
  }
  // `on_progress` is called with the destination as it is at each report.
  std::vector<std::byte> run(DeferredTransport& transport, std::size_t chunk,
                             const std::function<void(const std::vector<std::byte>&,
                                                      const Progress&)>& on_progress = {}) const {
    std::vector<std::byte> destination(plan.total_bytes, std::byte{0xee});
    resident::ProgressCallback callback;
    if (on_progress)
      callback = [&](const Progress& progress) {
        on_progress(destination, progress);
        return true;
      };
    resident::detail::staged_upload(transport, destination.data(), plan, chunk, 2,
                                    resident::detail::ProgressReporter(callback, plan.total_bytes));
    return destination;
  }
};

TEST(StagedUpload, NeverRefillsABufferWhoseTransferIsPending) {
  const StagedCase staged;
  for (const std::size_t ring : {1, 2, 3, 5}) {
    for (const std::size_t chunk : {512, 1000, 4096, 20000}) {
      SCOPED_TRACE("ring " + std::to_string(ring) + ", chunk " + std::to_string(chunk));
      DeferredTransport transport(ring, chunk, true);
      EXPECT_EQ(staged.run(transport, chunk), staged.expected);
      const std::size_t chunks = resident::detail::ceil_div(staged.plan.total_bytes, chunk);
      EXPECT_EQ(transport.waits, chunks > ring ? chunks - ring : 0);
    }
  }
}

// Progress counts bytes that have landed: at each report, the destination already holds the
// reported bytes, however late the transport runs its transfers.
TEST(StagedUpload, ProgressReportsOnlyBytesWhoseTransferCompleted) {
  const StagedCase staged;
  for (const std::size_t ring : {1, 2, 3, 5}) {
    for (const std::size_t chunk : {512, 1000, 4096}) {
      SCOPED_TRACE("ring " + std::to_string(ring) + ", chunk " + std::to_string(chunk));
      DeferredTransport transport(ring, chunk, true);
      std::vector<std::size_t> reported;
      staged.run(transport, chunk,
                 [&](const std::vector<std::byte>& destination, const Progress& progress) {
                   ASSERT_LE(progress.bytes_done, destination.size());
                   for (std::size_t at = 0; at < progress.bytes_done; ++at)
                     ASSERT_EQ(destination[at], staged.expected[at])
                         << "byte " << at << " reported done before it landed";
                   reported.push_back(progress.bytes_done);
                 });
      const std::size_t chunks = resident::detail::ceil_div(staged.plan.total_bytes, chunk);
      ASSERT_EQ(reported.size(), chunks - 1);  // one per chunk; the total is the caller's
      for (std::size_t i = 0; i < reported.size(); ++i) EXPECT_EQ(reported[i], (i + 1) * chunk);
    }
  }
}

TEST(StagedUpload, TheDeferredTransportCatchesAMissingWait) {
  const StagedCase staged;
  DeferredTransport transport(2, 1000, false);  // refills buffers without waiting
  EXPECT_NE(staged.run(transport, 1000), staged.expected);
}

#if RESIDENT_HAS_CUDA
using resident::CudaSpace;

class CudaUpload : public ::testing::Test {
 protected:
  void SetUp() override { resident::testing::skip_unless_usable<CudaSpace>(); }
};

TEST_F(CudaUpload, BorrowedStreamIsUsedAndLeftAlive) {
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  const auto source = pattern(3 * kChunk);
  {
    DatasetOptions options = chunked();
    options.stream = stream;
    const DeviceDataset<CudaSpace, std::uint8_t> ds(
        CudaSpace{0}, options, HostTensor<const std::uint8_t>(source.data(), {source.size()}));
    EXPECT_EQ(ds.stream(), stream);
    EXPECT_EQ(read_back(ds.space(), ds.stream(), ds.field<0>()), source);
  }
  EXPECT_EQ(cudaStreamQuery(stream), cudaSuccess);  // not destroyed with the dataset
  EXPECT_EQ(cudaStreamDestroy(stream), cudaSuccess);
}

TEST_F(CudaUpload, PinnedSourcesAreCopiedDirectly) {
  const auto expected = pattern(5 * kChunk + 17, 4);
  const resident::testing::PinnedCopy pinned(expected);
  const DeviceDataset<CudaSpace, std::uint8_t> ds(
      CudaSpace{0}, chunked(), HostTensor<const std::uint8_t>(pinned.data(), {expected.size()}));
  EXPECT_EQ(read_back(ds.space(), ds.stream(), ds.field<0>()), expected);
}

// Fields of page-locked sources are copied directly, and the gaps between them (each field
// starts 256-byte aligned) are zeroed on the device as the staged upload zeroes them: fresh
// device memory holds whatever was there.
TEST_F(CudaUpload, PinnedFieldsAreCopiedDirectlyAndTheGapsBetweenThemZeroed) {
  constexpr std::size_t rows = 1001;
  const auto pixels = pattern(rows * 3, 1);  // 3003 bytes, then a gap to 3072
  std::vector<std::int64_t> ids(rows);
  std::iota(ids.begin(), ids.end(), std::int64_t{-500});
  void* pinned = nullptr;
  ASSERT_EQ(cudaMallocHost(&pinned, 3072 + ids.size() * sizeof(std::int64_t)), cudaSuccess);
  auto* pinned_pixels = static_cast<std::uint8_t*>(pinned);
  auto* pinned_ids = reinterpret_cast<std::int64_t*>(pinned_pixels + 3072);  // NOLINT: typed
  std::memcpy(pinned_pixels, pixels.data(), pixels.size());
  std::memcpy(pinned_ids, ids.data(), ids.size() * sizeof(std::int64_t));
  {
#if RESIDENT_TEST_SIMULATED_CUDA
    // A staged upload page-locks its staging buffers; a direct one has none to make.
    const resident::testing::FailingCall staging("cudaMallocHost", cudaErrorMemoryAllocation);
#endif
    const DeviceDataset<CudaSpace, std::uint8_t, std::int64_t> ds(
        CudaSpace{0}, chunked(1000), HostTensor<const std::uint8_t>(pinned_pixels, {rows, 3}),
        HostTensor<const std::int64_t>(pinned_ids, {rows}));
#if RESIDENT_TEST_SIMULATED_CUDA
    EXPECT_FALSE(staging.fired()) << "page-locked sources were staged";
#endif
    EXPECT_EQ(read_back(ds.space(), ds.stream(), ds.field<0>()), pixels);
    EXPECT_EQ(read_back(ds.space(), ds.stream(), ds.field<1>()), ids);
    const auto whole = allocation_bytes(ds);
    for (std::size_t at = 3003; at < 3072; ++at) ASSERT_EQ(whole[at], 0u) << "gap byte " << at;
    for (std::size_t at = 3072 + 8008; at < whole.size(); ++at) ASSERT_EQ(whole[at], 0u) << at;
  }
  EXPECT_EQ(cudaFreeHost(pinned), cudaSuccess);
}

#if RESIDENT_TEST_SIMULATED_CUDA
// Old drivers report pageable memory as an error of cudaPointerGetAttributes: a query that
// fails means pageable memory (the upload is staged, and right), and the error is cleared
// rather than left for an unrelated later call to report.
TEST_F(CudaUpload, APointerQueryThatFailsMeansPageableMemoryAndLeavesNoError) {
  const auto expected = pattern(3 * kChunk + 5, 6);
  const resident::testing::PinnedCopy pinned(expected);
  {
    const resident::testing::FailingCall query("cudaPointerGetAttributes", cudaErrorInvalidValue);
    const DeviceDataset<CudaSpace, std::uint8_t> ds(
        CudaSpace{0}, chunked(), HostTensor<const std::uint8_t>(pinned.data(), {expected.size()}));
    EXPECT_TRUE(query.fired());
    EXPECT_EQ(cudaGetLastError(), cudaSuccess);
    EXPECT_EQ(read_back(ds.space(), ds.stream(), ds.field<0>()), expected);
  }
}
#endif
#endif

}  // namespace
