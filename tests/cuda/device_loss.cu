// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// Device loss: a kernel faults (an illegal address), which leaves the CUDA context unusable for
// the rest of the process, as an Xid or an uncorrectable ECC error would. What follows must be
// typed errors, never a hang or an abort, and destroying every dataset must be safe. Its own
// executable, since nothing on the device works afterwards; built with assertions on, so that
// a release path that asserts on the dead device would abort the test.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <numeric>
#include <vector>

#include "resident/resident.hpp"
#include "support/spaces.hpp"

namespace {

using resident::CudaError;
using resident::CudaSpace;
using resident::DatasetOptions;
using resident::DeviceDataset;
using resident::HostTensor;
using resident::StreamingDataset;

__global__ void write_through_null(int* target) {
  *target = 1;  // target is null: cudaErrorIllegalAddress, sticky for the context
}

class DeviceLoss : public ::testing::Test {
 protected:
  void SetUp() override { resident::testing::skip_unless_usable<CudaSpace>(); }
};

TEST_F(DeviceLoss, TypedErrorsAfterAStickyFaultAndDestructionIsSafe) {
  std::vector<float> values(4096);
  std::iota(values.begin(), values.end(), 0.0f);
  const HostTensor<const float> x(values.data(), {1024, 4});
  DatasetOptions options;
  options.batch_size = 64;
  options.reserve_bytes = 0;
  options.streaming.chunk_batches = 2;
  options.streaming.chunk_slots = 3;
  options.streaming.prefetch_chunks = 1;
  const CudaSpace space{0};
  auto preloaded = std::make_unique<DeviceDataset<CudaSpace, float>>(space, options, x);
  auto streamed = std::make_unique<StreamingDataset<CudaSpace, float>>(space, options, x);
  (void)streamed->batch(0);

  write_through_null<<<1, 1, 0, preloaded->stream()>>>(nullptr);
  const cudaError_t fault = cudaStreamSynchronize(preloaded->stream());
  ASSERT_NE(fault, cudaSuccess) << "the faulting kernel did not fault";

  std::vector<float> back(64 * 4);
  const auto [batch] = preloaded->batch(1);  // a pointer offset: still fine
  EXPECT_THROW(
      {
        space.copy_to_host(back.data(), batch.data(), batch.bytes(), preloaded->stream());
        space.synchronize(preloaded->stream());
      },
      CudaError);
  EXPECT_THROW(
      {
        for (std::size_t k = 1; k < streamed->num_batches(); ++k) {
          const auto [streamed_batch] = streamed->batch(k);
          space.copy_to_host(back.data(), streamed_batch.data(), streamed_batch.bytes(),
                             streamed->stream());
          space.synchronize(streamed->stream());
        }
      },
      CudaError);
  EXPECT_THROW((DeviceDataset<CudaSpace, float>(space, options, x)), CudaError);
  preloaded.reset();  // must neither throw nor abort (assertions are on in this test)
  streamed.reset();
  SUCCEED() << "error after the fault: " << cudaGetErrorName(fault);
}

}  // namespace
