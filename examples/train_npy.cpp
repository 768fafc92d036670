// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// Trains a softmax-regression classifier from .npy files on the host: features (uint8 pixels,
// normalised on the fly while gathering, or float32) and uint8, int32 or int64 labels, 80 % for
// training with a sample-shuffled epoch each round, 20 % held out. Or from an .npz archive in
// Keras' mnist.npz layout (x_train, y_train, x_test, y_test; stored or compressed), uploaded
// member by member. Without files it uses the embedded synthetic 10-class data.
//
//   train_npy [--x X.npy --y Y.npy | --npz MNIST.npz] [--epochs N] [--batch B] [--seed S]
//   train_npy --save-synthetic DIR     # writes DIR/x.npy and DIR/y.npy, then exits
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <resident/resident.hpp>
#include <string>
#include <vector>

#include "flags.hpp"
#include "softmax_regression.hpp"
#include "synthetic.hpp"

namespace {

struct Arguments {
  std::string x, y, npz, save_dir;
  std::size_t epochs = 5, batch = 64;
  std::uint64_t seed = 1;
};

template <class Feature, class Label>
using HostDataset = resident::DeviceDataset<resident::HostSpace, Feature, Label>;

resident::DatasetOptions training_options(const Arguments& args) {
  resident::DatasetOptions options;
  options.batch_size = args.batch;
  options.remainder = resident::Remainder::pad;  // every step a full batch; the loss masks padding
  return options;
}

template <class Feature, class Label>
int train(HostDataset<Feature, Label> train_set, HostDataset<Feature, Label> test_set,
          const Arguments& args) {
  const std::size_t train_rows = train_set.num_rows(), test_rows = test_set.num_rows();
  const std::size_t features = train_set.template field<0>().row_elements();
  std::size_t classes = 0;
  for (auto* dataset : {&train_set, &test_set}) {
    const auto y = dataset->template field<1>();
    for (std::size_t r = 0; r < y.rows(); ++r)
      classes = std::max<std::size_t>(classes, static_cast<std::size_t>(y.data()[r]) + 1);
  }
  std::printf("train_npy: %zu rows of %zu features, %zu classes; %zu for training, %zu held out\n",
              train_rows + test_rows, features, classes, train_rows, test_rows);

  // Pixels stored as uint8 are normalised to [0, 1] floats while an epoch gathers them.
  const auto to_float = resident::convert<0>(
      resident::Normalize{std::is_floating_point_v<Feature> ? 1.0f : 1.0f / 255, 0.0f});
  examples::SoftmaxRegression model(features, classes);
  std::vector<float> gradient(model.parameters().size());
  double test_accuracy = 0;
  for (std::size_t epoch = 0; epoch < args.epochs; ++epoch) {
    std::size_t correct = 0;
    double loss = 0;
    for (auto [xb, yb] :
         train_set.epoch({args.seed, epoch, resident::Shuffle::samples}, to_float)) {
      std::fill(gradient.begin(), gradient.end(), 0.0f);
      loss += model.accumulate([&](std::size_t r) { return xb.row(r); }, yb.data(), xb.valid_rows(),
                               gradient.data(), correct);
      model.apply(gradient.data(), static_cast<double>(xb.valid_rows()), 0.5f);
    }
    std::size_t test_correct = 0;
    for (auto [xb, yb] : test_set.epoch({args.seed, epoch, resident::Shuffle::none}, to_float))
      (void)model.accumulate([&](std::size_t r) { return xb.row(r); }, yb.data(), xb.valid_rows(),
                             nullptr, test_correct);
    test_accuracy = 100.0 * static_cast<double>(test_correct) / static_cast<double>(test_rows);
    std::printf("epoch %zu: loss %.4f, train accuracy %.2f %%, test accuracy %.2f %%\n", epoch,
                loss / static_cast<double>(train_rows),
                100.0 * static_cast<double>(correct) / static_cast<double>(train_rows),
                test_accuracy);
  }
  std::printf("train_npy: final test accuracy %.2f %%\n", test_accuracy);
  return 0;
}

/// Two datasets over the two row ranges of the same arrays: views, no copies on the host side.
template <class Feature, class Label>
int train_split(const resident::HostTensor<const Feature>& x,
                const resident::HostTensor<const Label>& y, const Arguments& args) {
  const std::size_t rows = x.rows(), features = x.row_elements(), train_rows = rows * 4 / 5;
  const resident::DatasetOptions options = training_options(args);
  const resident::HostSpace host;
  return train<Feature, Label>(
      HostDataset<Feature, Label>(
          host, options, resident::HostTensor<const Feature>(x.data(), {train_rows, features}),
          resident::HostTensor<const Label>(y.data(), {train_rows})),
      HostDataset<Feature, Label>(
          host, options,
          resident::HostTensor<const Feature>(x.data() + train_rows * features,
                                              {rows - train_rows, features}),
          resident::HostTensor<const Label>(y.data() + train_rows, {rows - train_rows})),
      args);
}

template <class Feature>
int train_with_labels(const resident::npy::Array& x, const resident::npy::Array& y,
                      const Arguments& args) {
  if (y.dtype() == resident::npy::DType::i8)
    return train_split(x.as<Feature>(), y.as<std::int64_t>(), args);
  if (y.dtype() == resident::npy::DType::u1)
    return train_split(x.as<Feature>(), y.as<std::uint8_t>(), args);
  return train_split(x.as<Feature>(), y.as<std::int32_t>(), args);
}

/// The archive's training and test members, each uploaded straight from the archive.
template <class Feature, class Label>
int train_archive(const resident::npz::Archive& archive, const Arguments& args) {
  const resident::DatasetOptions options = training_options(args);
  const resident::HostSpace host;
  return train<Feature, Label>(resident::load_dataset<resident::HostSpace, Feature, Label>(
                                   host, options, archive, {"x_train", "y_train"}),
                               resident::load_dataset<resident::HostSpace, Feature, Label>(
                                   host, options, archive, {"x_test", "y_test"}),
                               args);
}

template <class Feature>
int train_archive_labels(const resident::npz::Archive& archive, const Arguments& args) {
  const resident::npy::DType labels = archive.member("y_train").dtype();
  if (labels == resident::npy::DType::i8)
    return train_archive<Feature, std::int64_t>(archive, args);
  if (labels == resident::npy::DType::i4)
    return train_archive<Feature, std::int32_t>(archive, args);
  return train_archive<Feature, std::uint8_t>(archive, args);
}

}  // namespace

int main(int argc, char** argv) {
  Arguments args;
  if (!examples::Flags()
           .add("x", args.x)
           .add("y", args.y)
           .add("npz", args.npz)
           .add("epochs", args.epochs)
           .add("batch", args.batch)
           .add("seed", args.seed)
           .add("save-synthetic", args.save_dir)
           .parse(argc, argv)) {
    std::fprintf(
        stderr,
        "usage: train_npy [--x X.npy --y Y.npy | --npz MNIST.npz] [--epochs N] [--batch B] "
        "[--seed S] | --save-synthetic DIR\n");
    return 2;
  }
  try {
    if (args.x.empty() != args.y.empty()) {
      std::fprintf(stderr, "train_npy: give both --x and --y, or neither\n");
      return 2;
    }
    if (!args.npz.empty()) {
      const resident::npz::Archive archive(args.npz);
      for (const resident::npz::Member& member : archive.members())
        std::printf("train_npy: %s: %s %s %s%s\n", args.npz.c_str(), member.key.c_str(),
                    resident::npy::dtype_code(member.dtype()), member.shape().to_string().c_str(),
                    member.compressed ? " (deflated)" : "");
      if (archive.member("x_train").dtype() == resident::npy::DType::u1)
        return train_archive_labels<std::uint8_t>(archive, args);
      return train_archive_labels<float>(archive, args);
    }
    if (args.x.empty()) {
      const examples::Synthetic data = examples::make_synthetic(6000);
      const resident::Shape shape{data.labels.size(), examples::features_per_row};
      if (!args.save_dir.empty()) {
        resident::npy::save(args.save_dir + "/x.npy", data.features.data(), shape);
        resident::npy::save(args.save_dir + "/y.npy", data.labels.data(),
                            resident::Shape{data.labels.size()});
        std::printf("train_npy: wrote %s/x.npy and %s/y.npy\n", args.save_dir.c_str(),
                    args.save_dir.c_str());
        return 0;
      }
      std::printf("train_npy: no files given; using the embedded synthetic data\n");
      return train_split(
          resident::HostTensor<const float>(data.features.data(), shape),
          resident::HostTensor<const std::int32_t>(data.labels.data(), {data.labels.size()}), args);
    }
    const resident::npy::Array x = resident::npy::load(args.x), y = resident::npy::load(args.y);
    std::printf("train_npy: %s (%s %s), %s (%s %s)\n", args.x.c_str(),
                resident::npy::dtype_code(x.dtype()), x.shape().to_string().c_str(), args.y.c_str(),
                resident::npy::dtype_code(y.dtype()), y.shape().to_string().c_str());
    if (x.dtype() == resident::npy::DType::u1) return train_with_labels<std::uint8_t>(x, y, args);
    return train_with_labels<float>(x, y, args);
  } catch (const resident::Error& error) {
    std::fprintf(stderr, "%s\n", error.what());
    return 1;
  }
}
