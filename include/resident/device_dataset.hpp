// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// @brief `DeviceDataset<Space, Ts...>`: every field of a dataset in one allocation of a
/// memory space, uploaded once after a capacity check, served as zero-copy batch views.

#include <array>
#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "resident/batch_view.hpp"
#include "resident/dataset_options.hpp"
#include "resident/detail/cuda_upload.hpp"
#include "resident/detail/host_upload.hpp"
#include "resident/detail/layout.hpp"
#include "resident/detail/resources.hpp"
#include "resident/detail/ring_fences.hpp"
#include "resident/detail/tenancy.hpp"
#include "resident/detail/upload_plan.hpp"
#include "resident/epoch.hpp"
#include "resident/host_tensor.hpp"
#include "resident/plan.hpp"
#include "resident/space_traits.hpp"

namespace resident {

/// @brief A dataset resident in `Space`: fields `Ts...` (features, labels, ...) sharing one
/// row count, held in one allocation with each field's base 256-byte aligned.
/// @tparam Space `HostSpace`, `CudaSpace` or any type meeting the memory-space concept
/// @tparam Ts element type of each field, unqualified (`float`, `std::int32_t`, ...)
/// @note Move-only RAII; a moved-from dataset is empty (0 rows, 0 batches, 0 bytes).
/// Thread-safety: const members may be called from many threads at once.
template <class Space, class... Ts>
class DeviceDataset {
  static_assert(is_memory_space_v<Space>, "DeviceDataset needs a memory space");
  static_assert(sizeof...(Ts) >= 1, "a dataset needs at least one field");
  static_assert(((!std::is_const_v<Ts> && !std::is_reference_v<Ts>)&&...),
                "name the field types unqualified: DeviceDataset<Space, float, int32_t>");

 public:
  using space_type = Space;                                 ///< Where the data lives.
  using stream_type = typename Space::stream_type;          ///< The dataset's stream type.
  using batch_type = std::tuple<BatchView<const Ts>...>;    ///< What `batch(i)` returns.
  static constexpr std::size_t num_fields = sizeof...(Ts);  ///< Fields per row.

  /// @brief Checks capacity, makes one allocation, uploads every field into it.
  /// @param space where to put the data; copies of a space share its accounting
  /// @param options batch size, remainder policy, reserve, upload tuning, stream, progress
  /// @param fields host tensors with equal row counts; read only during this call
  /// @throws InvalidArgument for mismatched rows, batch size 0, byte overflow or a zero chunk
  /// size; CapacityError when the data does not fit (before allocating) or the allocation
  /// fails; Cancelled when the progress callback returns false; CudaError when a CUDA call
  /// fails; whatever the progress callback throws.
  /// @note Strong guarantee: on any exception everything taken is released and the caller's
  /// data is untouched. On return the upload is complete on the device (the dataset's stream
  /// has been synchronised): kernels on any stream may read the data, and `fields` may be
  /// freed at once. On `CudaSpace`, pinned sources are copied directly, pageable ones are
  /// staged through a ring of pinned buffers while host threads fill the next one.
  DeviceDataset(Space space, DatasetOptions options, HostTensor<const Ts>... fields)
      : space_(std::move(space)), config_{options.batch_size, options.remainder, 0,
                                          options.ring_depth, options.shard,     options.sharding} {
    const auto layout = detail::make_layout(options, fields...);
    detail::check_upload_options(options);
    const Plan verdict =
        detail::plan_layout(space_, options, layout, {detail::element_kind<Ts>()...});
    if (!verdict.fits) throw verdict.refusal();
    config_.reserve_bytes = verdict.reserve_bytes;

    detail::OwnedStream<Space> owned_stream = detail::dataset_stream(space_, options);
    detail::Allocation<Space> storage(space_, layout.total_bytes);
    detail::upload(space_, storage.data(),
                   detail::make_upload_plan(layout, {static_cast<const void*>(fields.data())...}),
                   options, owned_stream.get());

    layout_ = layout;
    fields_ = views(storage, layout, std::index_sequence_for<Ts...>{}, fields...);
    storage_ = std::make_shared<detail::Allocation<Space>>(std::move(storage));
    stream_ = std::move(owned_stream);
  }

  DeviceDataset(const DeviceDataset&) = delete;
  DeviceDataset& operator=(const DeviceDataset&) = delete;

  /// @brief Takes `other`'s data; `other` is left empty (moved from), and the epochs made from
  /// it throw on their next use.
  DeviceDataset(DeviceDataset&& other) noexcept
      : space_(std::move(other.space_)),
        config_(other.config_),
        layout_(std::exchange(other.layout_, {})),
        storage_(std::move(other.storage_)),
        ring_(std::move(other.ring_)),
        ring_generation_(std::exchange(other.ring_generation_, 0)),
        fences_(std::move(other.fences_)),
        stream_(std::move(other.stream_)),
        fields_(std::exchange(other.fields_, batch_type{})),
        tenancy_(std::move(other.tenancy_)) {}

  /// @brief Releases this dataset's data, then takes `other`'s; `other` is left empty. The
  /// epochs made from either dataset before throw on their next use.
  DeviceDataset& operator=(DeviceDataset&& other) noexcept {
    if (this != &other) {
      DeviceDataset taken(std::move(other));
      swap(taken);
    }
    return *this;
  }

  ~DeviceDataset() = default;

  /// @brief Exchanges the contents of two datasets; the epochs made from either before throw
  /// on their next use (views stay valid: they refer to the data, which only changes owner).
  void swap(DeviceDataset& other) noexcept {
    std::swap(space_, other.space_);
    std::swap(config_, other.config_);
    std::swap(layout_, other.layout_);
    std::swap(storage_, other.storage_);
    ring_.swap(other.ring_);
    std::swap(ring_generation_, other.ring_generation_);
    std::swap(fences_, other.fences_);
    stream_.swap(other.stream_);
    std::swap(fields_, other.fields_);
    tenancy_.swap(other.tenancy_);
  }

  /// @brief Rows stored (before padding): every row, or this rank's part when partitioned.
  [[nodiscard]] std::size_t num_rows() const noexcept { return layout_.geometry.order_rows; }
  /// @brief Row of the caller's data that stored row 0 is: the part's first row when
  /// partitioned, else 0. Row ids (`batch_indices()`) count stored rows; add this for global ids.
  [[nodiscard]] std::size_t first_row() const noexcept { return layout_.geometry.source_first; }
  [[nodiscard]] std::size_t batch_size() const noexcept { return config_.batch_size; }
  [[nodiscard]] Remainder remainder() const noexcept { return config_.remainder; }
  /// @brief Batches per epoch: the same on every rank of the job.
  [[nodiscard]] std::size_t num_batches() const noexcept { return layout_.geometry.batches; }
  /// @brief The rank this dataset serves (`DatasetOptions::shard`).
  [[nodiscard]] const Shard& shard() const noexcept { return config_.shard; }
  /// @brief How the rows are divided among the ranks (`DatasetOptions::sharding`).
  [[nodiscard]] Sharding sharding() const noexcept { return config_.sharding; }
  /// @brief Bytes of the one allocation (fields, their `Remainder::pad` rows, alignment).
  [[nodiscard]] std::size_t bytes() const noexcept { return storage_ ? storage_->bytes() : 0; }
  /// @brief Shares ownership of the dataset's allocation: its memory stays valid while any
  /// copy of this pointer lives, even after the dataset is destroyed (DLPack exports rely on
  /// it). Null for an empty or moved-from dataset.
  /// The pointer is the allocation's first byte.
  [[nodiscard]] std::shared_ptr<const void> storage_owner() const noexcept {
    if (!storage_) return nullptr;
    return std::shared_ptr<const void>(storage_, storage_->data());  // aliasing: shares storage_
  }

  /// @brief Whether the data was moved to another dataset (and none moved in since): the
  /// dataset is empty and its epochs throw, saying so.
  [[nodiscard]] bool moved_from() const noexcept { return tenancy_.moved_from(); }

  /// @brief Bytes of the ring of gathering epochs: 0 until the first one is made.
  [[nodiscard]] std::size_t ring_bytes() const noexcept { return ring_.bytes(); }
  /// @brief No rows stored. A rank of a job with fewer rows than ranks may be empty and still
  /// serve a batch of padding, so that it takes part in every step.
  [[nodiscard]] bool empty() const noexcept { return num_rows() == 0; }
  [[nodiscard]] const Space& space() const noexcept { return space_; }
  /// @brief The stream the dataset's device work is ordered on: the one
  /// `DatasetOptions::stream` named (borrowed), or a non-blocking stream the dataset owns.
  /// @note The upload has completed when the constructor returns; kernels on any stream
  /// may read the data from then on. Later device work of the dataset is ordered on this
  /// stream.
  [[nodiscard]] stream_type stream() const noexcept { return stream_.get(); }

  /// @brief Batch `index` of every field: pointer offsets into the allocation, no copy.
  /// Single rank: rows `[index * batch_size(), ...)`; the last batch is short under
  /// `Remainder::partial`, and full under `Remainder::pad`, with `valid_rows()` real rows
  /// followed by the dataset's first rows. Sharded: this rank's batch `index` of an unshuffled
  /// epoch (see `Sharding`), padded where the rank's share is a row short.
  /// @throws std::out_of_range when `index >= num_batches()`.
  [[nodiscard]] batch_type batch(std::size_t index) const {
    if (index >= num_batches()) throw_batch_out_of_range(index);
    return batch_at(layout_.geometry.slice(index, layout_.geometry.lane));
  }

  /// @brief One epoch: the batches in the order `options` gives (see `Epoch` for the cost of
  /// each shuffle and how long a gathered view stays valid).
  /// @throws CapacityError when a gathering epoch's ring does not fit.
  template <bool Kernels = detail::kernels_available>
  [[nodiscard]] Epoch<DeviceDataset, NoConversion, Kernels> epoch(EpochOptions options = {}) {
    return Epoch<DeviceDataset, NoConversion, Kernels>(*this, options, {});
  }

  /// @brief One epoch whose batches hold field `Field` converted by `conversion` (e.g.
  /// `convert<0>(Normalize{1.0f / 255, 0})`), gathered into the ring.
  template <std::size_t Field, class Op, bool Kernels = detail::kernels_available>
  [[nodiscard]] Epoch<DeviceDataset, FieldConversion<Field, Op>, Kernels> epoch(
      EpochOptions options, FieldConversion<Field, Op> conversion) {
    static_assert(Field < num_fields, "the converted field is past the dataset's fields");
    return Epoch<DeviceDataset, FieldConversion<Field, Op>, Kernels>(*this, options, conversion);
  }

  /// @brief The whole of field `Field`: every stored row (this rank's part when partitioned),
  /// including any dropped remainder, without the padding rows.
  template <std::size_t Field>
  [[nodiscard]] std::tuple_element_t<Field, batch_type> field() const noexcept {
    static_assert(Field < num_fields, "field index past the dataset's fields");
    return std::get<Field>(fields_).subview(0, num_rows());
  }

 private:
  template <std::size_t Fields, std::size_t... Index>
  static batch_type views(const detail::Allocation<Space>& storage,
                          const detail::DatasetLayout<Fields>& layout,
                          std::index_sequence<Index...> /*fields*/,
                          const HostTensor<const Ts>&... fields) {
    return batch_type(BatchView<const Ts>(
        reinterpret_cast<const Ts*>(storage.data() + layout.offsets[Index]),  // NOLINT
        layout.geometry.stored_rows, fields.row_shape())...);
  }

  // The zero-copy views of a slice of the stored rows (padding rows included: `fields_` views
  // every stored row, `field<F>()` only the dataset's own).
  [[nodiscard]] batch_type batch_at(const detail::BatchSlice& slice) const {
    return std::apply(
        [&slice](const auto&... field) {
          return batch_type(field.subview(slice.first, slice.rows).with_valid_rows(slice.valid)...);
        },
        fields_);
  }

  [[noreturn]] void throw_batch_out_of_range(std::size_t index) const {
    if (moved_from())
      throw std::out_of_range("resident: batch index " + std::to_string(index) +
                              " is out of range: the dataset was moved from and holds no data; "
                              "read the batches of the dataset it was moved to");
    throw std::out_of_range("resident: batch index " + std::to_string(index) +
                            " is out of range; the dataset has " + std::to_string(num_batches()) +
                            " batches (" + std::to_string(num_rows()) + " rows, batch size " +
                            std::to_string(config_.batch_size) + ", remainder " +
                            remainder_name(config_.remainder) + "); use an index below " +
                            std::to_string(num_batches()));
  }

  template <class, class, bool>
  friend class Epoch;

  // The ring of gathering epochs, allocated at the first one after its own capacity check and
  // grown (never shrunk) when an epoch's conversion needs wider slots. On refusal the ring
  // held so far stays as it was.
  void ensure_ring(std::size_t bytes) {
    if (ring_.bytes() >= bytes) return;
    const Capacity capacity = space_.capacity();
    if (bytes > detail::usable_bytes(capacity.free_bytes, config_.reserve_bytes))
      throw ring_refusal(bytes, capacity);
    detail::Allocation<Space> grown(space_, bytes);
    ring_.swap(grown);
  }

  [[nodiscard]] CapacityError ring_refusal(std::size_t bytes, const Capacity& capacity) const {
    using detail::format_bytes;
    return CapacityError(space_.name(), bytes, capacity.free_bytes, capacity.total_bytes,
                         config_.reserve_bytes,
                         "the dataset itself (" + format_bytes(this->bytes()) +
                             ") is uploaded; a gathering epoch (Shuffle::samples, a conversion or "
                             "batch_indices()) needs this ring of " +
                             std::to_string(config_.ring_depth) +
                             " batches besides: lower "
                             "DatasetOptions::ring_depth or batch_size, lower the reserve, or use "
                             "Shuffle::batches, which is zero-copy and needs no ring",
                         "the gather ring");
  }

  [[nodiscard]] const detail::ShardGeometry& geometry() const noexcept { return layout_.geometry; }

  // What moves with the data but is not emptied by a move.
  struct Config {
    std::size_t batch_size;
    Remainder remainder;
    std::size_t reserve_bytes;
    std::size_t ring_depth;
    Shard shard;
    Sharding sharding;
  };

  Space space_;
  Config config_;
  detail::DatasetLayout<num_fields> layout_{};
  std::shared_ptr<detail::Allocation<Space>> storage_;  // shared with storage_owner()
  detail::Allocation<Space> ring_;
  std::size_t ring_generation_ = 0;
  detail::RingFences<Space> fences_;  // orders the ring against consumers' streams
  detail::OwnedStream<Space> stream_;
  batch_type fields_{};
  detail::Tenancy tenancy_;
};

/// Deduces the field types from the tensors, const or not: `DeviceDataset ds(space, opt, x, y)`.
template <class Space, class... Ts>
DeviceDataset(Space, DatasetOptions, HostTensor<Ts>...)
    -> DeviceDataset<Space, std::remove_const_t<Ts>...>;

/// @brief Exchanges the contents of two datasets.
template <class Space, class... Ts>
void swap(DeviceDataset<Space, Ts...>& a, DeviceDataset<Space, Ts...>& b) noexcept {
  a.swap(b);
}

}  // namespace resident
