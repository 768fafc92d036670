// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// A custom training loop to copy: a 2-layer MLP (hidden 256, ReLU, softmax cross-entropy, SGD
// with momentum, fixed seed) fed by a resident dataset's sample-shuffled epochs, evaluated on
// a held-out fifth every epoch. One loop, two compute paths: HostSpace with OpenBLAS, and
// CudaSpace with cuBLAS and the kernels of mlp_cuda.cu, all on the dataset's stream.
//
//   train_mlp [--x X.npy --y Y.npy] [--epochs N] [--batch B] [--space host|cuda|auto]
//             [--seed S] [--rate R] [--scale F] [--augment P]
//             [--stop-after K [--checkpoint FILE]] [--resume FILE]
//
// X is uint8 (normalised on the fly by `--scale`, default 1/255) or float32, Y int32. Without
// files it trains on an embedded synthetic 10-class problem. Each epoch prints the loss,
// train and test accuracy, samples/s, and the share of step time spent obtaining the batch
// (the gather and conversion of Shuffle::samples; on CUDA measured with events on the stream).
// `--augment P` trains twice from the same seed, without and then with every training image
// translated by up to P pixels (`RandomCrop{P}`, zeros filling; no flip), and prints both
// held-out accuracies. The images are the rows' shape: (H, W) or (C, H, W) rows, or flat rows
// of a square single-channel image (the digits' 64 pixels are 8 x 8).
// `--stop-after K` stops after K training steps, as a preempted job would, and writes where the
// run stands to the checkpoint (the epoch's `EpochState`, the weights, the momentum and the
// epoch's totals); `--resume FILE` goes on from one, in a new process, with the batches the
// run would have had: the final loss and weights are those of a run that never stopped, bit
// for bit (the last line prints both).
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "flags.hpp"
#include "mlp.hpp"
#include "resident/resident.hpp"
#include "synthetic.hpp"
#if defined(__CUDACC__) && RESIDENT_HAS_CUDA
#include "mlp_cuda.hpp"
#include "resident/detail/cuda/resources.hpp"
#endif

namespace {

struct Arguments {
  std::string x, y, space = "auto";
  std::size_t epochs = 10, batch = 64;
  std::uint64_t seed = 1;
  float rate = 0.1f, momentum = 0.9f, scale = 0.0f;  // scale 0: 1/255 for uint8, 1 for float
  std::size_t augment = 0;                           // pixels of translation; 0: none
  std::size_t stop_after = 0;                        // training steps before stopping; 0: none
  std::string checkpoint = "train_mlp.checkpoint", resume;
};

/// Where a stopped run stands: its epoch's state and its model's.
struct Checkpoint {
  resident::EpochState epoch;
  examples::ModelState model;
};

void write_checkpoint(const std::string& path, const Checkpoint& checkpoint) {
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr) throw resident::Error("cannot write the checkpoint " + path);
  const auto state = checkpoint.epoch.to_bytes();
  const std::uint64_t count = checkpoint.model.parameters.size();
  const double totals[3] = {checkpoint.model.totals.loss, checkpoint.model.totals.correct,
                            checkpoint.model.totals.rows};
  const bool written =
      std::fwrite(state.data(), state.size(), 1, file) == 1 &&
      std::fwrite(&count, sizeof count, 1, file) == 1 &&
      std::fwrite(checkpoint.model.parameters.data(), sizeof(float), count, file) == count &&
      std::fwrite(checkpoint.model.velocity.data(), sizeof(float), count, file) == count &&
      std::fwrite(totals, sizeof totals, 1, file) == 1;
  if (std::fclose(file) != 0 || !written)
    throw resident::Error("cannot write the checkpoint " + path);
}

Checkpoint read_checkpoint(const std::string& path, std::size_t parameters) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) throw resident::Error("cannot read the checkpoint " + path);
  resident::EpochState::bytes_type state{};
  std::uint64_t count = 0;
  Checkpoint checkpoint;
  double totals[3] = {};
  bool read = std::fread(state.data(), state.size(), 1, file) == 1 &&
              std::fread(&count, sizeof count, 1, file) == 1 && count == parameters;
  if (read) {
    checkpoint.model.parameters.resize(count);
    checkpoint.model.velocity.resize(count);
    read = std::fread(checkpoint.model.parameters.data(), sizeof(float), count, file) == count &&
           std::fread(checkpoint.model.velocity.data(), sizeof(float), count, file) == count &&
           std::fread(totals, sizeof totals, 1, file) == 1 && std::fgetc(file) == EOF;
  }
  std::fclose(file);
  if (!read)
    throw resident::Error("the checkpoint " + path + " is not one of this model (" +
                          std::to_string(parameters) +
                          " parameters); resume with the options "
                          "of the run that wrote it");
  checkpoint.epoch = resident::EpochState::from_bytes(state);
  checkpoint.model.totals = {totals[0], totals[1], totals[2]};
  return checkpoint;
}

/// FNV-1a of the weights' bytes: equal only for weights equal bit for bit.
std::uint64_t weights_fingerprint(const std::vector<float>& weights) {
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  const auto* bytes = reinterpret_cast<const unsigned char*>(weights.data());
  for (std::size_t i = 0; i < weights.size() * sizeof(float); ++i)
    hash = (hash ^ bytes[i]) * 0x100000001b3ULL;
  return hash;
}

/// The image layout of rows of shape `row_shape`: (H, W) or (C, H, W) rows, or a flat row of a
/// square single-channel image.
resident::ImageLayout image_of(const resident::Shape& row_shape) {
  if (row_shape.rank() == 2) return resident::ImageLayout::chw(1, row_shape[0], row_shape[1]);
  if (row_shape.rank() == 3)
    return resident::ImageLayout::chw(row_shape[0], row_shape[1], row_shape[2]);
  const std::size_t elements = row_shape.elements();
  std::size_t side = 0;
  while ((side + 1) * (side + 1) <= elements) ++side;
  if (side * side != elements)
    throw resident::InvalidArgument(
        "train_mlp --augment needs image rows: (H, W) or (C, H, W), or a flat square image; "
        "rows of " +
        std::to_string(elements) + " elements are none of these");
  return resident::ImageLayout::chw(1, side, side);
}

using Clock = std::chrono::steady_clock;

/// Host time of the two parts of a step: obtaining the batch, computing on it.
class HostStepTimer {
 public:
  explicit HostStepTimer(resident::HostStream /*stream*/) {}
  void before_batch() { start_ = Clock::now(); }
  void after_batch() { obtained_ = Clock::now(); }
  void after_step() {
    const auto done = Clock::now();
    batch_ += std::chrono::duration<double>(obtained_ - start_).count();
    step_ += std::chrono::duration<double>(done - start_).count();
  }
  /// Share of the epoch's step time spent obtaining batches; resets.
  double take_share() {
    const double share = step_ > 0 ? batch_ / step_ : 0;
    batch_ = step_ = 0;
    return share;
  }

 private:
  Clock::time_point start_, obtained_;
  double batch_ = 0, step_ = 0;
};

#if defined(__CUDACC__) && RESIDENT_HAS_CUDA
/// Device time of the two parts of a step, from events recorded on the stream (no host
/// synchronisation until the epoch's end).
class CudaStepTimer {
 public:
  explicit CudaStepTimer(cudaStream_t stream) : stream_(stream) {}
  void before_batch() { record(); }
  void after_batch() { record(); }
  void after_step() { record(); }
  double take_share() {
    RESIDENT_CUDA_TRY(cudaStreamSynchronize(stream_));
    double batch = 0, step = 0;
    for (std::size_t i = 0; i + 2 < used_; i += 3) {
      float obtain = 0, whole = 0;
      RESIDENT_CUDA_TRY(cudaEventElapsedTime(&obtain, events_[i].get(), events_[i + 1].get()));
      RESIDENT_CUDA_TRY(cudaEventElapsedTime(&whole, events_[i].get(), events_[i + 2].get()));
      batch += obtain;
      step += whole;
    }
    used_ = 0;
    return step > 0 ? batch / step : 0;
  }

 private:
  void record() {
    if (used_ == events_.size())
      events_.push_back(resident::detail::create_event(cudaEventDefault));
    RESIDENT_CUDA_TRY(cudaEventRecord(events_[used_++].get(), stream_));
  }
  cudaStream_t stream_;
  std::vector<resident::detail::CudaEvent> events_;  // with timing
  std::size_t used_ = 0;
};
#endif

template <class Space>
struct Path;
template <>
struct Path<resident::HostSpace> {
  using Model = examples::HostMlp;
  using Timer = HostStepTimer;
};
#if defined(__CUDACC__) && RESIDENT_HAS_CUDA
template <>
struct Path<resident::CudaSpace> {
  using Model = examples::CudaMlp;
  using Timer = CudaStepTimer;
};
#endif

/// Trains from scratch; returns the final held-out accuracy (%). `augment_pixels` > 0
/// translates every training image by up to that many pixels.
template <class Space, class Feature>
double train(const Space& space, const resident::HostTensor<const Feature>& x,
             const resident::HostTensor<const std::int32_t>& y, const Arguments& args,
             std::size_t augment_pixels) {
  const std::size_t rows = x.rows(), inputs = x.row_elements();
  const std::size_t train_rows = rows - rows / 5;
  std::size_t classes = 0;
  for (std::size_t r = 0; r < rows; ++r)
    classes = std::max<std::size_t>(classes, static_cast<std::size_t>(y.data()[r]) + 1);
  resident::DatasetOptions options;
  options.batch_size = args.batch;
  options.remainder = resident::Remainder::pad;  // every step a full batch; the loss masks padding
  using Dataset = resident::DeviceDataset<Space, Feature, std::int32_t>;
  std::vector<std::size_t> train_shape{train_rows};
  for (std::size_t d = 0; d < x.row_shape().rank(); ++d) train_shape.push_back(x.row_shape()[d]);
  Dataset train_set(space, options, resident::HostTensor<const Feature>(x.data(), train_shape),
                    resident::HostTensor<const std::int32_t>(y.data(), {train_rows}));
  Dataset test_set(
      space, options,
      resident::HostTensor<const Feature>(x.data() + train_rows * inputs,
                                          {rows - train_rows, inputs}),
      resident::HostTensor<const std::int32_t>(y.data() + train_rows, {rows - train_rows}));
  const float scale =
      args.scale > 0 ? args.scale : (std::is_floating_point_v<Feature> ? 1.0f : 1.0f / 255);
  const auto to_float = resident::convert<0>(resident::Normalize{scale, 0.0f});
  std::printf(
      "train_mlp: %zu rows of %zu inputs, %zu classes on %s; %zu for training, %zu held "
      "out; batch %zu, hidden 256%s\n",
      rows, inputs, classes, space.name().c_str(), train_rows, rows - train_rows, args.batch,
      augment_pixels > 0
          ? (", training images translated by up to " + std::to_string(augment_pixels) + " px")
                .c_str()
          : "");

  const examples::MlpShape shape{inputs, 256, classes, args.batch};
  using Model = typename Path<Space>::Model;
#if defined(__CUDACC__) && RESIDENT_HAS_CUDA
  Model model = [&]() -> Model {
    if constexpr (std::is_same_v<Space, resident::CudaSpace>)
      return Model(shape, args.seed, train_set.stream());
    else
      return Model(shape, args.seed);
  }();
#else
  Model model(shape, args.seed);
#endif
  typename Path<Space>::Timer timer(train_set.stream());
  double test_accuracy = 0, final_loss = 0;
  std::size_t first_epoch = 0, steps = 0;
  std::optional<resident::EpochState> resumed;
  if (!args.resume.empty()) {
    const Checkpoint checkpoint = read_checkpoint(args.resume, shape.parameters());
    model.restore(checkpoint.model);
    first_epoch = checkpoint.epoch.options().epoch + (checkpoint.epoch.finished() ? 1 : 0);
    if (!checkpoint.epoch.finished()) resumed = checkpoint.epoch;
    std::printf("train_mlp: resuming epoch %zu at row %llu of its order, from %s\n", first_epoch,
                static_cast<unsigned long long>(checkpoint.epoch.position()), args.resume.c_str());
  }
  bool stopped = false;
  for (std::size_t epoch = first_epoch; epoch < args.epochs && !stopped; ++epoch) {
    const auto start = Clock::now();
    const resident::EpochOptions epoch_options{args.seed, epoch, resident::Shuffle::samples};
    const auto train_epoch = [&](auto batches) {
      for (std::size_t k = 0; k < batches.size(); ++k) {
        if (args.stop_after != 0 && steps == args.stop_after) {
          // Preempted: where the loop stands, and the model, are all a new process needs.
          write_checkpoint(args.checkpoint, {batches.state(k), model.state()});
          std::printf("train_mlp: stopped after %zu steps, in epoch %zu; resume with --resume %s\n",
                      steps, epoch, args.checkpoint.c_str());
          stopped = true;
          return;
        }
        ++steps;
        timer.before_batch();
        const auto [xb, yb] = batches.batch(k);
        timer.after_batch();
        model.train_step(xb.data(), yb.data(), xb.rows(), xb.valid_rows(), args.rate,
                         args.momentum);
        timer.after_step();
      }
    };
    // The epoch a stopped run was in goes on from its state; every other one starts afresh.
    const auto make_epoch = [&](const auto&... transforms) {
      const bool resuming = resumed && resumed->options().epoch == epoch;
      return resuming ? train_set.resume(epoch_options, *resumed, transforms...)
                      : train_set.epoch(epoch_options, transforms...);
    };
    if (augment_pixels > 0)
      train_epoch(make_epoch(to_float, resident::augment<0>(image_of(x.row_shape()),
                                                            resident::RandomCrop{augment_pixels})));
    else
      train_epoch(make_epoch(to_float));
    if (stopped) break;
    const examples::Totals trained = model.take_totals();
    final_loss = trained.loss / std::max(trained.rows, 1.0);
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    // The held-out batches are gathered (converted) on test_set.stream() but read on the
    // model's stream, train_set.stream(): wait orders the reads after the gather, release
    // orders the next gather into the slot after the reads (both no-ops on the host).
    auto held_out = test_set.epoch({args.seed, epoch, resident::Shuffle::none}, to_float);
    for (std::size_t k = 0; k < held_out.size(); ++k) {
      const auto [xb, yb] = held_out.batch(k);
      held_out.wait(k, train_set.stream());
      model.evaluate(xb.data(), yb.data(), xb.rows(), xb.valid_rows());
      held_out.release(k, train_set.stream());
    }
    const examples::Totals tested = model.take_totals();
    test_accuracy = 100.0 * tested.correct / std::max(tested.rows, 1.0);
    std::printf(
        "epoch %zu: loss %.4f, train accuracy %.2f %%, test accuracy %.2f %%, %.3g "
        "samples/s, obtaining the batch %.1f %% of step time\n",
        epoch, trained.loss / std::max(trained.rows, 1.0),
        100.0 * trained.correct / std::max(trained.rows, 1.0), test_accuracy,
        trained.rows / seconds, 100.0 * timer.take_share());
  }
  if (stopped) return -1;
  std::printf("train_mlp: final loss %.9g, weights fingerprint %016llx\n", final_loss,
              static_cast<unsigned long long>(weights_fingerprint(model.state().parameters)));
  return test_accuracy;
}

template <class Space, class Feature>
int train_and_report(const Space& space, const resident::HostTensor<const Feature>& x,
                     const resident::HostTensor<const std::int32_t>& y, const Arguments& args) {
  const double plain = train(space, x, y, args, 0);
  if (plain < 0) return 0;  // stopped: the checkpoint holds the rest
  std::printf("train_mlp: final test accuracy %.2f %%\n", plain);
  if (args.augment == 0) return 0;
  const double augmented = train(space, x, y, args, args.augment);
  std::printf(
      "train_mlp: held-out accuracy %.2f %% without augmentation, %.2f %% with translations "
      "of up to %zu px (%+.2f points)\n",
      plain, augmented, args.augment, augmented - plain);
  return 0;
}

template <class Feature>
int train_on(const resident::HostTensor<const Feature>& x,
             const resident::HostTensor<const std::int32_t>& y, const Arguments& args) {
#if defined(__CUDACC__) && RESIDENT_HAS_CUDA
  if (args.space == "cuda" || (args.space == "auto" && resident::CudaSpace::device_count() > 0))
    return train_and_report(resident::CudaSpace{0}, x, y, args);
#else
  if (args.space == "cuda") {
    std::fprintf(stderr, "train_mlp was built without nvcc; --space cuda is unavailable\n");
    return 2;
  }
#endif
  return train_and_report(resident::HostSpace{}, x, y, args);
}

bool parse(int argc, char** argv, Arguments& args) {
  const bool parsed = examples::Flags()
                          .add("x", args.x)
                          .add("y", args.y)
                          .add("epochs", args.epochs)
                          .add("batch", args.batch)
                          .add("seed", args.seed)
                          .add("rate", args.rate)
                          .add("scale", args.scale)
                          .add("space", args.space)
                          .add("augment", args.augment)
                          .add("stop-after", args.stop_after)
                          .add("checkpoint", args.checkpoint)
                          .add("resume", args.resume)
                          .parse(argc, argv);
  return parsed && (args.space == "host" || args.space == "cuda" || args.space == "auto") &&
         args.x.empty() == args.y.empty() && args.batch > 0;
}

}  // namespace

int main(int argc, char** argv) {
  Arguments args;
  if (!parse(argc, argv, args)) {
    std::fprintf(stderr,
                 "usage: train_mlp [--x X.npy --y Y.npy] [--epochs N] [--batch B] "
                 "[--space host|cuda|auto] [--seed S] [--rate R] [--scale F] [--augment P] "
                 "[--stop-after K [--checkpoint FILE]] [--resume FILE]\n");
    return 2;
  }
  try {
    if (args.x.empty()) {
      const examples::Synthetic data = examples::make_synthetic(6000);
      std::printf("train_mlp: no files given; using the embedded synthetic data\n");
      return train_on(
          resident::HostTensor<const float>(data.features.data(),
                                            {data.labels.size(), examples::features_per_row}),
          resident::HostTensor<const std::int32_t>(data.labels.data(), {data.labels.size()}), args);
    }
    const resident::npy::Array x = resident::npy::load(args.x), y = resident::npy::load(args.y);
    const auto labels = y.as<std::int32_t>();
    if (x.dtype() == resident::npy::DType::u1) return train_on(x.as<std::uint8_t>(), labels, args);
    return train_on(x.as<float>(), labels, args);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "train_mlp: %s\n", error.what());
    return 1;
  }
}
