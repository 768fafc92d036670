// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// Data-parallel softmax regression under MPI: every rank serves its share of each epoch from a
// sharded dataset, computes the gradient summed over its batch, and the ranks add their
// gradients with MPI_Allreduce before each SGD step. With replicated sharding, step k of an
// N-rank job trains on exactly the rows of step k of one rank with N times the batch, so the
// weights match the single-process run's (up to the order of float additions).
// Runs on CudaSpace (one GPU per local rank) when a device is present and this file was
// compiled by nvcc, else on HostSpace.
//
// An elastic restart: `--stop-after K` stops the job after K steps and rank 0 writes where it
// stands (PREFIX.state, the epoch's 64-byte `EpochState`; PREFIX.npy, the weights); a job of
// another size started with `--resume PREFIX` goes on with the rest of the epoch. With
// partitioned sharding the rows are cut into `--parts P` parts (every world size of the run
// must divide P): 4 ranks of batch 16 then 2 ranks of batch 32 train on the same rows at every
// step as 4 ranks that never stopped.
//
//   mpirun -np 2 mpi_train [--epochs N] [--batch B (per rank)] [--rows R] [--seed S]
//                          [--sharding replicated|partitioned] [--parts P] [--space auto|host|cuda]
//                          [--save-weights F.npy] [--expect-weights F.npy --tolerance T]
//                          [--stop-after K] [--checkpoint PREFIX] [--resume PREFIX]
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <resident/resident.hpp>
#include <string>
#include <vector>

#include "softmax_regression.hpp"
#include "synthetic.hpp"

namespace {

struct Arguments {
  std::size_t epochs = 5, batch = 32, rows = 6000, parts = 0, stop_after = 0;
  std::uint64_t seed = 1;
  resident::Sharding sharding = resident::Sharding::replicated;
  std::string space = "auto", save_weights, expect_weights, checkpoint = "mpi_train", resume;
  double tolerance = 1e-4;
  float rate = 0.5f;
};

// The job's shard: what the launcher exported, checked against what MPI says.
resident::Shard job_shard() {
  int rank = 0, size = 1, local = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm node{};
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
  MPI_Comm_rank(node, &local);
  MPI_Comm_free(&node);
  const resident::Shard from_env = resident::shard_from_env();
  if (from_env.rank == rank && from_env.world_size == size) return from_env;
  return resident::Shard{rank, size, local};  // a launcher that exports nothing resident knows
}

// Sums of one pass over a batch: loss, correct predictions, rows.
struct Totals {
  double loss = 0, correct = 0, rows = 0;
};

#if defined(__CUDACC__) && RESIDENT_HAS_CUDA
struct AtomicAdd {
  float* gradient;
  __device__ void operator()(std::size_t index, float value) const {
    atomicAdd(&gradient[index], value);
  }
};

// One thread per valid row; the gradient (when not null) and the loss/correct sums are added
// with atomics.
__global__ void softmax_kernel(resident::BatchView<const float> x,
                               resident::BatchView<const std::int32_t> y, const float* parameters,
                               std::size_t classes, float* gradient, float* sums) {
  const std::size_t row = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (row >= x.valid_rows()) return;
  bool correct = false;
  const auto label = static_cast<std::size_t>(y.data()[row]);
  const float loss = gradient != nullptr
                         ? examples::softmax_row(x.row(row), label, parameters, x.row_elements(),
                                                 classes, correct, AtomicAdd{gradient})
                         : examples::softmax_row(x.row(row), label, parameters, x.row_elements(),
                                                 classes, correct, examples::Ignore{});
  atomicAdd(&sums[0], loss);
  atomicAdd(&sums[1], correct ? 1.0f : 0.0f);
}

// Device buffers of the CUDA path: parameters, gradient and the two sums, in one allocation.
class DeviceBuffers {
 public:
  explicit DeviceBuffers(std::size_t parameters) : parameters_(parameters) {
    RESIDENT_CUDA_TRY(cudaMalloc(&data_, (2 * parameters + 2) * sizeof(float)));
  }
  DeviceBuffers(const DeviceBuffers&) = delete;
  DeviceBuffers& operator=(const DeviceBuffers&) = delete;
  ~DeviceBuffers() { (void)cudaFree(data_); }

  // Runs the kernel on `stream` and copies the gradient (when wanted) and sums back to `host`
  // (gradient first, then the two sums).
  void pass(const resident::BatchView<const float>& x,
            const resident::BatchView<const std::int32_t>& y, const std::vector<float>& parameters,
            std::size_t classes, bool with_gradient, float* host, cudaStream_t stream) {
    float* gradient = data_ + parameters_;
    float* sums = gradient + parameters_;
    RESIDENT_CUDA_TRY(cudaMemcpyAsync(data_, parameters.data(), parameters_ * sizeof(float),
                                      cudaMemcpyHostToDevice, stream));
    RESIDENT_CUDA_TRY(cudaMemsetAsync(gradient, 0, (parameters_ + 2) * sizeof(float), stream));
    const unsigned threads = 128;
    const auto blocks = static_cast<unsigned>((x.valid_rows() + threads - 1) / threads);
    if (blocks > 0)
      softmax_kernel<<<blocks, threads, 0, stream>>>(x, y, data_, classes,
                                                     with_gradient ? gradient : nullptr, sums);
    RESIDENT_CUDA_TRY(cudaGetLastError());
    RESIDENT_CUDA_TRY(cudaMemcpyAsync(host, gradient, (parameters_ + 2) * sizeof(float),
                                      cudaMemcpyDeviceToHost, stream));
    RESIDENT_CUDA_TRY(cudaStreamSynchronize(stream));
  }

 private:
  std::size_t parameters_;
  float* data_ = nullptr;
};
#endif

// One pass over a batch on the space the batch lives in: `gradient` (parameters() floats, or
// null for evaluation) receives the summed gradient.
template <class Space>
class Compute {
 public:
  Compute(const examples::SoftmaxRegression& model, typename Space::stream_type stream)
      : model_(model), stream_(stream) {
#if defined(__CUDACC__) && RESIDENT_HAS_CUDA
    if constexpr (resident::is_device_accessible_v<Space>)
      device_ = std::make_unique<DeviceBuffers>(model.parameters().size());
#endif
  }

  Totals pass(const resident::BatchView<const float>& x,
              const resident::BatchView<const std::int32_t>& y, float* gradient) {
    Totals totals;
    totals.rows = static_cast<double>(x.valid_rows());
    if constexpr (resident::is_device_accessible_v<Space>) {
#if defined(__CUDACC__) && RESIDENT_HAS_CUDA
      const std::size_t count = model_.parameters().size();
      host_.resize(count + 2);
      device_->pass(x, y, model_.parameters(), model_.classes(), gradient != nullptr, host_.data(),
                    stream_);
      if (gradient != nullptr) std::copy(host_.begin(), host_.begin() + count, gradient);
      totals.loss = host_[count];
      totals.correct = host_[count + 1];
#endif
    } else {
      std::size_t correct = 0;
      totals.loss = model_.accumulate([&x](std::size_t r) { return x.row(r); }, y.data(),
                                      x.valid_rows(), gradient, correct);
      totals.correct = static_cast<double>(correct);
    }
    return totals;
  }

 private:
  const examples::SoftmaxRegression& model_;
  typename Space::stream_type stream_;
#if defined(__CUDACC__) && RESIDENT_HAS_CUDA
  std::unique_ptr<DeviceBuffers> device_;
  std::vector<float> host_;
#endif
};

void all_reduce(Totals& totals) {
  double sums[3] = {totals.loss, totals.correct, totals.rows};
  MPI_Allreduce(MPI_IN_PLACE, sums, 3, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  totals = {sums[0], sums[1], sums[2]};
}

// Largest difference between the trained parameters and those saved by another run.
double compare_weights(const std::vector<float>& parameters, const std::string& path) {
  const resident::npy::Array expected = resident::npy::load(path);
  const auto values = expected.as<float>();
  if (values.size() != parameters.size())
    throw resident::InvalidArgument("mpi_train: " + path + " holds " +
                                    std::to_string(values.size()) + " parameters, the model has " +
                                    std::to_string(parameters.size()));
  double largest = 0;
  for (std::size_t i = 0; i < parameters.size(); ++i)
    largest = std::max(largest, std::fabs(static_cast<double>(parameters[i] - values.data()[i])));
  return largest;
}

template <class Space>
int train(const Space& space, const resident::Shard& shard, const Arguments& args) {
  const examples::Synthetic data = examples::make_synthetic(args.rows);
  const std::size_t features = examples::features_per_row, classes = examples::classes;
  const std::size_t train_rows = args.rows * 4 / 5, test_rows = args.rows - train_rows;
  const resident::HostTensor<const float> x_train(data.features.data(), {train_rows, features});
  const resident::HostTensor<const std::int32_t> y_train(data.labels.data(), {train_rows});
  const resident::HostTensor<const float> x_test(data.features.data() + train_rows * features,
                                                 {test_rows, features});
  const resident::HostTensor<const std::int32_t> y_test(data.labels.data() + train_rows,
                                                        {test_rows});
  resident::DatasetOptions options;
  options.batch_size = args.batch;
  options.shard = shard;
  options.sharding = args.sharding;
  options.parts = args.parts;
  const resident::Plan plan = resident::plan(space, options, x_train, y_train);
  const bool root = shard.rank == 0;
  if (root)
    std::printf(
        "mpi_train: %d rank(s) on %s, %s; %zu training rows, batch %zu per rank (%zu global), "
        "%zu steps per epoch\n  memory per rank: %.2f MiB replicated, %.2f MiB partitioned\n  %s\n",
        shard.world_size, plan.space_name.c_str(), resident::sharding_name(args.sharding),
        train_rows, args.batch, args.batch * static_cast<std::size_t>(shard.world_size),
        plan.num_batches, static_cast<double>(plan.replicated_rank_bytes) / (1 << 20),
        static_cast<double>(plan.partitioned_rank_bytes) / (1 << 20), plan.reason.c_str());

  resident::DeviceDataset<Space, float, std::int32_t> train_set(space, options, x_train, y_train);
  resident::DatasetOptions test_options = options;  // evaluation splits the held-out rows
  test_options.sharding = resident::Sharding::partitioned;
  resident::DeviceDataset<Space, float, std::int32_t> test_set(space, test_options, x_test, y_test);

  examples::SoftmaxRegression model(features, classes);
  Compute<Space> compute(model, train_set.stream());
  std::vector<float> gradient(model.parameters().size());
  double test_accuracy = 0;
  std::size_t first_epoch = 0, steps = 0;
  std::optional<resident::EpochState> resumed;
  if (!args.resume.empty()) {
    // Every rank reads where the job stopped: the epoch's state and the weights.
    std::ifstream file(args.resume + ".state", std::ios::binary);
    const std::vector<char> bytes((std::istreambuf_iterator<char>(file)), {});
    const auto state = resident::EpochState::from_bytes(bytes.data(), bytes.size());
    const resident::npy::Array weights = resident::npy::load(args.resume + ".npy");
    const auto values = weights.as<float>();
    model.restore({values.data(), values.data() + values.size()});
    first_epoch = state.options().epoch + (state.finished() ? 1 : 0);
    if (!state.finished()) resumed = state;
    if (root)
      std::printf("mpi_train: resuming epoch %zu at row %llu of its order on %d rank(s)\n",
                  first_epoch, static_cast<unsigned long long>(state.position()), shard.world_size);
  }
  for (std::size_t epoch = first_epoch; epoch < args.epochs; ++epoch) {
    Totals epoch_totals;
    const resident::EpochOptions epoch_options{args.seed, epoch, resident::Shuffle::samples};
    auto batches = resumed && resumed->options().epoch == epoch
                       ? train_set.resume(epoch_options, *resumed)
                       : train_set.epoch(epoch_options);
    for (std::size_t k = 0; k < batches.size(); ++k, ++steps) {
      if (args.stop_after != 0 && steps == args.stop_after) {
        // Preempted: every rank says the same state; rank 0 keeps it with the weights.
        if (root) {
          const auto state = batches.state(k).to_bytes();
          std::ofstream(args.checkpoint + ".state", std::ios::binary)
              .write(reinterpret_cast<const char*>(state.data()), state.size());
          resident::npy::save(args.checkpoint + ".npy", model.parameters().data(),
                              resident::Shape{model.parameters().size()});
          std::printf("mpi_train: stopped after %zu steps, in epoch %zu; resume with --resume %s\n",
                      steps, epoch, args.checkpoint.c_str());
        }
        return 0;
      }
      const auto [xb, yb] = batches.batch(k);
      std::fill(gradient.begin(), gradient.end(), 0.0f);
      Totals step = compute.pass(xb, yb, gradient.data());
      MPI_Allreduce(MPI_IN_PLACE, gradient.data(), static_cast<int>(gradient.size()), MPI_FLOAT,
                    MPI_SUM, MPI_COMM_WORLD);
      all_reduce(step);
      model.apply(gradient.data(), step.rows, args.rate);  // the mean over the global batch
      epoch_totals = {epoch_totals.loss + step.loss, epoch_totals.correct + step.correct,
                      epoch_totals.rows + step.rows};
    }
    Totals test;
    for (auto [xb, yb] : test_set.epoch({args.seed, epoch, resident::Shuffle::none})) {
      const Totals batch = compute.pass(xb, yb, nullptr);
      test = {test.loss + batch.loss, test.correct + batch.correct, test.rows + batch.rows};
    }
    all_reduce(test);
    test_accuracy = 100.0 * test.correct / std::max(test.rows, 1.0);
    if (root)
      std::printf("epoch %zu: loss %.4f, train accuracy %.2f %%, test accuracy %.2f %% (%g rows)\n",
                  epoch, epoch_totals.loss / std::max(epoch_totals.rows, 1.0),
                  100.0 * epoch_totals.correct / std::max(epoch_totals.rows, 1.0), test_accuracy,
                  test.rows);
  }
  if (!root) return 0;
  std::printf("mpi_train: final test accuracy %.2f %%\n", test_accuracy);
  if (!args.save_weights.empty())
    resident::npy::save(args.save_weights, model.parameters().data(),
                        resident::Shape{model.parameters().size()});
  if (!args.expect_weights.empty()) {
    const double difference = compare_weights(model.parameters(), args.expect_weights);
    const bool same = difference <= args.tolerance;
    std::printf("mpi_train: largest weight difference to %s: %.3g (tolerance %.3g): %s\n",
                args.expect_weights.c_str(), difference, args.tolerance,
                same ? "same weights" : "DIFFERENT");
    return same ? 0 : 1;
  }
  return 0;
}

bool parse(int argc, char** argv, Arguments& args) {
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--epochs")
      args.epochs = std::strtoull(value.c_str(), nullptr, 10);
    else if (flag == "--batch")
      args.batch = std::strtoull(value.c_str(), nullptr, 10);
    else if (flag == "--rows")
      args.rows = std::strtoull(value.c_str(), nullptr, 10);
    else if (flag == "--seed")
      args.seed = std::strtoull(value.c_str(), nullptr, 10);
    else if (flag == "--sharding" && (value == "replicated" || value == "partitioned"))
      args.sharding =
          value == "replicated" ? resident::Sharding::replicated : resident::Sharding::partitioned;
    else if (flag == "--parts")
      args.parts = std::strtoull(value.c_str(), nullptr, 10);
    else if (flag == "--stop-after")
      args.stop_after = std::strtoull(value.c_str(), nullptr, 10);
    else if (flag == "--checkpoint")
      args.checkpoint = value;
    else if (flag == "--resume")
      args.resume = value;
    else if (flag == "--space" && (value == "auto" || value == "host" || value == "cuda"))
      args.space = value;
    else if (flag == "--save-weights")
      args.save_weights = value;
    else if (flag == "--expect-weights")
      args.expect_weights = value;
    else if (flag == "--tolerance")
      args.tolerance = std::strtod(value.c_str(), nullptr);
    else
      return false;
  }
  return argc % 2 == 1;
}

int run(const Arguments& args) {
  const resident::Shard shard = job_shard();
#if defined(__CUDACC__) && RESIDENT_HAS_CUDA
  const bool cuda =
      args.space == "cuda" || (args.space == "auto" && resident::CudaSpace::device_count() > 0);
  if (cuda) {
    const resident::CudaSpace space = resident::CudaSpace::for_shard(shard);
    // The example's own buffers and kernels (DeviceBuffers) go to the current device: make it
    // the rank's, where the datasets live.
    RESIDENT_CUDA_TRY(cudaSetDevice(space.device_id()));
    return train(space, shard, args);
  }
#else
  if (args.space == "cuda")
    throw resident::InvalidArgument(
        "mpi_train: --space cuda needs this example compiled by nvcc with CUDA enabled; this "
        "build has host compute only");
#endif
  return train(resident::HostSpace{}, shard, args);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  Arguments args;
  int status = 2;
  if (!parse(argc, argv, args)) {
    std::fprintf(stderr,
                 "usage: mpi_train [--epochs N] [--batch B] [--rows R] [--seed S] "
                 "[--sharding replicated|partitioned] [--parts P] [--space auto|host|cuda] "
                 "[--save-weights F.npy] [--expect-weights F.npy --tolerance T] "
                 "[--stop-after K] [--checkpoint PREFIX] [--resume PREFIX]\n");
  } else {
    try {
      status = run(args);
    } catch (const resident::Error& error) {
      // A rank that failed takes the job down with it rather than leaving the others waiting
      // in a collective.
      std::fprintf(stderr, "%s\n", error.what());
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
  }
  MPI_Finalize();
  return status;
}
