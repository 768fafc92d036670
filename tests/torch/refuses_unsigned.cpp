// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// Must not compile: libtorch 1.13 has no uint32 tensors, so `to_tensor` over such a field is a
// compile error that says so. ctest (torch.refuses_types_libtorch_lacks) builds this target and
// passes when the compiler prints that sentence; nothing else builds it.

#include <cstdint>

#include "resident/device_dataset.hpp"
#include "resident/host_space.hpp"
#include "resident/torch.hpp"

int main() {
  const std::uint32_t tokens[4] = {1, 2, 3, 4};  // NOLINT(modernize-avoid-c-arrays)
  const resident::DeviceDataset ds(resident::HostSpace{}, resident::DatasetOptions{},
                                   resident::HostTensor<const std::uint32_t>(tokens, {4}));
  return resident::to_tensor(ds, ds.field<0>()).numel() == 4 ? 0 : 1;
}
