// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// Epochs of one dataset run against each other. For every dataset kind (preloaded, streamed in
// whole-epoch and in window order, a token stream, make_dataset's streaming fallback), every
// shuffle and conversion width of a first epoch, and a second epoch of the same options, of
// another shuffle or of a wider conversion, in a space with room for both and in one with room
// for the first alone: hold views of the first epoch, make the second and read from it, read
// the held views again, and go on with the first. The held views keep their values and both
// epochs serve what each serves alone, or the second epoch is refused its memory with a
// CapacityError before it writes anything. The threaded form runs several epochs of one dataset
// on threads of their own (the tsan preset runs it under ThreadSanitizer).

#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "resident/resident.hpp"
#include "support/spaces.hpp"

namespace {

using resident::CapacityError;
using resident::DatasetOptions;
using resident::EpochOptions;
using resident::HostTensor;
using resident::Remainder;
using resident::Shuffle;
using resident::StreamOrder;
using resident::testing::has_budget;
using resident::testing::read_back;

using Bytes = std::vector<std::byte>;
using BatchBytes = std::vector<Bytes>;  // one per field

enum class Kind { preloaded, whole_epoch, window, tokens, fallback };
constexpr std::array<Kind, 5> kinds = {Kind::preloaded, Kind::whole_epoch, Kind::window,
                                       Kind::tokens, Kind::fallback};
constexpr std::array<const char*, 5> kind_names = {
    "preloaded", "streamed whole-epoch", "streamed window", "tokens", "make_dataset fallback"};

// Field 0 of an epoch: as stored (no conversion), or converted to double (wider than the stored
// elements and than the ring was planned for). (A conversion to float gathers into a ring as
// wide as `Shuffle::samples` does, which the first width covers.)
enum class Width { none, twice };
constexpr std::array<Width, 2> widths = {Width::none, Width::twice};
constexpr std::array<const char*, 2> width_names = {"stored", "double"};

// What the second epoch is beside the first.
enum class Second { same, other_shuffle, wider };
constexpr std::array<Second, 3> seconds = {Second::same, Second::other_shuffle, Second::wider};
constexpr std::array<const char*, 3> second_names = {"same options", "another shuffle",
                                                     "a wider conversion"};

struct ToDouble {
  using output_type = double;
  template <class T>
  RESIDENT_HOST_DEVICE double operator()(T value, std::size_t element) const noexcept {
    return static_cast<double>(value) + static_cast<double>(element % 3) * 0.25;
  }
};

// 2,410 rows of 8 floats and a label (row r holds r * 8 + c and r), and a stream of 20,011
// tokens: batches of 32, the last short (rows) or padded (tokens).
constexpr std::size_t rows = 2410;
constexpr std::size_t width = 8;
constexpr std::size_t batch_size = 32;
constexpr std::size_t token_count = 20011;
constexpr std::size_t context = 8;
// Batches each epoch reads after the held ones: past the ring and the chunk slots.
constexpr std::size_t reads = 12;

struct Data {
  Data() : x(rows * width), y(rows), tokens(token_count) {
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i);
    for (std::size_t r = 0; r < rows; ++r) y[r] = static_cast<std::int32_t>(r);
    for (std::size_t t = 0; t < tokens.size(); ++t)
      tokens[t] = static_cast<std::uint16_t>(t * 7 % 65521);
  }
  [[nodiscard]] HostTensor<const float> features() const { return {x.data(), {rows, width}}; }
  [[nodiscard]] HostTensor<const std::int32_t> labels() const { return {y.data(), {rows}}; }
  [[nodiscard]] HostTensor<const std::uint16_t> stream() const {
    return {tokens.data(), {tokens.size()}};
  }
  std::vector<float> x;
  std::vector<std::int32_t> y;
  std::vector<std::uint16_t> tokens;
};

template <class Space, class T>
Bytes bytes_of(const Space& space, typename Space::stream_type stream,
               resident::BatchView<const T> view) {
  const auto values = read_back(space, stream, view);
  Bytes bytes(values.size() * sizeof(T));
  if (!bytes.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

// An epoch of any dataset kind and conversion, as what its batches read back.
class AnyEpoch {
 public:
  AnyEpoch() = default;
  AnyEpoch(const AnyEpoch&) = delete;
  AnyEpoch& operator=(const AnyEpoch&) = delete;
  AnyEpoch(AnyEpoch&&) = delete;
  AnyEpoch& operator=(AnyEpoch&&) = delete;
  virtual ~AnyEpoch() = default;
  [[nodiscard]] virtual std::size_t size() = 0;
  // Batch k's bytes; `reread` reads the same views again later.
  virtual BatchBytes batch(std::size_t k, std::function<BatchBytes()>* reread) = 0;
};

template <class Epoch, class Space>
class Erased final : public AnyEpoch {
 public:
  Erased(Epoch epoch, Space space, typename Space::stream_type stream)
      : epoch_(std::move(epoch)), space_(std::move(space)), stream_(stream) {}
  std::size_t size() override { return epoch_.size(); }
  BatchBytes batch(std::size_t k, std::function<BatchBytes()>* reread) override {
    auto read = [space = space_, stream = stream_, views = epoch_.batch(k)] {
      return std::apply(
          [&](const auto&... view) { return BatchBytes{bytes_of(space, stream, view)...}; }, views);
    };
    if (reread != nullptr) *reread = read;
    return read();
  }

 private:
  Epoch epoch_;
  Space space_;
  typename Space::stream_type stream_;
};

template <class Dataset, class Epoch>
std::unique_ptr<AnyEpoch> erase(Dataset& ds, Epoch epoch) {
  return std::make_unique<Erased<Epoch, typename Dataset::space_type>>(std::move(epoch), ds.space(),
                                                                       ds.stream());
}

// (Where this translation unit cannot gather into the space, the fixture skips before any
// epoch is made: no conversion is compiled for it.)
template <class Dataset>
std::unique_ptr<AnyEpoch> make_epoch(Dataset& ds, const EpochOptions& options, Width width) {
  if constexpr (resident::testing::gathers_here<typename Dataset::space_type>) {
    if (width == Width::twice)
      return erase(ds, ds.epoch(options, resident::convert<0>(ToDouble{})));
  }
  return erase(ds, ds.epoch(options));
}

// A space of about `bytes` free: a budget where the space takes one, else a reserve of all
// but `bytes` of what is free now; `options` gets the reserve.
template <class Space>
Space space_of(std::size_t bytes, DatasetOptions& options) {
  options.reserve_bytes = 0;
  if constexpr (has_budget<Space>::value) {
    return Space{}.with_budget(bytes);
  } else {
    Space space{};
    const std::size_t free = space.capacity().free_bytes;
    options.reserve_bytes = free > bytes ? free - bytes : 0;
    return space;
  }
}

// Bytes in use in `space` (a budget's used bytes, else what is not free of the device).
template <class Space>
std::size_t used(const Space& space) {
  if constexpr (has_budget<Space>::value) {
    return space.used_bytes();
  } else {
    const auto capacity = space.capacity();
    return capacity.total_bytes - capacity.free_bytes;
  }
}

DatasetOptions options_of(Kind kind) {
  DatasetOptions options;
  options.batch_size = batch_size;
  options.remainder = kind == Kind::tokens ? Remainder::pad : Remainder::partial;
  options.streaming.chunk_batches = 2;
  options.streaming.order = kind == Kind::window ? StreamOrder::window : StreamOrder::automatic;
  return options;
}

// Calls `body(ds)` with a dataset of `kind` over `data` in about `bytes` of `Space`.
template <class Space, class Body>
void with_dataset(Kind kind, const Data& data, std::size_t bytes, Body&& body) {
  DatasetOptions options = options_of(kind);
  Space space = space_of<Space>(bytes, options);
  switch (kind) {
    case Kind::preloaded: {
      resident::DeviceDataset<Space, float, std::int32_t> ds(space, options, data.features(),
                                                             data.labels());
      body(ds);
      return;
    }
    case Kind::tokens: {
      resident::TokenDataset<Space, std::uint16_t> ds(space, options, {context, 0}, data.stream());
      body(ds);
      return;
    }
    case Kind::fallback: {
      auto ds = resident::make_dataset(space, options, data.features(), data.labels());
      ASSERT_TRUE(ds.is_streaming()) << "the budget must be too small to preload";
      body(ds);
      return;
    }
    case Kind::whole_epoch:
    case Kind::window:
      break;
  }
  resident::StreamingDataset<Space, float, std::int32_t> ds(space, options, data.features(),
                                                            data.labels());
  body(ds);
}

// A space roomy enough for several epochs of each kind at once (make_dataset's fallback below
// the data's bytes, so that it streams).
constexpr std::size_t roomy_bytes(Kind kind) {
  return kind == Kind::fallback ? 80000 : std::size_t{4} << 20;
}

struct Cell {
  Kind kind;
  Shuffle first_shuffle;
  Width first_width;
  Second second;
  [[nodiscard]] EpochOptions first() const { return {21, 0, first_shuffle}; }
  [[nodiscard]] EpochOptions second_options() const {
    const Shuffle other = first_shuffle == Shuffle::samples ? Shuffle::none
                          : first_shuffle == Shuffle::none  ? Shuffle::batches
                                                            : Shuffle::samples;
    return {21, 1, second == Second::other_shuffle ? other : first_shuffle};
  }
  [[nodiscard]] Width second_width() const {
    return second == Second::wider ? Width::twice : first_width;
  }
  [[nodiscard]] std::string name() const {
    static constexpr std::array<const char*, 3> shuffle_names = {"none", "batches", "samples"};
    return std::string(kind_names[static_cast<std::size_t>(kind)]) + ", first epoch " +
           shuffle_names[static_cast<std::size_t>(first_shuffle)] + " " +
           width_names[static_cast<std::size_t>(first_width)] + ", second of " +
           second_names[static_cast<std::size_t>(second)];
  }
};

// The first `count` batches of an epoch served alone.
std::vector<BatchBytes> alone(AnyEpoch& epoch, std::size_t count) {
  std::vector<BatchBytes> batches;
  for (std::size_t k = 0; k < count && k < epoch.size(); ++k)
    batches.push_back(epoch.batch(k, nullptr));
  return batches;
}

struct Tally {
  std::size_t cells = 0;
  std::size_t both_served = 0;
  std::size_t refused = 0;
};

// One cell: the first epoch's batches 0 and 1 held, the second made and read (or refused), the
// held views read again, the first epoch read on. Returns the bytes the space lacked for the
// first epoch itself (a ring wider than planned is made beside the planned one), or 0.
template <class Dataset>
std::size_t run_cell(Dataset& ds, const Cell& cell, const std::vector<BatchBytes>& first_alone,
                     const std::vector<BatchBytes>& second_alone, bool room, Tally& tally) {
  std::unique_ptr<AnyEpoch> first;
  try {
    first = make_epoch(ds, cell.first(), cell.first_width);
  } catch (const CapacityError& refusal) {
    EXPECT_FALSE(room) << refusal.what();
    return refusal.needed_bytes() - (refusal.free_bytes() - refusal.reserve_bytes());
  }
  ++tally.cells;
  std::array<std::function<BatchBytes()>, 2> held;
  for (std::size_t k = 0; k < held.size(); ++k)
    EXPECT_EQ(first->batch(k, &held[k]), first_alone[k]) << "first epoch, batch " << k;
  bool refused = false;
  try {
    auto second = make_epoch(ds, cell.second_options(), cell.second_width());
    for (std::size_t k = 0; k < second_alone.size(); ++k)
      EXPECT_EQ(second->batch(k, nullptr), second_alone[k]) << "second epoch, batch " << k;
  } catch (const CapacityError& refusal) {
    refused = true;
    EXPECT_FALSE(room) << "refused in a space with room for both: " << refusal.what();
  }
  (refused ? tally.refused : tally.both_served) += 1;
  for (std::size_t k = 0; k < held.size(); ++k)
    EXPECT_EQ(held[k](), first_alone[k]) << "held view of the first epoch's batch " << k;
  for (std::size_t k = held.size(); k < first_alone.size(); ++k)
    EXPECT_EQ(first->batch(k, nullptr), first_alone[k]) << "first epoch, batch " << k;
  return 0;
}

template <class Space>
using EpochsAgainstEachOther = resident::testing::OverGatheringSpaces<Space>;
TYPED_TEST_SUITE(EpochsAgainstEachOther, resident::testing::SpaceTypes,
                 resident::testing::SpaceName);

TYPED_TEST(EpochsAgainstEachOther, HeldViewsKeepTheirValuesOrTheSecondEpochIsRefused) {
  using Space = TypeParam;
  const Data data;
  Tally tally;
  for (const Kind kind : kinds) {
    for (const Shuffle shuffle : {Shuffle::none, Shuffle::batches, Shuffle::samples}) {
      for (const Width width : widths) {
        for (const Second second : seconds) {
          const Cell cell{kind, shuffle, width, second};
          SCOPED_TRACE(cell.name());
          // Alone, in a roomy space: what each epoch serves, and the bytes the dataset and the
          // first epoch hold, which size the tight space.
          std::vector<BatchBytes> first_alone;
          std::vector<BatchBytes> second_alone;
          std::size_t tight = 0;
          with_dataset<Space>(kind, data, roomy_bytes(kind), [&](auto& ds) {
            const std::size_t before = used(ds.space()) - ds.bytes() - ds.ring_bytes();
            first_alone = alone(*make_epoch(ds, cell.first(), cell.first_width), reads);
            second_alone =
                alone(*make_epoch(ds, cell.second_options(), cell.second_width()), reads);
            {
              auto first = make_epoch(ds, cell.first(), cell.first_width);
              (void)first->batch(0, nullptr);
              tight = used(ds.space()) - before;
            }
            EXPECT_EQ(run_cell(ds, cell, first_alone, second_alone, true, tally), 0U);
          });
          // Room for the dataset and its first epoch alone (a first epoch whose ring is wider
          // than planned is made beside the planned one: that much more).
          std::size_t lacking = 0;
          with_dataset<Space>(kind, data, tight, [&](auto& ds) {
            lacking = run_cell(ds, cell, first_alone, second_alone, false, tally);
          });
          if (lacking != 0) {
            with_dataset<Space>(kind, data, tight + lacking, [&](auto& ds) {
              EXPECT_EQ(run_cell(ds, cell, first_alone, second_alone, false, tally), 0U);
            });
          }
          if (::testing::Test::HasFailure()) return;
        }
      }
    }
  }
  std::printf(
      "epochs against each other: %zu cells, %zu with both epochs served, %zu with the "
      "second refused its memory\n",
      tally.cells, tally.both_served, tally.refused);
  EXPECT_EQ(tally.cells, kinds.size() * 3 * widths.size() * seconds.size() * 2);
  EXPECT_GT(tally.both_served, 0U);
  EXPECT_GT(tally.refused, 0U);
}

// Threaded: epochs of one dataset iterated on threads of their own at once (their first
// 2 x `reads` batches: past the rings and the chunk slots twice over), each serving what it
// serves alone. Epochs of a preloaded dataset and a token stream are made on their threads;
// a streaming dataset's on the dataset's thread (its members are used from one thread), then
// handed over.
TYPED_TEST(EpochsAgainstEachOther, EpochsOnThreadsOfTheirOwnServeWhatEachServesAlone) {
  using Space = TypeParam;
  constexpr std::size_t threads = 3;
  const Data data;
  std::size_t cells = 0;
  for (const Kind kind : kinds) {
    for (const Shuffle shuffle : {Shuffle::none, Shuffle::batches, Shuffle::samples}) {
      for (const Width width : widths) {
        SCOPED_TRACE(std::string(kind_names[static_cast<std::size_t>(kind)]) + ", shuffle " +
                     std::to_string(static_cast<int>(shuffle)) + ", " +
                     width_names[static_cast<std::size_t>(width)]);
        ++cells;
        with_dataset<Space>(kind, data, roomy_bytes(kind), [&](auto& ds) {
          std::vector<std::vector<BatchBytes>> expected(threads);
          for (std::size_t t = 0; t < threads; ++t)
            expected[t] = alone(*make_epoch(ds, {5, t, shuffle}, width), 2 * reads);
          const bool made_here = kind != Kind::preloaded && kind != Kind::tokens;
          std::vector<std::unique_ptr<AnyEpoch>> epochs(threads);
          if (made_here)
            for (std::size_t t = 0; t < threads; ++t)
              epochs[t] = make_epoch(ds, {5, t, shuffle}, width);
          std::vector<std::size_t> matched(threads, 0);
          std::vector<std::thread> running;
          for (std::size_t t = 0; t < threads; ++t) {
            running.emplace_back([&, t] {
              if (!epochs[t]) epochs[t] = make_epoch(ds, {5, t, shuffle}, width);
              std::function<BatchBytes()> previous;
              for (std::size_t k = 0; k < expected[t].size(); ++k) {
                std::function<BatchBytes()> reread;
                if (epochs[t]->batch(k, &reread) != expected[t][k]) return;
                // The batch before is still held: within the ring and the chunk slots.
                if (previous && previous() != expected[t][k - 1]) return;
                previous = reread;
                ++matched[t];
              }
            });
          }
          for (std::thread& thread : running) thread.join();
          for (std::size_t t = 0; t < threads; ++t)
            EXPECT_EQ(matched[t], expected[t].size()) << "thread " << t;
        });
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
  }
  std::printf("epochs on threads: %zu cells of %zu threads each\n", cells, threads);
}

}  // namespace
