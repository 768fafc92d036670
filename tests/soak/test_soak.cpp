// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// Soak: a thousand epochs, as a long training job runs them, must leave the process exactly as
// the first one left it: the same heap bytes in use, the same bytes of the space, the same
// threads and file descriptors. Any per-epoch leak, however small, shows as growth here.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "resident/resident.hpp"
#include "soak/counting_new.hpp"
#include "support/labelled_rows.hpp"
#include "support/temp_npy.hpp"

namespace {

using resident::DatasetOptions;
using resident::HostSpace;
using resident::HostTensor;
using resident::Remainder;
using resident::Shuffle;
using Rows = resident::testing::LabelledRows;
using resident::testing::epoch_label_sum;

constexpr std::uint64_t kEpochs = 1000;
constexpr std::uint64_t kWarmUp = 3;

/// What the process holds, as far as a leak could change it.
struct Footprint {
  std::size_t heap_bytes;   // bytes held through operator new
  std::size_t space_bytes;  // bytes the dataset's space has handed out
  std::size_t threads;
  std::size_t descriptors;
  std::size_t resident_kib;  // VmRSS: printed, not compared (the allocator may keep pages)
};

std::size_t status_field(const std::string& key) {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind(key + ":", 0) == 0) return std::stoul(line.substr(key.size() + 1));
  return 0;
}

Footprint measure_once(const HostSpace& space) {
  Footprint now{};
  now.heap_bytes = resident::testing::heap_bytes_in_use();
  now.space_bytes = space.used_bytes();
  now.threads = status_field("Threads");
  now.descriptors = static_cast<std::size_t>(std::distance(
      std::filesystem::directory_iterator("/proc/self/fd"), std::filesystem::directory_iterator{}));
  now.resident_kib = status_field("VmRSS");
  return now;
}

/// The footprint, read twice: the first reading's streams and directory iterator leave the
/// standard library's lazily made state behind, which must not count as the soak's growth.
Footprint measure(const HostSpace& space) {
  (void)measure_once(space);
  return measure_once(space);
}

/// Expects `end` to hold what `start` held; the heap may differ by `heap_slack` bytes of work in
/// flight on another thread when the footprint was read (none where nothing runs).
void expect_no_growth(const Footprint& start, const Footprint& end, const std::string& what,
                      std::size_t heap_slack = 0) {
  std::cout << "[ soak     ] " << what << ": heap " << start.heap_bytes << " -> " << end.heap_bytes
            << " B, space " << start.space_bytes << " -> " << end.space_bytes << " B, threads "
            << start.threads << " -> " << end.threads << ", descriptors " << start.descriptors
            << " -> " << end.descriptors << ", VmRSS " << start.resident_kib << " -> "
            << end.resident_kib << " KiB\n";
  EXPECT_LE(end.heap_bytes, start.heap_bytes + heap_slack)
      << "heap grew over " << kEpochs << " epochs";
  EXPECT_GE(end.heap_bytes + heap_slack, start.heap_bytes);
  EXPECT_EQ(end.space_bytes, start.space_bytes);
  EXPECT_EQ(end.threads, start.threads);
  EXPECT_EQ(end.descriptors, start.descriptors);
}

DatasetOptions soak_options() {
  DatasetOptions options;
  options.batch_size = 128;
  options.remainder = Remainder::partial;  // every row in every epoch: the sum is exact
  options.reserve_bytes = 0;
  return options;
}

TEST(Soak, ThousandSampleShuffledEpochsOnTheHostLeaveNoTrace) {
  const Rows rows(8192, 32);  // 1 MiB of features, 64 batches of 16 KiB gathered per epoch
  const HostSpace space = HostSpace::with_budget(std::size_t{16} << 20);
  resident::DeviceDataset dataset(space, soak_options(), rows.x(), rows.y());
  const std::int64_t expected = rows.label_sum();

  // Warm-up: the first epochs make the ring and settle the allocator's own caches.
  for (std::uint64_t epoch = 0; epoch < kWarmUp; ++epoch)
    ASSERT_EQ(epoch_label_sum(dataset.epoch({11, epoch, Shuffle::samples})), expected);
  const Footprint start = measure(space);
  std::size_t wrong = 0;
  for (std::uint64_t epoch = kWarmUp; epoch < kWarmUp + kEpochs; ++epoch)
    if (epoch_label_sum(dataset.epoch({11, epoch, Shuffle::samples})) != expected) ++wrong;
  const Footprint end = measure(space);
  EXPECT_EQ(wrong, 0u) << "epochs that lost or repeated rows";
  expect_no_growth(start, end, std::to_string(kEpochs) + " Shuffle::samples epochs");
}

TEST(Soak, ThousandStreamingPassesFromAFileLeaveNoTrace) {
  const Rows rows(4096, 8);
  const resident::testing::TempNpy features("soak_x", rows.features, {4096, 8});
  const resident::testing::TempNpy labels("soak_y", rows.labels, {4096});
  DatasetOptions options = soak_options();
  options.streaming.chunk_batches = 4;
  options.streaming.chunk_slots = 3;
  options.streaming.prefetch_chunks = 1;
  const HostSpace space = HostSpace::with_budget(std::size_t{1} << 20);
  auto dataset = resident::load_streaming_dataset<HostSpace, float, std::int32_t>(
      space, options, features.path, labels.path);
  const std::int64_t expected = rows.label_sum();

  // Measured with the same pass state each time: a new plain pass started at batch 0 (a finished
  // pass's producer exits at its own pace). That pass's producer may be loading the next chunk
  // meanwhile, holding its list of copies: 1 KiB of slack covers it, while a leak of even two
  // bytes a pass would exceed it.
  const auto settled = [&] {
    (void)dataset.batch(0);
    return measure(space);
  };
  for (std::uint64_t epoch = 0; epoch < kWarmUp; ++epoch)
    ASSERT_EQ(epoch_label_sum(dataset.epoch({5, epoch, Shuffle::samples})), expected);
  const Footprint start = settled();
  std::size_t wrong = 0;
  for (std::uint64_t epoch = kWarmUp; epoch < kWarmUp + kEpochs; ++epoch)
    if (epoch_label_sum(dataset.epoch({5, epoch, Shuffle::samples})) != expected) ++wrong;
  const Footprint end = settled();
  EXPECT_EQ(wrong, 0u) << "passes that lost or repeated rows";
  expect_no_growth(start, end, std::to_string(kEpochs) + " streaming passes from .npy files", 1024);
}

}  // namespace
