// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// The part every dataset owner (`DeviceDataset`, `StreamingDataset`, `Dataset`) shares: the
// space, the options that cut the batches, the layout and its geometry, the stream, the
// identity epochs watch, the accessors, the out-of-range message and the capacity verdict.
// Each owner keeps what is its own (the uploaded allocation, the streaming slots) beside it;
// every member here empties itself when moved from, so that the owners' moves are defaulted.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "resident/batch_view.hpp"
#include "resident/dataset_options.hpp"
#include "resident/detail/dataset/data_token.hpp"
#include "resident/detail/dataset/layout.hpp"
#include "resident/detail/dataset/shard_geometry.hpp"
#include "resident/detail/expects.hpp"
#include "resident/detail/format_bytes.hpp"
#include "resident/detail/resources.hpp"
#include "resident/error.hpp"
#include "resident/space_traits.hpp"
#include "resident/stream_ref.hpp"

namespace resident::detail {

/// @brief A value that a move leaves as `T{}` in the object moved from, so that an owner with
/// defaulted moves reads as empty afterwards (0 rows, 0 batches, no views).
template <class T>
class ResetOnMove {
 public:
  ResetOnMove() = default;
  explicit ResetOnMove(T value) noexcept : value_(std::move(value)) {}
  ResetOnMove(ResetOnMove&& other) noexcept : value_(std::exchange(other.value_, T{})) {}
  ResetOnMove& operator=(ResetOnMove&& other) noexcept {
    value_ = std::exchange(other.value_, T{});  // a self-move puts the value back
    return *this;
  }
  ResetOnMove(const ResetOnMove&) = delete;
  ResetOnMove& operator=(const ResetOnMove&) = delete;
  ~ResetOnMove() = default;

  [[nodiscard]] const T& get() const noexcept { return value_; }
  [[nodiscard]] T& get() noexcept { return value_; }

 private:
  T value_{};
};

/// @brief A stream a dataset made, destroyed with this object: the owning half of the pair,
/// as rmm's `cuda_stream` is to `cuda_stream_view` (the `stream_type` handle is the
/// non-owning half). Held by a `shared_ptr` (see `DatasetStream`), so neither copied nor moved.
template <class Space>
class OwningStream {
 public:
  using stream_type = typename Space::stream_type;

  /// Creates a stream of `space`.
  explicit OwningStream(const Space& space) : space_(space), stream_(space.create_stream()) {}
  OwningStream(const OwningStream&) = delete;
  OwningStream& operator=(const OwningStream&) = delete;
  OwningStream(OwningStream&&) = delete;
  OwningStream& operator=(OwningStream&&) = delete;
  /// Waits for the stream's work first: a destroyed stream finishes what it was given later,
  /// and the memory that work uses may be released as soon as this returns.
  ~OwningStream() {
    wait_before_release(space_, stream_);
    space_.destroy_stream(stream_);
  }

  /// The stream, as the non-owning handle every operation takes.
  [[nodiscard]] stream_type view() const noexcept { return stream_; }

 private:
  Space space_;
  stream_type stream_;
};

/// @brief Refuses a caller's stream that is the legacy default stream: a null handle, or
/// `cudaStreamLegacy` (the runtime's `(cudaStream_t)0x1`, spelled out here so that no CUDA
/// header is needed). Every other blocking stream of the device synchronises with it, so the
/// dataset's copies and gathers and the training's kernels would wait for one another.
/// `cudaStreamPerThread` (`0x2`), which synchronises with the legacy stream alone, is accepted.
/// @throws InvalidArgument for the legacy stream.
inline void check_caller_stream(StreamRef stream) {
  const auto handle = reinterpret_cast<std::uintptr_t>(stream.get());  // NOLINT: a handle's value
  RESIDENT_EXPECTS(
      handle != 0 && handle != 0x1,
      std::string("DatasetOptions::stream is ") +
          (handle == 0 ? "a null cudaStream_t" : "cudaStreamLegacy") +
          ", the legacy default stream: it synchronises with every other blocking stream of "
          "the device, so the dataset's copies would serialise with the training. Expected a "
          "stream made with cudaStreamCreate or cudaStreamCreateWithFlags (e.g. the training "
          "stream), or cudaStreamPerThread; pass one of those, or leave the option unset and "
          "the dataset makes its own non-blocking stream");
}

/// @brief A dataset's stream: the caller's (`DatasetOptions::stream`, where the space takes
/// one: never destroyed here), or one the dataset owns. `view()` is what every operation uses.
/// An owned stream is shared with whatever `keep_alive()` is given to (a streaming dataset's
/// producer), so that it is destroyed after the last user, whatever order owners are
/// destroyed or assigned in.
template <class Space>
class DatasetStream {
 public:
  using stream_type = typename Space::stream_type;

  DatasetStream() = default;
  DatasetStream(const Space& space, const DatasetOptions& options) {
    if constexpr (space_traits<Space>::takes_caller_stream) {
      if (options.stream) {
        // Before the dataset allocates anything: a refusal leaves nothing to release.
        check_caller_stream(*options.stream);
        space_traits<Space>::check_caller_stream(space, options.stream->get());
        view_ = ResetOnMove<stream_type>(options.stream->get());
        return;
      }
    }
    owned_ = std::make_shared<const OwningStream<Space>>(space);
    view_ = ResetOnMove<stream_type>(owned_->view());
  }

  [[nodiscard]] stream_type view() const noexcept { return view_.get(); }
  /// @brief Keeps an owned stream alive while the pointer lives (null for the caller's).
  [[nodiscard]] std::shared_ptr<const void> keep_alive() const noexcept { return owned_; }

 private:
  std::shared_ptr<const OwningStream<Space>> owned_;  // null when the stream is the caller's
  ResetOnMove<stream_type> view_;
};

/// @brief The reserve a dataset of `options` leaves free in `space`: the option, or the
/// space's default.
template <class Space>
std::size_t reserve_for(const Space& space, const DatasetOptions& options) {
  return options.reserve_bytes.value_or(space.default_reserve_bytes());
}

/// @brief The capacity check every allocation of a dataset passes first (the dataset, its
/// gather ring, its streaming slots) and that `plan()` reports: the figures, and whether
/// `needed_bytes` fits in what is free after the reserve. Advice is `plan()`'s business.
struct CapacityVerdict {
  std::string space_name{};
  std::size_t needed_bytes = 0;
  std::size_t free_bytes = 0;
  std::size_t total_bytes = 0;
  std::size_t reserve_bytes = 0;
  bool fits = false;
  std::string capacity_source{};  ///< Where the free and total figures came from.

  [[nodiscard]] std::size_t usable_bytes() const noexcept {
    return detail::usable_bytes(free_bytes, reserve_bytes);
  }
  /// @brief The same figures, deciding for `bytes` instead (an allocation whose size depends
  /// on what is usable, as a stream's slots do).
  [[nodiscard]] CapacityVerdict needing(std::size_t bytes) const {
    CapacityVerdict verdict = *this;
    verdict.needed_bytes = bytes;
    verdict.fits = bytes <= usable_bytes();
    return verdict;
  }
  /// @brief The `CapacityError` that refusing the allocation throws: `subject` ("dataset",
  /// "the gather ring") needs the bytes; `advice` says what to do instead.
  [[nodiscard]] CapacityError refusal(const std::string& advice = CapacityError::default_advice,
                                      const std::string& subject = "dataset") const {
    return CapacityError(space_name, needed_bytes, free_bytes, total_bytes, reserve_bytes, advice,
                         subject);
  }
};

/// @brief Asks `space` for its capacity and decides whether `needed` bytes fit after `reserve`.
/// @throws what the space's `capacity()` throws (CudaError without a usable device).
template <class Space>
CapacityVerdict check_capacity(const Space& space, std::size_t reserve, std::size_t needed) {
  const CapacityReport report = capacity_report(space);
  CapacityVerdict verdict{
      space.name(), needed,       report.capacity.free_bytes, report.capacity.total_bytes, reserve,
      false,        report.source};
  verdict.fits = needed <= verdict.usable_bytes();
  return verdict;
}

/// @brief The options that cut a dataset's batches, kept as they were given: a dataset moved
/// from keeps them (it has 0 rows, but the same batch size).
struct DatasetConfig {
  std::size_t batch_size = 0;
  Remainder remainder = Remainder::drop;
  std::size_t reserve_bytes = 0;       ///< The reserve its capacity checks leave free.
  std::size_t ring_depth = 0;          ///< Slots of a gathering epoch's ring.
  std::size_t ring_element_bytes = 0;  ///< `DatasetOptions::ring_element_bytes`.
  Shard shard{};
  Sharding sharding = Sharding::partitioned;
  unsigned gather_threads = 0;  ///< `DatasetOptions::gather_threads`.
};

/// @brief What a dataset owner is made of besides its own data (see the file comment).
/// Move-only; its moves and swap are the members', every one of which empties the object
/// moved from and ends the epochs' leases (`DataToken`).
template <class Space, std::size_t Fields>
class DatasetCore {
 public:
  using stream_type = typename Space::stream_type;

  DatasetCore() = default;
  /// @brief The core of a dataset of `layout` in `space`; makes (or borrows) its stream.
  /// @throws what making a stream of the space throws.
  DatasetCore(Space space, const DatasetOptions& options, std::size_t reserve_bytes,
              const DatasetLayout<Fields>& layout)
      : space_(std::move(space)),
        config_{options.batch_size, options.remainder,          reserve_bytes,
                options.ring_depth, options.ring_element_bytes, options.shard,
                options.sharding,   options.gather_threads},
        layout_(layout),
        stream_(space_, options) {}

  [[nodiscard]] const Space& space() const noexcept { return space_; }
  [[nodiscard]] const DatasetConfig& config() const noexcept { return config_; }
  [[nodiscard]] const DatasetLayout<Fields>& layout() const noexcept { return layout_.get(); }
  [[nodiscard]] const ShardGeometry& geometry() const noexcept { return layout_.get().geometry; }
  [[nodiscard]] stream_type stream() const noexcept { return stream_.view(); }
  /// @brief Keeps the dataset's own stream alive while the pointer lives (see `DatasetStream`).
  [[nodiscard]] std::shared_ptr<const void> stream_keep_alive() const noexcept {
    return stream_.keep_alive();
  }
  [[nodiscard]] std::size_t num_rows() const noexcept { return geometry().order_rows; }
  [[nodiscard]] std::size_t num_batches() const noexcept { return geometry().batches; }
  [[nodiscard]] bool moved_from() const noexcept { return token_.moved_from(); }
  /// @brief A lease that epochs check before every use (see `DataToken`).
  [[nodiscard]] DataLease lease() { return token_.lease(); }

  /// @brief Refuses batch `index` of a dataset with `num_batches()` batches; `noun` names
  /// the owner in the message ("dataset", "streaming dataset").
  [[noreturn]] void throw_batch_out_of_range(std::size_t index, const char* noun) const {
    if (moved_from())
      throw std::out_of_range("resident: batch index " + std::to_string(index) +
                              " is out of range: the " + noun +
                              " was moved from and holds no data; read the batches of the " + noun +
                              " it was moved to");
    throw std::out_of_range(
        "resident: batch index " + std::to_string(index) + " is out of range; the " + noun +
        " has " + std::to_string(num_batches()) + " batches (" + std::to_string(num_rows()) +
        " rows, batch size " + std::to_string(config_.batch_size) + ", remainder " +
        remainder_name(config_.remainder) + "); use an index below " +
        std::to_string(num_batches()));
  }

 private:
  Space space_{};
  DatasetConfig config_{};
  ResetOnMove<DatasetLayout<Fields>> layout_;
  DatasetStream<Space> stream_;
  DataToken token_;
};

}  // namespace resident::detail
