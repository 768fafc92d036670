// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// A 2-layer MLP (inputs -> hidden, ReLU -> classes, softmax cross-entropy, SGD with momentum)
// on the host, with OpenBLAS for the matrix products. Row-major throughout; a batch is `rows`
// rows of which the first `valid` are real (resident's Remainder::pad): the loss, accuracy and
// gradients count only those. The CUDA twin is in mlp_cuda.hpp; both start from the same
// parameters (`initial_parameters`).

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "resident/permutation.hpp"

namespace examples {

/// Sizes of the network and of the batches it is fed.
struct MlpShape {
  std::size_t inputs = 0;
  std::size_t hidden = 256;
  std::size_t classes = 10;
  std::size_t batch = 64;

  // Offsets of the parameter blocks in one flat vector: W1 (inputs x hidden), b1, W2
  // (hidden x classes), b2.
  [[nodiscard]] std::size_t w1() const { return 0; }
  [[nodiscard]] std::size_t b1() const { return inputs * hidden; }
  [[nodiscard]] std::size_t w2() const { return b1() + hidden; }
  [[nodiscard]] std::size_t b2() const { return w2() + hidden * classes; }
  [[nodiscard]] std::size_t parameters() const { return b2() + classes; }
};

/// Loss summed over the rows counted, correct predictions, rows counted.
struct Totals {
  double loss = 0, correct = 0, rows = 0;
};

/// Where a model is in a training run: its parameters, its momentum, and the current epoch's
/// totals so far (what a resumed run needs to go on bit for bit).
struct ModelState {
  std::vector<float> parameters, velocity;
  Totals totals;
};

/// Glorot-uniform weights from a seeded hash, zero biases: the same start on every path.
inline std::vector<float> initial_parameters(const MlpShape& shape, std::uint64_t seed) {
  std::vector<float> parameters(shape.parameters(), 0.0f);
  const auto fill = [&](std::size_t offset, std::size_t fan_in, std::size_t fan_out) {
    const float limit = std::sqrt(6.0f / static_cast<float>(fan_in + fan_out));
    for (std::size_t i = 0; i < fan_in * fan_out; ++i) {
      const std::uint64_t bits = resident::detail::mix64(seed * 0x9e3779b97f4a7c15ULL + offset + i);
      const float unit = static_cast<float>(bits >> 40) / static_cast<float>(1 << 24);  // [0, 1)
      parameters[offset + i] = (2.0f * unit - 1.0f) * limit;
    }
  };
  fill(shape.w1(), shape.inputs, shape.hidden);
  fill(shape.w2(), shape.hidden, shape.classes);
  return parameters;
}

/// The MLP on the host.
class HostMlp {
 public:
  HostMlp(const MlpShape& shape, std::uint64_t seed)
      : shape_(shape),
        parameters_(initial_parameters(shape, seed)),
        velocity_(shape.parameters(), 0.0f),
        gradient_(shape.parameters(), 0.0f),
        hidden_(shape.batch * shape.hidden),
        logits_(shape.batch * shape.classes),
        hidden_gradient_(shape.batch * shape.hidden) {}

  /// Forward, backward and one SGD-with-momentum step on a batch.
  void train_step(const float* x, const std::int32_t* y, std::size_t rows, std::size_t valid,
                  float rate, float momentum) {
    forward(x, rows);
    loss_and_logit_gradient(y, rows, valid, true);
    backward(x, rows);
    for (std::size_t i = 0; i < parameters_.size(); ++i) {
      velocity_[i] = momentum * velocity_[i] + gradient_[i];
      parameters_[i] -= rate * velocity_[i];
    }
  }

  /// Forward only: adds the batch's loss and correct predictions to the totals.
  void evaluate(const float* x, const std::int32_t* y, std::size_t rows, std::size_t valid) {
    forward(x, rows);
    loss_and_logit_gradient(y, rows, valid, false);
  }

  /// The totals since the last call.
  Totals take_totals() { return std::exchange(totals_, Totals{}); }

  [[nodiscard]] const std::vector<float>& parameters() const { return parameters_; }
  /// Where the model is (see `ModelState`).
  [[nodiscard]] ModelState state() const { return {parameters_, velocity_, totals_}; }
  /// Puts the model where `state` says, of a model of the same shape.
  void restore(const ModelState& state) {
    parameters_ = state.parameters;
    velocity_ = state.velocity;
    totals_ = state.totals;
  }

 private:
  void forward(const float* x, std::size_t rows) {
    const auto& s = shape_;
    const float* w1 = parameters_.data() + s.w1();
    const float* b1 = parameters_.data() + s.b1();
    const float* w2 = parameters_.data() + s.w2();
    const float* b2 = parameters_.data() + s.b2();
    const auto m = static_cast<int>(rows), h = static_cast<int>(s.hidden),
               d = static_cast<int>(s.inputs), c = static_cast<int>(s.classes);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, h, d, 1.0f, x, d, w1, h, 0.0f,
                hidden_.data(), h);
    for (std::size_t r = 0; r < rows; ++r)
      for (std::size_t j = 0; j < s.hidden; ++j) {
        float& a = hidden_[r * s.hidden + j];
        a = std::max(a + b1[j], 0.0f);
      }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, c, h, 1.0f, hidden_.data(), h, w2, c,
                0.0f, logits_.data(), c);
    for (std::size_t r = 0; r < rows; ++r)
      for (std::size_t k = 0; k < s.classes; ++k) logits_[r * s.classes + k] += b2[k];
  }

  // Softmax cross-entropy over the valid rows; with `gradient`, turns the logits into
  // dLoss/dlogits of the mean loss (zero for padding rows).
  void loss_and_logit_gradient(const std::int32_t* y, std::size_t rows, std::size_t valid,
                               bool gradient) {
    const std::size_t c = shape_.classes;
    for (std::size_t r = 0; r < rows; ++r) {
      float* z = logits_.data() + r * c;
      const float top = *std::max_element(z, z + c);
      float sum = 0;
      for (std::size_t k = 0; k < c; ++k) sum += std::exp(z[k] - top);
      const auto label = static_cast<std::size_t>(y[r]);
      if (r < valid) {
        totals_.loss += static_cast<double>(std::log(sum) - (z[label] - top));
        totals_.correct += static_cast<std::size_t>(std::max_element(z, z + c) - z) == label;
        totals_.rows += 1;
      }
      if (!gradient) continue;
      for (std::size_t k = 0; k < c; ++k) {
        const float p = std::exp(z[k] - top) / sum;
        z[k] = r < valid ? (p - (k == label ? 1.0f : 0.0f)) / static_cast<float>(valid) : 0.0f;
      }
    }
  }

  void backward(const float* x, std::size_t rows) {
    const auto& s = shape_;
    const auto m = static_cast<int>(rows), h = static_cast<int>(s.hidden),
               d = static_cast<int>(s.inputs), c = static_cast<int>(s.classes);
    float* g = gradient_.data();
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, h, c, m, 1.0f, hidden_.data(), h,
                logits_.data(), c, 0.0f, g + s.w2(), c);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, h, c, 1.0f, logits_.data(), c,
                parameters_.data() + s.w2(), c, 0.0f, hidden_gradient_.data(), h);
    for (std::size_t i = 0; i < rows * s.hidden; ++i)
      if (hidden_[i] <= 0.0f) hidden_gradient_[i] = 0.0f;
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, d, h, m, 1.0f, x, d,
                hidden_gradient_.data(), h, 0.0f, g + s.w1(), h);
    std::fill(g + s.b1(), g + s.b1() + s.hidden, 0.0f);
    std::fill(g + s.b2(), g + s.b2() + s.classes, 0.0f);
    for (std::size_t r = 0; r < rows; ++r) {
      for (std::size_t j = 0; j < s.hidden; ++j)
        g[s.b1() + j] += hidden_gradient_[r * s.hidden + j];
      for (std::size_t k = 0; k < s.classes; ++k) g[s.b2() + k] += logits_[r * s.classes + k];
    }
  }

  MlpShape shape_;
  std::vector<float> parameters_, velocity_, gradient_;
  std::vector<float> hidden_, logits_, hidden_gradient_;
  Totals totals_;
};

}  // namespace examples
