// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// The MLP of mlp.hpp on a CUDA device: cuBLAS for the matrix products, the small kernels of
// mlp_cuda.cu for bias + ReLU, softmax cross-entropy and the SGD update, everything enqueued
// on one stream (the dataset's), nothing synchronised per step. The totals stay on the device
// until `take_totals()`.

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "mlp.hpp"

namespace examples {

// Owners of the model's cuBLAS handle and device buffers: a constructor that fails half-way
// releases what it made.
struct DestroyBlas {
  void operator()(cublasHandle_t handle) const noexcept { (void)cublasDestroy(handle); }
};
struct FreeDevice {
  void operator()(void* memory) const noexcept { (void)cudaFree(memory); }
};
template <class T>
using DeviceArray = std::unique_ptr<T[], FreeDevice>;

class CudaMlp {
 public:
  CudaMlp(const MlpShape& shape, std::uint64_t seed, cudaStream_t stream);
  ~CudaMlp();  // waits for the stream, so that no kernel still uses the buffers
  CudaMlp(const CudaMlp&) = delete;
  CudaMlp& operator=(const CudaMlp&) = delete;

  /// Forward, backward and one SGD-with-momentum step on a batch (device pointers).
  void train_step(const float* x, const std::int32_t* y, std::size_t rows, std::size_t valid,
                  float rate, float momentum);
  /// Forward only: adds the batch's loss and correct predictions to the device totals.
  void evaluate(const float* x, const std::int32_t* y, std::size_t rows, std::size_t valid);
  /// Waits for the stream and returns the totals since the last call.
  Totals take_totals();
  /// The parameters, copied back (waits for the stream).
  [[nodiscard]] std::vector<float> parameters() const;
  /// Where the model is (see `ModelState`), copied back (waits for the stream).
  [[nodiscard]] ModelState state() const;
  /// Puts the model where `state` says, of a model of the same shape (on the stream).
  void restore(const ModelState& state);

 private:
  void forward(const float* x, std::size_t rows);
  void loss(const std::int32_t* y, std::size_t rows, std::size_t valid, bool gradient);
  // C (m x n, row-major) = op(A) op(B) with op(A) m x k.
  void gemm(bool transpose_a, bool transpose_b, std::size_t m, std::size_t n, std::size_t k,
            const float* a, std::size_t lda, const float* b, std::size_t ldb, float* c,
            std::size_t ldc) const;

  MlpShape shape_;
  cudaStream_t stream_;
  std::unique_ptr<cublasContext, DestroyBlas> blas_;
  DeviceArray<float> parameters_, velocity_, gradient_, hidden_, logits_, hidden_gradient_;
  DeviceArray<double> totals_;  // loss, correct, rows
};

}  // namespace examples
