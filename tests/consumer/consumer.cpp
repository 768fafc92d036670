// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// Written against the public names only; exits non-zero when resident misbehaves.
#include <cstdint>
#include <cstdio>
#include <numeric>
#include <resident/resident.hpp>
#include <stdexcept>
#include <vector>

#if defined(CONSUMER_EXPECT_HAS_CUDA)
static_assert(RESIDENT_HAS_CUDA == CONSUMER_EXPECT_HAS_CUDA,
              "the package decided CUDA otherwise than this toolchain allows");
#endif

namespace {

int failures = 0;

void check(bool condition, const char* what) {
  if (!condition) {
    std::fprintf(stderr, "consumer: FAILED: %s\n", what);
    ++failures;
  }
}

#if defined(__CUDACC__)
__global__ void first_labels(resident::BatchView<const std::int32_t> labels, std::int32_t* out) {
  out[0] = labels.to_mdspan<1>()(0);
}
#endif

template <class Space>
void exercise(const Space& space) {
  std::vector<float> features(1000 * 8);
  std::iota(features.begin(), features.end(), 0.0f);
  std::vector<std::int32_t> labels(1000);
  std::iota(labels.begin(), labels.end(), 0);
  const resident::HostTensor<const float> x(features.data(), {1000, 8});
  const resident::HostTensor<const std::int32_t> y(labels.data(), {1000});

  resident::DatasetOptions options;
  options.batch_size = 128;
  options.remainder = resident::Remainder::drop;
  options.reserve_bytes = 0;
  const resident::Plan plan = resident::plan(space, options, x, y);
  check(plan.fits, "plan fits");

  resident::DeviceDataset<Space, float, std::int32_t> ds(space, options, x, y);
  check(ds.num_rows() == 1000 && ds.batch_size() == 128 && ds.num_batches() == 7, "counts");
  check(ds.bytes() == plan.needed_bytes, "bytes equal the plan");
  auto [xb, yb] = ds.batch(3);
  check(xb.rows() == 128 && xb.size() == 128 * 8 && yb.bytes() == 128 * 4, "batch shape");
  check(xb.data() == ds.template field<0>().data() + 3 * 128 * 8, "zero-copy offset");
  check(xb.row_shape().elements() == 8, "row shape");
  try {
    (void)ds.batch(7);
    check(false, "batch past the end throws");
  } catch (const std::out_of_range&) {
  }
#if defined(__CUDACC__)
  if constexpr (resident::is_device_accessible_v<Space>) {
    std::int32_t* out = nullptr;
    RESIDENT_CUDA_TRY(cudaMalloc(&out, sizeof(std::int32_t)));
    first_labels<<<1, 1, 0, ds.stream()>>>(yb, out);
    std::int32_t label = -1;
    RESIDENT_CUDA_TRY(
        cudaMemcpyAsync(&label, out, sizeof label, cudaMemcpyDeviceToHost, ds.stream()));
    RESIDENT_CUDA_TRY(cudaStreamSynchronize(ds.stream()));
    RESIDENT_CUDA_TRY(cudaFree(out));
    check(label == 3 * 128, "kernel read the batch");
  }
#endif
  auto moved = std::move(ds);
  check(moved.num_batches() == 7, "moved");

  options.reserve_bytes = space.capacity().total_bytes;  // never less than what is free
  try {
    resident::DeviceDataset<Space, float, std::int32_t> refused(space, options, x, y);
    check(false, "a full reserve refuses");
  } catch (const resident::CapacityError& error) {
    check(error.needed_bytes() == plan.needed_bytes, "refusal figures");
  }
  std::printf("consumer: %s ok (%zu batches, %zu bytes)\n", space.name().c_str(),
              moved.num_batches(), moved.bytes());
}

}  // namespace

int main() {
  std::printf("consumer: RESIDENT_HAS_CUDA=%d\n", RESIDENT_HAS_CUDA);
  try {
    exercise(resident::HostSpace{});
    exercise(resident::HostSpace::with_budget(1 << 20));
#if RESIDENT_HAS_CUDA
    if (resident::CudaSpace::device_count() > 0) {
      exercise(resident::CudaSpace{0});
    } else {
      try {
        (void)resident::CudaSpace{0}.capacity();
        check(false, "CudaSpace without a device throws");
      } catch (const resident::CudaError& error) {
        std::printf("consumer: no CUDA device, as expected: %s\n", error.what());
      }
    }
#endif
  } catch (const resident::Error& error) {
    std::fprintf(stderr, "consumer: unexpected error: %s\n", error.what());
    return 1;
  }
  return failures == 0 ? 0 : 1;
}
