// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// C++20 style as users write it: designated initializers (every option left out must still
// compile warning-free under -Wextra) and byte literals.
#include <cstdint>
#include <cstdio>
#include <resident/resident.hpp>
#include <vector>

using namespace resident::literals;

int main() {
  std::vector<float> images(600 * 28 * 28, 0.5f);
  std::vector<std::int32_t> labels(600, 1);
  const resident::HostTensor<const float> x(images.data(), {600, 28, 28});
  const resident::HostTensor<const std::int32_t> y(labels.data(), {600});
  resident::DatasetOptions options{
      .batch_size = 256, .remainder = resident::Remainder::drop, .reserve_bytes = 1_MiB};
  options.on_progress = [](resident::Progress progress) {
    return progress.bytes_done <= progress.bytes_total;
  };
  const auto space = resident::HostSpace::with_budget(8_MiB);
  const auto [free_bytes, total_bytes] = space.capacity();
  const resident::DeviceDataset ds(space, options, x, y);
  std::size_t rows = 0;
  for (std::size_t i = 0; i < ds.num_batches(); ++i) {
    const auto [xb, yb] = ds.batch(i);
    rows += xb.rows() == yb.rows() ? xb.rows() : 0;
  }
  const bool ok = rows == 512 && free_bytes == total_bytes && ds.num_batches() == 2;
  std::printf("consumer (C++20): %s\n", ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
