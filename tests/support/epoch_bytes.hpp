// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// Test support: an epoch of (features, labels) batches read back as bytes, so that two epochs
// (of two datasets, spaces or option sets) compare bit for bit.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "support/spaces.hpp"

namespace resident::testing {

/// An epoch's batches as bytes: every row of both fields (padding included), each batch's
/// valid rows, and the valid rows' labels in order.
struct EpochBytes {
  std::vector<std::vector<std::uint8_t>> bytes;
  std::vector<std::size_t> valid;
  std::vector<std::int32_t> labels;
  bool operator==(const EpochBytes& other) const {
    return bytes == other.bytes && valid == other.valid;
  }
};

template <class T>
void append_bytes(std::vector<std::uint8_t>& to, const std::vector<T>& values) {
  if (values.empty()) return;
  const std::size_t at = to.size();
  to.resize(at + values.size() * sizeof(T));
  std::memcpy(to.data() + at, values.data(), values.size() * sizeof(T));
}

/// Every batch of `epoch` (of `ds`, whose second field holds int32 labels), read back.
template <class Dataset, class Epoch>
EpochBytes record_bytes(Dataset& ds, Epoch&& epoch) {
  EpochBytes out;
  for (auto [x, y] : epoch) {
    std::vector<std::uint8_t> bytes;
    append_bytes(bytes, read_back(ds.space(), ds.stream(), x));
    const auto labels = read_back(ds.space(), ds.stream(), y);
    append_bytes(bytes, labels);
    out.bytes.push_back(std::move(bytes));
    out.valid.push_back(y.valid_rows());
    out.labels.insert(out.labels.end(), labels.begin(), labels.begin() + y.valid_rows());
  }
  return out;
}

/// Stops `options`' epoch of `ds` after `stop` batches and resumes it from its state: the rest
/// is the epoch's batches from `stop` on, bit for bit.
template <class Dataset, class Options>
void expect_resumes_where_it_stopped(Dataset& ds, const Options& options, std::size_t stop) {
  auto epoch = ds.epoch(options);
  for (std::size_t k = 0; k < stop; ++k) (void)epoch.batch(k);
  const EpochBytes rest = record_bytes(ds, ds.resume(options, epoch.state()));
  const EpochBytes whole = record_bytes(ds, ds.epoch(options));
  ASSERT_EQ(rest.bytes.size() + stop, whole.bytes.size());
  EXPECT_TRUE(std::equal(rest.bytes.begin(), rest.bytes.end(),
                         whole.bytes.begin() + static_cast<std::ptrdiff_t>(stop)));
}

}  // namespace resident::testing
