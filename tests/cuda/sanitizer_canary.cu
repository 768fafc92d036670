// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// The sanitizer's canary: one deliberate out-of-bounds write, one element past the end of a
// device allocation. Run bare it exits 0 (the write lands in memory the allocator has mapped);
// scripts/gpu-check.sh runs it under compute-sanitizer's memcheck and fails unless memcheck
// reports the write, so that a sanitizer step that would catch nothing cannot pass.
// Not a ctest test: its success is the sanitizer's failure.
#include <cuda_runtime.h>

#include <cstdio>

namespace {

constexpr int kElements = 64;

__global__ void write_one_past_the_end(int* values, int elements) {
  values[elements] = 1;  // out of bounds, deliberately
}

int fail(const char* what, cudaError_t error) {
  std::fprintf(stderr, "resident_sanitizer_canary: %s: %s\n", what, cudaGetErrorString(error));
  return 2;
}

}  // namespace

int main() {
  int* values = nullptr;
  if (const auto error = cudaMalloc(&values, kElements * sizeof(int)); error != cudaSuccess)
    return fail("cudaMalloc", error);
  write_one_past_the_end<<<1, 1>>>(values, kElements);
  if (const auto error = cudaDeviceSynchronize(); error != cudaSuccess)
    return fail("the out-of-bounds kernel", error);
  if (const auto error = cudaFree(values); error != cudaSuccess) return fail("cudaFree", error);
  std::printf("resident_sanitizer_canary: wrote one element past a %d-element allocation\n",
              kElements);
  return 0;
}
