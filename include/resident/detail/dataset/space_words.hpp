// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// A small table of 64-bit words in a dataset's space (a subset's row map, a mixture's sources),
// which its gathers read where they read the rows: checked against the capacity before it is
// made, as every allocation is, and complete on return.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "resident/detail/checked_math.hpp"
#include "resident/detail/dataset/dataset_core.hpp"
#include "resident/detail/resources.hpp"

namespace resident::detail {

/// @brief `words` 64-bit words in `core`'s space, made by `make()` (a `std::vector` of them)
/// only once they fit beside the reserve: a refusal names `subject` and advises `advice`.
/// Empty for no words.
/// @throws CapacityError when they do not fit; what the space's copies throw. Strong guarantee.
template <class Space, std::size_t Fields, class Make>
Allocation<Space> space_words(const DatasetCore<Space, Fields>& core, std::size_t words,
                              const Make& make, const char* subject, const std::string& advice) {
  if (words == 0) return {};
  const std::size_t bytes = checked_mul(words, sizeof(std::uint64_t), subject);
  const CapacityVerdict verdict = check_capacity(core.space(), core.config().reserve_bytes, bytes);
  if (!verdict.fits) throw verdict.refusal(advice, subject);
  const std::vector<std::uint64_t> host = make();
  Allocation<Space> allocation(core.space(), bytes, core.stream(), core.stream_keep_alive());
  core.space().copy_from_host(allocation.data(), host.data(), bytes, core.stream());
  core.space().synchronize(core.stream());
  return allocation;
}

}  // namespace resident::detail
