// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <resident/resident.hpp>
#include <vector>

// Plan, upload once, then three sample-shuffled epochs of float batches converted on the fly
// from uint8 pixels, in any memory space.
template <class Space>
int train(const Space& space, const char* where) {
  // 1. Host data, already preprocessed: any contiguous row-major buffer, typed, not owned.
  const std::size_t rows = 60000;
  std::vector<std::uint8_t> images(rows * 28 * 28, 128);
  std::vector<std::int32_t> labels(rows, 7);
  resident::HostTensor<const std::uint8_t> x(images.data(), {rows, 28, 28});
  resident::HostTensor<const std::int32_t> y(labels.data(), {rows});

  // 2. Options and a plan: does it fit, after leaving reserve_bytes free for the model?
  resident::DatasetOptions options;
  options.batch_size = 256;
  options.remainder = resident::Remainder::drop;  // or partial (the default), pad
  const resident::Plan plan = resident::plan(space, options, x, y);
  std::cout << "on " << where << ":\n" << plan << '\n';  // fits, needed/free/total, advice
  if (!plan.fits) return 1;  // or resident::make_dataset: it streams what does not fit

  // 3. Upload once: capacity check, one allocation, copy. On return the upload is complete
  //    and `images`/`labels` may be freed.
  resident::DeviceDataset ds(space, options, x, y);

  // 4. Epochs: a seeded shuffle of all rows, gathered into a small ring, uint8 pixels
  //    converted to float on the way; Shuffle::none and ::batches are zero-copy views.
  const auto to_float = resident::convert<0>(resident::Normalize{1.0f / 255, 0.0f});
  std::vector<float> pixels(options.batch_size * 28 * 28);
  std::vector<std::int32_t> classes(options.batch_size);
  for (std::uint64_t epoch = 0; epoch < 3; ++epoch) {
    double sum = 0;
    for (auto [xb, yb] : ds.epoch({42, epoch, resident::Shuffle::samples}, to_float)) {
      // xb: BatchView<const float> (256 rows of 28x28), yb: BatchView<const std::int32_t>,
      // in the space's memory: a training step launches its kernels on ds.stream() with
      // xb.data() and yb.data(). Here the batch is copied back to the host to be checked.
      space.copy_to_host(pixels.data(), xb.data(), xb.bytes(), ds.stream());
      space.copy_to_host(classes.data(), yb.data(), yb.bytes(), ds.stream());
      space.synchronize(ds.stream());
      for (std::size_t r = 0; r < xb.valid_rows(); ++r)
        sum += pixels[r * xb.row_elements()] * classes[r];
    }
    std::printf("epoch %llu: %zu batches, sum %.1f\n", static_cast<unsigned long long>(epoch),
                ds.num_batches(), sum);
  }
  return 0;
}

int main() {
#if defined(__CUDACC__)  // nvcc compiled this unit, and with it its epochs' kernels
  if (resident::CudaSpace::device_count() > 0) return train(resident::CudaSpace{0}, "cuda:0");
  std::cout << "no CUDA device here: ";
#else
  std::cout << "compiled without nvcc: ";
#endif
  return train(resident::HostSpace{}, "the host");
}
