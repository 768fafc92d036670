// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// A streaming dataset's chunk pieces (detail/stream/chunk_pipeline.hpp), which a reader waiting
// for its chunk copies too where StreamOptions::reader_copies is on: on or off, the bytes of the
// preloaded dataset over shards, remainders, rows larger than a piece or of one byte, and rings
// of one chunk or two slots; zero-byte rows, zero rows and one row; random access and restarted
// passes while pieces are in flight; datasets destroyed or moved then; copies that fail on
// either thread; and files changed under a running pass, which stop the pass with a FormatError
// and never serve wrong bytes. Tests that may kill the process run their body in a child process
// (a death-test fork) with an alarm, so that a crash or a hang fails that test alone, also
// outside ctest.

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "resident/resident.hpp"
#include "support/batch_options.hpp"
#include "support/faulty_space.hpp"
#include "support/float_bits.hpp"
#include "support/mixed_values.hpp"
#include "support/temp_npy.hpp"

namespace {

namespace npy = resident::npy;
using resident::CudaError;
using resident::DatasetOptions;
using resident::DeviceDataset;
using resident::EpochOptions;
using resident::FormatError;
using resident::HostSpace;
using resident::HostTensor;
using resident::Remainder;
using resident::Shuffle;
using resident::StreamingDataset;
using resident::testing::batch_options;
using resident::testing::FaultInjector;
using resident::testing::FaultySpace;
using resident::testing::filled;
using resident::testing::float_bits;
using resident::testing::Operation;
using resident::testing::TempNpy;

/// Runs `body` in a forked child with an alarm of `seconds`: a crash (SIGFPE, SIGSEGV) or a hang
/// (SIGALRM) fails the calling test instead of ending the whole test program. The child exits 0
/// when `body` returned without a gtest failure.
/// With RESIDENT_TEST_IN_PROCESS set, `body` runs in the test's own process instead (for the
/// sanitizers, whose reports a child's exit would hide).
template <class Body>
void in_child(int seconds, Body body) {
  if (std::getenv("RESIDENT_TEST_IN_PROCESS") != nullptr) {
    body();
    return;
  }
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        ::alarm(static_cast<unsigned>(seconds));
        body();
        std::_Exit(::testing::Test::HasFailure() ? 1 : 0);
      },
      ::testing::ExitedWithCode(0), "")
      << "the body crashed, hung past " << seconds << " s, or failed (see its output above)";
}

DatasetOptions streaming(std::size_t batch, Remainder remainder, std::size_t chunk_batches,
                         bool reader_copies, std::size_t ring = 3, std::size_t prefetch = 2) {
  DatasetOptions options = batch_options(batch, remainder);
  options.streaming.chunk_batches = chunk_batches;
  options.streaming.chunk_slots = ring;
  options.streaming.prefetch_chunks = prefetch;
  options.streaming.reader_copies = reader_copies;
  // Window order: the files are read chunk by chunk, as a file larger than the host's memory.
  options.streaming.order = resident::StreamOrder::window;
  return options;
}

/// One batch, all fields, as bytes (with each view's rows and valid rows).
template <class Batch>
std::string plain_bytes_of(const Batch& batch) {
  std::string bytes;
  std::apply(
      [&](const auto&... view) {
        ((bytes.append(reinterpret_cast<const char*>(view.data()), view.bytes()),
          bytes.append(std::to_string(view.rows()) + "/" + std::to_string(view.valid_rows()) +
                       ";")),
         ...);
      },
      batch);
  return bytes;
}

/// Every batch of one epoch of `ds`, all fields, as bytes.
template <class Dataset>
std::vector<std::string> epoch_bytes(Dataset& ds, EpochOptions options) {
  std::vector<std::string> out;
  auto epoch = ds.epoch(options);
  for (auto&& batch : epoch) out.push_back(plain_bytes_of(batch));
  return out;
}

/// Batches of `ds.batch(k)` in order, all fields, as bytes.
template <class Dataset>
std::vector<std::string> plain_bytes(Dataset& ds) {
  std::vector<std::string> out;
  for (std::size_t k = 0; k < ds.num_batches(); ++k) out.push_back(plain_bytes_of(ds.batch(k)));
  return out;
}

// A field whose rows have no bytes (shape {n, 0}: extents may be zero) beside a normal one: a
// DeviceDataset serves it, and so must a StreamingDataset, whose producer cuts chunks into
// pieces by their bytes (a piece size divided by zero row bytes would die of SIGFPE).
TEST(ReaderPieces, AFieldOfZeroByteRowsStreamsFromMemory) {
  in_child(30, [] {
    std::vector<float> x(std::size_t{100} * 4, 1.0f);
    static const float nothing[1] = {};
    const HostTensor<const float> xt(x.data(), {100, 4});
    const HostTensor<const float> empty(nothing, {100, 0});
    DeviceDataset<HostSpace, float, float> preloaded(
        HostSpace{}, batch_options(8, Remainder::partial), xt, empty);
    const auto expected = plain_bytes(preloaded);
    for (const bool reader_copies : {true, false}) {
      StreamingDataset<HostSpace, float, float> ds(
          HostSpace{}, streaming(8, Remainder::partial, 2, reader_copies), xt, empty);
      EXPECT_EQ(plain_bytes(ds), expected);
    }
  });
}

// The same from a .npy file of shape (n, 0).
TEST(ReaderPieces, AZeroWidthNpyFileStreams) {
  const std::vector<float> x(std::size_t{50} * 3, 2.0f);
  const std::vector<float> none;
  const TempNpy features("chunk_pipeline_zero_width_x", x, {50, 3});
  const TempNpy empty("chunk_pipeline_zero_width_e", none, {50, 0});
  in_child(30, [&] {
    auto ds = resident::load_streaming_dataset<HostSpace, float, float>(
        HostSpace{}, streaming(4, Remainder::pad, 3, true), features.path, empty.path);
    std::size_t batches = 0;
    for (auto [a, b] : ds.epoch({})) {
      EXPECT_EQ(b.bytes(), 0u);
      EXPECT_EQ(a.data()[0], 2.0f);
      ++batches;
    }
    EXPECT_EQ(batches, 13u);
  });
}

/// Three fields of rows that make chunks of many 1 MiB pieces (a 3 KiB-ish float row, an int8
/// row of 5, a label), or rows larger than a piece.
struct StreamSource {
  StreamSource(std::size_t n, std::size_t width)
      : rows(n),
        width(width),
        x(filled<float>(n, width, 51)),
        b(filled<std::int8_t>(n, 5, 52)),
        y(filled<std::int64_t>(n, 1, 53)) {}
  [[nodiscard]] HostTensor<const float> xt() const { return {x.data(), {rows, width}}; }
  [[nodiscard]] HostTensor<const std::int8_t> bt() const { return {b.data(), {rows, 5}}; }
  [[nodiscard]] HostTensor<const std::int64_t> yt() const { return {y.data(), {rows}}; }
  std::size_t rows;
  std::size_t width;
  std::vector<float> x;
  std::vector<std::int8_t> b;
  std::vector<std::int64_t> y;
};

using Streamed3 = StreamingDataset<HostSpace, float, std::int8_t, std::int64_t>;
using Preloaded3 = DeviceDataset<HostSpace, float, std::int8_t, std::int64_t>;

// reader_copies on or off: the same bytes as the preloaded dataset for Shuffle::none, and the
// same batches as each other for the shuffles, over remainders, batch sizes that do not divide
// the rows, rows larger than a piece, and every rank of partitioned and replicated shards.
TEST(ReaderPieces, OnOrOffServeTheSameBatchesOverShardsAndRemainders) {
  struct Case {
    std::size_t rows, width, batch, chunk_batches;
  };
  for (const Case c :
       {Case{3001, 800, 37, 11}, Case{17, 300000, 2, 3}, Case{1, 1, 4, 1}, Case{2000, 1, 1, 700}}) {
    const StreamSource source(c.rows, c.width);
    for (const Remainder remainder : {Remainder::drop, Remainder::partial, Remainder::pad}) {
      for (const auto sharding :
           {resident::Sharding::partitioned, resident::Sharding::replicated}) {
        for (int rank = 0; rank < 3; ++rank) {
          SCOPED_TRACE(
              std::to_string(c.rows) + " rows of " + std::to_string(c.width) + ", batch " +
              std::to_string(c.batch) + ", remainder " +
              std::to_string(static_cast<int>(remainder)) + ", rank " + std::to_string(rank) +
              (sharding == resident::Sharding::partitioned ? " partitioned" : " replicated"));
          DatasetOptions options = streaming(c.batch, remainder, c.chunk_batches, true);
          options.shard = {rank, 3, 0};
          options.sharding = sharding;
          std::optional<Preloaded3> preloaded;
          try {
            preloaded.emplace(HostSpace{}, options, source.xt(), source.bt(), source.yt());
          } catch (const resident::InvalidArgument&) {
            continue;  // a shard with no rows to serve under this policy
          }
          const auto expected = plain_bytes(*preloaded);
          std::vector<std::string> shuffled[2][2];
          for (const bool reader_copies : {true, false}) {
            options.streaming.reader_copies = reader_copies;
            Streamed3 ds(HostSpace{}, options, source.xt(), source.bt(), source.yt());
            ASSERT_EQ(plain_bytes(ds), expected) << "reader_copies " << reader_copies;
            shuffled[reader_copies][0] = epoch_bytes(ds, {4, 1, Shuffle::batches});
            shuffled[reader_copies][1] = epoch_bytes(ds, {4, 2, Shuffle::samples});
            ASSERT_EQ(epoch_bytes(ds, {4, 0, Shuffle::none}), expected);
          }
          EXPECT_EQ(shuffled[0][0], shuffled[1][0]);
          EXPECT_EQ(shuffled[0][1], shuffled[1][1]);
        }
      }
    }
  }
}

// A lone chunk (every batch in one slot, nothing to prefetch) and a ring of two slots with one
// ahead, where the reader helps with the slot it just gave up: the preloaded bytes.
TEST(ReaderPieces, ALoneChunkAndATwoSlotRingServeThePreloadedBytes) {
  const StreamSource source(2500, 900);
  Preloaded3 preloaded(HostSpace{}, batch_options(33, Remainder::pad), source.xt(), source.bt(),
                       source.yt());
  const auto expected = plain_bytes(preloaded);
  for (const std::size_t chunk_batches : {std::size_t{13}, std::size_t{1000}}) {
    for (const bool reader_copies : {true, false}) {
      Streamed3 ds(HostSpace{}, streaming(33, Remainder::pad, chunk_batches, reader_copies, 2, 1),
                   source.xt(), source.bt(), source.yt());
      EXPECT_EQ(plain_bytes(ds), expected)
          << "chunks of " << chunk_batches << ", reader_copies " << reader_copies;
      EXPECT_EQ(epoch_bytes(ds, {}), expected);
    }
  }
}

// Zero rows and one row streamed, with the reader copying: an empty epoch, then one batch.
TEST(ReaderPieces, ZeroRowsAndOneRowStream) {
  for (const std::size_t rows : {std::size_t{0}, std::size_t{1}}) {
    const StreamSource source(rows, 3);
    for (const Remainder remainder : {Remainder::partial, Remainder::pad, Remainder::drop}) {
      Streamed3 ds(HostSpace{}, streaming(4, remainder, 2, true), source.xt(), source.bt(),
                   source.yt());
      const std::size_t batches = rows == 0 || remainder == Remainder::drop ? 0 : 1;
      EXPECT_EQ(ds.num_batches(), batches);
      EXPECT_EQ(epoch_bytes(ds, {1, 0, Shuffle::samples}).size(), batches);
      EXPECT_THROW((void)ds.batch(batches), std::out_of_range);
      if (batches == 1) {
        const auto [x, b, y] = ds.batch(0);
        EXPECT_EQ(y.valid_rows(), 1u);
        EXPECT_EQ(y.data()[0], source.y[0]);
        for (std::size_t e = 0; e < 3; ++e)
          EXPECT_EQ(float_bits(x.data()[e]), float_bits(source.x[e]));
      }
    }
  }
}

// Random access that jumps back and forth while pieces are in flight, and passes restarted by
// another epoch after a batch or two: always the right batch.
TEST(ReaderPieces, JumpsAndRestartsWhilePiecesAreInFlightServeTheRightBatch) {
  const StreamSource source(6000, 700);  // 2.7 KiB rows, chunks of 8 batches of 64: ~1.4 MiB
  Preloaded3 preloaded(HostSpace{}, batch_options(64, Remainder::pad), source.xt(), source.bt(),
                       source.yt());
  const auto expected = plain_bytes(preloaded);
  Streamed3 ds(HostSpace{}, streaming(64, Remainder::pad, 8, true, 4, 3), source.xt(), source.bt(),
               source.yt());
  const std::size_t order[] = {0, 1, 2, 50, 3, 93, 92, 91, 8, 0, 9, 10, 11, 12, 90, 89, 16, 17};
  for (int round = 0; round < 4; ++round)
    for (const std::size_t k : order) {
      ASSERT_LT(k, expected.size());
      ASSERT_EQ(plain_bytes_of(ds.batch(k)), expected[k]) << "batch " << k;
    }
  for (std::uint64_t e = 0; e < 6; ++e) {
    auto epoch = ds.epoch({1, e, Shuffle::batches});
    auto it = epoch.begin();
    for (std::uint64_t step = 0; step <= e % 3; ++step) ++it;  // abandoned after a few
  }
  EXPECT_EQ(plain_bytes(ds), expected);
}

// Datasets destroyed, moved and move-assigned over while their producer and reader share a
// chunk's pieces: no hang, no crash, and every allocation returned.
TEST(ReaderPieces, DestroyedOrMovedWhilePiecesAreInFlight) {
  const StreamSource source(4000, 2000);  // 8 KiB rows, chunks of 4 batches of 64: 2 MiB
  auto injector = std::make_shared<FaultInjector>();
  injector->count_only();
  const FaultySpace<HostSpace> space(HostSpace{}, injector);
  in_child(120, [&] {
    for (int round = 0; round < 40; ++round) {
      StreamingDataset<FaultySpace<HostSpace>, float, std::int8_t, std::int64_t> ds(
          space, streaming(64, Remainder::partial, 4, true, 3, 2), source.xt(), source.bt(),
          source.yt());
      const auto [x, b, y] = ds.batch(static_cast<std::size_t>(round % 7));
      ASSERT_EQ(y.data()[0], source.y[static_cast<std::size_t>(round % 7) * 64]);
      if (round % 3 == 1) {
        auto moved = std::move(ds);
        (void)moved.batch(9);
      } else if (round % 3 == 2) {
        StreamingDataset<FaultySpace<HostSpace>, float, std::int8_t, std::int64_t> other(
            space, streaming(64, Remainder::partial, 4, true, 3, 2), source.xt(), source.bt(),
            source.yt());
        (void)other.batch(1);
        other = std::move(ds);
        (void)other.batch(2);
      }
    }
    EXPECT_EQ(injector->live_allocations(), 0u);
    EXPECT_EQ(injector->live_bytes(), 0u);
  });
}

// A copy that fails on either thread (the producer's or the reader's, pieces of 1 MiB in
// chunks of several): each armed fault surfaces once as its CudaError from the batch whose
// chunk failed, the pass goes on at the next batch, and a clean pass after it is exact.
TEST(ReaderPieces, AFailedCopyOnEitherThreadFailsOneBatchAndThePassGoesOn) {
  const StreamSource source(1200, 1000);  // 4 KiB rows: chunks of 3 batches of 100 = 1.2 MiB
  Preloaded3 preloaded(HostSpace{}, batch_options(100, Remainder::partial), source.xt(),
                       source.bt(), source.yt());
  const auto expected = plain_bytes(preloaded);
  in_child(240, [&] {
    auto injector = std::make_shared<FaultInjector>();
    const FaultySpace<HostSpace> space(HostSpace{}, injector);
    for (const bool reader_copies : {true, false}) {
      StreamingDataset<FaultySpace<HostSpace>, float, std::int8_t, std::int64_t> ds(
          space, streaming(100, Remainder::partial, 3, reader_copies, 2, 1), source.xt(),
          source.bt(), source.yt());
      injector->count_only();
      ASSERT_EQ(plain_bytes(ds), expected);
      const std::size_t copies = injector->count(Operation::copy);
      ASSERT_GT(copies, 8u);
      for (std::size_t k = 1; k <= copies; ++k) {
        injector->arm(Operation::copy, k);
        std::size_t errors = 0;
        for (std::size_t batch = 0; batch < ds.num_batches(); ++batch) {
          try {
            const auto b = ds.batch(batch);
            std::string bytes;
            std::apply(
                [&](const auto&... view) {
                  ((bytes.append(reinterpret_cast<const char*>(view.data()), view.bytes()),
                    bytes.append(std::to_string(view.rows()) + "/" +
                                 std::to_string(view.valid_rows()) + ";")),
                   ...);
                },
                b);
            ASSERT_EQ(bytes, expected[batch]) << "fault " << k << ", batch " << batch;
          } catch (const CudaError& error) {
            ++errors;
            EXPECT_EQ(error.what(), injector->fault_message());
          }
        }
        EXPECT_EQ(errors, injector->fired() ? 1u : 0u) << "fault " << k << " of " << copies;
        injector->count_only();
        ASSERT_EQ(plain_bytes(ds), expected) << "after fault " << k;
      }
    }
  });
}

/// What a `ReaderFaultSpace` fails, and where: the first copy made on thread `reader` after it
/// is armed throws `ReaderFault`; every copy's thread is counted.
struct ReaderFaultState {
  std::thread::id reader;
  std::atomic<bool> armed{false};
  std::atomic<std::size_t> reader_copies{0};
  std::atomic<std::size_t> other_copies{0};
};

struct ReaderFault : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// The host space, except that the reader's thread fails a copy on request: the fault then
/// arises in a piece the reader runs, never in the producer's.
class ReaderFaultSpace {
 public:
  using memory_space = ReaderFaultSpace;
  using stream_type = HostSpace::stream_type;
  static constexpr bool device_accessible = false;  // as the memory-space concept asks

  ReaderFaultSpace() : state_(std::make_shared<ReaderFaultState>()) {}
  explicit ReaderFaultSpace(std::shared_ptr<ReaderFaultState> state) : state_(std::move(state)) {}

  [[nodiscard]] std::string name() const { return "reader-fault host"; }
  [[nodiscard]] std::size_t default_reserve_bytes() const noexcept { return 0; }
  [[nodiscard]] resident::Capacity capacity() const { return inner_.capacity(); }
  [[nodiscard]] void* allocate(std::size_t bytes) const { return inner_.allocate(bytes); }
  void deallocate(void* pointer, std::size_t bytes) const noexcept {
    inner_.deallocate(pointer, bytes);
  }
  [[nodiscard]] stream_type create_stream() const { return inner_.create_stream(); }
  void destroy_stream(stream_type stream) const noexcept { inner_.destroy_stream(stream); }
  void synchronize(stream_type stream) const { inner_.synchronize(stream); }
  void copy_from_host(void* destination, const void* source, std::size_t bytes,
                      stream_type stream) const {
    if (std::this_thread::get_id() == state_->reader) {
      ++state_->reader_copies;
      if (state_->armed.exchange(false)) throw ReaderFault("a copy on the reader's thread failed");
    } else {
      ++state_->other_copies;
    }
    inner_.copy_from_host(destination, source, bytes, stream);
  }
  void copy_to_host(void* destination, const void* source, std::size_t bytes,
                    stream_type stream) const {
    inner_.copy_to_host(destination, source, bytes, stream);
  }

 private:
  HostSpace inner_{};
  std::shared_ptr<ReaderFaultState> state_;
};

// A fault raised in a piece that the reader itself runs: batch() throws it as it was thrown
// (its own type), the pass goes on at the next batch, and nothing hangs. With reader_copies
// off the reader copies nothing.
TEST(ReaderPieces, AFaultInAPieceTheReaderRunsSurfacesAsThrown) {
  const StreamSource source(2400, 4000);  // 16 KiB rows: chunks of 8 batches of 64 = 8 MiB
  Preloaded3 preloaded(HostSpace{}, batch_options(64, Remainder::partial), source.xt(), source.bt(),
                       source.yt());
  const auto expected = plain_bytes(preloaded);
  in_child(120, [&] {
    for (const bool reader_copies : {true, false}) {
      auto state = std::make_shared<ReaderFaultState>();
      state->reader = std::this_thread::get_id();
      StreamingDataset<ReaderFaultSpace, float, std::int8_t, std::int64_t> ds(
          ReaderFaultSpace(state), streaming(64, Remainder::partial, 8, reader_copies, 2, 1),
          source.xt(), source.bt(), source.yt());
      std::size_t faults = 0;
      // Armed until the reader's thread makes a copy: a reader that waits takes pieces, but
      // when it does is the scheduler's choice, so up to 40 passes.
      for (int pass = 0; pass < (reader_copies ? 40 : 3) && faults < 3; ++pass) {
        state->armed = true;
        for (std::size_t k = 0; k < ds.num_batches(); ++k) {
          try {
            ASSERT_EQ(plain_bytes_of(ds.batch(k)), expected[k])
                << "pass " << pass << " batch " << k;
          } catch (const ReaderFault&) {
            ++faults;
          }
        }
      }
      state->armed = false;
      if (reader_copies) {
        EXPECT_GT(state->reader_copies.load(), 0u) << "the reader never copied a piece";
        EXPECT_GT(faults, 0u) << "no fault arose on the reader's thread";
      } else {
        EXPECT_EQ(state->reader_copies.load(), 0u);
        EXPECT_EQ(faults, 0u);
      }
      EXPECT_EQ(plain_bytes(ds), expected) << "after the faults";
    }
  });
}

/// A streamed .npy of `rows` rows of `width` floats, with a label file.
struct StreamedFiles {
  StreamedFiles(const std::string& name, std::size_t rows, std::size_t width)
      : x(filled<float>(rows, width, 61)),
        y(filled<std::int64_t>(rows, 1, 62)),
        features(name + "_x", x, {rows, width}),
        labels(name + "_y", y, {rows}) {}
  std::vector<float> x;
  std::vector<std::int64_t> y;
  TempNpy features;
  TempNpy labels;
};

// Files whose rows are larger than a piece (1.5 MiB) or a byte each, streamed with the reader
// copying or not: the bytes of the same data streamed from memory.
TEST(ReaderPieces, FilesOfHugeRowsAndOfOneByteRowsStreamAsFromMemory) {
  constexpr std::size_t huge_rows = 13;
  constexpr std::size_t huge_width = 393216 + 3;  // 1.5 MiB + 12 bytes per row
  const std::vector<float> huge = filled<float>(huge_rows, huge_width, 91);
  const std::vector<std::uint8_t> tiny = filled<std::uint8_t>(huge_rows, 1, 92);
  const TempNpy huge_file("chunk_pipeline_huge_rows", huge, {huge_rows, huge_width});
  const TempNpy tiny_file("chunk_pipeline_tiny_rows", tiny, {huge_rows});
  DeviceDataset<HostSpace, float, std::uint8_t> preloaded(
      HostSpace{}, batch_options(2, Remainder::pad),
      HostTensor<const float>(huge.data(), {huge_rows, huge_width}),
      HostTensor<const std::uint8_t>(tiny.data(), {huge_rows}));
  const auto expected = plain_bytes(preloaded);
  for (const bool reader_copies : {true, false}) {
    auto ds = resident::load_streaming_dataset<HostSpace, float, std::uint8_t>(
        HostSpace{}, streaming(2, Remainder::pad, 2, reader_copies, 2, 1), huge_file.path,
        tiny_file.path);
    EXPECT_EQ(plain_bytes(ds), expected) << "reader_copies " << reader_copies;
    EXPECT_EQ(epoch_bytes(ds, {}), expected);
  }
  constexpr std::size_t byte_rows = 3000001;  // one-byte rows: a piece of a million rows
  const std::vector<std::uint8_t> bytes = filled<std::uint8_t>(byte_rows, 1, 93);
  const TempNpy bytes_file("chunk_pipeline_byte_rows", bytes, {byte_rows});
  for (const bool reader_copies : {true, false}) {
    auto ds = resident::load_streaming_dataset<HostSpace, std::uint8_t>(
        HostSpace{}, streaming(100000, Remainder::partial, 7, reader_copies, 3, 2),
        bytes_file.path);
    std::size_t at = 0;
    for (auto [x] : ds.epoch({})) {
      ASSERT_EQ(std::memcmp(x.data(), bytes.data() + at, x.bytes()), 0) << at;
      at += x.rows();
    }
    EXPECT_EQ(at, byte_rows);
  }
}

enum class Change { truncate, extend, rewrite_in_place, remove, replace };

void change_file(const std::string& path, Change change) {
  struct ::stat status {};
  ASSERT_EQ(::stat(path.c_str(), &status), 0);
  switch (change) {
    case Change::truncate:
      ASSERT_EQ(::truncate(path.c_str(), status.st_size / 3), 0);
      break;
    case Change::extend:
      ASSERT_EQ(::truncate(path.c_str(), status.st_size + 4096), 0);
      break;
    case Change::rewrite_in_place: {
      std::FILE* file = std::fopen(path.c_str(), "r+b");
      ASSERT_NE(file, nullptr);
      std::fseek(file, status.st_size / 2, SEEK_SET);
      const char junk[64] = {1, 2, 3};
      std::fwrite(junk, 1, sizeof junk, file);
      std::fclose(file);
      // Make the mtime differ even on coarse clocks.
      const ::timespec times[2] = {{0, UTIME_OMIT}, {status.st_mtim.tv_sec + 5, 0}};
      ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0);
      break;
    }
    case Change::remove:
      ASSERT_EQ(std::remove(path.c_str()), 0);
      break;
    case Change::replace: {
      const std::vector<float> other(16, 9.0f);
      npy::save(path, other.data(), {4, 4});
      break;
    }
  }
}

// A streamed file changed under a running pass (truncated, extended, rewritten in place,
// removed, replaced), with the reader copying pieces or not: the pass meets a FormatError (no
// other error, no hang, no crash), only ever serves the file's original bytes, and so does
// every later pass until it ends.
TEST(ReaderPieces, AFileChangedUnderARunningPassGivesFormatErrorsAndNeverWrongBytes) {
  for (const Change change : {Change::truncate, Change::extend, Change::rewrite_in_place,
                              Change::remove, Change::replace}) {
    for (const bool reader_copies : {true, false}) {
      SCOPED_TRACE("change " + std::to_string(static_cast<int>(change)) + ", reader_copies " +
                   std::to_string(reader_copies));
      StreamedFiles files("chunk_pipeline_changed", 3000, 1000);  // 4 KiB rows, 12 MiB
      in_child(60, [&] {
        auto ds = resident::load_streaming_dataset<HostSpace, float, std::int64_t>(
            HostSpace{}, streaming(50, Remainder::partial, 6, reader_copies, 3, 2),
            files.features.path, files.labels.path);
        const std::size_t batches = ds.num_batches();
        std::size_t format_errors = 0;
        for (int pass = 0; pass < 2; ++pass) {
          for (std::size_t k = 0; k < batches; ++k) {
            if (pass == 0 && k == 1) change_file(files.features.path, change);
            try {
              const auto [x, y] = ds.batch(k);
              ASSERT_EQ(std::memcmp(x.data(), files.x.data() + k * 50 * 1000, x.bytes()), 0)
                  << "pass " << pass << " batch " << k << " served bytes that are not the file's";
              ASSERT_EQ(std::memcmp(y.data(), files.y.data() + k * 50, y.bytes()), 0);
            } catch (const FormatError& error) {
              ++format_errors;
              EXPECT_NE(std::string(error.what()).find("changed"), std::string::npos)
                  << error.what();
            }
          }
        }
        EXPECT_GT(format_errors, 0u) << "the change was never reported";
      });
    }
  }
}

// A reader helping with a chunk whose file read fails: the FormatError surfaces at the batch
// (the same type as with the producer alone) and the dataset recovers once the file is back.
TEST(ReaderPieces, APieceFailingOnTheReaderThreadSurfacesAsFormatError) {
  StreamedFiles files("chunk_pipeline_reader_fail", 2400, 2048);  // 8 KiB rows, 19 MiB
  in_child(60, [&] {
    auto ds = resident::load_streaming_dataset<HostSpace, float, std::int64_t>(
        HostSpace{}, streaming(100, Remainder::partial, 6, true, 2, 1), files.features.path,
        files.labels.path);
    (void)ds.batch(0);
    // Extended: every later read of this dataset fails, on whichever thread it runs.
    change_file(files.features.path, Change::extend);
    std::size_t format_errors = 0;
    std::size_t other_errors = 0;
    for (std::size_t k = 0; k < ds.num_batches(); ++k) {
      try {
        (void)ds.batch(k);
      } catch (const FormatError&) {
        ++format_errors;
      } catch (...) {
        ++other_errors;
      }
    }
    EXPECT_GT(format_errors, 0u);
    EXPECT_EQ(other_errors, 0u);
  });
}

}  // namespace
