// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// Epoch checks shared by the host tests (g++) and the device tests (nvcc), so that both
// spaces are held to the same properties.

#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "resident/resident.hpp"
#include "support/spaces.hpp"

namespace resident::testing {

inline DatasetOptions epoch_options(std::size_t batch, Remainder remainder,
                                    std::size_t ring_depth = 2) {
  DatasetOptions options;
  options.batch_size = batch;
  options.remainder = remainder;
  options.reserve_bytes = 0;
  options.ring_depth = ring_depth;
  return options;
}

inline const char* shuffle_name(Shuffle shuffle) {
  return shuffle == Shuffle::none ? "none" : shuffle == Shuffle::batches ? "batches" : "samples";
}

/// The ids of `n` rows, 0 to n - 1: a row-id field (value = row).
inline std::vector<std::int64_t> row_ids(std::size_t n) {
  std::vector<std::int64_t> ids(n);
  std::iota(ids.begin(), ids.end(), std::int64_t{0});
  return ids;
}

/// The values of a row-id field (value = row) batch by batch over one epoch, read back to the
/// host, with the batch's valid rows.
struct EpochRecord {
  std::vector<std::vector<std::int64_t>> batches;
  std::vector<std::size_t> valid;
};

template <class Space>
EpochRecord record_epoch(DeviceDataset<Space, std::int64_t>& ds, const EpochOptions& options) {
  EpochRecord record;
  for (auto [ids] : ds.epoch(options)) {
    record.batches.push_back(read_back(ds.space(), ds.stream(), ids));
    record.valid.push_back(ids.valid_rows());
  }
  return record;
}

/// Every row once per epoch (the served ones under drop), batch and valid-row counts exact,
/// and padding taken from the start of the order; over a sweep of sizes and policies.
template <class Space>
void check_every_row_once(const Space& space, const std::vector<Shuffle>& shuffles) {
  for (const std::size_t n : {0, 1, 2, 7, 13, 64, 97, 100, 257}) {
    std::vector<std::int64_t> ids(n);
    std::iota(ids.begin(), ids.end(), std::int64_t{0});
    for (const std::size_t batch : {1, 7, 32, 300}) {
      for (const Remainder remainder : {Remainder::drop, Remainder::partial, Remainder::pad}) {
        DeviceDataset<Space, std::int64_t> ds(space, epoch_options(batch, remainder),
                                              HostTensor<const std::int64_t>(ids.data(), {n}));
        for (const Shuffle shuffle : shuffles) {
          SCOPED_TRACE("n " + std::to_string(n) + ", batch " + std::to_string(batch) + ", " +
                       remainder_name(remainder) + ", " + shuffle_name(shuffle));
          const EpochRecord record = record_epoch(ds, {7, 1, shuffle});
          const std::size_t full = n / batch;
          const std::size_t expected_batches =
              full + (remainder != Remainder::drop && n % batch != 0 ? 1 : 0);
          ASSERT_EQ(record.batches.size(), expected_batches);
          std::vector<int> seen(n, 0);
          std::vector<std::int64_t> order;  // the epoch's rows, position by position
          for (std::size_t k = 0; k < record.batches.size(); ++k) {
            const auto& values = record.batches[k];
            const std::size_t valid = record.valid[k];
            ASSERT_EQ(values.size(), remainder == Remainder::pad ? batch : valid);
            ASSERT_TRUE(valid == batch || valid == n % batch);
            for (std::size_t r = 0; r < valid; ++r) {
              ASSERT_LT(values[r], static_cast<std::int64_t>(n));
              ++seen[static_cast<std::size_t>(values[r])];
              order.push_back(values[r]);
            }
          }
          const std::size_t served = remainder == Remainder::drop ? full * batch : n;
          ASSERT_EQ(order.size(), served);
          for (std::size_t row = 0; row < n; ++row) ASSERT_LE(seen[row], 1) << "row " << row;
          if (shuffle != Shuffle::samples && remainder == Remainder::drop) {
            // Consecutive rows; a shuffled epoch starts them at a seeded offset, so that the
            // rows left out change from epoch to epoch.
            const std::size_t first =
                static_cast<std::size_t>(std::find(seen.begin(), seen.end(), 1) - seen.begin());
            if (shuffle == Shuffle::none && served != 0) {
              ASSERT_EQ(first, 0u);
            }
            ASSERT_LE(first + served, n);
            for (std::size_t row = first; row < first + served; ++row) ASSERT_EQ(seen[row], 1);
          }
          // Padding repeats the start of the order: the sample order under Shuffle::samples,
          // the stored order otherwise.
          for (std::size_t k = 0; k < record.batches.size(); ++k) {
            for (std::size_t r = record.valid[k]; r < record.batches[k].size(); ++r) {
              const std::size_t q = (r - record.valid[k]) % n;
              const std::int64_t expected =
                  shuffle == Shuffle::samples ? order[q] : static_cast<std::int64_t>(q);
              ASSERT_EQ(record.batches[k][r], expected) << "padding row " << r;
            }
          }
        }
      }
    }
  }
}

/// A gathered multi-field batch equals a reference gather computed from the permutation.
template <class Space>
void check_gather_matches_reference(const Space& space) {
  constexpr std::size_t n = 101, batch = 16;
  std::vector<std::uint8_t> pixels(n * 3);
  std::iota(pixels.begin(), pixels.end(), std::uint8_t{0});
  std::vector<float> features(n * 2);
  std::iota(features.begin(), features.end(), 0.5f);
  DeviceDataset<Space, std::uint8_t, float> ds(
      space, epoch_options(batch, Remainder::partial),
      HostTensor<const std::uint8_t>(pixels.data(), {n, 3}),
      HostTensor<const float>(features.data(), {n, 2}));
  auto epoch = ds.epoch({11, 4, Shuffle::samples});
  const Permutation order(n, 11, 4);
  for (std::size_t k = 0; k < epoch.size(); ++k) {
    const auto [p, f] = epoch.batch(k);
    const auto got_p = read_back(ds.space(), ds.stream(), p);
    const auto got_f = read_back(ds.space(), ds.stream(), f);
    const auto ids = read_back(ds.space(), ds.stream(), epoch.batch_indices(k));
    for (std::size_t r = 0; r < p.rows(); ++r) {
      const std::uint64_t row = order(k * batch + r);
      ASSERT_EQ(ids[r], static_cast<std::int64_t>(row));
      for (std::size_t e = 0; e < 3; ++e) ASSERT_EQ(got_p[r * 3 + e], pixels[row * 3 + e]);
      for (std::size_t e = 0; e < 2; ++e) ASSERT_EQ(got_f[r * 2 + e], features[row * 2 + e]);
    }
  }
}

/// uint8 storage converted to float while gathering equals the host reference bit for bit.
template <class Space>
void check_conversion_bitwise(const Space& space, Shuffle shuffle) {
  constexpr std::size_t n = 50, channels = 3, pixels_per_channel = 4;
  constexpr std::size_t row = channels * pixels_per_channel;
  std::vector<std::uint8_t> images(n * row);
  for (std::size_t i = 0; i < images.size(); ++i)
    images[i] = static_cast<std::uint8_t>((i * 37) % 256);
  std::vector<std::int32_t> labels(n);
  std::iota(labels.begin(), labels.end(), 0);
  DeviceDataset<Space, std::uint8_t, std::int32_t> ds(
      space, epoch_options(8, Remainder::pad),
      HostTensor<const std::uint8_t>(images.data(), {n, channels, pixels_per_channel}),
      HostTensor<const std::int32_t>(labels.data(), {n}));
  const auto normalize = Normalize::mean_std({0.49f, 0.48f, 0.45f}, {0.25f, 0.24f, 0.26f},
                                             pixels_per_channel, 1.0f / 255);
  auto epoch = ds.epoch({3, 9, shuffle}, convert<0>(normalize));
  for (std::size_t k = 0; k < epoch.size(); ++k) {
    const auto [x, y] = epoch.batch(k);
    static_assert(std::is_same_v<decltype(x), const BatchView<const float>>);
    const auto got = read_back(ds.space(), ds.stream(), x);
    const auto ids = read_back(ds.space(), ds.stream(), epoch.batch_indices(k));
    const auto got_labels = read_back(ds.space(), ds.stream(), y);
    for (std::size_t r = 0; r < x.rows(); ++r) {
      ASSERT_EQ(got_labels[r], labels[static_cast<std::size_t>(ids[r])]);
      for (std::size_t e = 0; e < row; ++e) {
        const float expected = normalize(images[static_cast<std::size_t>(ids[r]) * row + e], e);
        ASSERT_EQ(std::memcmp(&got[r * row + e], &expected, sizeof(float)), 0)
            << "batch " << k << " row " << r << " element " << e;
      }
    }
  }
}

/// The ring keeps a gathered view until `ring_depth` more batches are gathered, not longer.
template <class Space>
void check_ring_lifetime(const Space& space) {
  constexpr std::size_t n = 64, batch = 8;
  std::vector<std::int64_t> ids(n);
  std::iota(ids.begin(), ids.end(), std::int64_t{0});
  DeviceDataset<Space, std::int64_t> ds(space, epoch_options(batch, Remainder::drop, 3),
                                        HostTensor<const std::int64_t>(ids.data(), {n}));
  auto epoch = ds.epoch({5, 0, Shuffle::samples});
  const auto [first] = epoch.batch(0);
  const auto first_values = read_back(ds.space(), ds.stream(), first);
  (void)epoch.batch(1);
  (void)epoch.batch(2);
  EXPECT_EQ(read_back(ds.space(), ds.stream(), first), first_values);  // still batch 0
  const auto [fourth] = epoch.batch(3);                                // same slot as batch 0
  EXPECT_EQ(fourth.data(), first.data());
  EXPECT_NE(read_back(ds.space(), ds.stream(), first), first_values);
}

/// `wait(k, stream)` and `release(k, stream)`: no-ops where there is nothing to order (a
/// zero-copy batch), refused with a message naming the batch where a gathering epoch does not
/// hold it (not asked for yet, replaced, or the ring taken by a newer epoch), and the same
/// batches afterwards as without them. The consumer is the dataset's own stream, which every
/// space has.
template <class Space>
void check_wait_and_release(const Space& space) {
  std::vector<std::int64_t> ids(64);
  std::iota(ids.begin(), ids.end(), std::int64_t{0});
  DeviceDataset<Space, std::int64_t> ds(space, epoch_options(16, Remainder::drop, 2),
                                        HostTensor<const std::int64_t>(ids.data(), {64}));
  const auto consumer = ds.stream();
  auto plain = ds.epoch({0, 0, Shuffle::batches});
  for (std::size_t k = 0; k < plain.size(); ++k) {
    EXPECT_NO_THROW(plain.wait(k, consumer)) << "zero-copy batch " << k;
    EXPECT_NO_THROW(plain.release(k, consumer)) << "zero-copy batch " << k;
  }
  EXPECT_THROW(plain.wait(plain.size(), consumer), std::out_of_range);

  auto fresh = ds.epoch({3, 1, Shuffle::samples});
  const auto message_of = [&](auto&& call) {
    try {
      call();
    } catch (const Error& error) {
      return std::string(error.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message_of([&] { fresh.wait(0, consumer); }).find("nothing gathered into its slot"),
            std::string::npos);
  const EpochRecord expected = record_epoch(ds, {3, 1, Shuffle::samples});
  auto gathered = ds.epoch({3, 1, Shuffle::samples});
  for (std::size_t k = 0; k < gathered.size(); ++k) {
    const auto [view] = gathered.batch(k);
    gathered.wait(k, consumer);
    EXPECT_EQ(read_back(ds.space(), consumer, view), expected.batches[k]) << "batch " << k;
    gathered.release(k, consumer);
  }
  // Batch 0's slot now holds batch 2 (ring depth 2).
  const std::string replaced = message_of([&] { gathered.release(0, consumer); });
  EXPECT_NE(replaced.find("release(0, stream)"), std::string::npos) << replaced;
  EXPECT_NE(replaced.find("its slot holds batch 2"), std::string::npos) << replaced;
  // A newer epoch gathers into a ring of its own: the older one's batch 3 is still there.
  auto newer = ds.epoch({3, 2, Shuffle::samples});
  (void)newer.batch(3);
  EXPECT_NO_THROW(gathered.wait(3, consumer));
  EXPECT_NO_THROW(newer.wait(3, consumer));
}

/// Options of rank `rank` of `world` (local rank = rank).
inline DatasetOptions sharded(std::size_t batch, Remainder remainder, Sharding sharding, int rank,
                              int world) {
  DatasetOptions options = epoch_options(batch, remainder);
  options.shard = Shard{rank, world, rank};
  options.sharding = sharding;
  return options;
}

// The valid rows of all ranks' epochs together: every row once (the served ones under drop);
// each rank's batches have the same sizes; padding rows are rows of the data.
template <class Space>
void check_ranks_cover_the_epoch(const Space& space, const std::vector<Shuffle>& shuffles) {
  for (const std::size_t n : {0, 1, 5, 13, 100, 257}) {
    std::vector<std::int64_t> ids(n);
    std::iota(ids.begin(), ids.end(), std::int64_t{0});
    for (const int world : {1, 2, 3, 8}) {
      for (const std::size_t batch : {1, 4, 32}) {
        for (const Remainder remainder : {Remainder::drop, Remainder::partial, Remainder::pad}) {
          for (const Sharding sharding : {Sharding::partitioned, Sharding::replicated}) {
            std::vector<DeviceDataset<Space, std::int64_t>> ranks;
            for (int rank = 0; rank < world; ++rank)
              ranks.emplace_back(space, sharded(batch, remainder, sharding, rank, world),
                                 HostTensor<const std::int64_t>(ids.data(), {n}));
            for (const Shuffle shuffle : shuffles) {
              SCOPED_TRACE("n " + std::to_string(n) + ", world " + std::to_string(world) +
                           ", batch " + std::to_string(batch) + ", " + remainder_name(remainder) +
                           ", " + sharding_name(sharding) + ", " + shuffle_name(shuffle));
              std::vector<int> seen(n, 0);
              std::size_t served = 0;
              std::vector<EpochRecord> records;
              for (auto& ds : ranks) records.push_back(record_epoch(ds, {3, 2, shuffle}));
              for (std::size_t rank = 0; rank < ranks.size(); ++rank) {
                const EpochRecord& record = records[rank];
                ASSERT_EQ(record.batches.size(), records[0].batches.size());
                const auto first = static_cast<std::int64_t>(ranks[rank].first_row());
                for (std::size_t k = 0; k < record.batches.size(); ++k) {
                  ASSERT_EQ(record.batches[k].size(), records[0].batches[k].size());
                  for (std::size_t r = 0; r < record.batches[k].size(); ++r) {
                    const std::int64_t row = record.batches[k][r];
                    ASSERT_TRUE(row >= 0 && row < static_cast<std::int64_t>(n));
                    if (r >= record.valid[k]) continue;
                    if (sharding == Sharding::partitioned) {  // a rank serves only its part
                      ASSERT_GE(row, first);
                      ASSERT_LT(row, first + static_cast<std::int64_t>(ranks[rank].num_rows()));
                    }
                    ++seen[static_cast<std::size_t>(row)];
                    ++served;
                  }
                }
              }
              for (std::size_t row = 0; row < n; ++row) ASSERT_LE(seen[row], 1) << "row " << row;
              const std::size_t rounds = ranks[0].num_batches();
              ASSERT_EQ(served, remainder == Remainder::drop
                                    ? rounds * batch * static_cast<std::size_t>(world)
                                    : n);
            }
          }
        }
      }
    }
  }
}

}  // namespace resident::testing
