// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// Datasets and their epochs used after a move, an assignment or a swap: every later use throws
// a typed error that says what happened, and reads nothing that is not the dataset's.

#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <utility>

#include "resident/resident.hpp"
#include "support/labelled_rows.hpp"
#include "support/spaces.hpp"

namespace {

using resident::DatasetOptions;
using resident::DeviceDataset;
using resident::testing::LabelledRows;

template <class Space>
using Lifetimes = resident::testing::OverSpaces<Space>;
TYPED_TEST_SUITE(Lifetimes, resident::testing::SpaceTypes, resident::testing::SpaceName);

DatasetOptions small_batches() {
  DatasetOptions options;
  options.batch_size = 8;
  options.reserve_bytes = 0;
  return options;
}

TYPED_TEST(Lifetimes, MovedFromDatasetServesNoBatch) {
  const LabelledRows rows(100, 3);
  DeviceDataset<TypeParam, float, std::int32_t> a(this->space_, small_batches(), rows.x(),
                                                  rows.y());
  const auto b = std::move(a);
  EXPECT_EQ(b.num_rows(), 100U);
  EXPECT_EQ(a.num_batches(), 0U);  // NOLINT(bugprone-use-after-move): the moved-from state
  EXPECT_THROW((void)a.batch(0), std::out_of_range);
}

}  // namespace
