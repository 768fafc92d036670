// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// Quick start: an embedded synthetic 10-class dataset (features + labels) is planned,
// uploaded once, then read by a nearest-centroid classifier: a sample-shuffled epoch learns
// the class means, a pass of zero-copy batches in order measures accuracy. Runs on CudaSpace when a
// device is present (this file is compiled by nvcc then), otherwise on HostSpace, and says which.
// Uploads that take more than half a second draw a progress bar (try --rows 20000000).
//
//   quickstart [--space auto|host|cuda] [--rows N]
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <resident/resident.hpp>
#include <string>
#include <type_traits>
#include <vector>

#include "synthetic.hpp"

namespace {

using examples::classes;
using examples::features_per_row;
using examples::make_synthetic;
using examples::Synthetic;

struct Centroids {
  std::vector<float> sums = std::vector<float>(classes * features_per_row, 0.0f);
  std::vector<std::uint32_t> counts = std::vector<std::uint32_t>(classes, 0);
};

std::size_t nearest(const float* row, const Centroids& centroids) {
  std::size_t best = 0;
  float best_distance = 0.0f;
  for (std::size_t c = 0; c < classes; ++c) {
    float distance = 0.0f;
    const float count = static_cast<float>(centroids.counts[c] ? centroids.counts[c] : 1);
    for (std::size_t f = 0; f < features_per_row; ++f) {
      const float delta = row[f] - centroids.sums[c * features_per_row + f] / count;
      distance += delta * delta;
    }
    if (c == 0 || distance < best_distance) {
      best = c;
      best_distance = distance;
    }
  }
  return best;
}

// Host compute: plain loops over the batch views.
struct HostCompute {
  Centroids centroids;
  std::size_t correct = 0;

  void learn(resident::BatchView<const float> x, resident::BatchView<const std::int32_t> y) {
    for (std::size_t r = 0; r < x.rows(); ++r) {
      const auto label = static_cast<std::size_t>(y.data()[r]);
      ++centroids.counts[label];
      for (std::size_t f = 0; f < features_per_row; ++f)
        centroids.sums[label * features_per_row + f] += x.row(r)[f];
    }
  }
  void evaluate(resident::BatchView<const float> x, resident::BatchView<const std::int32_t> y) {
    for (std::size_t r = 0; r < x.rows(); ++r)
      correct += nearest(x.row(r), centroids) == static_cast<std::size_t>(y.data()[r]) ? 1 : 0;
  }
  void finish() {}
};

#if defined(__CUDACC__) && RESIDENT_HAS_CUDA
__global__ void learn_kernel(resident::BatchView<const float> x,
                             resident::BatchView<const std::int32_t> y, float* sums,
                             std::uint32_t* counts) {
  const auto features = x.to_mdspan<2>();
  const std::size_t row = blockIdx.x;
  const auto label = static_cast<std::size_t>(y.data()[row]);
  for (std::size_t f = threadIdx.x; f < features.extent(1); f += blockDim.x)
    atomicAdd(&sums[label * features_per_row + f], features(row, f));
  if (threadIdx.x == 0) atomicAdd(&counts[label], 1u);
}

__global__ void evaluate_kernel(resident::BatchView<const float> x,
                                resident::BatchView<const std::int32_t> y, const float* sums,
                                const std::uint32_t* counts, unsigned long long* correct) {
  const std::size_t row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= x.rows()) return;
  const float* features = x.row(row);
  std::size_t best = 0;
  float best_distance = 0.0f;
  for (std::size_t c = 0; c < classes; ++c) {
    const float count = static_cast<float>(counts[c] ? counts[c] : 1);
    float distance = 0.0f;
    for (std::size_t f = 0; f < features_per_row; ++f) {
      const float delta = features[f] - sums[c * features_per_row + f] / count;
      distance += delta * delta;
    }
    if (c == 0 || distance < best_distance) {
      best = c;
      best_distance = distance;
    }
  }
  if (best == static_cast<std::size_t>(y.data()[row])) atomicAdd(correct, 1ULL);
}

// Device compute: one kernel per batch on the dataset's stream; no host synchronisation
// until the epoch is over.
struct CudaCompute {
  explicit CudaCompute(cudaStream_t stream) : stream_(stream) {
    RESIDENT_CUDA_TRY(cudaMalloc(&sums_, classes * features_per_row * sizeof(float)));
    RESIDENT_CUDA_TRY(cudaMalloc(&counts_, classes * sizeof(std::uint32_t)));
    RESIDENT_CUDA_TRY(cudaMalloc(&correct_device_, sizeof(unsigned long long)));
    RESIDENT_CUDA_TRY(
        cudaMemsetAsync(sums_, 0, classes * features_per_row * sizeof(float), stream_));
    RESIDENT_CUDA_TRY(cudaMemsetAsync(counts_, 0, classes * sizeof(std::uint32_t), stream_));
    RESIDENT_CUDA_TRY(cudaMemsetAsync(correct_device_, 0, sizeof(unsigned long long), stream_));
  }
  ~CudaCompute() {
    (void)cudaFree(sums_);
    (void)cudaFree(counts_);
    (void)cudaFree(correct_device_);
  }
  CudaCompute(const CudaCompute&) = delete;
  CudaCompute& operator=(const CudaCompute&) = delete;

  void learn(resident::BatchView<const float> x, resident::BatchView<const std::int32_t> y) {
    learn_kernel<<<static_cast<unsigned>(x.rows()), 64, 0, stream_>>>(x, y, sums_, counts_);
    RESIDENT_CUDA_TRY(cudaGetLastError());
  }
  void evaluate(resident::BatchView<const float> x, resident::BatchView<const std::int32_t> y) {
    const auto blocks = static_cast<unsigned>((x.rows() + 127) / 128);
    evaluate_kernel<<<blocks, 128, 0, stream_>>>(x, y, sums_, counts_, correct_device_);
    RESIDENT_CUDA_TRY(cudaGetLastError());
  }
  void finish() {
    unsigned long long value = 0;
    RESIDENT_CUDA_TRY(
        cudaMemcpyAsync(&value, correct_device_, sizeof value, cudaMemcpyDeviceToHost, stream_));
    RESIDENT_CUDA_TRY(cudaStreamSynchronize(stream_));
    correct = static_cast<std::size_t>(value);
  }

  std::size_t correct = 0;

 private:
  cudaStream_t stream_;
  float* sums_ = nullptr;
  std::uint32_t* counts_ = nullptr;
  unsigned long long* correct_device_ = nullptr;
};
#endif

// A terminal progress bar for long uploads: silent for the first half second, so that quick
// uploads print nothing, then redrawn in place at every percent.
class ProgressBar {
 public:
  bool operator()(const resident::Progress& progress) {
    if (!shown_ && progress.elapsed_seconds < 0.5) return true;
    const bool done = progress.bytes_done == progress.bytes_total;
    if (shown_ && !done && progress.fraction() < drawn_ + 0.01) return true;  // 1 % steps
    shown_ = true;
    drawn_ = progress.fraction();
    constexpr int width = 40;
    const int filled = static_cast<int>(progress.fraction() * width);
    const double rate = static_cast<double>(progress.bytes_done) /
                        (progress.elapsed_seconds > 0 ? progress.elapsed_seconds : 1) / 1e9;
    std::fprintf(stderr, "\rupload [%.*s%*s] %5.1f %% of %.1f MiB, %.2f GB/s", filled,
                 "########################################", width - filled, "",
                 100.0 * progress.fraction(), static_cast<double>(progress.bytes_total) / (1 << 20),
                 rate);
    if (done) std::fputc('\n', stderr);
    return true;  // never cancels
  }

 private:
  bool shown_ = false;
  double drawn_ = 0.0;
};

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

template <class Space, class Compute>
int run(const Space& space, const Synthetic& data) {
  const std::size_t rows = data.labels.size();
  const resident::HostTensor<const float> x(data.features.data(), {rows, features_per_row});
  const resident::HostTensor<const std::int32_t> y(data.labels.data(), {rows});
  resident::DatasetOptions options;
  options.batch_size = 256;
  options.remainder = resident::Remainder::partial;
  options.on_progress = ProgressBar{};

  const resident::Plan plan = resident::plan(space, options, x, y);
  std::printf("plan: %s\n", plan.reason.c_str());
  if (!plan.fits) return 2;

  const auto upload_start = std::chrono::steady_clock::now();
  resident::DeviceDataset<Space, float, std::int32_t> ds(space, options, x, y);
  const double upload_seconds = seconds_since(upload_start);
  std::printf("uploaded %zu rows (%.1f MiB) in one allocation in %.3f s\n", ds.num_rows(),
              static_cast<double>(ds.bytes()) / (1 << 20), upload_seconds);

  Compute compute = [&] {
    if constexpr (std::is_same_v<Compute, HostCompute>)
      return Compute{};
    else
      return Compute(ds.stream());
  }();
  const auto epoch_start = std::chrono::steady_clock::now();
  // Learning: a sample-shuffled epoch, each batch gathered into the dataset's ring.
  for (const auto [xb, yb] : ds.epoch({42, 0, resident::Shuffle::samples})) compute.learn(xb, yb);
  // Evaluation: batches in order, each a pointer offset (nothing is copied).
  for (std::size_t i = 0; i < ds.num_batches(); ++i) {
    const auto [xb, yb] = ds.batch(i);
    compute.evaluate(xb, yb);
  }
  compute.finish();
  const double epoch_seconds = seconds_since(epoch_start);
  std::printf("2 epochs of %zu batches: nearest-centroid accuracy %.2f %%, %.3g rows/s\n",
              ds.num_batches(),
              100.0 * static_cast<double>(compute.correct) / static_cast<double>(rows),
              2.0 * static_cast<double>(rows) / epoch_seconds);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string space = "auto";
  std::size_t rows = 60000;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--space") == 0)
      space = argv[i + 1];
    else if (std::strcmp(argv[i], "--rows") == 0)
      rows = std::strtoull(argv[i + 1], nullptr, 10);
    else {
      std::fprintf(stderr, "usage: quickstart [--space auto|host|cuda] [--rows N]\n");
      return 2;
    }
  }
  const Synthetic data = make_synthetic(rows);
  try {
#if defined(__CUDACC__) && RESIDENT_HAS_CUDA
    if (space != "host") {
      const int devices = resident::CudaSpace::device_count();
      if (devices > 0 || space == "cuda") {
        std::printf("space: cuda:0 (CudaSpace, %d device(s) present)\n", devices);
        return run<resident::CudaSpace, CudaCompute>(resident::CudaSpace{0}, data);
      }
      std::printf("space: host (HostSpace): no CUDA device or driver on this machine\n");
    } else {
      std::printf("space: host (HostSpace), as asked\n");
    }
#else
    if (space == "cuda") {
      std::fprintf(stderr, "quickstart was built without nvcc; --space cuda is unavailable\n");
      return 2;
    }
    std::printf("space: host (HostSpace)%s\n",
                space == "host" ? ", as asked" : ": this build has no CUDA kernels");
#endif
    return run<resident::HostSpace, HostCompute>(resident::HostSpace{}, data);
  } catch (const resident::Error& error) {
    std::fprintf(stderr, "%s\n", error.what());
    return 1;
  }
}
