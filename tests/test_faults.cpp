// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// Fault injection: every allocation, copy and capacity query that a construction, upload,
// assignment, .npy load, gathering epoch or streaming pass makes is failed in turn. Each fault
// must surface as its own typed error, return every byte taken, leave the caller's data as it
// was, and leave a dataset that existed before intact and readable; afterwards the same work
// succeeds. Run under ASan/LSan (the asan preset), a leak at any fault point fails the run.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <iostream>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "resident/resident.hpp"
#include "support/faulty_space.hpp"
#include "support/labelled_rows.hpp"
#include "support/spaces.hpp"
#include "support/temp_npy.hpp"
#if RESIDENT_TEST_SIMULATED_CUDA
#include "support/runtime_faults.hpp"
#endif

namespace {

using resident::CapacityError;
using resident::CudaError;
using resident::DatasetOptions;
using resident::DeviceDataset;
using resident::HostSpace;
using resident::HostTensor;
using resident::Remainder;
using resident::Shuffle;
using resident::StreamingDataset;
using resident::testing::all_operations;
using resident::testing::epoch_label_sum;
using resident::testing::FaultInjector;
using resident::testing::FaultySpace;
using resident::testing::Operation;
using resident::testing::operation_name;
using resident::testing::read_back;
using resident::testing::TempNpy;
using resident::testing::used_bytes;

constexpr std::size_t kRows = 203;  // not a multiple of the batch: padding rows are copied too
constexpr std::size_t kColumns = 5;
constexpr std::size_t kBatch = 16;

/// Two fields, every value distinct and derived from `seed`.
struct Source {
  explicit Source(int seed) : features(kRows * kColumns), labels(kRows) {
    for (std::size_t i = 0; i < features.size(); ++i)
      features[i] = static_cast<float>(i) * 0.5f + static_cast<float>(seed);
    for (std::size_t i = 0; i < labels.size(); ++i)
      labels[i] = static_cast<std::int32_t>(i) * 7 + seed;
  }
  [[nodiscard]] HostTensor<const float> x() const { return {features.data(), {kRows, kColumns}}; }
  [[nodiscard]] HostTensor<const std::int32_t> y() const { return {labels.data(), {kRows}}; }
  bool operator==(const Source& other) const {
    return features == other.features && labels == other.labels;
  }
  std::vector<float> features;
  std::vector<std::int32_t> labels;
};

/// Small chunks, so that an upload makes many copies, and padding, so that some copy zeros.
DatasetOptions preload_options() {
  DatasetOptions options;
  options.batch_size = kBatch;
  options.remainder = Remainder::pad;
  options.reserve_bytes = 0;
  options.upload_block_bytes = 1024;
  options.upload_threads = 1;  // one copy order, so that the k-th copy is the same every run
  options.on_progress = [](resident::Progress /*progress*/) { return true; };
  return options;
}

/// Three-batch chunks in a ring of three: a pass is 4 chunks, each several copies.
DatasetOptions stream_options() {
  DatasetOptions options;
  options.batch_size = kBatch;
  options.remainder = Remainder::drop;
  options.reserve_bytes = 0;
  options.streaming.chunk_batches = 3;
  options.streaming.chunk_slots = 3;
  options.streaming.prefetch_chunks = 1;
  return options;
}

std::size_t& total_fault_points() {
  static std::size_t total = 0;
  return total;
}

/// Prints, at the end of the run, how many faults were injected in all.
class FaultSummary : public ::testing::Environment {
 public:
  void TearDown() override {
    if (total_fault_points() == 0) return;  // no fault test ran (filtered out)
    std::cout << "[ faults   ] " << total_fault_points()
              << " fault points injected in all; each surfaced as its typed error, returned "
                 "its memory and left the data intact\n";
  }
};
const auto* const summary = ::testing::AddGlobalTestEnvironment(new FaultSummary);

template <class Inner>
class Faults : public ::testing::Test {
 protected:
  using Space = FaultySpace<Inner>;
  using Preloaded = DeviceDataset<Space, float, std::int32_t>;
  using Streamed = StreamingDataset<Space, float, std::int32_t>;

  void SetUp() override {
    resident::testing::skip_unless_usable<Inner>();
    if (::testing::Test::IsSkipped()) return;
    space_ = Space(resident::testing::budgeted_space<Inner>(), std::make_shared<FaultInjector>());
    prior_.emplace(space_, preload_options(), source_.x(), source_.y());
  }

  /// Expects `dataset` to hold `expected`, every row of both fields.
  template <class Dataset>
  static void expect_holds(const Dataset& dataset, const Source& expected) {
    ASSERT_EQ(dataset.num_rows(), kRows);
    const auto features = read_back(dataset.space(), dataset.stream(), dataset.template field<0>());
    const auto labels = read_back(dataset.space(), dataset.stream(), dataset.template field<1>());
    EXPECT_EQ(features, expected.features);
    EXPECT_EQ(labels, expected.labels);
  }

  /// Expects an unshuffled pass of `dataset` to deliver `expected`'s rows batch by batch.
  static void expect_streams(Streamed& dataset, const Source& expected) {
    ASSERT_EQ(dataset.num_batches(), kRows / kBatch);
    for (std::size_t k = 0; k < dataset.num_batches(); ++k) {
      const auto [features, labels] = dataset.batch(k);
      const auto got = read_back(dataset.space(), dataset.stream(), labels);
      ASSERT_TRUE(std::equal(got.begin(), got.end(), expected.labels.begin() + k * kBatch)) << k;
      const auto got_features = read_back(dataset.space(), dataset.stream(), features);
      ASSERT_TRUE(std::equal(got_features.begin(), got_features.end(),
                             expected.features.begin() + k * kBatch * kColumns))
          << k;
    }
  }

  /// Runs `work` once to count the operations it reaches, then once for every one of them
  /// with that operation failing, checking after each fault what must hold (plus
  /// `after_fault`); `prepare` runs before every try, unfailed. Finally `work` must succeed.
  void inject_every_fault(const std::string& what, const std::function<void()>& prepare,
                          const std::function<void()>& work,
                          const std::function<void()>& after_fault) {
    FaultInjector& injector = space_.injector();
    const auto reset = [&] {
      injector.count_only();
      prepare();
      injector.count_only();
    };
    reset();
    work();
    std::array<std::size_t, all_operations.size()> reached{};
    for (const Operation operation : all_operations)
      reached[static_cast<std::size_t>(operation)] = injector.count(operation);

    std::size_t injected = 0;
    for (const Operation operation : all_operations) {
      const std::size_t points = reached[static_cast<std::size_t>(operation)];
      for (std::size_t k = 1; k <= points; ++k) {
        SCOPED_TRACE(what + ": " + operation_name(operation) + " #" + std::to_string(k) + " of " +
                     std::to_string(points));
        reset();
        const std::size_t live_bytes = injector.live_bytes();
        const std::size_t live_allocations = injector.live_allocations();
        const auto accounted = used_bytes(space_.inner());
        injector.arm(operation, k);
        expect_injected_error(operation, work);
        injector.count_only();
        ++injected;
        EXPECT_EQ(injector.live_bytes(), live_bytes) << "bytes taken before the fault were kept";
        EXPECT_EQ(injector.live_allocations(), live_allocations);
        EXPECT_EQ(used_bytes(space_.inner()), accounted);
        EXPECT_TRUE(source_ == pristine_) << "the caller's data changed";
        expect_holds(*prior_, source_);
        after_fault();
        if (::testing::Test::HasFailure()) return;  // the first broken point says enough
      }
    }
    std::cout << "[ faults   ] " << what << ": " << injected << " fault points (" << reached[0]
              << " allocations, " << reached[1] << " copies, " << reached[2]
              << " capacity queries), each a typed error with nothing lost\n";
    total_fault_points() += injected;
    ::testing::Test::RecordProperty("fault_points", static_cast<int>(injected));
    EXPECT_GT(injected, 0u);

    reset();
    work();
  }

  void expect_injected_error(Operation operation, const std::function<void()>& work) {
    const FaultInjector& injector = space_.injector();
    try {
      work();
    } catch (const CapacityError& error) {
      EXPECT_EQ(operation, Operation::allocate) << error.what();
      EXPECT_NE(std::string(error.what()).find(injector.fault_message()), std::string::npos)
          << "not the injected fault: " << error.what();
      return;
    } catch (const CudaError& error) {
      EXPECT_NE(operation, Operation::allocate) << error.what();
      EXPECT_EQ(error.what(), injector.fault_message()) << "not the injected fault";
      return;
    } catch (const std::exception& error) {
      ADD_FAILURE() << "the fault surfaced as another error: " << error.what();
      return;
    }
    ADD_FAILURE() << "the work completed although the fault " << (injector.fired() ? "" : "never ")
                  << "fired";
  }

  Space space_{};
  Source source_{1};
  const Source pristine_{1};
  const Source other_{2};
  std::optional<Preloaded> prior_;
};

struct InnerName {
  template <class Inner>
  static std::string GetName(int index) {
    return "Faulty" + resident::testing::SpaceName::GetName<Inner>(index);
  }
};
TYPED_TEST_SUITE(Faults, resident::testing::SpaceTypes, InnerName);

TYPED_TEST(Faults, ConstructionAndUpload) {
  using Preloaded = typename TestFixture::Preloaded;
  this->inject_every_fault(
      "construction and upload", [] {},
      [this] {
        const Preloaded dataset(this->space_, preload_options(), this->other_.x(),
                                this->other_.y());
        EXPECT_EQ(dataset.num_rows(), kRows);
      },
      [] {});
}

// An upload that fails half-way releases its memory only once the copies enqueued before the
// failure are done: where they are slow (every stream operation waits first), a release that
// does not wait for them hands memory that is still being written back to the space.
TYPED_TEST(Faults, AFailedUploadReleasesItsMemoryBehindItsCopies) {
  using Preloaded = typename TestFixture::Preloaded;
  const resident::testing::SlowStreams slow(500);
  DatasetOptions options = preload_options();
  options.upload_block_bytes = 4096;  // many copies in flight when one fails
  this->inject_every_fault(
      "construction and upload behind slow copies", [] {},
      [&] {
        const Preloaded dataset(this->space_, options, this->other_.x(), this->other_.y());
        EXPECT_EQ(dataset.num_rows(), kRows);
      },
      [] {});
}

TYPED_TEST(Faults, AssignmentKeepsTheDatasetItWouldReplace) {
  using Preloaded = typename TestFixture::Preloaded;
  std::optional<Preloaded> target;
  this->inject_every_fault(
      "move assignment of a new dataset",
      [&] {
        target.reset();
        target.emplace(this->space_, preload_options(), this->source_.x(), this->source_.y());
      },
      [&] {
        *target = Preloaded(this->space_, preload_options(), this->other_.x(), this->other_.y());
      },
      [&] { this->expect_holds(*target, this->source_); });
  this->expect_holds(*target, this->other_);
}

TYPED_TEST(Faults, LoadFromNpyFiles) {
  using Space = typename TestFixture::Space;
  const TempNpy features("faults_x", this->other_.features, {kRows, kColumns});
  const TempNpy labels("faults_y", this->other_.labels, {kRows});
  this->inject_every_fault(
      "load_dataset from .npy", [] {},
      [&] {
        const auto dataset = resident::load_dataset<Space, float, std::int32_t>(
            this->space_, preload_options(), features.path, labels.path);
        EXPECT_EQ(dataset.num_rows(), kRows);
      },
      [&] {
        EXPECT_EQ(resident::npy::load(features.path).template as<float>().rows(), kRows);
        const auto on_disk = resident::npy::load(labels.path);
        const auto view = on_disk.template as<std::int32_t>();
        EXPECT_TRUE(std::equal(this->other_.labels.begin(), this->other_.labels.end(), view.data()))
            << "the file changed";
      });
}

TYPED_TEST(Faults, GatheringEpochKeepsTheDatasetReadable) {
  using Preloaded = typename TestFixture::Preloaded;
  if constexpr (!resident::testing::gathers_here<typename TestFixture::Space>) {
    GTEST_SKIP() << "skipped: needs nvcc: a device gather launches kernels, which this "
                    "g++-compiled test cannot";
  } else {
    std::optional<Preloaded> dataset;
    // Read back through the space under the faults (device memory is not host-readable), the
    // copies back themselves not injected.
    const auto label_sum = [&](auto&& epoch) {
      return epoch_label_sum(epoch, dataset->space().inner(), dataset->stream());
    };
    std::int64_t expected_sum = 0;
    for (const std::int32_t label : this->source_.labels) expected_sum += label;
    this->inject_every_fault(
        "gathering epochs (Shuffle::samples, then a conversion)",
        [&] {
          dataset.reset();
          dataset.emplace(this->space_, preload_options(), this->source_.x(), this->source_.y());
        },
        [&] {
          EXPECT_EQ(label_sum(dataset->epoch({7, 0, Shuffle::samples})), expected_sum);
          (void)label_sum(dataset->epoch({7, 1, Shuffle::batches},
                                         resident::convert<0>(resident::Normalize{2.0f, 1.0f})));
        },
        [&] {
          this->expect_holds(*dataset, this->source_);
          EXPECT_EQ(label_sum(dataset->epoch({7, 2, Shuffle::samples})), expected_sum)
              << "a gathering epoch after the fault must work";
        });
  }
}

TYPED_TEST(Faults, StreamingConstructionAndPasses) {
  using Streamed = typename TestFixture::Streamed;
  this->inject_every_fault(
      "streaming construction and two passes", [] {},
      [this] {
        Streamed dataset(this->space_, stream_options(), this->source_.x(), this->source_.y());
        for (const std::uint64_t epoch : {0, 1})
          for (const auto& batch : dataset.epoch({3, epoch, Shuffle::batches})) (void)batch;
      },
      [] {});
}

// A pass that fails leaves the dataset as it was: the next pass starts over and reads every
// batch, with no memory taken or lost.
TYPED_TEST(Faults, StreamingPassKeepsTheDatasetUsable) {
  using Streamed = typename TestFixture::Streamed;
  std::optional<Streamed> dataset;
  this->inject_every_fault(
      "streaming passes of a dataset that stays",
      [&] {
        dataset.reset();
        dataset.emplace(this->space_, stream_options(), this->source_.x(), this->source_.y());
      },
      [&] {
        for (const std::uint64_t epoch : {0, 1})
          for (const auto& batch : dataset->epoch({3, epoch, Shuffle::batches})) (void)batch;
      },
      [&] { TestFixture::expect_streams(*dataset, this->source_); });
}

TYPED_TEST(Faults, StreamingFromNpyFiles) {
  using Space = typename TestFixture::Space;
  const TempNpy features("faults_stream_x", this->source_.features, {kRows, kColumns});
  const TempNpy labels("faults_stream_y", this->source_.labels, {kRows});
  this->inject_every_fault(
      "load_streaming_dataset from .npy and a pass", [] {},
      [&] {
        auto dataset = resident::load_streaming_dataset<Space, float, std::int32_t>(
            this->space_, stream_options(), features.path, labels.path);
        for (const auto& batch : dataset.epoch({5, 0, Shuffle::samples})) (void)batch;
      },
      [] {});
}

TYPED_TEST(Faults, MakeDatasetThatFallsBackToStreaming) {
  DatasetOptions options = stream_options();
  options.streaming.chunk_batches = 1;
  options.ring_depth = 1;
  const std::size_t data_bytes = kRows * (kColumns * sizeof(float) + sizeof(std::int32_t));
  this->inject_every_fault(
      "make_dataset planning, falling back to streaming, and a pass",
      [&] {
        // Leave a little less than the data's bytes usable, so that the plan must stream (with
        // a gather ring of one batch beside the chunk slots).
        const std::size_t free = this->space_.inner().capacity().free_bytes;
        options.reserve_bytes = free - (data_bytes - 64);
      },
      [&] {
        auto dataset =
            resident::make_dataset(this->space_, options, this->other_.x(), this->other_.y());
        EXPECT_TRUE(dataset.is_streaming());
        for (const auto& batch : dataset.epoch({1, 0, Shuffle::batches})) (void)batch;
      },
      [] {});
}

// One transient failure costs one batch: the batch whose chunk failed throws the fault once,
// and the next batch restarts the pass at its own chunk, in order or shuffled.
TYPED_TEST(Faults, AFailedChunkLoadCostsOneBatchNotTheRestOfThePass) {
  using Streamed = typename TestFixture::Streamed;
  Streamed dataset(this->space_, stream_options(), this->source_.x(), this->source_.y());
  for (const Shuffle shuffle : {Shuffle::none, Shuffle::batches}) {
    for (const std::size_t k : {1, 3, 6}) {
      SCOPED_TRACE(std::string(shuffle == Shuffle::none ? "none" : "batches") + ", copy #" +
                   std::to_string(k) + " fails");
      // What the epoch serves without a fault (under drop, a shuffled epoch's rows start at a
      // seeded offset).
      std::vector<std::int32_t> served;
      for (const auto& [features, batch_labels] : dataset.epoch({4, 0, shuffle})) {
        const auto got = read_back(dataset.space(), dataset.stream(), batch_labels);
        served.insert(served.end(), got.begin(), got.end());
      }
      std::sort(served.begin(), served.end());
      ASSERT_EQ(served.size(), kRows / kBatch * kBatch);
      auto epoch = dataset.epoch({4, 0, shuffle});
      this->space_.injector().arm(Operation::copy, k);
      std::vector<std::size_t> failed;
      std::vector<std::int32_t> labels;
      for (std::size_t b = 0; b < epoch.size(); ++b) {
        try {
          const auto [features, batch_labels] = epoch.batch(b);
          const auto got = read_back(dataset.space(), dataset.stream(), batch_labels);
          labels.insert(labels.end(), got.begin(), got.end());
          if (shuffle == Shuffle::none) {
            ASSERT_TRUE(
                std::equal(got.begin(), got.end(), this->source_.labels.begin() + b * kBatch))
                << "batch " << b;
          }
        } catch (const CudaError& error) {
          EXPECT_EQ(error.what(), this->space_.injector().fault_message());
          failed.push_back(b);
        }
      }
      ASSERT_EQ(failed.size(), 1u) << "the fault failed more than its own batch";
      const auto [features, batch_labels] = epoch.batch(failed[0]);  // and it reloads
      const auto got = read_back(dataset.space(), dataset.stream(), batch_labels);
      labels.insert(labels.end(), got.begin(), got.end());
      std::sort(labels.begin(), labels.end());
      EXPECT_EQ(labels, served);
    }
  }
}

// When the preload allocation fails after a passing plan, make_dataset streams, and its plan
// says so: recommendation stream, the re-plan's figures, and why.
TYPED_TEST(Faults, TheFallbackPlanSaysThePreloadWasRefused) {
  using Space = typename TestFixture::Space;
  DatasetOptions options = stream_options();
  options.streaming.chunk_batches = 1;
  options.remainder = Remainder::partial;  // every row in every epoch: equal label sums
  const TempNpy features("fallback_x", this->source_.features, {kRows, kColumns});
  const TempNpy labels("fallback_y", this->source_.labels, {kRows});
  const auto check = [&](auto&& dataset) {
    EXPECT_TRUE(dataset.is_streaming());
    const resident::Plan& recorded = dataset.plan();
    EXPECT_EQ(recorded.recommendation, resident::Recommendation::stream);
    EXPECT_EQ(
        recorded.needed_bytes,
        resident::plan(this->space_, options, this->source_.x(), this->source_.y()).needed_bytes);
    EXPECT_EQ(recorded.stream_slots_bytes, dataset.bytes());
    EXPECT_NE(recorded.reason.find("preload allocation was refused"), std::string::npos)
        << recorded.reason;
    EXPECT_NE(recorded.reason.find(this->space_.injector().fault_message()), std::string::npos)
        << "the CapacityError's figures: " << recorded.reason;
    EXPECT_NE(recorded.reason.find("streamed instead"), std::string::npos) << recorded.reason;
    EXPECT_EQ(
        epoch_label_sum(dataset.epoch({1, 0, Shuffle::batches}), this->space_, dataset.stream()),
        epoch_label_sum(dataset.epoch({}), this->space_, dataset.stream()));
  };
  this->space_.injector().arm(Operation::allocate, 1);
  check(resident::make_dataset(this->space_, options, this->source_.x(), this->source_.y()));
  ASSERT_TRUE(this->space_.injector().fired());
  this->space_.injector().arm(Operation::allocate, 1);
  check(resident::make_dataset<Space, float, std::int32_t>(this->space_, options, features.path,
                                                           labels.path));
  ASSERT_TRUE(this->space_.injector().fired());
}

// The rings of CUDA resources (events, streams, pinned buffers) are made by `make_owners`:
// failing the k-th of n, for every k, must release the k - 1 made before it.
TEST(MakeOwners, AFailureReleasesEveryOwnerMadeBeforeIt) {
  struct Release {
    int* live;
    void operator()(int* handle) const noexcept {
      --*live;
      delete handle;  // NOLINT(cppcoreguidelines-owning-memory): a stand-in for a CUDA handle
    }
  };
  using Owner = std::unique_ptr<int, Release>;
  constexpr std::size_t count = 5;
  for (std::size_t fail_at = 1; fail_at <= count + 1; ++fail_at) {
    SCOPED_TRACE("making owner " + std::to_string(fail_at) + " fails");
    int live = 0;
    std::size_t made = 0;
    try {
      const auto owners = resident::detail::make_owners(count, [&] {
        if (++made == fail_at)
          throw CudaError(2, "cudaEventCreateWithFlags", __FILE__, __LINE__, "injected fault");
        ++live;
        return Owner(new int(0), Release{&live});  // NOLINT(cppcoreguidelines-owning-memory)
      });
      EXPECT_GT(fail_at, count) << "no fault was injected";
      EXPECT_EQ(owners.size(), count);
      EXPECT_EQ(live, static_cast<int>(count));
    } catch (const CudaError& error) {
      EXPECT_LE(fail_at, count);
      EXPECT_EQ(error.code(), 2);
    }
    EXPECT_EQ(live, 0);
  }
}

#if RESIDENT_TEST_SIMULATED_CUDA
// Every CUDA runtime call that makes a resource or enqueues work, failed in turn where the
// runtime is the simulation: each failure must surface as the library's typed error and leave
// the machine holding what it held before (device memory, page-locked memory, streams,
// events), and the work must succeed afterwards. Waits and releases are not failed: a release
// never throws (see detail::assert_released), and the waits of destructors report nothing.
using resident::CudaHostPinnedSpace;
using resident::CudaSpace;
using resident::testing::fail_each_call;

struct FallibleCall {
  const char* entry_point;
  cudaError_t error;
};
constexpr std::array<FallibleCall, 13> kFallibleCalls{{
    {"cudaGetDeviceCount", cudaErrorLaunchFailure},
    {"cudaMalloc", cudaErrorMemoryAllocation},  // out of memory: a CapacityError
    {"cudaMalloc", cudaErrorLaunchFailure},
    {"cudaMallocHost", cudaErrorMemoryAllocation},
    {"cudaHostAlloc", cudaErrorMemoryAllocation},
    {"cudaHostAlloc", cudaErrorLaunchFailure},
    {"cudaMemGetInfo", cudaErrorLaunchFailure},
    {"cudaStreamCreateWithFlags", cudaErrorLaunchFailure},
    {"cudaEventCreateWithFlags", cudaErrorLaunchFailure},
    {"cudaEventRecord", cudaErrorLaunchFailure},
    {"cudaStreamWaitEvent", cudaErrorLaunchFailure},
    {"cudaMemcpyAsync", cudaErrorLaunchFailure},
    {"cudaMemsetAsync", cudaErrorLaunchFailure},
}};

/// Fails every call of kFallibleCalls that `work` makes, one per run of `work`.
template <class Work>
void fail_every_runtime_call(const std::string& what, Work&& work) {
  std::size_t injected = 0;
  for (const FallibleCall& call : kFallibleCalls) {
    injected += fail_each_call(call.entry_point, call.error, work);
    if (::testing::Test::HasFailure()) return;
  }
  std::cout << "[ faults   ] " << what << ": " << injected
            << " runtime calls failed, each a typed error with nothing left behind\n";
  total_fault_points() += injected;
  EXPECT_GT(injected, 0u);
  work();
}

/// A page-locked copy of `values`, which the copy engine reads directly (no staging).
template <class T>
class PageLocked {
 public:
  explicit PageLocked(const std::vector<T>& values) : size_(values.size()) {
    void* memory = nullptr;
    if (cudaMallocHost(&memory, size_ * sizeof(T)) != cudaSuccess) throw std::bad_alloc();
    data_ = static_cast<T*>(memory);
    std::copy(values.begin(), values.end(), data_);
  }
  ~PageLocked() { (void)cudaFreeHost(data_); }
  PageLocked(const PageLocked&) = delete;
  PageLocked& operator=(const PageLocked&) = delete;
  [[nodiscard]] const T* data() const noexcept { return data_; }

 private:
  std::size_t size_;
  T* data_ = nullptr;
};

/// A Source's fields as pageable memory (uploads and loads staged) or page-locked (copied
/// directly).
class RuntimeFaults : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override { resident::testing::skip_unless_usable<CudaSpace>(); }
  [[nodiscard]] bool page_locked() const { return GetParam(); }
  [[nodiscard]] HostTensor<const float> x() const {
    return page_locked() ? HostTensor<const float>(locked_x_.data(), {kRows, kColumns})
                         : source_.x();
  }
  [[nodiscard]] HostTensor<const std::int32_t> y() const {
    return page_locked() ? HostTensor<const std::int32_t>(locked_y_.data(), {kRows}) : source_.y();
  }
  /// Expects a pass of `dataset` to serve distinct labels of every batch of its epoch.
  template <class Dataset>
  void expect_a_pass(Dataset& dataset) const {
    std::vector<std::int32_t> seen;
    for (const auto& [features, labels] : dataset.epoch({3, 0, Shuffle::batches})) {
      const auto got = read_back(dataset.space(), dataset.stream(), labels);
      seen.insert(seen.end(), got.begin(), got.begin() + labels.valid_rows());
    }
    std::sort(seen.begin(), seen.end());
    EXPECT_EQ(seen.size(), dataset.num_batches() * kBatch);
    EXPECT_EQ(std::adjacent_find(seen.begin(), seen.end()), seen.end()) << "a row came twice";
  }

  const Source source_{1};
  const PageLocked<float> locked_x_{source_.features};
  const PageLocked<std::int32_t> locked_y_{source_.labels};
};

// Every stream operation slowed: memory released before the copies enqueued ahead of the
// failure are done (a copy whose event record failed is covered by no event) is memory the
// simulation sees them use after it was freed.
TEST_P(RuntimeFaults, AFailedCallOfAPreloadOnCudaSpaceSurfacesAndLeavesNothing) {
  const resident::testing::SlowStreams slow(200);
  fail_every_runtime_call("CudaSpace preload", [&] {
    const DeviceDataset<CudaSpace, float, std::int32_t> dataset(CudaSpace{}, preload_options(), x(),
                                                                y());
    EXPECT_EQ(read_back(dataset.space(), dataset.stream(), dataset.field<0>()), source_.features);
    EXPECT_EQ(read_back(dataset.space(), dataset.stream(), dataset.field<1>()), source_.labels);
  });
}

TEST_P(RuntimeFaults, AFailedCallOfAStreamingPassOnCudaSpaceSurfacesAndLeavesNothing) {
  fail_every_runtime_call("CudaSpace streaming pass", [&] {
    StreamingDataset<CudaSpace, float, std::int32_t> dataset(CudaSpace{}, stream_options(), x(),
                                                             y());
    expect_a_pass(dataset);
  });
}

TEST_P(RuntimeFaults, AFailedCallOfACudaHostPinnedSpaceDatasetSurfacesAndLeavesNothing) {
  fail_every_runtime_call("CudaHostPinnedSpace preload and streaming pass", [&] {
    const DeviceDataset<CudaHostPinnedSpace, float, std::int32_t> preloaded(
        CudaHostPinnedSpace{}, preload_options(), x(), y());
    EXPECT_EQ(read_back(preloaded.space(), preloaded.stream(), preloaded.field<1>()),
              source_.labels);
    StreamingDataset<CudaHostPinnedSpace, float, std::int32_t> streamed(CudaHostPinnedSpace{},
                                                                        stream_options(), x(), y());
    expect_a_pass(streamed);
  });
}

// A failed copy of a chunk load on CudaSpace costs that one batch: the batch throws the
// failure once, the next one restarts the pass at its own chunk, and every other batch is
// right.
TEST_P(RuntimeFaults, AFailedChunkCopyOnCudaSpaceCostsOneBatchNotTheRestOfThePass) {
  const resident::testing::SlowStreams slow(300);
  StreamingDataset<CudaSpace, float, std::int32_t> dataset(CudaSpace{}, stream_options(), x(), y());
  for (const std::size_t k : {1, 4, 7}) {  // each chunk's load copies its two fields
    SCOPED_TRACE("copy #" + std::to_string(k + 1) + " of the pass fails");
    auto epoch = dataset.epoch({4, 0, Shuffle::none});
    const resident::testing::FailingCall failing("cudaMemcpyAsync", cudaErrorLaunchFailure, k);
    std::vector<std::size_t> failed;
    for (std::size_t b = 0; b < epoch.size(); ++b) {
      try {
        const auto [features, labels] = epoch.batch(b);
        // Read back without another cudaMemcpyAsync, which the failure would count.
        ASSERT_EQ(cudaStreamSynchronize(dataset.stream()), cudaSuccess);
        std::vector<std::int32_t> got(labels.size());
        resident::testing::simcuda::peek(got.data(), labels.data(), labels.bytes());
        EXPECT_TRUE(std::equal(got.begin(), got.end(), source_.labels.begin() + b * kBatch))
            << "batch " << b;
      } catch (const CudaError& error) {
        EXPECT_EQ(error.code(), cudaErrorLaunchFailure) << error.what();
        EXPECT_NE(error.call().find("cudaMemcpyAsync"), std::string::npos) << error.what();
        failed.push_back(b);
      }
    }
    EXPECT_TRUE(failing.fired());
    ASSERT_EQ(failed.size(), 1u) << "the failure cost more than its own batch";
    const auto [features, labels] = epoch.batch(failed[0]);  // and it reloads
    EXPECT_EQ(read_back(dataset.space(), dataset.stream(), labels),
              std::vector<std::int32_t>(source_.labels.begin() + failed[0] * kBatch,
                                        source_.labels.begin() + (failed[0] + 1) * kBatch));
  }
}

INSTANTIATE_TEST_SUITE_P(Sources, RuntimeFaults, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "PageLocked" : "Pageable";
                         });
#endif

}  // namespace
