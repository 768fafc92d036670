// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// The byte model of byte_lm.hpp on a CUDA device: cuBLAS for the matrix products, the small
// kernels of byte_lm_cuda.cu for the embedding lookup and its gradient, ReLU, softmax
// cross-entropy and the Adam update, everything enqueued on one stream (the training
// dataset's), nothing synchronised per step. The totals stay on the device until
// `take_totals()`.

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <memory>

#include "byte_lm.hpp"
#include "mlp_cuda.hpp"  // the owners of cuBLAS handles and device buffers

namespace examples {

class CudaByteLm {
 public:
  CudaByteLm(const ByteLmShape& shape, std::uint64_t seed, cudaStream_t stream);
  ~CudaByteLm();  // waits for the stream, so that no kernel still uses the buffers
  CudaByteLm(const CudaByteLm&) = delete;
  CudaByteLm& operator=(const CudaByteLm&) = delete;

  /// Forward, backward and one Adam update on a batch of `rows` windows (device pointers).
  void train_step(const std::uint16_t* x, const std::uint16_t* y, std::size_t rows,
                  const AdamStep& adam);
  /// Forward only: adds the batch's loss to the device totals.
  void evaluate(const std::uint16_t* x, const std::uint16_t* y, std::size_t rows);
  /// Waits for the stream and returns the totals since the last call.
  LmTotals take_totals();

 private:
  void forward(const std::uint16_t* x, std::size_t count);
  void loss(const std::uint16_t* y, std::size_t count, bool gradient);
  // C (m x n, row-major) = op(A) op(B) with op(A) m x k; beta 0 overwrites C, 1 adds to it.
  void gemm(bool transpose_a, bool transpose_b, std::size_t m, std::size_t n, std::size_t k,
            const float* a, std::size_t lda, const float* b, std::size_t ldb, float beta, float* c,
            std::size_t ldc) const;

  ByteLmShape shape_;
  cudaStream_t stream_;
  std::unique_ptr<cublasContext, DestroyBlas> blas_;
  DeviceArray<float> parameters_, first_moment_, second_moment_, gradient_;
  DeviceArray<float> inputs_, hidden_, logits_, hidden_gradient_, input_gradient_;
  DeviceArray<double> totals_;  // loss, predictions
};

}  // namespace examples
