// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// A libtorch (PyTorch's C++ frontend) training loop fed by resident: a small convolutional
// network in torch::nn, trained with torch::optim::SGD on scikit-learn's digits as
// scripts/prepare_digits.py writes them. The pixels are staged once, as the bytes they are,
// into the space's memory; each epoch gathers a fresh sample-shuffled order converted on the
// way (the pixels to float by Normalize, the labels to int64 by Cast), and libtorch reads every
// batch where it lies: `to_tensors` makes tensors of resident's memory, zero-copy, so the loop
// holds no DataLoader and no host copy. A seeded random fifth is held out (PyTorch's
// `random_split`): the training part and the held-out part are two `Subset`s of the one
// dataset, views of its allocation with no copy, and the held-out part is one gathered batch.
//
//   train_libtorch --x digits_x.npy --y digits_y.npy [--device host|cuda] [--epochs N]
//                  [--batch B] [--rate R] [--seed S] [--memory cuda|torch]
//
// X is uint8 pixels 0..16, shape (rows, 64); Y int32 labels 0..9. `--device cuda` stages the
// data in CudaSpace and trains on torch::kCUDA: it needs a libtorch built with CUDA, and this
// file compiled by nvcc (a converted, sample-shuffled epoch on the device gathers with
// resident's kernels, which only a unit nvcc compiles can launch). `--memory torch` allocates
// the device's datasets from libtorch's caching allocator (`TorchCudaResource`) instead of
// `cudaMalloc`, so that resident and the model share one pool, and prints what libtorch counts
// as allocated before, while and after the datasets live.
#include <torch/torch.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <string>

#include "flags.hpp"
#include "resident/resident.hpp"
#include "resident/torch.hpp"

namespace {

constexpr std::size_t side = 8;  // the digits are 8 x 8 single-channel images
constexpr std::size_t classes = 10;
constexpr float pixel_scale = 1.0f / 16;  // pixels are 0..16: inputs in [0, 1]

struct Arguments {
  std::string x, y, device = "host", memory = "cuda";
  std::uint64_t epochs = 10;
  std::size_t batch = 32;
  double rate = 0.05;
  std::uint64_t seed = 1;
};

/// Two 3x3 convolutions keep the 8 x 8 grid (padding 1), one 2 x 2 pooling halves it, a linear
/// layer reads the 32 channels of 4 x 4 out as 10 logits.
torch::nn::Sequential make_network() {
  namespace nn = torch::nn;
  return nn::Sequential(nn::Conv2d(nn::Conv2dOptions(1, 16, 3).padding(1)), nn::ReLU(),
                        nn::Conv2d(nn::Conv2dOptions(16, 32, 3).padding(1)), nn::ReLU(),
                        nn::MaxPool2d(nn::MaxPool2dOptions(2)), nn::Flatten(),
                        nn::Linear(32 * (side / 2) * (side / 2), classes));
}

using Clock = std::chrono::steady_clock;

/// Trains on a seeded random four fifths of the rows, in `space` (whose memory libtorch reads as
/// `device`), and prints the per-epoch loss and the accuracy on the fifth held out.
/// `staged(bytes)` is called once the dataset (`bytes` in all) is in the space.
template <class Space, class Staged>
int train(const Space& space, const torch::Device& device,
          const resident::HostTensor<const std::uint8_t>& x,
          const resident::HostTensor<const std::int32_t>& y, const Arguments& args,
          const Staged& staged) {
  const std::size_t rows = x.rows();
  resident::DatasetOptions options;
  options.batch_size = args.batch;
  // The pixels as 1 x 8 x 8 rows: the batches are then (batch, channel, height, width), the
  // layout Conv2d reads, with no reshape in the loop.
  const resident::DeviceDataset<Space, std::uint8_t, std::int32_t> digits(
      space, options, resident::HostTensor<const std::uint8_t>(x.data(), {rows, 1, side, side}), y);
  // Two parts of the one allocation, rows drawn by the seed: the held-out part is served as
  // one batch of every row.
  using Part = resident::Subset<Space, std::uint8_t, std::int32_t>;
  const auto parts =
      resident::random_split_rows(rows, resident::split_lengths(rows, {0.8, 0.2}), args.seed);
  Part train_set(digits, parts[0], options);
  resident::DatasetOptions whole = options;
  whole.batch_size = parts[1].size();
  Part held_out_set(digits, parts[1], whole);
  const std::size_t train_rows = train_set.num_rows(), held_out_rows = held_out_set.num_rows();
  std::printf(
      "train_libtorch: %zu images of %zu x %zu pixels on %s (libtorch %s); %zu for training, "
      "%zu held out; batch %zu\n",
      rows, side, side, space.name().c_str(), device.str().c_str(), train_rows, held_out_rows,
      args.batch);
  staged(digits.bytes() + train_set.map_bytes() + held_out_set.map_bytes());

  // One seed makes the initial weights and the shuffles: a run is repeatable.
  torch::manual_seed(args.seed);
  torch::nn::Sequential network = make_network();
  network->to(device);
  torch::optim::SGD optimizer(network->parameters(),
                              torch::optim::SGDOptions(args.rate).momentum(0.9));

  for (std::uint64_t e = 0; e < args.epochs; ++e) {
    const auto start = Clock::now();
    network->train();
    // Summed on the device and read once an epoch: reading each step's loss would make the
    // host wait for every step on CUDA.
    torch::Tensor loss_sum = torch::zeros({}, torch::TensorOptions().device(device));
    // A conversion per field: the pixels normalized to float, the int32 labels widened to the
    // int64 that cross_entropy takes, both as they are gathered.
    auto epoch = train_set.epoch({args.seed, e, resident::Shuffle::samples},
                                 resident::convert<0>(resident::Normalize{pixel_scale, 0}),
                                 resident::convert<1>(resident::Cast<std::int64_t>{}));
    for (std::size_t k = 0; k < epoch.size(); ++k) {
      // x: float (rows, 1, 8, 8), y: int64 (rows), both in the space's memory. The batch's
      // slot is handed back to the epoch's gathers when the binding goes out of scope, after
      // the step's work is enqueued.
      auto [x, y] = resident::to_tensors(epoch, k);  // no copy; ordered on torch's stream
      auto loss = torch::nn::functional::cross_entropy(network->forward(x), y);
      optimizer.zero_grad();
      loss.backward();
      optimizer.step();
      loss_sum += loss.detach() * x.size(0);
    }
    const double mean_loss = loss_sum.item<double>() / train_rows;  // waits for the epoch's steps
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    std::printf("epoch %llu: loss %.4f, %.2f s\n", static_cast<unsigned long long>(e), mean_loss,
                seconds);
  }

  // The held-out rows in one forward pass, converted as the training batches are: eval mode (no
  // layer here differs, but a network with dropout or batch norm would), no autograd graph.
  network->eval();
  const torch::NoGradGuard no_grad;
  auto held_out = held_out_set.epoch({}, resident::convert<0>(resident::Normalize{pixel_scale, 0}),
                                     resident::convert<1>(resident::Cast<std::int64_t>{}));
  auto [pixels, labels] = resident::to_tensors(held_out, 0);
  const torch::Tensor hits = network->forward(pixels).argmax(1).eq(labels).sum();
  const auto correct = hits.item<std::int64_t>();
  std::printf("held-out accuracy %.2f %%\n",
              100.0 * static_cast<double>(correct) / static_cast<double>(held_out_rows));
  return 0;
}

#if RESIDENT_TORCH_HAS_CUDA
/// Bytes libtorch's caching allocator has handed out on device 0 (`memory_allocated`).
long long torch_allocated() {
  return static_cast<long long>(
      c10::cuda::CUDACachingAllocator::getDeviceStats(0).allocated_bytes[0].current);
}

/// Trains with the datasets in libtorch's caching allocator, and prints what it counts as
/// allocated before the datasets, while they live, and after they are gone.
int train_in_torch_memory(const Arguments& args, const resident::HostTensor<const std::uint8_t>& x,
                          const resident::HostTensor<const std::int32_t>& y) {
  torch::cuda::synchronize();
  const long long before = torch_allocated();
  long long with = 0;
  std::size_t dataset_bytes = 0;
  const int status = train(resident::CudaSpace{0}.with_resource(resident::TorchCudaResource{}),
                           torch::Device(torch::kCUDA, 0), x, y, args, [&](std::size_t bytes) {
                             with = torch_allocated();
                             dataset_bytes = bytes;
                           });
  torch::cuda::synchronize();
  const long long after = torch_allocated();
  std::printf(
      "torch memory_allocated: %lld B before the datasets, %lld B with them (+%lld B; the "
      "datasets take %zu B), %lld B after them\n",
      before, with, with - before, dataset_bytes, after);
  return status;
}
#endif

int train_on_device(const Arguments& args, const resident::HostTensor<const std::uint8_t>& x,
                    const resident::HostTensor<const std::int32_t>& y) {
  const auto quiet = [](std::size_t /*bytes*/) {};
  if (args.device == "host") return train(resident::HostSpace{}, torch::kCPU, x, y, args, quiet);
#if RESIDENT_HAS_CUDA && defined(__CUDACC__)
  if (!torch::cuda::is_available()) {
    std::fprintf(stderr,
                 "train_libtorch: --device cuda, but libtorch sees no CUDA device (a libtorch "
                 "built without CUDA, or no GPU here); use --device host\n");
    return 1;
  }
#if RESIDENT_TORCH_HAS_CUDA
  if (args.memory == "torch") return train_in_torch_memory(args, x, y);
#endif
  return train(resident::CudaSpace{0}, torch::Device(torch::kCUDA, 0), x, y, args, quiet);
#elif RESIDENT_HAS_CUDA
  std::fprintf(stderr,
               "train_libtorch: --device cuda needs this file compiled by nvcc: a converted, "
               "sample-shuffled epoch in CudaSpace gathers with resident's kernels; use "
               "--device host\n");
  return 1;
#else
  std::fprintf(stderr,
               "train_libtorch: built without CUDA; --device cuda is unavailable, use --device "
               "host\n");
  return 1;
#endif
}

}  // namespace

int main(int argc, char** argv) {
  Arguments args;
  const bool parsed = examples::Flags()
                          .add("x", args.x)
                          .add("y", args.y)
                          .add("device", args.device)
                          .add("epochs", args.epochs)
                          .add("batch", args.batch)
                          .add("rate", args.rate)
                          .add("seed", args.seed)
                          .add("memory", args.memory)
                          .parse(argc, argv);
  if (!parsed || (args.device != "host" && args.device != "cuda") || args.batch == 0 ||
      (args.memory != "cuda" && args.memory != "torch")) {
    std::fprintf(stderr,
                 "usage: train_libtorch --x X.npy --y Y.npy [--device host|cuda] [--epochs N] "
                 "[--batch B] [--rate R] [--seed S] [--memory cuda|torch]\n");
    return 2;
  }
  if (args.memory == "torch" && (args.device != "cuda" || !RESIDENT_TORCH_HAS_CUDA)) {
    std::fprintf(stderr,
                 "train_libtorch: --memory torch allocates the device's datasets from libtorch's "
                 "CUDA caching allocator: it needs --device cuda and a libtorch built with "
                 "CUDA\n");
    return 2;
  }
  if (args.x.empty() || args.y.empty()) {
    std::fprintf(stderr,
                 "train_libtorch: --x and --y are required: the digits' pixels and labels, "
                 "as scripts/prepare_digits.py <dir> writes them (<dir>/digits_x.npy, "
                 "<dir>/digits_y.npy)\n");
    return 2;
  }
  // One thread: runs repeat exactly, and two tests at once on a 2-core machine do not fight
  // over cores (the network is small; more threads gain little).
  torch::set_num_threads(1);
  try {
    const resident::npy::Array x = resident::npy::load(args.x), y = resident::npy::load(args.y);
    const auto pixels = x.as<std::uint8_t>();
    const auto labels = y.as<std::int32_t>();
    if (pixels.row_elements() != side * side || labels.shape().rank() != 1 ||
        labels.rows() != pixels.rows() || pixels.rows() < 5) {
      std::fprintf(stderr,
                   "train_libtorch: expected uint8 pixels of shape (rows, 64) and int32 labels "
                   "of shape (rows,), at least 5 rows; found pixels %s and labels %s: write "
                   "them with scripts/prepare_digits.py\n",
                   x.shape().to_string().c_str(), y.shape().to_string().c_str());
      return 1;
    }
    return train_on_device(args, pixels, labels);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "train_libtorch: %s\n", error.what());
    return 1;
  }
}
