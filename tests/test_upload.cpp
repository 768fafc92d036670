// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// The upload path: chunking, parallel copies and staging, typed over the memory spaces. The
// parts of the upload machinery are tested on their own in tests/detail/ (test_copy_workers.cpp,
// test_staged_upload.cpp); progress reports and cancellation, the API of progress.hpp, in
// test_progress.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

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
