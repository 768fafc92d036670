// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// The kernels and cuBLAS calls of the device byte model (see byte_lm_cuda.hpp).

#include <stdexcept>
#include <string>
#include <vector>

#include "byte_lm_cuda.hpp"
#include "resident/detail/cuda/error.hpp"

namespace examples {
namespace {

void check_blas(cublasStatus_t status, const char* call) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string("train_tokens: ") + call + " failed with cuBLAS status " +
                             std::to_string(static_cast<int>(status)));
}

unsigned blocks(std::size_t threads, unsigned per_block = 256) {
  return static_cast<unsigned>((threads + per_block - 1) / per_block);
}

// Where prediction p's tokens are in a batch of windows: the context of prediction (r, t) is
// x[r][t - order + 1 .. t], its target y[r][t], with t from order - 1.
__device__ std::size_t context_start(std::size_t p, std::size_t per_row, std::size_t window) {
  return p / per_row * window + p % per_row;
}

// inputs[p] = the embeddings of prediction p's `order` context bytes, side by side; one thread
// per input element.
__global__ void embed(const float* table, const std::uint16_t* x, std::size_t count,
                      std::size_t per_row, std::size_t window, std::size_t order,
                      std::size_t embedding, float* inputs) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  const std::size_t width = order * embedding;
  if (i >= count * width) return;
  const std::size_t p = i / width, j = i % width / embedding, e = i % embedding;
  inputs[i] = table[x[context_start(p, per_row, window) + j] * embedding + e];
}

// The embedding table's gradient: each context byte's row receives its slice of the input
// gradient (atomically: a byte recurs within a batch). The table's gradient is zeroed first.
__global__ void embed_gradient(const float* input_gradient, const std::uint16_t* x,
                               std::size_t count, std::size_t per_row, std::size_t window,
                               std::size_t order, std::size_t embedding, float* table_gradient) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  const std::size_t width = order * embedding;
  if (i >= count * width) return;
  const std::size_t p = i / width, j = i % width / embedding, e = i % embedding;
  atomicAdd(&table_gradient[x[context_start(p, per_row, window) + j] * embedding + e],
            input_gradient[i]);
}

// rows of a = bias (each layer's output starts as its bias; the product adds to it).
__global__ void broadcast_rows(float* a, const float* bias, std::size_t rows, std::size_t cols) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i < rows * cols) a[i] = bias[i % cols];
}

__global__ void relu(float* a, std::size_t count) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i < count) a[i] = fmaxf(a[i], 0.0f);
}

// One thread per prediction: accumulates the loss and, with `gradient`, replaces the logits by
// dLoss/dlogits of the batch's mean loss.
__global__ void softmax_cross_entropy(float* logits, const std::uint16_t* y, std::size_t count,
                                      std::size_t per_row, std::size_t window, std::size_t order,
                                      std::size_t classes, bool gradient, double* totals) {
  const std::size_t p = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (p >= count) return;
  float* z = logits + p * classes;
  float top = -INFINITY;
  for (std::size_t k = 0; k < classes; ++k) top = fmaxf(top, z[k]);
  const std::size_t label = y[context_start(p, per_row, window) + order - 1];
  const float target = z[label] - top;
  float sum = 0;
  for (std::size_t k = 0; k < classes; ++k) sum += z[k] = expf(z[k] - top);
  atomicAdd(&totals[0], static_cast<double>(logf(sum) - target));
  atomicAdd(&totals[1], 1.0);
  if (!gradient) return;
  const float scale = 1.0f / (sum * static_cast<float>(count));
  for (std::size_t k = 0; k < classes; ++k) z[k] *= scale;
  z[label] -= 1.0f / static_cast<float>(count);
}

// dh = 0 where the ReLU was off.
__global__ void relu_mask(float* hidden_gradient, const float* hidden, std::size_t count) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i < count && hidden[i] <= 0.0f) hidden_gradient[i] = 0.0f;
}

// sums[j] = sum over rows of a[r][j]: one thread per column.
__global__ void column_sums(const float* a, std::size_t rows, std::size_t cols, float* sums) {
  const std::size_t j = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (j >= cols) return;
  float sum = 0;
  for (std::size_t r = 0; r < rows; ++r) sum += a[r * cols + j];
  sums[j] = sum;
}

// `rate` has the bias correction folded in (AdamStep::corrected_rate).
__global__ void adam_update(float* parameters, float* first_moment, float* second_moment,
                            const float* gradient, std::size_t count, float rate, float beta1,
                            float beta2, float epsilon) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i >= count) return;
  const float g = gradient[i];
  first_moment[i] = beta1 * first_moment[i] + (1 - beta1) * g;
  second_moment[i] = beta2 * second_moment[i] + (1 - beta2) * g * g;
  parameters[i] -= rate * first_moment[i] / (sqrtf(second_moment[i]) + epsilon);
}

template <class T>
DeviceArray<T> device_array(std::size_t count) {
  void* pointer = nullptr;
  RESIDENT_CUDA_TRY(cudaMalloc(&pointer, count * sizeof(T)));
  return DeviceArray<T>(static_cast<T*>(pointer));
}

cublasHandle_t create_blas() {
  cublasHandle_t handle = nullptr;
  check_blas(cublasCreate(&handle), "cublasCreate");
  return handle;
}

}  // namespace

CudaByteLm::CudaByteLm(const ByteLmShape& shape, std::uint64_t seed, cudaStream_t stream)
    : shape_(shape), stream_(stream), blas_(create_blas()) {
  check_blas(cublasSetStream(blas_.get(), stream_), "cublasSetStream");
  const std::size_t count = shape.parameters(), predictions = shape.predictions();
  parameters_ = device_array<float>(count);
  first_moment_ = device_array<float>(count);
  second_moment_ = device_array<float>(count);
  gradient_ = device_array<float>(count);
  inputs_ = device_array<float>(predictions * shape.inputs());
  hidden_ = device_array<float>(predictions * shape.hidden);
  logits_ = device_array<float>(predictions * shape.vocabulary);
  hidden_gradient_ = device_array<float>(predictions * shape.hidden);
  input_gradient_ = device_array<float>(predictions * shape.inputs());
  totals_ = device_array<double>(2);
  const std::vector<float> initial = initial_byte_lm_parameters(shape, seed);
  RESIDENT_CUDA_TRY(cudaMemcpyAsync(parameters_.get(), initial.data(), count * sizeof(float),
                                    cudaMemcpyHostToDevice, stream_));
  RESIDENT_CUDA_TRY(cudaMemsetAsync(first_moment_.get(), 0, count * sizeof(float), stream_));
  RESIDENT_CUDA_TRY(cudaMemsetAsync(second_moment_.get(), 0, count * sizeof(float), stream_));
  RESIDENT_CUDA_TRY(cudaMemsetAsync(totals_.get(), 0, 2 * sizeof(double), stream_));
  RESIDENT_CUDA_TRY(cudaStreamSynchronize(stream_));  // `initial` leaves scope
}

CudaByteLm::~CudaByteLm() { (void)cudaStreamSynchronize(stream_); }

void CudaByteLm::gemm(bool transpose_a, bool transpose_b, std::size_t m, std::size_t n,
                      std::size_t k, const float* a, std::size_t lda, const float* b,
                      std::size_t ldb, float beta, float* c, std::size_t ldc) const {
  // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T, and a row-major matrix
  // is its own transpose read column-major: swap the operands, keep the flags.
  const float one = 1.0f;
  check_blas(cublasSgemm(blas_.get(), transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N,
                         transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N, static_cast<int>(n),
                         static_cast<int>(m), static_cast<int>(k), &one, b, static_cast<int>(ldb),
                         a, static_cast<int>(lda), &beta, c, static_cast<int>(ldc)),
             "cublasSgemm");
}

void CudaByteLm::forward(const std::uint16_t* x, std::size_t count) {
  const auto& s = shape_;
  const float* p = parameters_.get();
  embed<<<blocks(count * s.inputs()), 256, 0, stream_>>>(p + s.table(), x, count,
                                                         s.predictions_per_row(), s.window, s.order,
                                                         s.embedding, inputs_.get());
  RESIDENT_CUDA_TRY(cudaGetLastError());  // each launch checked where it happens
  broadcast_rows<<<blocks(count * s.hidden), 256, 0, stream_>>>(hidden_.get(), p + s.b1(), count,
                                                                s.hidden);
  RESIDENT_CUDA_TRY(cudaGetLastError());
  gemm(false, false, count, s.hidden, s.inputs(), inputs_.get(), s.inputs(), p + s.w1(), s.hidden,
       1.0f, hidden_.get(), s.hidden);
  relu<<<blocks(count * s.hidden), 256, 0, stream_>>>(hidden_.get(), count * s.hidden);
  RESIDENT_CUDA_TRY(cudaGetLastError());
  broadcast_rows<<<blocks(count * s.vocabulary), 256, 0, stream_>>>(logits_.get(), p + s.b2(),
                                                                    count, s.vocabulary);
  RESIDENT_CUDA_TRY(cudaGetLastError());
  gemm(false, false, count, s.vocabulary, s.hidden, hidden_.get(), s.hidden, p + s.w2(),
       s.vocabulary, 1.0f, logits_.get(), s.vocabulary);
}

void CudaByteLm::loss(const std::uint16_t* y, std::size_t count, bool gradient) {
  const auto& s = shape_;
  softmax_cross_entropy<<<blocks(count, 128), 128, 0, stream_>>>(
      logits_.get(), y, count, s.predictions_per_row(), s.window, s.order, s.vocabulary, gradient,
      totals_.get());
  RESIDENT_CUDA_TRY(cudaGetLastError());
}

void CudaByteLm::train_step(const std::uint16_t* x, const std::uint16_t* y, std::size_t rows,
                            const AdamStep& adam) {
  const auto& s = shape_;
  const std::size_t count = rows * s.predictions_per_row();
  forward(x, count);
  loss(y, count, true);
  float* g = gradient_.get();
  gemm(true, false, s.hidden, s.vocabulary, count, hidden_.get(), s.hidden, logits_.get(),
       s.vocabulary, 0.0f, g + s.w2(), s.vocabulary);
  gemm(false, true, count, s.hidden, s.vocabulary, logits_.get(), s.vocabulary,
       parameters_.get() + s.w2(), s.vocabulary, 0.0f, hidden_gradient_.get(), s.hidden);
  relu_mask<<<blocks(count * s.hidden), 256, 0, stream_>>>(hidden_gradient_.get(), hidden_.get(),
                                                           count * s.hidden);
  RESIDENT_CUDA_TRY(cudaGetLastError());
  gemm(true, false, s.inputs(), s.hidden, count, inputs_.get(), s.inputs(), hidden_gradient_.get(),
       s.hidden, 0.0f, g + s.w1(), s.hidden);
  gemm(false, true, count, s.inputs(), s.hidden, hidden_gradient_.get(), s.hidden,
       parameters_.get() + s.w1(), s.hidden, 0.0f, input_gradient_.get(), s.inputs());
  column_sums<<<blocks(s.hidden), 256, 0, stream_>>>(hidden_gradient_.get(), count, s.hidden,
                                                     g + s.b1());
  RESIDENT_CUDA_TRY(cudaGetLastError());
  column_sums<<<blocks(s.vocabulary), 256, 0, stream_>>>(logits_.get(), count, s.vocabulary,
                                                         g + s.b2());
  RESIDENT_CUDA_TRY(cudaGetLastError());
  RESIDENT_CUDA_TRY(
      cudaMemsetAsync(g + s.table(), 0, s.vocabulary * s.embedding * sizeof(float), stream_));
  embed_gradient<<<blocks(count * s.inputs()), 256, 0, stream_>>>(
      input_gradient_.get(), x, count, s.predictions_per_row(), s.window, s.order, s.embedding,
      g + s.table());
  RESIDENT_CUDA_TRY(cudaGetLastError());
  adam_update<<<blocks(s.parameters()), 256, 0, stream_>>>(
      parameters_.get(), first_moment_.get(), second_moment_.get(), g, s.parameters(),
      adam.corrected_rate(), adam.beta1, adam.beta2, adam.epsilon);
  RESIDENT_CUDA_TRY(cudaGetLastError());
}

void CudaByteLm::evaluate(const std::uint16_t* x, const std::uint16_t* y, std::size_t rows) {
  const std::size_t count = rows * shape_.predictions_per_row();
  forward(x, count);
  loss(y, count, false);
}

LmTotals CudaByteLm::take_totals() {
  double host[2] = {};
  RESIDENT_CUDA_TRY(
      cudaMemcpyAsync(host, totals_.get(), sizeof(host), cudaMemcpyDeviceToHost, stream_));
  RESIDENT_CUDA_TRY(cudaMemsetAsync(totals_.get(), 0, sizeof(host), stream_));
  RESIDENT_CUDA_TRY(cudaStreamSynchronize(stream_));
  return {host[0], host[1]};
}

}  // namespace examples
