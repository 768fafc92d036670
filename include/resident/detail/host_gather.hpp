// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "resident/convert.hpp"
#include "resident/detail/copy_workers.hpp"
#include "resident/detail/row_order.hpp"

namespace resident::detail {

/// Asks the caches for `bytes` at `address`, a line at a time (a hint: no effect elsewhere).
inline void prefetch_row(const void* address, std::size_t bytes) noexcept {
#if defined(__GNUC__)
  const auto* line = static_cast<const char*>(address);
  for (std::size_t at = 0; at < bytes; at += 64) __builtin_prefetch(line + at, 0, 0);
#else
  (void)address;
  (void)bytes;
#endif
}

/// @brief Gathers `rows` rows of `row_elements` elements from `source` into `destination`
/// in the order `order` gives, converting each element with `op` (none: `NoConversion`), on
/// the host's copy threads; writes the row ids to `indices` when it is not null.
template <class In, class Out, class Op>
void host_gather(const In* source, Out* destination, std::size_t row_elements,
                 const RowOrder& order, std::size_t rows, const Op& op, std::int64_t* indices,
                 CopyWorkers& workers) {
  workers.for_each_slice(0, rows, [&](std::size_t first, std::size_t last) {
    std::uint64_t next = first < last ? order.row(first) : 0;
    for (std::size_t r = first; r < last; ++r) {
      const std::uint64_t row = next;
      if (r + 1 < last) {
        // Rows come from random places, which no hardware prefetcher predicts: ask for the
        // next row while this one is copied, so that its DRAM latency overlaps the copy.
        next = order.row(r + 1);
        prefetch_row(source + next * row_elements, row_elements * sizeof(In));
      }
      if (indices != nullptr) indices[r] = static_cast<std::int64_t>(row);
      const In* from = source + row * row_elements;
      Out* to = destination + r * row_elements;
      if constexpr (std::is_same_v<Op, NoConversion>) {
        static_assert(std::is_same_v<In, Out>, "a gather without conversion keeps the type");
        std::memcpy(to, from, row_elements * sizeof(In));
      } else {
        for (std::size_t e = 0; e < row_elements; ++e) to[e] = op(from[e], e);
      }
    }
  });
}

}  // namespace resident::detail
