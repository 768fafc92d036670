// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// A byte-level language model on the host, OpenBLAS for the matrix products: each byte is
// predicted from the `order` bytes before it, whose embeddings (256 x `embedding` floats) are
// concatenated and fed to an MLP (-> hidden, ReLU -> 256 logits, softmax cross-entropy),
// trained with Adam. It reads the windows of a resident TokenDataset as they come: a batch is
// `rows` windows of `window` tokens (x) and their next tokens (y, x shifted by one), and every
// position t >= order - 1 of a window is a prediction, of y[t] from x[t - order + 1 .. t]. The
// CUDA twin is in byte_lm_cuda.hpp; both start from the same parameters
// (`initial_byte_lm_parameters`).

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "resident/permutation.hpp"

namespace examples {

/// Sizes of the model and of the batches it is fed.
struct ByteLmShape {
  static constexpr std::size_t vocabulary = 256;  // byte values
  std::size_t order = 8;                          // bytes of context per prediction
  std::size_t embedding = 16;                     // floats per byte of context
  std::size_t hidden = 256;
  std::size_t window = 64;  // tokens per row of a batch (the TokenDataset's context)
  std::size_t rows = 16;    // rows per batch, at most

  [[nodiscard]] std::size_t inputs() const { return order * embedding; }
  [[nodiscard]] std::size_t predictions_per_row() const { return window - order + 1; }
  [[nodiscard]] std::size_t predictions() const { return rows * predictions_per_row(); }

  // Offsets of the parameter blocks in one flat vector: the embedding table (vocabulary x
  // embedding), W1 (inputs x hidden), b1, W2 (hidden x vocabulary), b2.
  [[nodiscard]] std::size_t table() const { return 0; }
  [[nodiscard]] std::size_t w1() const { return vocabulary * embedding; }
  [[nodiscard]] std::size_t b1() const { return w1() + inputs() * hidden; }
  [[nodiscard]] std::size_t w2() const { return b1() + hidden; }
  [[nodiscard]] std::size_t b2() const { return w2() + hidden * vocabulary; }
  [[nodiscard]] std::size_t parameters() const { return b2() + vocabulary; }
};

/// Cross-entropy summed over the predictions counted (nats), and their count.
struct LmTotals {
  double loss = 0, predictions = 0;
};

/// Adam's settings; `step` is the number of the update (from 1), for the bias correction.
struct AdamStep {
  float rate = 0, beta1 = 0.9f, beta2 = 0.999f, epsilon = 1e-8f;
  std::size_t step = 1;
  /// The rate with both moments' bias correction folded in.
  [[nodiscard]] float corrected_rate() const {
    const auto t = static_cast<double>(step);
    return static_cast<float>(rate * std::sqrt(1.0 - std::pow(beta2, t)) /
                              (1.0 - std::pow(beta1, t)));
  }
};

/// Uniform weights from a seeded hash, zero biases: the same start on every path. The
/// embeddings are drawn from [-1, 1), the weights Glorot-uniform.
inline std::vector<float> initial_byte_lm_parameters(const ByteLmShape& shape, std::uint64_t seed) {
  std::vector<float> parameters(shape.parameters(), 0.0f);
  const auto fill = [&](std::size_t offset, std::size_t count, float limit) {
    for (std::size_t i = 0; i < count; ++i) {
      const std::uint64_t bits = resident::detail::mix64(seed * 0x9e3779b97f4a7c15ULL + offset + i);
      const float unit = static_cast<float>(bits >> 40) / static_cast<float>(1 << 24);  // [0, 1)
      parameters[offset + i] = (2.0f * unit - 1.0f) * limit;
    }
  };
  const auto glorot = [](std::size_t fan_in, std::size_t fan_out) {
    return std::sqrt(6.0f / static_cast<float>(fan_in + fan_out));
  };
  fill(shape.table(), shape.vocabulary * shape.embedding, 1.0f);
  fill(shape.w1(), shape.inputs() * shape.hidden, glorot(shape.inputs(), shape.hidden));
  fill(shape.w2(), shape.hidden * shape.vocabulary, glorot(shape.hidden, shape.vocabulary));
  return parameters;
}

/// The byte model on the host.
class HostByteLm {
 public:
  HostByteLm(const ByteLmShape& shape, std::uint64_t seed)
      : shape_(shape),
        parameters_(initial_byte_lm_parameters(shape, seed)),
        first_moment_(shape.parameters(), 0.0f),
        second_moment_(shape.parameters(), 0.0f),
        gradient_(shape.parameters(), 0.0f),
        inputs_(shape.predictions() * shape.inputs()),
        hidden_(shape.predictions() * shape.hidden),
        logits_(shape.predictions() * shape.vocabulary),
        hidden_gradient_(shape.predictions() * shape.hidden),
        input_gradient_(shape.predictions() * shape.inputs()),
        ones_(shape.predictions(), 1.0f) {}

  /// Forward, backward and one Adam update on a batch of `rows` windows (x, y: rows x window
  /// tokens); the loss is the mean over the batch's predictions.
  void train_step(const std::uint16_t* x, const std::uint16_t* y, std::size_t rows,
                  const AdamStep& adam) {
    const std::size_t count = rows * shape_.predictions_per_row();
    forward(x, count);
    loss_and_logit_gradient(y, count, true);
    backward(x, count);
    const float rate = adam.corrected_rate();
    float* p = parameters_.data();
    float* m = first_moment_.data();
    float* v = second_moment_.data();
    const float* g = gradient_.data();
    for (std::size_t i = 0; i < parameters_.size(); ++i) {
      m[i] = adam.beta1 * m[i] + (1 - adam.beta1) * g[i];
      v[i] = adam.beta2 * v[i] + (1 - adam.beta2) * g[i] * g[i];
      p[i] -= rate * m[i] / (std::sqrt(v[i]) + adam.epsilon);
    }
  }

  /// Forward only: adds the batch's loss to the totals.
  void evaluate(const std::uint16_t* x, const std::uint16_t* y, std::size_t rows) {
    const std::size_t count = rows * shape_.predictions_per_row();
    forward(x, count);
    loss_and_logit_gradient(y, count, false);
  }

  /// The totals since the last call.
  LmTotals take_totals() { return std::exchange(totals_, LmTotals{}); }

 private:
  // Where prediction p = (r, t) starts in a batch's rows: its context is x[r][t - order + 1 ..
  // t], the `order` tokens from there, and its target y[r][t], at `order - 1` from there.
  [[nodiscard]] const std::uint16_t* context_start(const std::uint16_t* rows, std::size_t p) const {
    const std::size_t per_row = shape_.predictions_per_row();
    return rows + p / per_row * shape_.window + p % per_row;
  }

  void forward(const std::uint16_t* x, std::size_t count) {
    const auto& s = shape_;
    const float* table = parameters_.data() + s.table();
    // Each prediction's input row: the embeddings of its context bytes, side by side.
    for (std::size_t p = 0; p < count; ++p) {
      const std::uint16_t* bytes = context_start(x, p);
      float* row = inputs_.data() + p * s.inputs();
      for (std::size_t j = 0; j < s.order; ++j)
        std::copy_n(table + bytes[j] * s.embedding, s.embedding, row + j * s.embedding);
    }
    // Each layer's output starts as its bias, and the product adds to it (beta = 1).
    float* a = hidden_.data();
    float* z = logits_.data();
    for (std::size_t p = 0; p < count; ++p) {
      std::copy_n(parameters_.data() + s.b1(), s.hidden, a + p * s.hidden);
      std::copy_n(parameters_.data() + s.b2(), s.vocabulary, z + p * s.vocabulary);
    }
    const auto m = static_cast<int>(count), h = static_cast<int>(s.hidden),
               d = static_cast<int>(s.inputs()), c = static_cast<int>(s.vocabulary);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, h, d, 1.0f, inputs_.data(), d,
                parameters_.data() + s.w1(), h, 1.0f, a, h);
    // Plain comparisons rather than std::max here and below: the tests also run this unoptimised.
    for (std::size_t i = 0; i < count * s.hidden; ++i) a[i] = a[i] > 0.0f ? a[i] : 0.0f;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, c, h, 1.0f, a, h,
                parameters_.data() + s.w2(), c, 1.0f, z, c);
  }

  // Softmax cross-entropy of every prediction; with `gradient`, turns the logits into
  // dLoss/dlogits of the batch's mean loss.
  void loss_and_logit_gradient(const std::uint16_t* y, std::size_t count, bool gradient) {
    const std::size_t c = shape_.vocabulary;
    for (std::size_t p = 0; p < count; ++p) {
      float* z = logits_.data() + p * c;
      float top = z[0];
      for (std::size_t k = 1; k < c; ++k) top = z[k] > top ? z[k] : top;
      const std::size_t label = context_start(y, p)[shape_.order - 1];
      const float target = z[label] - top;
      float sum = 0;
      for (std::size_t k = 0; k < c; ++k) sum += z[k] = std::exp(z[k] - top);
      totals_.loss += static_cast<double>(std::log(sum) - target);
      totals_.predictions += 1;
      if (!gradient) continue;
      const float scale = 1.0f / (sum * static_cast<float>(count));
      for (std::size_t k = 0; k < c; ++k) z[k] *= scale;
      z[label] -= 1.0f / static_cast<float>(count);
    }
  }

  void backward(const std::uint16_t* x, std::size_t count) {
    const auto& s = shape_;
    const auto m = static_cast<int>(count), h = static_cast<int>(s.hidden),
               d = static_cast<int>(s.inputs()), c = static_cast<int>(s.vocabulary);
    float* g = gradient_.data();
    const float* a = hidden_.data();
    float* da = hidden_gradient_.data();
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, h, c, m, 1.0f, a, h, logits_.data(), c,
                0.0f, g + s.w2(), c);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, h, c, 1.0f, logits_.data(), c,
                parameters_.data() + s.w2(), c, 0.0f, da, h);
    for (std::size_t i = 0; i < count * s.hidden; ++i)
      if (a[i] <= 0.0f) da[i] = 0.0f;
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, d, h, m, 1.0f, inputs_.data(), d, da, h,
                0.0f, g + s.w1(), h);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, d, h, 1.0f, da, h,
                parameters_.data() + s.w1(), h, 0.0f, input_gradient_.data(), d);
    // The biases' gradients are column sums: products with a vector of ones.
    cblas_sgemv(CblasRowMajor, CblasTrans, m, h, 1.0f, da, h, ones_.data(), 1, 0.0f, g + s.b1(), 1);
    cblas_sgemv(CblasRowMajor, CblasTrans, m, c, 1.0f, logits_.data(), c, ones_.data(), 1, 0.0f,
                g + s.b2(), 1);
    // Each context byte's embedding receives its slice of the input row's gradient.
    float* table = g + s.table();
    std::fill(table, table + s.vocabulary * s.embedding, 0.0f);
    for (std::size_t p = 0; p < count; ++p) {
      const std::uint16_t* bytes = context_start(x, p);
      const float* row = input_gradient_.data() + p * s.inputs();
      for (std::size_t j = 0; j < s.order; ++j)
        for (std::size_t e = 0; e < s.embedding; ++e)
          table[bytes[j] * s.embedding + e] += row[j * s.embedding + e];
    }
  }

  ByteLmShape shape_;
  std::vector<float> parameters_, first_moment_, second_moment_, gradient_;
  std::vector<float> inputs_, hidden_, logits_, hidden_gradient_, input_gradient_;
  std::vector<float> ones_;
  LmTotals totals_;
};

}  // namespace examples
