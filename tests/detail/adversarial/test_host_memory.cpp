// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// Streaming-store copies (detail/host_memory.hpp): host copies around the size from which they
// bypass the caches, at every misalignment of source and target, equal memcpy and write nothing
// outside the target; an upload of large, oddly sized fields reads back byte for byte.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "resident/detail/host_memory.hpp"
#include "resident/resident.hpp"
#include "support/batch_options.hpp"
#include "support/mixed_values.hpp"

namespace {

using resident::DatasetOptions;
using resident::DeviceDataset;
using resident::HostSpace;
using resident::HostTensor;
using resident::Remainder;
using resident::testing::batch_options;
using resident::testing::filled;
using resident::testing::mix;

TEST(StreamingStores, HostCopiesEqualMemcpyAroundTheThresholdAtEveryMisalignment) {
  constexpr std::size_t threshold = resident::detail::streaming_store_threshold;
  std::vector<unsigned char> source(threshold * 2 + 256);
  for (std::size_t i = 0; i < source.size(); ++i)
    source[i] = static_cast<unsigned char>(mix(i, 0, 9));
  std::vector<unsigned char> target(source.size() + 256);
  for (const std::size_t bytes :
       {threshold - 64, threshold - 1, threshold, threshold + 1, threshold + 15, threshold + 63,
        threshold + 64, threshold + 65, threshold * 2 - 17}) {
    for (std::size_t to_offset = 0; to_offset < 64; to_offset += 5) {
      for (const std::size_t from_offset : {0, 1, 8, 15, 17, 63}) {
        std::fill(target.begin(), target.end(), 0x5A);
        HostSpace{}.copy_from_host(target.data() + to_offset, source.data() + from_offset, bytes,
                                   {});
        ASSERT_EQ(std::memcmp(target.data() + to_offset, source.data() + from_offset, bytes), 0)
            << bytes << " bytes, offsets " << to_offset << "/" << from_offset;
        for (std::size_t i = 0; i < to_offset; ++i) ASSERT_EQ(target[i], 0x5A) << i;
        for (std::size_t i = to_offset + bytes; i < target.size(); ++i)
          ASSERT_EQ(target[i], 0x5A) << i;
      }
    }
  }
}

// An upload whose fields are large and oddly sized (so copies straddle the threshold and the
// alignment gaps between fields), read back byte for byte.
TEST(StreamingStores, AnUploadOfOddlySizedLargeFieldsReadsBackExactly) {
  constexpr std::size_t rows = 9973;
  const std::vector<std::uint8_t> a = filled<std::uint8_t>(rows, 27, 41);   // 263 KiB
  const std::vector<double> b = filled<double>(rows, 3, 42);                // 233 KiB
  const std::vector<std::uint16_t> c = filled<std::uint16_t>(rows, 1, 43);  // 19 KiB
  for (const unsigned threads : {1u, 2u}) {
    DatasetOptions options = batch_options(100, Remainder::pad);
    options.upload_threads = threads;
    options.upload_block_bytes = 300000;  // blocks that do not fall on fields
    DeviceDataset<HostSpace, std::uint8_t, double, std::uint16_t> ds(
        HostSpace{}, options, HostTensor<const std::uint8_t>(a.data(), {rows, 27}),
        HostTensor<const double>(b.data(), {rows, 3}),
        HostTensor<const std::uint16_t>(c.data(), {rows}));
    EXPECT_EQ(std::memcmp(ds.field<0>().data(), a.data(), a.size()), 0);
    EXPECT_EQ(std::memcmp(ds.field<1>().data(), b.data(), b.size() * sizeof(double)), 0);
    EXPECT_EQ(std::memcmp(ds.field<2>().data(), c.data(), c.size() * sizeof(std::uint16_t)), 0);
  }
}

}  // namespace
