// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// rmm's memory resources under CudaSpace::with_resource, on a device: a pool_memory_resource and
// a cuda_async_memory_resource, each passed as rmm passes resources everywhere
// (`rmm::device_async_resource_ref`), hold a preloaded dataset and a stream's chunk slots, and
// every batch of a bound epoch reads back as the host rows; and resident's own CudaPoolResource,
// passed to rmm as a device_async_resource_ref, does the same. For scripts/gpu-check.sh (where the
// librmm wheel is installed), not ctest: plain checks, exit status 1 on the first mismatch.
#include <cstdint>
#include <cstdio>
#include <numeric>
#include <rmm/mr/cuda_async_memory_resource.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/pool_memory_resource.hpp>
#include <rmm/resource_ref.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "resident/cuda_resource.hpp"
#include "resident/cuda_space.hpp"
#include "resident/device_dataset.hpp"
#include "resident/streaming_dataset.hpp"

namespace {

constexpr std::size_t rows = 10000, columns = 16, batch = 100;

// Every batch of a zero-copy epoch of `dataset`, bound to `stream`, read back and compared with
// the host rows; the batches checked, or 0 at the first that differs.
template <class Dataset>
std::size_t check(Dataset& dataset, const std::vector<float>& host, cudaStream_t stream) {
  std::size_t checked = 0;
  std::vector<float> back(batch * columns);
  auto epoch = dataset.epoch({3, 0, resident::Shuffle::batches}).on(stream);
  for (std::size_t k = 0; k < epoch.size(); ++k) {
    const auto [x] = epoch.batch(k);
    if (cudaMemcpyAsync(back.data(), x.data(), x.bytes(), cudaMemcpyDeviceToHost, stream) !=
            cudaSuccess ||
        cudaStreamSynchronize(stream) != cudaSuccess)
      return 0;
    const auto first = static_cast<std::size_t>(back[0]) / columns;
    for (std::size_t i = 0; i < x.size(); ++i)
      if (back[i] != host[first * columns + i]) return 0;
    ++checked;
  }
  return checked;
}

int run(const char* name, rmm::device_async_resource_ref resource) {
  std::vector<float> host(rows * columns);
  std::iota(host.begin(), host.end(), 0.0F);
  const resident::HostTensor<const float> tensor(host.data(), resident::Shape{rows, columns});
  resident::DatasetOptions options;
  options.batch_size = batch;
  options.streaming.chunk_batches = 10;
  options.streaming.chunk_slots = 3;
  const resident::CudaSpace space = resident::CudaSpace(0).with_resource(resource);
  cudaStream_t stream = nullptr;
  if (cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess) return 1;
  std::size_t preloaded = 0, streamed = 0, bytes = 0;
  {
    resident::DeviceDataset<resident::CudaSpace, float> dataset(space, options, tensor);
    bytes = dataset.bytes();
    preloaded = check(dataset, host, stream);
  }
  {
    resident::StreamingDataset<resident::CudaSpace, float> dataset(space, options, tensor);
    streamed = check(dataset, host, stream);
  }
  (void)cudaStreamDestroy(stream);
  std::printf(
      "rmm %s: a dataset of %zu B, %zu of %zu batches preloaded and %zu streamed read "
      "back as the host rows\n",
      name, bytes, preloaded, rows / batch, streamed);
  return preloaded == rows / batch && streamed == rows / batch ? 0 : 1;
}

}  // namespace

int main() {
  try {
    rmm::mr::cuda_memory_resource plain;
    rmm::mr::pool_memory_resource pool(plain, std::size_t{64} << 20);
    rmm::mr::cuda_async_memory_resource async;
    // And the other way: resident's own pool is a resource rmm (and cudf) take.
    resident::CudaPoolResource resident_pool(0);
    return run("pool_memory_resource", pool) | run("cuda_async_memory_resource", async) |
           run("ref of resident::CudaPoolResource", resident_pool);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "rmm_resource: %s\n", error.what());
    return 1;
  }
}
