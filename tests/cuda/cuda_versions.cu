// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// The CUDA versions on this machine, before anything else runs on it: the CUDA version the
// driver supports (cudaDriverGetVersion), the one the carried runtime was built with
// (cudaRuntimeGetVersion; the gpu preset links it statically, so it is the toolkit's), and the
// device count. Exit 0 when the driver can run this runtime, 1 when it is too old (a major
// version behind; within one major version CUDA's minor version compatibility applies, and the
// gpu preset's sm_90 code needs no PTX JIT), 2 when there is no driver or no device.
#include <cuda_runtime.h>

#include <cstdio>

namespace {

void print_version(const char* what, int version) {
  std::printf("resident_cuda_versions: %s CUDA %d.%d\n", what, version / 1000, version % 1000 / 10);
}

}  // namespace

int main() {
  int runtime = 0;
  int driver = 0;
  cudaRuntimeGetVersion(&runtime);
  cudaDriverGetVersion(&driver);  // 0 when no driver is installed
  print_version("runtime built with", runtime);
  if (driver == 0) {
    std::printf("resident_cuda_versions: no CUDA driver is installed\n");
    return 2;
  }
  print_version("driver supports", driver);
  if (driver / 1000 < runtime / 1000) {
    std::printf(
        "resident_cuda_versions: the driver is too old for this runtime; install a driver "
        "for CUDA %d or later\n",
        runtime / 1000);
    return 1;
  }
  if (driver < runtime)
    std::printf(
        "resident_cuda_versions: the driver is older than the runtime, within one major "
        "version (minor version compatibility)\n");
  int devices = 0;
  if (const auto error = cudaGetDeviceCount(&devices); error != cudaSuccess) {
    std::printf("resident_cuda_versions: no usable device: %s\n", cudaGetErrorString(error));
    return error == cudaErrorInsufficientDriver ? 1 : 2;
  }
  std::printf("resident_cuda_versions: %d device(s)\n", devices);
  return devices > 0 ? 0 : 2;
}
