// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// Every figure a caller gives (rows, row widths, batch size, context, stride, chunk and block
// sizes, ring depth, channels, pads, ranks) swept over the values where arithmetic breaks: 0,
// 1, a prime, either side of 2^31 and 2^32, 2^62 and SIZE_MAX, through every public
// constructor, loader and planner. Each case must be refused (InvalidArgument, CapacityError,
// FormatError) when the dataset, plan or epoch is made, or served correctly: every row once,
// with its own values, in every epoch the dataset offers. A tensor or file header may claim
// any shape over a small buffer, so a figure that passed a check it should have failed reads
// past that buffer, which the sanitizers report. The sweeps are tables of figures by entry
// points, so that a figure or entry point added later is covered by construction.

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <initializer_list>
#include <limits>
#include <new>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "resident/resident.hpp"
#include "support/spaces.hpp"
#include "support/temp_npy.hpp"
#include "support/zip_builder.hpp"

namespace {

using resident::CapacityError;
using resident::DatasetOptions;
using resident::EpochOptions;
using resident::FormatError;
using resident::HostTensor;
using resident::InvalidArgument;
using resident::Normalize;
using resident::Remainder;
using resident::Sharding;
using resident::Shuffle;
using resident::StreamOrder;

constexpr std::size_t most = std::numeric_limits<std::size_t>::max();

// The figures every user-given number is swept over.
constexpr std::size_t figures[] = {0,
                                   1,
                                   37,
                                   (std::size_t{1} << 31) - 1,
                                   (std::size_t{1} << 31) + 1,
                                   (std::size_t{1} << 32) - 1,
                                   (std::size_t{1} << 32) + 1,
                                   std::size_t{1} << 62,
                                   most};

// Every space the sweep makes has this budget: a figure that slips past a capacity check and
// asks the system for its bytes fails here, not by exhausting the machine.
constexpr std::size_t budget = std::size_t{1} << 20;

// A space of `budget` bytes: a budget where the space has one; the simulated device made that
// large; elsewhere (a real device, which no test may shrink) the device with all but `budget`
// of its free memory reserved, so that a figure is refused by the same capacity checks.
template <class Space>
class Bounded {
 public:
  Bounded() : exact_(budget), reserve_(reserve()) {}
  [[nodiscard]] const Space& space() const noexcept { return exact_.space(); }
  // The bytes the space has handed out, where it can tell.
  [[nodiscard]] std::optional<std::size_t> used() const {
    if (!resident::testing::ExactSpace<Space>::available) return std::nullopt;
    return exact_.used();
  }
  // `options` with the reserve that bounds the space, unless the case sets one itself (a
  // space without a budget reserves hundreds of MiB by default: more than the whole budget).
  [[nodiscard]] DatasetOptions bound(DatasetOptions options) const {
    if (!resident::testing::ExactSpace<Space>::budgeted && !options.reserve_bytes)
      options.reserve_bytes = reserve_;
    return options;
  }
  // Expects the space to hold the `held` bytes a dataset says it holds: exactly, where the
  // space keeps a budget; on a device, whose allocations round up to its granule, at least
  // those and at most `most_bytes`.
  void expect_holds(std::size_t held, std::size_t most_bytes, const std::string& what) const {
    const auto bytes = used();
    if (!bytes) return;
    if (resident::testing::ExactSpace<Space>::budgeted) {
      EXPECT_EQ(*bytes, held) << what;
    } else {
      EXPECT_GE(*bytes, held) << what;
      EXPECT_LE(*bytes, most_bytes) << what;
    }
  }
  // Expects every byte given back by the end of a case.
  void expect_empty(const std::string& what) const {
    if (const auto bytes = used()) {
      EXPECT_EQ(*bytes, 0u) << what << ": the space was not given back";
    }
  }

 private:
  [[nodiscard]] std::size_t reserve() const {
    if constexpr (!resident::testing::ExactSpace<Space>::available) {
      const auto capacity = exact_.space().capacity();
      return capacity.free_bytes > budget ? capacity.free_bytes - budget : 0;
    } else {
      return 0;
    }
  }
  resident::testing::ExactSpace<Space> exact_;
  std::size_t reserve_;
};

// Rows whose data is real: larger row counts and widths get a small buffer behind a tensor
// (or a file header) that claims them, so that only a refusal keeps the case in bounds.
constexpr std::size_t real_limit = 128;

// The base case each sweep changes one figure of: 11 rows of 3 floats, batches of 4.
constexpr std::size_t base_rows = 11;
constexpr std::size_t base_width = 3;
constexpr std::size_t base_batch = 4;

// Per sweep: cases (entry point x field x figure), epochs driven, and how many of each were
// refused, printed at the end of each test.
struct Tally {
  std::size_t cases = 0;
  std::size_t refused = 0;
  std::size_t epochs = 0;
  std::size_t epochs_refused = 0;
  ~Tally() {
    std::printf("[ sweep    ] %zu cases (%zu refused), %zu epochs driven (%zu refused when made)\n",
                cases, refused, epochs, epochs_refused);
  }
};

std::string figure_text(std::size_t figure) {
  return figure == most ? "SIZE_MAX" : std::to_string(figure);
}

// Runs `call`; true when it returned, false when it was refused with one of the library's
// refusals. Any other exception (std::bad_alloc, std::length_error, std::out_of_range, a bare
// resident::Error) is a failure of the case.
template <class Call>
bool returns(const std::string& what, Call&& call) {
  try {
    call();
    return true;
  } catch (const InvalidArgument&) {
  } catch (const CapacityError&) {
  } catch (const FormatError&) {
  } catch (const std::bad_alloc& e) {
    ADD_FAILURE() << what << ": std::bad_alloc instead of a refusal: " << e.what();
  } catch (const std::length_error& e) {
    ADD_FAILURE() << what << ": std::length_error instead of a refusal: " << e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << ": threw something other than a refusal: " << e.what();
  }
  return false;
}

// A saturating product and sum, for the byte bounds below.
std::size_t times(std::size_t a, std::size_t b) { return a != 0 && b > most / a ? most : a * b; }
std::size_t plus(std::size_t a, std::size_t b) { return b > most - a ? most : a + b; }

// --- Rows of known values -------------------------------------------------------------------

// `n` rows of `width` floats, element j of row r holding r * width + j + 1 (never 0, so that an
// augmentation's zeros are told apart), and labels r. Real only up to `real_limit`. Beyond, a
// claim the library may take at its word only where it never copies the rows (a stream reads
// the caller's tensors every epoch): rows whose bytes can be addressed are then a lazy mapping
// of zero pages (nothing is reserved or touched until read), and rows whose bytes cannot are a
// small buffer that every entry point must refuse before reading.
struct Rows {
  Rows(std::size_t n, std::size_t width) : n(n), width(width) {
    real = n <= real_limit && width <= real_limit;
    if (!real) {
      map(n, width);
      return;
    }
    features.assign(std::max<std::size_t>(n * width, 1), 0.0f);
    labels.assign(std::max<std::size_t>(n, 1), 0);
    for (std::size_t r = 0; r < n; ++r) {
      labels[r] = static_cast<std::int32_t>(r);
      for (std::size_t j = 0; j < width; ++j)
        features[r * width + j] = static_cast<float>(r * width + j + 1);
    }
    x_data = features.data();
    y_data = labels.data();
  }
  ~Rows() {
    if (mapped != nullptr) ::munmap(mapped, mapped_bytes);
  }
  Rows(const Rows&) = delete;
  Rows& operator=(const Rows&) = delete;
  [[nodiscard]] HostTensor<const float> x() const { return {x_data, {n, width}}; }
  [[nodiscard]] HostTensor<const std::int32_t> y() const { return {y_data, {n}}; }
  std::size_t n;
  std::size_t width;
  bool real = false;

 private:
  void map(std::size_t rows, std::size_t columns) {
    constexpr std::size_t mappable = std::size_t{1} << 40;
    const std::size_t x_bytes = times(times(rows, columns), sizeof(float));
    const std::size_t y_bytes = times(rows, sizeof(std::int32_t));
    const std::size_t bytes = plus(plus(x_bytes, y_bytes), 4096);
    if (bytes <= mappable) {
      void* at =
          ::mmap(nullptr, bytes, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
      if (at != MAP_FAILED) {
        mapped = at;
        mapped_bytes = bytes;
        x_data = static_cast<const float*>(at);
        y_data = reinterpret_cast<const std::int32_t*>(static_cast<const char*>(at) +
                                                       (x_bytes + 4095) / 4096 * 4096);
        return;
      }
    }
    features.assign(16, 0.0f);
    labels.assign(4, 0);
    x_data = features.data();
    y_data = labels.data();
  }
  std::vector<float> features;
  std::vector<std::int32_t> labels;
  const float* x_data = nullptr;
  const std::int32_t* y_data = nullptr;
  void* mapped = nullptr;
  std::size_t mapped_bytes = 0;
};

// The conversion every converting epoch applies: exact for the small values above.
const Normalize doubling{2.0f, 1.0f};

float converted(float stored, bool convert) {
  return convert ? static_cast<float>(static_cast<double>(stored) * 2.0 + 1.0) : stored;
}

// What a served epoch must hold.
struct Expect {
  std::size_t n = 0;      // rows given
  std::size_t width = 0;  // elements per row of x
  std::size_t batch = 0;
  Remainder remainder = Remainder::partial;
  bool convert = false;
  bool augmented = false;  // pixels may be 0 (fill, cutout) or any pixel of the same row
  bool one_rank = true;    // every row once; else only this rank's rows, each at most once
  std::size_t first_row = 0, stored_rows = 0;  // this rank's rows, when sharded
};

// What an epoch served: whether it was made, its batches, and the rows of its valid rows in
// the order served (the same row ids the labels hold: the caller's rows).
struct Served {
  bool made = false;
  std::size_t batches = 0;
  std::vector<std::size_t> rows;
};

// Copies a batch's field back to the host: a view of a device space cannot be read there.
template <class Dataset, class View>
auto host_values(const Dataset& ds, const View& view) {
  return resident::testing::read_back(ds.space(), ds.stream(), view);
}

// Checks one epoch of (x, y) batches of `ds` against `e`: batch count, every valid row once
// with its own values (each x element of row y), padding rows well-formed.
template <class Dataset, class Epoch>
void check_epoch(const Dataset& ds, Epoch& epoch, const Expect& e, Served& out) {
  std::vector<int> seen(e.n <= real_limit ? e.n : 0, 0);
  std::size_t batches = 0, served = 0;
  const std::size_t size = epoch.size();
  for (auto&& batch : epoch) {
    ++batches;
    const auto& x = std::get<0>(batch);
    const auto& y = std::get<1>(batch);
    ASSERT_EQ(x.rows(), y.rows());
    ASSERT_EQ(x.valid_rows(), y.valid_rows());
    ASSERT_LE(y.valid_rows(), y.rows());
    ASSERT_LE(y.rows(), e.batch);
    ASSERT_EQ(x.row_elements(), e.width);
    const auto xs = host_values(ds, x);
    const auto ys = host_values(ds, y);
    for (std::size_t r = 0; r < y.rows(); ++r) {
      const auto v = static_cast<std::size_t>(ys[r]);
      ASSERT_LT(v, seen.size()) << "row " << r << " of batch " << batches - 1;
      if (r < y.valid_rows()) {
        ++served;
        out.rows.push_back(v);
        ASSERT_EQ(++seen[v], 1) << "row " << v << " served twice";
        if (!e.one_rank) {
          ASSERT_GE(v, e.first_row);
          ASSERT_LT(v, e.first_row + e.stored_rows);
        }
      }
      for (std::size_t j = 0; j < e.width; ++j) {
        const float got = xs[r * e.width + j];
        const float want = converted(static_cast<float>(v * e.width + j + 1), e.convert);
        if (!e.augmented) {
          ASSERT_EQ(got, want) << "row " << v << ", element " << j;
          continue;
        }
        // A crop moves pixels within the row's image, fills with stored zeros, and cutout
        // writes 0 after the conversion.
        const float low = converted(static_cast<float>(v * e.width + 1), e.convert);
        const float high = converted(static_cast<float>(v * e.width + e.width), e.convert);
        const bool pixel = got >= low && got <= high;
        ASSERT_TRUE(pixel || got == 0.0f || got == converted(0.0f, e.convert))
            << "row " << v << ", element " << j << " holds " << got;
      }
    }
  }
  ASSERT_EQ(batches, size);
  out.batches = batches;
  if (e.one_rank) {
    const std::size_t full = e.batch == 0 ? 0 : e.n / e.batch;
    ASSERT_EQ(served, e.remainder == Remainder::drop ? full * e.batch : e.n);
  } else {
    ASSERT_LE(served, e.stored_rows);
  }
}

// Makes an epoch of `ds` with `make` and checks it: a refusal is allowed when the epoch is
// made, never while it is served. Returns what it served.
template <class Dataset, class Make>
Served drive(const std::string& what, Tally& tally, const Expect& e, const Dataset& ds, Make&& make,
             bool must_serve = false) {
  ++tally.epochs;
  Served out;
  try {
    auto epoch = make();
    out.made = true;
    SCOPED_TRACE(what);
    check_epoch(ds, epoch, e, out);
    return out;
  } catch (const InvalidArgument& error) {
    if (out.made) ADD_FAILURE() << what << ": refused in the middle of an epoch: " << error.what();
    if (!out.made && must_serve)
      ADD_FAILURE() << what << ": a made dataset refused its plain epoch "
                    << "(it must be refused when made): " << error.what();
  } catch (const CapacityError& error) {
    if (out.made) ADD_FAILURE() << what << ": refused in the middle of an epoch: " << error.what();
    if (!out.made && must_serve)
      ADD_FAILURE() << what << ": a made dataset refused its plain epoch "
                    << "(it must be refused when made): " << error.what();
  } catch (const FormatError& error) {
    if (out.made) ADD_FAILURE() << what << ": refused in the middle of an epoch: " << error.what();
  } catch (const std::exception& error) {
    ADD_FAILURE() << what << ": threw something other than a refusal: " << error.what();
  }
  ++tally.epochs_refused;
  out.made = false;
  return out;
}

// Every epoch a dataset offers: each shuffle, with and without a conversion of x. The plain
// unshuffled epoch must be served by any dataset that was made: one that serves nothing should
// have been refused when it was made. Returns what each served, in that order.
template <class Dataset>
std::vector<Served> drive_epochs(Dataset& ds, const std::string& what, Tally& tally, Expect e,
                                 const EpochOptions& base) {
  std::vector<Served> served;
  for (const Shuffle shuffle : {Shuffle::none, Shuffle::batches, Shuffle::samples}) {
    EpochOptions options = base;
    options.shuffle = shuffle;
    const std::string name = what + ", shuffle " + std::to_string(static_cast<int>(shuffle));
    e.convert = false;
    served.push_back(drive(
        name, tally, e, ds, [&] { return ds.epoch(options); }, shuffle == Shuffle::none));
    e.convert = true;
    served.push_back(drive(name + ", converted", tally, e, ds,
                           [&] { return ds.epoch(options, resident::convert<0>(doubling)); }));
  }
  return served;
}

// --- The dataset sweeps ----------------------------------------------------------------------

// One case of a dataset sweep: the base case with one figure changed.
struct Case {
  std::size_t rows = base_rows;
  std::size_t width = base_width;
  DatasetOptions options;
  EpochOptions epoch{7, 3, Shuffle::none};
};

// A user-given figure of the datasets' inputs: its name and how a case takes it. Figures of a
// narrower type (the ranks are `int`, the thread counts `unsigned`) take the figure converted,
// as a caller's `static_cast` would: SIZE_MAX becomes -1, 2^31 + 1 a negative rank.
struct Knob {
  const char* name;
  std::function<void(Case&, std::size_t)> set;
};

const std::vector<Knob>& dataset_knobs() {
  static const std::vector<Knob> knobs = {
      {"rows", [](Case& c, std::size_t f) { c.rows = f; }},
      {"row width", [](Case& c, std::size_t f) { c.width = f; }},
      {"rows of width", [](Case& c, std::size_t f) { c.rows = f, c.width = f; }},
      {"batch_size", [](Case& c, std::size_t f) { c.options.batch_size = f; }},
      {"reserve_bytes", [](Case& c, std::size_t f) { c.options.reserve_bytes = f; }},
      {"upload_block_bytes", [](Case& c, std::size_t f) { c.options.upload_block_bytes = f; }},
      {"staging_buffers", [](Case& c, std::size_t f) { c.options.staging_buffers = f; }},
      {"upload_threads",
       [](Case& c, std::size_t f) { c.options.upload_threads = static_cast<unsigned>(f); }},
      {"gather_threads",
       [](Case& c, std::size_t f) { c.options.gather_threads = static_cast<unsigned>(f); }},
      {"ring_depth", [](Case& c, std::size_t f) { c.options.ring_depth = f; }},
      {"ring_element_bytes", [](Case& c, std::size_t f) { c.options.ring_element_bytes = f; }},
      {"shard.world_size",
       [](Case& c, std::size_t f) { c.options.shard.world_size = static_cast<int>(f); }},
      {"shard.rank",
       [](Case& c, std::size_t f) {
         c.options.shard.world_size = 64;
         c.options.shard.rank = static_cast<int>(f);
       }},
      {"shard.local_rank",
       [](Case& c, std::size_t f) {
         c.options.shard.world_size = 64;
         c.options.shard.local_rank = static_cast<int>(f);
       }},
      {"streaming.chunk_batches",
       [](Case& c, std::size_t f) { c.options.streaming.chunk_batches = f; }},
      {"streaming.chunk_slots",
       [](Case& c, std::size_t f) { c.options.streaming.chunk_slots = f; }},
      {"streaming.prefetch_chunks",
       [](Case& c, std::size_t f) { c.options.streaming.prefetch_chunks = f; }},
      {"epoch.seed", [](Case& c, std::size_t f) { c.epoch.seed = f; }},
      {"epoch.epoch", [](Case& c, std::size_t f) { c.epoch.epoch = f; }},
  };
  return knobs;
}

constexpr Remainder remainders[] = {Remainder::drop, Remainder::partial, Remainder::pad};

// Runs `body(case, label)` for every knob x figure x remainder policy.
template <class Body>
void sweep_cases(const std::vector<Knob>& knobs, Body&& body) {
  for (const Knob& knob : knobs) {
    for (const std::size_t figure : figures) {
      for (const Remainder remainder : remainders) {
        Case c;
        c.options.batch_size = base_batch;
        c.options.remainder = remainder;
        c.options.gather_threads = 1;  // the copy team has its own tests; keep the sweep quick
        c.options.streaming.chunk_batches = 1;
        c.options.streaming.chunk_slots = 2;
        c.options.streaming.prefetch_chunks = 1;
        knob.set(c, figure);
        body(c, std::string(knob.name) + " = " + figure_text(figure) + ", remainder " +
                    resident::remainder_name(remainder));
      }
    }
  }
}

// What a made dataset of case `c` must serve; `ds` gives this rank's stored rows.
template <class Dataset>
Expect expectation(const Case& c, const Dataset& ds) {
  Expect e;
  e.n = c.rows;
  e.width = c.width;
  e.batch = c.options.batch_size;
  e.remainder = c.options.remainder;
  e.one_rank = c.options.shard.world_size == 1;
  e.first_row = ds.first_row();
  e.stored_rows = ds.num_rows();
  return e;
}

// The bytes a preloaded dataset of case `c` may allocate: its rows (with at most
// `batch_size - 1` padding rows under pad), each field 256-byte aligned.
std::size_t dataset_bound(const Case& c) {
  const std::size_t padding = c.options.remainder == Remainder::pad ? c.options.batch_size - 1 : 0;
  const std::size_t rows = plus(c.rows, padding);
  return plus(plus(times(rows, times(c.width, sizeof(float))), times(rows, sizeof(std::int32_t))),
              512);
}

// The bytes its gather ring may take: `ring_depth` slots of the largest batch, each element at
// most 8 bytes wide, with row ids and alignment.
std::size_t ring_bound(const Case& c) {
  const std::size_t batch_rows = c.options.remainder == Remainder::pad
                                     ? c.options.batch_size
                                     : std::min(c.options.batch_size, c.rows);
  const std::size_t slot = plus(times(batch_rows, times(plus(c.width, 2), 8)), 1024);
  return times(std::max<std::size_t>(c.options.ring_depth, 1), slot);
}

// The sweeps of datasets, typed over the memory spaces: each skips, saying why, where its
// space cannot run.
template <class Space>
class SizeSweepIn : public resident::testing::OverGatheringSpaces<Space> {};
TYPED_TEST_SUITE(SizeSweepIn, resident::testing::SpaceTypes, resident::testing::SpaceName);

TYPED_TEST(SizeSweepIn, DeviceDatasetServesOrRefusesEveryFigure) {
  using Space = TypeParam;
  Tally tally;
  sweep_cases(dataset_knobs(), [&](Case c, const std::string& label) {
    ++tally.cases;
    const std::string what = "DeviceDataset, " + label;
    const Bounded<Space> bounded;
    c.options = bounded.bound(c.options);
    const Rows rows(c.rows, c.width);
    bool made = returns(what, [&] {
      resident::DeviceDataset<Space, float, std::int32_t> ds(bounded.space(), c.options, rows.x(),
                                                             rows.y());
      EXPECT_LE(ds.bytes(), dataset_bound(c)) << what;
      drive_epochs(ds, what, tally, expectation(c, ds), c.epoch);
      EXPECT_LE(ds.ring_bytes(), ring_bound(c)) << what;
      bounded.expect_holds(ds.bytes() + ds.ring_bytes(), plus(dataset_bound(c), ring_bound(c)),
                           what);
    });
    if (!made) ++tally.refused;
    bounded.expect_empty(what);
  });
}

TYPED_TEST(SizeSweepIn, PlanAgreesWithTheDatasetForEveryFigure) {
  // plan() must answer (or refuse) where the constructor does, and a plan that says the data
  // fits must be one the constructor makes.
  using Space = TypeParam;
  Tally tally;
  sweep_cases(dataset_knobs(), [&](Case c, const std::string& label) {
    ++tally.cases;
    const std::string what = "plan, " + label;
    const Bounded<Space> bounded;
    c.options = bounded.bound(c.options);
    const Rows rows(c.rows, c.width);
    resident::Plan plan;
    if (!returns(what,
                 [&] { plan = resident::plan(bounded.space(), c.options, rows.x(), rows.y()); })) {
      ++tally.refused;
      return;
    }
    if (const auto used = bounded.used()) {
      EXPECT_EQ(*used, 0u) << what << ": plan() allocated";
    }
    EXPECT_LE(plan.needed_bytes, dataset_bound(c)) << what;
    if (plan.fits) {
      EXPECT_TRUE(returns(what + ", the dataset planned",
                          [&] {
                            const resident::DeviceDataset<Space, float, std::int32_t> ds(
                                bounded.space(), c.options, rows.x(), rows.y());
                            EXPECT_EQ(ds.bytes(), plan.needed_bytes) << what;
                            EXPECT_EQ(ds.num_batches(), plan.num_batches) << what;
                          }))
          << what << ": plan() said it fits, the constructor refused";
    }
  });
}

// The streamed sweep: the same cases, streamed in each order.
template <class Space>
void stream_sweep(StreamOrder order, Tally& tally) {
  sweep_cases(dataset_knobs(), [&](Case c, const std::string& label) {
    ++tally.cases;
    const Bounded<Space> bounded;
    c.options = bounded.bound(c.options);
    c.options.streaming.order = order;
    const std::string what =
        std::string("StreamingDataset ") + resident::stream_order_name(order) + ", " + label;
    const Rows rows(c.rows, c.width);
    const bool made = returns(what, [&] {
      resident::StreamingDataset<Space, float, std::int32_t> ds(bounded.space(), c.options,
                                                                rows.x(), rows.y());
      EXPECT_EQ(ds.order(), order) << what;
      // A stream of rows it takes at their word (see Rows) is made within its budget; its
      // epochs would read every claimed row, billions of them, so only real rows are served.
      if (rows.real) drive_epochs(ds, what, tally, expectation(c, ds), c.epoch);
      if (const auto used = bounded.used()) {
        EXPECT_LE(*used, plus(ds.bytes(), ds.ring_bytes())) << what;
      }
    });
    if (!made) ++tally.refused;
    bounded.expect_empty(what);
  });
}

TYPED_TEST(SizeSweepIn, StreamingDatasetInWholeEpochOrderServesOrRefusesEveryFigure) {
  Tally tally;
  stream_sweep<TypeParam>(StreamOrder::whole_epoch, tally);
}

TYPED_TEST(SizeSweepIn, StreamingDatasetInWindowOrderServesOrRefusesEveryFigure) {
  Tally tally;
  stream_sweep<TypeParam>(StreamOrder::window, tally);
}

// The rows of this rank's part of a dataset `make_dataset` made.
template <class Dataset>
std::size_t first_row_of(Dataset& ds) {
  return ds.is_streaming() ? ds.streaming()->first_row() : ds.preloaded()->first_row();
}

TYPED_TEST(SizeSweepIn, MakeDatasetServesOrRefusesEveryFigure) {
  using Space = TypeParam;
  Tally tally;
  sweep_cases(dataset_knobs(), [&](Case c, const std::string& label) {
    ++tally.cases;
    const std::string what = "make_dataset, " + label;
    const Bounded<Space> bounded;
    c.options = bounded.bound(c.options);
    const Rows rows(c.rows, c.width);
    const bool made = returns(what, [&] {
      auto ds = resident::make_dataset(bounded.space(), c.options, rows.x(), rows.y());
      Expect e;
      e.n = c.rows;
      e.width = c.width;
      e.batch = c.options.batch_size;
      e.remainder = c.options.remainder;
      e.one_rank = c.options.shard.world_size == 1;
      e.first_row = 0;
      e.stored_rows = e.one_rank ? c.rows : ds.num_rows();
      if (!e.one_rank) e.first_row = first_row_of(ds);
      if (rows.real) drive_epochs(ds, what, tally, e, c.epoch);  // as for a stream
    });
    if (!made) ++tally.refused;
    bounded.expect_empty(what);
  });
}

// --- Every rank of a sharded job -----------------------------------------------------------------

// The ranks a sweep drives of a world: every rank of a small one; of a large one the first, a
// middle and the last (the ranks whose parts are first, empty and last); of an impossible one
// (below 1) rank 0, which must refuse it.
std::vector<int> ranks_of(int world) {
  constexpr int small_world = 37;
  if (world < 1) return {0};
  if (world > small_world) return {0, world / 2, world - 1};
  std::vector<int> ranks(static_cast<std::size_t>(world));
  std::iota(ranks.begin(), ranks.end(), 0);
  return ranks;
}

// One rank's dataset of the sharded sweep, as each entry point makes it.
enum class Entry { preloaded, whole_epoch, window, made };

const char* entry_name(Entry entry) {
  switch (entry) {
    case Entry::preloaded:
      return "DeviceDataset";
    case Entry::whole_epoch:
      return "StreamingDataset whole_epoch";
    case Entry::window:
      return "StreamingDataset window";
    default:
      return "make_dataset";
  }
}

// Makes rank `rank`'s dataset of `entry`, drives its epochs and returns what they served (empty
// when the dataset was refused).
template <class Space>
std::optional<std::vector<Served>> drive_rank(Entry entry, const Case& c, const Rows& rows,
                                              const std::string& what, Tally& tally) {
  std::optional<std::vector<Served>> served;
  const Bounded<Space> bounded;
  DatasetOptions options = bounded.bound(c.options);
  if (entry == Entry::whole_epoch) options.streaming.order = StreamOrder::whole_epoch;
  if (entry == Entry::window) options.streaming.order = StreamOrder::window;
  const auto run = [&](auto& ds) {
    Expect e;
    e.n = c.rows;
    e.width = c.width;
    e.batch = options.batch_size;
    e.remainder = options.remainder;
    e.one_rank = options.shard.world_size == 1;
    e.first_row = ds.first_row();
    e.stored_rows = ds.num_rows();
    served = drive_epochs(ds, what, tally, e, c.epoch);
  };
  (void)returns(what, [&] {
    switch (entry) {
      case Entry::preloaded: {
        resident::DeviceDataset<Space, float, std::int32_t> ds(bounded.space(), options, rows.x(),
                                                               rows.y());
        run(ds);
        break;
      }
      case Entry::made: {
        auto ds = resident::make_dataset(bounded.space(), options, rows.x(), rows.y());
        run(ds);
        break;
      }
      default: {
        resident::StreamingDataset<Space, float, std::int32_t> ds(bounded.space(), options,
                                                                  rows.x(), rows.y());
        run(ds);
      }
    }
  });
  bounded.expect_empty(what);
  return served;
}

// Every world figure (as a caller's cast to `int` makes it, and 2, the smallest job of more than
// one rank) by remainder and a few row counts (fewer rows than ranks among them), each rank of
// the world made by `entry` under `sharding` and driven through every epoch: the ranks agree on
// whether the job is refused and on the number of steps; across the ranks of an epoch no row is
// served twice; with every rank driven, every row is served (under drop, full steps of every
// rank).
template <class Space>
void sweep_ranks(Entry entry, Sharding sharding) {
  Tally tally;
  std::vector<std::size_t> worlds(std::begin(figures), std::end(figures));
  worlds.push_back(2);
  for (const std::size_t world_figure : worlds) {
    const int world = static_cast<int>(world_figure);
    for (const Remainder remainder : remainders) {
      for (const std::size_t n : {std::size_t{0}, std::size_t{1}, base_rows, std::size_t{37}}) {
        Case c;
        c.rows = n;
        c.options.batch_size = base_batch;
        c.options.remainder = remainder;
        c.options.gather_threads = 1;
        c.options.streaming.chunk_batches = 1;
        c.options.streaming.chunk_slots = 2;
        c.options.streaming.prefetch_chunks = 1;
        c.options.sharding = sharding;
        c.options.shard.world_size = world;
        const Rows rows(c.rows, c.width);
        const std::string label = std::string(entry_name(entry)) + ", world " +
                                  figure_text(world_figure) + " " +
                                  resident::sharding_name(sharding) + ", " + std::to_string(n) +
                                  " rows, remainder " + resident::remainder_name(remainder);
        const std::vector<int> ranks = ranks_of(world);
        std::vector<std::optional<std::vector<Served>>> served;
        for (const int rank : ranks) {
          ++tally.cases;
          c.options.shard.rank = rank;
          served.push_back(
              drive_rank<Space>(entry, c, rows, label + ", rank " + std::to_string(rank), tally));
          if (!served.back()) ++tally.refused;
        }
        for (std::size_t i = 1; i < served.size(); ++i)
          EXPECT_EQ(served[i].has_value(), served[0].has_value())
              << label << ": rank " << ranks[i] << " and rank 0 disagree on whether it is refused";
        if (!served[0] || world < 1) {
          EXPECT_FALSE(served[0] && world < 1) << label << ": made for a world below 1";
          continue;
        }
        const bool every_rank = ranks.size() == static_cast<std::size_t>(world);
        for (std::size_t k = 0; k < served[0]->size(); ++k) {
          std::vector<int> seen(n, 0);
          std::size_t total = 0;
          bool all_made = true;
          for (std::size_t i = 0; i < served.size(); ++i) {
            if (!served[i]) break;
            const Served& epoch = (*served[i])[k];
            const Served& first = (*served[0])[k];
            EXPECT_EQ(epoch.made, first.made)
                << label << ", epoch " << k << ": rank " << ranks[i] << " and rank 0 disagree";
            all_made = all_made && epoch.made;
            if (!epoch.made || !first.made) continue;
            EXPECT_EQ(epoch.batches, first.batches)
                << label << ", epoch " << k << ": rank " << ranks[i]
                << " takes a different number of steps than rank 0";
            for (const std::size_t row : epoch.rows) {
              ASSERT_LT(row, n);
              EXPECT_EQ(++seen[row], 1) << label << ", epoch " << k << ": row " << row
                                        << " served again by rank " << ranks[i];
            }
            total += epoch.rows.size();
          }
          if (!every_rank || !all_made) continue;
          const std::size_t steps = (*served[0])[k].batches;
          EXPECT_EQ(total, remainder == Remainder::drop
                               ? steps * base_batch * static_cast<std::size_t>(world)
                               : n)
              << label << ", epoch " << k << ": the ranks together did not serve every row";
        }
      }
    }
  }
}

TYPED_TEST(SizeSweepIn, EveryRankOfPartitionedPreloadedShardsServesEachRowOnce) {
  sweep_ranks<TypeParam>(Entry::preloaded, Sharding::partitioned);
}

TYPED_TEST(SizeSweepIn, EveryRankOfReplicatedPreloadedShardsServesEachRowOnce) {
  sweep_ranks<TypeParam>(Entry::preloaded, Sharding::replicated);
}

TYPED_TEST(SizeSweepIn, EveryRankOfPartitionedStreamedWholeShardsServesEachRowOnce) {
  sweep_ranks<TypeParam>(Entry::whole_epoch, Sharding::partitioned);
}

TYPED_TEST(SizeSweepIn, EveryRankOfReplicatedStreamedWholeShardsServesEachRowOnce) {
  sweep_ranks<TypeParam>(Entry::whole_epoch, Sharding::replicated);
}

TYPED_TEST(SizeSweepIn, EveryRankOfPartitionedStreamedByWindowShardsServesEachRowOnce) {
  sweep_ranks<TypeParam>(Entry::window, Sharding::partitioned);
}

TYPED_TEST(SizeSweepIn, EveryRankOfReplicatedStreamedByWindowShardsServesEachRowOnce) {
  sweep_ranks<TypeParam>(Entry::window, Sharding::replicated);
}

TYPED_TEST(SizeSweepIn, EveryRankOfPartitionedMadeByMakeDatasetShardsServesEachRowOnce) {
  sweep_ranks<TypeParam>(Entry::made, Sharding::partitioned);
}

TYPED_TEST(SizeSweepIn, EveryRankOfReplicatedMadeByMakeDatasetShardsServesEachRowOnce) {
  sweep_ranks<TypeParam>(Entry::made, Sharding::replicated);
}

// The options of the file and one-field sweeps: the base case's.
DatasetOptions file_options() {
  DatasetOptions options;
  options.batch_size = base_batch;
  options.gather_threads = 1;
  options.streaming.chunk_batches = 1;
  options.streaming.chunk_slots = 2;
  options.streaming.prefetch_chunks = 1;
  return options;
}

// One field alone: no second field's allocation stands behind a row of zero bytes, so a
// dataset of zero-width rows holds no memory at all.
template <class Dataset>
void drive_one_field(Dataset& ds, const std::string& what, Tally& tally, std::size_t width,
                     Remainder remainder) {
  for (const Shuffle shuffle : {Shuffle::none, Shuffle::batches, Shuffle::samples}) {
    for (const bool convert : {false, true}) {
      ++tally.epochs;
      const std::string name = what + ", shuffle " + std::to_string(static_cast<int>(shuffle)) +
                               (convert ? ", converted" : "");
      const auto check = [&](auto& epoch) {
        std::vector<int> seen(base_rows, 0);
        std::size_t served = 0;
        for (auto [x] : epoch) {
          ASSERT_EQ(x.row_elements(), width) << name;
          served += x.valid_rows();
          if (width == 0) continue;
          const auto xs = host_values(ds, x);
          for (std::size_t r = 0; r < x.valid_rows(); ++r) {
            // Row v's first element is v * width + 1 (converted: twice that, plus 1).
            const float head = xs[r * width];
            const float stored = convert ? (head - 1.0f) / 2.0f : head;
            const auto v = static_cast<std::size_t>(stored - 1.0f) / width;
            ASSERT_LT(v, base_rows) << name;
            ASSERT_EQ(++seen[v], 1) << name << ": row " << v << " served twice";
            for (std::size_t j = 0; j < width; ++j)
              ASSERT_EQ(xs[r * width + j],
                        converted(static_cast<float>(v * width + j + 1), convert))
                  << name;
          }
        }
        ASSERT_EQ(served,
                  remainder == Remainder::drop ? base_rows / base_batch * base_batch : base_rows)
            << name;
      };
      try {
        if (convert) {
          auto epoch = ds.epoch({4, 4, shuffle}, resident::convert<0>(doubling));
          check(epoch);
        } else {
          auto epoch = ds.epoch({4, 4, shuffle});
          check(epoch);
        }
      } catch (const std::exception& error) {
        ADD_FAILURE() << name << ": a dataset of " << base_rows << " rows of " << width
                      << " elements refused an epoch: " << error.what();
      }
    }
  }
}

TYPED_TEST(SizeSweepIn, OneFieldDatasetsServeOrRefuseEveryRowWidth) {
  using Space = TypeParam;
  Tally tally;
  for (const std::size_t width : figures) {
    for (const Remainder remainder : remainders) {
      const Rows rows(base_rows, width);
      const Bounded<Space> bounded;
      DatasetOptions options = bounded.bound(file_options());
      options.remainder = remainder;
      const std::string label = "one field of width " + figure_text(width) + ", remainder " +
                                resident::remainder_name(remainder);
      const Space& space = bounded.space();
      ++tally.cases;
      if (!returns("DeviceDataset, " + label, [&] {
            resident::DeviceDataset<Space, float> ds(space, options, rows.x());
            ASSERT_TRUE(rows.real) << label << ": made from rows it was not given";
            drive_one_field(ds, "DeviceDataset, " + label, tally, width, remainder);
          }))
        ++tally.refused;
      for (const StreamOrder order : {StreamOrder::whole_epoch, StreamOrder::window}) {
        ++tally.cases;
        DatasetOptions streamed = options;
        streamed.streaming.order = order;
        const std::string what =
            std::string("StreamingDataset ") + resident::stream_order_name(order) + ", " + label;
        if (!returns(what, [&] {
              resident::StreamingDataset<Space, float> ds(space, streamed, rows.x());
              if (rows.real) drive_one_field(ds, what, tally, width, remainder);  // see Rows
            }))
          ++tally.refused;
      }
      bounded.expect_empty(label);
    }
  }
}

// --- Token streams ---------------------------------------------------------------------------

// Checks one epoch of token windows: every window once (the served ones under drop), each row
// of x the window's tokens (converted when asked) and y the same tokens one on.
template <class Dataset, class Epoch>
void check_token_epoch(const Dataset& ds, Epoch& epoch, std::size_t windows, std::size_t context,
                       std::size_t stride, std::size_t batch, Remainder remainder, bool convert) {
  std::vector<int> seen(windows, 0);
  std::size_t batches = 0, served = 0;
  const std::size_t size = epoch.size();
  for (auto&& b : epoch) {
    ++batches;
    const auto& x = std::get<0>(b);
    const auto& y = std::get<1>(b);
    ASSERT_EQ(x.rows(), y.rows());
    ASSERT_LE(y.rows(), batch);
    ASSERT_EQ(x.row_elements(), context);
    ASSERT_EQ(y.row_elements(), context);
    const auto xs = host_values(ds, x);
    const auto ys = host_values(ds, y);
    for (std::size_t r = 0; r < y.rows(); ++r) {
      // Token i holds i + 1, so the window's first target, token start + 1, holds start + 2.
      const auto first_target = static_cast<std::size_t>(ys[r * context]);
      ASSERT_GE(first_target, 2u);
      const std::size_t start = first_target - 2;
      ASSERT_EQ(start % stride, 0u) << "a window starts at token " << start;
      ASSERT_LT(start / stride, windows);
      if (r < y.valid_rows()) {
        ++served;
        ASSERT_EQ(++seen[start / stride], 1) << "window " << start / stride << " served twice";
      }
      for (std::size_t t = 0; t < context; ++t) {
        ASSERT_EQ(static_cast<std::size_t>(ys[r * context + t]), start + t + 2);
        ASSERT_EQ(static_cast<float>(xs[r * context + t]),
                  converted(static_cast<float>(start + t + 1), convert));
      }
    }
  }
  ASSERT_EQ(batches, size);
  ASSERT_EQ(served, remainder == Remainder::drop ? windows / batch * batch : windows);
}

// Every epoch a token dataset offers, as `drive_epochs` drives a dataset's.
template <class Dataset>
void drive_token_epochs(Dataset& ds, const std::string& what, Tally& tally, std::size_t windows,
                        std::size_t context, std::size_t stride, const DatasetOptions& options) {
  for (const Shuffle shuffle : {Shuffle::none, Shuffle::batches, Shuffle::samples}) {
    for (const bool convert : {false, true}) {
      const std::string name = what + ", shuffle " + std::to_string(static_cast<int>(shuffle)) +
                               (convert ? ", converted" : "");
      ++tally.epochs;
      bool made = false;
      try {
        const EpochOptions epoch_options{5, 2, shuffle};
        SCOPED_TRACE(name);
        if (convert) {
          auto epoch = ds.epoch(epoch_options, resident::convert<0>(doubling));
          made = true;
          check_token_epoch(ds, epoch, windows, context, stride, options.batch_size,
                            options.remainder, true);
        } else {
          auto epoch = ds.epoch(epoch_options);
          made = true;
          check_token_epoch(ds, epoch, windows, context, stride, options.batch_size,
                            options.remainder, false);
        }
        continue;
      } catch (const resident::Error& error) {
        // A made dataset that refuses its plain epoch should have been refused when made.
        if (made || (shuffle == Shuffle::none && !convert))
          ADD_FAILURE() << name << ": refused "
                        << (made ? "in the middle of an epoch" : "its plain epoch") << ": "
                        << error.what();
      } catch (const std::exception& error) {
        ADD_FAILURE() << name << ": threw something other than a refusal: " << error.what();
      }
      ++tally.epochs_refused;
    }
  }
}

// One case of a token sweep: `tokens` tokens (token i holds i + 1, so that a window's first
// target names its start), cut into windows.
struct TokenCase {
  std::size_t tokens = 64;
  resident::TokenOptions window{4, 0};
  DatasetOptions options;
  std::size_t claimed = 64;  // the token count a file header says
};

struct TokenKnob {
  const char* name;
  std::function<void(TokenCase&, std::size_t)> set;
};

const std::vector<TokenKnob>& token_knobs() {
  static const std::vector<TokenKnob> knobs = {
      {"tokens", [](TokenCase& c, std::size_t f) { c.tokens = f, c.claimed = f; }},
      {"context", [](TokenCase& c, std::size_t f) { c.window.context = f; }},
      {"stride", [](TokenCase& c, std::size_t f) { c.window.stride = f; }},
      {"batch_size", [](TokenCase& c, std::size_t f) { c.options.batch_size = f; }},
      {"ring_depth", [](TokenCase& c, std::size_t f) { c.options.ring_depth = f; }},
      {"header count", [](TokenCase& c, std::size_t f) { c.claimed = f; }},
  };
  return knobs;
}

template <class Body>
void sweep_token_cases(Body&& body) {
  for (const TokenKnob& knob : token_knobs()) {
    for (const std::size_t figure : figures) {
      for (const Remainder remainder : remainders) {
        TokenCase c;
        c.options.batch_size = 3;
        c.options.remainder = remainder;
        c.options.gather_threads = 1;
        knob.set(c, figure);
        body(c, std::string(knob.name) + " = " + figure_text(figure) + ", remainder " +
                    resident::remainder_name(remainder));
      }
    }
  }
}

// The windows of a case, or 0 when it must be refused (a stream shorter than one window).
std::size_t windows_of(const TokenCase& c) {
  const std::size_t stride = c.window.stride == 0 ? c.window.context : c.window.stride;
  if (c.window.context == 0 || stride == 0 || c.tokens < plus(c.window.context, 1)) return 0;
  return (c.tokens - c.window.context - 1) / stride + 1;
}

// Tokens i + 1, real up to 4096 (a small buffer beyond, which only a refusal keeps in bounds:
// a token dataset copies every token it is given).
std::vector<std::uint16_t> token_values(std::size_t count) {
  std::vector<std::uint16_t> values(count <= 4096 ? std::max<std::size_t>(count, 1) : 16);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<std::uint16_t>(i + 1);
  return values;
}

TYPED_TEST(SizeSweepIn, TokenDatasetServesOrRefusesEveryFigure) {
  using Space = TypeParam;
  Tally tally;
  sweep_token_cases([&](TokenCase c, const std::string& label) {
    if (c.claimed != c.tokens) return;  // a file header's figure: the file sweep's
    ++tally.cases;
    const std::string what = "TokenDataset, " + label;
    const Bounded<Space> bounded;
    c.options = bounded.bound(c.options);
    const Space& space = bounded.space();
    const std::vector<std::uint16_t> values = token_values(c.tokens);
    const bool made = returns(what, [&] {
      resident::TokenDataset<Space, std::uint16_t> ds(
          space, c.options, c.window, HostTensor<const std::uint16_t>(values.data(), {c.tokens}));
      const std::size_t windows = windows_of(c);
      ASSERT_NE(windows, 0u) << what << ": made from a stream shorter than one window";
      ASSERT_LE(c.tokens, 4096u) << what << ": made from tokens it was not given";
      EXPECT_EQ(ds.num_rows(), windows) << what;
      EXPECT_LE(ds.bytes(), plus(times(c.tokens, 2), 256)) << what;
      drive_token_epochs(ds, what, tally, windows, ds.context(), ds.stride(), c.options);
      // A device rounds each allocation (the tokens, each ring slot's fields) up to 256 bytes.
      const std::size_t allocations = 1 + 2 * std::max<std::size_t>(c.options.ring_depth, 1);
      bounded.expect_holds(ds.bytes() + ds.ring_bytes(),
                           plus(ds.bytes() + ds.ring_bytes(), times(allocations, 256)), what);
    });
    if (!made) ++tally.refused;
    bounded.expect_empty(what);
    // plan() over the same stream answers or refuses, and never allocates.
    ++tally.cases;
    if (!returns("plan of " + what, [&] {
          (void)resident::plan(space, c.options, c.window,
                               HostTensor<const std::uint16_t>(values.data(), {c.tokens}));
        }))
      ++tally.refused;
    if (const auto used = bounded.used()) {
      EXPECT_EQ(*used, 0u) << what << ": plan() allocated";
    }
  });
}

// The bytes of a `.npy` file: a header saying `descr` and `shape` (any figures, written as
// text, so that no Shape check stands between the test and the reader), then `payload`.
std::string npy_bytes(const std::string& descr, const std::vector<std::size_t>& shape,
                      const std::string& payload) {
  std::string dims = "(";
  for (const std::size_t extent : shape) dims += std::to_string(extent) + ", ";
  if (shape.size() > 1) dims.resize(dims.size() - 1);
  dims += ")";
  std::string header =
      "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + dims + ", }";
  header.append((64 - (10 + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  std::string bytes = "\x93NUMPY";
  bytes += '\x01';
  bytes += '\x00';
  bytes += static_cast<char>(header.size() & 0xff);
  bytes += static_cast<char>(header.size() >> 8);
  return bytes + header + payload;
}

template <class T>
std::string payload_of(const T* data, std::size_t count) {
  return {reinterpret_cast<const char*>(data), count * sizeof(T)};
}

// A scratch file, removed at the end of the case.
struct ScratchFile {
  ScratchFile(const std::string& name, const std::string& bytes)
      : path(resident::testing::scratch(name + "_" + std::to_string(::getpid()))) {
    resident::testing::write_file(path, bytes);
  }
  ~ScratchFile() { std::remove(path.c_str()); }
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;
  std::string path;
};

// The llm.c shard header: magic, version, token count (an int32: a figure above 2^31 - 1 is
// written as its low 32 bits, as a writer that truncated it would).
std::string llmc_bytes(std::size_t count, const std::string& payload) {
  std::string header(1024, '\0');
  const auto put32 = [&](std::size_t at, std::uint32_t value) {
    for (std::size_t byte = 0; byte < 4; ++byte)
      header[at + byte] = static_cast<char>((value >> (8 * byte)) & 0xff);
  };
  put32(0, 20240520);
  put32(4, 1);
  put32(8, static_cast<std::uint32_t>(count));
  return header + payload;
}

TYPED_TEST(SizeSweepIn, TokenFilesServeOrAreRefusedForEveryFigure) {
  using Space = TypeParam;
  Tally tally;
  sweep_token_cases([&](TokenCase c, const std::string& label) {
    if (c.tokens > 4096) c.tokens = 64;  // a file holds real tokens; its header may claim any
    const std::vector<std::uint16_t> values = token_values(c.tokens);
    const std::string payload = payload_of(values.data(), c.tokens);
    for (const bool llmc : {false, true}) {
      ++tally.cases;
      const std::string what =
          std::string("load_token_file ") + (llmc ? ".bin" : ".npy") + ", " + label;
      const ScratchFile file(
          llmc ? "tokens.bin" : "tokens.npy",
          llmc ? llmc_bytes(c.claimed, payload) : npy_bytes("<u2", {c.claimed}, payload));
      const Bounded<Space> bounded;
      const DatasetOptions options = bounded.bound(c.options);
      const Space& space = bounded.space();
      const bool made = returns(what, [&] {
        auto corpus =
            resident::load_token_file<std::uint16_t>(space, options, c.window, {file.path});
        const std::size_t windows = windows_of(c);
        ASSERT_NE(windows, 0u) << what << ": made from a stream shorter than one window";
        ASSERT_EQ(c.claimed, c.tokens) << what << ": a header that misstates its tokens";
        EXPECT_EQ(corpus.num_rows(), windows) << what;
        drive_token_epochs(corpus, what, tally, windows, corpus.context(), corpus.stride(),
                           c.options);
      });
      if (!made) ++tally.refused;
      bounded.expect_empty(what);
      ++tally.cases;
      if (!returns("plan_token_file, " + what, [&] {
            (void)resident::plan_token_file<std::uint16_t>(space, options, c.window, {file.path});
          }))
        ++tally.refused;
    }
  });
}

// --- .npy and .npz files ------------------------------------------------------------------------

// A file case: x claims `shape`, y claims (rows,); the payloads are real only when the shape is
// small (else a few bytes, which the readers must refuse as truncated or the capacity check
// before anything is read).
struct FileCase {
  std::vector<std::size_t> x_shape;
  std::size_t rows;
};

struct FileKnob {
  const char* name;
  FileCase (*make)(std::size_t);
};

const FileKnob file_knobs[] = {
    {"x shape (f, 3)",
     [](std::size_t f) {
       return FileCase{{f, 3}, f};
     }},
    {"x shape (11, f)",
     [](std::size_t f) {
       return FileCase{{11, f}, 11};
     }},
    {"x shape (0, f)",
     [](std::size_t f) {
       return FileCase{{0, f}, 0};
     }},
    {"x shape (f, f)",
     [](std::size_t f) {
       return FileCase{{f, f}, f};
     }},
    {"x shape (2, f, 2)",
     [](std::size_t f) {
       return FileCase{{2, f, 2}, 2};
     }},
};

// Runs `body(case, rows, label)` for every file knob x figure; `rows` holds the values when
// the shape is small.
template <class Body>
void sweep_file_cases(Body&& body) {
  for (const FileKnob& knob : file_knobs) {
    for (const std::size_t figure : figures) {
      const FileCase c = knob.make(figure);
      body(c, std::string(knob.name) + " with f = " + figure_text(figure));
    }
  }
}

// The row width a file case claims, or SIZE_MAX when it overflows.
std::size_t claimed_width(const FileCase& c) {
  std::size_t width = 1;
  for (std::size_t axis = 1; axis < c.x_shape.size(); ++axis) width = times(width, c.x_shape[axis]);
  return width;
}

bool small_case(const FileCase& c) {
  return c.rows <= real_limit && claimed_width(c) <= real_limit;
}

// The data a file case's x holds: the values when small; else, where the claimed bytes are
// few (a shape with a zero extent claims none), that many bytes, so that only the shape's own
// checks can refuse it; else a few bytes, which the readers must refuse as truncated.
std::size_t claimed_bytes(const std::vector<std::size_t>& shape, std::size_t element) {
  std::size_t bytes = element;
  for (const std::size_t extent : shape) bytes = extent == 0 ? 0 : times(bytes, extent);
  for (const std::size_t extent : shape)
    if (extent == 0) return 0;
  return bytes;
}

std::string payload_for(const FileCase& c, const Rows& rows) {
  if (small_case(c)) return payload_of(rows.x().data(), c.rows * claimed_width(c));
  const std::size_t bytes = claimed_bytes(c.x_shape, sizeof(float));
  return std::string(bytes <= 4096 ? bytes : 16, '\0');
}

std::string label_payload_for(const FileCase& c, const Rows& rows) {
  if (small_case(c)) return payload_of(rows.y().data(), c.rows);
  const std::size_t bytes = claimed_bytes({c.rows}, sizeof(std::int32_t));
  return std::string(bytes <= 4096 ? bytes : 16, '\0');
}

// Whether a file case can be read: its shape's bytes (every partial product, zero extents
// aside, as a row behind zero rows must be addressable too) fit in size_t, and its files hold
// the data the shapes claim.
bool possible(const FileCase& c) {
  if (small_case(c)) return true;
  std::size_t bytes = sizeof(float);
  for (const std::size_t extent : c.x_shape)
    if (extent != 0) bytes = times(bytes, extent);
  return bytes != most && claimed_bytes(c.x_shape, sizeof(float)) == 0 &&
         claimed_bytes({c.rows}, sizeof(std::int32_t)) == 0;
}

// The epochs of a dataset made from a file case (its values those of `Rows`).
template <class Dataset>
void drive_file_epochs(Dataset& ds, const FileCase& c, const DatasetOptions& options,
                       const std::string& what, Tally& tally) {
  Expect e;
  e.n = c.rows;
  e.width = claimed_width(c);
  e.batch = options.batch_size;
  e.remainder = options.remainder;
  drive_epochs(ds, what, tally, e, EpochOptions{3, 1, Shuffle::none});
}

TYPED_TEST(SizeSweepIn, NpyFilesServeOrAreRefusedForEveryShape) {
  using Space = TypeParam;
  Tally tally;
  sweep_file_cases([&](const FileCase& c, const std::string& label) {
    const bool small = small_case(c);
    const bool readable = possible(c);
    const Rows rows(small ? c.rows : 0, small ? claimed_width(c) : 0);
    const std::string x_payload = payload_for(c, rows);
    const std::string y_payload = label_payload_for(c, rows);
    const ScratchFile x("x.npy", npy_bytes("<f4", c.x_shape, x_payload));
    const ScratchFile y("y.npy", npy_bytes("<i4", {c.rows}, y_payload));
    const Bounded<Space> bounded;
    const DatasetOptions options = bounded.bound(file_options());
    const Space& space = bounded.space();
    const auto check_space = [&](const std::string& what) { bounded.expect_empty(what); };
    // The headers: any shape whose byte size (or any partial product) overflows, or that the
    // file does not hold, is a FormatError; else the header says what was written.
    {
      ++tally.cases;
      const std::string what = "npy::read_header, " + label;
      if (returns(what, [&] {
            const resident::npy::Header header = resident::npy::read_header(x.path);
            EXPECT_TRUE(readable) << what << ": a header whose shape the file does not hold or "
                                  << "whose row bytes overflow was read";
            EXPECT_EQ(std::vector<std::size_t>(header.shape.begin(), header.shape.end()), c.x_shape)
                << what;
          })) {
      } else {
        ++tally.refused;
      }
      ++tally.cases;
      if (!returns("npy::load, " + label, [&] {
            const resident::npy::Array array = resident::npy::load(x.path);
            EXPECT_TRUE(readable) << "npy::load, " << label << ": loaded an impossible shape";
            const HostTensor<const float> loaded = array.as<float>();
            for (std::size_t i = 0; i < loaded.size(); ++i)
              ASSERT_EQ(loaded.data()[i], rows.x().data()[i]) << "npy::load, " << label;
          }))
        ++tally.refused;
    }
    const auto entry = [&](const std::string& name, auto&& make) {
      ++tally.cases;
      const std::string what = name + ", " + label;
      const bool made = returns(what, [&] {
        auto ds = make();
        ASSERT_TRUE(readable) << what << ": made from a shape the files do not hold";
        drive_file_epochs(ds, c, options, what, tally);
      });
      if (!made) ++tally.refused;
      check_space(what);
    };
    entry("load_dataset .npy", [&] {
      return resident::load_dataset<Space, float, std::int32_t>(space, options, x.path, y.path);
    });
    for (const StreamOrder order : {StreamOrder::whole_epoch, StreamOrder::window}) {
      DatasetOptions streamed = options;
      streamed.streaming.order = order;
      entry(std::string("load_streaming_dataset .npy ") + resident::stream_order_name(order), [&] {
        return resident::load_streaming_dataset<Space, float, std::int32_t>(space, streamed, x.path,
                                                                            y.path);
      });
    }
    entry("make_dataset .npy", [&] {
      return resident::make_dataset<Space, float, std::int32_t>(space, options, x.path, y.path);
    });
    ++tally.cases;
    if (!returns("plan .npy, " + label, [&] {
          const resident::Plan plan =
              resident::plan<Space, float, std::int32_t>(space, options, x.path, y.path);
          EXPECT_TRUE(readable) << "plan .npy, " << label << ": planned an impossible shape";
        }))
      ++tally.refused;
    check_space("plan .npy, " + label);
  });
}

TYPED_TEST(SizeSweepIn, NpzArchivesServeOrAreRefusedForEveryShape) {
  using Space = TypeParam;
  Tally tally;
  sweep_file_cases([&](const FileCase& c, const std::string& label) {
    const bool small = small_case(c);
    const bool readable = possible(c);
    const Rows rows(small ? c.rows : 0, small ? claimed_width(c) : 0);
    const std::string x_payload = payload_for(c, rows);
    const std::string y_payload = label_payload_for(c, rows);
    // Stored and deflated members: the deflated one's size in the directory is the claimed
    // image's, which a reader must check against the header before inflating.
    for (const bool deflate : {false, true}) {
      const std::string kind = deflate ? "deflated" : "stored";
      const resident::testing::ZipBytes zip =
          resident::testing::build_zip({{"x.npy", npy_bytes("<f4", c.x_shape, x_payload), deflate},
                                        {"y.npy", npy_bytes("<i4", {c.rows}, y_payload), deflate}});
      const ScratchFile file("sweep.npz", zip.bytes);
      const Bounded<Space> bounded;
      const DatasetOptions options = bounded.bound(file_options());
      const Space& space = bounded.space();
      ++tally.cases;
      std::optional<resident::npz::Archive> archive;
      std::string opened = "npz::Archive ";
      opened.append(kind).append(", ").append(label);
      if (!returns(opened, [&] { archive.emplace(file.path); })) {
        ++tally.refused;
        continue;  // the archive is refused when opened: no entry point gets it
      }
      EXPECT_TRUE(readable) << "npz::Archive " << kind << ", " << label
                            << ": opened a member whose shape it does not hold";
      const std::array<std::string, 2> keys{"x", "y"};
      const auto entry = [&](const std::string& name, auto&& make) {
        ++tally.cases;
        std::string what = name;
        what.append(" ").append(kind).append(", ").append(label);
        const bool made = returns(what, [&] {
          auto ds = make();
          ASSERT_TRUE(readable) << what << ": made from a shape the archive does not hold";
          drive_file_epochs(ds, c, options, what, tally);
        });
        if (!made) ++tally.refused;
        bounded.expect_empty(what);
      };
      entry("load_dataset .npz", [&] {
        return resident::load_dataset<Space, float, std::int32_t>(space, options, *archive, keys);
      });
      for (const StreamOrder order : {StreamOrder::whole_epoch, StreamOrder::window}) {
        DatasetOptions streamed = options;
        streamed.streaming.order = order;
        entry(std::string("load_streaming_dataset .npz ") + resident::stream_order_name(order),
              [&] {
                return resident::load_streaming_dataset<Space, float, std::int32_t>(space, streamed,
                                                                                    *archive, keys);
              });
      }
      entry("make_dataset .npz", [&] {
        return resident::make_dataset<Space, float, std::int32_t>(space, options, *archive, keys);
      });
      ++tally.cases;
      if (!returns("plan .npz, " + label, [&] {
            (void)resident::plan<Space, float, std::int32_t>(space, options, *archive, keys);
          }))
        ++tally.refused;
    }
  });
}

TEST(SizeSweep, NpySaveWritesOrRefusesEveryShape) {
  // The writer refuses a shape the reader would refuse, before writing anything; a shape it
  // writes reads back. Shapes whose bytes can be addressed but are not small stand for data
  // the caller has: writing gigabytes proves nothing the small ones do not, so they are left
  // out.
  Tally tally;
  const std::vector<float> values(16, 1.0f);
  sweep_file_cases([&](const FileCase& c, const std::string& label) {
    const bool small = small_case(c);
    const bool overflows = claimed_width(c) == most ||
                           times(times(c.rows, claimed_width(c)), sizeof(float)) == most ||
                           times(claimed_width(c), sizeof(float)) == most;
    if (!small && !overflows) return;
    ++tally.cases;
    const std::string what = "npy::save, " + label;
    const Rows rows(small ? c.rows : 0, small ? claimed_width(c) : 0);
    const std::string path =
        resident::testing::scratch("save_" + std::to_string(::getpid()) + ".npy");
    if (!returns(what, [&] {
          resident::npy::save(path, small ? rows.x().data() : values.data(),
                              resident::Shape(c.x_shape));
          EXPECT_TRUE(small) << what << ": wrote a shape whose byte size overflows";
          const resident::npy::Array back = resident::npy::load(path);
          EXPECT_EQ(std::vector<std::size_t>(back.shape().begin(), back.shape().end()), c.x_shape);
        }))
      ++tally.refused;
    std::remove(path.c_str());
  });
}

// --- Normalize and augment ---------------------------------------------------------------------

// A dataset of `rows` rows of `width` floats (values as `Rows`) on its own budget.
template <class Space>
struct SmallDataset {
  SmallDataset(std::size_t width, Remainder remainder)
      : rows(base_rows, width), ds(bounded.space(), options_for(remainder), rows.x(), rows.y()) {}
  DatasetOptions options_for(Remainder remainder) const {
    DatasetOptions options = bounded.bound(file_options());
    options.remainder = remainder;
    return options;
  }
  Rows rows;
  Bounded<Space> bounded;
  resident::DeviceDataset<Space, float, std::int32_t> ds;
};

TYPED_TEST(SizeSweepIn, NormalizeMeanStdServesOrRefusesEveryStride) {
  // Each count of channels the constructor takes at the edges (1, 2, 3, 4, 8), by each channel
  // stride: mean_std refuses it, or an epoch over rows of channels x stride elements (small
  // ones; else rows of 8 elements, which such a stride cannot fit) refuses it when made, or
  // every element is normalized with its own channel's mean and std.
  Tally tally;
  const float mean[8] = {0.5f, 1.5f, -2.0f, 4.0f, 0.25f, 8.0f, -1.0f, 3.0f};
  const float deviation[8] = {2.0f, 0.5f, 4.0f, 1.0f, 8.0f, 0.25f, 2.0f, 1.0f};
  const auto make = [&](std::size_t channels, std::size_t stride, float input_scale) {
    switch (channels) {
      case 1:
        return Normalize::mean_std({mean[0]}, {deviation[0]}, stride, input_scale);
      case 2:
        return Normalize::mean_std({mean[0], mean[1]}, {deviation[0], deviation[1]}, stride,
                                   input_scale);
      case 3:
        return Normalize::mean_std({mean[0], mean[1], mean[2]},
                                   {deviation[0], deviation[1], deviation[2]}, stride, input_scale);
      case 4:
        return Normalize::mean_std({mean[0], mean[1], mean[2], mean[3]},
                                   {deviation[0], deviation[1], deviation[2], deviation[3]}, stride,
                                   input_scale);
      default:
        return Normalize::mean_std(
            {mean[0], mean[1], mean[2], mean[3], mean[4], mean[5], mean[6], mean[7]},
            {deviation[0], deviation[1], deviation[2], deviation[3], deviation[4], deviation[5],
             deviation[6], deviation[7]},
            stride, input_scale);
    }
  };
  for (const std::size_t channels : {1, 2, 3, 4, 8}) {
    for (const std::size_t stride : figures) {
      ++tally.cases;
      const std::string what = "Normalize::mean_std, " + std::to_string(channels) +
                               " channels, stride " + figure_text(stride);
      Normalize normalize;
      if (!returns(what, [&] { normalize = make(channels, stride, 0.5f); })) {
        ++tally.refused;
        continue;
      }
      const std::size_t span = times(channels, stride);
      const std::size_t width = span <= real_limit && span != 0 ? span : 8;
      SmallDataset<TypeParam> data(width, Remainder::partial);
      for (const Shuffle shuffle : {Shuffle::none, Shuffle::batches, Shuffle::samples}) {
        ++tally.epochs;
        const std::string name = what + ", shuffle " + std::to_string(static_cast<int>(shuffle));
        bool made = false;
        try {
          auto epoch = data.ds.epoch({1, 0, shuffle}, resident::convert<0>(normalize));
          made = true;
          [&] {  // a lambda, so that a failed assertion ends the case alone
            ASSERT_TRUE(channels == 1 || span != most) << name;
            ASSERT_TRUE(channels == 1 || width % span == 0)
                << name << ": made over rows that are not whole runs of its channels";
            for (auto [x, y] : epoch) {
              const auto xs = host_values(data.ds, x);
              const auto ys = host_values(data.ds, y);
              for (std::size_t r = 0; r < x.valid_rows(); ++r) {
                const auto v = static_cast<std::size_t>(ys[r]);
                for (std::size_t j = 0; j < width; ++j) {
                  const std::size_t c = channels == 1 ? 0 : (j / stride) % channels;
                  const float stored = static_cast<float>(v * width + j + 1);
                  const float want = resident::detail::normalized(stored, 0.5f / deviation[c],
                                                                  -mean[c] / deviation[c]);
                  ASSERT_EQ(xs[r * width + j], want) << name << ", element " << j;
                }
              }
            }
          }();
          continue;
        } catch (const InvalidArgument& error) {
          if (made)
            ADD_FAILURE() << name << ": refused in the middle of an epoch: " << error.what();
        } catch (const std::exception& error) {
          ADD_FAILURE() << name << ": threw something other than a refusal: " << error.what();
        }
        ++tally.epochs_refused;
      }
    }
  }
  // Means and stds that are not finite numbers (or a std of 0, or a scale that makes the
  // factor infinite) cannot normalize anything: refused when made.
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (const float bad : {nan, inf, -inf}) {
    for (int which = 0; which < 3; ++which) {
      ++tally.cases;
      const float m = which == 0 ? bad : 0.5f;
      const float d = which == 1 ? bad : 2.0f;
      const float scale = which == 2 ? bad : 1.0f;
      const std::string what = "Normalize::mean_std with " +
                               std::string(which == 0   ? "mean "
                                           : which == 1 ? "std "
                                                        : "scale ") +
                               std::to_string(bad);
      EXPECT_FALSE(returns(what,
                           [&] {
                             (void)Normalize::mean_std({m, m}, {d, d}, 1, scale);
                           }))
          << what << ": accepted";
      ++tally.refused;
    }
  }
  // The ImageLayout overload: the stride is H x W, which itself may overflow.
  for (const std::size_t figure : figures) {
    for (const bool height : {true, false}) {
      ++tally.cases;
      const auto image = height ? resident::ImageLayout::chw(3, figure, 2)
                                : resident::ImageLayout::chw(3, 2, figure);
      const std::string what = "Normalize::mean_std(ImageLayout " + image.describe() + ")";
      Normalize normalize;
      if (!returns(what, [&] {
            normalize = Normalize::mean_std({0.5f, 0.5f, 0.5f}, {2.0f, 2.0f, 2.0f}, image);
          })) {
        ++tally.refused;
        continue;
      }
      EXPECT_EQ(normalize.channel_stride(), times(image.height, image.width))
          << what << ": a channel stride that wrapped";
    }
  }
}

TYPED_TEST(SizeSweepIn, AugmentServesOrRefusesEveryFigure) {
  // Each figure of an augmentation (the image's C, H and W, the crop's pad under either fill,
  // the cutout's size) on rows of 2 x 3 x 4 images: refused when the epoch is made, or every
  // pixel of every row one of its own image's, a fill or a cutout zero.
  Tally tally;
  struct AugmentKnob {
    const char* name;
    resident::Augmentation (*make)(std::size_t);
  };
  const auto base = [] {
    resident::Augmentation a;
    a.image = resident::ImageLayout::chw(2, 3, 4);
    a.crop = {1, resident::Fill::zeros};
    a.flip = {0.5};
    a.cutout = {2};
    return a;
  };
  static const AugmentKnob knobs[] = {
      {"image channels",
       [](std::size_t f) {
         auto a = resident::Augmentation{};
         a.image = resident::ImageLayout::chw(f, 3, 4);
         a.crop = {1};
         a.cutout = {2};
         return a;
       }},
      {"image height",
       [](std::size_t f) {
         auto a = resident::Augmentation{};
         a.image = resident::ImageLayout::chw(2, f, 4);
         a.crop = {1};
         a.cutout = {2};
         return a;
       }},
      {"image width",
       [](std::size_t f) {
         auto a = resident::Augmentation{};
         a.image = resident::ImageLayout::hwc(3, f, 2);
         a.crop = {1};
         a.cutout = {2};
         return a;
       }},
      {"crop pad, zeros",
       [](std::size_t f) {
         auto a = resident::Augmentation{};
         a.image = resident::ImageLayout::chw(2, 3, 4);
         a.crop = {f, resident::Fill::zeros};
         return a;
       }},
      {"crop pad, reflect",
       [](std::size_t f) {
         auto a = resident::Augmentation{};
         a.image = resident::ImageLayout::hwc(3, 4, 2);
         a.crop = {f, resident::Fill::reflect};
         return a;
       }},
      {"cutout size",
       [](std::size_t f) {
         auto a = resident::Augmentation{};
         a.image = resident::ImageLayout::chw(2, 3, 4);
         a.cutout = {f};
         return a;
       }},
  };
  (void)base;
  for (const AugmentKnob& knob : knobs) {
    for (const std::size_t figure : figures) {
      for (const Remainder remainder : {Remainder::partial, Remainder::pad}) {
        ++tally.cases;
        resident::Augmentation augmentation = knob.make(figure);
        augmentation.flip = {0.5};
        const std::string what = std::string("augment, ") + knob.name + " = " +
                                 figure_text(figure) + ", remainder " +
                                 resident::remainder_name(remainder);
        SmallDataset<TypeParam> data(24, remainder);
        const resident::FieldAugmentation<0> augment{augmentation};
        Expect e;
        e.n = base_rows;
        e.width = 24;
        e.batch = base_batch;
        e.remainder = remainder;
        e.augmented = true;
        std::size_t refused = 0;
        for (const Shuffle shuffle : {Shuffle::none, Shuffle::batches, Shuffle::samples}) {
          const std::string name = what + ", shuffle " + std::to_string(static_cast<int>(shuffle));
          const std::size_t before = tally.epochs_refused;
          e.convert = false;
          drive(name, tally, e, data.ds, [&] { return data.ds.epoch({2, 1, shuffle}, augment); });
          e.convert = true;
          drive(name + ", converted", tally, e, data.ds, [&] {
            return data.ds.epoch({2, 1, shuffle}, augment, resident::convert<0>(doubling));
          });
          refused += tally.epochs_refused - before;
        }
        if (refused != 0) ++tally.refused;
        EXPECT_TRUE(refused == 0 || refused == 6)
            << what << ": refused by some epochs and not others";
      }
    }
  }
}

}  // namespace
