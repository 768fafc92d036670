// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// StreamRef beside CCCL's cuda::stream_ref, where both are compiled by nvcc: the conversions
// either way (so that a stream held as a cuda::stream_ref is given to a dataset as it is, and
// the option handed to CCCL's APIs), and a default cuda::stream_ref, which is stream 0 and
// compiles, refused by the dataset at run time. The rest of StreamRef is tested in
// tests/test_stream_ref.cpp.
#include <gtest/gtest.h>

#include <cstdint>
#include <cuda/stream_ref>
#include <numeric>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "resident/resident.hpp"
#include "support/spaces.hpp"

namespace {

using resident::CudaSpace;
using resident::DatasetOptions;
using resident::DeviceDataset;
using resident::HostTensor;
using resident::StreamRef;

static_assert(RESIDENT_HAS_CUDA_STREAM_REF == 1, "nvcc builds link CCCL");
static_assert(std::is_convertible_v<cuda::stream_ref, StreamRef>);
static_assert(std::is_convertible_v<StreamRef, cuda::stream_ref>);
static_assert(std::is_assignable_v<std::optional<StreamRef>&, cuda::stream_ref>);
static_assert(std::is_assignable_v<std::optional<StreamRef>&, cudaStream_t>);
// The literals stay refused with CCCL's conversions beside them.
static_assert(!std::is_constructible_v<StreamRef, int>);
static_assert(!std::is_constructible_v<StreamRef, std::nullptr_t>);
static_assert(!std::is_assignable_v<std::optional<StreamRef>&, std::nullptr_t>);
static_assert(!std::is_assignable_v<std::optional<StreamRef>&, int>);

// A handle that is never dereferenced: the views only carry it.
cudaStream_t fake_handle(std::uintptr_t value) {
  return reinterpret_cast<cudaStream_t>(value);  // NOLINT: an opaque handle's value
}

TEST(StreamRefCccl, ConvertsToAndFromCudaStreamRef) {
  const cudaStream_t handle = fake_handle(0x1000);
  const cuda::stream_ref cccl(handle);
  const StreamRef ours = cccl;
  EXPECT_EQ(ours.get(), handle);
  const cuda::stream_ref back = ours;
  EXPECT_EQ(back.get(), handle);
  // Every mixed comparison resolves to one operator (a pair of types with conversions either
  // way would otherwise find both types' operators).
  EXPECT_TRUE(ours == cccl);
  EXPECT_TRUE(cccl == ours);
  EXPECT_FALSE(ours != cccl);
  EXPECT_TRUE(ours == handle);
  EXPECT_TRUE(handle == ours);
  EXPECT_TRUE(ours != cuda::stream_ref(fake_handle(0x2000)));

  DatasetOptions options;
  options.stream = cccl;
  ASSERT_TRUE(options.stream.has_value());
  const cuda::stream_ref from_option = *options.stream;
  EXPECT_EQ(from_option, cccl);
}

class StreamRefCcclOnDevice : public ::testing::Test {
 protected:
  void SetUp() override { resident::testing::skip_unless_usable<CudaSpace>(); }
  std::vector<std::int32_t> rows_ = [] {
    std::vector<std::int32_t> rows(10);
    std::iota(rows.begin(), rows.end(), 0);
    return rows;
  }();
};

TEST_F(StreamRefCcclOnDevice, ADatasetTakesACudaStreamRef) {
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  {
    DatasetOptions options;
    options.batch_size = 4;
    options.stream = cuda::stream_ref(stream);
    const DeviceDataset<CudaSpace, std::int32_t> ds(
        CudaSpace{0}, options, HostTensor<const std::int32_t>(rows_.data(), {rows_.size()}));
    EXPECT_EQ(ds.stream(), stream);
    EXPECT_EQ(resident::testing::read_back(ds.space(), ds.stream(), ds.field<0>()), rows_);
    const cuda::stream_ref ordered = *options.stream;
    ordered.wait();  // CCCL's own call on the option's stream
    EXPECT_TRUE(ordered.ready());
  }
  EXPECT_EQ(cudaStreamDestroy(stream), cudaSuccess);
}

// A default cuda::stream_ref is stream 0, the legacy default stream: it compiles, so the
// dataset refuses it when it is made.
TEST_F(StreamRefCcclOnDevice, ADefaultCudaStreamRefIsRefused) {
  DatasetOptions options;
  options.batch_size = 4;
  options.stream = cuda::stream_ref{};
  try {
    const DeviceDataset<CudaSpace, std::int32_t> ds(
        CudaSpace{0}, options, HostTensor<const std::int32_t>(rows_.data(), {rows_.size()}));
    ADD_FAILURE() << "a dataset took the legacy default stream";
  } catch (const resident::InvalidArgument& error) {
    EXPECT_NE(std::string(error.what()).find("legacy default stream"), std::string::npos)
        << error.what();
  }
}

}  // namespace
