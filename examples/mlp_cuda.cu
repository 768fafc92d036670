// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// The kernels and cuBLAS calls of the device MLP (see mlp_cuda.hpp).

#include <stdexcept>
#include <string>

#include "mlp_cuda.hpp"
#include "resident/detail/cuda/error.hpp"

namespace examples {
namespace {

void check_blas(cublasStatus_t status, const char* call) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string("train_mlp: ") + call + " failed with cuBLAS status " +
                             std::to_string(static_cast<int>(status)));
}

unsigned blocks(std::size_t threads, unsigned per_block = 256) {
  return static_cast<unsigned>((threads + per_block - 1) / per_block);
}

// a[r][j] = max(a[r][j] + bias[j], 0)
__global__ void bias_relu(float* a, const float* bias, std::size_t rows, std::size_t cols) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i < rows * cols) a[i] = fmaxf(a[i] + bias[i % cols], 0.0f);
}

// One thread per row: adds the bias to the logits, accumulates the loss and correct count of
// valid rows and, with `gradient`, replaces the logits by dLoss/dlogits of the mean loss.
__global__ void softmax_cross_entropy(float* logits, const float* bias, const std::int32_t* y,
                                      std::size_t rows, std::size_t valid, std::size_t classes,
                                      bool gradient, double* totals) {
  const std::size_t r = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (r >= rows) return;
  float* z = logits + r * classes;
  float top = -INFINITY;
  std::size_t best = 0;
  for (std::size_t k = 0; k < classes; ++k) {
    z[k] += bias[k];
    if (z[k] > top) top = z[k], best = k;
  }
  float sum = 0;
  for (std::size_t k = 0; k < classes; ++k) sum += expf(z[k] - top);
  const auto label = static_cast<std::size_t>(y[r]);
  if (r < valid) {
    atomicAdd(&totals[0], static_cast<double>(logf(sum) - (z[label] - top)));
    if (best == label) atomicAdd(&totals[1], 1.0);
    atomicAdd(&totals[2], 1.0);
  }
  if (!gradient) return;
  for (std::size_t k = 0; k < classes; ++k) {
    const float p = expf(z[k] - top) / sum;
    z[k] = r < valid ? (p - (k == label ? 1.0f : 0.0f)) / static_cast<float>(valid) : 0.0f;
  }
}

// dh = 0 where the ReLU was off.
__global__ void relu_mask(float* hidden_gradient, const float* hidden, std::size_t count) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i < count && hidden[i] <= 0.0f) hidden_gradient[i] = 0.0f;
}

// sums[j] = sum over rows of a[r][j]: one thread per column (rows is a batch, small).
__global__ void column_sums(const float* a, std::size_t rows, std::size_t cols, float* sums) {
  const std::size_t j = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (j >= cols) return;
  float sum = 0;
  for (std::size_t r = 0; r < rows; ++r) sum += a[r * cols + j];
  sums[j] = sum;
}

__global__ void sgd_momentum(float* parameters, float* velocity, const float* gradient,
                             std::size_t count, float rate, float momentum) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i >= count) return;
  velocity[i] = momentum * velocity[i] + gradient[i];
  parameters[i] -= rate * velocity[i];
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

CudaMlp::CudaMlp(const MlpShape& shape, std::uint64_t seed, cudaStream_t stream)
    : shape_(shape), stream_(stream), blas_(create_blas()) {
  check_blas(cublasSetStream(blas_.get(), stream_), "cublasSetStream");
  const std::size_t count = shape.parameters();
  parameters_ = device_array<float>(count);
  velocity_ = device_array<float>(count);
  gradient_ = device_array<float>(count);
  hidden_ = device_array<float>(shape.batch * shape.hidden);
  logits_ = device_array<float>(shape.batch * shape.classes);
  hidden_gradient_ = device_array<float>(shape.batch * shape.hidden);
  totals_ = device_array<double>(3);
  const std::vector<float> initial = initial_parameters(shape, seed);
  RESIDENT_CUDA_TRY(cudaMemcpyAsync(parameters_.get(), initial.data(), count * sizeof(float),
                                    cudaMemcpyHostToDevice, stream_));
  RESIDENT_CUDA_TRY(cudaMemsetAsync(velocity_.get(), 0, count * sizeof(float), stream_));
  RESIDENT_CUDA_TRY(cudaMemsetAsync(totals_.get(), 0, 3 * sizeof(double), stream_));
  RESIDENT_CUDA_TRY(cudaStreamSynchronize(stream_));  // `initial` leaves scope
}

CudaMlp::~CudaMlp() { (void)cudaStreamSynchronize(stream_); }

void CudaMlp::gemm(bool transpose_a, bool transpose_b, std::size_t m, std::size_t n, std::size_t k,
                   const float* a, std::size_t lda, const float* b, std::size_t ldb, float* c,
                   std::size_t ldc) const {
  // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T, and a row-major matrix
  // is its own transpose read column-major: swap the operands, keep the flags.
  const float one = 1.0f, zero = 0.0f;
  check_blas(cublasSgemm(blas_.get(), transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N,
                         transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N, static_cast<int>(n),
                         static_cast<int>(m), static_cast<int>(k), &one, b, static_cast<int>(ldb),
                         a, static_cast<int>(lda), &zero, c, static_cast<int>(ldc)),
             "cublasSgemm");
}

void CudaMlp::forward(const float* x, std::size_t rows) {
  const auto& s = shape_;
  gemm(false, false, rows, s.hidden, s.inputs, x, s.inputs, parameters_.get() + s.w1(), s.hidden,
       hidden_.get(), s.hidden);
  bias_relu<<<blocks(rows * s.hidden), 256, 0, stream_>>>(hidden_.get(), parameters_.get() + s.b1(),
                                                          rows, s.hidden);
  RESIDENT_CUDA_TRY(cudaGetLastError());  // each launch checked where it happens
  gemm(false, false, rows, s.classes, s.hidden, hidden_.get(), s.hidden, parameters_.get() + s.w2(),
       s.classes, logits_.get(), s.classes);
}

void CudaMlp::loss(const std::int32_t* y, std::size_t rows, std::size_t valid, bool gradient) {
  softmax_cross_entropy<<<blocks(rows, 128), 128, 0, stream_>>>(
      logits_.get(), parameters_.get() + shape_.b2(), y, rows, valid, shape_.classes, gradient,
      totals_.get());
  RESIDENT_CUDA_TRY(cudaGetLastError());
}

void CudaMlp::train_step(const float* x, const std::int32_t* y, std::size_t rows, std::size_t valid,
                         float rate, float momentum) {
  const auto& s = shape_;
  forward(x, rows);
  loss(y, rows, valid, true);
  gemm(true, false, s.hidden, s.classes, rows, hidden_.get(), s.hidden, logits_.get(), s.classes,
       gradient_.get() + s.w2(), s.classes);
  gemm(false, true, rows, s.hidden, s.classes, logits_.get(), s.classes, parameters_.get() + s.w2(),
       s.classes, hidden_gradient_.get(), s.hidden);
  relu_mask<<<blocks(rows * s.hidden), 256, 0, stream_>>>(hidden_gradient_.get(), hidden_.get(),
                                                          rows * s.hidden);
  RESIDENT_CUDA_TRY(cudaGetLastError());
  gemm(true, false, s.inputs, s.hidden, rows, x, s.inputs, hidden_gradient_.get(), s.hidden,
       gradient_.get() + s.w1(), s.hidden);
  column_sums<<<blocks(s.hidden), 256, 0, stream_>>>(hidden_gradient_.get(), rows, s.hidden,
                                                     gradient_.get() + s.b1());
  RESIDENT_CUDA_TRY(cudaGetLastError());
  column_sums<<<blocks(s.classes), 256, 0, stream_>>>(logits_.get(), rows, s.classes,
                                                      gradient_.get() + s.b2());
  RESIDENT_CUDA_TRY(cudaGetLastError());
  sgd_momentum<<<blocks(s.parameters()), 256, 0, stream_>>>(
      parameters_.get(), velocity_.get(), gradient_.get(), s.parameters(), rate, momentum);
  RESIDENT_CUDA_TRY(cudaGetLastError());
}

void CudaMlp::evaluate(const float* x, const std::int32_t* y, std::size_t rows, std::size_t valid) {
  forward(x, rows);
  loss(y, rows, valid, false);
}

Totals CudaMlp::take_totals() {
  double host[3] = {};
  RESIDENT_CUDA_TRY(
      cudaMemcpyAsync(host, totals_.get(), sizeof(host), cudaMemcpyDeviceToHost, stream_));
  RESIDENT_CUDA_TRY(cudaMemsetAsync(totals_.get(), 0, sizeof(host), stream_));
  RESIDENT_CUDA_TRY(cudaStreamSynchronize(stream_));
  return {host[0], host[1], host[2]};
}

ModelState CudaMlp::state() const {
  ModelState state{
      std::vector<float>(shape_.parameters()), std::vector<float>(shape_.parameters()), {}};
  double totals[3] = {};
  const std::size_t bytes = state.parameters.size() * sizeof(float);
  RESIDENT_CUDA_TRY(cudaMemcpyAsync(state.parameters.data(), parameters_.get(), bytes,
                                    cudaMemcpyDeviceToHost, stream_));
  RESIDENT_CUDA_TRY(cudaMemcpyAsync(state.velocity.data(), velocity_.get(), bytes,
                                    cudaMemcpyDeviceToHost, stream_));
  RESIDENT_CUDA_TRY(
      cudaMemcpyAsync(totals, totals_.get(), sizeof(totals), cudaMemcpyDeviceToHost, stream_));
  RESIDENT_CUDA_TRY(cudaStreamSynchronize(stream_));
  state.totals = {totals[0], totals[1], totals[2]};
  return state;
}

void CudaMlp::restore(const ModelState& state) {
  const double totals[3] = {state.totals.loss, state.totals.correct, state.totals.rows};
  const std::size_t bytes = shape_.parameters() * sizeof(float);
  RESIDENT_CUDA_TRY(cudaMemcpyAsync(parameters_.get(), state.parameters.data(), bytes,
                                    cudaMemcpyHostToDevice, stream_));
  RESIDENT_CUDA_TRY(cudaMemcpyAsync(velocity_.get(), state.velocity.data(), bytes,
                                    cudaMemcpyHostToDevice, stream_));
  RESIDENT_CUDA_TRY(
      cudaMemcpyAsync(totals_.get(), totals, sizeof(totals), cudaMemcpyHostToDevice, stream_));
  RESIDENT_CUDA_TRY(cudaStreamSynchronize(stream_));  // the host buffers go after the return
}

std::vector<float> CudaMlp::parameters() const {
  std::vector<float> host(shape_.parameters());
  RESIDENT_CUDA_TRY(cudaMemcpyAsync(host.data(), parameters_.get(), host.size() * sizeof(float),
                                    cudaMemcpyDeviceToHost, stream_));
  RESIDENT_CUDA_TRY(cudaStreamSynchronize(stream_));
  return host;
}

}  // namespace examples
