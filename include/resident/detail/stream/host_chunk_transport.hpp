// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <algorithm>
#include <cstddef>
#include <type_traits>
#include <vector>

#include "resident/detail/gather/host_gather.hpp"
#include "resident/detail/io/bus_faults.hpp"
#include "resident/detail/stream/chunk_copy.hpp"
#include "resident/detail/stream/chunk_pipeline.hpp"
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
                     std::size_t /*slot_bytes*/, bool /*pinned_sources*/, bool /*gathers*/,
                     unsigned /*threads*/)
      : space_(space), stream_(stream) {}

  /// Producer thread: writes `copies` into `slot`; done when it returns. The copies are cut
  /// into pieces of about `piece_bytes` that a reader waiting for the chunk runs too (see
  /// `SharedPieces`); a file's ranges are announced to the kernel first, so that its readahead
  /// runs ahead of every piece.
  void load(std::size_t /*slot_index*/, std::byte* slot, const std::vector<ChunkCopy>& copies,
            SharedPieces& pieces) {
    pieces_.clear();
    for (const ChunkCopy& copy : copies) {
      if (copy.bytes() == 0) continue;  // a field of zero-byte rows: nothing to copy
      if (copy.source->memory() == nullptr && !space_traits<Space>::host_writable) {
        bounce(slot, copy);  // through one bounce buffer: not shared
        continue;
      }
      if (copy.gathered == nullptr) copy.source->advise_will_read(copy.first_row, copy.rows);
      const std::size_t rows_per_piece =
          std::max<std::size_t>(1, piece_bytes / copy.source->row_bytes());
      for (std::size_t first = 0; first < copy.rows; first += rows_per_piece)
        pieces_.push_back({&copy, first, std::min(rows_per_piece, copy.rows - first)});
    }
    pieces.run(pieces_.size(), [&](std::size_t index) {
      const BusFaultsDelivered faults;  // a file's mapping cut meanwhile: zeros, then the check
      const Piece& piece = pieces_[index];
      const ChunkCopy& copy = *piece.copy;
      const std::size_t row_bytes = copy.source->row_bytes();
      std::byte* to = slot + copy.offset + piece.first * row_bytes;
      const std::byte* from = copy.source->memory();
      if (from == nullptr) {
        copy.read(piece.first, piece.rows, to);
      } else if (copy.gathered == nullptr) {
        copy.source->await_rows(copy.first_row + piece.first + piece.rows);
        space_.copy_from_host(to, from + (copy.first_row + piece.first) * row_bytes,
                              piece.rows * row_bytes, stream_);
      } else {
        const std::size_t* rows = copy.gathered + piece.first;
        copy.source->await_rows(*std::max_element(rows, rows + piece.rows) + 1);
        gather_rows(to, from, rows, piece.rows, row_bytes);
      }
      if (from != nullptr) copy.source->check_mapping();  // a file's mapping: still the file?
    });
    // Host writes are done when they return; a space that is not host-writable may have
    // ordered its copies on the stream.
    if constexpr (!space_traits<Space>::host_writable) space_.synchronize(stream_);
  }
  void acquire(std::size_t /*slot_index*/) const noexcept {}  // loaded on the host already
  void release(std::size_t /*slot_index*/) const noexcept {}  // host readers are done
  void wait(std::size_t /*slot_index*/, stream_type /*consumer*/) const noexcept {}
  void reader_waits_for(stream_type /*consumer*/) const noexcept {}
  void drain() const noexcept {}

 private:
  /// Bytes of one shared piece: small enough that a waiting reader finds several per chunk,
  /// large enough that handing one over costs nothing next to its copy.
  static constexpr std::size_t piece_bytes = std::size_t{1} << 20;

  // Rows [first, first + rows) of `copy`.
  struct Piece {
    const ChunkCopy* copy;
    std::size_t first;
    std::size_t rows;
  };

  // Rows `rows[0..count)` of `from` into consecutive rows at `to`, asking for the lines of the
  // rows a few ahead first, as the epochs' host gather does: rows from random places are
  // nothing a hardware prefetcher predicts.
  void gather_rows(std::byte* to, const std::byte* from, const std::size_t* rows, std::size_t count,
                   std::size_t row_bytes) const {
    for (std::size_t r = 0; r < std::min(count, gather_prefetch_rows); ++r)
      prefetch_row(from + rows[r] * row_bytes, row_bytes);
    for (std::size_t r = 0; r < count; ++r) {
      if (r + gather_prefetch_rows < count)
        prefetch_row(from + rows[r + gather_prefetch_rows] * row_bytes, row_bytes);
      space_.copy_from_host(to + r * row_bytes, from + rows[r] * row_bytes, row_bytes, stream_);
    }
  }

  // A file's rows into a space that host code cannot write: read here, then copied in.
  void bounce(std::byte* slot, const ChunkCopy& copy) {
    bounce_.resize(copy.bytes());
    copy.read(0, copy.rows, bounce_.data());
    space_.copy_from_host(slot + copy.offset, bounce_.data(), copy.bytes(), stream_);
  }

  Space space_;
  stream_type stream_;
  std::vector<Piece> pieces_;
  std::vector<std::byte> bounce_;
};

}  // namespace resident::detail
