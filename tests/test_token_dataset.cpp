// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// TokenDataset: windows of a token stream as (x, y) batches on every space that gathers here,
// against a reference written from the definition, under every order, remainder policy and
// shard count; views where the windows tile the stream; the refusals.

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <utility>
#include <vector>

#include "resident/convert.hpp"
#include "resident/host_space.hpp"
#include "resident/token_dataset.hpp"
#include "support/spaces.hpp"
#include "support/token_checks.hpp"

namespace {

using resident::DatasetOptions;
using resident::EpochOptions;
using resident::HostSpace;
using resident::HostTensor;
using resident::Remainder;
using resident::Shape;
using resident::Shuffle;
using resident::TokenDataset;
using resident::TokenOptions;
using resident::testing::read_back;

template <class Space>
class TokenWindows : public resident::testing::OverGatheringSpaces<Space> {};
TYPED_TEST_SUITE(TokenWindows, resident::testing::SpaceTypes, resident::testing::SpaceName);

TYPED_TEST(TokenWindows, EveryOrderRemainderAndShardServesEachWindowOnceWithYOneTokenOn) {
  resident::testing::check_token_orders<TypeParam, std::uint16_t>(this->space_);
}

TYPED_TEST(TokenWindows, WiderTokenTypesServeTheSameWindows) {
  resident::testing::check_token_reference_order<TypeParam, std::uint32_t>(this->space_);
  resident::testing::check_token_reference_order<TypeParam, std::int32_t>(this->space_);
}

TYPED_TEST(TokenWindows, SamplesFollowThePermutationAndNoneTheStream) {
  resident::testing::check_token_reference_order<TypeParam, std::uint16_t>(this->space_);
}

TYPED_TEST(TokenWindows, TilingWindowsAreViewsIntoTheStream) {
  const auto stream = resident::testing::token_stream<std::uint16_t>(1000);
  DatasetOptions options;
  options.batch_size = 8;
  TokenDataset ds(this->space_, options, TokenOptions{16, 0},
                  HostTensor<const std::uint16_t>(stream.data(), Shape{stream.size()}));
  ASSERT_EQ(ds.num_rows(), 62u);
  for (Shuffle shuffle : {Shuffle::none, Shuffle::batches}) {
    auto epoch = ds.epoch({1, 0, shuffle});
    EXPECT_FALSE(epoch.gathers());
    for (auto [x, y] : epoch) {
      EXPECT_GE(x.data(), ds.tokens().data());
      EXPECT_LE(x.data() + x.size(), ds.tokens().end());
      EXPECT_EQ(y.data(), x.data() + 1);  // the targets are the inputs one token on
    }
  }
  const auto [x, y] = ds.batch(2);
  EXPECT_EQ(x.data(), ds.tokens().data() + 2 * 8 * 16);
  EXPECT_EQ(y.data(), x.data() + 1);
  EXPECT_EQ(ds.ring_bytes(), 0u);  // no epoch so far has gathered
}

TYPED_TEST(TokenWindows, SameSeedAndEpochSameBatchesAnotherEpochAnotherOrder) {
  const auto stream = resident::testing::token_stream<std::uint16_t>(3000);
  DatasetOptions options;
  options.batch_size = 8;
  TokenDataset ds(this->space_, options, TokenOptions{16, 0},
                  HostTensor<const std::uint16_t>(stream.data(), Shape{stream.size()}));
  const auto record = [&](EpochOptions epoch_options) {
    auto epoch = ds.epoch(epoch_options);
    return resident::testing::token_epoch(ds, epoch, stream).windows;
  };
  for (Shuffle shuffle : {Shuffle::batches, Shuffle::samples}) {
    EXPECT_EQ(record({5, 1, shuffle}), record({5, 1, shuffle}));
    EXPECT_NE(record({5, 1, shuffle}), record({5, 2, shuffle}));
    EXPECT_NE(record({5, 1, shuffle}), record({6, 1, shuffle}));
  }
}

TYPED_TEST(TokenWindows, ConversionsApplyToEitherField) {
  const auto stream = resident::testing::token_stream<std::uint16_t>(700);
  DatasetOptions options;
  options.batch_size = 5;
  TokenDataset ds(this->space_, options, TokenOptions{12, 0},
                  HostTensor<const std::uint16_t>(stream.data(), Shape{stream.size()}));
  auto epoch = ds.epoch({3, 0, Shuffle::samples}, resident::convert<1>(resident::Normalize{2, 1}));
  for (std::size_t k = 0; k < epoch.size(); ++k) {
    const auto [x, y] = epoch.batch(k);
    const auto xs = read_back(ds.space(), ds.stream(), x);
    const auto ys = read_back(ds.space(), ds.stream(), y);
    const auto ids = read_back(ds.space(), ds.stream(), epoch.batch_indices(k));
    for (std::size_t r = 0; r < x.rows(); ++r)
      for (std::size_t t = 0; t < 12; ++t) {
        const std::size_t at = static_cast<std::size_t>(ids[r]) * 12 + t;
        ASSERT_EQ(xs[r * 12 + t], stream[at]);
        ASSERT_EQ(ys[r * 12 + t], static_cast<float>(stream[at + 1]) * 2 + 1);
      }
  }
}

TYPED_TEST(TokenWindows, PaddedBatchesAreGatheredAndHaveNoView) {
  const auto stream = resident::testing::token_stream<std::uint16_t>(100);  // 12 windows of 8
  DatasetOptions options;
  options.batch_size = 5;
  options.remainder = Remainder::pad;
  TokenDataset ds(this->space_, options, TokenOptions{8, 0},
                  HostTensor<const std::uint16_t>(stream.data(), Shape{stream.size()}));
  ASSERT_EQ(ds.num_batches(), 3u);
  auto epoch = ds.epoch();
  EXPECT_FALSE(epoch.gathers());
  const auto [x, y] = epoch.batch(2);
  EXPECT_EQ(x.rows(), 5u);
  EXPECT_EQ(x.valid_rows(), 2u);
  EXPECT_TRUE(x.data() < ds.tokens().data() || x.data() >= ds.tokens().end());  // in the ring
  EXPECT_NO_THROW(epoch.wait(2, ds.stream()));
  EXPECT_NO_THROW(epoch.release(2, ds.stream()));
  EXPECT_NO_THROW((void)ds.batch(1));
  try {
    (void)ds.batch(2);
    FAIL() << "a padded batch has no view";
  } catch (const resident::InvalidArgument& error) {
    EXPECT_NE(std::string(error.what()).find("3 of its 5 rows are padding"), std::string::npos)
        << error.what();
    EXPECT_NE(std::string(error.what()).find("ds.epoch().batch(2)"), std::string::npos);
  }
}

TEST(TokenDataset, RefusesWhatIsNotATokenStream) {
  const std::vector<std::uint16_t> tokens(64);
  const auto refuses = [&](TokenOptions window, Shape shape, const char* says) {
    try {
      TokenDataset ds(HostSpace{}, DatasetOptions{}, window,
                      HostTensor<const std::uint16_t>(tokens.data(), shape));
      ADD_FAILURE() << "accepted; expected: " << says;
    } catch (const resident::InvalidArgument& error) {
      EXPECT_NE(std::string(error.what()).find(says), std::string::npos) << error.what();
    }
  };
  refuses({8, 0}, Shape{8, 8}, "a token stream is a 1-D tensor, but the tensor given has shape");
  refuses({0, 0}, Shape{64}, "TokenOptions::context is 0");
  refuses({64, 0}, Shape{64}, "64 tokens, fewer than one window needs");
  refuses({SIZE_MAX, 0}, Shape{64},
          "64 tokens, fewer than one window needs: TokenOptions::context 18446744073709551615");
  EXPECT_NO_THROW(TokenDataset(HostSpace{}, DatasetOptions{}, TokenOptions{63, 0},
                               HostTensor<const std::uint16_t>(tokens.data(), Shape{64})));
}

TEST(TokenDataset, RefusesTokensThatDoNotFitBeforeAllocating) {
  const auto stream = resident::testing::token_stream<std::uint16_t>(10000);
  const auto space = HostSpace::with_budget(4096);
  try {
    TokenDataset ds(space, DatasetOptions{}, TokenOptions{16, 0},
                    HostTensor<const std::uint16_t>(stream.data(), Shape{stream.size()}));
    FAIL() << "20,000 bytes of tokens fit a budget of 4,096";
  } catch (const resident::CapacityError& error) {
    EXPECT_EQ(error.needed_bytes(), ((stream.size() - 17) / 16 * 16 + 17) * 2);
    EXPECT_NE(std::string(error.what()).find("load_token_file"), std::string::npos);
  }
  EXPECT_EQ(space.used_bytes(), 0u);
}

TEST(TokenDataset, APartitionedRankStoresOnlyTheTokensOfItsWindows) {
  const auto stream = resident::testing::token_stream<std::uint16_t>(1001);  // 62 windows of 16
  DatasetOptions options;
  options.batch_size = 4;
  options.shard = {1, 2, 0};
  TokenDataset ds(HostSpace{}, options, TokenOptions{16, 0},
                  HostTensor<const std::uint16_t>(stream.data(), Shape{stream.size()}));
  EXPECT_EQ(ds.num_rows(), 31u);
  EXPECT_EQ(ds.first_row(), 31u);
  EXPECT_EQ(ds.first_token(), 31u * 16);
  EXPECT_EQ(ds.num_tokens(), 31u * 16 + 1);
  EXPECT_EQ(ds.tokens().data()[0], stream[std::size_t{31} * 16]);
}

TEST(TokenDataset, EpochsOfAMovedFromDatasetThrowAndTheMovedToServes) {
  const auto stream = resident::testing::token_stream<std::uint16_t>(500);
  DatasetOptions options;
  options.batch_size = 4;
  TokenDataset ds(HostSpace{}, options, TokenOptions{8, 0},
                  HostTensor<const std::uint16_t>(stream.data(), Shape{stream.size()}));
  auto epoch = ds.epoch({0, 0, Shuffle::samples});
  TokenDataset moved = std::move(ds);
  EXPECT_THROW((void)epoch.batch(0), resident::Error);
  EXPECT_TRUE(ds.moved_from());  // NOLINT(bugprone-use-after-move): what is checked
  EXPECT_EQ(ds.num_tokens(), 0u);
  EXPECT_EQ(ds.context(), 8u);
  auto again = moved.epoch({0, 0, Shuffle::samples});
  const auto record = resident::testing::token_epoch(moved, again, stream);
  EXPECT_EQ(record.windows.size(), moved.num_rows());
}

}  // namespace
