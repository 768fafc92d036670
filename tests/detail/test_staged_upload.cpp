// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// The staged upload (detail/upload/staged_upload.hpp) and the plan it follows
// (detail/upload/upload_plan.hpp): the plan's parts alternate sources and gaps in order, and
// through a transport that runs each transfer as late as a copy engine ever could, no staging
// buffer is refilled while its transfer is pending and progress reports only bytes that landed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "resident/detail/upload/staged_upload.hpp"
#include "resident/detail/upload/upload_plan.hpp"
#include "resident/progress.hpp"
#include "support/chunked_upload.hpp"

namespace {

using resident::Progress;
using resident::testing::pattern;

TEST(UploadPlan, PartsAlternateSourcesAndGapsInOrder) {
  const std::vector<std::byte> a(10), b(5);
  resident::detail::UploadPlan plan;
  plan.parts = {{0, 10, a.data()}, {16, 5, b.data()}};
  plan.total_bytes = 21;
  std::vector<std::string> parts;
  plan.for_each_part(8, 18, [&](std::size_t at, const std::byte* source, std::size_t n) {
    const std::string what = source == nullptr ? "gap" : source == a.data() + 8 ? "a" : "b";
    parts.push_back(what + "@" + std::to_string(at) + "+" + std::to_string(n));
  });
  EXPECT_EQ(parts, (std::vector<std::string>{"a@8+2", "gap@10+6", "b@16+2"}));
}

// A staging transport that runs a transfer only when it must (at the wait for its buffer, or
// at the end), as late as a copy engine ever could: a buffer refilled while its transfer is
// still pending corrupts the result.
class DeferredTransport {
 public:
  DeferredTransport(std::size_t ring, std::size_t bytes, bool honours_waits)
      : buffers_(ring, std::vector<std::byte>(bytes)), honours_waits_(honours_waits) {}

  [[nodiscard]] std::size_t buffer_count() const { return buffers_.size(); }
  [[nodiscard]] std::byte* buffer(std::size_t slot) { return buffers_[slot].data(); }
  void wait_until_free(std::size_t slot) {
    ++waits;
    if (!honours_waits_) return;
    std::size_t through = pending_.size();
    for (std::size_t i = 0; i < pending_.size(); ++i)
      if (pending_[i].slot == slot) through = i + 1;
    run(through);
  }
  void transfer(std::size_t slot, std::byte* destination, std::size_t bytes) {
    pending_.push_back({slot, destination, bytes});
  }
  void finish() { run(pending_.size()); }

  std::size_t waits = 0;

 private:
  struct Pending {
    std::size_t slot;
    std::byte* destination;
    std::size_t bytes;
  };
  void run(std::size_t count) {  // in stream order, like one copy engine
    for (std::size_t i = 0; i < count && i < pending_.size(); ++i)
      std::memcpy(pending_[i].destination, buffers_[pending_[i].slot].data(), pending_[i].bytes);
    pending_.erase(pending_.begin(),
                   pending_.begin() + static_cast<long>(std::min(count, pending_.size())));
  }

  std::vector<std::vector<std::byte>> buffers_;
  std::vector<Pending> pending_;
  bool honours_waits_;
};

struct StagedCase {
  std::vector<std::uint8_t> a = pattern(3000, 1), b = pattern(7001, 2), c = pattern(1234, 3);
  resident::detail::UploadPlan plan;
  std::vector<std::byte> expected;
  StagedCase() {
    const auto bytes = [](const std::vector<std::uint8_t>& v) {
      return reinterpret_cast<const std::byte*>(v.data());
    };
    plan.parts = {{0, a.size(), bytes(a)}, {3072, b.size(), bytes(b)}, {10240, c.size(), bytes(c)}};
    plan.total_bytes = 10240 + c.size();
    expected.resize(plan.total_bytes);
    plan.for_each_part(0, plan.total_bytes,
                       [&](std::size_t at, const std::byte* from, std::size_t n) {
                         if (from != nullptr) std::memcpy(expected.data() + at, from, n);
                       });
  }
  // `on_progress` is called with the destination as it is at each report.
  std::vector<std::byte> run(DeferredTransport& transport, std::size_t chunk,
                             const std::function<void(const std::vector<std::byte>&,
                                                      const Progress&)>& on_progress = {}) const {
    std::vector<std::byte> destination(plan.total_bytes, std::byte{0xee});
    resident::ProgressCallback callback;
    if (on_progress)
      callback = [&](const Progress& progress) {
        on_progress(destination, progress);
        return true;
      };
    resident::detail::staged_upload(transport, destination.data(), plan, chunk, 2,
                                    resident::detail::ProgressReporter(callback, plan.total_bytes));
    return destination;
  }
};

TEST(StagedUpload, NeverRefillsABufferWhoseTransferIsPending) {
  const StagedCase staged;
  for (const std::size_t ring : {1, 2, 3, 5}) {
    for (const std::size_t chunk : {512, 1000, 4096, 20000}) {
      SCOPED_TRACE("ring " + std::to_string(ring) + ", chunk " + std::to_string(chunk));
      DeferredTransport transport(ring, chunk, true);
      EXPECT_EQ(staged.run(transport, chunk), staged.expected);
      const std::size_t chunks = resident::detail::ceil_div(staged.plan.total_bytes, chunk);
      EXPECT_EQ(transport.waits, chunks > ring ? chunks - ring : 0);
    }
  }
}

// Progress counts bytes that have landed: at each report, the destination already holds the
// reported bytes, however late the transport runs its transfers.
TEST(StagedUpload, ProgressReportsOnlyBytesWhoseTransferCompleted) {
  const StagedCase staged;
  for (const std::size_t ring : {1, 2, 3, 5}) {
    for (const std::size_t chunk : {512, 1000, 4096}) {
      SCOPED_TRACE("ring " + std::to_string(ring) + ", chunk " + std::to_string(chunk));
      DeferredTransport transport(ring, chunk, true);
      std::vector<std::size_t> reported;
      staged.run(transport, chunk,
                 [&](const std::vector<std::byte>& destination, const Progress& progress) {
                   ASSERT_LE(progress.bytes_done, destination.size());
                   for (std::size_t at = 0; at < progress.bytes_done; ++at)
                     ASSERT_EQ(destination[at], staged.expected[at])
                         << "byte " << at << " reported done before it landed";
                   reported.push_back(progress.bytes_done);
                 });
      const std::size_t chunks = resident::detail::ceil_div(staged.plan.total_bytes, chunk);
      ASSERT_EQ(reported.size(), chunks - 1);  // one per chunk; the total is the caller's
      for (std::size_t i = 0; i < reported.size(); ++i) EXPECT_EQ(reported[i], (i + 1) * chunk);
    }
  }
}

TEST(StagedUpload, TheDeferredTransportCatchesAMissingWait) {
  const StagedCase staged;
  DeferredTransport transport(2, 1000, false);  // refills buffers without waiting
  EXPECT_NE(staged.run(transport, 1000), staged.expected);
}

}  // namespace
