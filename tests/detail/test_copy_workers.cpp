// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// The copy team (detail/copy_workers.hpp) that runs a range's slices on several threads: each
// slice on its granule and every element once, every thread taking its part whether the team
// spun or slept, thousands of calls in a row, and a slice's exception rethrown to the caller.
#include <gtest/gtest.h>

#include <atomic>
#include <cstddef>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "resident/detail/copy_workers.hpp"

namespace {

TEST(CopyWorkers, SlicesCoverTheRangeExactlyOnce) {
  for (const unsigned threads : {1u, 2u, 5u}) {
    resident::detail::CopyWorkers workers(threads);
    for (const std::size_t granule : {1, 7, 64}) {
      for (const std::size_t size : {0, 1, 2, 63, 64, 65, 1000, 100003}) {
        std::vector<std::atomic<int>> hits(size);
        workers.for_each_slice(
            0, size,
            [&hits, granule](std::size_t first, std::size_t last) {
              if (first % granule != 0) throw std::logic_error("a slice off its granule");
              for (std::size_t i = first; i < last; ++i) ++hits[i];
            },
            granule);
        for (std::size_t i = 0; i < size; ++i)
          ASSERT_EQ(hits[i].load(), 1) << "element " << i << " of " << size << ", " << threads
                                       << " threads, granule " << granule;
      }
    }
  }
}

TEST(CopyWorkers, EveryThreadTakesItsPartWhetherTheTeamSpinsOrSlept) {
  resident::detail::CopyWorkers workers(2);
  ASSERT_EQ(workers.size(), 2u);
  const auto threads_of_one_call = [&workers] {
    std::mutex mutex;
    std::set<std::thread::id> ids;
    workers.for_each_slice(0, 1000, [&](std::size_t, std::size_t) {
      const std::lock_guard<std::mutex> lock(mutex);
      ids.insert(std::this_thread::get_id());
    });
    return ids.size();
  };
  EXPECT_EQ(threads_of_one_call(), 2u);  // the worker was awake since its start, or asleep
  EXPECT_EQ(threads_of_one_call(), 2u);  // straight after: the worker still spins
  std::this_thread::sleep_for(resident::detail::CopyWorkers::spin_budget * 40);
  EXPECT_EQ(threads_of_one_call(), 2u);  // long after: the worker slept and was woken
}

TEST(CopyWorkers, ThousandsOfCallsInARowEachRunEveryPartOnce) {
  resident::detail::CopyWorkers workers(3);
  std::atomic<std::size_t> covered{0};
  constexpr std::size_t calls = 20000;
  for (std::size_t call = 0; call < calls; ++call)
    workers.for_each_slice(
        0, 300, [&](std::size_t first, std::size_t last) { covered += last - first; }, 1);
  EXPECT_EQ(covered.load(), calls * 300);
}

TEST(CopyWorkers, RethrowsWhatASliceThrew) {
  resident::detail::CopyWorkers workers(3);
  EXPECT_THROW(workers.for_each_slice(0, 3000,
                                      [](std::size_t first, std::size_t) {
                                        if (first > 0) throw std::logic_error("slice failed");
                                      }),
               std::logic_error);
  int calls = 0;  // and the team still works afterwards
  workers.for_each_slice(0, 10, [&calls](std::size_t, std::size_t) { ++calls; });
  EXPECT_GE(calls, 1);
}

}  // namespace
