// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// resident/torch.hpp's CUDA path, compiled (never linked or run) where libtorch has no CUDA, so
// that a build without a CUDA libtorch still compiles what a CUDA one uses: `TorchCudaResource`
// under `CudaSpace::with_resource`, and batches of a CudaSpace epoch as tensors ordered on
// libtorch's current stream. scripts/gpu-check.sh runs it against PyTorch's own libtorch
// (train_libtorch --memory torch).
#include "resident/device_dataset.hpp"
#include "resident/torch.hpp"

#if !RESIDENT_TORCH_HAS_CUDA
#error "compile this unit with RESIDENT_TORCH_HAS_CUDA=1"
#endif

static_assert(resident::detail::is_device_resource<resident::TorchCudaResource>::value);
static_assert(resident::detail::has_idle_bytes<resident::TorchCudaResource>::value);

/// A training step's worth of the CUDA path: a dataset in libtorch's memory, a gathering epoch,
/// its batches as tensors.
double torch_cuda_path(const resident::HostTensor<const float>& x) {
  const resident::CudaSpace space =
      resident::CudaSpace(0).with_resource(resident::TorchCudaResource{});
  resident::DatasetOptions options;
  options.batch_size = 8;
  resident::DeviceDataset<resident::CudaSpace, float> dataset(space, options, x);
  auto epoch = dataset.epoch({1, 0, resident::Shuffle::samples});
  double sum = 0;
  for (std::size_t k = 0; k < epoch.size(); ++k) {
    auto [batch] = resident::to_tensors(epoch, k);
    sum += batch.sum().item<double>();
  }
  return sum + static_cast<double>(space.capacity().free_bytes);
}
