// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// The nvcc half of the mixed program (see mixed_units.hpp): making the epoch here compiles its
// kernels, which the g++ half's epochs of the same type then launch.

#include <numeric>

#include "cuda/mixed_units.hpp"

namespace mixed_units {

std::vector<float> features() {
  std::vector<float> values(rows * width);
  std::iota(values.begin(), values.end(), 0.0f);
  return values;
}

std::vector<std::int32_t> labels() {
  std::vector<std::int32_t> values(rows);
  std::iota(values.begin(), values.end(), 0);
  return values;
}

Dataset make_dataset() {
  const std::vector<float> x = features();
  const std::vector<std::int32_t> y = labels();
  resident::DatasetOptions options;
  options.batch_size = batch_size;
  options.remainder = resident::Remainder::drop;
  return Dataset(resident::CudaSpace{0}, options,
                 resident::HostTensor<const float>(x.data(), {rows, width}),
                 resident::HostTensor<const std::int32_t>(y.data(), {rows}));
}

NormalizedEpoch make_epoch(Dataset& ds, std::uint64_t epoch) {
  return ds.epoch({1, epoch, resident::Shuffle::samples}, resident::convert<0>(normalize));
}

}  // namespace mixed_units
