// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <array>
#include <cstddef>
#include <memory>
#include <string>
#include <utility>

#include "resident/dataset_options.hpp"
#include "resident/detail/dataset/dataset_core.hpp"
#include "resident/detail/dataset/epoch_order.hpp"
#include "resident/detail/dataset/layout.hpp"
#include "resident/detail/dataset/owner_base.hpp"
#include "resident/detail/dataset/row_order.hpp"
#include "resident/detail/expects.hpp"
#include "resident/detail/gather/gather_ring.hpp"
#include "resident/detail/resources.hpp"
#include "resident/detail/upload/host_upload.hpp"
#include "resident/detail/upload/upload_plan.hpp"
#include "resident/epoch_options.hpp"
#include "resident/error.hpp"
#include "resident/shape.hpp"
#include "resident/space_traits.hpp"

namespace resident::detail {

/// @brief What a preloaded dataset asks of its storage when it is made: the layout, the bytes
/// the capacity check needs, the rows' shapes, and what a refusal says.
template <std::size_t Fields>
struct PreloadRequest {
  DatasetLayout<Fields> layout;
  std::size_t needed_bytes = 0;  ///< The allocation's, and what else the dataset counts.
  std::array<Shape, Fields> row_shapes{};
  std::string advice = CapacityError::default_advice;  ///< What a refusal says to do.
  std::string subject = "dataset";                     ///< What a refusal says needs the bytes.
};

/// @brief A preloaded dataset's data, in one allocation of its space, and the hooks of `Epoch`
/// that every preloaded dataset answers alike (see owner_base.hpp): the base of
/// `DeviceDataset` and `TokenDataset`, which add the views of their batches (`impl_views`,
/// `impl_view`), where a gather reads their rows (`impl_rows`), and what a refusal names
/// (`impl_holding`). Move-only; moved from, it holds nothing.
template <class Space, std::size_t Fields>
class PreloadedStorage : public OwnerBase<Space, Fields> {
 public:
  /// @brief Bytes of the one allocation (for a `DeviceDataset`: its fields, their
  /// `Remainder::pad` rows, alignment; for a `TokenDataset`: the stored tokens).
  [[nodiscard]] std::size_t bytes() const noexcept { return storage_ ? storage_->bytes() : 0; }
  /// @brief Shares ownership of the dataset's allocation: its memory stays valid while any
  /// copy of this pointer lives, even after the dataset is destroyed (DLPack exports rely on
  /// it). Null for an empty or moved-from dataset. The pointer is the allocation's first byte.
  [[nodiscard]] std::shared_ptr<const void> storage_owner() const noexcept {
    if (!storage_) return nullptr;
    return std::shared_ptr<const void>(storage_, storage_->data());  // aliasing: shares storage_
  }
  /// @brief Bytes of the gather rings held: one per live gathering epoch, and one kept for the
  /// next (0 until the first gathering epoch is made).
  [[nodiscard]] std::size_t ring_bytes() const noexcept { return this->impl_rings().bytes(); }

  /// @cond impl
  // A share of the memory the `bytes` at `first` lie in: the allocation (a field, a zero-copy
  // batch) or a gather ring (a gathered batch); null when neither holds them.
  [[nodiscard]] std::shared_ptr<const void> impl_owner_of(const void* first,
                                                          std::size_t bytes) const noexcept {
    const auto* at = static_cast<const std::byte*>(first);
    if (storage_ && at >= storage_->data() && at + bytes <= storage_->data() + storage_->bytes())
      return storage_owner();
    return this->impl_rings().owner_of(first, bytes);
  }
  // An epoch's order over the stored rows, and a gathered batch's rows in it.
  using impl_pass_type = EpochOrder;
  [[nodiscard]] impl_pass_type impl_make_pass(const std::weak_ptr<const void>& /*borrower*/,
                                              const EpochOptions& options, const EpochStart& start,
                                              bool /*gathers*/) const {
    return {this->impl_core().geometry(), options, start};
  }
  [[nodiscard]] static const EpochOrder& impl_order(const impl_pass_type& pass) noexcept {
    return pass;
  }
  // A batch that is no run of the stored rows is gathered, in a view epoch too.
  [[nodiscard]] static bool impl_gathers_some(const impl_pass_type& pass) noexcept {
    return pass.gathers_some();
  }
  [[nodiscard]] static bool impl_gathers_batch(const impl_pass_type& pass, std::size_t k) noexcept {
    return pass.run_first(k) == EpochOrder::no_run;
  }
  struct impl_gathered {
    RowOrder order;
    BatchSlice slice;
  };
  [[nodiscard]] static impl_gathered impl_gather(const impl_pass_type& pass, std::size_t k) {
    return {pass.rows(k), pass.slice(k)};
  }
  /// Nothing to check: the rows are the dataset's own.
  static void impl_check_gathered(const impl_pass_type& /*pass*/) noexcept {}
  /// @endcond

 protected:
  PreloadedStorage() = default;
  /// @brief Checks that `request.needed_bytes` fit beside the reserve, makes the core (and its
  /// stream), allocates `request.layout.total_bytes` and uploads into it what
  /// `make_upload(layout)` plans, complete on return. The plan is made only once the bytes are
  /// there: a refused layout (a padded one of billions of rows) never lists its parts.
  /// @throws InvalidArgument for invalid upload options or stream; CapacityError (naming
  /// `request.subject`, advising `request.advice`) when the bytes do not fit, before anything
  /// is allocated, or when the allocation fails; what the upload throws. Strong guarantee:
  /// everything taken is released.
  template <class MakeUpload>
  PreloadedStorage(Space space, const DatasetOptions& options,
                   const PreloadRequest<Fields>& request, const MakeUpload& make_upload)
      : OwnerBase<Space, Fields>(request.row_shapes) {
    check_upload_options(options);
    const std::size_t reserve = reserve_for(space, options);
    const CapacityVerdict verdict = check_capacity(space, reserve, request.needed_bytes);
    if (!verdict.fits) throw verdict.refusal(request.advice, request.subject);
    DatasetCore<Space, Fields> core(std::move(space), options, reserve, request.layout);
    Allocation<Space> storage(core.space(), request.layout.total_bytes, core.stream(),
                              core.stream_keep_alive());
    space_traits<Space>::upload_engine::upload(core.space(), storage.data(),
                                               make_upload(request.layout), options, core.stream());
    storage_ = std::make_shared<Allocation<Space>>(std::move(storage));
    this->impl_core() = std::move(core);
  }

  /// @brief Storage that shares `dataset`'s allocation (a subset of its rows), cut by `core`:
  /// the allocation lives while either does.
  PreloadedStorage(const PreloadedStorage& dataset, const std::array<Shape, Fields>& row_shapes,
                   DatasetCore<Space, Fields> core)
      : OwnerBase<Space, Fields>(row_shapes), storage_(dataset.storage_) {
    this->impl_core() = std::move(core);
  }

  /// @brief Batch `index` of the unshuffled epoch, as the rows it views (`what` names the
  /// dataset in a refusal).
  /// @throws std::out_of_range past the batches; InvalidArgument where the rank stores several
  /// parts, whose batches are no run of the stored rows.
  [[nodiscard]] BatchSlice plain_slice(std::size_t index, const char* what) const {
    const auto& core = this->impl_core();
    if (index >= core.num_batches()) core.throw_batch_out_of_range(index, what);
    RESIDENT_EXPECTS(core.geometry().rank_parts == 1,
                     "this rank stores " + std::to_string(core.geometry().rank_parts) +
                         " parts (DatasetOptions::parts), whose batches take a row of each in "
                         "turn, no run of the stored rows; read batch " +
                         std::to_string(index) + " from an epoch, which gathers it");
    return core.geometry().slice(index, core.geometry().replica);
  }

  /// @brief The allocation's first byte (null when empty or moved from).
  [[nodiscard]] const std::byte* data() const noexcept {
    return storage_ ? storage_->data() : nullptr;
  }

 private:
  std::shared_ptr<Allocation<Space>> storage_;  // shared with storage_owner()
};

}  // namespace resident::detail
