// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "resident/error.hpp"
#include "resident/mixture_order.hpp"

namespace {

using resident::MixtureOptions;
using resident::MixtureOrder;
using resident::MixturePhase;
using resident::MixtureSample;
using resident::MixtureShare;

constexpr std::uint64_t seed = 17;

// Every sample of one epoch, in position order.
std::vector<MixtureSample> epoch_samples(const MixtureOrder& order, std::uint64_t epoch,
                                         bool shuffled) {
  std::vector<MixtureSample> samples;
  samples.reserve(order.size());
  for (std::uint64_t p = 0; p < order.size(); ++p)
    samples.push_back(order.at(p, seed, epoch, shuffled));
  return samples;
}

// How often each row of `source` comes in `samples`.
std::map<std::uint64_t, std::uint64_t> row_counts(const std::vector<MixtureSample>& samples,
                                                  std::size_t source) {
  std::map<std::uint64_t, std::uint64_t> counts;
  for (const MixtureSample& sample : samples)
    if (sample.source == source) ++counts[sample.row];
  return counts;
}

class MixtureShuffles : public ::testing::TestWithParam<bool> {};
INSTANTIATE_TEST_SUITE_P(Order, MixtureShuffles, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "shuffled" : "in_order"; });

TEST_P(MixtureShuffles, EveryPeriodHoldsEachSourcesLargestRemainderShare) {
  const MixtureOrder order({1000, 5000}, {MixtureShare::weight(0.25), MixtureShare::weight(0.75)},
                           MixtureOptions{400, 2000});
  ASSERT_EQ(order.period(), 400U);
  ASSERT_EQ(order.periods(), 5U);
  EXPECT_EQ(order.quota(0), 100U);
  EXPECT_EQ(order.quota(1), 300U);
  EXPECT_EQ(order.epoch_quota(1), 1500U);
  for (std::uint64_t epoch = 0; epoch < 3; ++epoch) {
    const std::vector<MixtureSample> samples = epoch_samples(order, epoch, GetParam());
    for (std::uint64_t period = 0; period < order.periods(); ++period) {
      std::uint64_t first = 0;
      for (std::uint64_t p = period * 400; p < (period + 1) * 400; ++p)
        first += samples[p].source == 0 ? 1 : 0;
      EXPECT_EQ(first, 100U) << "epoch " << epoch << ", period " << period;
    }
    // 500 samples of the first source's 1000 rows, 1500 of the second's 5000: none twice.
    EXPECT_EQ(row_counts(samples, 0).size(), 500U);
    EXPECT_EQ(row_counts(samples, 1).size(), 1500U);
  }
}

// Phases take their quotas from the period they begin at on, in every period after; a source's
// occurrences run on across a change, so that no row comes twice in a pass, and unshuffled its
// rows carry on from epoch to epoch through every phase.
TEST_P(MixtureShuffles, PhasesTakeTheirQuotasFromWhereTheyBeginAndPassesRunOn) {
  const std::vector<std::uint64_t> rows{300, 500};
  const MixtureOptions options{40, 400};
  const MixtureOrder plain(rows, {MixtureShare::weight(0.25), MixtureShare::weight(0.75)}, options);
  const MixtureOrder last(rows, {MixtureShare::weight(0.1), MixtureShare::weight(0.9)}, options);
  const MixtureOrder order(
      rows, {MixtureShare::weight(0.25), MixtureShare::weight(0.75)}, options,
      {MixturePhase{1, 120, {MixtureShare::weight(1), MixtureShare::weight(1)}},
       MixturePhase{2, 0, {MixtureShare::weight(0.1), MixtureShare::weight(0.9)}}});
  ASSERT_EQ(order.phases(), 3U);
  EXPECT_EQ(order.quota(0, 1), 20U);
  EXPECT_EQ(order.quota(0, 2), 4U);
  EXPECT_EQ(order.epoch_quota(0, 0), 100U);
  EXPECT_EQ(order.epoch_quota(0, 1), 3 * 10U + 7 * 20U);
  EXPECT_EQ(order.epoch_quota(1, 1), 3 * 30U + 7 * 20U);
  EXPECT_EQ(order.epoch_quota(0, 7), 40U);
  const bool shuffled = GetParam();
  std::vector<std::uint64_t> carried(rows.size());  // unshuffled: where each source goes on
  for (std::uint64_t epoch = 0; epoch < 4; ++epoch) {
    const std::vector<MixtureSample> samples = epoch_samples(order, epoch, shuffled);
    for (std::uint64_t period = 0; period < order.periods(); ++period) {
      const std::size_t phase = epoch == 0 || (epoch == 1 && period < 3) ? 0 : epoch == 1 ? 1 : 2;
      std::uint64_t first = 0;
      for (std::uint64_t p = period * 40; p < (period + 1) * 40; ++p)
        first += samples[p].source == 0 ? 1 : 0;
      EXPECT_EQ(first, order.quota(0, phase)) << "epoch " << epoch << ", period " << period;
    }
    for (std::size_t source = 0; source < rows.size(); ++source) {
      // Fewer samples than rows: one pass, no row twice.
      const auto counts = row_counts(samples, source);
      EXPECT_EQ(counts.size(), order.epoch_quota(source, epoch)) << "epoch " << epoch;
      if (shuffled) continue;
      std::uint64_t next = carried[source];
      for (const MixtureSample& sample : samples) {
        if (sample.source != source) continue;
        EXPECT_EQ(sample.row, next) << "epoch " << epoch << ", source " << source;
        next = (next + 1) % rows[source];
      }
      carried[source] = next;
    }
    // Before the first phase, the first shares' samples; after the last one began, with the
    // same keys, the last shares' (unshuffled, the rows carried on differ).
    for (std::uint64_t p = 0; p < order.size(); ++p) {
      if (epoch == 0 || (epoch == 1 && p < 120)) {
        EXPECT_EQ(samples[p], plain.at(p, seed, epoch, shuffled)) << epoch << " " << p;
      }
      if (epoch >= 2 && shuffled) {
        EXPECT_EQ(samples[p], last.at(p, seed, epoch, true)) << epoch << " " << p;
      }
    }
  }
}

// The host gather computes a group of positions together, their walks in lockstep lanes that
// refill as each ends: every sample is the one position's alone, whatever the group's size,
// the positions' order, the sources' sizes (down to the narrowest network) and the phases.
TEST_P(MixtureShuffles, PositionsComputedTogetherAreEachComputedAlone) {
  const bool shuffled = GetParam();
  const std::vector<MixtureOrder> orders{
      MixtureOrder({300, 500}, {MixtureShare::weight(0.25), MixtureShare::weight(0.75)},
                   MixtureOptions{40, 400},
                   {MixturePhase{1, 120, {MixtureShare::weight(1), MixtureShare::weight(1)}}}),
      MixtureOrder({1, 2, 5, 70},
                   {MixtureShare::repeat(3), MixtureShare::count(5), MixtureShare::repeat(2.5),
                    MixtureShare::count(30)},
                   MixtureOptions{0, 0}),
      MixtureOrder({12500, 37500}, {MixtureShare::weight(0.25), MixtureShare::weight(0.75)},
                   MixtureOptions{256, 0})};
  for (const MixtureOrder& order : orders) {
    const std::uint64_t* table = order.impl_table().data();
    for (std::uint64_t epoch : {std::uint64_t{0}, std::uint64_t{3}}) {
      const resident::detail::MixtureKey key = order.impl_key(seed, epoch, shuffled);
      for (std::size_t count : {0, 1, 3, 4, 5, 16, 17, 64}) {
        // Positions out of order, some twice, from the whole epoch.
        const auto position = [&](std::size_t i) {
          return (i * 7919 + count * 104729) % order.size();
        };
        std::vector<MixtureSample> samples(count, MixtureSample{99, 99});
        std::vector<int> served(count);
        resident::detail::mixture_samples(table, key, count, resident::detail::SameAddress{},
                                          position, [&](std::size_t i, const MixtureSample& s) {
                                            samples.at(i) = s;
                                            ++served.at(i);
                                          });
        for (std::size_t i = 0; i < count; ++i) {
          EXPECT_EQ(served[i], 1) << "position " << i << " of " << count;
          EXPECT_EQ(samples[i], order.at(position(i), seed, epoch, shuffled))
              << "order of " << order.size() << ", epoch " << epoch << ", " << i << " of " << count;
        }
      }
    }
  }
}

// A phase is refused when it would serve another epoch, begins inside a period or past the
// epoch, not after the phase before, or past what 64 bits count.
TEST(MixturePhases, PhasesThatCannotBeginThereAreRefused) {
  const std::vector<std::uint64_t> rows{30, 50};
  const std::vector<MixtureShare> weights{MixtureShare::weight(1), MixtureShare::weight(1)};
  const auto refused = [&](const std::vector<MixtureShare>& shares,
                           const std::vector<MixturePhase>& phases, const std::string& says,
                           const MixtureOptions& options = MixtureOptions{10, 80}) {
    try {
      const MixtureOrder order(rows, shares, options, phases);
      ADD_FAILURE() << "not refused; expected: " << says;
    } catch (const resident::InvalidArgument& error) {
      EXPECT_NE(std::string(error.what()).find(says), std::string::npos) << error.what();
    }
  };
  refused(weights, {{0, 15, weights}}, "phase 1: it begins at position 15, inside a period of 10");
  refused(weights, {{0, 80, weights}}, "phase 1: it begins at position 80, past the epoch of 80");
  refused(weights, {{0, 0, weights}},
          "phase 1: it begins at epoch 0, position 0, not after the mixture's first shares");
  refused(weights, {{2, 20, weights}, {2, 20, weights}},
          "phase 2: it begins at epoch 2, position 20, not after phase 1, which begins at epoch "
          "2, position 20");
  refused(weights, {{2, 20, weights}, {1, 70, weights}}, "phase 2: it begins at epoch 1");
  refused(weights, {{std::numeric_limits<std::uint64_t>::max() / 4, 0, weights}},
          "past 2^64 periods into the run");
  refused(weights, {{1, 0, {MixtureShare::weight(1)}}}, "phase 1: a mixture was given 2 sources");
  refused(weights, {{1, 0, {MixtureShare::weight(1), MixtureShare::weight(0.001)}}},
          "phase 1: source 1's weight of 0.001 gets no sample of a period of 10");
  refused(weights, {{1, 0, {MixtureShare::repeat(1), MixtureShare::repeat(1)}}},
          "phase 1: its shares are repeats or counts, the mixture's first shares weights");
  refused({MixtureShare::count(40), MixtureShare::count(40)}, {{1, 0, weights}},
          "phase 1: its shares are weights, the mixture's first shares repeats or counts",
          MixtureOptions{10, 0});
  const std::vector<MixtureShare> counts{MixtureShare::count(20), MixtureShare::count(20)};
  refused(counts, {{1, 0, {MixtureShare::count(30), MixtureShare::count(20)}}},
          "phase 1: its shares serve 50 samples an epoch, the mixture's first shares 40",
          MixtureOptions{10, 0});
  // The same counts in other proportions, from a later epoch: taken.
  const MixtureOrder taken(rows, {MixtureShare::count(20), MixtureShare::count(20)}, {},
                           {{3, 0, {MixtureShare::count(30), MixtureShare::count(10)}}});
  EXPECT_EQ(taken.epoch_quota(0, 2), 20U);
  EXPECT_EQ(taken.epoch_quota(0, 3), 30U);
  EXPECT_THROW((void)taken.quota(0, 2), std::out_of_range);
  EXPECT_THROW((void)taken.quota(2, 0), std::out_of_range);
  EXPECT_THROW((void)taken.epoch_quota(2, 0), std::out_of_range);
  EXPECT_THROW((void)MixtureOrder().epoch_quota(0, 3), std::out_of_range);
}

TEST_P(MixtureShuffles, ARepeatOfTwoAndAHalfServesEachRowTwiceOrThreeTimes) {
  const MixtureOrder order({10, 37}, {MixtureShare::repeat(2.5), MixtureShare::repeat(1)});
  ASSERT_EQ(order.size(), 25U + 37U);
  EXPECT_EQ(order.epoch_quota(0), 25U);
  for (std::uint64_t epoch = 0; epoch < 4; ++epoch) {
    const std::vector<MixtureSample> samples = epoch_samples(order, epoch, GetParam());
    const auto counts = row_counts(samples, 0);
    ASSERT_EQ(counts.size(), 10U) << "every row of the repeated source comes";
    std::uint64_t total = 0, thrice = 0;
    for (const auto& [row, count] : counts) {
      EXPECT_TRUE(count == 2 || count == 3) << "row " << row << " came " << count << " times";
      total += count;
      thrice += count == 3 ? 1 : 0;
    }
    EXPECT_EQ(total, 25U);
    EXPECT_EQ(thrice, 5U);
    const auto once = row_counts(samples, 1);
    EXPECT_EQ(once.size(), 37U);
    for (const auto& [row, count] : once) EXPECT_EQ(count, 1U) << "row " << row;
  }
}

TEST_P(MixtureShuffles, ADownsampledSourceServesOtherRowsEachEpochNoneTwice) {
  const MixtureOrder order({100, 40}, {MixtureShare::count(30), MixtureShare::count(40)});
  std::set<std::uint64_t> seen;
  for (std::uint64_t epoch = 0; epoch < 4; ++epoch) {
    const auto counts = row_counts(epoch_samples(order, epoch, GetParam()), 0);
    ASSERT_EQ(counts.size(), 30U) << "epoch " << epoch << " served a row twice";
    for (const auto& entry : counts) seen.insert(entry.first);
  }
  EXPECT_GT(seen.size(), 30U) << "every epoch served the same rows";
  if (!GetParam()) {
    EXPECT_EQ(seen.size(), 100U);  // in order: 4 x 30 rows run through all 100
  }
}

TEST_P(MixtureShuffles, ExtremeWeightsKeepTheirSharesWithoutOverflow) {
  const std::uint64_t period = std::uint64_t{1} << 40;
  const MixtureOrder order({std::uint64_t{1} << 62, 7},
                           {MixtureShare::weight(0.999), MixtureShare::weight(0.001)},
                           MixtureOptions{period, period});
  EXPECT_EQ(order.quota(0) + order.quota(1), period);
  EXPECT_NEAR(static_cast<double>(order.quota(1)) / static_cast<double>(period), 0.001, 1e-9);
  for (const std::uint64_t p : {std::uint64_t{0}, period / 2, period - 1}) {
    const MixtureSample sample = order.at(p, seed, 5, GetParam());
    EXPECT_LT(sample.row, order.rows(sample.source));
  }
  // A weight too small for any sample of a period is refused, not left out unsaid.
  EXPECT_THROW(MixtureOrder({1000, 1000}, {MixtureShare::weight(1e-300), MixtureShare::weight(1)}),
               resident::InvalidArgument);
}

TEST(MixtureOrder, EqualRemaindersGoToTheFirstSourcesWhateverTheWeightsScale) {
  for (const double scale : {1.0, 3.0, 0x1p-40, 0x1p40, 0x1p-1000}) {  // 1 : 3 exactly, each
    const MixtureOrder order(
        {100, 100, 100},
        {MixtureShare::weight(1 * scale), MixtureShare::weight(3 * scale), MixtureShare::weight(0)},
        MixtureOptions{10, 10});
    EXPECT_EQ(order.quota(0), 3U) << scale;  // 2.5 and 7.5: the first source takes the one left
    EXPECT_EQ(order.quota(1), 7U) << scale;
    EXPECT_EQ(order.quota(2), 0U) << scale;
  }
  // Many sources of uneven weights: the quotas sum to the period, each within one of its share.
  std::vector<std::uint64_t> rows;
  std::vector<MixtureShare> shares;
  for (std::uint64_t s = 0; s < 97; ++s) {
    rows.push_back(s + 1);
    shares.push_back(MixtureShare::weight(static_cast<double>(s * s % 13) + 1));
  }
  double total = 0;
  for (const MixtureShare& share : shares) total += share.value();
  const MixtureOrder order(rows, shares, MixtureOptions{1009, 1009});
  std::uint64_t sum = 0;
  for (std::size_t s = 0; s < rows.size(); ++s) {
    EXPECT_NEAR(static_cast<double>(order.quota(s)), 1009 * shares[s].value() / total, 1.0) << s;
    sum += order.quota(s);
  }
  EXPECT_EQ(sum, 1009U);
}

TEST(MixtureOrder, TheSameSeedAndEpochGiveTheSameSamplesAndAnotherEpochOthers) {
  const auto make = [] {
    return MixtureOrder(
        {50, 70, 3}, {MixtureShare::weight(2), MixtureShare::weight(3), MixtureShare::weight(0.5)},
        MixtureOptions{11, 0});
  };
  const MixtureOrder order = make();
  EXPECT_EQ(order.size(), 132U);      // 123 rows, in whole periods of 11
  const MixtureOrder again = make();  // as another process would make it
  for (std::uint64_t p = 0; p < order.size(); ++p)
    EXPECT_EQ(order.at(p, seed, 3, true), again.at(p, seed, 3, true));
  std::uint64_t differ = 0;
  for (std::uint64_t p = 0; p < order.size(); ++p)
    differ += order.at(p, seed, 3, true) != order.at(p, seed, 4, true) ? 1 : 0;
  EXPECT_GT(differ, order.size() / 2);
}

TEST(MixtureOrder, AUnshuffledOrderServesEachPeriodsSlotsInOrder) {
  const MixtureOrder order({8, 8}, {MixtureShare::count(4), MixtureShare::count(12)},
                           MixtureOptions{4, 0});
  ASSERT_EQ(order.quota(0), 1U);
  ASSERT_EQ(order.quota(1), 3U);
  const std::vector<MixtureSample> samples = epoch_samples(order, 0, false);
  const std::vector<MixtureSample> expected = {{0, 0}, {1, 0}, {1, 1}, {1, 2},
                                               {0, 1}, {1, 3}, {1, 4}, {1, 5}};
  for (std::size_t p = 0; p < expected.size(); ++p) EXPECT_EQ(samples[p], expected[p]) << p;
  EXPECT_EQ(order.at(0, seed, 1, false), (MixtureSample{0, 4}));  // carried on from epoch 0
}

TEST(MixtureOrder, APositionPastTheEpochIsOutOfRange) {
  const MixtureOrder order({5}, {MixtureShare::repeat(1)});
  EXPECT_EQ(order.at(4, seed, 0, true).source, 0U);
  EXPECT_THROW((void)order.at(5, seed, 0, true), std::out_of_range);
  EXPECT_THROW((void)MixtureOrder().at(0, seed, 0, false), std::out_of_range);
  EXPECT_EQ(MixtureOrder().size(), 0U);
}

// Every figure a user gives, swept over its edges: what is refused says why, and what is taken
// gives an epoch that adds up.
TEST(MixtureOrder, EdgesOfEveryFigureAreTakenOrRefusedWhenTheOrderIsMade) {
  const std::uint64_t max = resident::Permutation::max_size;
  const std::vector<std::uint64_t> sizes = {0,
                                            1,
                                            2,
                                            (1ULL << 32) - 1,
                                            1ULL << 32,
                                            (1ULL << 32) + 1,
                                            max,
                                            max + 1,
                                            std::numeric_limits<std::uint64_t>::max()};
  for (const std::uint64_t rows : sizes) {
    SCOPED_TRACE("rows " + std::to_string(rows));
    if (rows == 0 || rows > max) {
      EXPECT_THROW(MixtureOrder({rows}, {MixtureShare::weight(1)}), resident::InvalidArgument);
      continue;
    }
    const MixtureOrder order({rows, 1}, {MixtureShare::weight(1), MixtureShare::weight(1)},
                             MixtureOptions{2, 2});
    EXPECT_EQ(order.quota(0) + order.quota(1), 2U);
    EXPECT_LT(order.at(0, seed, 9, true).row, order.rows(order.at(0, seed, 9, true).source));
  }
  for (const std::uint64_t period : sizes) {
    SCOPED_TRACE("period " + std::to_string(period));
    const MixtureOptions options{period, 0};
    if (period > max) {
      EXPECT_THROW(MixtureOrder({3}, {MixtureShare::weight(1)}, options),
                   resident::InvalidArgument);
      continue;
    }
    const MixtureOrder order({3}, {MixtureShare::weight(1)}, options);
    EXPECT_EQ(order.period(), period == 0 ? 3 : period);
    EXPECT_EQ(order.periods(), period == 0 ? 1 : (3 + period - 1) / period);
    EXPECT_GE(order.size(), 3U) << "whole periods, at least the rows";
  }
  for (const std::uint64_t samples : sizes) {
    SCOPED_TRACE("epoch samples " + std::to_string(samples));
    const MixtureOptions options{0, samples};
    if (samples > max) {
      EXPECT_THROW(MixtureOrder({3}, {MixtureShare::weight(1)}, options),
                   resident::InvalidArgument);
      continue;
    }
    EXPECT_EQ(MixtureOrder({3}, {MixtureShare::weight(1)}, options).size(),
              samples == 0 ? 3 : samples);
    if (samples != 0) {
      EXPECT_THROW(MixtureOrder({3}, {MixtureShare::count(3)}, options), resident::InvalidArgument)
          << "counts fix the epoch";
    }
  }
  for (const std::uint64_t count : sizes) {
    SCOPED_TRACE("count " + std::to_string(count));
    if (count > max) {
      EXPECT_THROW(MixtureOrder({3}, {MixtureShare::count(count)}), resident::InvalidArgument);
      continue;
    }
    if (count == 0) {
      EXPECT_THROW(MixtureOrder({3}, {MixtureShare::count(0)}), resident::InvalidArgument);
      continue;
    }
    const MixtureOrder order({3, 2}, {MixtureShare::count(count), MixtureShare::count(0)});
    EXPECT_EQ(order.size(), count);
    EXPECT_EQ(order.epoch_quota(0), count);
    EXPECT_LT(order.at(count - 1, seed, 2, true).row, 3U);
  }
  // Beside a repeat or another count, a count is served exactly at any size a double cannot
  // hold, and the epoch is refused only past 2^62.
  std::vector<std::uint64_t> counts = sizes;
  counts.insert(counts.end(), {(1ULL << 53) + 1, (1ULL << 60) + 3, max - 100, max - 14});
  for (const std::uint64_t count : counts) {
    SCOPED_TRACE("count " + std::to_string(count) + " beside 14 samples");
    for (const MixtureShare& other : {MixtureShare::repeat(2), MixtureShare::count(14)}) {
      const auto made = [&] { return MixtureOrder({3, 7}, {MixtureShare::count(count), other}); };
      if (count > max - 14) {
        EXPECT_THROW((void)made(), resident::InvalidArgument);
        continue;
      }
      const MixtureOrder order = made();
      EXPECT_EQ(order.size(), count + 14);
      EXPECT_EQ(order.epoch_quota(0), count);
      EXPECT_EQ(order.epoch_quota(1), 14U);
    }
  }
}

TEST(MixtureOrder, BadSharesAreRefusedWhenTheOrderIsMadeNamingTheSource) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const auto refused = [](const std::vector<std::uint64_t>& rows,
                          const std::vector<MixtureShare>& shares, const std::string& says) {
    try {
      (void)MixtureOrder(rows, shares);
      ADD_FAILURE() << "not refused; expected: " << says;
    } catch (const resident::InvalidArgument& error) {
      EXPECT_NE(std::string(error.what()).find(says), std::string::npos) << error.what();
    }
  };
  refused({}, {}, "give at least one source");
  refused({3, 3}, {MixtureShare::weight(1)}, "one share per source");
  refused({3, 3}, {MixtureShare::weight(1), MixtureShare::repeat(1)},
          "source 1 takes a repeat and source 0 a weight");
  refused({3, 3}, {MixtureShare::count(1), MixtureShare::weight(1)},
          "source 1 takes a weight and source 0 a count");
  for (const double bad : {-1.0, -0.0001, nan, inf, -inf}) {
    refused({3, 3}, {MixtureShare::weight(1), MixtureShare::weight(bad)},
            "source 1 takes a weight");
    refused({3, 3}, {MixtureShare::repeat(bad), MixtureShare::repeat(1)},
            "source 0 takes a repeat");
  }
  refused({3, 3}, {MixtureShare::weight(0), MixtureShare::weight(0)}, "every source's weight is 0");
  refused({3, 3}, {MixtureShare::repeat(0), MixtureShare::count(0)}, "every source's repeat is 0");
  refused({3, 0}, {MixtureShare::weight(1), MixtureShare::weight(1)}, "source 1 has no rows");
  // Periods that serve the shares otherwise than asked.
  const auto refused_period = [](const std::vector<std::uint64_t>& rows,
                                 const std::vector<MixtureShare>& shares, std::uint64_t period,
                                 const std::string& says) {
    try {
      (void)MixtureOrder(rows, shares, MixtureOptions{period, 0});
      ADD_FAILURE() << "not refused; expected: " << says;
    } catch (const resident::InvalidArgument& error) {
      EXPECT_NE(std::string(error.what()).find(says), std::string::npos) << error.what();
    }
  };
  refused_period({10, 10}, {MixtureShare::repeat(2.5), MixtureShare::repeat(1)}, 100,
                 "source 0 takes 25 samples an epoch, but 1 periods of 100 serve it 71");
  refused_period({10, 10}, {MixtureShare::repeat(1), MixtureShare::repeat(1)}, 7,
                 "source 0 takes 10 samples an epoch");
  refused_period({3, 10}, {MixtureShare::count(3), MixtureShare::count(10)}, 4,
                 "source 0 takes 3 samples an epoch");
  refused_period({100, 5}, {MixtureShare::count(7), MixtureShare::repeat(3)}, 1,
                 "source 0 takes 7 samples an epoch");
  refused_period({10, 10}, {MixtureShare::weight(1), MixtureShare::weight(99)}, 10,
                 "source 0's weight of 1 gets no sample of a period of 10");
  // A tiny figure is named as it was given, and a repeat above 0 that rounds to no sample is
  // refused, as a weight is.
  refused({10, 10}, {MixtureShare::weight(1e-9), MixtureShare::weight(1)},
          "source 0's weight of 1e-09 gets no sample");
  refused({19, 10}, {MixtureShare::repeat(1e-300), MixtureShare::repeat(1)},
          "source 0's repeat of 1e-300 serves no sample an epoch of its 19 rows");
  // A period that divides the counts in their proportions is taken.
  const MixtureOrder whole({10, 10}, {MixtureShare::count(4), MixtureShare::count(12)},
                           MixtureOptions{8, 0});
  EXPECT_EQ(whole.periods(), 2U);
  EXPECT_EQ(whole.epoch_quota(0), 4U);
  refused({1ULL << 61, 1ULL << 61}, {MixtureShare::repeat(2), MixtureShare::repeat(1)},
          "past 2^62 samples");
  // A source of no rows and no share is taken, and never served.
  const MixtureOrder order({3, 0}, {MixtureShare::weight(1), MixtureShare::weight(0)});
  for (std::uint64_t p = 0; p < order.size(); ++p) EXPECT_EQ(order.at(p, seed, 0, true).source, 0U);
}

}  // namespace
