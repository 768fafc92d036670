// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// The copy team (detail/copy_workers.hpp) that runs a range's blocks on several threads: each
// block on its boundary and every element once, every thread claiming blocks whether the team
// spun or slept, a delayed thread holding back only the block it claimed, thousands of calls
// in a row, and a block's exception rethrown to the caller; and the team's size, which never
// exceeds the cores the process may run on nor the blocks a batch has.
#include <gtest/gtest.h>
#if defined(__linux__)
#include <sched.h>
#endif

#include <atomic>
#include <chrono>
#include <cstddef>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "resident/detail/copy_workers.hpp"

namespace {

using resident::detail::CopyWorkers;

TEST(CopyWorkers, BlocksCoverTheRangeExactlyOnce) {
  for (const unsigned threads : {1u, 2u, 5u}) {
    CopyWorkers workers(threads);
    for (const std::size_t block : {1, 7, 64}) {
      for (const std::size_t size : {0, 1, 2, 63, 64, 65, 1000, 100003}) {
        std::vector<std::atomic<int>> hits(size);
        std::atomic<bool> off_boundary{false};
        workers.for_each_block(0, size, block, [&](std::size_t first, std::size_t last) {
          // One call over the whole range where nothing is shared, else whole blocks.
          const bool whole = first == 0 && last == size;
          if (!whole && (first % block != 0 || (last - first != block && last != size)))
            off_boundary = true;
          for (std::size_t i = first; i < last; ++i) ++hits[i];
        });
        EXPECT_FALSE(off_boundary.load()) << threads << " threads, block " << block;
        for (std::size_t i = 0; i < size; ++i)
          ASSERT_EQ(hits[i].load(), 1) << "element " << i << " of " << size << ", " << threads
                                       << " threads, block " << block;
      }
    }
  }
}

TEST(CopyWorkers, EveryThreadClaimsBlocksWhetherTheTeamSpinsOrSlept) {
  CopyWorkers workers(2);
  ASSERT_EQ(workers.size(), 2u);
  // Blocks that take long enough for the worker to wake and claim some.
  const auto threads_of_one_call = [&workers] {
    std::mutex mutex;
    std::set<std::thread::id> ids;
    workers.for_each_block(0, 400, 1, [&](std::size_t, std::size_t) {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      const std::lock_guard<std::mutex> lock(mutex);
      ids.insert(std::this_thread::get_id());
    });
    return ids.size();
  };
  EXPECT_EQ(threads_of_one_call(), 2u);  // the worker was awake since its start, or asleep
  EXPECT_EQ(threads_of_one_call(), 2u);  // straight after: the worker still spins
  std::this_thread::sleep_for(CopyWorkers::spin_budget * 40);
  EXPECT_EQ(threads_of_one_call(), 2u);  // long after: the worker slept and was woken
}

// A worker the system holds up (here: it sleeps in every block it claims) costs the call only
// the block it holds: the caller claims all the others, rather than waiting for a fixed share.
TEST(CopyWorkers, ADelayedThreadHoldsBackOnlyTheBlockItClaimed) {
  CopyWorkers workers(3);
  const auto caller = std::this_thread::get_id();
  for (int round = 0; round < 3; ++round) {
    std::atomic<std::size_t> by_caller{0}, by_workers{0};
    workers.for_each_block(0, 2000, 1, [&](std::size_t, std::size_t) {
      if (std::this_thread::get_id() == caller) {
        ++by_caller;
        return;
      }
      ++by_workers;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    });
    EXPECT_EQ(by_caller + by_workers, 2000u);
    EXPECT_LE(by_workers.load(), 2u) << "round " << round;  // one block each at most
  }
}

TEST(CopyWorkers, ThousandsOfCallsInARowEachRunEveryBlockOnce) {
  CopyWorkers workers(3);
  std::atomic<std::size_t> covered{0};
  constexpr std::size_t calls = 20000;
  for (std::size_t call = 0; call < calls; ++call)
    workers.for_each_block(0, 300, 16,
                           [&](std::size_t first, std::size_t last) { covered += last - first; });
  EXPECT_EQ(covered.load(), calls * 300);
}

TEST(CopyWorkers, RethrowsWhatABlockThrew) {
  CopyWorkers workers(3);
  EXPECT_THROW(workers.for_each_block(0, 3000, 100,
                                      [](std::size_t first, std::size_t) {
                                        if (first > 0) throw std::logic_error("block failed");
                                      }),
               std::logic_error);
  int calls = 0;  // and the team still works afterwards
  workers.for_each_block(0, 10, 100, [&calls](std::size_t, std::size_t) { ++calls; });
  EXPECT_EQ(calls, 1);
}

TEST(TeamSize, NeverMoreThreadsThanABatchHasBlocks) {
  using resident::detail::gather_block_bytes;
  using resident::detail::gather_thread_count;
  EXPECT_EQ(gather_thread_count(2, gather_block_bytes / 2), 1u);  // one block: the asker alone
  EXPECT_EQ(gather_thread_count(0, std::size_t{100} << 10), 1u);  // under the threshold
  EXPECT_LE(gather_thread_count(1000, std::size_t{64} << 20), resident::detail::usable_cores());
  EXPECT_LE(gather_thread_count(1000, 3 * gather_block_bytes), 3u);
  EXPECT_GE(gather_thread_count(1000, std::size_t{64} << 20), 1u);
}

#if defined(__linux__)
// A process confined to one CPU (taskset, a cgroup's cpuset, a job scheduler's binding) runs
// its copies on one thread: more would only take turns on that CPU.
TEST(TeamSize, FollowsTheAffinityMask) {
  cpu_set_t kept;
  ASSERT_EQ(::sched_getaffinity(0, sizeof kept, &kept), 0);
  int first = 0;
  while (first < CPU_SETSIZE && !CPU_ISSET(first, &kept)) ++first;
  ASSERT_LT(first, CPU_SETSIZE);
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  ASSERT_EQ(::sched_setaffinity(0, sizeof one, &one), 0);
  const unsigned cores = resident::detail::usable_cores();
  const unsigned gather = resident::detail::gather_thread_count(0, std::size_t{64} << 20);
  const unsigned asked = resident::detail::gather_thread_count(8, std::size_t{64} << 20);
  const unsigned upload = resident::detail::upload_thread_count(0, std::size_t{1} << 30);
  ASSERT_EQ(::sched_setaffinity(0, sizeof kept, &kept), 0);
  EXPECT_EQ(cores, 1u);
  EXPECT_EQ(gather, 1u);
  EXPECT_EQ(asked, 1u);
  EXPECT_EQ(upload, 1u);
  EXPECT_EQ(resident::detail::usable_cores(), static_cast<unsigned>(CPU_COUNT(&kept)));
}
#endif

}  // namespace
