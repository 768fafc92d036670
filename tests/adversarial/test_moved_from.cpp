// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// Every public member of every movable public class, called on a moved-from object: each one
// either throws a typed error saying the object was moved from, or answers as its reference
// says an empty object does (0 rows, 0 batches, null data); then the object is assigned into
// and used again. The (class, member) pairs are listed in moved_from_members.txt:
// scripts/public-members.py (ctest `scripts.public_members`) fails when a header's public
// member has no line there, and `MovedFromCases.EveryListedMemberHasACaseAndEveryCaseIsListed`
// fails when a line has no case below or a case no line.

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "resident/npz.hpp"
#include "resident/resident.hpp"
#if RESIDENT_HAS_CUDA
#include "resident/cuda_host_pinned_space.hpp"
#include "resident/cuda_space.hpp"
#endif

namespace {

using resident::DatasetOptions;
using resident::EpochOptions;
using resident::HostSpace;
using resident::Shuffle;

using HostDevice = resident::DeviceDataset<HostSpace, float, std::int32_t>;
using HostStreaming = resident::StreamingDataset<HostSpace, float, std::int32_t>;
using HostDataset = resident::Dataset<HostSpace, float, std::int32_t>;
using HostDatasetSubset = resident::DatasetSubset<HostSpace, float, std::int32_t>;
using HostTokens = resident::TokenDataset<HostSpace, std::uint16_t>;
using HostCorpus = resident::TokenCorpus<HostSpace, std::uint16_t>;
using HostSubset = resident::Subset<HostSpace, float, std::int32_t>;
using HostMixture = resident::Mixture<HostSpace, float, std::int32_t>;

const std::string cases_file = RESIDENT_TEST_DATA_DIR "/../adversarial/moved_from_members.txt";

/// Runs the cases of one class: each member's call, checked, and recorded by name so that the
/// list can be compared with the cases. With `calling` false the calls are only recorded.
class Cases {
 public:
  explicit Cases(bool calling) : calling_(calling) {}

  /// `use` throws resident::Error (or the std::out_of_range that `batch(i)` and a few
  /// accessors document) whose message says the object was moved from.
  void says_moved(const std::string& owner, const std::string& member,
                  const std::function<void()>& use) {
    seen_.insert({owner, member});
    if (!calling_) return;
    SCOPED_TRACE(owner + "::" + member);
    try {
      use();
      ADD_FAILURE() << owner << "::" << member << " of a moved-from object did not throw";
    } catch (const resident::Error& error) {
      EXPECT_NE(std::string(error.what()).find("moved"), std::string::npos) << error.what();
    } catch (const std::out_of_range& error) {
      EXPECT_NE(std::string(error.what()).find("moved"), std::string::npos) << error.what();
    }
  }

  /// `use` answers as for an empty object; it checks its answer itself.
  void answers(const std::string& owner, const std::string& member,
               const std::function<void()>& use) {
    seen_.insert({owner, member});
    if (!calling_) return;
    SCOPED_TRACE(owner + "::" + member);
    use();
  }

  /// The same check, for several members that one call exercises together.
  void answers(const std::string& owner, std::initializer_list<const char*> members,
               const std::function<void()>& use) {
    for (const char* member : members) seen_.insert({owner, member});
    if (!calling_) return;
    SCOPED_TRACE(owner + "::" + *members.begin());
    use();
  }

  /// Whether the members are called (else only recorded): what the code around the cases
  /// does with the object after them is skipped too.
  [[nodiscard]] bool calling() const noexcept { return calling_; }

  [[nodiscard]] const std::set<std::pair<std::string, std::string>>& seen() const { return seen_; }

 private:
  bool calling_;
  std::set<std::pair<std::string, std::string>> seen_;
};

/// Features and labels 0..rows-1 (each feature of row r is r).
struct Rows {
  explicit Rows(std::size_t rows) : features(rows * 4), labels(rows) {
    for (std::size_t r = 0; r < rows; ++r) {
      labels[r] = static_cast<std::int32_t>(r);
      for (std::size_t c = 0; c < 4; ++c) features[r * 4 + c] = static_cast<float>(r);
    }
  }
  [[nodiscard]] resident::HostTensor<const float> x() const {
    return {features.data(), {labels.size(), 4}};
  }
  [[nodiscard]] resident::HostTensor<const std::int32_t> y() const {
    return {labels.data(), {labels.size()}};
  }
  std::vector<float> features;
  std::vector<std::int32_t> labels;
};

DatasetOptions options_of(std::size_t batch) {
  DatasetOptions options;
  options.batch_size = batch;
  options.reserve_bytes = 0;
  options.streaming.chunk_batches = 2;
  return options;
}

/// The label of row 0 of a host batch (field 1), or of its token stream's first token.
template <class Batch>
std::int64_t first_label(const Batch& batch) {
  return static_cast<std::int64_t>(std::get<1>(batch).data()[0]);
}

/// A scratch file removed when the test ends.
struct Scratch {
  explicit Scratch(const std::string& name)
      : path(::testing::TempDir() + "resident_moved_" + name) {}
  ~Scratch() { (void)std::remove(path.c_str()); }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  std::string path;
};

// ---------------------------------------------------------------------------------------
// The members every dataset has (DatasetAccessors), on a moved-from dataset of `owner`

/// Whether a dataset serves `batch(i)` outside an epoch (a `Subset` does not).
template <class Dataset, class = void>
struct has_batch : std::false_type {};
template <class Dataset>
struct has_batch<Dataset, std::void_t<decltype(std::declval<Dataset&>().batch(0))>>
    : std::true_type {};

template <class Dataset>
void accessors_of_moved_from(Cases& cases, const std::string& owner, Dataset& gone,
                             std::size_t batch) {
  const Dataset& view = gone;
  cases.answers(owner, "num_rows", [&] { EXPECT_EQ(view.num_rows(), 0U); });
  cases.answers(owner, "first_row", [&] { EXPECT_EQ(view.first_row(), 0U); });
  cases.answers(owner, "batch_size", [&] { EXPECT_EQ(view.batch_size(), batch); });
  cases.answers(owner, "remainder", [&] { (void)view.remainder(); });
  cases.answers(owner, "num_batches", [&] { EXPECT_EQ(view.num_batches(), 0U); });
  cases.answers(owner, "shard", [&] { EXPECT_EQ(view.shard().rank, 0); });
  cases.answers(owner, "sharding", [&] { (void)view.sharding(); });
  cases.answers(owner, "empty", [&] { EXPECT_TRUE(view.empty()); });
  cases.answers(owner, "moved_from", [&] { EXPECT_TRUE(view.moved_from()); });
  cases.answers(owner, "space", [&] { EXPECT_EQ(view.space().name(), "host"); });
  cases.answers(owner, "stream", [&] { (void)view.stream(); });
  cases.answers(owner, "bytes", [&] { EXPECT_EQ(view.bytes(), 0U); });
  cases.answers(owner, "ring_bytes", [&] { EXPECT_EQ(view.ring_bytes(), 0U); });
  if constexpr (has_batch<Dataset>::value)
    cases.says_moved(owner, "batch", [&] { (void)gone.batch(0); });
  // An epoch of a moved-from dataset is made (allocating nothing) and every use says why.
  cases.says_moved(owner, "epoch", [&] {
    auto epoch = gone.epoch(EpochOptions{1, 0, Shuffle::samples});
    (void)epoch.size();
  });
  cases.says_moved(owner, "resume", [&] {
    auto epoch = gone.resume(EpochOptions{1, 0, Shuffle::samples}, resident::EpochState{});
    (void)epoch.size();
  });
  cases.answers(owner, "impl_core", [&] { EXPECT_TRUE(view.impl_core().moved_from()); });
}

/// The members of the preloaded owners (DeviceDataset, TokenDataset) that their epochs call.
template <class Dataset>
void ring_hooks_of_moved_from(Cases& cases, const std::string& owner, Dataset& gone) {
  cases.answers(owner, "impl_rings", [&] { EXPECT_EQ(gone.impl_rings().bytes(), 0U); });
  cases.answers(owner, "impl_row_shapes", [&] { (void)gone.impl_row_shapes(); });
  cases.answers(owner, "storage_owner", [&] { EXPECT_FALSE(gone.storage_owner()); });
  cases.answers(owner, "impl_owner_of", [&] {
    const std::byte somewhere{};
    EXPECT_FALSE(gone.impl_owner_of(&somewhere, 1));
  });
}

/// `swap` of a moved-from dataset with a live one: the roles trade, and the epochs of both end.
template <class Dataset>
void swap_of_moved_from(Cases& cases, const std::string& owner, Dataset& gone, Dataset& live) {
  cases.answers(owner, "swap", [&] {
    const std::size_t batches = live.num_batches();
    auto epoch = live.epoch();
    gone.swap(live);
    EXPECT_TRUE(live.moved_from());
    EXPECT_FALSE(gone.moved_from());
    EXPECT_EQ(gone.num_batches(), batches);
    EXPECT_THROW((void)epoch.size(), resident::Error);
    gone.swap(live);  // back
    EXPECT_TRUE(gone.moved_from());
  });
}

// ---------------------------------------------------------------------------------------
// Each class's cases

void device_dataset_cases(Cases& cases) {
  const std::string owner = "resident::DeviceDataset";
  const Rows rows(40);
  const HostSpace space = HostSpace::with_budget(1 << 20);
  HostDevice a(space, options_of(8), rows.x(), rows.y());
  HostDevice b(std::move(a));
  accessors_of_moved_from(cases, owner, a, 8);  // NOLINT(bugprone-use-after-move)
  ring_hooks_of_moved_from(cases, owner, a);
  cases.answers(owner, "field", [&] {
    EXPECT_EQ(a.field<0>().rows(), 0U);
    EXPECT_EQ(a.field<1>().data(), nullptr);
  });
  swap_of_moved_from(cases, owner, a, b);
  if (cases.calling()) {
    EXPECT_EQ(space.used_bytes(), b.bytes());
    a = std::move(b);  // assigned into, then used
    EXPECT_FALSE(a.moved_from());
    EXPECT_EQ(first_label(a.batch(4)), 32);
    HostDevice c(space, options_of(4), rows.x(), rows.y());
    b = std::move(c);  // a moved-from dataset assigned into
    EXPECT_EQ(first_label(b.batch(9)), 36);
    EXPECT_TRUE(c.moved_from());  // NOLINT(bugprone-use-after-move)
  }
}

void subset_cases(Cases& cases) {
  const std::string owner = "resident::Subset";
  const Rows rows(40);
  const HostSpace space = HostSpace::with_budget(1 << 20);
  const HostDevice dataset(space, options_of(8), rows.x(), rows.y());
  HostSubset a(dataset, 4, 30, options_of(8));
  HostSubset b(std::move(a));
  accessors_of_moved_from(cases, owner, a, 8);  // NOLINT(bugprone-use-after-move)
  ring_hooks_of_moved_from(cases, owner, a);
  const HostSubset& view = a;
  cases.answers(owner, "contiguous", [&] { EXPECT_FALSE(view.contiguous()); });
  cases.answers(owner, "map_bytes", [&] { EXPECT_EQ(view.map_bytes(), 0U); });
  cases.says_moved(owner, "dataset_row", [&] { (void)view.dataset_row(0); });
  swap_of_moved_from(cases, owner, a, b);
  if (cases.calling()) {
    a = std::move(b);  // assigned into, then used
    EXPECT_EQ(a.dataset_row(0), 4U);
    HostSubset c(dataset, std::vector<std::size_t>{7, 3}, options_of(1));
    b = std::move(c);  // a moved-from subset assigned into
    EXPECT_EQ(b.dataset_row(1), 3U);
    EXPECT_TRUE(c.moved_from());  // NOLINT(bugprone-use-after-move)
  }
}

void mixture_cases(Cases& cases) {
  const std::string owner = "resident::Mixture";
  const Rows rows(40);
  const HostSpace space = HostSpace::with_budget(1 << 20);
  const HostDevice first(space, options_of(8), rows.x(), rows.y());
  const HostDevice second(space, options_of(4), rows.x(), rows.y());
  const std::vector<resident::MixtureShare> shares{resident::MixtureShare::count(30),
                                                   resident::MixtureShare::count(10)};
  HostMixture a({first, second}, shares, {}, options_of(8));
  HostMixture b(std::move(a));
  accessors_of_moved_from(cases, owner, a, 8);  // NOLINT(bugprone-use-after-move)
  const HostMixture& view = a;
  cases.answers(owner, "impl_rings", [&] { EXPECT_EQ(view.impl_rings().bytes(), 0U); });
  cases.answers(owner, "impl_row_shapes", [&] { (void)view.impl_row_shapes(); });
  cases.answers(owner, "impl_owner_of", [&] {
    const std::byte somewhere{};
    EXPECT_FALSE(view.impl_owner_of(&somewhere, 1));
  });
  cases.answers(owner, "order", [&] { EXPECT_EQ(view.order().size(), 0U); });
  cases.answers(owner, "sample",
                [&] { EXPECT_THROW((void)view.sample(0, EpochOptions{}), std::out_of_range); });
  swap_of_moved_from(cases, owner, a, b);
  if (cases.calling()) {
    a = std::move(b);  // assigned into, then used
    EXPECT_EQ(a.sample(35, EpochOptions{}).source, 1U);
    HostMixture c({second}, {resident::MixtureShare::repeat(1)}, {}, options_of(1));
    b = std::move(c);  // a moved-from mixture assigned into
    EXPECT_EQ(b.num_rows(), 40U);
    EXPECT_TRUE(c.moved_from());  // NOLINT(bugprone-use-after-move)
  }
}

void streaming_dataset_cases(Cases& cases) {
  const std::string owner = "resident::StreamingDataset";
  const Rows rows(40);
  const HostSpace space = HostSpace::with_budget(1 << 20);
  HostStreaming a(space, options_of(8), rows.x(), rows.y());
  (void)a.batch(1);  // moved mid-pass
  HostStreaming b(std::move(a));
  accessors_of_moved_from(cases, owner, a, 8);  // NOLINT(bugprone-use-after-move)
  const HostStreaming& view = a;
  cases.answers(owner, "num_chunks", [&] { EXPECT_EQ(view.num_chunks(), 0U); });
  cases.answers(owner, "data_bytes", [&] { EXPECT_EQ(view.data_bytes(), 0U); });
  cases.answers(owner, "host_bytes", [&] { EXPECT_EQ(view.host_bytes(), 0U); });
  cases.answers(owner, "mapped_bytes", [&] { EXPECT_EQ(view.mapped_bytes(), 0U); });
  cases.answers(owner, "planned_ring_bytes", [&] { EXPECT_EQ(view.planned_ring_bytes(), 0U); });
  cases.answers(owner, "order", [&] { EXPECT_EQ(view.order(), resident::StreamOrder::automatic); });
  cases.answers(owner, "window_chunks", [&] { EXPECT_EQ(view.window_chunks(), 0U); });
  cases.answers(owner, "window_rows", [&] { EXPECT_EQ(view.window_rows(), 0U); });
  // The options it was made with: figures, not memory.
  cases.answers(owner, "chunk_batches", [&] { (void)view.chunk_batches(); });
  cases.answers(owner, "chunk_slots", [&] { (void)view.chunk_slots(); });
  cases.answers(owner, "prefetch_chunks", [&] { (void)view.prefetch_chunks(); });
  cases.answers(owner, "impl_rings", [&] { EXPECT_EQ(a.impl_rings().bytes(), 0U); });
  cases.answers(owner, "impl_row_shapes", [&] { (void)a.impl_row_shapes(); });
  cases.answers(owner, "impl_owner_of", [&] {
    const std::byte somewhere{};
    EXPECT_FALSE(a.impl_owner_of(&somewhere, 1));
  });
  swap_of_moved_from(cases, owner, a, b);
  if (cases.calling()) {
    a = std::move(b);
    EXPECT_EQ(first_label(a.batch(3)), 24);
    HostStreaming c(space, options_of(4), rows.x(), rows.y());
    b = std::move(c);
    EXPECT_EQ(first_label(b.batch(9)), 36);
  }
}

std::vector<std::uint16_t> token_stream(std::size_t tokens) {
  std::vector<std::uint16_t> stream(tokens);
  for (std::size_t t = 0; t < tokens; ++t) stream[t] = static_cast<std::uint16_t>(t);
  return stream;
}

void token_dataset_cases(Cases& cases) {
  const std::string owner = "resident::TokenDataset";
  const auto stream = token_stream(200);
  const resident::HostTensor<const std::uint16_t> tokens(stream.data(), {stream.size()});
  HostTokens a(HostSpace{}, options_of(4), resident::TokenOptions{8, 0}, tokens);
  HostTokens b(std::move(a));
  accessors_of_moved_from(cases, owner, a, 4);  // NOLINT(bugprone-use-after-move)
  ring_hooks_of_moved_from(cases, owner, a);
  const HostTokens& view = a;
  cases.answers(owner, "num_tokens", [&] { EXPECT_EQ(view.num_tokens(), 0U); });
  cases.answers(owner, "first_token", [&] { EXPECT_EQ(view.first_token(), 0U); });
  cases.answers(owner, "tokens", [&] { EXPECT_EQ(view.tokens().rows(), 0U); });
  cases.answers(owner, "context", [&] { (void)view.context(); });
  cases.answers(owner, "stride", [&] { (void)view.stride(); });
  swap_of_moved_from(cases, owner, a, b);
  if (cases.calling()) {
    a = std::move(b);
    EXPECT_EQ(std::get<0>(a.batch(1)).data()[0], 32);
  }
}

/// A `make_dataset` that streams: a budget a byte below the data, above its three chunk slots
/// and its ring of one batch.
HostDataset streaming_made(const Rows& rows, HostSpace& space) {
  DatasetOptions options = options_of(8);
  options.ring_depth = 1;
  options.streaming.chunk_slots = 3;
  options.streaming.prefetch_chunks = 1;
  const auto probe =
      resident::plan(HostSpace::with_budget(std::size_t{1} << 30), options, rows.x(), rows.y());
  space = HostSpace::with_budget(probe.needed_bytes - 1);
  return resident::make_dataset(space, options, rows.x(), rows.y());
}

template <class Dataset>
void basic_dataset_cases(Cases& cases, const std::string& owner, Dataset& gone, std::size_t batch) {
  accessors_of_moved_from(cases, owner, gone, batch);
  cases.answers(owner, "plan", [&] {
    // No stale figures of the data it no longer holds, and a reason that says why.
    const resident::Plan& plan = gone.plan();
    EXPECT_EQ(plan.needed_bytes, 0U);
    EXPECT_EQ(plan.ring_bytes, 0U);
    EXPECT_FALSE(plan.fits);
    EXPECT_NE(plan.reason.find("moved from"), std::string::npos) << plan.reason;
  });
  cases.answers(owner, "is_streaming", [&] { (void)gone.is_streaming(); });
  // Whichever it held, the dataset inside is moved from.
  cases.answers(owner, "preloaded", [&] {
    if (auto* held = gone.preloaded()) {
      EXPECT_TRUE(held->moved_from());
    }
  });
  cases.answers(owner, "streaming", [&] {
    if (auto* held = gone.streaming()) {
      EXPECT_TRUE(held->moved_from());
    }
  });
}

void dataset_cases(Cases& cases) {
  const std::string owner = "resident::Dataset";
  const Rows rows(400);
  HostSpace small;
  HostDataset streamed = streaming_made(rows, small);
  EXPECT_TRUE(streamed.is_streaming());
  HostDataset preloaded = resident::make_dataset(HostSpace{}, options_of(8), rows.x(), rows.y());
  EXPECT_FALSE(preloaded.is_streaming());
  for (HostDataset* from : {&streamed, &preloaded}) {
    HostDataset to(std::move(*from));
    basic_dataset_cases(cases, owner, *from, 8);
    if (cases.calling()) {
      *from = std::move(to);  // assigned into, then used
      EXPECT_EQ(first_label(from->batch(40)), 320);
    }
  }
}

void dataset_subset_cases(Cases& cases) {
  const std::string owner = "resident::DatasetSubset";
  const Rows rows(400);
  HostSpace small;
  const HostDataset streamed = streaming_made(rows, small);
  const HostDataset preloaded =
      resident::make_dataset(HostSpace{}, options_of(8), rows.x(), rows.y());
  DatasetOptions options = options_of(8);
  options.streaming.chunk_batches = 1;
  options.streaming.chunk_slots = 2;
  options.streaming.prefetch_chunks = 1;
  options.ring_depth = 1;
  for (const HostDataset* dataset : {&streamed, &preloaded}) {
    HostDatasetSubset from(*dataset, 40, 100, options);
    EXPECT_EQ(from.is_streaming(), dataset->is_streaming());
    HostDatasetSubset to(std::move(from));
    basic_dataset_cases(cases, owner, from, 8);  // NOLINT(bugprone-use-after-move)
    if (cases.calling()) {
      from = std::move(to);  // assigned into, then used
      auto epoch = from.epoch();
      EXPECT_EQ(first_label(epoch.batch(1)), 48);
    }
  }
}

void token_corpus_cases(Cases& cases) {
  const std::string owner = "resident::TokenCorpus";
  const Scratch file("tokens.npy");
  const auto stream = token_stream(300);
  resident::npy::save(file.path, stream.data(), resident::Shape{stream.size()});
  HostCorpus a = resident::load_token_file<std::uint16_t>(
      HostSpace{}, options_of(4), resident::TokenOptions{8, 0}, {file.path});
  HostCorpus b(std::move(a));
  basic_dataset_cases(cases, owner, a, 4);  // NOLINT(bugprone-use-after-move)
  // Figures of the windows, kept: they describe no memory.
  cases.answers(owner, "context", [&] { EXPECT_EQ(a.context(), 8U); });
  cases.answers(owner, "stride", [&] { (void)a.stride(); });
  if (cases.calling()) {
    a = std::move(b);
    EXPECT_EQ(std::get<0>(a.batch(2)).data()[0], 64);
  }
}

// ---------------------------------------------------------------------------------------
// Epochs and their iterators: moved from, every member throws saying so

template <class Epoch>
void epoch_members_of_moved_from(Cases& cases, const std::string& owner, Epoch& gone) {
  using Stream = typename Epoch::stream_type;
  cases.says_moved(owner, "size", [&] { (void)gone.size(); });
  cases.says_moved(owner, "empty", [&] { (void)gone.empty(); });
  cases.says_moved(owner, "batch", [&] { (void)gone.batch(0); });
  cases.says_moved(owner, "batch_indices", [&] { (void)gone.batch_indices(0); });
  cases.says_moved(owner, "wait", [&] { gone.wait(0, Stream{}); });
  cases.says_moved(owner, "release", [&] { gone.release(0, Stream{}); });
  cases.says_moved(owner, "begin", [&] { (void)gone.begin(); });
  cases.says_moved(owner, "end", [&] { (void)gone.end(); });
  cases.says_moved(owner, "state", [&] { (void)gone.state(); });
  cases.answers(owner, "options", [&] { EXPECT_EQ(gone.options().seed, 7U); });
  cases.answers(owner, "gathers", [&] { (void)gone.gathers(); });
  // Binding stores the stream only: the batches, bound or asked for on a stream, say moved.
  cases.answers(owner, "on", [&] {
    (void)gone.on(Stream{});
    EXPECT_THROW((void)gone.batch(0), resident::Error);
    EXPECT_THROW((void)gone.batch(0, Stream{}), resident::Error);
  });
}

/// An iterator moved from: its lease went with it, so dereferencing says so; the rest is
/// position arithmetic.
template <class Iterator>
void iterator_cases(Cases& cases, Iterator& live) {
  const std::string owner = "resident::detail::BatchIterator";
  Iterator to(std::move(live));
  Iterator& gone = live;  // NOLINT(bugprone-use-after-move): the moved-from object under test
  cases.says_moved(owner, "operator*", [&] { (void)*gone; });
  cases.answers(owner, "index", [&] { EXPECT_EQ(gone.index(), to.index()); });
  cases.answers(owner, "operator==", [&] { EXPECT_TRUE(gone == to); });
  cases.answers(owner, "operator!=", [&] { EXPECT_FALSE(gone != to); });
  cases.answers(owner, "operator++", [&] {
    ++gone;
    (void)gone++;
    EXPECT_EQ(gone.index(), to.index() + 2);
  });
  if (cases.calling()) {
    gone = to;  // assigned into, then used
    EXPECT_NO_THROW((void)*gone);
  }
}

template <class Dataset>
void epoch_of(Cases& cases, Dataset& ds, Shuffle shuffle) {
  const std::string owner = "resident::Epoch";
  auto epoch = ds.epoch(EpochOptions{7, 0, shuffle});
  auto to(std::move(epoch));
  epoch_members_of_moved_from(cases, owner, epoch);
  cases.says_moved(owner, "dataset", [&] { (void)epoch.dataset(); });
  cases.answers(owner, "impl_lease", [&] { EXPECT_FALSE(epoch.impl_lease().valid()); });
  auto it = to.begin();
  iterator_cases(cases, it);
  cases.answers(owner, "operator=", [&] {
    epoch = std::move(to);  // assigned into, then used
    EXPECT_EQ(epoch.size(), ds.num_batches());
    EXPECT_NO_THROW((void)epoch.batch(1));
    std::size_t seen = 0;
    for (auto batch : epoch) seen += std::get<0>(batch).rows() != 0 ? 1 : 0;
    EXPECT_EQ(seen, ds.num_batches());
  });
}

void epoch_cases(Cases& cases) {
  const Rows rows(40);
  HostDevice device(HostSpace{}, options_of(8), rows.x(), rows.y());
  HostStreaming streaming(HostSpace{}, options_of(8), rows.x(), rows.y());
  const auto stream = token_stream(200);
  HostTokens tokens(HostSpace{}, options_of(4), resident::TokenOptions{8, 0},
                    resident::HostTensor<const std::uint16_t>(stream.data(), {stream.size()}));
  for (const Shuffle shuffle : {Shuffle::none, Shuffle::samples}) {
    epoch_of(cases, device, shuffle);
    epoch_of(cases, streaming, shuffle);
    epoch_of(cases, tokens, shuffle);
  }
}

template <class Dataset>
void dataset_epoch_of(Cases& cases, Dataset& ds) {
  const std::string owner = "resident::DatasetEpoch";
  auto epoch = ds.epoch(EpochOptions{7, 0, Shuffle::samples});
  auto to(std::move(epoch));
  epoch_members_of_moved_from(cases, owner, epoch);
  cases.answers(owner, "impl_preloaded", [&] {
    if (auto* held = epoch.impl_preloaded()) {
      EXPECT_THROW((void)held->size(), resident::Error);
    }
  });
  cases.answers(owner, "impl_streamed", [&] {
    if (auto* held = epoch.impl_streamed()) {
      EXPECT_THROW((void)held->size(), resident::Error);
    }
  });
  cases.answers(owner, "impl_lease", [&] { EXPECT_FALSE(epoch.impl_lease().valid()); });
  auto it = to.begin();
  iterator_cases(cases, it);
  if (cases.calling()) {
    epoch = std::move(to);
    EXPECT_EQ(epoch.size(), ds.num_batches());
  }
}

void dataset_epoch_cases(Cases& cases) {
  const Rows rows(400);
  HostSpace small;
  HostDataset streamed = streaming_made(rows, small);
  HostDataset preloaded = resident::make_dataset(HostSpace{}, options_of(8), rows.x(), rows.y());
  dataset_epoch_of(cases, streamed);
  dataset_epoch_of(cases, preloaded);
  const Scratch file("corpus.npy");
  const auto stream = token_stream(300);
  resident::npy::save(file.path, stream.data(), resident::Shape{stream.size()});
  HostCorpus corpus = resident::load_token_file<std::uint16_t>(
      HostSpace{}, options_of(4), resident::TokenOptions{8, 0}, {file.path});
  dataset_epoch_of(cases, corpus);
}

// ---------------------------------------------------------------------------------------
// Files

void array_cases(Cases& cases) {
  const std::string owner = "resident::npy::Array";
  const Scratch file("array.npy");
  const std::vector<float> values(64, 2.5f);
  resident::npy::save(file.path, values.data(), resident::Shape{16, 4});
  for (const bool by_assignment : {false, true}) {
    SCOPED_TRACE(by_assignment ? "moved from by assignment" : "moved from by construction");
    resident::npy::Array moved = resident::npy::load(file.path);
    EXPECT_TRUE(moved.mapped());
    auto to = std::make_unique<resident::npy::Array>(resident::npy::load(file.path));
    if (by_assignment)
      *to = std::move(moved);
    else
      to = std::make_unique<resident::npy::Array>(std::move(moved));
    if (cases.calling()) {
      EXPECT_EQ(to->as<float>().data()[63], 2.5f);
    }
    // Its mapping is gone with the array it was moved to: the moved-from one must not point
    // into it, nor count its elements.
    to.reset();
    cases.answers(owner, "data", [&] { EXPECT_EQ(moved.data(), nullptr); });  // NOLINT
    cases.answers(owner, "size", [&] { EXPECT_EQ(moved.size(), 0U); });
    cases.answers(owner, "bytes", [&] { EXPECT_EQ(moved.bytes(), 0U); });
    cases.answers(owner, "shape", [&] { EXPECT_EQ(moved.shape().elements(), 0U); });
    cases.answers(owner, "mapped", [&] { EXPECT_FALSE(moved.mapped()); });
    cases.answers(owner, "path", [&] { EXPECT_EQ(moved.path(), ""); });
    cases.answers(owner, "dtype", [&] { (void)moved.dtype(); });
    cases.answers(owner, "fortran_order", [&] { EXPECT_FALSE(moved.fortran_order()); });
    cases.answers(owner, "check_unchanged", [&] { moved.check_unchanged("now"); });
    cases.answers(owner, "as", [&] {
      const auto tensor = moved.as<float>();
      EXPECT_EQ(tensor.rows(), 0U);
      EXPECT_EQ(tensor.data(), nullptr);
      // Another type: no elements of either, and the error says why rather than naming a file.
      try {
        (void)moved.as<std::int32_t>();
        ADD_FAILURE() << "as<int32_t>() of an empty f4 array did not throw";
      } catch (const resident::Error& error) {
        EXPECT_NE(std::string(error.what()).find("moved from"), std::string::npos) << error.what();
      }
    });
    cases.answers(owner, "operator=", [&] {
      moved = resident::npy::load(file.path);  // assigned into, then used
      EXPECT_EQ(moved.as<float>().data()[63], 2.5f);
    });
  }
}

void archive_cases(Cases& cases) {
  const std::string owner = "resident::npz::Archive";
  const Scratch file("archive.npz");
  const std::vector<std::int32_t> values(12, 5);
  resident::npz::save(file.path,
                      {{"x", resident::npy::DType::i4, values.data(), resident::Shape{3, 4}}});
  resident::npz::Archive a(file.path);
  resident::npz::Archive b(std::move(a));
  const resident::npz::Archive& gone = a;  // NOLINT(bugprone-use-after-move)
  cases.answers(owner, "path", [&] { EXPECT_EQ(gone.path(), ""); });
  cases.answers(owner, "options", [&] { (void)gone.options(); });
  cases.answers(owner, "members", [&] { EXPECT_TRUE(gone.members().empty()); });
  cases.answers(owner, "contains", [&] { EXPECT_FALSE(gone.contains("x")); });
  cases.answers(owner, "impl_file", [&] { EXPECT_EQ(gone.impl_file(), nullptr); });
  cases.says_moved(owner, "member", [&] { (void)gone.member("x"); });
  cases.says_moved(owner, "load", [&] { (void)gone.load("x"); });
  cases.says_moved(owner, "verify_crc", [&] { gone.verify_crc("x"); });
  cases.says_moved(owner, "check_unchanged", [&] { gone.check_unchanged("now"); });
  cases.says_moved(owner, "impl_entry", [&] { (void)gone.impl_entry("x"); });
  if (cases.calling()) {
    a = std::move(b);  // assigned into, then used
    EXPECT_EQ(a.load("x").as<std::int32_t>().data()[11], 5);
    a.check_unchanged("now");
    resident::npz::Archive c(file.path);
    b = std::move(c);  // a moved-from archive assigned into
    EXPECT_TRUE(b.contains("x"));
  }
}

// ---------------------------------------------------------------------------------------
// Plans and spaces: values, moved from they keep their figures and drop their strings

void plan_cases(Cases& cases) {
  const std::string owner = "resident::Plan";
  const Rows rows(40);
  const auto space = HostSpace::with_budget(64);
  resident::Plan a = resident::plan(space, options_of(8), rows.x(), rows.y());
  EXPECT_FALSE(a.fits);
  resident::Plan b(std::move(a));
  cases.answers(owner, "usable_bytes", [&] { (void)a.usable_bytes(); });  // NOLINT
  cases.answers(owner, "refusal", [&] { (void)a.refusal().what(); });
  if (cases.calling()) {
    a = std::move(b);
    EXPECT_NE(std::string(a.refusal().what()).find("host"), std::string::npos);
  }
}

/// A moved-from mixture order is the order of no source.
void mixture_order_cases(Cases& cases) {
  const std::string owner = "resident::MixtureOrder";
  resident::MixtureOrder a({4, 6},
                           {resident::MixtureShare::weight(1), resident::MixtureShare::weight(3)});
  resident::MixtureOrder b(std::move(a));
  resident::MixtureOrder& gone = a;  // NOLINT(bugprone-use-after-move): the object under test
  cases.answers(owner, "sources", [&] { EXPECT_EQ(gone.sources(), 0U); });
  cases.answers(owner, "size", [&] { EXPECT_EQ(gone.size(), 0U); });
  cases.answers(owner, "period", [&] { EXPECT_EQ(gone.period(), 0U); });
  cases.answers(owner, "periods", [&] { EXPECT_EQ(gone.periods(), 0U); });
  cases.answers(owner, "rows", [&] { EXPECT_THROW((void)gone.rows(0), std::out_of_range); });
  cases.answers(owner, "quota", [&] { EXPECT_THROW((void)gone.quota(0), std::out_of_range); });
  cases.answers(owner, "epoch_quota",
                [&] { EXPECT_THROW((void)gone.epoch_quota(0), std::out_of_range); });
  cases.answers(owner, "at",
                [&] { EXPECT_THROW((void)gone.at(0, 1, 0, true), std::out_of_range); });
  cases.answers(owner, "impl_table", [&] { EXPECT_TRUE(gone.impl_table().empty()); });
  cases.answers(owner, "impl_key", [&] { EXPECT_EQ(gone.impl_key(1, 2, true).sources, 0U); });
  cases.answers(owner, "phases", [&] { EXPECT_EQ(gone.phases(), 0U); });
  cases.answers(owner, "impl_hash",
                [&] { EXPECT_EQ(gone.impl_hash(3, 7), resident::MixtureOrder().impl_hash(3, 7)); });
  cases.answers(owner, "operator=", [&] {
    resident::MixtureOrder copy = b;
    copy = gone;  // a copy of the order of no source, and a move of it
    EXPECT_EQ(copy.size(), 0U);
    copy = std::move(gone);
    EXPECT_EQ(copy.sources(), 0U);
  });
  if (cases.calling()) {
    EXPECT_EQ(b.size(), 10U);
    a = std::move(b);
    EXPECT_EQ(a.quota(1), 7U);  // 2.5 and 7.5: of equal remainders, the first source takes one
    EXPECT_EQ(b.size(), 0U);    // NOLINT(bugprone-use-after-move): moved from again
  }
}

/// A moved-from space is the default space (`HostSpace{}`: the whole host, no budget).
template <class Space>
void host_memory_space_cases(Cases& cases, const std::string& owner, Space budgeted) {
  using Stream = typename Space::stream_type;
  void* held = budgeted.allocate(256);
  Space to(std::move(budgeted));
  Space& gone = budgeted;  // NOLINT(bugprone-use-after-move): the moved-from object under test
  cases.answers(owner, "has_budget", [&] { EXPECT_FALSE(gone.has_budget()); });
  cases.answers(owner, "used_bytes", [&] { EXPECT_EQ(gone.used_bytes(), 0U); });
  cases.answers(owner, "capacity", [&] { EXPECT_GT(gone.capacity().total_bytes, 4096U); });
  cases.answers(owner, "capacity_report", [&] {
    EXPECT_EQ(gone.capacity_report().capacity.total_bytes, gone.capacity().total_bytes);
  });
  cases.answers(owner, "default_reserve_bytes", [&] { (void)gone.default_reserve_bytes(); });
  cases.answers(owner, "name", [&] { EXPECT_EQ(gone.name(), Space{}.name()); });
  cases.answers(owner, "operator==", [&] { EXPECT_TRUE(gone == Space{}); });
  cases.answers(owner, "operator!=", [&] { EXPECT_TRUE(gone != to); });
  cases.answers(owner, {"create_stream", "synchronize", "destroy_stream"}, [&] {
    const Stream stream = gone.create_stream();
    gone.synchronize(stream);
    gone.destroy_stream(stream);
  });
  cases.answers(owner, {"allocate", "copy_from_host", "copy_to_host", "deallocate"}, [&] {
    void* block = gone.allocate(64);
    ASSERT_NE(block, nullptr);
    const char text[] = "moved";
    char back[sizeof text] = {};
    gone.copy_from_host(block, text, sizeof text, Stream{});
    gone.copy_to_host(back, block, sizeof text, Stream{});
    EXPECT_EQ(std::string(back), "moved");
    gone.deallocate(block, 64);
    EXPECT_EQ(to.used_bytes(), 256U) << "the budget went with the move";
  });
  to.deallocate(held, 256);
  EXPECT_EQ(to.used_bytes(), 0U);
  if (cases.calling()) {
    gone = std::move(to);  // assigned into: the budget is back
    EXPECT_TRUE(gone.has_budget());
  }
}

void host_space_cases(Cases& cases) {
  host_memory_space_cases(cases, "resident::HostSpace", HostSpace::with_budget(1 << 20));
}

#if RESIDENT_HAS_CUDA
bool has_device() { return resident::CudaSpace::device_count() > 0; }

void cuda_host_pinned_space_cases(Cases& cases) {
  const std::string owner = "resident::CudaHostPinnedSpace";
  if (!has_device()) GTEST_SKIP() << "no CUDA device";
  resident::CudaHostPinnedSpace space = resident::CudaHostPinnedSpace::with_budget(1 << 20);
  cases.answers(owner, "ensure_usable", [&] {
    resident::CudaHostPinnedSpace to(std::move(space));
    space.ensure_usable();  // NOLINT(bugprone-use-after-move)
    space = std::move(to);
  });
  host_memory_space_cases(cases, owner, std::move(space));
}

/// A CudaSpace is a device, a resource and a budget, shared by its copies: its move is a copy,
/// so the moved-from space is the same device, resource and budget, and works as the space it
/// was moved to.
void cuda_space_cases(Cases& cases) {
  const std::string owner = "resident::CudaSpace";
  if (!has_device()) GTEST_SKIP() << "no CUDA device";
  resident::CudaPoolResource pool(0);
  resident::CudaSpace a = resident::CudaSpace(0).with_resource(pool).with_budget(1 << 20);
  // A move as a program writes it, which for this type is a copy.
  const resident::CudaSpace to(std::move(a));  // NOLINT(performance-move-const-arg)
  resident::CudaSpace& gone = a;  // NOLINT(bugprone-use-after-move): the moved-from object
  cases.answers(owner, "device_id", [&] { EXPECT_EQ(gone.device_id(), 0); });
  cases.answers(owner, "name", [&] { EXPECT_EQ(gone.name(), "cuda:0"); });
  cases.answers(owner, "operator==", [&] { EXPECT_TRUE(gone == to); });
  cases.answers(owner, "operator!=", [&] { EXPECT_FALSE(gone != to); });
  cases.answers(owner, "ensure_usable", [&] { gone.ensure_usable(); });
  cases.answers(owner, "capacity", [&] { EXPECT_GT(gone.capacity().total_bytes, 0U); });
  cases.answers(owner, "capacity_report", [&] {
    EXPECT_NE(gone.capacity_report().source.find("a budget of"), std::string::npos);
  });
  cases.answers(owner, "default_reserve_bytes", [&] { (void)gone.default_reserve_bytes(); });
  cases.answers(owner, "has_resource", [&] { EXPECT_TRUE(gone.has_resource()); });
  cases.answers(owner, "has_budget", [&] { EXPECT_TRUE(gone.has_budget()); });
  cases.answers(owner, "used_bytes", [&] { EXPECT_EQ(gone.used_bytes(), 0U); });
  cases.answers(owner, "with_resource",
                [&] { EXPECT_EQ(gone.with_resource(pool), to.with_resource(pool)); });
  cases.answers(owner, "with_budget",
                [&] { EXPECT_EQ(gone.with_budget(1024).capacity().total_bytes, 1024U); });
  cases.answers(owner, "operator=", [&] {
    resident::CudaSpace other(0);
    other = gone;
    EXPECT_EQ(other, to);
  });
  cases.answers(owner,
                {"allocate", "copy_from_host", "copy_to_host", "synchronize", "deallocate",
                 "create_stream", "destroy_stream"},
                [&] {
                  const cudaStream_t stream = gone.create_stream();
                  void* block = gone.allocate(64);
                  ASSERT_NE(block, nullptr);
                  const char text[] = "moved";
                  char back[sizeof text] = {};
                  gone.copy_from_host(block, text, sizeof text, stream);
                  gone.copy_to_host(back, block, sizeof text, stream);
                  gone.synchronize(stream);
                  EXPECT_EQ(std::string(back), "moved");
                  gone.deallocate(block, 64);
                  gone.destroy_stream(stream);
                });
}

/// A pool moved from holds none: its queries and allocations (in either CCCL's spelling) throw
/// InvalidArgument saying so, its releases of null do nothing, and it is a pool again once one
/// is assigned to it.
void cuda_pool_resource_cases(Cases& cases) {
  const std::string owner = "resident::CudaPoolResource";
  if (!has_device()) GTEST_SKIP() << "no CUDA device";
  resident::CudaPoolResource gone(0);
  resident::CudaPoolResource to(std::move(gone));
  const resident::StreamRef stream(cudaStreamPerThread);
  const auto says_moved = [](auto&& use) {
    try {
      use();
      ADD_FAILURE() << "a moved-from pool answered";
    } catch (const resident::InvalidArgument& error) {
      EXPECT_NE(std::string(error.what()).find("moved-from"), std::string::npos) << error.what();
    }
  };
  // NOLINTBEGIN(bugprone-use-after-move): the moved-from object under test
  cases.answers(owner, "pool", [&] { EXPECT_EQ(gone.pool(), nullptr); });
  cases.answers(owner, "device_id", [&] { EXPECT_EQ(gone.device_id(), 0); });
  cases.answers(owner, "allocate_async",
                [&] { says_moved([&] { (void)gone.allocate_async(256, 256, stream); }); });
  cases.answers(owner, "allocate", [&] {
    says_moved([&] { (void)gone.allocate(256); });
    says_moved([&] { (void)gone.allocate(stream, 256, 256); });
  });
  cases.answers(owner, "allocate_sync",
                [&] { says_moved([&] { (void)gone.allocate_sync(256); }); });
  cases.answers(owner, "reserved_bytes", [&] { says_moved([&] { (void)gone.reserved_bytes(); }); });
  cases.answers(owner, "used_bytes", [&] { says_moved([&] { (void)gone.used_bytes(); }); });
  cases.answers(owner, "idle_bytes", [&] { says_moved([&] { (void)gone.idle_bytes(); }); });
  cases.answers(owner, "trim", [&] { says_moved([&] { gone.trim(); }); });
  cases.answers(owner, {"deallocate", "deallocate_async", "deallocate_sync"}, [&] {
    gone.deallocate(nullptr, 0);
    gone.deallocate(stream, nullptr, 0, 256);
    gone.deallocate_async(nullptr, 0, 256, stream);
    gone.deallocate_sync(nullptr, 0);
  });
  cases.answers(owner, "operator==", [&] { EXPECT_FALSE(gone == to); });
  cases.answers(owner, "operator!=", [&] { EXPECT_TRUE(gone != to); });
  cases.answers(owner, "operator=", [&] {
    gone = std::move(to);
    void* block = gone.allocate(256);
    EXPECT_NE(block, nullptr);
    gone.deallocate(block, 256);
    EXPECT_EQ(gone.used_bytes(), 0U);
  });
  // NOLINTEND(bugprone-use-after-move)
}
#endif

// ---------------------------------------------------------------------------------------

using CaseList = std::vector<std::pair<std::string, void (*)(Cases&)>>;

CaseList every_class() {
  return {
    {"DeviceDataset", device_dataset_cases}, {"Subset", subset_cases},
        {"StreamingDataset", streaming_dataset_cases}, {"TokenDataset", token_dataset_cases},
        {"Dataset", dataset_cases}, {"DatasetSubset", dataset_subset_cases},
        {"TokenCorpus", token_corpus_cases}, {"Epoch", epoch_cases},
        {"DatasetEpoch", dataset_epoch_cases}, {"Array", array_cases}, {"Archive", archive_cases},
        {"Plan", plan_cases}, {"MixtureOrder", mixture_order_cases}, {"Mixture", mixture_cases},
        {"HostSpace", host_space_cases},
#if RESIDENT_HAS_CUDA
        {"CudaHostPinnedSpace", cuda_host_pinned_space_cases}, {"CudaSpace", cuda_space_cases},
        {"CudaPoolResource", cuda_pool_resource_cases},
#endif
  };
}

void run_cases(void (*cases_of)(Cases&)) {
  Cases cases(true);
  cases_of(cases);
}

TEST(MovedFrom, DeviceDataset) { run_cases(device_dataset_cases); }
TEST(MovedFrom, Subset) { run_cases(subset_cases); }
TEST(MovedFrom, Mixture) { run_cases(mixture_cases); }
TEST(MovedFrom, StreamingDataset) { run_cases(streaming_dataset_cases); }
TEST(MovedFrom, TokenDataset) { run_cases(token_dataset_cases); }
TEST(MovedFrom, Dataset) { run_cases(dataset_cases); }
TEST(MovedFrom, DatasetSubset) { run_cases(dataset_subset_cases); }
TEST(MovedFrom, TokenCorpus) { run_cases(token_corpus_cases); }
TEST(MovedFrom, EpochAndItsIterator) { run_cases(epoch_cases); }
TEST(MovedFrom, DatasetEpochAndItsIterator) { run_cases(dataset_epoch_cases); }
TEST(MovedFrom, NpyArray) { run_cases(array_cases); }
TEST(MovedFrom, NpzArchive) { run_cases(archive_cases); }
TEST(MovedFrom, Plan) { run_cases(plan_cases); }
TEST(MovedFrom, MixtureOrder) { run_cases(mixture_order_cases); }
TEST(MovedFrom, HostSpace) { run_cases(host_space_cases); }
#if RESIDENT_HAS_CUDA
TEST(MovedFrom, CudaHostPinnedSpace) { run_cases(cuda_host_pinned_space_cases); }
TEST(MovedFrom, CudaSpace) { run_cases(cuda_space_cases); }
TEST(MovedFrom, CudaPoolResource) { run_cases(cuda_pool_resource_cases); }
#endif

// The regression first found: check_unchanged() of a moved-from archive called through its null
// file; now it throws, saying so.
TEST(MovedFrom, NpzArchiveCheckUnchangedThrowsInsteadOfCrashing) {
  const Scratch file("regression.npz");
  const std::vector<std::int32_t> values(4, 1);
  resident::npz::save(file.path, {{"x", resident::npy::DType::i4, values.data(), {4}}});
  resident::npz::Archive a(file.path);
  const resident::npz::Archive b(std::move(a));
  EXPECT_THROW(a.check_unchanged("now"), resident::Error);  // NOLINT(bugprone-use-after-move)
  EXPECT_TRUE(b.contains("x"));
}

bool cuda_cases_ran() {
#if RESIDENT_HAS_CUDA
  return has_device();
#else
  return false;
#endif
}

/// The list: {(class, member): called}, the members listed with a reason not called.
std::map<std::pair<std::string, std::string>, bool> listed_members() {
  std::ifstream in(cases_file);
  EXPECT_TRUE(in) << "cannot read " << cases_file;
  std::map<std::pair<std::string, std::string>, bool> listed;
  std::string line;
  while (std::getline(in, line)) {
    line = line.substr(0, line.find('#'));
    std::istringstream words(line);
    std::string owner, member, dash;
    if (!(words >> owner >> member) || member == "n/a") continue;
    listed[{owner, member}] = !(words >> dash);
  }
  return listed;
}

TEST(MovedFromCases, EveryListedMemberHasACaseAndEveryCaseIsListed) {
  std::set<std::pair<std::string, std::string>> seen;
  for (const auto& [name, cases_of] : every_class()) {
    SCOPED_TRACE(name);
    if (name.find("Cuda") == 0 && !cuda_cases_ran()) continue;
    Cases cases(false);
    cases_of(cases);
    seen.insert(cases.seen().begin(), cases.seen().end());
  }
  const auto listed = listed_members();
  EXPECT_GT(listed.size(), 100U);
  for (const auto& [entry, called] : listed) {
    // The CUDA spaces' cases run where a device (or the simulated runtime) is.
    if (entry.first.find("resident::Cuda") == 0 && seen.count(entry) == 0 && !cuda_cases_ran())
      continue;
    if (called) {
      EXPECT_EQ(seen.count(entry), 1U) << entry.first << "::" << entry.second << " is listed in "
                                       << cases_file << " but has no moved-from case";
    } else {
      EXPECT_EQ(seen.count(entry), 0U)
          << entry.first << "::" << entry.second
          << " is listed as not called (with a reason) but has a case; drop the reason";
    }
  }
  for (const auto& entry : seen)
    EXPECT_EQ(listed.count(entry), 1U)
        << entry.first << "::" << entry.second << " has a case but no line in " << cases_file;
}

}  // namespace
