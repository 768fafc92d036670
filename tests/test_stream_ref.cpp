// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// StreamRef, the view in which DatasetOptions::stream takes a CUDA stream: what it refuses at
// compile time (the literals that name the legacy default stream), what it accepts, and, on
// CudaSpace, the handles a dataset refuses when it is made (null or cudaStreamLegacy at run
// time) and the one it takes besides created streams (cudaStreamPerThread). The conversions to
// and from CCCL's cuda::stream_ref are tested under nvcc (tests/cuda/test_stream_ref.cu).
#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "resident/dataset_options.hpp"
#include "resident/device_dataset.hpp"
#include "resident/host_space.hpp"
#include "resident/stream_ref.hpp"
#include "resident/streaming_dataset.hpp"
#include "support/spaces.hpp"

namespace {

using resident::DatasetOptions;
using resident::StreamRef;
using Handle = CUstream_st*;  // cudaStream_t, without the CUDA headers

// Not from the literals that name the legacy stream: `0` is an `int`, and overload resolution
// picks the deleted `int` constructor for it (exact match) over the pointer conversion.
static_assert(!std::is_constructible_v<StreamRef, int>);
static_assert(!std::is_constructible_v<StreamRef, std::nullptr_t>);
static_assert(!std::is_constructible_v<StreamRef, long>);  // nor NULL (0L under g++)
static_assert(!std::is_convertible_v<int, StreamRef>);
static_assert(!std::is_convertible_v<std::nullptr_t, StreamRef>);
static_assert(!std::is_default_constructible_v<StreamRef>, "no default: it would be stream 0");
// From a handle, implicitly, so that `options.stream = stream;` reads as with a bare handle.
static_assert(std::is_convertible_v<Handle, StreamRef>);
static_assert(std::is_trivially_copyable_v<StreamRef>);
static_assert(sizeof(StreamRef) == sizeof(void*), "a handle, nothing more");
static_assert(std::is_same_v<decltype(std::declval<StreamRef>().get()), Handle>);
// The option: assignable from a handle, not from the literals.
static_assert(std::is_assignable_v<std::optional<StreamRef>&, Handle>);
static_assert(!std::is_assignable_v<std::optional<StreamRef>&, std::nullptr_t>);
static_assert(!std::is_assignable_v<std::optional<StreamRef>&, int>);
static_assert(std::is_same_v<decltype(DatasetOptions::stream), std::optional<StreamRef>>);
#if RESIDENT_HAS_CUDA
static_assert(std::is_same_v<cudaStream_t, Handle>, "the one declaration is the runtime's");
static_assert(std::is_assignable_v<std::optional<StreamRef>&, cudaStream_t>);
#endif

// A handle that is never dereferenced: StreamRef only carries it.
Handle fake_handle(std::uintptr_t value) {
  return reinterpret_cast<Handle>(value);  // NOLINT: an opaque handle's value
}

TEST(StreamRef, ViewsTheHandleItIsGiven) {
  const Handle a = fake_handle(0x1000);
  const Handle b = fake_handle(0x2000);
  const StreamRef ref = a;
  EXPECT_EQ(ref.get(), a);
  EXPECT_TRUE(ref == StreamRef(a));
  EXPECT_TRUE(ref != StreamRef(b));
  EXPECT_TRUE(ref == a);
  EXPECT_TRUE(a == ref);
  EXPECT_TRUE(ref != b);
  EXPECT_TRUE(b != ref);
  static_assert(StreamRef(Handle{}).get() == nullptr, "constexpr, and a handle may be null");
}

TEST(StreamRef, TheOptionTakesAHandleAsBefore) {
  DatasetOptions options;
  const Handle stream = fake_handle(0x1000);
  options.stream = stream;
  ASSERT_TRUE(options.stream.has_value());
  EXPECT_EQ(options.stream->get(), stream);
  options.stream.reset();
  EXPECT_FALSE(options.stream.has_value());
}

// HostSpace ignores the option, as documented: nothing of it is read, so nothing is refused.
TEST(StreamRef, HostSpaceIgnoresTheOption) {
  std::vector<std::int32_t> rows(10);
  std::iota(rows.begin(), rows.end(), 0);
  DatasetOptions options;
  options.batch_size = 4;
  const Handle legacy = fake_handle(0x1);
  options.stream = legacy;
  const resident::DeviceDataset<resident::HostSpace, std::int32_t> ds(
      resident::HostSpace::with_budget(1 << 20), options,
      resident::HostTensor<const std::int32_t>(rows.data(), {rows.size()}));
  EXPECT_EQ(ds.num_batches(), 3u);
}

#if RESIDENT_HAS_CUDA
using resident::CudaSpace;
using resident::testing::read_back;

class StreamRefOnCuda : public ::testing::Test {
 protected:
  void SetUp() override { resident::testing::skip_unless_usable<CudaSpace>(); }

  static std::size_t device_bytes() {
#if RESIDENT_TEST_SIMULATED_CUDA
    return resident::testing::simcuda::device_bytes_used();
#else
    return 0;  // a real device's free memory moves with the driver: the simulation checks it
#endif
  }
  static std::size_t live_streams() {
#if RESIDENT_TEST_SIMULATED_CUDA
    return resident::testing::simcuda::live_streams();
#else
    return 0;
#endif
  }

  // Makes a DeviceDataset and a StreamingDataset of `rows_` with `stream`, expecting each to
  // be refused for the legacy stream before it allocates or creates anything.
  void expect_refused(cudaStream_t stream, const std::string& found) const {
    DatasetOptions options;
    options.batch_size = 4;
    options.stream = stream;
    const resident::HostTensor<const std::int32_t> tensor(rows_.data(), {rows_.size()});
    const std::size_t bytes_before = device_bytes();
    const std::size_t streams_before = live_streams();
    const auto check = [&](const resident::InvalidArgument& error) {
      const std::string message = error.what();
      for (const std::string& part :
           {found, std::string("legacy default stream"), std::string("serialise"),
            std::string("cudaStreamCreate"), std::string("cudaStreamPerThread"),
            std::string("leave the option unset")})
        EXPECT_NE(message.find(part), std::string::npos) << part << " missing from: " << message;
      EXPECT_EQ(device_bytes(), bytes_before) << "nothing allocated";
      EXPECT_EQ(live_streams(), streams_before) << "no stream made";
    };
    try {
      const resident::DeviceDataset<CudaSpace, std::int32_t> ds(CudaSpace{0}, options, tensor);
      ADD_FAILURE() << "a DeviceDataset took the legacy stream (" << found << ")";
    } catch (const resident::InvalidArgument& error) {
      check(error);
    }
    try {
      const resident::StreamingDataset<CudaSpace, std::int32_t> ds(CudaSpace{0}, options, tensor);
      ADD_FAILURE() << "a StreamingDataset took the legacy stream (" << found << ")";
    } catch (const resident::InvalidArgument& error) {
      check(error);
    }
  }

  std::vector<std::int32_t> rows_ = [] {
    std::vector<std::int32_t> rows(10);
    std::iota(rows.begin(), rows.end(), 0);
    return rows;
  }();
};

// A handle that is null only at run time compiles (StreamRef cannot see it), so the dataset
// refuses it when it is made.
TEST_F(StreamRefOnCuda, NullHandleAtRunTimeIsRefusedBeforeAnyAllocation) {
  const cudaStream_t null_at_run_time = nullptr;
  expect_refused(null_at_run_time, "a null cudaStream_t");
}

TEST_F(StreamRefOnCuda, LegacyStreamIsRefusedBeforeAnyAllocation) {
  expect_refused(cudaStreamLegacy, "cudaStreamLegacy");
}

// The per-thread default stream synchronises with the legacy stream alone, not with the
// training's streams: a dataset takes it, and orders its upload on it.
TEST_F(StreamRefOnCuda, PerThreadStreamIsAccepted) {
  DatasetOptions options;
  options.batch_size = 4;
  options.stream = cudaStreamPerThread;
  const resident::DeviceDataset<CudaSpace, std::int32_t> ds(
      CudaSpace{0}, options, resident::HostTensor<const std::int32_t>(rows_.data(), {10}));
  EXPECT_EQ(ds.stream(), cudaStreamPerThread);
  EXPECT_EQ(read_back(ds.space(), ds.stream(), ds.field<0>()), rows_);
}

// A stream of another device, or one already destroyed, would fail the upload half-way: the
// dataset refuses it when it is made, naming both devices, before it allocates anything.
TEST_F(StreamRefOnCuda, AStreamOfAnotherDeviceOrADestroyedOneIsRefusedWhenMade) {
  const resident::testing::WithDevices two(2);
  if (CudaSpace::device_count() < 2) GTEST_SKIP() << "skipped: fewer than two CUDA devices";
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  cudaStream_t on_zero = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&on_zero, cudaStreamNonBlocking), cudaSuccess);
  DatasetOptions options;
  options.batch_size = 4;
  options.stream = on_zero;
  const resident::HostTensor<const std::int32_t> tensor(rows_.data(), {rows_.size()});
  const std::size_t bytes_before = device_bytes();
  const auto expect_refused = [&](const CudaSpace& space, const std::vector<std::string>& parts) {
    try {
      const resident::DeviceDataset<CudaSpace, std::int32_t> ds(space, options, tensor);
      ADD_FAILURE() << "a dataset on " << space.name() << " took the stream";
    } catch (const resident::InvalidArgument& error) {
      for (const std::string& part : parts)
        EXPECT_NE(std::string(error.what()).find(part), std::string::npos)
            << part << " missing from: " << error.what();
    }
    EXPECT_EQ(device_bytes(), bytes_before) << "nothing allocated";
  };
  expect_refused(CudaSpace{1}, {"belongs to cuda:0", "space is cuda:1", "made on device 1"});
  {
    const resident::DeviceDataset<CudaSpace, std::int32_t> same(CudaSpace{0}, options, tensor);
    EXPECT_EQ(same.stream(), on_zero);
    EXPECT_EQ(read_back(same.space(), same.stream(), same.field<0>()), rows_);
  }
  ASSERT_EQ(cudaStreamDestroy(on_zero), cudaSuccess);
#if RESIDENT_TEST_SIMULATED_CUDA  // a destroyed handle is a dangling pointer on a real runtime
  expect_refused(CudaSpace{0}, {"not a stream the CUDA runtime knows", "already destroyed"});
#endif
}
#endif

}  // namespace
