// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <type_traits>
#include <vector>

#include "resident/detail/row_source.hpp"
#include "resident/space_traits.hpp"

namespace resident::detail {

/// @brief The default `space_traits::chunk_transport`: how a streaming dataset loads chunks
/// into a space whose copies complete on the calling thread (the host space and spaces built
/// on it): the producer thread writes the slot itself, so a chunk is ready when its load
/// returns and nothing needs ordering. Files are read straight into the slots of a space that
/// is `host_writable`; other spaces see every byte go through their `copy_from_host`
/// (fault-injecting test spaces count on it).
template <class Space>
class HostChunkTransport {
 public:
  using stream_type = typename Space::stream_type;

  /// Sources are never read by a copy engine here: nothing to ask.
  template <class Sources>
  [[nodiscard]] static constexpr bool sources_pinned(const Space& /*space*/,
                                                     const Sources& /*sources*/) noexcept {
    return false;
  }

  HostChunkTransport(const Space& space, stream_type stream, std::size_t /*slots*/,
                     std::size_t /*slot_bytes*/, bool /*pinned_sources*/, unsigned /*threads*/)
      : space_(space), stream_(stream) {}

  /// Producer thread: writes `copies` into `slot`; done when it returns.
  void load(std::size_t /*slot_index*/, std::byte* slot, const std::vector<ChunkCopy>& copies) {
    for (const ChunkCopy& copy : copies) {
      std::byte* to = slot + copy.offset;
      if (const std::byte* from = copy.source->memory()) {
        space_.copy_from_host(to, from + copy.first_row * copy.source->row_bytes(), copy.bytes(),
                              stream_);
      } else if constexpr (space_traits<Space>::host_writable) {
        copy.source->read(copy.first_row, copy.rows, to);
      } else {
        bounce_.resize(copy.bytes());
        copy.source->read(copy.first_row, copy.rows, bounce_.data());
        space_.copy_from_host(to, bounce_.data(), copy.bytes(), stream_);
      }
    }
    space_.synchronize(stream_);
  }
  void acquire(std::size_t /*slot_index*/) const noexcept {}  // loaded on the host already
  void release(std::size_t /*slot_index*/) const noexcept {}  // host readers are done
  void wait(std::size_t /*slot_index*/, stream_type /*consumer*/) const noexcept {}
  void join(stream_type /*consumer*/) const noexcept {}
  void drain() const noexcept {}

 private:
  Space space_;
  stream_type stream_;
  std::vector<std::byte> bounce_;
};

}  // namespace resident::detail
