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
#include "resident/detail/dataset/layout.hpp"
#include "resident/detail/dataset/owner_base.hpp"
#include "resident/detail/dataset/preloaded_storage.hpp"
#include "resident/detail/gather/stored_rows.hpp"
#include "resident/detail/upload/upload_plan.hpp"
#include "resident/epoch.hpp"
#include "resident/host_tensor.hpp"
#include "resident/space_traits.hpp"

namespace resident {

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
class DeviceDataset : public DatasetAccessors<DeviceDataset<Space, Ts...>, Space, Ts...>,
                      public detail::PreloadedStorage<Space, sizeof...(Ts)>,
                      public detail::EpochSource<DeviceDataset<Space, Ts...>> {
  using Storage = detail::PreloadedStorage<Space, sizeof...(Ts)>;

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

  /// @brief Batch `index` of every field: pointer offsets into the allocation, no copy.
  /// Single rank: rows `[index * batch_size(), ...)`; the last batch is short under
  /// `Remainder::partial`, and full under `Remainder::pad`, with `valid_rows()` real rows
  /// followed by the dataset's first rows. Sharded: this rank's batch `index` of an unshuffled
  /// epoch (see `Sharding`), padded where the rank's share is a row short.
  /// @throws std::out_of_range when `index >= num_batches()`; InvalidArgument when the rank
  /// stores several parts (`DatasetOptions::parts`): read the batch from an epoch then.
  [[nodiscard]] batch_type batch(std::size_t index) const {
    return impl_batch(this->plain_slice(index, "dataset"));
  }

  /// @brief The whole of field `Field`: every stored row (this rank's part when partitioned),
  /// including any dropped remainder, without the padding rows.
  template <std::size_t Field>
  [[nodiscard]] std::tuple_element_t<Field, batch_type> field() const noexcept {
    static_assert(Field < num_fields, "field index past the dataset's fields");
    return std::get<Field>(fields_.get()).subview(0, this->num_rows());
  }

  /// @cond impl
  // What `Epoch` asks of the dataset beyond what every preloaded dataset answers (see
  // `detail::PreloadedStorage`): its batches as views of the stored rows, padding included
  // (`fields_` views every stored row, `field<F>()` only the dataset's own), and where a
  // gathered batch's rows are.
  static constexpr const char* impl_holding = "the dataset itself";
  [[nodiscard]] batch_type impl_batch(const detail::BatchSlice& slice) const {
    return std::apply(
        [&slice](const auto&... field) {
          return batch_type(field.subview(slice.first, slice.rows).with_valid_rows(slice.valid)...);
        },
        fields_.get());
  }
  [[nodiscard]] bool impl_views(const EpochOptions& options) const noexcept {
    return options.shuffle != Shuffle::samples && this->impl_core().geometry().rank_parts == 1;
  }
  [[nodiscard]] batch_type impl_view(const typename Storage::impl_pass_type& pass,
                                     std::size_t k) const {
    const detail::BatchSlice slice = pass.slice(k);
    return impl_batch({pass.run_first(k), slice.rows, slice.valid});
  }
  template <std::size_t Field>
  [[nodiscard]] auto impl_rows(const typename Storage::impl_pass_type& /*pass*/,
                               const typename Storage::impl_gathered& /*gathered*/) const noexcept {
    const auto rows = std::get<Field>(fields_.get());
    return detail::StoredRows<typename decltype(rows)::value_type>{rows.data(),
                                                                   rows.row_elements()};
  }
  /// @endcond

 private:
  friend struct detail::FromSources;

  // From sources of any kind, host memory or streamed (the archive loaders' deflated members):
  // the same checks, allocation and upload as from tensors.
  DeviceDataset(Space space, const DatasetOptions& options,
                const detail::FieldSources<sizeof...(Ts)>& sources)
      : Storage(std::move(space), options, request(options, sources),
                [&sources](const detail::DatasetLayout<sizeof...(Ts)>& layout) {
                  return detail::make_upload_plan(layout, sources.sources);
                }),
        fields_(views(std::index_sequence_for<Ts...>{})) {}

  static detail::PreloadRequest<sizeof...(Ts)> request(
      const DatasetOptions& options, const detail::FieldSources<sizeof...(Ts)>& sources) {
    detail::PreloadRequest<sizeof...(Ts)> request;
    request.layout = detail::make_layout<sizeof...(Ts)>(options, sources.shapes, {sizeof(Ts)...});
    request.needed_bytes = request.layout.total_bytes;
    for (std::size_t index = 0; index < sizeof...(Ts); ++index)
      request.row_shapes[index] = sources.shapes[index].drop_front();
    return request;
  }
  // Views of every stored row of each field, in the allocation as its layout places them.
  template <std::size_t... Index>
  [[nodiscard]] batch_type views(std::index_sequence<Index...> /*fields*/) const {
    const auto& layout = this->impl_core().layout();
    return batch_type(BatchView<const Ts>(
        reinterpret_cast<const Ts*>(this->data() + layout.offsets[Index]),  // NOLINT
        layout.geometry.stored_rows, this->impl_row_shapes()[Index])...);
  }

  detail::ResetOnMove<batch_type> fields_;  // views of every stored row
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
