// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// When the data does not fit: ask the planner, let make_dataset choose, and train anyway.
// The memory is a HostSpace budget (--budget-kib, default a quarter of the training data) so
// that the fallback is seen on any machine; with CudaSpace the code is the same.
//
//   stream_fallback [--rows N] [--budget-kib K] [--epochs E] [--batch B]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "resident/resident.hpp"
#include "softmax_regression.hpp"
#include "synthetic.hpp"

int run(int argc, char** argv) {
  std::size_t rows = 20000, epochs = 3, batch = 64, budget_kib = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const std::size_t value = std::strtoull(argv[i + 1], nullptr, 10);
    if (flag == "--rows")
      rows = value;
    else if (flag == "--budget-kib")
      budget_kib = value;
    else if (flag == "--epochs")
      epochs = value;
    else if (flag == "--batch")
      batch = value;
    else {
      std::fprintf(stderr,
                   "usage: stream_fallback [--rows N] [--budget-kib K] [--epochs E] [--batch B]\n");
      return 2;
    }
  }
  const examples::Synthetic data = examples::make_synthetic(rows);
  const std::size_t train_rows = rows * 4 / 5, features = examples::features_per_row;
  const resident::HostTensor<const float> x(data.features.data(), {train_rows, features});
  const resident::HostTensor<const std::int32_t> y(data.labels.data(), {train_rows});
  if (budget_kib == 0) budget_kib = (x.bytes() + y.bytes()) / 4 / 1024;
  const resident::HostSpace space = resident::HostSpace::with_budget(budget_kib << 10);

  resident::DatasetOptions options;
  options.batch_size = batch;
  options.remainder = resident::Remainder::pad;
  std::cout << resident::plan(space, options, x, y) << "\n";

  // The fields must outlive a streamed dataset: it reads them every epoch.
  auto train_set = resident::make_dataset(space, options, x, y);
  std::printf("stream_fallback: %s, %zu batches, %s of the %s budget in use\n",
              train_set.is_streaming() ? "streaming" : "preloaded", train_set.num_batches(),
              resident::detail::format_bytes(space.used_bytes()).c_str(),
              resident::detail::format_bytes(budget_kib << 10).c_str());
  if (const auto* streamed = train_set.streaming())
    std::printf(
        "  chunks of %zu batches, %zu chunk slots, %zu loading ahead; shuffle window %zu rows\n",
        streamed->chunk_batches(), streamed->chunk_slots(), streamed->prefetch_chunks(),
        streamed->window_rows());

  examples::SoftmaxRegression model(features, examples::classes);
  std::vector<float> gradient(model.parameters().size());
  for (std::size_t epoch = 0; epoch < epochs; ++epoch) {
    std::size_t correct = 0, peak = 0;
    double loss = 0;
    for (auto [xb, yb] : train_set.epoch({7, epoch, resident::Shuffle::batches})) {
      std::fill(gradient.begin(), gradient.end(), 0.0f);
      loss += model.accumulate([&](std::size_t r) { return xb.row(r); }, yb.data(), xb.valid_rows(),
                               gradient.data(), correct);
      model.apply(gradient.data(), static_cast<double>(xb.valid_rows()), 0.5f);
      peak = std::max(peak, space.used_bytes());
    }
    std::printf("epoch %zu: loss %.4f, train accuracy %.2f %%, peak memory %s\n", epoch,
                loss / static_cast<double>(train_rows),
                100.0 * static_cast<double>(correct) / static_cast<double>(train_rows),
                resident::detail::format_bytes(peak).c_str());
  }
  std::size_t test_correct = 0;
  const std::size_t test_rows = rows - train_rows;
  (void)model.accumulate(
      [&](std::size_t r) { return data.features.data() + (train_rows + r) * features; },
      data.labels.data() + train_rows, test_rows, nullptr, test_correct);
  std::printf("stream_fallback: final test accuracy %.2f %%\n",
              100.0 * static_cast<double>(test_correct) / static_cast<double>(test_rows));
  return 0;
}

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const resident::Error& error) {
    std::fprintf(stderr, "stream_fallback: %s\n", error.what());
    return 1;
  }
}
