// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// Must not compile, in each of its cases (chosen by RESIDENT_REFUSED_CASE): a refusal that
// resident/torch.hpp makes when compiled, with a sentence. ctest builds each case's target and
// passes when the compiler prints that sentence; nothing else builds them.
//   1: libtorch 1.13 has no uint32 tensors, so `to_tensor` over such a field is refused.
//   2: a tensor shares the memory of the dataset a view came from: `to_tensor` of an epoch (not
//      its dataset) is refused.

#include <cstdint>
#include <tuple>
#include <vector>

#include "resident/device_dataset.hpp"
#include "resident/host_space.hpp"
#include "resident/streaming_dataset.hpp"
#include "resident/torch.hpp"

int main() {
#if RESIDENT_REFUSED_CASE == 1
  const std::uint32_t tokens[4] = {1, 2, 3, 4};  // NOLINT(modernize-avoid-c-arrays)
  const resident::DeviceDataset ds(resident::HostSpace{}, resident::DatasetOptions{},
                                   resident::HostTensor<const std::uint32_t>(tokens, {4}));
  return resident::to_tensor(ds, ds.field<0>()).numel() == 4 ? 0 : 1;
#elif RESIDENT_REFUSED_CASE == 2
  const std::vector<float> values(64, 1.0f);
  resident::StreamingDataset ds(resident::HostSpace{}, resident::DatasetOptions{},
                                resident::HostTensor<const float>(values.data(), {64}));
  auto epoch = ds.epoch({});
  return resident::to_tensor(epoch, std::get<0>(epoch.batch(0))).numel() > 0 ? 0 : 1;
#else
#error "RESIDENT_REFUSED_CASE names no case"
#endif
}
