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
#include "resident/dataset_accessors.hpp"
#include "resident/dataset_options.hpp"
#include "resident/detail/dataset/dataset_core.hpp"
#include "resident/detail/dataset/epoch_order.hpp"
#include "resident/detail/dataset/layout.hpp"
#include "resident/detail/dataset/row_order.hpp"
#include "resident/detail/gather/gather_ring.hpp"
#include "resident/detail/gather/stored_rows.hpp"
#include "resident/detail/gather/transform_pack.hpp"
#include "resident/detail/resources.hpp"
#include "resident/detail/upload/host_upload.hpp"
#include "resident/detail/upload/upload_plan.hpp"
#include "resident/epoch.hpp"
#include "resident/host_tensor.hpp"
#include "resident/space_traits.hpp"

namespace resident {

namespace detail {
template <class Space, class... Ts>
struct PreloadFromSources;
}  // namespace detail

/// @brief A dataset resident in `Space`: fields `Ts...` (features, labels, ...) sharing one
/// row count, held in one allocation with each field's base 256-byte aligned.
/// @tparam Space `HostSpace`, `CudaSpace`, `CudaHostPinnedSpace` or any type meeting the
/// memory-space concept
/// @tparam Ts element type of each field, unqualified (`float`, `std::int32_t`, ...)
/// @note Move-only RAII, by the rule of zero: every member owns or empties itself. A move
/// takes the data and leaves the dataset moved from empty (0 rows, 0 batches, 0 bytes); a move
/// assignment releases the data held before. Epochs made from either side of a move, a move
/// assignment or a swap throw on their next use. Thread-safety: const members may be called
/// from many threads at once.
template <class Space, class... Ts>
class DeviceDataset : public DatasetAccessors<DeviceDataset<Space, Ts...>, Space, Ts...> {
 public:
  using typename DatasetAccessors<DeviceDataset, Space, Ts...>::batch_type;
  using DatasetAccessors<DeviceDataset, Space, Ts...>::num_fields;

  /// @brief Checks capacity, makes one allocation, uploads every field into it.
  /// @param space where to put the data; copies of a space share its accounting
  /// @param options batch size, remainder policy, reserve, upload tuning, stream, progress
  /// @param fields host tensors with equal row counts; read only during this call
  /// @throws InvalidArgument for mismatched rows, batch size 0, byte overflow, a zero chunk
  /// size or the legacy default stream as `options.stream`; CapacityError when the data does not
  /// fit (before allocating) or the allocation fails; Cancelled when the progress callback returns
  /// false; CudaError when a CUDA call fails; whatever the progress callback throws.
  /// @note Strong guarantee: on any exception everything taken is released and the caller's
  /// data is untouched. On return the upload is complete on the device (the dataset's stream
  /// has been synchronised): kernels on any stream may read the data, and `fields` may be
  /// freed at once. How the bytes travel is the space's upload engine
  /// (`space_traits<Space>::upload_engine`): on `CudaSpace`, pinned sources are copied
  /// directly, pageable ones are staged through a ring of pinned buffers while host threads
  /// fill the next one.
  DeviceDataset(Space space, DatasetOptions options, const HostTensor<const Ts>&... fields)
      : DeviceDataset(std::move(space), std::move(options),
                      detail::FieldSources<sizeof...(Ts)>{
                          {fields.shape()...}, {detail::FieldSource{fields.data(), nullptr}...}}) {}

  /// @brief Exchanges the contents of two datasets; the epochs made from either before throw
  /// on their next use (views stay valid: they refer to the data, which only changes owner).
  void swap(DeviceDataset& other) noexcept { std::swap(*this, other); }

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

  /// @brief Bytes of the gather rings held: one per live gathering epoch, and one kept for the
  /// next (0 until the first gathering epoch is made).
  [[nodiscard]] std::size_t ring_bytes() const noexcept { return rings_.bytes(); }

  /// @brief Batch `index` of every field: pointer offsets into the allocation, no copy.
  /// Single rank: rows `[index * batch_size(), ...)`; the last batch is short under
  /// `Remainder::partial`, and full under `Remainder::pad`, with `valid_rows()` real rows
  /// followed by the dataset's first rows. Sharded: this rank's batch `index` of an unshuffled
  /// epoch (see `Sharding`), padded where the rank's share is a row short.
  /// @throws std::out_of_range when `index >= num_batches()`.
  [[nodiscard]] batch_type batch(std::size_t index) const {
    if (index >= core_.num_batches()) core_.throw_batch_out_of_range(index, "dataset");
    return impl_batch(core_.geometry().slice(index, core_.geometry().replica));
  }

  /// @brief One epoch: the batches in the order `options` gives, with the transforms named
  /// (see `Epoch` for the cost of each shuffle and how long a gathered view stays valid):
  /// `ds.epoch(options)`, `ds.epoch(options, convert<0>(Normalize{1.0f / 255, 0}))` (field 0
  /// converted), `ds.epoch(options, augment<0>(ImageLayout::chw(3, 32, 32), RandomCrop{4},
  /// RandomFlip{}))` (field 0's images augmented), or both, in one pass per field. Every
  /// batch of an epoch with a transform is gathered into the ring, under every `Shuffle`.
  /// @throws InvalidArgument when a transform does not fit its field's rows; CapacityError when
  /// a gathering epoch's ring does not fit.
  template <class... Transforms>
  [[nodiscard]] epoch_for<DeviceDataset, Transforms...> epoch(EpochOptions options = {},
                                                              Transforms... transforms) {
    using Pack = detail::TransformPack<num_fields, Transforms...>;
    return {*this, options, Pack::template pick<typename Pack::conversion>(transforms...),
            Pack::template pick<typename Pack::augmentation>(transforms...)};
  }

  /// @brief The whole of field `Field`: every stored row (this rank's part when partitioned),
  /// including any dropped remainder, without the padding rows.
  template <std::size_t Field>
  [[nodiscard]] std::tuple_element_t<Field, batch_type> field() const noexcept {
    static_assert(Field < num_fields, "field index past the dataset's fields");
    return std::get<Field>(fields_.get()).subview(0, core_.num_rows());
  }

  /// @cond impl
  // Implementation access, as Kokkos' `impl_` members: for `Epoch` and `Dataset`, not part
  // of the API.
  [[nodiscard]] const detail::DatasetCore<Space, num_fields>& impl_core() const noexcept {
    return core_;
  }
  [[nodiscard]] detail::DatasetCore<Space, num_fields>& impl_core() noexcept { return core_; }
  [[nodiscard]] detail::GatherRings<Space>& impl_rings() noexcept { return rings_; }
  [[nodiscard]] const detail::GatherRings<Space>& impl_rings() const noexcept { return rings_; }
  // The zero-copy views of a slice of the stored rows (padding rows included: `fields_` views
  // every stored row, `field<F>()` only the dataset's own).
  [[nodiscard]] batch_type impl_batch(const detail::BatchSlice& slice) const {
    return std::apply(
        [&slice](const auto&... field) {
          return batch_type(field.subview(slice.first, slice.rows).with_valid_rows(slice.valid)...);
        },
        fields_.get());
  }
  // What `Epoch` asks of the dataset it serves: the epoch's order, its batches as views, where
  // a gathered batch's rows are, and the rows' shapes.
  using impl_pass_type = detail::EpochOrder;
  static constexpr const char* impl_holding = "the dataset itself";
  [[nodiscard]] impl_pass_type impl_make_pass(const std::weak_ptr<const void>& /*borrower*/,
                                              const EpochOptions& options, bool /*gathers*/) const {
    return {core_.geometry(), options};
  }
  [[nodiscard]] static constexpr bool impl_views(const EpochOptions& options) noexcept {
    return options.shuffle != Shuffle::samples;
  }
  // Every batch of a view epoch is a view of the stored rows, padding included.
  [[nodiscard]] static constexpr bool impl_gathers_some(const impl_pass_type& /*pass*/) noexcept {
    return false;
  }
  [[nodiscard]] static constexpr bool impl_gathers_batch(const impl_pass_type& /*pass*/,
                                                         std::size_t /*k*/) noexcept {
    return false;
  }
  [[nodiscard]] batch_type impl_view(const impl_pass_type& pass, std::size_t k) const {
    return impl_batch(pass.slice(core_.geometry(), k));
  }
  struct impl_gathered {
    detail::RowOrder order;
    detail::BatchSlice slice;
  };
  [[nodiscard]] impl_gathered impl_gather(const impl_pass_type& pass, std::size_t k) const {
    return {pass.rows(core_.geometry(), k), pass.slice(core_.geometry(), k)};
  }
  template <std::size_t Field>
  [[nodiscard]] auto impl_rows(const impl_pass_type& /*pass*/,
                               const impl_gathered& /*gathered*/) const noexcept {
    const auto rows = std::get<Field>(fields_.get());
    return detail::StoredRows<typename decltype(rows)::value_type>{rows.data(),
                                                                   rows.row_elements()};
  }
  // Views of the stored rows need no order: the upload completed before the dataset was made.
  void impl_wait_view(const impl_pass_type& /*pass*/, std::size_t /*k*/,
                      typename Space::stream_type /*consumer*/) const noexcept {}
  void impl_release_view(const impl_pass_type& /*pass*/, std::size_t /*k*/,
                         typename Space::stream_type /*consumer*/) const noexcept {}
  [[nodiscard]] const std::array<Shape, num_fields>& impl_row_shapes() const noexcept {
    return row_shapes_.get();
  }
  /// @endcond

 private:
  friend struct detail::PreloadFromSources<Space, Ts...>;

  // From sources of any kind, host memory or streamed (the archive loaders' deflated members):
  // the same checks, allocation and upload as from tensors.
  DeviceDataset(Space space, DatasetOptions options,
                const detail::FieldSources<sizeof...(Ts)>& sources) {
    const auto layout = detail::make_layout<num_fields>(options, sources.shapes, {sizeof(Ts)...});
    detail::check_upload_options(options);
    const std::size_t reserve = detail::reserve_for(space, options);
    const detail::CapacityVerdict verdict =
        detail::check_capacity(space, reserve, layout.total_bytes);
    if (!verdict.fits) throw verdict.refusal();

    detail::DatasetCore<Space, num_fields> core(std::move(space), options, reserve, layout);
    detail::Allocation<Space> storage(core.space(), layout.total_bytes, core.stream(),
                                      core.stream_keep_alive());
    space_traits<Space>::upload_engine::upload(core.space(), storage.data(),
                                               detail::make_upload_plan(layout, sources.sources),
                                               options, core.stream());

    fields_ = detail::ResetOnMove<batch_type>(
        views(storage, layout, std::index_sequence_for<Ts...>{}, sources.shapes));
    std::array<Shape, num_fields> row_shapes;
    for (std::size_t index = 0; index < num_fields; ++index)
      row_shapes[index] = sources.shapes[index].drop_front();
    row_shapes_ = detail::ResetOnMove<std::array<Shape, num_fields>>(row_shapes);
    storage_ = std::make_shared<detail::Allocation<Space>>(std::move(storage));
    core_ = std::move(core);
  }
  template <std::size_t Fields, std::size_t... Index>
  static batch_type views(const detail::Allocation<Space>& storage,
                          const detail::DatasetLayout<Fields>& layout,
                          std::index_sequence<Index...> /*fields*/,
                          const std::array<Shape, Fields>& shapes) {
    return batch_type(BatchView<const Ts>(
        reinterpret_cast<const Ts*>(storage.data() + layout.offsets[Index]),  // NOLINT
        layout.geometry.stored_rows, shapes[Index].drop_front())...);
  }

  detail::DatasetCore<Space, num_fields> core_;
  std::shared_ptr<detail::Allocation<Space>> storage_;  // shared with storage_owner()
  detail::ResetOnMove<batch_type> fields_;              // views of every stored row
  detail::ResetOnMove<std::array<Shape, num_fields>> row_shapes_;
  detail::GatherRings<Space> rings_;  // lent to gathering epochs, the first made by the first
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

namespace detail {

/// @brief Makes a `DeviceDataset` from prepared sources of any kind (host memory, or streamed
/// bytes such as an archive's deflated members), for the file loaders: the constructor that
/// takes them is private, so that no public signature names a `detail` type.
template <class Space, class... Ts>
struct PreloadFromSources {
  static DeviceDataset<Space, Ts...> make(Space space, const DatasetOptions& options,
                                          const FieldSources<sizeof...(Ts)>& sources) {
    return DeviceDataset<Space, Ts...>(std::move(space), options, sources);
  }
};

}  // namespace detail

}  // namespace resident
