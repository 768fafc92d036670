// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// load_token_file: llm.c shards and 1-D .npy files, one or many end to end, preloaded or
// streamed with the same batches; every malformed file refused with a FormatError that names
// the fault; plan() and plan_token_file figures.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <optional>
#include <string>
#include <vector>

#include "resident/host_space.hpp"
#include "resident/load_tokens.hpp"
#include "support/resume_checks.hpp"
#include "support/spaces.hpp"
#include "support/temp_npy.hpp"
#include "support/token_checks.hpp"

namespace {

using resident::DatasetOptions;
using resident::EpochOptions;
using resident::HostSpace;
using resident::HostTensor;
using resident::Remainder;
using resident::Shape;
using resident::Shuffle;
using resident::StreamOrder;
using resident::TokenOptions;

/// A scratch file named after the test's process, removed at the end of the test.
struct ScratchFile {
  explicit ScratchFile(const std::string& name)
      : path(::testing::TempDir() + "resident_tokens_" + std::to_string(::getpid()) + "_" + name) {}
  ~ScratchFile() { std::remove(path.c_str()); }
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;
  std::string path;
};

/// The bytes of an llm.c shard: 256 little-endian int32 (magic, version, count, zeros), then
/// the tokens.
std::string shard_bytes(const std::vector<std::uint16_t>& tokens, std::int32_t magic = 20240520,
                        std::int32_t version = 1, std::optional<std::int32_t> count = {}) {
  std::vector<std::int32_t> header(256, 0);
  header[0] = magic;
  header[1] = version;
  header[2] = count.value_or(static_cast<std::int32_t>(tokens.size()));
  std::string bytes(reinterpret_cast<const char*>(header.data()), 1024);  // little-endian host
  bytes.append(reinterpret_cast<const char*>(tokens.data()), tokens.size() * 2);
  return bytes;
}

std::vector<std::uint16_t> slice(const std::vector<std::uint16_t>& tokens, std::size_t first,
                                 std::size_t last) {
  return {tokens.begin() + static_cast<std::ptrdiff_t>(first),
          tokens.begin() + static_cast<std::ptrdiff_t>(last)};
}

/// Expects `load` to throw a FormatError whose message holds `says`.
template <class Load>
void expect_format_error(Load&& load, const std::string& says) {
  try {
    load();
    ADD_FAILURE() << "accepted; expected a FormatError saying: " << says;
  } catch (const resident::FormatError& error) {
    EXPECT_NE(std::string(error.what()).find(says), std::string::npos) << error.what();
  }
}

// 120,011 tokens written as two llm.c shards of 70,000 and 50,011 tokens: 3,750 windows of 32,
// more than `small_space()` holds, so that `load_token_file` streams them.
struct TwoShards {
  explicit TwoShards(const std::string& name)
      : tokens(resident::testing::token_stream<std::uint16_t>(120011)),
        a(name + "_a.bin"),
        b(name + "_b.bin") {
    resident::testing::write_file(a.path, shard_bytes(slice(tokens, 0, 70000)));
    resident::testing::write_file(b.path, shard_bytes(slice(tokens, 70000, 120011)));
  }
  std::vector<std::uint16_t> tokens;
  ScratchFile a, b;
};

TEST(LoadTokenFile, MalformedShardsAreRefusedWithTheFault) {
  const auto tokens = resident::testing::token_stream<std::uint16_t>(300);
  const ScratchFile file("bad.bin");
  const auto load = [&] {
    (void)resident::load_token_file<std::uint16_t>(HostSpace{}, DatasetOptions{},
                                                   TokenOptions{8, 0}, {file.path});
  };
  const auto refused = [&](const std::string& bytes, const std::string& says) {
    SCOPED_TRACE(says);
    resident::testing::write_file(file.path, bytes);
    expect_format_error(load, says);
  };
  refused(shard_bytes(tokens, 20240521), "the magic number is 20240521, expected 20240520");
  refused(shard_bytes(tokens, 20240520, 2), "the version is 2, expected 1");
  refused(shard_bytes(tokens, 20240520, 1, 301),
          "the header counts 301 tokens (602 bytes after the header), but the file has 600 "
          "bytes after it: it is truncated");
  refused(shard_bytes(tokens, 20240520, 1, 299),
          "counts 299 tokens (598 bytes after the header), but the file has 600 bytes after it: "
          "it has bytes the count leaves out");
  refused(shard_bytes(tokens, 20240520, 1, -5), "the token count is -5, negative");
  refused(shard_bytes(tokens).substr(0, 1000), "the file is 1000 bytes, shorter than the 1024");
  refused(shard_bytes(tokens).substr(0, 1500), "it is truncated");
  refused("", "the file is 0 bytes");
  // A well-formed shard loads, and as another token type it is refused.
  resident::testing::write_file(file.path, shard_bytes(tokens));
  EXPECT_NO_THROW(load());
  expect_format_error(
      [&] {
        (void)resident::load_token_file<std::uint32_t>(HostSpace{}, DatasetOptions{},
                                                       TokenOptions{8, 0}, {file.path});
      },
      "holds uint16 tokens, but they were asked for as u4; load it as std::uint16_t");
}

TEST(LoadTokenFile, AFifoIsRefusedBeforeAnythingBlocksAsATokenFile) {
  const ScratchFile fifo("fifo.bin");
  ASSERT_EQ(::mkfifo(fifo.path.c_str(), 0600), 0);
  const auto load = [](const std::string& path) {
    return [path] {
      (void)resident::load_token_file<std::uint16_t>(HostSpace{}, DatasetOptions{},
                                                     TokenOptions{8, 0}, {path});
    };
  };
  expect_format_error(load(fifo.path),
                      "not a regular file: a regular token file (an llm.c .bin shard or a 1-D "
                      ".npy file) was expected");
  expect_format_error(load(fifo.path + ".missing"),
                      "pass the path of a readable token file (an llm.c .bin shard");
  expect_format_error(load(""), "the path is empty; pass the path of a token file");
}

// A file that changes while the tokens are read into the dataset is refused as such, and the
// space is left as it was.
TEST(LoadTokenFile, AFileChangedWhileItPreloadsIsRefusedAndNothingIsKept) {
  const auto tokens = resident::testing::token_stream<std::uint16_t>(40000);
  const ScratchFile file("preload_change.bin");
  resident::testing::write_file(file.path, shard_bytes(tokens));
  DatasetOptions options;
  options.upload_block_bytes = 4096;
  bool changed = false;
  options.on_progress = [&](const resident::Progress&) {
    if (!changed) changed = ::truncate(file.path.c_str(), 30000) == 0;
    return true;
  };
  const auto space = HostSpace::with_budget(std::size_t{1} << 20);
  expect_format_error(
      [&] {
        (void)resident::load_token_file<std::uint16_t>(space, options, TokenOptions{8, 0},
                                                       {file.path});
      },
      "the file changed while the dataset was made from it: its size changed from 81024 to "
      "30000 bytes (it was truncated); keep a file unchanged while a dataset is made from it");
  EXPECT_TRUE(changed);
  EXPECT_EQ(space.used_bytes(), 0u);
}

TEST(LoadTokenFile, NpyFilesOfAnotherTypeRankOrByteOrderAreRefused) {
  const auto tokens = resident::testing::token_stream<std::uint16_t>(200);
  const resident::testing::TempNpy flat("tokens_flat", tokens, Shape{200});
  const resident::testing::TempNpy square("tokens_square", tokens, Shape{10, 20});
  const auto load = [](const std::string& path, auto type) {
    using T = decltype(type);
    return [path] {
      (void)resident::load_token_file<T>(HostSpace{}, DatasetOptions{}, TokenOptions{8, 0}, {path});
    };
  };
  EXPECT_NO_THROW(load(flat.path, std::uint16_t{})());
  expect_format_error(load(flat.path, std::int32_t{}),
                      "the file holds u2 elements, but the tokens were asked for as i4");
  expect_format_error(load(square.path, std::uint16_t{}),
                      "the array has shape (10, 20), but a token stream has one axis");
  // The same file, its header saying big-endian.
  std::FILE* in = std::fopen(flat.path.c_str(), "rb");
  ASSERT_NE(in, nullptr);
  std::string bytes(4096, '\0');
  bytes.resize(std::fread(bytes.data(), 1, bytes.size(), in));
  std::fclose(in);
  const std::size_t at = bytes.find("'<u2'");
  ASSERT_NE(at, std::string::npos);
  bytes[at + 1] = '>';
  const ScratchFile big("big.npy");
  resident::testing::write_file(big.path, bytes);
  expect_format_error(load(big.path, std::uint16_t{}), "the tokens are big-endian");
  EXPECT_THROW(load(flat.path + ".missing", std::uint16_t{})(), resident::FormatError);
  EXPECT_THROW((void)resident::load_token_file<std::uint16_t>(HostSpace{}, DatasetOptions{},
                                                              TokenOptions{8, 0}, {}),
               resident::InvalidArgument);
}

// Shards and .npy files end to end are one stream: a window may run from one file into the
// next, and the batches are those of the tokens given as one tensor.
TEST(LoadTokenFile, FilesEndToEndAreOneStream) {
  const auto tokens = resident::testing::token_stream<std::uint16_t>(1000);
  const ScratchFile first("first.bin"), third("third.bin");
  resident::testing::write_file(first.path, shard_bytes(slice(tokens, 0, 333)));
  const resident::testing::TempNpy second("tokens_second", slice(tokens, 333, 600), Shape{267});
  resident::testing::write_file(third.path, shard_bytes(slice(tokens, 600, 1000)));
  DatasetOptions options;
  options.batch_size = 6;
  options.remainder = Remainder::pad;
  const TokenOptions window{10, 0};
  auto corpus = resident::load_token_file<std::uint16_t>(HostSpace{}, options, window,
                                                         {first.path, second.path, third.path});
  ASSERT_FALSE(corpus.is_streaming());
  EXPECT_EQ(corpus.context(), 10u);
  EXPECT_EQ(corpus.num_rows(), 99u);
  // The stream, each token once, and the ring its padded last batch is gathered into, which
  // every epoch needs: 2 slots of x and y (6 windows of 10 tokens, as 4-byte ring elements:
  // 240 bytes, 256 aligned) and the row ids (6 x 8 bytes, 256 aligned).
  EXPECT_EQ(corpus.plan().needed_bytes, (99u * 10 + 1) * 2 + 2 * (256 + 256 + 256));
  resident::TokenDataset reference(HostSpace{}, options, window,
                                   HostTensor<const std::uint16_t>(tokens.data(), Shape{1000}));
  for (Shuffle shuffle : {Shuffle::none, Shuffle::samples}) {
    auto got = corpus.epoch({4, 1, shuffle});
    auto want = reference.epoch({4, 1, shuffle});
    const auto a = resident::testing::token_epoch(corpus, got, tokens);
    const auto b = resident::testing::token_epoch(reference, want, tokens);
    EXPECT_EQ(a.bytes, b.bytes);
    EXPECT_EQ(a.windows, b.windows);
  }
}

/// A space too small for the tokens, in which their stream fits.
HostSpace small_space() { return HostSpace::with_budget(std::size_t{40} << 10); }

// Token files larger than the space stream, with the batches of the preloaded stream, bit for
// bit, under every order, remainder and shard count, and both stream orders where they keep the
// epoch's order (whole-epoch order always; window order serves chunks in another order when it
// shuffles, so there each window is checked to come once).
TEST(LoadTokenFile, StreamingServesThePreloadedBatches) {
  // 3,750 windows: a rank of three holds 80 KB of them, twice the space.
  const TwoShards shards("stream");
  const auto& tokens = shards.tokens;
  const ScratchFile &a = shards.a, &b = shards.b;
  const TokenOptions window{32, 0};
  for (const auto& c : resident::testing::token_cases()) {
    if (c.stride != 0 || c.sharding == resident::Sharding::replicated) continue;
    for (StreamOrder order : {StreamOrder::whole_epoch, StreamOrder::window}) {
      SCOPED_TRACE(resident::testing::token_case_name(c) +
                   (order == StreamOrder::window ? " window order" : " whole-epoch order"));
      for (int rank = 0; rank < c.world; ++rank) {
        DatasetOptions options;
        options.batch_size = 16;
        options.remainder = c.remainder;
        options.shard = {rank, c.world, 0};
        options.streaming.order = order;
        options.streaming.chunk_batches = 3;
        auto streamed = resident::load_token_file<std::uint16_t>(small_space(), options, window,
                                                                 {a.path, b.path});
        ASSERT_TRUE(streamed.is_streaming()) << streamed.plan().reason;
        EXPECT_EQ(streamed.plan().recommendation, resident::Recommendation::stream);
        resident::TokenDataset preloaded(
            HostSpace{}, options, window,
            HostTensor<const std::uint16_t>(tokens.data(), Shape{tokens.size()}));
        auto got = streamed.epoch({9, 2, c.shuffle});
        auto want = preloaded.epoch({9, 2, c.shuffle});
        const auto s = resident::testing::token_epoch(streamed, got, tokens);
        const auto p = resident::testing::token_epoch(preloaded, want, tokens);
        if (::testing::Test::HasFatalFailure()) return;
        EXPECT_EQ(s.rows, p.rows);
        EXPECT_EQ(s.valid, p.valid);
        if (order == StreamOrder::whole_epoch || c.shuffle == Shuffle::none) {
          EXPECT_EQ(s.bytes, p.bytes);
        } else {
          // The same windows; under `drop` as many, each once (a window-order stream leaves
          // out the rows of its own batch grid, a preloaded sample shuffle those of its own).
          std::vector<std::size_t> x = s.windows, y = p.windows;
          std::sort(x.begin(), x.end());
          std::sort(y.begin(), y.end());
          if (c.remainder != Remainder::drop) {
            EXPECT_EQ(x, y);
          }
          EXPECT_EQ(x.size(), y.size());
          EXPECT_EQ(std::adjacent_find(x.begin(), x.end()), x.end());
        }
      }
    }
  }
}

// A state saved by the tokens preloaded resumes on them streamed (a smaller device after a
// restart), and back: both serve the same batches.
TEST(LoadTokenFile, AStateResumesWhicheverWayTheTokensAreHeld) {
  const TwoShards shards("resume");
  const auto& tokens = shards.tokens;
  const ScratchFile &a = shards.a, &b = shards.b;
  const TokenOptions window{32, 0};
  DatasetOptions options;
  options.batch_size = 16;
  options.remainder = Remainder::pad;
  options.streaming.order = StreamOrder::whole_epoch;
  options.streaming.chunk_batches = 3;
  auto streamed =
      resident::load_token_file<std::uint16_t>(small_space(), options, window, {a.path, b.path});
  ASSERT_TRUE(streamed.is_streaming()) << streamed.plan().reason;
  resident::TokenDataset preloaded(
      HostSpace{}, options, window,
      HostTensor<const std::uint16_t>(tokens.data(), Shape{tokens.size()}));
  const resident::EpochOptions epoch{9, 2, Shuffle::samples};
  const resident::testing::RunBytes whole =
      resident::testing::run_bytes(preloaded, preloaded.epoch(epoch));
  const resident::EpochState from_preloaded = preloaded.epoch(epoch).state(5);
  const resident::EpochState from_streamed = streamed.epoch(epoch).state(7);
  EXPECT_EQ(resident::testing::run_bytes(streamed, streamed.resume(epoch, from_preloaded)),
            resident::testing::RunBytes(whole.begin() + 5, whole.end()));
  EXPECT_EQ(resident::testing::run_bytes(preloaded, preloaded.resume(epoch, from_streamed)),
            resident::testing::RunBytes(whole.begin() + 7, whole.end()));
}

// In whole-epoch order one token file is read in place from its mapping (both fields read it,
// the targets one token on), and several are read once into memory the dataset owns; a file
// that changes while its mapping is read is refused at the next batch, never served.
TEST(LoadTokenFile, OneFileIsReadInPlaceAndRefusedWhenItChanges) {
  const TwoShards shards("mapped");
  const auto& tokens = shards.tokens;
  DatasetOptions options;
  options.batch_size = 16;
  options.streaming.order = StreamOrder::whole_epoch;
  options.streaming.chunk_batches = 3;
  const TokenOptions window{32, 0};
  auto both = resident::load_token_file<std::uint16_t>(small_space(), options, window,
                                                       {shards.a.path, shards.b.path});
  ASSERT_TRUE(both.is_streaming());
  EXPECT_EQ(both.streaming()->mapped_bytes(), 0u);
  EXPECT_EQ(both.streaming()->host_bytes(), 3750u * 32 * 2 + 2);
  const auto one_plan =
      resident::plan_token_file<std::uint16_t>(small_space(), options, window, {shards.a.path});
  auto one =
      resident::load_token_file<std::uint16_t>(small_space(), options, window, {shards.a.path});
  ASSERT_TRUE(one.is_streaming());
  EXPECT_EQ(one.streaming()->host_bytes(), 0u);
  EXPECT_EQ(one.streaming()->mapped_bytes(), 2187u * 32 * 2 + 2);
  EXPECT_EQ(one_plan.stream_mapped_bytes, one.streaming()->mapped_bytes());
  EXPECT_EQ(one_plan.stream_owned_bytes, 0u);
  const EpochOptions shuffled{3, 0, Shuffle::samples};
  const std::vector<std::uint16_t> first(tokens.begin(), tokens.begin() + 70000);
  {
    auto epoch = one.epoch(shuffled);
    (void)resident::testing::token_epoch(one, epoch, first);
  }
  // Rows gathered where they lie (shuffled) and chunks copied into slots (in order): both
  // epochs have a batch in hand when the file is rewritten in place, at its size, so that only
  // its modification time shows it.
  auto gathered = one.epoch(shuffled);
  auto copied = one.epoch();
  (void)gathered.batch(0);
  (void)copied.batch(0);
  const int fd = ::open(shards.a.path.c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  const std::string zeros(std::size_t{70000} * 2, '\0');
  ASSERT_EQ(::pwrite(fd, zeros.data(), zeros.size(), 1024), static_cast<::ssize_t>(zeros.size()));
  const ::timespec later[2] = {{0, UTIME_OMIT}, {::time(nullptr) + 10, 0}};
  ASSERT_EQ(::futimens(fd, later), 0);
  ::close(fd);
  for (auto* changed : {&gathered, &copied}) {
    expect_format_error(
        [&] {
          for (std::size_t k = 1; k < changed->size(); ++k) {
            const auto [x, y] = changed->batch(k);
            EXPECT_EQ(x.rows(), y.rows());
          }
        },
        "it was modified since it was opened");
  }
}

// batch(i), the unshuffled view, refuses a padded batch whichever way the tokens are held.
TEST(LoadTokenFile, APaddedBatchHasNoViewPreloadedOrStreamed) {
  const auto tokens = resident::testing::token_stream<std::uint16_t>(60001);
  const ScratchFile file("padded.bin");
  resident::testing::write_file(file.path, shard_bytes(tokens));
  DatasetOptions options;
  options.batch_size = 7;
  options.remainder = Remainder::pad;
  for (const HostSpace& space : {HostSpace{}, small_space()}) {
    auto corpus =
        resident::load_token_file<std::uint16_t>(space, options, TokenOptions{64, 0}, {file.path});
    SCOPED_TRACE(corpus.is_streaming() ? "streamed" : "preloaded");
    const std::size_t last = corpus.num_batches() - 1;
    EXPECT_NO_THROW((void)corpus.batch(last - 1));
    try {
      (void)corpus.batch(last);
      ADD_FAILURE() << "a padded batch has no view";
    } catch (const resident::InvalidArgument& error) {
      EXPECT_NE(std::string(error.what()).find("of its 7 rows are padding"), std::string::npos)
          << error.what();
    }
    EXPECT_THROW((void)corpus.batch(last + 1), std::out_of_range);
    auto epoch = corpus.epoch();
    const auto [x, y] = epoch.batch(last);  // an epoch gathers it
    EXPECT_EQ(x.rows(), 7u);
    EXPECT_EQ(y.valid_rows(), (60001u - 65) / 64 + 1 - last * 7);
  }
}

TEST(LoadTokenFile, AStreamNeedsWindowsThatTileIt) {
  const auto tokens = resident::testing::token_stream<std::uint16_t>(30000);
  const ScratchFile file("overlap.bin");
  resident::testing::write_file(file.path, shard_bytes(tokens));
  const TokenOptions window{32, 8};
  const auto plan = resident::plan_token_file<std::uint16_t>(small_space(), DatasetOptions{},
                                                             window, {file.path});
  EXPECT_FALSE(plan.fits);
  EXPECT_FALSE(plan.stream_fits);
  EXPECT_NE(plan.stream_refusal.find("TokenOptions::stride is 8 and the context 32"),
            std::string::npos)
      << plan.stream_refusal;
  EXPECT_THROW((void)resident::load_token_file<std::uint16_t>(small_space(), DatasetOptions{},
                                                              window, {file.path}),
               resident::InvalidArgument);
  // Where the tokens fit, they preload, overlapping windows and all.
  EXPECT_FALSE(
      resident::load_token_file<std::uint16_t>(HostSpace{}, DatasetOptions{}, window, {file.path})
          .is_streaming());
}

TEST(LoadTokenFile, AFileChangedWhileStreamingIsRefusedAtTheBatch) {
  const auto tokens = resident::testing::token_stream<std::uint16_t>(30000);
  const ScratchFile file("changing.bin");
  resident::testing::write_file(file.path, shard_bytes(tokens));
  DatasetOptions options;
  options.streaming.order = StreamOrder::window;
  options.streaming.chunk_batches = 1;
  options.batch_size = 16;
  auto corpus = resident::load_token_file<std::uint16_t>(small_space(), options,
                                                         TokenOptions{32, 0}, {file.path});
  ASSERT_TRUE(corpus.is_streaming());
  ::truncate(file.path.c_str(), 2048);
  EXPECT_THROW(
      {
        auto epoch = corpus.epoch();
        for (std::size_t k = 0; k < epoch.size(); ++k) (void)epoch.batch(k);
      },
      resident::FormatError);
}

TEST(PlanTokens, NeedsEachTokenOnceAndSaysWhenToPartition) {
  const auto tokens = resident::testing::token_stream<std::uint16_t>(100001);
  const HostTensor<const std::uint16_t> stream(tokens.data(), Shape{tokens.size()});
  const TokenOptions window{100, 0};
  DatasetOptions options;
  options.reserve_bytes = 0;
  const auto roomy = resident::plan(HostSpace{}, options, window, stream);
  EXPECT_TRUE(roomy.fits);
  EXPECT_EQ(roomy.recommendation, resident::Recommendation::preload);
  EXPECT_EQ(roomy.needed_bytes, 200002u);
  EXPECT_EQ(roomy.num_rows, 1000u);
  options.shard = {0, 4, 0};
  options.sharding = resident::Sharding::replicated;
  const auto tight = resident::plan(HostSpace::with_budget(100000), options, window, stream);
  EXPECT_FALSE(tight.fits);
  EXPECT_EQ(tight.replicated_rank_bytes, 200002u);
  EXPECT_EQ(tight.partitioned_rank_bytes, (250u * 100 + 1) * 2);
  EXPECT_EQ(tight.partition_world_size, 3u);
  EXPECT_EQ(tight.recommendation, resident::Recommendation::partition);
  EXPECT_TRUE(tight.compact_dtypes.empty());
}

}  // namespace
