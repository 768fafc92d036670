// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// A libtorch (PyTorch's C++ frontend) training loop fed by resident: a small convolutional
// network in torch::nn, trained with torch::optim::SGD on scikit-learn's digits as
// scripts/prepare_digits.py writes them. The pixels are staged once, as the bytes they are,
// into the space's memory; each epoch gathers a fresh sample-shuffled order converted to float
// on the way (Normalize), and libtorch reads every batch where it lies: `to_tensors` makes
// tensors of resident's memory, zero-copy, so the loop holds no DataLoader and no host copy.
// The held-out fifth (the last rows, as train_mlp holds out) is a second dataset whose field is
// read whole as one tensor (`to_tensor`).
//
//   train_libtorch --x digits_x.npy --y digits_y.npy [--device host|cuda] [--epochs N]
//                  [--batch B] [--rate R] [--seed S]
//
// X is uint8 pixels 0..16, shape (rows, 64); Y int32 labels 0..9. `--device cuda` stages the
// data in CudaSpace and trains on torch::kCUDA: it needs a libtorch built with CUDA, and this
// file compiled by nvcc (a converted, sample-shuffled epoch on the device gathers with
// resident's kernels, which only a unit nvcc compiles can launch).
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
  std::string x, y, device = "host";
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

/// Trains on the rows before the last fifth, in `space` (whose memory libtorch reads as
/// `device`), and prints the per-epoch loss and the held-out accuracy.
template <class Space>
int train(const Space& space, const torch::Device& device,
          const resident::HostTensor<const std::uint8_t>& x,
          const resident::HostTensor<const std::int32_t>& y, const Arguments& args) {
  const std::size_t rows = x.rows(), train_rows = rows - rows / 5;
  resident::DatasetOptions options;
  options.batch_size = args.batch;
  // The pixels as 1 x 8 x 8 rows: the batches are then (batch, channel, height, width), the
  // layout Conv2d reads, with no reshape in the loop.
  using Dataset = resident::DeviceDataset<Space, std::uint8_t, std::int32_t>;
  Dataset train_set(space, options,
                    resident::HostTensor<const std::uint8_t>(x.data(), {train_rows, 1, side, side}),
                    resident::HostTensor<const std::int32_t>(y.data(), {train_rows}));
  Dataset held_out_set(
      space, options,
      resident::HostTensor<const std::uint8_t>(x.data() + train_rows * side * side,
                                               {rows - train_rows, 1, side, side}),
      resident::HostTensor<const std::int32_t>(y.data() + train_rows, {rows - train_rows}));
  std::printf(
      "train_libtorch: %zu images of %zu x %zu pixels on %s (libtorch %s); %zu for training, "
      "%zu held out; batch %zu\n",
      rows, side, side, space.name().c_str(), device.str().c_str(), train_rows, rows - train_rows,
      args.batch);

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
    auto epoch = train_set.epoch({args.seed, e, resident::Shuffle::samples},
                                 resident::convert<0>(resident::Normalize{pixel_scale, 0}));
    for (std::size_t k = 0; k < epoch.size(); ++k) {
      // x: float (rows, 1, 8, 8), y: int32 (rows), both in the space's memory. The batch's
      // slot is handed back to the epoch's gathers when the binding goes out of scope, after
      // the step's work is enqueued.
      auto [x, y] = resident::to_tensors(epoch, k);  // no copy; ordered on torch's stream
      auto loss = torch::nn::functional::cross_entropy(network->forward(x), y.to(torch::kLong));
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

  // The held-out rows in one forward pass, as the stored bytes scaled by libtorch: eval mode
  // (no layer here differs, but a network with dropout or batch norm would), no autograd graph.
  network->eval();
  const torch::NoGradGuard no_grad;
  const torch::Tensor pixels = resident::to_tensor(held_out_set, held_out_set.template field<0>());
  const torch::Tensor labels = resident::to_tensor(held_out_set, held_out_set.template field<1>());
  const torch::Tensor predicted =
      network->forward(pixels.to(torch::kFloat32) * pixel_scale).argmax(1);
  const auto correct = predicted.eq(labels.to(torch::kLong)).sum().item<std::int64_t>();
  std::printf("held-out accuracy %.2f %%\n",
              100.0 * static_cast<double>(correct) / static_cast<double>(rows - train_rows));
  return 0;
}

int train_on_device(const Arguments& args, const resident::HostTensor<const std::uint8_t>& x,
                    const resident::HostTensor<const std::int32_t>& y) {
  if (args.device == "host") return train(resident::HostSpace{}, torch::kCPU, x, y, args);
#if RESIDENT_HAS_CUDA && defined(__CUDACC__)
  if (!torch::cuda::is_available()) {
    std::fprintf(stderr,
                 "train_libtorch: --device cuda, but libtorch sees no CUDA device (a libtorch "
                 "built without CUDA, or no GPU here); use --device host\n");
    return 1;
  }
  return train(resident::CudaSpace{0}, torch::Device(torch::kCUDA, 0), x, y, args);
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
                          .parse(argc, argv);
  if (!parsed || (args.device != "host" && args.device != "cuda") || args.batch == 0) {
    std::fprintf(stderr,
                 "usage: train_libtorch --x X.npy --y Y.npy [--device host|cuda] [--epochs N] "
                 "[--batch B] [--rate R] [--seed S]\n");
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
