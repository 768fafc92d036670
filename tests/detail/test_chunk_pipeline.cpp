// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// The chunk pipeline (detail/stream/chunk_pipeline.hpp) on its own: a reader that waits for a
// load runs pieces of it where readers help (and none where they do not), and a piece that
// throws on either thread surfaces at the reader's acquire and ends the pass.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "resident/detail/stream/chunk_pipeline.hpp"
#include "resident/error.hpp"

namespace {

using resident::FormatError;

// The producer's hand-off on its own: a reader that waits for a load runs pieces of it.
TEST(ChunkPipeline, AWaitingReaderRunsPiecesOfTheLoadItWaitsFor) {
  for (const bool readers_help : {true, false}) {
    constexpr std::size_t pieces = 64;
    std::vector<std::atomic<int>> runs(pieces);
    std::mutex mutex;
    std::set<std::thread::id> threads;
    resident::detail::ChunkPipeline pipeline;
    pipeline.start(0, 1, 1, readers_help, [&](std::size_t, resident::detail::SharedPieces& shared) {
      shared.run(pieces, [&](std::size_t index) {
        std::this_thread::sleep_for(std::chrono::microseconds(300));
        ++runs[index];
        const std::lock_guard<std::mutex> lock(mutex);
        threads.insert(std::this_thread::get_id());
      });
    });
    pipeline.acquire(0, 0, [](std::size_t) {});
    for (std::size_t index = 0; index < pieces; ++index) ASSERT_EQ(runs[index].load(), 1) << index;
    const bool reader_ran_pieces = threads.count(std::this_thread::get_id()) != 0;
    EXPECT_EQ(reader_ran_pieces, readers_help)
        << (readers_help ? "the reader waited 19 ms and copied nothing"
                         : "the reader copied though readers do not help");
    pipeline.stop();
  }
}

TEST(ChunkPipeline, APieceThatThrowsOnEitherThreadSurfacesAtTheReadersAcquire) {
  resident::detail::ChunkPipeline pipeline;
  pipeline.start(0, 2, 1, true, [](std::size_t, resident::detail::SharedPieces& shared) {
    shared.run(16, [](std::size_t index) {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      if (index == 15) throw FormatError("piece.npy", 0, "a piece failed");
    });
  });
  EXPECT_THROW(pipeline.acquire(0, 0, [](std::size_t) {}), FormatError);
  EXPECT_FALSE(pipeline.can_reach(1)) << "a failed pass delivers nothing more";
  pipeline.stop();
}

}  // namespace
