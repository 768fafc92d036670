// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// Epochs stopped and resumed on the device, with the kernels nvcc compiled: the same cases as
// the host's (tests/test_resume.cpp).
#include <gtest/gtest.h>

#include "resident/resident.hpp"
#include "support/resume_checks.hpp"
#include "support/spaces.hpp"

namespace {

using resident::CudaSpace;
using resident::Remainder;
using resident::Sharding;
using resident::Shuffle;

class DeviceResume : public ::testing::Test {
 protected:
  void SetUp() override { resident::testing::skip_unless_usable<CudaSpace>(); }
};

TEST_F(DeviceResume, AResumedEpochServesTheBatchesOfTheRunThatNeverStopped) {
  resident::testing::check_resume_equals_no_stop(CudaSpace{0});
}

TEST_F(DeviceResume, JobsResumeOnOtherWorldSizesServingEveryRowOnce) {
  for (const Sharding sharding : {Sharding::partitioned, Sharding::replicated}) {
    resident::testing::check_elastic<false>(CudaSpace{0}, sharding,
                                            {Shuffle::none, Shuffle::batches, Shuffle::samples},
                                            {Remainder::drop, Remainder::pad});
    resident::testing::check_elastic<true>(
        CudaSpace{0}, sharding, {Shuffle::batches, Shuffle::samples}, {Remainder::partial});
  }
}

}  // namespace
