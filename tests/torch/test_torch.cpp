// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// to_tensor against libtorch: every element type libtorch has, the right dtype, shape, device and
// values, zero-copy, for fields and for the batches of the zero-copy shuffles; tensors that
// outlive the dataset; views it cannot share, refused. Built with RESIDENT_WITH_TORCH.

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "resident/device_dataset.hpp"
#include "resident/host_space.hpp"
#include "resident/token_dataset.hpp"
#include "resident/torch.hpp"

namespace {

using resident::DatasetOptions;
using resident::DeviceDataset;
using resident::HostSpace;
using resident::HostTensor;
using resident::Shuffle;

static_assert(!resident::detail::has_torch_dtype<std::uint16_t> &&
                  !resident::detail::has_torch_dtype<std::uint32_t> &&
                  !resident::detail::has_torch_dtype<std::uint64_t>,
              "libtorch 1.13 has no unsigned type wider than a byte: to_tensor refuses them");

constexpr std::size_t kRows = 37;

struct Fields {
  std::vector<std::uint8_t> u8 = values<std::uint8_t>(kRows * 6);
  std::vector<std::int8_t> i8 = values<std::int8_t>(kRows);
  std::vector<std::int16_t> i16 = values<std::int16_t>(kRows * 2);
  std::vector<std::int32_t> i32 = values<std::int32_t>(kRows);
  std::vector<std::int64_t> i64 = values<std::int64_t>(kRows);
  std::vector<float> f32 = values<float>(kRows * 3);
  std::vector<double> f64 = values<double>(kRows);

  template <class T>
  static std::vector<T> values(std::size_t count) {
    std::vector<T> out(count);
    for (std::size_t i = 0; i < count; ++i) out[i] = static_cast<T>((i * 37 + 11) % 101);
    return out;
  }
  [[nodiscard]] DeviceDataset<HostSpace, std::uint8_t, std::int8_t, std::int16_t, std::int32_t,
                              std::int64_t, float, double>
  dataset(std::size_t batch) const {
    DatasetOptions options;
    options.batch_size = batch;
    return {HostSpace{},
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

// `tensor` is `view`, zero-copy: its dtype, shape, device, address and every value.
template <class T>
void expect_same(const torch::Tensor& tensor, resident::BatchView<const T> view,
                 c10::ScalarType dtype) {
  EXPECT_EQ(tensor.scalar_type(), dtype);
  EXPECT_EQ(tensor.device(), torch::Device(torch::kCPU));
  EXPECT_TRUE(tensor.is_contiguous());
  const resident::Shape shape = view.shape();
  ASSERT_EQ(static_cast<std::size_t>(tensor.dim()), shape.rank());
  for (std::size_t axis = 0; axis < shape.rank(); ++axis)
    EXPECT_EQ(static_cast<std::size_t>(tensor.size(static_cast<std::int64_t>(axis))), shape[axis]);
  EXPECT_EQ(tensor.data_ptr(), static_cast<const void*>(view.data()));
  const torch::Tensor flat = tensor.reshape({-1});
  for (std::size_t i = 0; i < view.size(); ++i)
    ASSERT_EQ(flat[static_cast<std::int64_t>(i)].item<T>(), view.data()[i]) << i;
}

TEST(ToTensor, EveryFieldHasItsDtypeShapeAndValues) {
  const Fields fields;
  const auto ds = fields.dataset(8);
  expect_same(resident::to_tensor(ds, ds.field<0>()), ds.field<0>(), torch::kUInt8);
  expect_same(resident::to_tensor(ds, ds.field<1>()), ds.field<1>(), torch::kInt8);
  expect_same(resident::to_tensor(ds, ds.field<2>()), ds.field<2>(), torch::kInt16);
  expect_same(resident::to_tensor(ds, ds.field<3>()), ds.field<3>(), torch::kInt32);
  expect_same(resident::to_tensor(ds, ds.field<4>()), ds.field<4>(), torch::kInt64);
  expect_same(resident::to_tensor(ds, ds.field<5>()), ds.field<5>(), torch::kFloat32);
  expect_same(resident::to_tensor(ds, ds.field<6>()), ds.field<6>(), torch::kFloat64);
}

TEST(ToTensor, BoolFieldsAreBoolTensors) {
  std::vector<std::uint8_t> bytes = Fields::values<std::uint8_t>(kRows);
  bool values[kRows];  // NOLINT(modernize-avoid-c-arrays): contiguous bools
  for (std::size_t i = 0; i < kRows; ++i) values[i] = bytes[i] % 2 == 1;
  DeviceDataset ds(HostSpace{}, DatasetOptions{}, HostTensor<const bool>(values, {kRows}));
  expect_same(resident::to_tensor(ds, ds.field<0>()), ds.field<0>(), torch::kBool);
}

TEST(ToTensor, ZeroCopyBatchesOfEveryViewShuffleAreTheirRows) {
  const Fields fields;
  auto ds = fields.dataset(8);
  for (Shuffle shuffle : {Shuffle::none, Shuffle::batches}) {
    for (auto batch : ds.epoch({3, 1, shuffle})) {
      expect_same(resident::to_tensor(ds, std::get<0>(batch)), std::get<0>(batch), torch::kUInt8);
      expect_same(resident::to_tensor(ds, std::get<5>(batch)), std::get<5>(batch), torch::kFloat32);
    }
  }
}

TEST(ToTensor, TokenBatchesAreTensorsOfTheStream) {
  std::vector<std::int32_t> tokens(1000);
  for (std::size_t i = 0; i < tokens.size(); ++i) tokens[i] = static_cast<std::int32_t>(i * 7);
  DatasetOptions options;
  options.batch_size = 4;
  resident::TokenDataset ds(HostSpace{}, options, resident::TokenOptions{16, 0},
                            HostTensor<const std::int32_t>(tokens.data(), {tokens.size()}));
  const auto [x, y] = ds.batch(3);
  const torch::Tensor tx = resident::to_tensor(ds, x);
  const torch::Tensor ty = resident::to_tensor(ds, y);
  expect_same(tx, x, torch::kInt32);
  expect_same(ty, y, torch::kInt32);
  EXPECT_TRUE(torch::equal(tx.reshape({-1}).slice(0, 1), ty.reshape({-1}).slice(0, 0, -1)));
}

TEST(ToTensor, TheTensorOutlivesTheDataset) {
  const Fields fields;
  torch::Tensor tensor;
  {
    auto ds = fields.dataset(8);
    tensor = resident::to_tensor(ds, std::get<5>(ds.batch(2)));
  }
  ASSERT_EQ(tensor.size(0), 8);
  for (std::int64_t r = 0; r < 8; ++r)
    for (std::int64_t c = 0; c < 3; ++c)
      EXPECT_EQ(tensor[r][c].item<float>(), fields.f32[static_cast<std::size_t>((16 + r) * 3 + c)]);
}

TEST(ToTensor, RefusesWhatItCannotShare) {
  const Fields fields;
  auto ds = fields.dataset(8);
  auto other = fields.dataset(8);
  const auto says = [](auto&& call, const std::string& text) {
    try {
      (void)call();
      ADD_FAILURE() << "accepted; expected: " << text;
    } catch (const resident::InvalidArgument& error) {
      EXPECT_NE(std::string(error.what()).find(text), std::string::npos) << error.what();
    }
  };
  says([&] { return resident::to_tensor(ds, other.field<3>()); }, "the view lies outside it");
  auto epoch = ds.epoch({0, 0, Shuffle::samples});
  const auto gathered = std::get<3>(epoch.batch(0));
  says([&] { return resident::to_tensor(ds, gathered); }, "a gathering epoch's ring slot");
  auto moved = std::move(ds);
  says(
      [&] { return resident::to_tensor(ds, moved.field<3>()); },  // NOLINT(bugprone-use-after-move)
      "moved-from dataset");
}

}  // namespace
