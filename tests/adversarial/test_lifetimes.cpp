// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// Datasets and their epochs used after a move, an assignment, a swap or the dataset's end:
// every later use of such an epoch throws a typed error that says what happened, and nothing
// reads memory that is not the dataset's (each test runs in its own process, so a crash fails
// only its own test).

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "resident/resident.hpp"
#include "support/labelled_rows.hpp"
#include "support/spaces.hpp"

namespace {

using resident::DatasetOptions;
using resident::DeviceDataset;
using resident::EpochOptions;
using resident::Shuffle;
using resident::StreamingDataset;
using resident::testing::LabelledRows;
using resident::testing::read_back;

constexpr const char* changed_since = "moved from, assigned, swapped or destroyed";
constexpr const char* made_moved_from = "made from a moved-from dataset";

template <class Space>
using Lifetimes = resident::testing::OverSpaces<Space>;
TYPED_TEST_SUITE(Lifetimes, resident::testing::SpaceTypes, resident::testing::SpaceName);

DatasetOptions small_batches() {
  DatasetOptions options;
  options.batch_size = 8;
  options.reserve_bytes = 0;
  options.streaming.chunk_batches = 2;  // several chunks, so that streaming really streams
  return options;
}

/// The shuffles whose epochs this test program can serve on `Space`: gathering on a device
/// launches kernels, which a program needs a unit compiled by nvcc for.
template <class Space>
std::vector<Shuffle> shuffles() {
  if (resident::testing::gathers_here<Space>)
    return {Shuffle::none, Shuffle::batches, Shuffle::samples};
  return {Shuffle::none, Shuffle::batches};
}

/// `use` throws `resident::Error` (not a subclass standing for something else, such as an
/// out-of-range index) whose message contains `words`.
void expect_refused(const std::function<void()>& use, const std::string& words) {
  try {
    use();
    ADD_FAILURE() << "the epoch was used without an error; expected one saying '" << words << "'";
  } catch (const std::out_of_range& error) {
    ADD_FAILURE() << "expected resident::Error saying '" << words
                  << "', got std::out_of_range: " << error.what();
  } catch (const resident::Error& error) {
    EXPECT_NE(std::string(error.what()).find(words), std::string::npos) << error.what();
  }
}

/// Every use of `epoch` throws, saying `words`.
template <class Epoch>
void expect_every_use_refused(Epoch& epoch, const std::string& words) {
  expect_refused([&] { (void)epoch.batch(0); }, words);
  expect_refused([&] { (void)epoch.size(); }, words);
  expect_refused([&] { (void)epoch.empty(); }, words);
  expect_refused([&] { (void)epoch.begin(); }, words);
  expect_refused([&] { (void)epoch.end(); }, words);
  expect_refused(
      [&] {
        for (const auto& batch : epoch) (void)batch;
      },
      words);
}

/// The labels of the first batch of `epoch`, read back to the host.
template <class Dataset, class Epoch>
std::vector<std::int32_t> first_labels(const Dataset& ds, Epoch& epoch) {
  const auto batch = epoch.batch(0);
  return read_back(ds.space(), ds.stream(), std::get<1>(batch));
}

template <class Space>
using Preloaded = DeviceDataset<Space, float, std::int32_t>;

TYPED_TEST(Lifetimes, MovedFromDatasetServesNoBatch) {
  const LabelledRows rows(100, 3);
  Preloaded<TypeParam> a(this->space_, small_batches(), rows.x(), rows.y());
  const auto b = std::move(a);
  EXPECT_EQ(b.num_rows(), 100U);
  EXPECT_EQ(a.num_batches(), 0U);  // NOLINT(bugprone-use-after-move): the moved-from state
  try {
    (void)a.batch(0);
    ADD_FAILURE() << "a moved-from dataset served a batch";
  } catch (const std::out_of_range& error) {
    EXPECT_NE(std::string(error.what()).find("moved from"), std::string::npos) << error.what();
  }
}

TYPED_TEST(Lifetimes, EpochsOfADatasetMovedAwayThrow) {
  const LabelledRows rows(100, 3);
  for (const Shuffle shuffle : shuffles<TypeParam>()) {
    SCOPED_TRACE(static_cast<int>(shuffle));
    Preloaded<TypeParam> a(this->space_, small_batches(), rows.x(), rows.y());
    auto epoch = a.epoch({3, 1, shuffle});
    const auto before = first_labels(a, epoch);
    const auto view = std::get<1>(a.batch(2));  // a zero-copy view: it follows the data
    Preloaded<TypeParam> b(std::move(a));
    expect_every_use_refused(epoch, changed_since);
    EXPECT_EQ(read_back(b.space(), b.stream(), view),
              read_back(b.space(), b.stream(), std::get<1>(b.batch(2))));
    auto fresh = b.epoch({3, 1, shuffle});
    EXPECT_EQ(first_labels(b, fresh), before);  // the same epoch of the same data
  }
}

TYPED_TEST(Lifetimes, EpochsOfAMovedFromDatasetSayMovedFrom) {
  const LabelledRows rows(100, 3);
  auto space = resident::testing::budgeted_space<TypeParam>();
  for (const Shuffle shuffle : shuffles<TypeParam>()) {
    SCOPED_TRACE(static_cast<int>(shuffle));
    Preloaded<TypeParam> a(space, small_batches(), rows.x(), rows.y());
    const Preloaded<TypeParam> b(std::move(a));
    const auto used = resident::testing::used_bytes(space);
    auto epoch = a.epoch({3, 1, shuffle});  // NOLINT(bugprone-use-after-move): under test
    expect_every_use_refused(epoch, made_moved_from);
    EXPECT_EQ(a.ring_bytes(), 0U) << "a moved-from dataset allocated a gather ring";
    EXPECT_EQ(resident::testing::used_bytes(space), used) << "a moved-from dataset allocated";
  }
}

/// For every shuffle: datasets `a` (100 rows) and `b` (37 rows) with an epoch each; `change(a, b)`
/// must end both epochs, then `after(a, labels_of_b)` checks what `a` holds now.
template <class Space, class Change, class After>
void expect_change_ends_both_epochs(const Space& space, Change change, After after) {
  const LabelledRows rows_a(100, 3);
  const LabelledRows rows_b(37, 3);
  for (const Shuffle shuffle : shuffles<Space>()) {
    SCOPED_TRACE(static_cast<int>(shuffle));
    Preloaded<Space> a(space, small_batches(), rows_a.x(), rows_a.y());
    Preloaded<Space> b(space, small_batches(), rows_b.x(), rows_b.y());
    auto epoch_a = a.epoch({5, 2, shuffle});
    auto epoch_b = b.epoch({5, 2, shuffle});
    const auto labels_b = first_labels(b, epoch_b);
    change(a, b);
    expect_every_use_refused(epoch_a, changed_since);
    expect_every_use_refused(epoch_b, changed_since);
    auto fresh = a.epoch({5, 2, shuffle});
    EXPECT_EQ(fresh.size(), 5U);  // 37 rows in batches of 8: a holds b's data now
    EXPECT_EQ(first_labels(a, fresh), labels_b);
    after(a, b, fresh);
  }
}

TYPED_TEST(Lifetimes, EpochsOfBothSidesOfAMoveAssignmentThrow) {
  expect_change_ends_both_epochs(
      this->space_, [](auto& a, auto& b) { a = std::move(b); }, [](auto&, auto&, auto&) {});
}

TYPED_TEST(Lifetimes, EpochsOfSwappedDatasetsThrow) {
  expect_change_ends_both_epochs(
      this->space_,
      [](auto& a, auto& b) {
        using std::swap;
        swap(a, b);
      },
      [](auto& a, auto& b, auto& fresh) {
        a.swap(b);  // the member swap too
        expect_every_use_refused(fresh, changed_since);
      });
}

TYPED_TEST(Lifetimes, EpochsThatOutliveTheirDatasetThrow) {
  const LabelledRows rows(100, 3);
  for (const Shuffle shuffle : shuffles<TypeParam>()) {
    SCOPED_TRACE(static_cast<int>(shuffle));
    auto a =
        std::make_unique<Preloaded<TypeParam>>(this->space_, small_batches(), rows.x(), rows.y());
    auto epoch = a->epoch({3, 1, shuffle});
    a.reset();
    expect_every_use_refused(epoch, changed_since);
  }
}

TEST(LifetimesHost, AMovedFromEpochSaysItWasMovedFrom) {
  const LabelledRows rows(100, 3);
  Preloaded<resident::HostSpace> a(resident::HostSpace{}, small_batches(), rows.x(), rows.y());
  auto epoch = a.epoch({1, 0, Shuffle::samples});
  auto taken = std::move(epoch);
  EXPECT_EQ(first_labels(a, taken).size(), 8U);
  expect_every_use_refused(epoch, "this epoch was moved from");  // NOLINT(bugprone-use-after-move)
  epoch = std::move(taken);                                      // and back: the epoch serves again
  EXPECT_EQ(first_labels(a, epoch).size(), 8U);
}

TEST(LifetimesHost, ConvertingEpochsOfAMovedDatasetThrow) {
  const LabelledRows rows(100, 3);
  Preloaded<resident::HostSpace> a(resident::HostSpace{}, small_batches(), rows.x(), rows.y());
  auto epoch = a.epoch({1, 0, Shuffle::none}, resident::convert<0>(resident::Normalize{2, 1}));
  ASSERT_TRUE(epoch.gathers());
  const Preloaded<resident::HostSpace> b(std::move(a));
  expect_every_use_refused(epoch, changed_since);
  expect_refused([&] { (void)epoch.batch_indices(0); }, changed_since);
}

TYPED_TEST(Lifetimes, StreamingEpochsOfAMovedAssignedOrSwappedDatasetThrow) {
  const LabelledRows rows_a(100, 3);
  const LabelledRows rows_b(37, 3);
  using Streamed = StreamingDataset<TypeParam, float, std::int32_t>;
  for (const Shuffle shuffle : {Shuffle::none, Shuffle::batches, Shuffle::samples}) {
    SCOPED_TRACE(static_cast<int>(shuffle));
    Streamed a(this->space_, small_batches(), rows_a.x(), rows_a.y());
    Streamed b(this->space_, small_batches(), rows_b.x(), rows_b.y());
    auto epoch_a = a.epoch({5, 2, shuffle});
    auto epoch_b = b.epoch({5, 2, shuffle});
    (void)epoch_a.batch(3);  // a pass is running
    Streamed c(std::move(a));
    expect_every_use_refused(epoch_a, changed_since);
    auto of_moved_from = a.epoch({5, 2, shuffle});  // NOLINT(bugprone-use-after-move)
    expect_every_use_refused(of_moved_from, made_moved_from);

    auto epoch_c = c.epoch({5, 2, shuffle});
    using std::swap;
    swap(b, c);
    expect_every_use_refused(epoch_b, changed_since);
    expect_every_use_refused(epoch_c, changed_since);

    auto epoch_b2 = b.epoch({5, 2, shuffle});
    b = std::move(c);
    expect_every_use_refused(epoch_b2, changed_since);
    auto fresh = b.epoch({5, 2, shuffle});
    EXPECT_EQ(fresh.size(), 5U);  // b holds the 37 rows now
    for (const auto& batch : fresh) (void)batch;
  }
}

TYPED_TEST(Lifetimes, MakeDatasetEpochsOfAMovedOrSwappedDatasetThrow) {
  const LabelledRows rows(1000, 3);
  for (const bool streamed : {false, true}) {
    SCOPED_TRACE(streamed ? "streamed" : "preloaded");
    auto space = this->space_;
    if constexpr (std::is_same_v<TypeParam, resident::HostSpace>) {
      // Below the data's 16 kB, above two sets of chunk slots: both datasets stream.
      if (streamed) space = resident::HostSpace::with_budget(8000);
    } else if (streamed) {
      continue;  // a device cannot be made small enough here
    }
    auto a = resident::make_dataset(space, small_batches(), rows.x(), rows.y());
    auto b = resident::make_dataset(space, small_batches(), rows.x(), rows.y());
    ASSERT_EQ(a.is_streaming(), streamed);
    auto epoch_a = a.epoch({1, 1, Shuffle::batches});
    auto c = std::move(a);
    expect_every_use_refused(epoch_a, changed_since);
    auto of_moved_from = a.epoch({1, 1, Shuffle::batches});  // NOLINT(bugprone-use-after-move)
    expect_every_use_refused(of_moved_from, made_moved_from);
    auto epoch_b = b.epoch({1, 1, Shuffle::batches});
    auto epoch_c = c.epoch({1, 1, Shuffle::batches});
    std::swap(b, c);
    expect_every_use_refused(epoch_b, changed_since);
    expect_every_use_refused(epoch_c, changed_since);
    auto fresh = b.epoch({1, 1, Shuffle::batches});
    EXPECT_EQ(fresh.size(), 125U);
  }
}

}  // namespace
