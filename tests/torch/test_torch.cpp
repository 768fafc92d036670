// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// to_tensor and to_tensors against libtorch, typed over the memory spaces: every element type
// libtorch has, with the right dtype, shape, device and values, zero-copy, for fields and for
// the batches of every shuffle, conversion and remainder; tensors that outlive the epoch, the
// ring they were gathered into and the dataset; the release protocol of a batch of tensors;
// views it cannot share, refused. Built with RESIDENT_WITH_TORCH.

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "resident/augment.hpp"
#include "resident/convert.hpp"
#include "resident/device_dataset.hpp"
#include "resident/token_dataset.hpp"
#include "resident/torch.hpp"
#include "support/epoch_checks.hpp"
#include "support/spaces.hpp"

namespace {

using resident::DatasetOptions;
using resident::DeviceDataset;
using resident::HostTensor;
using resident::Remainder;
using resident::Shuffle;
using resident::testing::read_back;

static_assert(!resident::detail::has_torch_dtype<std::uint16_t> &&
                  !resident::detail::has_torch_dtype<std::uint32_t> &&
                  !resident::detail::has_torch_dtype<std::uint64_t>,
              "libtorch 1.13 has no unsigned type wider than a byte: to_tensor refuses them");

constexpr std::size_t kRows = 37;

template <class T>
std::vector<T> values(std::size_t count) {
  std::vector<T> out(count);
  for (std::size_t i = 0; i < count; ++i) out[i] = static_cast<T>((i * 37 + 11) % 101);
  return out;
}

struct Fields {
  std::vector<std::uint8_t> u8 = values<std::uint8_t>(kRows * 6);
  std::vector<std::int8_t> i8 = values<std::int8_t>(kRows);
  std::vector<std::int16_t> i16 = values<std::int16_t>(kRows * 2);
  std::vector<std::int32_t> i32 = values<std::int32_t>(kRows);
  std::vector<std::int64_t> i64 = values<std::int64_t>(kRows);
  std::vector<float> f32 = values<float>(kRows * 3);
  std::vector<double> f64 = values<double>(kRows);

  template <class Space>
  [[nodiscard]] DeviceDataset<Space, std::uint8_t, std::int8_t, std::int16_t, std::int32_t,
                              std::int64_t, float, double>
  dataset(const Space& space, std::size_t batch, Remainder remainder = Remainder::partial) const {
    DatasetOptions options;
    options.batch_size = batch;
    options.remainder = remainder;
    return {space,
            options,
            HostTensor<const std::uint8_t>(u8.data(), {kRows, 2, 3}),
            HostTensor<const std::int8_t>(i8.data(), {kRows}),
            HostTensor<const std::int16_t>(i16.data(), {kRows, 2}),
            HostTensor<const std::int32_t>(i32.data(), {kRows}),
            HostTensor<const std::int64_t>(i64.data(), {kRows}),
            HostTensor<const float>(f32.data(), {kRows, 3}),
            HostTensor<const double>(f64.data(), {kRows})};
  }
};

// The values of a tensor that `to_tensor` made, read from its memory whatever its device.
template <class T>
std::vector<T> tensor_values(const torch::Tensor& tensor) {
  std::vector<T> host(static_cast<std::size_t>(tensor.numel()));
  if (tensor.is_cpu()) {
    std::memcpy(host.data(), tensor.data_ptr(), host.size() * sizeof(T));
  } else {
#if RESIDENT_HAS_CUDA
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    EXPECT_EQ(
        cudaMemcpy(host.data(), tensor.data_ptr(), host.size() * sizeof(T), cudaMemcpyDeviceToHost),
        cudaSuccess);
#else
    ADD_FAILURE() << "a tensor on " << tensor.device() << " in a build without CUDA";
#endif
  }
  return host;
}

// Whether libtorch can make tensors of `Space`'s memory: CUDA tensors need a libtorch with CUDA.
template <class Space>
bool torch_reaches() {
  return !resident::detail::torch_device(Space{}).is_cuda() || torch::cuda::is_available();
}

// The spaces whose memory libtorch can read as tensors here: device memory only with a libtorch
// built with CUDA (ToTensorWithoutTorchCuda checks the refusal elsewhere).
#if RESIDENT_HAS_CUDA && RESIDENT_TORCH_HAS_CUDA
using TorchSpaces = resident::testing::SpaceTypes;
#elif RESIDENT_HAS_CUDA
using TorchSpaces = ::testing::Types<resident::HostSpace, resident::CudaHostPinnedSpace>;
#else
using TorchSpaces = ::testing::Types<resident::HostSpace>;
#endif

template <class Space>
class ToTensor : public resident::testing::OverGatheringSpaces<Space> {
 protected:
  // `tensor` is `view` of `ds`, zero-copy: its dtype, shape, device, address and every value.
  template <class Dataset, class T>
  void expect_same(const Dataset& ds, const torch::Tensor& tensor,
                   resident::BatchView<const T> view, c10::ScalarType dtype) {
    EXPECT_EQ(tensor.scalar_type(), dtype);
    EXPECT_EQ(tensor.device(), resident::detail::torch_device(ds.space()));
    EXPECT_TRUE(tensor.is_contiguous());
    const resident::Shape shape = view.shape();
    ASSERT_EQ(static_cast<std::size_t>(tensor.dim()), shape.rank());
    for (std::size_t axis = 0; axis < shape.rank(); ++axis)
      EXPECT_EQ(static_cast<std::size_t>(tensor.size(static_cast<std::int64_t>(axis))),
                shape[axis]);
    EXPECT_EQ(tensor.data_ptr(), static_cast<const void*>(view.data()));
    if constexpr (std::is_same_v<T, bool>) {  // compared as bytes: std::vector<bool> packs bits
      const resident::BatchView<const std::uint8_t> bytes(
          reinterpret_cast<const std::uint8_t*>(view.data()),  // NOLINT: bool is one byte here
          view.rows(), view.row_shape(), view.valid_rows());
      EXPECT_EQ(tensor_values<std::uint8_t>(tensor), read_back(ds.space(), ds.stream(), bytes));
    } else {
      EXPECT_EQ(tensor_values<T>(tensor), read_back(ds.space(), ds.stream(), view));
    }
  }
  // Each field of `ds` as a tensor is the field, of dtype `dtypes[Field]`.
  template <class Dataset, std::size_t... Field>
  void expect_fields(const Dataset& ds, const std::array<c10::ScalarType, sizeof...(Field)>& dtypes,
                     std::index_sequence<Field...> /*fields*/) {
    (expect_same(ds, resident::to_tensor(ds, ds.template field<Field>()),
                 ds.template field<Field>(), dtypes[Field]),
     ...);
  }
  static resident::Normalize halve() { return {0.5f, 1.0f}; }
};
TYPED_TEST_SUITE(ToTensor, TorchSpaces, resident::testing::SpaceName);

TYPED_TEST(ToTensor, EveryFieldHasItsDtypeShapeDeviceAndValues) {
  const Fields fields;
  const auto ds = fields.dataset(this->space_, 8);
  this->expect_fields(ds,
                      {torch::kUInt8, torch::kInt8, torch::kInt16, torch::kInt32, torch::kInt64,
                       torch::kFloat32, torch::kFloat64},
                      std::make_index_sequence<7>{});
}

TYPED_TEST(ToTensor, BoolFieldsAreBoolTensors) {
  const std::vector<std::uint8_t> bytes = values<std::uint8_t>(kRows);
  bool flags[kRows];  // NOLINT(modernize-avoid-c-arrays): contiguous bools
  for (std::size_t i = 0; i < kRows; ++i) flags[i] = bytes[i] % 2 == 1;
  DeviceDataset ds(this->space_, DatasetOptions{}, HostTensor<const bool>(flags, {kRows}));
  this->expect_same(ds, resident::to_tensor(ds, ds.template field<0>()), ds.template field<0>(),
                    torch::kBool);
}

// Every shuffle, with and without a conversion, every remainder: each batch's tensors are its
// views (the dataset's rows, or its ring slot), and the epoch serves each row once.
TYPED_TEST(ToTensor, TheBatchesOfEveryShuffleConversionAndRemainderAreTheirViews) {
  const Fields fields;
  for (Remainder remainder : {Remainder::partial, Remainder::drop, Remainder::pad}) {
    auto ds = fields.dataset(this->space_, 8, remainder);
    for (Shuffle shuffle : {Shuffle::none, Shuffle::batches, Shuffle::samples}) {
      SCOPED_TRACE(testing::Message() << "shuffle " << static_cast<int>(shuffle) << ", remainder "
                                      << static_cast<int>(remainder));
      std::vector<int> seen(kRows, 0);
      auto epoch = ds.epoch({3, 1, shuffle});
      for (std::size_t k = 0; k < epoch.size(); ++k) {
        const auto tensors = resident::to_tensors(epoch, k);
        const auto batch = epoch.batch(k);
        EXPECT_EQ(tensors.index(), k);
        this->expect_same(ds, tensors[0], std::get<0>(batch), torch::kUInt8);
        this->expect_same(ds, tensors.template get<3>(), std::get<3>(batch), torch::kInt32);
        this->expect_same(ds, tensors[6], std::get<6>(batch), torch::kFloat64);
        // Field 4 tells the rows apart (values() is a bijection on 0..100).
        const auto ids = tensor_values<std::int64_t>(tensors[4]);
        for (std::size_t r = 0; r < std::get<4>(batch).valid_rows(); ++r)
          for (std::size_t i = 0; i < kRows; ++i)
            if (fields.i64[i] == ids[r]) ++seen[i];
      }
      std::size_t served = 0;
      for (std::size_t i = 0; i < kRows; ++i) {
        EXPECT_LE(seen[i], 1) << "row " << i;
        served += static_cast<std::size_t>(seen[i]);
      }
      EXPECT_EQ(served, remainder == Remainder::drop ? kRows / 8 * 8 : kRows);
    }
    auto converted = ds.epoch({5, 0, Shuffle::batches}, resident::convert<0>(TestFixture::halve()));
    for (std::size_t k = 0; k < converted.size(); ++k) {
      auto [pixels, i8, i16, i32, i64, f32, f64] = resident::to_tensors(converted, k);
      const auto batch = converted.batch(k);
      this->expect_same(ds, pixels, std::get<0>(batch), torch::kFloat32);
      this->expect_same(ds, f32, std::get<5>(batch), torch::kFloat32);
    }
  }
}

// Features composed: shard (none, partitioned, replicated; both ranks) x remainder x shuffle x
// transforms (none, a conversion, an augmentation, both, a conversion of the other field): each
// batch's tensors are its views, of the dtype and shape the epoch serves.
TYPED_TEST(ToTensor, ShardedAugmentedAndConvertedBatchesAreTheirViews) {
  constexpr std::size_t rows = 23;
  std::vector<std::uint8_t> images(rows * 16);
  for (std::size_t i = 0; i < images.size(); ++i) images[i] = static_cast<std::uint8_t>(i);
  const std::vector<std::int32_t> labels = values<std::int32_t>(rows);
  const auto image = resident::ImageLayout::chw(1, 4, 4);
  const auto same = [this](const auto& ds, auto& epoch) {
    for (std::size_t k = 0; k < epoch.size(); ++k) {
      const auto tensors = resident::to_tensors(epoch, k);
      const auto batch = epoch.batch(k);
      using Pixel = typename std::tuple_element_t<0, std::decay_t<decltype(batch)>>::value_type;
      using Label = typename std::tuple_element_t<1, std::decay_t<decltype(batch)>>::value_type;
      this->expect_same(ds, tensors[0], std::get<0>(batch),
                        resident::detail::torch_dtype<std::remove_cv_t<Pixel>>());
      this->expect_same(ds, tensors[1], std::get<1>(batch),
                        resident::detail::torch_dtype<std::remove_cv_t<Label>>());
    }
  };
  for (int shard = 0; shard < 5; ++shard) {
    for (Remainder remainder : {Remainder::drop, Remainder::partial, Remainder::pad}) {
      DatasetOptions options;
      options.batch_size = 5;
      options.remainder = remainder;
      if (shard > 0) {
        options.shard = resident::Shard{(shard - 1) % 2, 2, 0};
        options.sharding =
            shard <= 2 ? resident::Sharding::partitioned : resident::Sharding::replicated;
      }
      DeviceDataset ds(this->space_, options,
                       HostTensor<const std::uint8_t>(images.data(), {rows, 1, 4, 4}),
                       HostTensor<const std::int32_t>(labels.data(), {rows}));
      for (Shuffle shuffle : {Shuffle::none, Shuffle::batches, Shuffle::samples}) {
        SCOPED_TRACE(testing::Message()
                     << "shard case " << shard << ", remainder " << static_cast<int>(remainder)
                     << ", shuffle " << static_cast<int>(shuffle));
        const resident::EpochOptions order{1, 0, shuffle};
        {
          auto epoch = ds.epoch(order);
          same(ds, epoch);
        }
        {
          auto epoch = ds.epoch(order, resident::convert<0>(TestFixture::halve()));
          same(ds, epoch);
        }
        {
          auto epoch =
              ds.epoch(order, resident::augment<0>(image, resident::RandomCrop{1},
                                                   resident::RandomFlip{}, resident::Cutout{2}));
          same(ds, epoch);
        }
        {
          auto epoch = ds.epoch(order, resident::augment<0>(image, resident::RandomCrop{1}),
                                resident::convert<0>(TestFixture::halve()));
          same(ds, epoch);
        }
        {
          auto epoch = ds.epoch(order, resident::convert<1>(TestFixture::halve()));
          same(ds, epoch);
        }
      }
    }
  }
}

TYPED_TEST(ToTensor, TokenBatchesOfEveryShuffleAreTensorsOfTheStream) {
  std::vector<std::int32_t> tokens(1000);
  for (std::size_t i = 0; i < tokens.size(); ++i) tokens[i] = static_cast<std::int32_t>(i * 7);
  DatasetOptions options;
  options.batch_size = 4;
  resident::TokenDataset ds(this->space_, options, resident::TokenOptions{16, 0},
                            HostTensor<const std::int32_t>(tokens.data(), {tokens.size()}));
  for (Shuffle shuffle : {Shuffle::none, Shuffle::batches, Shuffle::samples}) {
    auto epoch = ds.epoch({9, 0, shuffle});
    for (std::size_t k = 0; k < epoch.size(); ++k) {
      const auto [x, y] = resident::to_tensors(epoch, k);
      const auto [vx, vy] = epoch.batch(k);
      this->expect_same(ds, x, vx, torch::kInt32);
      this->expect_same(ds, y, vy, torch::kInt32);
      const auto xs = tensor_values<std::int32_t>(x);
      const auto ys = tensor_values<std::int32_t>(y);
      for (std::size_t i = 0; i < xs.size(); ++i) ASSERT_EQ(ys[i], xs[i] + 7) << i;
    }
  }
}

// A gathered batch's tensors keep the ring they lie in: after the epoch, after the ring grew
// into another allocation for a wider epoch, and after the dataset is destroyed.
TYPED_TEST(ToTensor, GatheredTensorsOutliveTheEpochTheRingAndTheDataset) {
  constexpr std::size_t rows = 20;
  constexpr std::size_t row_bytes = std::size_t{3} * 32 * 32;  // slots of pages, not bytes
  const std::vector<std::uint8_t> images = values<std::uint8_t>(rows * row_bytes);
  const std::vector<double> labels = values<double>(rows);
  torch::Tensor pixels;
  torch::Tensor reals;
  std::vector<std::uint8_t> pixel_values;
  std::vector<double> real_values;
  {
    DatasetOptions options;
    options.batch_size = 8;
    options.ring_element_bytes = 1;  // a ring for the stored bytes, not for a conversion's floats
    DeviceDataset ds(this->space_, options,
                     HostTensor<const std::uint8_t>(images.data(), {rows, 3, 32, 32}),
                     HostTensor<const double>(labels.data(), {rows}));
    {
      auto epoch = ds.epoch({4, 2, Shuffle::samples});
      const auto batch = resident::to_tensors(epoch, 1);
      pixels = batch[0];
      reals = batch[1];
      pixel_values = read_back(ds.space(), ds.stream(), std::get<0>(epoch.batch(1)));
      real_values = read_back(ds.space(), ds.stream(), std::get<1>(epoch.batch(1)));
    }
    const std::size_t ring = ds.ring_bytes();
    // A conversion of the bytes to float needs slots four times as wide: the ring grows into
    // another allocation, and this epoch's gathers write there, not into the tensors' memory.
    auto wider = ds.epoch({4, 3, Shuffle::samples}, resident::convert<0>(TestFixture::halve()));
    for (std::size_t k = 0; k < wider.size(); ++k) (void)wider.batch(k);
    EXPECT_GT(ds.ring_bytes(), ring);
    EXPECT_EQ(tensor_values<std::uint8_t>(pixels), pixel_values);
  }
  EXPECT_EQ(tensor_values<std::uint8_t>(pixels), pixel_values);
  EXPECT_EQ(tensor_values<double>(reals), real_values);
  EXPECT_EQ(pixels.sizes(), torch::IntArrayRef({8, 3, 32, 32}));
}

TYPED_TEST(ToTensor, ZeroCopyTensorsOutliveTheDataset) {
  const Fields fields;
  torch::Tensor tensor;
  {
    auto ds = fields.dataset(this->space_, 8);
    tensor = resident::to_tensor(ds, std::get<5>(ds.batch(2)));
  }
  ASSERT_EQ(tensor.size(0), 8);
  const auto got = tensor_values<float>(tensor);
  for (std::size_t i = 0; i < got.size(); ++i)
    EXPECT_EQ(got[i], fields.f32[std::size_t{16} * 3 + i]) << i;
}

// A streamed batch's tensors hold the memory they lie in (chunk slots, or the gather ring)
// after the epoch and the dataset are gone: their values are the batch's, read after both.
TYPED_TEST(ToTensor, StreamedTensorsOutliveTheEpochAndTheDataset) {
  std::vector<std::int64_t> ids(100);
  for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<std::int64_t>(i);
  const HostTensor<const std::int64_t> tensor(ids.data(), {ids.size()});
  DatasetOptions options;
  options.batch_size = 10;
  options.streaming.chunk_batches = 2;
  for (const Shuffle shuffle : {Shuffle::none, Shuffle::samples}) {
    torch::Tensor kept;
    std::vector<std::int64_t> expected;
    {
      resident::StreamingDataset<TypeParam, std::int64_t> ds(this->space_, options, tensor);
      auto epoch = ds.epoch({3, 0, shuffle});
      const auto [x] = resident::to_tensors(epoch, 3);
      kept = x;
      expected = tensor_values<std::int64_t>(x);
    }
    EXPECT_EQ(tensor_values<std::int64_t>(kept), expected)
        << resident::testing::shuffle_name(shuffle);
    EXPECT_EQ(expected.size(), 10U);
  }
}

// Holding a TensorBatch over a chunk slot does not stop its epoch from reading on: past the
// view's bound the slot is loaded again, and the batch's release says so.
TEST(ToTensorStreamed, ABatchHeldPastItsBoundIsRefusedAtItsRelease) {
  std::vector<std::int64_t> ids(100);
  for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<std::int64_t>(i);
  DatasetOptions options;
  options.batch_size = 10;
  options.streaming = resident::StreamOptions{1, 3, 1};
  resident::StreamingDataset<resident::HostSpace, std::int64_t> ds(
      resident::HostSpace{}, options, HostTensor<const std::int64_t>(ids.data(), {ids.size()}));
  auto epoch = ds.epoch({1, 0, Shuffle::none});
  auto held = resident::to_tensors(epoch, 0);
  EXPECT_EQ(tensor_values<std::int64_t>(held[0]).front(), 0);
  for (std::size_t k = 1; k < epoch.size(); ++k) (void)epoch.batch(k);
  EXPECT_THROW(held.release(), resident::Error);
}

// A batch of tensors releases its batch once: at `release()` or at its end, whichever is first;
// not once moved from, nor once its epoch is gone; and `release()` says when the slot already
// holds another batch.
TYPED_TEST(ToTensor, ABatchOfTensorsReleasesItsBatchOnce) {
  const Fields fields;
  auto ds = fields.dataset(this->space_, 4);
  auto epoch = ds.epoch({1, 0, Shuffle::samples});
  const std::size_t depth = DatasetOptions{}.ring_depth;
  {
    auto first = resident::to_tensors(epoch, 0);
    auto moved = std::move(first);
    moved.release();
    (void)epoch.batch(depth);  // the slot of batch 0 now holds batch depth: a release would throw
    EXPECT_NO_THROW(moved.release());  // nothing the second time
    EXPECT_NO_THROW(first.release());  // NOLINT(bugprone-use-after-move): nothing once moved from
    EXPECT_EQ(moved.index(), 0U);
  }
  auto stale = resident::to_tensors(epoch, 1);
  (void)epoch.batch(1 + depth);  // the slot of batch 1 now holds batch 1 + depth
  try {
    stale.release();
    ADD_FAILURE() << "released a batch whose slot holds another";
  } catch (const resident::Error& error) {
    EXPECT_NE(std::string(error.what()).find("not in the ring"), std::string::npos) << error.what();
  }
  auto last = resident::to_tensors(epoch, 2);
  { auto gone = std::move(epoch); }
  last.release();  // the epoch is gone: nothing left to order
  EXPECT_EQ(tensor_values<std::uint8_t>(last[0]).size(), 4U * 6);
}

// The members a moved-from TensorBatch case calls, recorded by name so that they can be compared
// with the `@torch` lines of the moved-from suite's list; with `calling` false only recorded.
class BatchCases {
 public:
  explicit BatchCases(bool calling) : calling_(calling) {}

  /// `use` answers as for an empty batch; it checks its answer itself.
  void answers(const std::string& member, const std::function<void()>& use) {
    called_.insert(member);
    if (!calling_) return;
    SCOPED_TRACE("resident::TensorBatch::" + member);
    use();
  }

  /// Whether the members are called (else only recorded): what the code around the cases
  /// checks is skipped too.
  [[nodiscard]] bool calling() const noexcept { return calling_; }

  [[nodiscard]] const std::set<std::string>& called() const { return called_; }

 private:
  bool calling_;
  std::set<std::string> called_;
};

// Every public member of a TensorBatch moved from, of batch `k` of an epoch of `shuffle`: a
// moved-from batch holds undefined tensors, keeps its index and releases nothing (not even once
// the epoch has gathered another batch into its slot, when a release would throw); assigned a
// batch, it is that batch. The moved-from object outlives its epoch, so that its destructor runs
// with the epoch gone.
template <class Space>
void moved_from_batch_cases(BatchCases& cases, const Space& space, Shuffle shuffle) {
  const Fields fields;
  auto ds = fields.dataset(space, 4);
  using Batch = resident::TensorBatch<decltype(ds.epoch(resident::EpochOptions{}))>;
  std::optional<Batch> from;
  {
    auto epoch = ds.epoch({1, 0, shuffle});
    const std::size_t depth = DatasetOptions{}.ring_depth;
    const std::size_t k = 1;
    from.emplace(resident::to_tensors(epoch, k));
    const auto to = std::move(*from);
    ASSERT_TRUE(to[0].defined());
    (void)epoch.batch(k + depth);  // a gathered batch's slot now holds another batch
    Batch& batch = *from;          // NOLINT(bugprone-use-after-move): what the cases call
    static_assert(std::tuple_size_v<Batch> == Batch::fields && Batch::fields == 7);

    cases.answers("operator[]", [&] {
      for (std::size_t field = 0; field < Batch::fields; ++field)
        EXPECT_FALSE(batch[field].defined()) << field;
      EXPECT_THROW((void)batch[Batch::fields], std::out_of_range);  // as for any batch
    });
    cases.answers("get", [&] {
      EXPECT_FALSE(batch.template get<0>().defined());
      EXPECT_FALSE(batch.template get<Batch::fields - 1>().defined());
      const auto& [u8, i8, i16, i32, i64, f32, f64] = batch;
      EXPECT_FALSE(u8.defined() || i8.defined() || i16.defined() || i32.defined() ||
                   i64.defined() || f32.defined() || f64.defined());
    });
    cases.answers("index", [&] { EXPECT_EQ(batch.index(), k); });
    cases.answers("release", [&] {
      EXPECT_NO_THROW(batch.release());  // the release went with the tensors
      EXPECT_NO_THROW(batch.release());
    });
    cases.answers("operator=", [&] {
      Batch& alias = batch;  // a self-move, which leaves it moved-from
      batch = std::move(alias);
      EXPECT_FALSE(batch[0].defined());
      auto other = resident::to_tensors(epoch, 2);
      const auto taken = std::move(other);
      batch = std::move(other);  // NOLINT(bugprone-use-after-move): moved-from into moved-from
      EXPECT_FALSE(batch[0].defined());
      EXPECT_NO_THROW(batch.release());
      // Reused: it is batch 3 now, and releases it once.
      batch = resident::to_tensors(epoch, 3);
      EXPECT_EQ(batch.index(), 3U);
      EXPECT_EQ(batch[0].data_ptr(), static_cast<const void*>(std::get<0>(epoch.batch(3)).data()));
      EXPECT_NO_THROW(batch.release());
      // Moved from again, by construction this time.
      const Batch moved(std::move(batch));
      EXPECT_FALSE(batch[0].defined());  // NOLINT(bugprone-use-after-move): moved from again
      EXPECT_EQ(moved.index(), 3U);
    });
  }
  // The epoch is gone: the moved-from batch still releases nothing, and its destructor (when
  // `from` is reset) neither.
  if (cases.calling()) {
    EXPECT_NO_THROW(from->release());
    EXPECT_FALSE((*from)[0].defined());
  }
  from.reset();
}

TYPED_TEST(ToTensor, AMovedFromBatchOfTensorsHoldsUndefinedTensorsAndIsReusable) {
  for (const Shuffle shuffle : {Shuffle::samples, Shuffle::none}) {
    SCOPED_TRACE(shuffle == Shuffle::samples ? "a gathered batch" : "a zero-copy batch");
    BatchCases cases(true);
    moved_from_batch_cases(cases, this->space_, shuffle);
  }
}

// The moved-from suite's list (tests/adversarial/moved_from_members.txt), which
// scripts/public-members.py compares with the headers, names TensorBatch's members with `@torch`:
// called here, since only this test links libtorch. Each such line has a case above, and each
// case a line.
std::string moved_from_cases_file() {
  return std::string(RESIDENT_TEST_SOURCE_DIR) + "/adversarial/moved_from_members.txt";
}

TEST(MovedFromTensorBatch, EveryTorchLineOfTheListHasACaseAndEveryCaseALine) {
  BatchCases cases(false);
  moved_from_batch_cases(cases, resident::HostSpace{}, Shuffle::samples);
  std::ifstream in(moved_from_cases_file());
  ASSERT_TRUE(in) << "cannot read " << moved_from_cases_file();
  std::set<std::string> listed;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line.substr(0, line.find('#')));
    std::string owner, member, mark;
    if (!(words >> owner >> member)) continue;
    const bool here = static_cast<bool>(words >> mark) && mark == "@torch";
    if (here) {
      EXPECT_EQ(owner, "resident::TensorBatch") << line << ": only TensorBatch's cases are here";
      listed.insert(member);
    } else if (owner == "resident::TensorBatch" && member != "n/a") {
      EXPECT_EQ(cases.called().count(member), 0U)
          << line << ": has a case here; mark it `@torch` instead of a reason";
    }
  }
  EXPECT_FALSE(listed.empty()) << "no @torch line in " << moved_from_cases_file();
  for (const std::string& member : listed)
    EXPECT_EQ(cases.called().count(member), 1U)
        << "resident::TensorBatch " << member << " @torch is listed but has no case here";
  for (const std::string& member : cases.called())
    EXPECT_EQ(listed.count(member), 1U)
        << "resident::TensorBatch::" << member << " has a case but no `@torch` line in the list";
}

TYPED_TEST(ToTensor, RefusesWhatItCannotShare) {
  const Fields fields;
  auto ds = fields.dataset(this->space_, 8);
  auto other = fields.dataset(this->space_, 8);
  const auto says = [](auto&& call, const std::string& text) {
    try {
      (void)call();
      ADD_FAILURE() << "accepted; expected: " << text;
    } catch (const resident::InvalidArgument& error) {
      EXPECT_NE(std::string(error.what()).find(text), std::string::npos) << error.what();
    }
  };
  says([&] { return resident::to_tensor(ds, other.template field<3>()); },
       "the view lies outside it");
  auto epoch = other.epoch({0, 0, Shuffle::samples});
  const auto gathered = std::get<3>(epoch.batch(0));
  says([&] { return resident::to_tensor(ds, gathered); }, "another dataset's");
  // A gathered view of an epoch that ended, whose ring the dataset released when a wider epoch
  // needed wider slots; a live epoch's gathered view is shared.
  DatasetOptions narrow;
  narrow.batch_size = 8;
  narrow.ring_element_bytes = 1;
  const std::vector<std::uint8_t> bytes = values<std::uint8_t>(kRows * 64);
  DeviceDataset pixels(this->space_, narrow,
                       HostTensor<const std::uint8_t>(bytes.data(), {kRows, 64}));
  const auto released = std::get<0>(pixels.epoch({0, 0, Shuffle::samples}).batch(0));
  auto wider = pixels.epoch({0, 1, Shuffle::samples}, resident::convert<0>(TestFixture::halve()));
  (void)wider.batch(0);
  says([&] { return resident::to_tensor(pixels, released); }, "whose ring the dataset has");
  auto live = pixels.epoch({0, 2, Shuffle::samples});
  const auto kept = std::get<0>(live.batch(0));
  EXPECT_EQ(resident::to_tensor(pixels, kept).numel(), static_cast<std::int64_t>(kept.size()));
  auto moved = std::move(ds);
  const auto field = moved.template field<3>();
  // NOLINTNEXTLINE(bugprone-use-after-move): the refusal of a moved-from dataset
  says([&] { return resident::to_tensor(ds, field); }, "moved-from dataset");
}

TYPED_TEST(ToTensor, AFieldPastTheLastIsOutOfRange) {
  const Fields fields;
  auto ds = fields.dataset(this->space_, 8);
  auto epoch = ds.epoch({0, 0, Shuffle::samples});
  const auto batch = resident::to_tensors(epoch, 0);
  EXPECT_EQ(batch[6].scalar_type(), torch::kFloat64);
  try {
    (void)batch[7];
    ADD_FAILURE() << "field 7 of 7 was given";
  } catch (const std::out_of_range& error) {
    EXPECT_NE(std::string(error.what()).find("the batch has 7 fields"), std::string::npos)
        << error.what();
  }
  EXPECT_THROW((void)resident::to_tensors(epoch, epoch.size()), std::out_of_range);
}

// make_dataset's Dataset gives tensors whether it preloads or streams, and so does a
// StreamingDataset: the same loop, the same values, under every shuffle and with a conversion
// per field; a batch a stream serves from its chunk slots is a tensor over the slot.
TYPED_TEST(ToTensor, EveryDatasetGivesTensorsPreloadedOrStreamed) {
  std::vector<std::int64_t> ids(1000);
  std::vector<std::int32_t> labels(ids.size());
  for (std::size_t i = 0; i < ids.size(); ++i) {
    ids[i] = static_cast<std::int64_t>(i);
    labels[i] = static_cast<std::int32_t>(i % 7);
  }
  const HostTensor<const std::int64_t> x(ids.data(), {ids.size()});
  const HostTensor<const std::int32_t> y(labels.data(), {labels.size()});
  DatasetOptions options;
  options.batch_size = 10;
  options.streaming.chunk_batches = 3;
  // A budget, so that the free bytes the tight reserve is cut from stay what they were: the
  // host's free memory moves with every other process.
  const auto space = resident::testing::budgeted_space<TypeParam>();
  auto roomy = resident::make_dataset(space, options, x, y);
  ASSERT_FALSE(roomy.is_streaming());
  DatasetOptions tight = options;
  tight.reserve_bytes = space.capacity().free_bytes - (std::size_t{12} << 10);
  auto streamed = resident::make_dataset(space, tight, x, y);
  ASSERT_TRUE(streamed.is_streaming()) << streamed.plan();
  resident::StreamingDataset<TypeParam, std::int64_t, std::int32_t> stream(space, options, x, y);
  const auto cast = resident::convert<1>(resident::Cast<std::int64_t>{});
  for (const Shuffle shuffle : {Shuffle::none, Shuffle::batches, Shuffle::samples}) {
    SCOPED_TRACE(resident::testing::shuffle_name(shuffle));
    const resident::EpochOptions at{2, 1, shuffle};
    auto expected = roomy.epoch(at, cast);
    const auto check = [&](auto& epoch, const char* what) {
      ASSERT_EQ(epoch.size(), expected.size()) << what;
      std::vector<int> seen(ids.size(), 0);
      for (std::size_t k = 0; k < epoch.size(); ++k) {
        const auto [ids_k, labels_k] = resident::to_tensors(epoch, k);
        EXPECT_EQ(labels_k.scalar_type(), torch::kLong);
        const auto [want_ids, want_labels] = resident::to_tensors(expected, k);
        ASSERT_EQ(tensor_values<std::int64_t>(ids_k), tensor_values<std::int64_t>(want_ids))
            << what << ", batch " << k;
        ASSERT_EQ(tensor_values<std::int64_t>(labels_k), tensor_values<std::int64_t>(want_labels))
            << what << ", batch " << k;
        for (const std::int64_t id : tensor_values<std::int64_t>(ids_k))
          ++seen[static_cast<std::size_t>(id)];
      }
      EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), static_cast<std::ptrdiff_t>(ids.size()))
          << what;
    };
    auto from_plan = streamed.epoch(at, cast);
    check(from_plan, "make_dataset, streamed");
    auto from_stream = stream.epoch(at, cast);
    check(from_stream, "StreamingDataset");
    // Unconverted and unshuffled, a streamed batch is a view of a chunk slot: the tensor lies
    // there, zero-copy.
    auto plain = stream.epoch(at);
    const auto batch = resident::to_tensors(plain, 1);
    EXPECT_EQ(batch[0].data_ptr(), static_cast<const void*>(std::get<0>(plain.batch(1)).data()));
  }
}

#if RESIDENT_HAS_CUDA
// Device memory with a libtorch without CUDA (a CPU-only build): refused with the remedy,
// rather than with libtorch's own error when the tensor is first used.
TEST(ToTensorWithoutTorchCuda, IsRefusedWithTheRemedy) {
  resident::testing::skip_unless_usable<resident::CudaSpace>();
  if (testing::Test::IsSkipped()) return;
  if (torch_reaches<resident::CudaSpace>())
    GTEST_SKIP() << "this libtorch has CUDA: the typed tests make CUDA tensors";
  const Fields fields;
  const auto ds = fields.dataset(resident::CudaSpace{}, 8);
  try {
    (void)resident::to_tensor(ds, ds.template field<0>());
    ADD_FAILURE() << "a CUDA tensor without libtorch's CUDA was made";
  } catch (const resident::InvalidArgument& error) {
    EXPECT_NE(std::string(error.what()).find("link a libtorch built with CUDA"), std::string::npos)
        << error.what();
  }
}
#endif

}  // namespace
