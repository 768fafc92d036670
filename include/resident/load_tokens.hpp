// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// @brief Token files to a token dataset: `load_token_file` reads llm.c's `.bin` shards and 1-D
/// `.npy` files, one or many end to end, into a `TokenCorpus`: preloaded (a `TokenDataset`)
/// when they fit, streamed when they do not; `plan_token_file` and `plan()` over a token stream
/// give the figures that choice is made with.

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "resident/dataset.hpp"
#include "resident/dataset_options.hpp"
#include "resident/detail/checked_math.hpp"
#include "resident/detail/compact.hpp"
#include "resident/detail/dataset/shard_geometry.hpp"
#include "resident/detail/dataset/token_layout.hpp"
#include "resident/detail/host_memory.hpp"
#include "resident/detail/io/file_io.hpp"
#include "resident/detail/io/file_mapping.hpp"
#include "resident/detail/io/host_staging.hpp"
#include "resident/detail/stream/row_source.hpp"
#include "resident/detail/upload/upload_plan.hpp"
#include "resident/error.hpp"
#include "resident/host_tensor.hpp"
#include "resident/npy.hpp"
#include "resident/plan.hpp"
#include "resident/streaming_dataset.hpp"
#include "resident/token_dataset.hpp"
#include "resident/token_options.hpp"

namespace resident {

/// @brief A token stream that `load_token_file` preloaded (a `TokenDataset`) or streams (a
/// `StreamingDataset` of the windows' inputs and targets, read from the files chunk by chunk or
/// once into host memory), as its plan decided: the same batches `(x, y)`, epochs and accessors
/// either way (see `BasicDataset`), bit for bit.
template <class Space, class T>
class TokenCorpus : public BasicDataset<TokenDataset<Space, T>, StreamingDataset<Space, T, T>> {
  using Base = BasicDataset<TokenDataset<Space, T>, StreamingDataset<Space, T, T>>;

 public:
  /// @brief Holds a preloaded token dataset and the plan that chose it.
  TokenCorpus(TokenDataset<Space, T> dataset, Plan plan)
      : Base(std::move(dataset), std::move(plan)) {
    context_ = this->preloaded()->context();
    stride_ = this->preloaded()->stride();
  }
  /// @brief Holds a streamed token dataset (whose windows tile the stream: the stride is the
  /// context) and the plan that chose it.
  TokenCorpus(StreamingDataset<Space, T, T> dataset, Plan plan)
      : Base(std::move(dataset), std::move(plan)) {
    context_ = this->streaming()->impl_row_shapes()[0].elements();
    stride_ = context_;
  }

  /// @brief Batch `index` of an unshuffled epoch, as views (see `TokenDataset::batch`).
  /// @throws std::out_of_range past the end; InvalidArgument for a batch that is not one span
  /// of the stream (a padded batch), preloaded or streamed alike.
  [[nodiscard]] typename Base::batch_type batch(std::size_t index) {
    if (auto* streamed = this->streaming(); streamed != nullptr && index < this->num_batches()) {
      const auto& geometry = streamed->impl_core().geometry();
      detail::refuse_unless_span(index, geometry.slice(index, geometry.replica), context_, stride_);
    }
    return Base::batch(index);
  }

  /// @brief Tokens of a row of `x` and of `y`.
  [[nodiscard]] std::size_t context() const noexcept { return context_; }
  /// @brief Tokens from one window's start to the next's.
  [[nodiscard]] std::size_t stride() const noexcept { return stride_; }

 private:
  std::size_t context_ = 0;
  std::size_t stride_ = 0;
};

namespace detail {

/// llm.c's token shards (`dev/data/data_common.py`): a header of 256 little-endian int32 (magic,
/// version, token count, then zeros), then the tokens, uint16 in version 1.
inline constexpr std::int32_t llmc_magic = 20240520;
inline constexpr std::int32_t llmc_version = 1;
inline constexpr std::size_t llmc_header_bytes = 256 * sizeof(std::int32_t);

/// One token file, checked: where its tokens start and how many there are.
struct TokenFile {
  std::shared_ptr<const ReadFile> file;
  std::size_t data_offset = 0;
  std::size_t tokens = 0;
};

/// The `index`-th little-endian int32 of `header`.
inline std::int32_t int32_at(const std::array<unsigned char, 12>& header, std::size_t index) {
  const std::size_t at = index * 4;
  const std::uint32_t bits = static_cast<std::uint32_t>(header[at]) |
                             static_cast<std::uint32_t>(header[at + 1]) << 8 |
                             static_cast<std::uint32_t>(header[at + 2]) << 16 |
                             static_cast<std::uint32_t>(header[at + 3]) << 24;
  std::int32_t value = 0;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

/// @brief An llm.c shard's header, checked strictly: magic, version (and with it the token
/// type, which must be `T`), and the token count against the file's size, both ways.
/// @throws FormatError naming the fault, the figures and what to do.
template <class T>
TokenFile llmc_token_file(std::shared_ptr<const ReadFile> file) {
  const std::string& path = file->path();
  const std::size_t size = file->identity().size;
  const std::string shard =
      "an llm.c token shard (a header of 256 int32: magic 20240520, version "
      "1, the token count; then uint16 tokens)";
  if (size < llmc_header_bytes)
    throw FormatError(path, size,
                      "the file is " + std::to_string(size) + " bytes, shorter than the " +
                          std::to_string(llmc_header_bytes) + "-byte header of " + shard +
                          "; it is truncated, or not a token file (a .npy file starts with "
                          "\\x93NUMPY)");
  std::array<unsigned char, 12> header{};
  read_exactly(path, file->fd(), header.data(), header.size(), 0);
  const std::int32_t magic = int32_at(header, 0);
  const std::int32_t version = int32_at(header, 1);
  const std::int32_t count = int32_at(header, 2);
  if (magic != llmc_magic)
    throw FormatError(path, 0,
                      "the magic number is " + std::to_string(magic) + ", expected " +
                          std::to_string(llmc_magic) + " of " + shard +
                          " or the \\x93NUMPY of a .npy file; pass a token file");
  if (version != llmc_version)
    throw FormatError(path, 4,
                      "the version is " + std::to_string(version) + ", expected " +
                          std::to_string(llmc_version) +
                          " (uint16 tokens), the version this reader knows; write the shard with "
                          "llm.c's version 1 or save the tokens as a 1-D .npy file");
  if (!std::is_same_v<T, std::uint16_t>)
    throw FormatError(path, 4,
                      "an llm.c version 1 shard holds uint16 tokens, but they were asked for as " +
                          std::string(npy::dtype_code(npy::dtype_of<T>())) +
                          "; load it as std::uint16_t");
  if (count < 0)
    throw FormatError(path, 8,
                      "the token count is " + std::to_string(count) +
                          ", negative; the header is corrupt: write the shard again");
  const std::size_t data = size - llmc_header_bytes;
  const std::size_t expected = static_cast<std::size_t>(count) * sizeof(std::uint16_t);
  if (expected != data)
    throw FormatError(
        path, 8,
        "the header counts " + std::to_string(count) + " tokens (" + std::to_string(expected) +
            " bytes after the header), but the file has " + std::to_string(data) +
            " bytes after it: " +
            (expected > data ? "it is truncated" : "it has bytes the count leaves out") +
            "; write the shard again (the count must match the file)");
  file->check_unchanged("while its header was read", "keep a file unchanged while it is read");
  return {std::move(file), llmc_header_bytes, static_cast<std::size_t>(count)};
}

/// @brief A 1-D `.npy` file of `T`, checked: its header (as `npy::load` checks it), its type,
/// rank and byte order.
/// @throws FormatError naming the fault and what to do.
template <class T>
TokenFile npy_token_file(std::shared_ptr<const ReadFile> file) {
  const npy::Header header = npy::detail::read_header(*file);
  const std::string& path = file->path();
  if (header.dtype != npy::dtype_of<T>())
    throw FormatError(path, 0,
                      std::string("the file holds ") + npy::dtype_code(header.dtype) +
                          " elements, but the tokens were asked for as " +
                          npy::dtype_code(npy::dtype_of<T>()) +
                          "; load it with that token type, or save the tokens as " +
                          npy::dtype_code(npy::dtype_of<T>()));
  if (header.shape.rank() != 1)
    throw FormatError(path, 0,
                      "the array has shape " + header.shape.to_string() +
                          ", but a token stream has one axis; save it flattened "
                          "(numpy.save(path, tokens.ravel()))");
  if (header.big_endian)
    throw FormatError(path, 0,
                      "the tokens are big-endian; save them little-endian "
                      "(tokens.astype(tokens.dtype.newbyteorder('<')))");
  return {std::move(file), header.data_offset, header.shape[0]};
}

/// @brief The token file at `path`: a `.npy` file (by its magic), else an llm.c shard.
/// @throws FormatError for anything but a regular file (a FIFO is refused before it can block)
/// and for any fault of either format.
template <class T>
TokenFile open_token_file(const std::string& path) {
  auto file =
      std::make_shared<const ReadFile>(path, "token file (an llm.c .bin shard or a 1-D .npy file)");
  constexpr std::array<unsigned char, 6> npy_magic{0x93, 'N', 'U', 'M', 'P', 'Y'};
  std::array<unsigned char, 6> start{};
  if (file->identity().size >= start.size())
    read_exactly(path, file->fd(), start.data(), start.size(), 0);
  if (start == npy_magic) return npy_token_file<T>(std::move(file));
  return llmc_token_file<T>(std::move(file));
}

/// The token files of `paths`, checked, and their tokens end to end.
struct TokenFiles {
  std::vector<FileSpan> spans;  ///< Each file's tokens, in order.
  std::size_t tokens = 0;       ///< Tokens of all files.
};

/// @throws InvalidArgument for no path; FormatError for any file's fault.
template <class T>
TokenFiles open_token_files(const std::vector<std::string>& paths) {
  RESIDENT_EXPECTS(!paths.empty(),
                   "no token file was given; pass the paths of one or more .bin or .npy files");
  TokenFiles files;
  for (const std::string& path : paths) {
    TokenFile file = open_token_file<T>(path);
    files.tokens = checked_add(files.tokens, file.tokens, "token count of the files");
    files.spans.push_back({std::move(file.file), file.data_offset, file.tokens * sizeof(T)});
  }
  return files;
}

/// Why a token stream cut by `window` cannot stream (empty when it can): the streamed batches
/// are rows of whole windows, which must tile the stream.
inline std::string token_stream_problem(const TokenWindows& stream) {
  if (stream.stride == stream.context) return {};
  return "a streamed token stream serves windows that tile it, but TokenOptions::stride is " +
         std::to_string(stream.stride) + " and the context " + std::to_string(stream.context) +
         "; set the stride to 0 (the context), or free memory so that the tokens preload";
}

/// The order a stream of `bytes` bytes of tokens from files takes: as `StreamOptions::order`
/// says, and in automatic order `whole_epoch` (read once into host memory) where they fit in
/// half of the host's available memory, else `window` (read from the files chunk by chunk).
inline StreamOrder token_file_order(StreamOrder order, std::size_t bytes) {
  if (order != StreamOrder::automatic) return order;
  return bytes <= host_available_bytes() / 2 ? StreamOrder::whole_epoch : StreamOrder::window;
}

/// The streamed layout of a token stream: the windows' inputs and targets as two fields of
/// rows (the rows a `StreamingDataset` cuts into chunks).
inline DatasetLayout<2> token_rows_layout(const DatasetOptions& options, const TokenWindows& stream,
                                          std::size_t element_bytes) {
  const Shape rows{stream.windows, stream.context};
  return make_layout<2>(options, {rows, rows}, {element_bytes, element_bytes});
}

/// Bytes of the tokens this rank streams (what reading them once into host memory takes).
inline std::size_t streamed_token_bytes(const DatasetOptions& options, const TokenWindows& stream,
                                        std::size_t element_bytes) {
  const RowRange range =
      streamed_source_rows(make_geometry(stream.windows, options), stream.windows);
  return stream.span(range.rows) * element_bytes;
}

/// @brief The plan of a token stream of `tokens` elements of `T`: preloaded, each token once
/// (this rank's windows' tokens when partitioned); streamed, the windows' rows in chunk slots,
/// reading the tokens where `rows` says.
/// @throws InvalidArgument as `TokenDataset`'s constructor does.
template <class Space, class T>
Plan plan_tokens(const Space& space, const DatasetOptions& options, const TokenOptions& window,
                 std::size_t tokens, const StreamRows& rows) {
  const TokenWindows stream = make_token_windows(tokens, window);
  const DatasetLayout<2> preload = make_token_layout(options, stream, sizeof(T));
  Plan verdict = plan_layout(space, options, token_rows_layout(options, stream, sizeof(T)),
                             {element_kind<T>(), element_kind<T>()}, rows);
  // The preload figures are the stream's (each token once, not each window's), and its ring's
  // where every epoch gathers, as the constructor counts them.
  const std::size_t dataset_bytes = token_dataset_bytes(options, stream, preload, sizeof(T));
  const CapacityVerdict capacity = check_capacity(space, verdict.reserve_bytes, dataset_bytes);
  verdict.needed_bytes = capacity.needed_bytes;
  verdict.free_bytes = capacity.free_bytes;
  verdict.total_bytes = capacity.total_bytes;
  verdict.capacity_source = capacity.capacity_source;
  verdict.fits = capacity.fits;
  verdict.fits_with_ring =
      verdict.fits && (dataset_bytes != preload.total_bytes ||
                       verdict.ring_bytes <= verdict.usable_bytes() - verdict.needed_bytes);
  verdict.compact_bytes = verdict.needed_bytes;  // tokens have no smaller type
  verdict.compact_dtypes.clear();
  const auto rank_bytes = [&](std::size_t world, Sharding sharding) {
    DatasetOptions rank = options;
    rank.shard = {0, static_cast<int>(world), 0};
    rank.sharding = sharding;
    return make_token_layout(rank, stream, sizeof(T)).total_bytes;
  };
  const auto world = static_cast<std::size_t>(options.shard.world_size);
  verdict.partitioned_rank_bytes = rank_bytes(world, Sharding::partitioned);
  verdict.replicated_rank_bytes = rank_bytes(world, Sharding::replicated);
  verdict.partition_world_size = fewest_partition_ranks(
      stream.windows, verdict.usable_bytes(),
      [&](std::size_t ranks) { return rank_bytes(ranks, Sharding::partitioned); });
  if (verdict.stream_refusal.empty()) verdict.stream_refusal = token_stream_problem(stream);
  if (!verdict.stream_refusal.empty()) {
    verdict.stream_chunk_batches = verdict.stream_chunks = verdict.stream_slots_bytes = 0;
    verdict.stream_fits = false;
  }
  recommend_for(verdict, options);
  return verdict;
}

/// The plan of token files: streamed in the order `token_file_order` gives, in whole-epoch
/// order from one file's mapping or several files read once.
template <class Space, class T>
Plan plan_token_files(const Space& space, const DatasetOptions& options, const TokenOptions& window,
                      const TokenFiles& files) {
  const TokenWindows stream = make_token_windows(files.tokens, window);
  const std::size_t bytes = streamed_token_bytes(options, stream, sizeof(T));
  StreamRows rows{token_file_order(options.streaming.order, bytes), true, 0, 0};
  if (rows.order != StreamOrder::window)
    (files.spans.size() == 1 ? rows.mapped_bytes : rows.owned_bytes) = bytes;
  return plan_tokens<Space, T>(space, options, window, files.tokens, rows);
}

/// @brief Streams `files`' tokens as a `StreamingDataset` of the windows' inputs (field 0) and
/// targets (field 1, the same bytes one token on): read from the files chunk by chunk, or once
/// into host memory both fields share, by `token_file_order`.
/// @throws InvalidArgument when the windows do not tile the stream; what reading once throws
/// (FormatError, CapacityError); what the `StreamingDataset` constructor throws.
template <class Space, class T>
StreamingDataset<Space, T, T> stream_token_files(Space space, const DatasetOptions& options,
                                                 const TokenOptions& window,
                                                 const TokenFiles& files) {
  const TokenWindows stream = make_token_windows(files.tokens, window);
  const std::string problem = token_stream_problem(stream);
  RESIDENT_EXPECTS(problem.empty(), problem);
  const DatasetLayout<2> layout = token_rows_layout(options, stream, sizeof(T));
  const std::size_t row_bytes = layout.row_bytes[0];
  std::array<RowSource, 2> sources{
      RowSource::files(files.spans, 0, stream.windows, row_bytes),
      RowSource::files(files.spans, sizeof(T), stream.windows, row_bytes)};
  const std::size_t bytes = streamed_token_bytes(options, stream, sizeof(T));
  const RowRange range = streamed_source_rows(layout.geometry, stream.windows);
  const bool whole_epoch = token_file_order(options.streaming.order, bytes) != StreamOrder::window;
  if (whole_epoch && files.spans.size() == 1) {
    // One file: read in place from its mapping, which both fields read (targets one token on).
    const FileSpan& span = files.spans.front();
    std::shared_ptr<const FileMapping> mapping = FileMapping::map(
        span.file, span.offset, span.bytes, range.first * stream.stride * sizeof(T),
        options.streaming.read_ahead ? bytes : 0);
    if (mapping) {
      const RowSource targets = RowSource::mapped(mapping, sizeof(T), stream.windows, row_bytes, 0);
      sources = {RowSource::mapped(std::move(mapping), 0, stream.windows, row_bytes, bytes),
                 targets};
    }
  }
  if (whole_epoch && sources[0].memory() == nullptr) {
    // Several files (or one that cannot be mapped): read once, the rank's windows' tokens,
    // which both fields read, at their places in memory for the whole stream (pages never
    // written take none).
    const RowSource all = RowSource::files(files.spans, 0, files.tokens, sizeof(T)).read_once();
    std::shared_ptr<std::byte> memory =
        row_memory_for(files.tokens * sizeof(T), "the token files' " + format_bytes(bytes));
    all.read(range.first * stream.stride, stream.span(range.rows),
             memory.get() + range.first * stream.stride * sizeof(T));
    const std::shared_ptr<const std::byte> targets(memory, memory.get() + sizeof(T));
    sources = {RowSource::owned_memory(memory, stream.windows, row_bytes, bytes),
               RowSource::owned_memory(targets, stream.windows, row_bytes, 0)};
  }
  const Shape row{stream.context};
  return FromSources::make<StreamingDataset<Space, T, T>>(
      std::move(space), options, layout, std::move(sources), std::array<Shape, 2>{row, row});
}

/// @brief Preloads `files`' tokens into a `TokenDataset`, read from the files into the upload.
template <class Space, class T>
TokenDataset<Space, T> preload_token_files(Space space, const DatasetOptions& options,
                                           const TokenOptions& window, const TokenFiles& files) {
  const RowSource bytes = RowSource::files(files.spans, 0, files.tokens * sizeof(T), 1).read_once();
  const StreamedBytes read = [&bytes](std::size_t first, std::size_t count, std::byte* into) {
    bytes.read(first, count, into);
  };
  return FromSources::make<TokenDataset<Space, T>>(std::move(space), options, window,
                                                   TokenSource{files.tokens, {nullptr, &read}});
}

}  // namespace detail

/// @brief `plan()` for a token stream in host memory: the figures a `TokenDataset` of `tokens`
/// is made with (each token once), and those of streaming its windows.
/// @throws InvalidArgument as `TokenDataset`'s constructor does.
template <class Space, class T>
[[nodiscard]] Plan plan(const Space& space, const DatasetOptions& options,
                        const TokenOptions& window, const HostTensor<T>& tokens) {
  RESIDENT_EXPECTS(tokens.shape().rank() == 1,
                   "a token stream is a 1-D tensor, but the tensor given has shape " +
                       tokens.shape().to_string() + "; pass the tokens as one axis (Shape{count})");
  return detail::plan_tokens<Space, std::remove_const_t<T>>(
      space, options, window, tokens.shape()[0],
      detail::StreamRows{detail::memory_stream_order(options.streaming.order)});
}

/// @brief `plan()` for token files (see `load_token_file`), from their headers alone: what
/// `load_token_file` decides with.
/// @throws FormatError for a malformed or mistyped file; InvalidArgument as `plan()` does.
template <class T, class Space>
[[nodiscard]] Plan plan_token_file(const Space& space, const DatasetOptions& options,
                                   const TokenOptions& window,
                                   const std::vector<std::string>& paths) {
  return detail::plan_token_files<Space, T>(space, options, window,
                                            detail::open_token_files<T>(paths));
}

/// @brief Token files, one or many end to end, as one token stream in `space`: preloaded into a
/// `TokenDataset` when `plan_token_file` says they fit, else streamed (the same batches):
/// `load_token_file<std::uint16_t>(space, options, {1024}, {"train_000001.bin",
/// "train_000002.bin"})`. Each file is an llm.c shard (`.bin`: a header of 256 int32, magic
/// 20240520, version 1, the token count; then the uint16 tokens) or a 1-D `.npy` file of `T`,
/// told apart by their first bytes; a window may run from one file into the next. Every header
/// is checked before the space is touched, and the files are held open: a file that changes
/// while it is read (or, streamed, before the dataset is destroyed) is refused.
/// @tparam T the tokens' type: `std::uint16_t` for llm.c shards, a `.npy` file's dtype
/// @throws FormatError for a path that is not a regular file (a FIFO is refused before anything
/// blocks), a wrong magic or version, a count larger or smaller than the file holds, a truncated
/// header, a `.npy` file of another dtype, rank or byte order, or a file that changed;
/// InvalidArgument for no path, too few tokens, a stride other than the context when the tokens
/// must stream, and what `plan()` refuses; what the chosen dataset's constructor throws;
/// CapacityError when a rank of a replicated job would stream.
template <class T, class Space>
TokenCorpus<Space, T> load_token_file(Space space, const DatasetOptions& options,
                                      const TokenOptions& window,
                                      const std::vector<std::string>& paths) {
  const detail::TokenFiles files = detail::open_token_files<T>(paths);
  const auto replan = [&](const DatasetOptions& planned) {
    return detail::plan_token_files<Space, T>(space, planned, window, files);
  };
  return detail::preload_or_stream<TokenCorpus<Space, T>>(
      options, replan(options),
      [&] { return detail::preload_token_files<Space, T>(space, options, window, files); },
      [&](const DatasetOptions& streamed) {
        return detail::stream_token_files<Space, T>(space, streamed, window, files);
      },
      replan);
}

}  // namespace resident
