// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// The examples' softmax-regression classifier: logits = x W + b, trained by SGD on the mean
// cross-entropy. The per-row arithmetic is one host/device function, so a kernel and a host
// loop compute the same thing; the parameters are one flat vector (weights, then bias), so
// a data-parallel job averages a gradient with a single all-reduce.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

#include "resident/config.hpp"

namespace examples {

constexpr std::size_t max_classes = 16;  // the logits of a row live in registers

/// Loss and prediction of one row, with its gradient handed to `add(index, value)` (weights
/// at `f * classes + c`, bias at `features * classes + c`) unless `add` ignores it.
template <class AddGradient>
RESIDENT_HOST_DEVICE inline float softmax_row(const float* x, std::size_t label,
                                              const float* parameters, std::size_t features,
                                              std::size_t classes, bool& correct,
                                              const AddGradient& add) {
  float logits[max_classes];
  const float* bias = parameters + features * classes;
  float top = -3.0e38f;
  std::size_t best = 0;
  for (std::size_t c = 0; c < classes; ++c) {
    float z = bias[c];
    for (std::size_t f = 0; f < features; ++f) z += parameters[f * classes + c] * x[f];
    logits[c] = z;
    if (z > top) {
      top = z;
      best = c;
    }
  }
  float total = 0.0f;
  for (std::size_t c = 0; c < classes; ++c) total += (logits[c] = expf(logits[c] - top));
  correct = best == label;
  for (std::size_t c = 0; c < classes; ++c) {
    const float delta = logits[c] / total - (c == label ? 1.0f : 0.0f);
    add(features * classes + c, delta);
    for (std::size_t f = 0; f < features; ++f) add(f * classes + c, delta * x[f]);
  }
  const float p = logits[label] / total;
  return -logf(p > 1e-12f ? p : 1e-12f);
}

/// Gradient sink that sums into host memory.
struct AddTo {
  float* gradient;
  RESIDENT_HOST_DEVICE void operator()(std::size_t index, float value) const {
    gradient[index] += value;
  }
};

/// Gradient sink of an evaluation pass.
struct Ignore {
  RESIDENT_HOST_DEVICE void operator()(std::size_t /*index*/, float /*value*/) const {}
};

class SoftmaxRegression {
 public:
  SoftmaxRegression(std::size_t features, std::size_t classes)
      : features_(features), classes_(classes), parameters_((features + 1) * classes, 0.0f) {}

  [[nodiscard]] std::size_t features() const { return features_; }
  [[nodiscard]] std::size_t classes() const { return classes_; }
  [[nodiscard]] const std::vector<float>& parameters() const { return parameters_; }

  /// Over rows `[0, valid)` (`row(r)` gives row r's features): adds the summed gradient to
  /// `gradient` (`parameters().size()` floats) unless it is null, counts correct predictions;
  /// returns the summed loss.
  template <class Row, class Label>
  double accumulate(Row&& row, const Label* labels, std::size_t valid, float* gradient,
                    std::size_t& correct) const {
    double loss = 0;
    for (std::size_t r = 0; r < valid; ++r) {
      bool right = false;
      const auto label = static_cast<std::size_t>(labels[r]);
      loss += gradient != nullptr ? softmax_row(row(r), label, parameters_.data(), features_,
                                                classes_, right, AddTo{gradient})
                                  : softmax_row(row(r), label, parameters_.data(), features_,
                                                classes_, right, Ignore{});
      correct += right ? 1 : 0;
    }
    return loss;
  }

  /// Puts the parameters back to `parameters` (of a model of this shape): a resumed run's.
  void restore(const std::vector<float>& parameters) { parameters_ = parameters; }

  /// One SGD step on a gradient summed over `rows` rows.
  void apply(const float* gradient, double rows, float rate) {
    if (rows <= 0) return;
    const auto scale = static_cast<float>(rate / rows);
    for (std::size_t i = 0; i < parameters_.size(); ++i) parameters_[i] -= scale * gradient[i];
  }

 private:
  std::size_t features_, classes_;
  std::vector<float> parameters_;
};

}  // namespace examples
