// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// The host gather (detail/gather/host_gather.hpp) called directly: every field of every
// position against a plain loop over the same order and the conversion's own operator, at every
// team size and for batches that wrap and are shorter than the team; and augmented pixels that
// do not depend on how many threads copy them.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <numeric>
#include <vector>

#include "resident/detail/copy_workers.hpp"
#include "resident/detail/gather/host_gather.hpp"
#include "resident/resident.hpp"
#include "support/augment_checks.hpp"
#include "support/float_bits.hpp"

namespace {

using resident::augment;
using resident::Augmentation;
using resident::Cutout;
using resident::Fill;
using resident::ImageLayout;
using resident::RandomCrop;
using resident::RandomFlip;
using resident::detail::AugmentKey;
using resident::testing::random_images;

// The host gather on its own: every field of every position, against a plain loop over the
// same order and the conversion's own operator, at every team size and for batches that wrap
// (the padding of Remainder::pad) and are shorter than the team.
TEST(HostGather, EveryFieldMatchesAPlainGatherAtEveryTeamSizeAndLayout) {
  constexpr std::size_t rows = 301;
  constexpr std::size_t pixels = 36;  // 3 channels of 12 (CHW), or 12 pixels of 3 (HWC)
  std::vector<std::uint8_t> images(rows * pixels);
  for (std::size_t i = 0; i < images.size(); ++i)
    images[i] = static_cast<std::uint8_t>(i * 2654435761u >> 13);
  std::vector<std::int32_t> labels(rows);
  std::iota(labels.begin(), labels.end(), 1000);
  const resident::Normalize layouts[] = {
      resident::Normalize{1.0f / 255, -0.5f},
      resident::Normalize::mean_std({0.49f, 0.48f, 0.45f}, {0.25f, 0.24f, 0.26f}, 12, 1.0f / 255),
      resident::Normalize::mean_std({0.49f, 0.48f, 0.45f}, {0.25f, 0.24f, 0.26f}, 1, 1.0f / 255)};
  for (const unsigned threads : {1u, 2u, 3u}) {
    resident::detail::CopyWorkers workers(threads);
    for (const resident::Normalize& normalize : layouts) {
      for (const std::size_t batch : {std::size_t{1}, std::size_t{2}, std::size_t{97}}) {
        // Positions from near the end, so that the batch wraps to the order's start.
        const resident::detail::RowOrder order{resident::Permutation(rows, 5, 2), rows,
                                               rows - batch / 2};
        std::vector<float> converted(batch * pixels);
        std::vector<std::int32_t> gathered(batch);
        std::vector<std::int64_t> indices(batch, -1);
        resident::detail::host_gather(
            order, batch, indices.data(), workers,
            resident::detail::GatherField{
                resident::detail::StoredRows<std::uint8_t>{images.data(), pixels}, converted.data(),
                pixels, normalize},
            resident::detail::GatherField{
                resident::detail::StoredRows<std::int32_t>{labels.data(), 1}, gathered.data(),
                std::size_t{1}, resident::NoConversion{}});
        for (std::size_t r = 0; r < batch; ++r) {
          const std::uint64_t row = order.row(r);
          ASSERT_EQ(indices[r], static_cast<std::int64_t>(row)) << r;
          ASSERT_EQ(gathered[r], labels[row]) << r;
          for (std::size_t e = 0; e < pixels; ++e) {
            const float expected = normalize(images[row * pixels + e], e);
            ASSERT_EQ(resident::testing::float_bits(converted[r * pixels + e]),
                      resident::testing::float_bits(expected))
                << "row " << r << " element " << e << ", " << threads << " threads, batch " << batch
                << ", " << normalize.channels() << " channels";
          }
        }
      }
    }
  }
}

// The same batch through host_gather with 1, 2 and 3 copy threads (granules of one row).
TEST(Augment, ThreadCountDoesNotChangeThePixels) {
  const ImageLayout layout = ImageLayout::chw(3, 16, 16);
  constexpr std::size_t n = 300;
  const auto images = random_images(n, layout.elements(), 8);
  const Augmentation augmentation =
      augment<0>(layout, RandomCrop{4, Fill::reflect}, RandomFlip{}, Cutout{6}).augmentation;
  const resident::detail::RowOrder order{resident::Permutation(n, 3, 1), n, 0};
  const AugmentKey key{3, 1, 100};
  std::vector<std::vector<std::uint8_t>> results;
  for (const std::size_t threads : {1U, 2U, 3U}) {
    std::vector<std::uint8_t> batch(n * layout.elements());
    std::vector<std::int64_t> indices(n);
    resident::detail::CopyWorkers workers(threads);
    const resident::NoConversion none;
    resident::detail::host_gather(
        order, n, indices.data(), workers,
        resident::detail::GatherField{
            resident::detail::StoredRows<std::uint8_t>{images.data(), layout.elements()},
            batch.data(), layout.elements(), none, &augmentation, key});
    results.push_back(batch);
  }
  EXPECT_EQ(results[0], results[1]);
  EXPECT_EQ(results[0], results[2]);
}

}  // namespace
