// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// @brief `DatasetOptions` and `Remainder`: how a dataset is cut into batches, how much memory
/// it must leave free, how its upload runs, and which rank's share it holds.

#include <cstddef>
#include <iterator>
#include <optional>

#include "resident/progress.hpp"
#include "resident/shard.hpp"
#include "resident/stream_ref.hpp"

namespace resident {

/// @brief What happens to the last rows when the row count is not a multiple of the batch size.
enum class Remainder {
  drop,     ///< Every batch is full; the last `rows % batch_size` rows are not served.
  partial,  ///< The last batch holds the `rows % batch_size` rows left (PyTorch's default).
  /// The last batch is full: after the rows left come rows from the start of the order (the
  /// dataset's first rows, or the epoch's first positions under `Shuffle::samples`), and
  /// `BatchView::valid_rows()` says how many are real, so that a loss can mask the rest.
  /// The padding rows are stored with the dataset (at most `batch_size - 1` rows per field).
  pad,
};

/// @brief "drop", "partial" or "pad", for messages.
constexpr const char* remainder_name(Remainder remainder) noexcept {
  constexpr const char* names[] = {"drop", "partial", "pad"};
  const auto index = static_cast<std::size_t>(remainder);
  return index < std::size(names) ? names[index] : "unknown";
}

/// @brief How a `StreamingDataset` orders the rows of its epochs.
enum class StreamOrder {
  /// `whole_epoch` when every field's rows are in host memory (host tensors, deflated `.npz`
  /// members, which are inflated there) or the files' rows fit in half the host's available
  /// memory (the page cache then holds them for every epoch); else `window`.
  /// `StreamingDataset::order()` says which was
  /// chosen, and `plan()` prints it.
  automatic,
  /// Every epoch serves the batches a `DeviceDataset` of the same data serves, bit for bit,
  /// under every shuffle, remainder policy and sharding: the producer gathers each chunk's rows
  /// in the epoch's order. Rows in files are read in place from the files' mappings (the page
  /// cache's pages: `StreamingDataset::mapped_bytes()`), read ahead in the background
  /// (`StreamOptions::read_ahead`); deflated `.npz` members are inflated once into host memory
  /// the dataset owns (`StreamingDataset::host_bytes()`), refused where they do not fit there.
  whole_epoch,
  /// Chunks of consecutive rows read straight from their source, a chunk at a time, so that
  /// files larger than the host's memory stream: `Shuffle::batches` permutes chunks and the
  /// batches within each, `Shuffle::samples` mixes rows within a window of chunks
  /// (`StreamingDataset::window_rows()`).
  window,
};

/// @brief "automatic", "whole_epoch" or "window", for messages.
constexpr const char* stream_order_name(StreamOrder order) noexcept {
  constexpr const char* names[] = {"automatic", "whole_epoch", "window"};
  const auto index = static_cast<std::size_t>(order);
  return index < std::size(names) ? names[index] : "unknown";
}

/// @brief How a `StreamingDataset` moves its data: chunks of whole batches, cycled through
/// `chunk_slots` chunk slots in the space while `prefetch_chunks` of them load ahead.
struct StreamOptions {
  /// @brief Batches per chunk (the unit of every copy and of the sample shuffle's windows;
  /// more than the batches means one chunk). 0: as many as make about 64 MiB, spread evenly
  /// over the chunks; on a single rank also at most `1 / chunk_slots` of the usable memory. In
  /// a sharded job (`world_size > 1`) the automatic size never depends on the rank's free
  /// memory, so that every rank cuts the same chunks; where those slots do not fit, the
  /// dataset is refused: set this explicitly, to the same value on every rank.
  std::size_t chunk_batches = 0;
  /// @brief Chunk slots in the space (at least `prefetch_chunks + 1`). A view of a chunk stays
  /// valid until the epoch reaches the chunk `chunk_slots - prefetch_chunks` chunks later.
  /// `Shuffle::samples` mixes rows within windows of that many chunks (at most 16), all
  /// resident at once beside the prefetch: raise it for a wider shuffle window.
  /// Data of fewer chunks gets one slot per chunk (each loaded once per pass), so that the
  /// slots never hold more than the data; `StreamingDataset::chunk_slots()` says how many.
  std::size_t chunk_slots = 4;
  /// @brief Chunks loaded ahead of the one being read (at least 1): their copies overlap the
  /// reader's work on the current chunk. Never more than the other chunk slots (none
  /// beside a lone chunk); `StreamingDataset::prefetch_chunks()` says how many.
  std::size_t prefetch_chunks = 2;
  /// @brief Whether a reader that waits for a chunk copies parts of it beside the producer
  /// thread (on spaces whose chunks are written by host threads). The reader's core then
  /// copies only while it would sleep, never while it works on a batch; with `false` the
  /// producer copies alone. On by default because the waiting core would otherwise sit idle:
  /// in-order streaming from memory ran faster with it, and a reader that computes on every
  /// batch no slower (bench_stream, benchmarks/results/2026-12-03-host-2core-cpu-before-after/).
  bool reader_copies = true;
  /// @brief Whole-epoch order (the batches of a `DeviceDataset`) or windows of chunks; see
  /// `StreamOrder`.
  StreamOrder order = StreamOrder::automatic;
  /// @brief Whole-epoch order only: when the dataset is made, ask the kernel to move the rows
  /// this rank reads in host memory (not in files' mappings), the caller's included, onto 2 MiB
  /// pages (Linux 6.1 and
  /// later: `madvise(MADV_COLLAPSE)`), as a preloaded dataset's own copy is. Every epoch reads
  /// the rows in its own random order, and on 4 KiB pages each row costs a TLB miss. Only the
  /// pages change: not the contents, not the mapping's flags (a caller's `MADV_NOHUGEPAGE` or
  /// `PR_SET_THP_DISABLE` still holds, and the kernel then declines), and not the memory the
  /// rows take (2 MiB stretches with pages never written are left alone). On by default
  /// because it brings `Shuffle::samples` epochs over rows in a `std::vector` close to a
  /// preloaded dataset's speed for a small cost when the dataset is made (bench_epoch,
  /// benchmarks/results/2026-12-05-host-2core-cpu-large-pages/). `false` leaves the pages as
  /// they are. A file's mapping keeps the page cache's pages: collapsing them needs large pages
  /// for files in the kernel and reads the whole range first, which would hold the first batch
  /// back until the whole file is read.
  bool large_pages = true;
  /// @brief Whole-epoch order over files only: a background thread reads the rows this rank
  /// streams ahead, in file order, from when the dataset is made, into the page cache (not
  /// into the process's memory). A cold file then comes in at the disk's sequential speed
  /// rather than by a random page fault per row, and a batch whose rows are not read yet reads
  /// them itself. Pages already cached are skipped; the thread stops when the dataset goes.
  /// `false` leaves every read to the batches (a file system whose sequential reads gain
  /// nothing, or a rank that reads few of its rows).
  bool read_ahead = true;
};

/// @brief Options of a dataset upload; the same options drive `plan()`.
struct DatasetOptions {
  std::size_t batch_size = 256;              ///< Rows per batch; must be positive.
  Remainder remainder = Remainder::partial;  ///< Policy for the last, short batch.
  /// @brief Bytes to leave free in the space after the upload (the model, activations,
  /// workspaces). Unset: the space's `default_reserve_bytes()` (512 MiB on `CudaSpace`,
  /// 256 MiB on a plain `HostSpace`, 0 inside a `HostSpace::with_budget`).
  std::optional<std::size_t> reserve_bytes{};

  /// @brief Bytes per upload block: the unit of progress reports, of cancellation and, on
  /// `CudaSpace`, the size of each pinned staging buffer. Must be positive.
  std::size_t upload_block_bytes = std::size_t{8} << 20;
  /// @brief Pinned staging buffers in the `CudaSpace` ring (at least 1; 2 or more let host
  /// copies of chunk k+1 overlap the transfer of chunk k); from pinned sources, the chunks in
  /// flight at once.
  std::size_t staging_buffers = 4;
  /// @brief Host threads that copy during an upload, at most the cores the process may run on
  /// (its CPU affinity; a larger value is capped); 0: those cores, at most 8.
  /// Uploads under 4 MiB always stay on the calling thread.
  unsigned upload_threads = 0;
  /// @brief Host threads that gather each batch of a gathering epoch on the host
  /// (`Shuffle::samples`, conversions, augmentation on `HostSpace` and pinned memory), the
  /// thread that asks for the batch included; at most the cores the process may run on (its
  /// CPU affinity; a larger value is capped) and the 64 KiB blocks a batch has. 0: batches
  /// under 128 KiB (all fields together) stay on the asking thread, larger ones use those
  /// cores, at most 8. Each gathering epoch has its own team, alive as long as the epoch; idle
  /// threads sleep. The threads claim blocks of rows as they go, so a thread that another
  /// process delays holds back only its block; set 1 where every other core is busy with the
  /// training itself.
  unsigned gather_threads = 0;
  /// @brief `CudaSpace` only: the stream to order the upload (and later device work) on, e.g.
  /// your training stream (`options.stream = stream;` with a `cudaStream_t`). Unset: the
  /// dataset creates and owns a non-blocking stream. A stream given here is borrowed, never
  /// destroyed; it must belong to the space's device and outlive the dataset. It must be one
  /// made with `cudaStreamCreate` or `cudaStreamCreateWithFlags`, or `cudaStreamPerThread`:
  /// the legacy default stream synchronises with every other blocking stream, so the dataset's
  /// copies and gathers would serialise with the training. `StreamRef` refuses the literals
  /// `0` and `nullptr` at compile time; a dataset refuses a handle that is null or
  /// `cudaStreamLegacy` at run time, and a stream of another device or one already destroyed
  /// (`InvalidArgument`, before allocating). Ignored by `HostSpace`.
  std::optional<StreamRef> stream{};
  /// @brief Batches a gathering epoch keeps at once (`Shuffle::samples`, conversions,
  /// `batch_indices()`): a gathered view stays valid until `ring_depth` more batches of the
  /// same epoch have been gathered. The ring is allocated at the first such epoch; `plan()`
  /// reports its bytes. At least 1.
  std::size_t ring_depth = 2;
  /// @brief Bytes of the widest element a conversion of this dataset writes (e.g. 8 for
  /// `double`); 0: a `float`'s 4. The gather ring's slots hold every field at this width (or
  /// its stored width, when wider), so that `plan()` and a streamed dataset, which sizes its
  /// chunk slots around the ring, count the ring every epoch will use. An epoch whose
  /// conversion is wider than this grows the ring when it is made, if memory allows.
  std::size_t ring_element_bytes = 0;
  /// @brief Called once per upload block with the upload's progress; return `false` to cancel.
  /// A stream's deflated members call it after each step of their background inflating, on an
  /// inflating thread, one call at a time: it must not destroy or move from the dataset.
  ProgressCallback on_progress{};
  /// @brief This process's rank in a data-parallel job (e.g. `shard_from_env()`); the default
  /// is the single rank. Every rank of the job gets the same number of batches per epoch, of
  /// the same sizes, for every row count, batch size and remainder policy.
  Shard shard{};
  /// @brief How the rows are divided among the ranks of `shard`: each rank stores its part
  /// (`partitioned`, the default), or all rows and serves its share of each epoch
  /// (`replicated`). Irrelevant for a single rank.
  Sharding sharding = Sharding::partitioned;
  /// @brief `Sharding::partitioned` only: the parts the rows are cut into (consecutive, sizes
  /// differing by at most one row), fixed for a whole training run. Each rank stores
  /// `parts / world_size` consecutive parts, and every epoch's order is defined on the parts,
  /// not on the ranks: a run stopped and resumed on another world size that divides `parts`
  /// continues the same order (docs/resume.md). 0: the world size, one part per rank (whose
  /// unshuffled and batch-shuffled batches are views of the stored rows). With more parts
  /// than ranks every batch is gathered. The world size must divide it, and the parts of a
  /// rank must divide `batch_size`.
  std::size_t parts = 0;
  /// @brief Chunking and prefetch of a `StreamingDataset` (and of `plan()`'s streaming
  /// figures); ignored by `DeviceDataset`, and checked by `make_dataset` only when it streams.
  StreamOptions streaming{};
};

}  // namespace resident
