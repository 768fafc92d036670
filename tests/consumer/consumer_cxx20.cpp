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
  // The epoch loop as the README writes it.
  resident::DeviceDataset<resident::HostSpace, float, std::int32_t> host(resident::HostSpace{},
                                                                         options, x, y);
  std::size_t shuffled = 0;
  for (std::uint64_t e = 0; e < 2; ++e) {
    for (auto [xb, yb] :
         host.epoch({.seed = 42, .epoch = e, .shuffle = resident::Shuffle::samples})) {
      shuffled += xb.valid_rows() == yb.valid_rows() ? xb.valid_rows() : 0;
    }
  }
  std::vector<std::uint8_t> pixels(600 * 3 * 4, 128);
  resident::DeviceDataset compact(
      resident::HostSpace{}, options,
      resident::HostTensor<const std::uint8_t>(pixels.data(), {600, 3, 4}), y);
  const auto normalize =
      resident::Normalize::mean_std({0.5f, 0.5f, 0.5f}, {0.25f, 0.25f, 0.25f}, 4, 1.0f / 255);
  float first = 0;
  for (auto [xb, yb] : compact.epoch({.seed = 1, .epoch = 0, .shuffle = resident::Shuffle::samples},
                                     resident::convert<0>(normalize))) {
    first = xb.data()[0];
    (void)yb;
  }
  const bool ok = rows == 512 && free_bytes == total_bytes && ds.num_batches() == 2 &&
                  shuffled == 2 * 512 && first > 0.0f && first < 0.02f;
  std::printf("consumer (C++20): %s\n", ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
