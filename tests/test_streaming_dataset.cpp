// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <numeric>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "resident/device_dataset.hpp"
#include "resident/npy.hpp"
#include "resident/streaming_dataset.hpp"
#include "support/data_file.hpp"
#include "support/spaces.hpp"
#include "support/temp_npy.hpp"

namespace {

namespace npy = resident::npy;
using resident::CapacityError;
using resident::DatasetOptions;
using resident::DeviceDataset;
using resident::FormatError;
using resident::HostSpace;
using resident::HostTensor;
using resident::InvalidArgument;
using resident::Remainder;
using resident::Shape;
using resident::Shard;
using resident::Sharding;
using resident::Shuffle;
using resident::StreamingDataset;
using resident::testing::read_back;
using resident::testing::TempNpy;

// Window order: these cases test the chunking and the files read chunk by chunk (the
// whole-epoch order, the preloaded batches, is the composition test's).
DatasetOptions stream_options(std::size_t batch, Remainder remainder, std::size_t chunk_batches,
                              std::size_t ring = 3, std::size_t prefetch = 2) {
  DatasetOptions options;
  options.streaming.order = resident::StreamOrder::window;
  options.batch_size = batch;
  options.remainder = remainder;
  options.reserve_bytes = 0;
  options.streaming.chunk_batches = chunk_batches;
  options.streaming.chunk_slots = ring;
  options.streaming.prefetch_chunks = prefetch;
  return options;
}

/// Row r of the row-id field holds r; row r of the feature field holds 3 values from r.
struct Data {
  explicit Data(std::size_t n) : ids(n), features(n * 3) {
    std::iota(ids.begin(), ids.end(), std::int64_t{0});
    std::iota(features.begin(), features.end(), 0.0f);
  }
  [[nodiscard]] HostTensor<const std::int64_t> id_tensor() const {
    return {ids.data(), {ids.size()}};
  }
  [[nodiscard]] HostTensor<const float> feature_tensor() const {
    return {features.data(), {ids.size(), 3}};
  }
  std::vector<std::int64_t> ids;
  std::vector<float> features;
};

template <class Space>
using TypedStreaming = resident::testing::OverSpaces<Space>;
TYPED_TEST_SUITE(TypedStreaming, resident::testing::SpaceTypes, resident::testing::SpaceName);

/// The space a case of the sweep below streams into.
enum class SweepSpace { host, cuda, cuda_host_pinned };

/// One case of the sweep below: a dataset (its rows, batch size and remainder policy, and the
/// batches of each streamed chunk) in one space; the case runs every rank of every world size
/// and sharding mode.
struct SweepCase {
  SweepSpace space;
  std::size_t rows;
  std::size_t batch;
  Remainder remainder;
  std::size_t chunk;
};

/// Every dataset of the sweep in `space`: 6 row counts x 4 batch sizes x 3 policies x 3 chunk
/// sizes.
std::vector<SweepCase> sweep_cases(SweepSpace space) {
  std::vector<SweepCase> cases;
  for (const std::size_t n : {0, 1, 5, 31, 97, 256})
    for (const std::size_t batch : {1, 7, 32, 300})
      for (const Remainder remainder : {Remainder::drop, Remainder::partial, Remainder::pad})
        for (const std::size_t chunk : {1, 2, 5})
          cases.push_back({space, n, batch, remainder, chunk});
  return cases;
}

/// "rows97_batch7_pad_chunk5" (the instantiation, HostSpace, CudaSpace or CudaHostPinnedSpace,
/// names the space).
std::string sweep_case_name(const SweepCase& c) {
  return "rows" + std::to_string(c.rows) + "_batch" + std::to_string(c.batch) + "_" +
         resident::remainder_name(c.remainder) + "_chunk" + std::to_string(c.chunk);
}

/// What gtest prints for a case's parameter.
void PrintTo(const SweepCase& c, std::ostream* out) {
  constexpr const char* names[] = {"HostSpace ", "CudaSpace ", "CudaHostPinnedSpace "};
  *out << names[static_cast<int>(c.space)] << sweep_case_name(c);
}

/// Skips, with the reason, a case whose space is not usable here (fails it under
/// RESIDENT_REQUIRE_CUDA), as the typed tests over `resident::testing::SpaceTypes` do.
class StreamingSweep : public ::testing::TestWithParam<SweepCase> {
 protected:
  void SetUp() override {
#if RESIDENT_HAS_CUDA
    if (GetParam().space == SweepSpace::cuda)
      resident::testing::skip_unless_usable<resident::CudaSpace>();
    if (GetParam().space == SweepSpace::cuda_host_pinned)
      resident::testing::skip_unless_usable<resident::CudaHostPinnedSpace>();
#endif
  }
};

// Under Shuffle::none a streamed batch is the preloaded batch, byte for byte, for every row
// count, batch size, remainder policy, chunk size and rank of either sharding mode.
template <class Space>
void expect_unshuffled_batches_equal_the_device_dataset(const Space& space, const SweepCase& c) {
  const std::size_t n = c.rows, batch = c.batch, chunk = c.chunk;
  const Remainder remainder = c.remainder;
  const Data data(n);
  for (const int world : {1, 3}) {
    for (const Sharding sharding : {Sharding::partitioned, Sharding::replicated}) {
      for (int rank = 0; rank < world; ++rank) {
        SCOPED_TRACE("n " + std::to_string(n) + ", batch " + std::to_string(batch) + ", " +
                     resident::remainder_name(remainder) + ", rank " + std::to_string(rank) + "/" +
                     std::to_string(world) + " " + resident::sharding_name(sharding) + ", chunk " +
                     std::to_string(chunk));
        DatasetOptions options = stream_options(batch, remainder, chunk);
        options.shard = Shard{rank, world, 0};
        options.sharding = sharding;
        DeviceDataset<HostSpace, std::int64_t, float> preloaded(
            HostSpace{}, options, data.id_tensor(), data.feature_tensor());
        StreamingDataset<Space, std::int64_t, float> streamed(space, options, data.id_tensor(),
                                                              data.feature_tensor());
        ASSERT_EQ(streamed.num_batches(), preloaded.num_batches());
        ASSERT_EQ(streamed.num_rows(), preloaded.num_rows());
        auto epoch = streamed.epoch({5, 2, Shuffle::none});
        for (std::size_t k = 0; k < streamed.num_batches(); ++k) {
          const auto [ids, features] = epoch.batch(k);
          const auto [expected_ids, expected_features] = preloaded.batch(k);
          ASSERT_EQ(ids.rows(), expected_ids.rows());
          ASSERT_EQ(ids.valid_rows(), expected_ids.valid_rows());
          ASSERT_EQ(features.row_shape(), expected_features.row_shape());
          const auto got_ids = read_back(streamed.space(), streamed.stream(), ids);
          const auto got_features = read_back(streamed.space(), streamed.stream(), features);
          ASSERT_TRUE(std::equal(got_ids.begin(), got_ids.end(), expected_ids.data()));
          ASSERT_TRUE(
              std::equal(got_features.begin(), got_features.end(), expected_features.data()));
        }
      }
    }
  }
}

TEST_P(StreamingSweep, UnshuffledBatchesEqualTheDeviceDatasetByteForByte) {
#if RESIDENT_HAS_CUDA
  if (GetParam().space == SweepSpace::cuda) {
    expect_unshuffled_batches_equal_the_device_dataset(resident::CudaSpace{}, GetParam());
    return;
  }
  if (GetParam().space == SweepSpace::cuda_host_pinned) {
    expect_unshuffled_batches_equal_the_device_dataset(resident::CudaHostPinnedSpace{}, GetParam());
    return;
  }
#endif
  expect_unshuffled_batches_equal_the_device_dataset(HostSpace{}, GetParam());
}

const auto sweep_name = [](const ::testing::TestParamInfo<SweepCase>& info) {
  return sweep_case_name(info.param);
};
INSTANTIATE_TEST_SUITE_P(HostSpace, StreamingSweep,
                         ::testing::ValuesIn(sweep_cases(SweepSpace::host)), sweep_name);
#if RESIDENT_HAS_CUDA
INSTANTIATE_TEST_SUITE_P(CudaSpace, StreamingSweep,
                         ::testing::ValuesIn(sweep_cases(SweepSpace::cuda)), sweep_name);
INSTANTIATE_TEST_SUITE_P(CudaHostPinnedSpace, StreamingSweep,
                         ::testing::ValuesIn(sweep_cases(SweepSpace::cuda_host_pinned)),
                         sweep_name);
#endif

// A shuffled epoch over a space smaller than the data visits every row exactly once; the
// same seed and epoch give the same order, another epoch another order.
TYPED_TEST(TypedStreaming, ShuffledEpochsVisitEveryRowOnceAndReproduce) {
  constexpr std::size_t n = 1000;
  const Data data(n);
  const auto ids = data.id_tensor();
  for (const Shuffle shuffle : {Shuffle::batches, Shuffle::samples}) {
    // A sample shuffle gathers: on a device space, only where nvcc compiled the test.
    if (shuffle == Shuffle::samples && !resident::testing::gathers_here<TypeParam>) continue;
    StreamingDataset<TypeParam, std::int64_t> ds(this->space_,
                                                 stream_options(16, Remainder::partial, 4), ids);
    const auto record = [&](std::uint64_t epoch) {
      std::vector<std::int64_t> order;
      for (auto [batch] : ds.epoch({42, epoch, shuffle})) {
        const auto values = read_back(ds.space(), ds.stream(), batch);
        order.insert(order.end(), values.begin(), values.begin() + batch.valid_rows());
      }
      return order;
    };
    const auto first = record(0);
    ASSERT_EQ(first.size(), n);
    std::vector<std::int64_t> sorted = first;
    std::sort(sorted.begin(), sorted.end());
    for (std::size_t row = 0; row < n; ++row) ASSERT_EQ(sorted[row], std::int64_t(row));
    EXPECT_EQ(record(0), first) << "same seed and epoch, same order";
    EXPECT_NE(record(1), first) << "another epoch, another order";
    EXPECT_FALSE(std::is_sorted(first.begin(), first.end()));
  }
}

// A reader that copies while it waits (the default) or not: the same batches, from memory
// and from a file.
TYPED_TEST(TypedStreaming, ReaderCopiesOnOrOffServesTheSameBatches) {
  const Data data(2000);
  const TempNpy features("reader_copies_features", data.features, {2000, 3});
  std::vector<std::vector<float>> seen[2];
  for (const bool reader_copies : {true, false}) {
    DatasetOptions options = stream_options(8, Remainder::pad, 3);
    options.streaming.reader_copies = reader_copies;
    StreamingDataset<TypeParam, float> from_memory(this->space_, options, data.feature_tensor());
    auto from_file =
        resident::load_streaming_dataset<TypeParam, float>(this->space_, options, features.path);
    for (auto* ds : {&from_memory, &from_file})
      for (auto [batch] : ds->epoch({9, 4, Shuffle::batches}))
        seen[reader_copies].push_back(read_back(ds->space(), ds->stream(), batch));
  }
  ASSERT_EQ(seen[0].size(), seen[1].size());
  for (std::size_t k = 0; k < seen[0].size(); ++k) ASSERT_EQ(seen[0][k], seen[1][k]) << k;
}

TYPED_TEST(TypedStreaming, RandomAccessAndBackwardJumpsServeTheRightBatch) {
  const Data data(500);
  StreamingDataset<TypeParam, std::int64_t> ds(this->space_, stream_options(10, Remainder::drop, 3),
                                               data.id_tensor());
  for (const std::size_t index : {0, 49, 13, 14, 2, 30, 29, 0}) {
    const auto [batch] = ds.batch(index);
    const auto values = read_back(ds.space(), ds.stream(), batch);
    ASSERT_EQ(values.front(), std::int64_t(index * 10)) << "batch " << index;
  }
  EXPECT_THROW((void)ds.batch(50), std::out_of_range);
}

TYPED_TEST(TypedStreaming, MovedFromIsEmptyAndTheMovedToStreamsOn) {
  const Data data(300);
  StreamingDataset<TypeParam, std::int64_t> ds(this->space_, stream_options(10, Remainder::drop, 2),
                                               data.id_tensor());
  (void)ds.batch(5);  // a pass is running
  StreamingDataset<TypeParam, std::int64_t> moved(std::move(ds));
  EXPECT_EQ(ds.num_batches(), 0u);  // NOLINT(bugprone-use-after-move): documented as empty
  EXPECT_EQ(ds.bytes(), 0u);
  EXPECT_THROW((void)ds.batch(0), std::out_of_range);
  for (std::size_t index = 0; index < moved.num_batches(); ++index) {
    const auto [batch] = moved.batch(index);
    ASSERT_EQ(read_back(moved.space(), moved.stream(), batch).front(), std::int64_t(index * 10));
  }
}

// `wait(k, stream)` and `release(k, stream)` order a stream for the chunk the reader holds,
// and refuse, naming the batch and why, every other: not asked for yet, moved past, or a pass
// of another epoch running. The consumer is the dataset's own stream, which every space has.
TYPED_TEST(TypedStreaming, WaitAndReleaseOrderTheHeldChunkAndRefuseAnyOther) {
  const Data data(100);
  StreamingDataset<TypeParam, std::int64_t> ds(this->space_, stream_options(10, Remainder::drop, 2),
                                               data.id_tensor());
  const auto consumer = ds.stream();
  const auto message_of = [](auto&& call) {
    try {
      call();
    } catch (const resident::Error& error) {
      return std::string(error.what());
    }
    return std::string("no error");
  };
  auto epoch = ds.epoch();
  EXPECT_NE(message_of([&] { epoch.wait(0, consumer); }).find("no batch of this epoch"),
            std::string::npos);
  const auto [first] = epoch.batch(0);
  EXPECT_NO_THROW(epoch.wait(0, consumer));
  EXPECT_EQ(read_back(ds.space(), consumer, first).front(), 0);
  EXPECT_NO_THROW(epoch.release(0, consumer));
  EXPECT_NO_THROW(epoch.wait(1, consumer));  // batch 1 is in batch 0's chunk
  const std::string ahead = message_of([&] { epoch.wait(2, consumer); });
  EXPECT_NE(ahead.find("wait(2, stream)"), std::string::npos) << ahead;
  EXPECT_NE(ahead.find("not asked for yet"), std::string::npos) << ahead;
  const auto [third] = epoch.batch(2);
  EXPECT_NO_THROW(epoch.wait(2, consumer));
  EXPECT_EQ(read_back(ds.space(), consumer, third).front(), 20);
  EXPECT_NO_THROW(epoch.release(2, consumer));
  const std::string behind = message_of([&] { epoch.release(0, consumer); });
  EXPECT_NE(behind.find("release(0, stream)"), std::string::npos) << behind;
  EXPECT_NE(behind.find("moved on to a later chunk"), std::string::npos) << behind;
  EXPECT_THROW(epoch.wait(epoch.size(), consumer), std::out_of_range);
  // Another epoch streams through chunk slots of its own: this one still holds its chunk.
  auto other = ds.epoch({1, 0, Shuffle::batches});
  (void)other.batch(0);
  EXPECT_NO_THROW(epoch.wait(2, consumer));
  EXPECT_EQ(read_back(ds.space(), consumer, third).front(), 20);
  EXPECT_NO_THROW(other.wait(0, consumer));
  StreamingDataset<TypeParam, std::int64_t> moved(std::move(ds));
  EXPECT_THROW(other.wait(0, consumer), resident::Error);
}

TEST(StreamingDataset, MemoryNeverExceedsTheBudgetAndIsReturned) {
  const Data data(10000);  // 80 KB of ids, 120 KB of features
  const HostSpace space = HostSpace::with_budget(48 << 10);
  {
    const DatasetOptions options = stream_options(64, Remainder::partial, 0);  // automatic chunks
    using Preloaded = DeviceDataset<HostSpace, std::int64_t, float>;
    EXPECT_THROW(Preloaded(space, options, data.id_tensor(), data.feature_tensor()), CapacityError);
    StreamingDataset<HostSpace, std::int64_t, float> ds(space, options, data.id_tensor(),
                                                        data.feature_tensor());
    EXPECT_LE(ds.bytes(), space.capacity().total_bytes);
    EXPECT_GT(ds.num_chunks(), 1u);
    std::size_t peak = 0, rows = 0;
    for (auto [ids, features] : ds.epoch({1, 0, Shuffle::batches})) {
      peak = std::max(peak, space.used_bytes());
      rows += ids.valid_rows();
      ASSERT_EQ(features.data()[0], 3.0f * static_cast<float>(ids.data()[0]));
    }
    EXPECT_EQ(rows, 10000u);
    EXPECT_LE(peak, std::size_t{48} << 10);
    EXPECT_EQ(peak, ds.bytes() + ds.ring_bytes())
        << "the chunk slots and the gather ring are all it allocates, both when it is made";
    EXPECT_EQ(ds.ring_bytes(), ds.planned_ring_bytes());
  }
  EXPECT_EQ(space.used_bytes(), 0u);
}

// An empty tensor may have a null pointer: its rows are in host memory all the same, so it
// streams in whole-epoch order (it was taken for a file and refused under whole_epoch).
TEST(StreamingDataset, AnEmptyTensorWithANullPointerStreamsInWholeEpochOrder) {
  const HostTensor<const float> empty(nullptr, {0, 4});
  for (const resident::StreamOrder order :
       {resident::StreamOrder::automatic, resident::StreamOrder::whole_epoch}) {
    DatasetOptions options = stream_options(4, Remainder::partial, 0);
    options.streaming.order = order;
    StreamingDataset<HostSpace, float> ds(HostSpace::with_budget(1 << 20), options, empty);
    EXPECT_EQ(ds.order(), resident::StreamOrder::whole_epoch);
    EXPECT_EQ(ds.num_batches(), 0u);
    EXPECT_EQ(ds.epoch({1, 0, Shuffle::samples}).size(), 0u);
  }
}

#if defined(__linux__)
/// The /proc/self/smaps entry of the mapping that holds `address` (the tests ask for the
/// middle of the rows: where a mapping is split, that is the part advised).
struct Mapping {
  std::uintptr_t first = 0, last = 0;
  std::size_t rss_kib = 0, large_page_kib = 0;
  std::string flags;
};
Mapping mapping_of(const void* address) {
  std::ifstream smaps("/proc/self/smaps");
  const auto at = reinterpret_cast<std::uintptr_t>(address);
  Mapping found, current;
  for (std::string line; std::getline(smaps, line);) {
    std::uintptr_t first = 0, last = 0;
    std::size_t kib = 0;
    char name[64] = {};
    if (std::sscanf(line.c_str(), "%lx-%lx ", &first, &last) == 2 &&
        line.find('-') < line.find(' ')) {
      current = Mapping{first, last, 0, 0, ""};
    } else if (std::sscanf(line.c_str(), "%63[^:]: %zu kB", name, &kib) == 2) {
      if (std::string(name) == "Rss") current.rss_kib = kib;
      if (std::string(name) == "AnonHugePages") current.large_page_kib = kib;
    } else if (line.rfind("VmFlags:", 0) == 0) {
      current.flags = line;
      if (current.first <= at && at < current.last) found = current;
    }
  }
  return found;
}

/// Anonymous memory of `bytes` for the rows, mapped apart (a mapping of its own in smaps).
struct MappedRows {
  explicit MappedRows(std::size_t size) : bytes(size) {
    memory = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  }
  ~MappedRows() {
    if (memory != MAP_FAILED) ::munmap(memory, bytes);
  }
  MappedRows(const MappedRows&) = delete;
  MappedRows& operator=(const MappedRows&) = delete;
  [[nodiscard]] float* floats() const { return static_cast<float*>(memory); }
  [[nodiscard]] const std::byte* at(std::size_t offset) const {
    return static_cast<const std::byte*>(memory) + offset;
  }
  std::size_t bytes;
  void* memory;
};

/// Why large pages cannot be had here, or nothing: the kernel collapses a mapping of ours.
std::optional<std::string> no_large_pages() {
  const MappedRows probe(std::size_t{4} << 20);
  if (probe.memory == MAP_FAILED) return "mmap failed";
  std::memset(probe.memory, 1, probe.bytes);
  constexpr std::size_t large = std::size_t{2} << 20;
  const auto start = reinterpret_cast<std::uintptr_t>(probe.memory);
  const std::size_t to_aligned = (large - start % large) % large;
  if (::madvise(static_cast<std::byte*>(probe.memory) + to_aligned, large, 25) != 0)
    return std::string("MADV_COLLAPSE refused here: ") + std::strerror(errno);
  return std::nullopt;
}

// Every whole-epoch epoch reads the rows in its own random order, which on small pages costs a
// TLB miss per row: the stream asks for large pages under the caller's rows (the contents stay
// as they were), unless told not to, and never in window order, whose reads are sequential.
TEST(StreamingDataset, WholeEpochOrderCollapsesTheRowsIntoLargePagesUnlessToldNot) {
  if (const auto why = no_large_pages()) GTEST_SKIP() << *why;
  struct Case {
    resident::StreamOrder order;
    bool large_pages;
    bool collapsed;
  };
  for (const Case& c : {Case{resident::StreamOrder::whole_epoch, true, true},
                        Case{resident::StreamOrder::whole_epoch, false, false},
                        Case{resident::StreamOrder::window, true, false}}) {
    SCOPED_TRACE(std::string(c.order == resident::StreamOrder::window ? "window" : "whole epoch") +
                 (c.large_pages ? ", large_pages" : ", large_pages = false"));
    const MappedRows mapped(std::size_t{4} << 20);  // a whole 2 MiB page lies within
    ASSERT_NE(mapped.memory, MAP_FAILED);
    constexpr std::size_t width = 1024;  // 4 KiB rows: few rows, a quick epoch
    const std::size_t n = mapped.bytes / sizeof(float) / width;
    std::iota(mapped.floats(), mapped.floats() + n * width, 0.0f);
    const Mapping before = mapping_of(mapped.at(mapped.bytes / 2));
    ASSERT_EQ(before.large_page_kib, 0u);
    DatasetOptions options = stream_options(16, Remainder::partial, 0);
    options.streaming.order = c.order;
    options.streaming.large_pages = c.large_pages;
    const HostTensor<const float> tensor(mapped.floats(), {n, width});
    StreamingDataset<HostSpace, float> ds(HostSpace::with_budget(mapped.bytes / 4), options,
                                          tensor);
    const Mapping after = mapping_of(mapped.at(mapped.bytes / 2));
    EXPECT_EQ(after.large_page_kib != 0, c.collapsed) << after.large_page_kib << " KiB";
    // No flag is set on the caller's mapping (so it is not split either).
    EXPECT_EQ(after.flags, before.flags);
    // The rows are what they were, and the epochs serve them.
    EXPECT_EQ(mapped.floats()[n * width - 1], static_cast<float>(n * width - 1));
    std::size_t served = 0;
    for (const auto& batch : ds.epoch({5, 0, Shuffle::samples}))
      served += std::get<0>(batch).rows();
    EXPECT_EQ(served, n);
  }
}

// The advice never overrides the caller's: rows the caller keeps off large pages
// (MADV_NOHUGEPAGE) stay so; rows never written (a sparse mapping) are not filled in, so the
// memory they take does not grow; and a rank asks only for the rows it reads.
TEST(StreamingDataset, LargePagesAreAskedOnlyWhereTheyCostTheCallerNothing) {
  if (const auto why = no_large_pages()) GTEST_SKIP() << *why;
  constexpr std::size_t width = 1024;
  {
    const MappedRows mapped(std::size_t{8} << 20);
    ASSERT_NE(mapped.memory, MAP_FAILED);
    ASSERT_EQ(::madvise(mapped.memory, mapped.bytes, MADV_NOHUGEPAGE), 0);
    std::iota(mapped.floats(), mapped.floats() + mapped.bytes / sizeof(float), 0.0f);
    const Mapping before = mapping_of(mapped.at(mapped.bytes / 2));
    const HostTensor<const float> tensor(mapped.floats(), {mapped.bytes / 4 / width, width});
    DatasetOptions options = stream_options(16, Remainder::partial, 0);
    options.streaming.order = resident::StreamOrder::whole_epoch;
    const StreamingDataset<HostSpace, float> ds(HostSpace::with_budget(mapped.bytes / 4), options,
                                                tensor);
    const Mapping after = mapping_of(mapped.at(mapped.bytes / 2));
    EXPECT_EQ(after.large_page_kib, 0u) << "MADV_NOHUGEPAGE overridden";
    EXPECT_EQ(after.flags, before.flags);
  }
  {
    const MappedRows mapped(std::size_t{16} << 20);
    ASSERT_NE(mapped.memory, MAP_FAILED);
    for (std::size_t at = 0; at < mapped.bytes; at += std::size_t{2} << 20)
      mapped.floats()[at / sizeof(float)] = 1.0f;  // one small page written per large page
    const Mapping before = mapping_of(mapped.at(mapped.bytes / 2));
    const HostTensor<const float> tensor(mapped.floats(), {mapped.bytes / 4 / width, width});
    DatasetOptions options = stream_options(16, Remainder::partial, 0);
    options.streaming.order = resident::StreamOrder::whole_epoch;
    const StreamingDataset<HostSpace, float> ds(HostSpace::with_budget(mapped.bytes / 4), options,
                                                tensor);
    EXPECT_EQ(mapping_of(mapped.at(mapped.bytes / 2)).rss_kib, before.rss_kib)
        << "sparse rows filled in";
  }
  {
    const MappedRows mapped(std::size_t{16} << 20);
    ASSERT_NE(mapped.memory, MAP_FAILED);
    std::iota(mapped.floats(), mapped.floats() + mapped.bytes / sizeof(float), 0.0f);
    const HostTensor<const float> tensor(mapped.floats(), {mapped.bytes / 4 / width, width});
    DatasetOptions options = stream_options(16, Remainder::partial, 0);
    options.streaming.order = resident::StreamOrder::whole_epoch;
    options.shard = {1, 2, 1};            // the second half of the rows
    options.streaming.chunk_batches = 4;  // a sharded job names its chunks
    const StreamingDataset<HostSpace, float> ds(HostSpace::with_budget(mapped.bytes / 4), options,
                                                tensor);
    const Mapping after = mapping_of(mapped.at(mapped.bytes / 2));
    EXPECT_GT(after.large_page_kib, 0u);
    EXPECT_LE(after.large_page_kib, mapped.bytes / 2 / 1024) << "rows of the other rank collapsed";
  }
}
#endif

/// Host memory whose gathers a device would run (as `CudaSpace`'s): its whole-epoch
/// `Shuffle::samples` batches are views of chunk slots that the producer gathered the epoch's
/// rows into, which host code can check here.
class SlotViewingHostSpace : public HostSpace {
 public:
  using memory_space = SlotViewingHostSpace;
  static constexpr bool device_accessible = true;  // gathers would launch kernels
  SlotViewingHostSpace() = default;
  explicit SlotViewingHostSpace(HostSpace space) : HostSpace(std::move(space)) {}
};

// Where gathers run on a device, a whole-epoch Shuffle::samples epoch is zero-copy: the
// producer gathers each chunk's rows in the epoch's order, row by row, and every batch is a
// view of a chunk slot equal to the preloaded dataset's batch, over remainders and ranks.
TEST(StreamingDataset, WholeEpochSampleBatchesAreViewsOfGatheredChunks) {
  const Data data(203);
  for (const Remainder remainder : {Remainder::drop, Remainder::partial, Remainder::pad}) {
    for (const int world : {1, 2}) {
      for (int rank = 0; rank < world; ++rank) {
        SCOPED_TRACE(std::string(resident::remainder_name(remainder)) + ", rank " +
                     std::to_string(rank) + " of " + std::to_string(world));
        DatasetOptions options = stream_options(8, remainder, 3, 3, 1);
        options.streaming.order = resident::StreamOrder::whole_epoch;
        options.shard = {rank, world, 0};
        DeviceDataset<HostSpace, std::int64_t, float> preloaded(
            HostSpace::with_budget(1 << 20), options, data.id_tensor(), data.feature_tensor());
        StreamingDataset<SlotViewingHostSpace, std::int64_t, float> streamed(
            SlotViewingHostSpace(HostSpace::with_budget(1 << 20)), options, data.id_tensor(),
            data.feature_tensor());
        for (const std::uint64_t epoch : {0, 1}) {
          auto expected = preloaded.epoch({3, epoch, Shuffle::samples});
          auto got = streamed.epoch({3, epoch, Shuffle::samples});
          EXPECT_FALSE(got.gathers()) << "views of the chunk slots";
          ASSERT_EQ(got.size(), expected.size());
          for (std::size_t k = 0; k < got.size(); ++k) {
            const auto [ids, features] = got.batch(k);
            const auto [expected_ids, expected_features] = expected.batch(k);
            ASSERT_EQ(ids.rows(), expected_ids.rows());
            ASSERT_EQ(ids.valid_rows(), expected_ids.valid_rows());
            ASSERT_TRUE(std::equal(ids.data(), ids.data() + ids.rows(), expected_ids.data()))
                << "batch " << k;
            ASSERT_TRUE(std::equal(features.data(), features.data() + 3 * features.rows(),
                                   expected_features.data()))
                << "batch " << k;
          }
        }
      }
    }
  }
}

TEST(StreamingDataset, RefusesWhenNotEvenTheRingFits) {
  const Data data(1000);
  const HostSpace space = HostSpace::with_budget(4096);
  try {
    StreamingDataset<HostSpace, float> ds(space, stream_options(100, Remainder::drop, 1, 4, 2),
                                          data.feature_tensor());
    FAIL() << "4 chunk slots of 1200 bytes cannot fit in 4 KiB";
  } catch (const CapacityError& error) {
    // 4 slots of 100 rows x 12 bytes, 256-aligned, and a gather ring of 2 batches of 100 rows
    // of 12 bytes (1280 B aligned) and 100 row ids of 8 bytes (2304 B a slot).
    EXPECT_EQ(error.needed_bytes(), 4u * 1280u + 2u * 2304u);
    EXPECT_NE(std::string(error.what()).find("even the chunk slots"), std::string::npos)
        << error.what();
  }
  EXPECT_EQ(space.used_bytes(), 0u);
}

TEST(StreamingDataset, InvalidStreamOptionsAreRefused) {
  const Data data(10);
  using Streamed = StreamingDataset<HostSpace, float>;
  // No prefetch, and a ring with no slot left to read while the others load.
  EXPECT_THROW(
      Streamed(HostSpace{}, stream_options(2, Remainder::drop, 1, 2, 0), data.feature_tensor()),
      InvalidArgument);
  EXPECT_THROW(
      Streamed(HostSpace{}, stream_options(2, Remainder::drop, 1, 2, 2), data.feature_tensor()),
      InvalidArgument);
}

TEST(StreamingDataset, NpyFilesStreamTheSameBatchesAsMemory) {
  const Data data(777);
  const TempNpy ids("stream_ids", data.ids, {777});
  const TempNpy features("stream_features", data.features, {777, 3});
  const DatasetOptions options = stream_options(32, Remainder::pad, 3);
  auto from_files = resident::load_streaming_dataset<HostSpace, std::int64_t, float>(
      HostSpace::with_budget(1 << 20), options, ids.path, features.path);
  StreamingDataset<HostSpace, std::int64_t, float> from_memory(
      HostSpace{}, options, data.id_tensor(), data.feature_tensor());
  ASSERT_EQ(from_files.num_batches(), from_memory.num_batches());
  auto file_epoch = from_files.epoch({3, 1, Shuffle::batches});
  auto memory_epoch = from_memory.epoch({3, 1, Shuffle::batches});
  for (std::size_t k = 0; k < file_epoch.size(); ++k) {
    const auto [file_ids, file_features] = file_epoch.batch(k);
    const auto [memory_ids, memory_features] = memory_epoch.batch(k);
    ASSERT_EQ(file_ids.valid_rows(), memory_ids.valid_rows());
    ASSERT_TRUE(std::equal(file_ids.data(), file_ids.data() + file_ids.size(), memory_ids.data()));
    ASSERT_TRUE(std::equal(file_features.data(), file_features.data() + file_features.size(),
                           memory_features.data()));
  }
}

TEST(StreamingDataset, NpyOfTheWrongTypeOrOrderIsRefusedBeforeTheSpaceIsTouched) {
  const std::vector<float> values(20);
  const TempNpy file("stream_wrong", values, {10, 2});
  const HostSpace space = HostSpace::with_budget(1 << 20);
  const auto as_double = [&](const std::string& path) {
    return resident::load_streaming_dataset<HostSpace, double>(
        space, stream_options(1, Remainder::drop, 1), path);
  };
  EXPECT_THROW((void)as_double(file.path), FormatError);
  const std::string fixture = resident::testing::data_file("f8_big_endian.npy");
  try {
    (void)as_double(fixture);
    FAIL() << "a big-endian file cannot be streamed as it is";
  } catch (const FormatError& error) {
    EXPECT_NE(std::string(error.what()).find("little-endian C-order"), std::string::npos);
  }
  EXPECT_EQ(space.used_bytes(), 0u);
}

/// Reads every batch of `ds` after the first and expects the FormatError whose reason says
/// `what`; returns the error's path.
template <class Dataset>
std::string expect_error_while_streaming(Dataset& ds, const std::string& what) {
  try {
    for (std::size_t index = 1; index < ds.num_batches(); ++index) (void)ds.batch(index);
  } catch (const FormatError& error) {
    EXPECT_NE(error.reason().find(what), std::string::npos) << error.what();
    return error.path();
  }
  ADD_FAILURE() << "streaming on must throw a FormatError saying '" << what << "'";
  return {};
}

/// Reads a new pass of `ds` from its first batch and expects the FormatError whose reason says
/// `what`; returns the error's path.
template <class Dataset>
std::string expect_error_in_a_new_pass(Dataset& ds, const std::string& what) {
  try {
    for (const auto& batch : ds.epoch({7, 1, Shuffle::none})) (void)batch;
  } catch (const FormatError& error) {
    EXPECT_NE(error.reason().find(what), std::string::npos) << error.what();
    return error.path();
  }
  ADD_FAILURE() << "a new pass must throw a FormatError saying '" << what << "'";
  return {};
}

// The producer reads a chunk ahead; a file cut short (or removed) under it must surface as a
// FormatError at the reader, never as SIGBUS, a crash or a hang.
TEST(StreamingDataset, FileTruncatedWhileStreamingIsATypedError) {
  const Data data(4000);
  const TempNpy ids("stream_truncated", data.ids, {4000});
  auto ds = resident::load_streaming_dataset<HostSpace, std::int64_t>(
      HostSpace{}, stream_options(100, Remainder::drop, 2, 3, 1), ids.path);
  (void)ds.batch(0);
  ASSERT_EQ(::truncate(ids.path.c_str(), 128 + 1000 * 8), 0);  // header + 1000 rows left
  EXPECT_EQ(expect_error_while_streaming(ds, "size changed from 32128 to 8128"), ids.path);
  // The file is no longer the one that was checked: a new pass is refused too, not served
  // from what is left.
  EXPECT_EQ(expect_error_in_a_new_pass(ds, "truncated"), ids.path);
}

TEST(StreamingDataset, FileRemovedWhileStreamingIsATypedError) {
  const Data data(4000);
  const TempNpy ids("stream_removed", data.ids, {4000});
  auto ds = resident::load_streaming_dataset<HostSpace, std::int64_t>(
      HostSpace{}, stream_options(100, Remainder::drop, 2, 3, 1), ids.path);
  (void)ds.batch(0);
  ASSERT_EQ(std::remove(ids.path.c_str()), 0);
  EXPECT_EQ(expect_error_while_streaming(ds, "it was removed or replaced"), ids.path);
}

/// A scratch copy of `data.ids` whose modification time is set far in the past, so that any
/// later write or touch changes it whatever the file system's timestamp granularity.
struct OldIds : TempNpy {
  OldIds(const std::string& name, const Data& data) : TempNpy(name, data.ids, {data.ids.size()}) {
    const ::timespec old[2] = {{1000000000, 0}, {1000000000, 0}};
    EXPECT_EQ(::utimensat(AT_FDCWD, path.c_str(), old, 0), 0) << std::strerror(errno);
  }
};

/// Overwrites the rows of an int64 .npy at `path` in place with `value`: same inode, same size,
/// as a careless writer would (resident's own writers replace the file instead).
void rewrite_in_place(const std::string& path, std::int64_t value) {
  const npy::Header header = npy::read_header(path);
  const std::vector<std::int64_t> rows(header.shape[0], value);
  std::fstream file(path, std::ios::binary | std::ios::in | std::ios::out);
  file.seekp(static_cast<std::streamoff>(header.data_offset));
  file.write(reinterpret_cast<const char*>(rows.data()),
             static_cast<std::streamsize>(rows.size() * sizeof(std::int64_t)));
  ASSERT_TRUE(file.flush()) << "rewriting " << path;
}

template <class Space>
auto stream_ids(const Space& space, const std::string& path) {
  return resident::load_streaming_dataset<Space, std::int64_t>(
      space, stream_options(100, Remainder::drop, 2, 3, 1), path);
}

TYPED_TEST(TypedStreaming, FileRewrittenInPlaceBetweenPassesIsATypedError) {
  const Data data(4000);
  const OldIds ids("stream_rewritten_between", data);
  auto ds = stream_ids(this->space_, ids.path);
  for (const auto& batch : ds.epoch()) (void)batch;  // a whole pass of the file as it was
  rewrite_in_place(ids.path, -1);
  EXPECT_EQ(expect_error_in_a_new_pass(ds, "modified since it was opened (mtime"), ids.path);
}

TYPED_TEST(TypedStreaming, FileRewrittenInPlaceWithinAPassIsATypedError) {
  const Data data(4000);
  const OldIds ids("stream_rewritten_within", data);
  auto ds = stream_ids(this->space_, ids.path);
  (void)ds.batch(0);
  rewrite_in_place(ids.path, -1);
  EXPECT_EQ(expect_error_while_streaming(ds, "modified since it was opened"), ids.path);
}

TYPED_TEST(TypedStreaming, FileExtendedWhileStreamingIsATypedError) {
  const Data data(4000);
  const TempNpy ids("stream_extended", data.ids, {4000});
  auto ds = stream_ids(this->space_, ids.path);
  (void)ds.batch(0);
  ASSERT_EQ(::truncate(ids.path.c_str(), 128 + 4001 * 8), 0);  // one row more than the header's
  EXPECT_EQ(expect_error_while_streaming(ds,
                                         "size changed from 32128 to 32136 bytes (it was "
                                         "extended)"),
            ids.path);
}

// Touching a file changes it as far as anyone can tell without reading it all: refused too,
// though its bytes are the same.
TYPED_TEST(TypedStreaming, FileTouchedWhileStreamingIsATypedError) {
  const Data data(4000);
  const OldIds ids("stream_touched", data);
  auto ds = stream_ids(this->space_, ids.path);
  (void)ds.batch(0);
  ASSERT_EQ(::utimensat(AT_FDCWD, ids.path.c_str(), nullptr, 0), 0) << std::strerror(errno);
  EXPECT_EQ(expect_error_while_streaming(ds, "modified since it was opened"), ids.path);
}

// Saving over a streamed file puts a new file at the path (npy::save renames it into place);
// the dataset's descriptor holds the old one, which is gone from the folder: refused.
TYPED_TEST(TypedStreaming, FileReplacedWhileStreamingIsATypedError) {
  const Data data(4000);
  const TempNpy ids("stream_replaced", data.ids, {4000});
  auto ds = stream_ids(this->space_, ids.path);
  (void)ds.batch(0);
  const std::vector<std::int64_t> other(4000, -1);
  npy::save(ids.path, other.data(), Shape{4000});
  EXPECT_EQ(expect_error_in_a_new_pass(ds, "it was removed or replaced"), ids.path);
}

TYPED_TEST(TypedStreaming, HeaderClaimingMoreRowsThanTheFileHoldsIsRefused) {
  const Data data(100);
  const TempNpy ids("stream_claims_more", data.ids, {100});
  ASSERT_EQ(::truncate(ids.path.c_str(), 128 + 99 * 8), 0);
  try {
    (void)stream_ids(this->space_, ids.path);
    FAIL() << "a file one row short was streamed";
  } catch (const FormatError& error) {
    EXPECT_NE(error.reason().find("the data is shorter than the shape requires"), std::string::npos)
        << error.what();
  }
}

}  // namespace

// A stream never needs more ring than the data: with fewer chunks than chunk_slots every chunk
// has its own slot, and a lone chunk's slot holds the rows it really has. The dataset's layout
// is the one plan() reports, its accessors tell it, and it streams the preloaded batches.
TYPED_TEST(TypedStreaming, TheRingNeverExceedsTheDataAtTheEdgesOfTheChunking) {
  constexpr std::size_t batch = 10, ring = 4, prefetch = 2;
  // 0 rows, 1 row, fewer batches than ring slots, exactly as many, one more, many more.
  for (const std::size_t n : {0, 1, 25, 40, 41, 50, 95}) {
    const Data data(n);
    for (const Remainder remainder : {Remainder::drop, Remainder::partial, Remainder::pad}) {
      for (const std::size_t chunk : {0, 1, 2, 100}) {
        SCOPED_TRACE("n " + std::to_string(n) + ", " + resident::remainder_name(remainder) +
                     ", chunk_batches " + std::to_string(chunk));
        const DatasetOptions options = stream_options(batch, remainder, chunk, ring, prefetch);
        DeviceDataset<HostSpace, std::int64_t, float> preloaded(
            HostSpace{}, options, data.id_tensor(), data.feature_tensor());
        const auto space = resident::testing::budgeted_space<TypeParam>();
        const auto verdict =
            resident::plan(space, options, data.id_tensor(), data.feature_tensor());
        StreamingDataset<TypeParam, std::int64_t, float> streamed(space, options, data.id_tensor(),
                                                                  data.feature_tensor());
        EXPECT_EQ(streamed.bytes(), verdict.stream_slots_bytes);
        EXPECT_EQ(streamed.num_chunks(), verdict.stream_chunks);
        EXPECT_EQ(streamed.chunk_batches(), verdict.stream_chunk_batches);
        // The data, plus each slot's field alignment, plus (with several chunks) the batches
        // the last chunk lacks of a full slot.
        const std::size_t slots = std::max<std::size_t>(1, std::min(ring, streamed.num_chunks()));
        const std::size_t row_bytes = sizeof(std::int64_t) + 3 * sizeof(float);
        const std::size_t slack =
            (streamed.num_chunks() > 1 ? streamed.chunk_batches() * batch * row_bytes : 0) +
            slots * 2 * 256;
        EXPECT_LE(streamed.bytes(), preloaded.bytes() + slack)
            << "a ring larger than the data it streams";
        EXPECT_EQ(streamed.chunk_slots(), slots);
        EXPECT_EQ(streamed.prefetch_chunks(), std::min(prefetch, slots - 1))
            << "no more chunks can load ahead than there are other slots";
        ASSERT_EQ(streamed.num_batches(), preloaded.num_batches());
        for (const Shuffle shuffle : {Shuffle::none, Shuffle::batches}) {
          auto epoch = streamed.epoch({5, 2, shuffle});
          std::vector<std::int64_t> rows;
          for (std::size_t k = 0; k < epoch.size(); ++k) {
            const auto [ids, features] = epoch.batch(k);
            const auto got_ids = read_back(streamed.space(), streamed.stream(), ids);
            const auto got_features = read_back(streamed.space(), streamed.stream(), features);
            for (std::size_t r = 0; r < ids.rows(); ++r)
              ASSERT_EQ(got_features[r * 3], 3.0f * static_cast<float>(got_ids[r]));
            if (shuffle == Shuffle::none) {
              const auto [expected_ids, expected_features] = preloaded.batch(k);
              ASSERT_EQ(ids.rows(), expected_ids.rows());
              ASSERT_EQ(ids.valid_rows(), expected_ids.valid_rows());
              ASSERT_TRUE(std::equal(got_ids.begin(), got_ids.end(), expected_ids.data()));
              ASSERT_TRUE(
                  std::equal(got_features.begin(), got_features.end(), expected_features.data()));
            }
            rows.insert(rows.end(), got_ids.begin(), got_ids.begin() + ids.valid_rows());
          }
          std::sort(rows.begin(), rows.end());
          const std::size_t served = remainder == Remainder::drop ? n / batch * batch : n;
          ASSERT_EQ(rows.size(), served);
          // Consecutive rows from the epoch's drop offset (0 but under a shuffled drop).
          for (std::size_t r = 0; r < served; ++r)
            ASSERT_EQ(rows[r], rows.front() + std::int64_t(r));
        }
      }
    }
  }
}

// Stream options and batch sizes at their maximum stream the right batches: the ring is capped
// by the chunks, the prefetch by the ring, and nothing overflows or allocates more than the
// data. A reserve of every byte is refused for what it is.
TEST(StreamingDataset, OptionsAtTheirMaximumStreamTheRightBatches) {
  constexpr std::size_t max = std::numeric_limits<std::size_t>::max();
  const Data data(25);
  struct Case {
    resident::StreamOptions streaming;
    std::size_t batch;
    std::size_t chunks, ring, prefetch;
  };
  for (const Case& c : {Case{{max, max, max - 1}, 10, 1, 1, 0}, Case{{max, max, 1}, 10, 1, 1, 0},
                        Case{{0, max, max - 1}, 10, 3, 3, 2}, Case{{1, max, max - 1}, 10, 3, 3, 2},
                        Case{{1, 2, 1}, 10, 3, 2, 1}, Case{{0, 4, 2}, max, 1, 1, 0},
                        Case{{1, 4, 2}, 1, 25, 4, 2}}) {
    SCOPED_TRACE(
        std::to_string(c.streaming.chunk_batches) + ", " + std::to_string(c.streaming.chunk_slots) +
        ", " + std::to_string(c.streaming.prefetch_chunks) + ", batch " + std::to_string(c.batch));
    DatasetOptions options = stream_options(c.batch, Remainder::partial, 0);
    options.streaming = c.streaming;
    const HostSpace space = HostSpace::with_budget(1 << 20);
    StreamingDataset<HostSpace, std::int64_t> ds(space, options, data.id_tensor());
    EXPECT_EQ(ds.num_chunks(), c.chunks);
    EXPECT_EQ(ds.chunk_slots(), c.ring);
    EXPECT_EQ(ds.prefetch_chunks(), c.prefetch);
    EXPECT_LE(ds.bytes(), c.ring * ((std::min(c.batch, std::size_t{25}) * 8 + 255) / 256 * 256));
    std::vector<std::int64_t> rows;
    for (auto [ids] : ds.epoch({1, 0, Shuffle::batches}))
      rows.insert(rows.end(), ids.data(), ids.data() + ids.valid_rows());
    std::sort(rows.begin(), rows.end());
    EXPECT_EQ(rows, data.ids);
  }
  DatasetOptions all_reserved = stream_options(10, Remainder::partial, 0);
  all_reserved.reserve_bytes = max;
  EXPECT_THROW((StreamingDataset<HostSpace, std::int64_t>(HostSpace::with_budget(1 << 20),
                                                          all_reserved, data.id_tensor())),
               CapacityError);
}

// Remainder::pad stores every batch full: a batch size no platform can store is refused,
// saying so, before anything is allocated.
TEST(StreamingDataset, APaddedBatchTooLargeToStoreIsRefusedSayingWhy) {
  const Data data(10);
  const DatasetOptions options =
      stream_options(std::numeric_limits<std::size_t>::max(), Remainder::pad, 0);
  const HostSpace space = HostSpace::with_budget(1 << 20);
  try {
    StreamingDataset<HostSpace, std::int64_t> ds(space, options, data.id_tensor());
    FAIL() << "a padded batch of SIZE_MAX rows was accepted";
  } catch (const InvalidArgument& error) {
    EXPECT_NE(std::string(error.what()).find("Remainder::pad"), std::string::npos) << error.what();
  }
  EXPECT_EQ(space.used_bytes(), 0u);
}
