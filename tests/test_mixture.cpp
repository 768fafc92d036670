// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0

// Mixtures: a mixture of DeviceDatasets serves, epoch after epoch, the batches of a DeviceDataset
// made from copies of the rows its order names for that epoch, bit for bit, whatever its shares,
// shuffle, transforms, remainder and rank; each period served holds each source's exact share;
// the mixture outlives its sources; every refusal comes when a mixture is made.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "resident/detail/gather/mixed_rows.hpp"
#include "resident/device_dataset.hpp"
#include "resident/error.hpp"
#include "resident/mixture.hpp"
#include "resident/token_dataset.hpp"
#include "support/epoch_bytes.hpp"
#include "support/epoch_checks.hpp"
#include "support/labelled_rows.hpp"
#include "support/resume_checks.hpp"
#include "support/small_images.hpp"
#include "support/spaces.hpp"
#include "support/token_checks.hpp"

namespace {

using resident::DatasetOptions;
using resident::EpochOptions;
using resident::MixtureOptions;
using resident::MixturePhase;
using resident::MixtureShare;
using resident::Remainder;
using resident::Shuffle;

using resident::testing::SmallImages;

template <class Space>
using Dataset = resident::DeviceDataset<Space, std::uint8_t, std::int32_t>;
template <class Space>
using Mixture = resident::Mixture<Space, std::uint8_t, std::int32_t>;

// Three sources of different images: 40, 23 and 9 rows.
struct Sources {
  std::vector<SmallImages> images;
  Sources() {
    const SmallImages all(72);
    std::size_t first = 0;
    for (const std::size_t rows : {40, 23, 9}) {
      std::vector<std::size_t> taken(rows);
      std::iota(taken.begin(), taken.end(), first);
      images.push_back(all.take(taken));
      first += rows;
    }
  }
  // The rows `order` serves in an epoch of `options`, copied as a dataset cut into `parts`
  // holds them: row t of part p is position t * parts + p of the epoch.
  [[nodiscard]] SmallImages served(const resident::MixtureOrder& order, const EpochOptions& options,
                                   std::uint64_t parts) const {
    SmallImages rows(0);
    const resident::detail::PartInterleave interleave{parts, order.size() / parts,
                                                      order.size() % parts};
    for (std::uint64_t row = 0; row < order.size(); ++row) {
      const resident::MixtureSample sample = order.at(
          interleave.position(row), options.seed, options.epoch, options.shuffle != Shuffle::none);
      const SmallImages one = images[sample.source].take({static_cast<std::size_t>(sample.row)});
      rows.pixels.insert(rows.pixels.end(), one.pixels.begin(), one.pixels.end());
      rows.labels.push_back(one.labels.front());
    }
    return rows;
  }
};

template <class Space>
std::vector<Dataset<Space>> datasets_of(const Space& space, const Sources& sources) {
  std::vector<Dataset<Space>> datasets;
  for (const SmallImages& images : sources.images)
    datasets.emplace_back(space, resident::testing::epoch_options(16, Remainder::drop), images.x(),
                          images.y());
  return datasets;
}

template <class Space>
typename Mixture<Space>::sources_type refs(const std::vector<Dataset<Space>>& datasets) {
  return {datasets.begin(), datasets.end()};
}

enum class Transform { none, all };

template <class Dataset>
resident::testing::EpochBytes record(Dataset& ds, const EpochOptions& options,
                                     Transform transform) {
  if (transform == Transform::none) return resident::testing::record_bytes(ds, ds.epoch(options));
  return resident::testing::record_bytes(ds, resident::testing::every_transform_epoch(ds, options));
}

template <class Space>
using MixtureEpochs = resident::testing::OverGatheringSpaces<Space>;
TYPED_TEST_SUITE(MixtureEpochs, resident::testing::GatherSpaceTypes, resident::testing::SpaceName);

// The matrix: shares (weights in periods, repeats and counts, weights with a phase in the
// second epoch) x remainder x rank of 1 and 2 ranks x shuffle x transform (on one rank; on two,
// none), two epochs each: the batches of the dataset of the rows the order serves, copied, bit
// for bit.
TYPED_TEST(MixtureEpochs, EveryMixtureServesTheBatchesOfADatasetOfTheRowsItsOrderNames) {
  const Sources sources;
  const auto datasets = datasets_of(this->space_, sources);
  const std::vector<MixtureShare> weights{MixtureShare::weight(0.5), MixtureShare::weight(0.3),
                                          MixtureShare::weight(0.2)};
  struct Shares {
    const char* name;
    std::vector<MixtureShare> shares;
    MixtureOptions mix;
    std::vector<MixturePhase> phases;
  };
  const std::vector<Shares> shares{
      {"weights", weights, MixtureOptions{10, 75}, {}},
      {"repeats and counts",
       {MixtureShare::repeat(0.5), MixtureShare::repeat(2.5), MixtureShare::count(11)},
       {},
       {}},
      {"weights and a phase",
       weights,
       MixtureOptions{10, 75},
       {{1, 30, {MixtureShare::weight(0), MixtureShare::weight(1), MixtureShare::weight(3)}}}}};
  std::size_t cells = 0;
  for (const auto& [name, share, mix, phases] : shares) {
    for (const int world : {1, 2}) {
      for (int rank = 0; rank < world; ++rank) {
        for (const Remainder remainder : {Remainder::drop, Remainder::partial, Remainder::pad}) {
          DatasetOptions options = resident::testing::epoch_options(8, remainder);
          options.shard = {rank, world, 0};
          Mixture<TypeParam> mixture(refs(datasets), share, mix, options, phases);
          for (const Shuffle shuffle : {Shuffle::none, Shuffle::batches, Shuffle::samples}) {
            for (const Transform transform : {Transform::none, Transform::all}) {
              // A mixture's augmentations are keyed by position, a dataset's by row: they agree
              // on one rank (AugmentationsAreTheSameOnEveryWorldSize checks the others against
              // it).
              if (world > 1 && transform == Transform::all) continue;
              SCOPED_TRACE(std::string(name) + ", rank " + std::to_string(rank) + " of " +
                           std::to_string(world) + ", " + resident::remainder_name(remainder) +
                           ", " + resident::testing::shuffle_name(shuffle) +
                           (transform == Transform::all ? ", all transforms" : ""));
              for (const std::uint64_t epoch : {0, 1}) {
                const EpochOptions epoch_options{11, epoch, shuffle};
                const SmallImages served = sources.served(mixture.order(), epoch_options,
                                                          static_cast<std::uint64_t>(world));
                Dataset<TypeParam> reference(this->space_, options, served.x(), served.y());
                EpochOptions positions = epoch_options;
                if (shuffle == Shuffle::samples) positions.shuffle = Shuffle::none;
                const auto expected = record(reference, positions, transform);
                const auto got = record(mixture, epoch_options, transform);
                ASSERT_EQ(got.valid, expected.valid);
                ASSERT_TRUE(got == expected) << "the batches differ from the served rows'";
              }
              ++cells;
            }
          }
        }
      }
    }
  }
  EXPECT_EQ(cells, 3u * (3 * 3 * 2 + 2 * 3 * 3));
}

// Every period of the batches served holds each source's share exactly, under every shuffle.
TYPED_TEST(MixtureEpochs, EveryPeriodServedHoldsEachSourcesShare) {
  const Sources sources;
  const auto datasets = datasets_of(this->space_, sources);
  Mixture<TypeParam> mixture(
      refs(datasets),
      {MixtureShare::weight(0.25), MixtureShare::weight(0.5), MixtureShare::weight(0.25)},
      MixtureOptions{8, 80}, resident::testing::epoch_options(8, Remainder::drop));
  ASSERT_EQ(mixture.num_batches(), 10u);
  for (const Shuffle shuffle : {Shuffle::none, Shuffle::batches, Shuffle::samples}) {
    const EpochOptions options{3, 2, shuffle};
    auto epoch = mixture.epoch(options);
    for (std::size_t k = 0; k < epoch.size(); ++k) {
      std::vector<std::size_t> per_source(3);
      const auto rows =
          resident::testing::read_back(mixture.space(), mixture.stream(), epoch.batch_indices(k));
      for (const std::int64_t row : rows)
        ++per_source[mixture.sample(static_cast<std::size_t>(row), options).source];
      EXPECT_EQ(per_source, (std::vector<std::size_t>{2, 4, 2}))
          << resident::testing::shuffle_name(shuffle) << ", batch " << k;
    }
  }
}

// With a period of the global batch, every step of a sharded job holds each source's share,
// partitioned or replicated, on any world size.
TYPED_TEST(MixtureEpochs, EveryGlobalStepHoldsEachSourcesShareOnAnyWorld) {
  const Sources sources;
  const auto datasets = datasets_of(this->space_, sources);
  for (const resident::Sharding sharding :
       {resident::Sharding::partitioned, resident::Sharding::replicated}) {
    for (const int world : {1, 2, 3}) {
      const std::uint64_t global = std::uint64_t{4} * static_cast<std::uint64_t>(world);
      std::vector<Mixture<TypeParam>> ranks;
      ranks.reserve(static_cast<std::size_t>(world));
      for (int rank = 0; rank < world; ++rank) {
        DatasetOptions options = resident::testing::epoch_options(4, Remainder::drop);
        options.shard = {rank, world, 0};
        options.sharding = sharding;
        ranks.emplace_back(
            refs(datasets),
            std::vector<MixtureShare>{MixtureShare::weight(1), MixtureShare::weight(2),
                                      MixtureShare::weight(1)},
            MixtureOptions{global, 96}, options);
      }
      for (const Shuffle shuffle : {Shuffle::none, Shuffle::batches, Shuffle::samples}) {
        const EpochOptions options{3, 1, shuffle};
        std::vector<decltype(ranks[0].epoch(options))> epochs;
        epochs.reserve(ranks.size());
        for (auto& rank : ranks) epochs.push_back(rank.epoch(options));
        ASSERT_GT(epochs[0].size(), 0u);
        for (std::size_t k = 0; k < epochs[0].size(); ++k) {
          std::vector<std::uint64_t> per_source(3);
          for (std::size_t r = 0; r < ranks.size(); ++r) {
            const auto ids = resident::testing::read_back(ranks[r].space(), ranks[r].stream(),
                                                          epochs[r].batch_indices(k));
            for (const std::int64_t row : ids)
              ++per_source[ranks[r].sample(static_cast<std::size_t>(row), options).source];
          }
          EXPECT_EQ(per_source, (std::vector<std::uint64_t>{global / 4, global / 2, global / 4}))
              << resident::sharding_name(sharding) << ", world " << world << ", "
              << resident::testing::shuffle_name(shuffle) << ", step " << k;
        }
      }
    }
  }
}

// A mixed row's augmentation is keyed by its position of the epoch: the same pixels on any world
// size and sharding, as a dataset's rows have.
TYPED_TEST(MixtureEpochs, AugmentationsAreTheSameOnEveryWorldSize) {
  const Sources sources;
  const auto datasets = datasets_of(this->space_, sources);
  // Counts below the rows: each (source, row) comes once an epoch, and names its position.
  const std::vector<MixtureShare> shares{MixtureShare::count(20), MixtureShare::count(20),
                                         MixtureShare::count(8)};
  using Served = std::map<std::pair<std::size_t, std::uint64_t>, std::vector<float>>;
  const auto served = [&](int world, resident::Sharding sharding, Shuffle shuffle) {
    Served rows;
    for (int rank = 0; rank < world; ++rank) {
      DatasetOptions options = resident::testing::epoch_options(
          std::size_t{12} / static_cast<std::size_t>(world), Remainder::drop);
      options.shard = {rank, world, 0};
      options.sharding = sharding;
      Mixture<TypeParam> mixture(refs(datasets), shares, MixtureOptions{12, 0}, options);
      const EpochOptions epoch_options{5, 3, shuffle};
      auto epoch = resident::testing::every_transform_epoch(mixture, epoch_options);
      for (std::size_t k = 0; k < epoch.size(); ++k) {
        const auto [x, y] = epoch.batch(k);
        const auto pixels = resident::testing::read_back(mixture.space(), mixture.stream(), x);
        const auto ids =
            resident::testing::read_back(mixture.space(), mixture.stream(), epoch.batch_indices(k));
        const std::size_t width = pixels.size() / ids.size();
        for (std::size_t r = 0; r < ids.size(); ++r) {
          const resident::MixtureSample sample =
              mixture.sample(static_cast<std::size_t>(ids[r]), epoch_options);
          const auto first = pixels.begin() + static_cast<std::ptrdiff_t>(r * width);
          rows[{sample.source, sample.row}] =
              std::vector<float>(first, first + static_cast<std::ptrdiff_t>(width));
        }
      }
    }
    return rows;
  };
  for (const Shuffle shuffle : {Shuffle::none, Shuffle::batches, Shuffle::samples}) {
    const Served alone = served(1, resident::Sharding::partitioned, shuffle);
    ASSERT_EQ(alone.size(), 48u);
    for (const resident::Sharding sharding :
         {resident::Sharding::partitioned, resident::Sharding::replicated}) {
      for (const int world : {2, 3}) {
        EXPECT_TRUE(served(world, sharding, shuffle) == alone)
            << resident::sharding_name(sharding) << ", world " << world << ", "
            << resident::testing::shuffle_name(shuffle);
      }
    }
  }
}

// The mixture keeps its sources' memory, and a move empties it.
TYPED_TEST(MixtureEpochs, AMixtureOutlivesItsSourcesAndAMoveEmptiesIt) {
  const Sources sources;
  auto datasets =
      std::make_unique<std::vector<Dataset<TypeParam>>>(datasets_of(this->space_, sources));
  const EpochOptions shuffled{5, 1, Shuffle::samples};
  Mixture<TypeParam> mixture(
      refs(*datasets), {MixtureShare::count(20), MixtureShare::count(20), MixtureShare::count(20)},
      {}, resident::testing::epoch_options(8, Remainder::partial));
  const auto expected = record(mixture, shuffled, Transform::all);
  datasets.reset();
  EXPECT_TRUE(record(mixture, shuffled, Transform::all) == expected);
  // 3 sources' rows; the shares' first period, and 3 quotas and first slots; each field's 3
  // bases and pitches.
  EXPECT_EQ(mixture.bytes(), std::size_t{3 + 1 + 6 + 2 * 6} * sizeof(std::uint64_t));
  auto epoch = mixture.epoch(shuffled);
  Mixture<TypeParam> taken = std::move(mixture);
  // NOLINTBEGIN(bugprone-use-after-move): what a moved-from mixture answers
  EXPECT_TRUE(mixture.moved_from());
  EXPECT_EQ(mixture.num_rows(), 0u);
  EXPECT_EQ(mixture.bytes(), 0u);
  EXPECT_EQ(mixture.order().size(), 0u);
  // NOLINTEND(bugprone-use-after-move)
  EXPECT_THROW((void)epoch.batch(0), resident::Error);
  EXPECT_TRUE(record(taken, shuffled, Transform::all) == expected);
}

// An epoch of a mixture resumes from its state where it stopped, batch for batch; a state of a
// mixture of other shares is refused.
TYPED_TEST(MixtureEpochs, AnEpochResumesWhereItStoppedAndOtherSharesAreRefused) {
  const Sources sources;
  const auto datasets = datasets_of(this->space_, sources);
  const DatasetOptions options = resident::testing::epoch_options(8, Remainder::pad);
  Mixture<TypeParam> mixture(
      refs(datasets), {MixtureShare::weight(1), MixtureShare::weight(2), MixtureShare::weight(1)},
      MixtureOptions{16, 96}, options);
  for (const Shuffle shuffle : {Shuffle::none, Shuffle::batches, Shuffle::samples}) {
    SCOPED_TRACE(resident::testing::shuffle_name(shuffle));
    const EpochOptions epoch_options{9, 3, shuffle};
    resident::testing::expect_resumes_where_it_stopped(mixture, epoch_options, 5);
    auto epoch = mixture.epoch(epoch_options);
    (void)epoch.batch(0);
    const resident::EpochState state = epoch.state();
    Mixture<TypeParam> other(
        refs(datasets), {MixtureShare::weight(1), MixtureShare::weight(1), MixtureShare::weight(2)},
        MixtureOptions{16, 96}, options);
    EXPECT_THROW((void)other.resume(epoch_options, state), resident::InvalidArgument);
  }
}

// A state resumes under a mixture that declares a phase beginning where the state stands or
// later, serving that mixture's rest of the epoch; a phase beginning before it (under
// Shuffle::batches, anywhere in its epoch: its batches come in any order) is refused.
TYPED_TEST(MixtureEpochs, AStateResumesUnderPhasesThatBeginAfterItAndNoOthers) {
  const Sources sources;
  const auto datasets = datasets_of(this->space_, sources);
  const DatasetOptions options = resident::testing::epoch_options(8, Remainder::pad);
  const std::vector<MixtureShare> first{MixtureShare::weight(1), MixtureShare::weight(2),
                                        MixtureShare::weight(1)};
  const std::vector<MixtureShare> then{MixtureShare::weight(1), MixtureShare::weight(1),
                                       MixtureShare::weight(2)};
  const auto make = [&](const std::vector<MixturePhase>& phases) {
    return Mixture<TypeParam>(refs(datasets), first, MixtureOptions{16, 96}, options, phases);
  };
  auto plain = make({});
  for (const Shuffle shuffle : {Shuffle::none, Shuffle::batches, Shuffle::samples}) {
    SCOPED_TRACE(resident::testing::shuffle_name(shuffle));
    const EpochOptions epoch_options{9, 3, shuffle};
    auto epoch = plain.epoch(epoch_options);
    constexpr std::size_t stop = 5;  // batches taken: 40 positions
    for (std::size_t k = 0; k < stop; ++k) (void)epoch.batch(k);
    const resident::EpochState state = epoch.state();
    ASSERT_EQ(state.position(), 40U);
    const auto rest_of = [&](Mixture<TypeParam>& mixture) {
      auto whole = resident::testing::record_bytes(mixture, mixture.epoch(epoch_options));
      whole.bytes.erase(whole.bytes.begin(), whole.bytes.begin() + stop);
      whole.valid.erase(whole.valid.begin(), whole.valid.begin() + stop);
      return whole;
    };
    const auto resumes = [&](Mixture<TypeParam>& mixture) {
      EXPECT_TRUE(resident::testing::record_bytes(mixture, mixture.resume(epoch_options, state)) ==
                  rest_of(mixture));
    };
    const auto refused = [&](Mixture<TypeParam>& mixture) {
      try {
        (void)mixture.resume(epoch_options, state);
        ADD_FAILURE() << "resumed under a phase that changed what the state served";
      } catch (const resident::InvalidArgument& error) {
        EXPECT_NE(std::string(error.what())
                      .find("a phase of it that begins before the state's "
                            "position"),
                  std::string::npos)
            << error.what();
      }
    };
    auto next_epoch = make({{4, 0, then}});
    resumes(next_epoch);
    EXPECT_TRUE(rest_of(next_epoch) == rest_of(plain)) << "a later phase changed epoch 3";
    auto at_the_state = make({{3, 48, then}});
    auto before_it = make({{3, 32, then}});
    refused(before_it);
    if (shuffle == Shuffle::batches) {
      refused(at_the_state);
    } else {
      resumes(at_the_state);
      EXPECT_FALSE(rest_of(at_the_state) == rest_of(plain)) << "the phase changed nothing";
    }
  }
}

// The same (seed, epoch) gives the same batches on every space, read in any order.
TYPED_TEST(MixtureEpochs, BatchesAreTheHostsOnEverySpaceInAnyOrder) {
  const Sources sources;
  const std::vector<MixtureShare> shares{MixtureShare::weight(3), MixtureShare::weight(1),
                                         MixtureShare::weight(2)};
  const DatasetOptions options = resident::testing::epoch_options(8, Remainder::pad);
  const auto host_datasets = datasets_of(resident::HostSpace{}, sources);
  Mixture<resident::HostSpace> on_host(refs(host_datasets), shares, MixtureOptions{12, 0}, options);
  const auto datasets = datasets_of(this->space_, sources);
  Mixture<TypeParam> mixture(refs(datasets), shares, MixtureOptions{12, 0}, options);
  for (const Shuffle shuffle : {Shuffle::none, Shuffle::batches, Shuffle::samples}) {
    SCOPED_TRACE(resident::testing::shuffle_name(shuffle));
    const EpochOptions epoch_options{21, 4, shuffle};
    const auto expected = record(on_host, epoch_options, Transform::all);
    EXPECT_TRUE(record(mixture, epoch_options, Transform::all) == expected);
    // Batch k alone, last to first, is batch k of the epoch in turn.
    auto epoch = resident::testing::every_transform_epoch(mixture, epoch_options);
    auto in_turn = resident::testing::every_transform_epoch(on_host, epoch_options);
    for (std::size_t k = epoch.size(); k-- > 0;) {
      const auto [x, y] = epoch.batch(k);
      const auto [hx, hy] = in_turn.batch(k);
      EXPECT_EQ(resident::testing::read_back(mixture.space(), mixture.stream(), x),
                resident::testing::read_back(on_host.space(), on_host.stream(), hx))
          << "batch " << k;
      EXPECT_EQ(resident::testing::read_back(mixture.space(), mixture.stream(), y),
                resident::testing::read_back(on_host.space(), on_host.stream(), hy))
          << "batch " << k;
    }
  }
}

// Token datasets of one context and their own strides (tiling, overlapping by an odd number of
// tokens, leaving gaps) mix as their windows: every epoch serves the batches of a dataset of the
// (x, y) windows the order names, bit for bit, under every share, shuffle, remainder, rank and
// conversion of either field.
TYPED_TEST(MixtureEpochs, TokenMixturesServeTheWindowsTheirOrderNames) {
  using Tokens = resident::TokenDataset<TypeParam, std::uint16_t>;
  using TokenMixture = resident::Mixture<TypeParam, std::uint16_t, std::uint16_t>;
  constexpr std::size_t context = 8;
  const std::vector<std::pair<std::size_t, std::size_t>> streams{{300, 8}, {211, 5}, {97, 11}};
  std::vector<std::vector<std::uint16_t>> tokens;
  std::vector<Tokens> sources;
  for (const auto& [length, stride] : streams) {
    tokens.push_back(resident::testing::token_stream<std::uint16_t>(length));
    sources.emplace_back(this->space_, resident::testing::epoch_options(16, Remainder::drop),
                         resident::TokenOptions{context, stride},
                         resident::HostTensor<const std::uint16_t>(
                             tokens.back().data(), resident::Shape{tokens.back().size()}));
  }
  const typename TokenMixture::token_sources_type refs(sources.begin(), sources.end());
  const std::vector<std::pair<std::vector<MixtureShare>, MixtureOptions>> shares{
      {{MixtureShare::weight(0.5), MixtureShare::weight(0.3), MixtureShare::weight(0.2)},
       MixtureOptions{10, 70}},
      {{MixtureShare::repeat(0.5), MixtureShare::repeat(1.5), MixtureShare::count(3)}, {}}};
  std::size_t cells = 0;
  for (const auto& [share, mix] : shares) {
    for (const int world : {1, 2}) {
      for (int rank = 0; rank < world; ++rank) {
        for (const Remainder remainder : {Remainder::drop, Remainder::partial, Remainder::pad}) {
          DatasetOptions options = resident::testing::epoch_options(6, remainder);
          options.shard = {rank, world, 0};
          TokenMixture mixture(refs, share, mix, options);
          for (const Shuffle shuffle : {Shuffle::none, Shuffle::batches, Shuffle::samples}) {
            SCOPED_TRACE("rank " + std::to_string(rank) + " of " + std::to_string(world) + ", " +
                         resident::remainder_name(remainder) + ", " +
                         resident::testing::shuffle_name(shuffle));
            const EpochOptions epoch_options{7, 1, shuffle};
            std::vector<std::uint16_t> x, y;
            const resident::detail::PartInterleave interleave{static_cast<std::uint64_t>(world),
                                                              mixture.order().size() / world,
                                                              mixture.order().size() % world};
            for (std::uint64_t row = 0; row < mixture.order().size(); ++row) {
              const resident::MixtureSample sample =
                  mixture.order().at(interleave.position(row), epoch_options.seed,
                                     epoch_options.epoch, shuffle != Shuffle::none);
              const auto first =
                  tokens[sample.source].begin() +
                  static_cast<std::ptrdiff_t>(sample.row * streams[sample.source].second);
              x.insert(x.end(), first, first + context);
              y.insert(y.end(), first + 1, first + 1 + context);
            }
            const std::size_t rows = x.size() / context;
            resident::DeviceDataset<TypeParam, std::uint16_t, std::uint16_t> reference(
                this->space_, options,
                resident::HostTensor<const std::uint16_t>(x.data(), {rows, context}),
                resident::HostTensor<const std::uint16_t>(y.data(), {rows, context}));
            EpochOptions positions = epoch_options;
            if (shuffle == Shuffle::samples) positions.shuffle = Shuffle::none;
            EXPECT_TRUE(resident::testing::record_bytes(mixture, mixture.epoch(epoch_options)) ==
                        resident::testing::record_bytes(reference, reference.epoch(positions)));
            const auto cast = resident::convert<1>(resident::Cast<std::int32_t>{});
            const auto normalize = resident::convert<0>(resident::Normalize{0.5F, -1.0F});
            EXPECT_TRUE(resident::testing::record_bytes(
                            mixture, mixture.epoch(epoch_options, normalize, cast)) ==
                        resident::testing::record_bytes(
                            reference, reference.epoch(positions, normalize, cast)));
            ++cells;
          }
        }
      }
    }
  }
  EXPECT_EQ(cells, 2u * 3 * 3 * 3);
}

// Token windows are not images: an augmentation of a token mixture is refused when its epoch
// is made, as a token dataset's is when compiled.
TEST(MixtureRefusals, AugmentationsOfTokenWindowsAreRefusedWhenTheEpochIsMade) {
  const auto stream = resident::testing::token_stream<std::uint16_t>(200);
  const DatasetOptions options = resident::testing::epoch_options(4, Remainder::drop);
  const resident::TokenDataset<resident::HostSpace, std::uint16_t> tokens(
      resident::HostSpace{}, options, resident::TokenOptions{8, 0},
      resident::HostTensor<const std::uint16_t>(stream.data(), resident::Shape{stream.size()}));
  resident::Mixture<resident::HostSpace, std::uint16_t, std::uint16_t> mixture(
      {tokens, tokens}, {MixtureShare::weight(1), MixtureShare::weight(1)}, {}, options);
  const auto flip =
      resident::augment<0>(resident::ImageLayout::hwc(2, 4, 1), resident::RandomFlip{1.0});
  try {
    (void)mixture.epoch({1, 0, Shuffle::samples}, flip);
    ADD_FAILURE() << "token windows augmented";
  } catch (const resident::InvalidArgument& error) {
    EXPECT_NE(std::string(error.what()).find("token windows are not images"), std::string::npos)
        << error.what();
  }
  EXPECT_EQ(mixture.epoch({1, 0, Shuffle::samples}).size(), mixture.num_batches());
}

// Token datasets of another context are refused when the mixture is made, naming the source.
TEST(MixtureRefusals, TokenDatasetsOfAnotherContextAreRefused) {
  const auto stream = resident::testing::token_stream<std::uint16_t>(200);
  const resident::HostTensor<const std::uint16_t> all(stream.data(),
                                                      resident::Shape{stream.size()});
  const DatasetOptions options = resident::testing::epoch_options(4, Remainder::drop);
  const resident::TokenDataset<resident::HostSpace, std::uint16_t> eight(
      resident::HostSpace{}, options, resident::TokenOptions{8, 0}, all);
  const resident::TokenDataset<resident::HostSpace, std::uint16_t> nine(
      resident::HostSpace{}, options, resident::TokenOptions{9, 0}, all);
  try {
    resident::Mixture<resident::HostSpace, std::uint16_t, std::uint16_t> mixture(
        {eight, nine}, {MixtureShare::weight(1), MixtureShare::weight(1)}, {}, options);
    ADD_FAILURE() << "a context of 9 mixed with one of 8";
  } catch (const resident::InvalidArgument& error) {
    EXPECT_NE(std::string(error.what())
                  .find("field 0 of dataset 1 has rows of shape (9,), dataset 0's (8,)"),
              std::string::npos)
        << error.what();
  }
}

// A mixture's epoch resumes on other world sizes (DatasetOptions::parts): every row served once
// over the restarts, and the steps of the run that never stopped where the global batch stays.
TEST(MixtureResume, JobsResumeOnOtherWorldSizesServingEveryRowOnce) {
  using resident::testing::Phase;
  const resident::testing::LabelledRows data(24 * 9 + 7, 2);
  const resident::HostSpace space;
  const DatasetOptions stored = resident::testing::epoch_options(16, Remainder::drop);
  const std::size_t first_rows = 120, second_rows = data.labels.size() - first_rows;
  using Rows = resident::DeviceDataset<resident::HostSpace, float, std::int32_t>;
  const Rows first(space, stored,
                   resident::HostTensor<const float>(data.features.data(), {first_rows, 2}),
                   resident::HostTensor<const std::int32_t>(data.labels.data(), {first_rows}));
  const Rows second(
      space, stored,
      resident::HostTensor<const float>(data.features.data() + first_rows * 2, {second_rows, 2}),
      resident::HostTensor<const std::int32_t>(data.labels.data() + first_rows, {second_rows}));
  const auto make = [&](const DatasetOptions& rank_options) {
    return resident::Mixture<resident::HostSpace, float, std::int32_t>(
        {first, second}, {MixtureShare::repeat(1), MixtureShare::repeat(1)}, MixtureOptions{},
        rank_options);
  };
  const std::vector<std::pair<std::vector<int>, std::vector<std::size_t>>> transitions{
      {{8, 4}, {24, 48}}, {{8, 6}, {24, 24}}, {{2, 3, 4}, {24, 24, 24}}};
  for (const Shuffle shuffle : {Shuffle::none, Shuffle::batches, Shuffle::samples}) {
    for (const Remainder remainder : {Remainder::drop, Remainder::partial, Remainder::pad}) {
      for (const auto& [worlds, batches] : transitions) {
        DatasetOptions options = resident::testing::epoch_options(1, remainder);
        options.parts = 24;
        const EpochOptions epoch{11, 2, shuffle};
        std::vector<Phase> phases;
        for (std::size_t i = 0; i < worlds.size(); ++i)
          phases.push_back({worlds[i], batches[i], i + 1 < worlds.size() ? 1 : Phase{}.steps});
        const auto job = resident::testing::run_job(phases, options, epoch, make);
        const auto whole =
            resident::testing::run_job({{worlds[0], batches[0]}}, options, epoch, make);
        std::string what = std::string(resident::testing::shuffle_name(shuffle)) + ", " +
                           resident::remainder_name(remainder) + ", worlds";
        for (const int world : worlds) what += " " + std::to_string(world);
        for (std::int32_t row = 0; row < static_cast<std::int32_t>(data.labels.size()); ++row) {
          const auto found = job.served.find(row);
          const int times = found == job.served.end() ? 0 : found->second;
          if (remainder == Remainder::drop) {
            EXPECT_LE(times, 1) << what << ": row " << row;
          } else {
            EXPECT_EQ(times, 1) << what << ": row " << row;
          }
        }
        if (batches.back() * static_cast<std::size_t>(worlds.back()) ==
            batches.front() * static_cast<std::size_t>(worlds.front())) {
          EXPECT_EQ(job.steps, whole.steps) << what;
        }
      }
    }
  }
}

// Sources that cannot be mixed are refused when the mixture is made, naming the source.
TYPED_TEST(MixtureEpochs, SourcesThatDoNotMixAreRefusedWhenTheMixtureIsMade) {
  const Sources sources;
  auto datasets = datasets_of(this->space_, sources);
  const DatasetOptions options = resident::testing::epoch_options(8, Remainder::pad);
  const std::vector<MixtureShare> three(3, MixtureShare::weight(1));
  const auto refused = [&](const typename Mixture<TypeParam>::sources_type& mixed,
                           const std::vector<MixtureShare>& shares, const std::string& says) {
    try {
      Mixture<TypeParam> mixture(mixed, shares, {}, options);
      ADD_FAILURE() << "not refused; expected: " << says;
    } catch (const resident::InvalidArgument& error) {
      EXPECT_NE(std::string(error.what()).find(says), std::string::npos) << error.what();
    }
  };
  refused({}, {}, "given no datasets");
  refused(refs(datasets), {MixtureShare::weight(1)}, "one share per source");
  refused(refs(datasets),
          {MixtureShare::weight(-1), MixtureShare::weight(1), MixtureShare::weight(1)},
          "source 0 takes a weight");
  const SmallImages five(5);
  const resident::HostTensor<const std::uint8_t> flat(five.pixels.data(),
                                                      {5, SmallImages::pixels_per_row});
  const Dataset<TypeParam> other(this->space_, options, flat, five.y());  // rows of another shape
  refused({datasets[0], other}, {MixtureShare::weight(1), MixtureShare::weight(1)},
          "field 0 of dataset 1 has rows of shape");
  DatasetOptions rank_one = options;
  rank_one.shard = {1, 2, 0};
  const Dataset<TypeParam> part(this->space_, rank_one, sources.images[0].x(),
                                sources.images[0].y());
  refused({datasets[0], part}, {MixtureShare::weight(1), MixtureShare::weight(1)},
          "dataset 1 of the mixture was made for rank 1 of 2");
  Dataset<TypeParam> moved = std::move(datasets[2]);
  refused(refs(datasets), three, "dataset 2 of the mixture was moved from");
}

// Datasets of spaces that differ only by their budget are of two spaces; an epoch whose rows
// would overflow what the platform addresses is refused when made, saying so.
TEST(MixtureRefusals, AnotherSpaceAndAnEpochPastTheAddressesAreRefusedWhenMade) {
  const Sources sources;
  const DatasetOptions options = resident::testing::epoch_options(8, Remainder::pad);
  const Dataset<resident::HostSpace> whole(resident::HostSpace{}, options, sources.images[0].x(),
                                           sources.images[0].y());
  const Dataset<resident::HostSpace> budgeted(resident::HostSpace::with_budget(1 << 20), options,
                                              sources.images[1].x(), sources.images[1].y());
  const auto says = [&](auto&& make, const std::string& what) {
    try {
      make();
      ADD_FAILURE() << "not refused; expected: " << what;
    } catch (const resident::InvalidArgument& error) {
      EXPECT_NE(std::string(error.what()).find(what), std::string::npos) << error.what();
    }
  };
  says(
      [&] {
        Mixture<resident::HostSpace>(
            {whole, budgeted}, {MixtureShare::weight(1), MixtureShare::weight(1)}, {}, options);
      },
      "dataset 1 of the mixture lies in a space (host) that does not compare equal");
  says(
      [&] {
        Mixture<resident::HostSpace>({whole}, {MixtureShare::weight(1)},
                                     MixtureOptions{0, std::uint64_t{1} << 61}, options);
      },
      "is more than this platform addresses");
}

}  // namespace
