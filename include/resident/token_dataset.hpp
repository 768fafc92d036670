// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// @brief `TokenDataset<Space, T>`: a token stream in one allocation of a memory space,
/// uploaded once after a capacity check, served as language-model batches `(x, y)`: windows of
/// `context` tokens and the same windows one token on.

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "resident/augment.hpp"
#include "resident/batch_view.hpp"
#include "resident/dataset_accessors.hpp"
#include "resident/dataset_options.hpp"
#include "resident/detail/dataset/owner_base.hpp"
#include "resident/detail/dataset/preloaded_storage.hpp"
#include "resident/detail/dataset/token_layout.hpp"
#include "resident/detail/gather/window_rows.hpp"
#include "resident/detail/upload/upload_plan.hpp"
#include "resident/epoch.hpp"
#include "resident/error.hpp"
#include "resident/host_tensor.hpp"
#include "resident/space_traits.hpp"
#include "resident/token_options.hpp"

namespace resident {

namespace detail {

/// Where a token stream's elements come from: host memory or streamed bytes (token files).
struct TokenSource {
  std::size_t tokens = 0;  ///< Elements of the whole stream.
  FieldSource source;      ///< Its bytes from the first element.
};

/// Whether `T` is a token type a `TokenDataset` holds.
template <class T>
inline constexpr bool is_token_type_v =
    std::is_same_v<T, std::uint16_t> || std::is_same_v<T, std::uint32_t> ||
    std::is_same_v<T, std::int32_t>;

}  // namespace detail

/// @brief A token stream resident in `Space`, served as language-model batches: each batch is
/// `(x, y)`, two views of `batch_size()` rows of `context()` tokens, where row `r` of `x` is a
/// window of the stream and row `r` of `y` the same window one token on (its next-token
/// targets). The windows are the dataset's rows (`num_rows()`): window `w` starts at token
/// `w * stride()`; sharding, remainder policies, epochs and shuffles count them as any
/// dataset counts its rows.
///
/// Epochs (`epoch(options)`): `Shuffle::none` serves consecutive windows, and
/// `Shuffle::batches` the same batches in a seeded order; with the default stride
/// (`= context`) their `x` and `y` are views into the stream itself (llm.c's layout: a batch
/// is one contiguous span of `B * T + 1` tokens). `Shuffle::samples` takes `batch_size()`
/// windows at independent positions, a seeded permutation of all windows (nanoGPT's
/// sampling, without replacement within an epoch), gathered into the epoch's ring (a kernel
/// on `CudaSpace`, the copy team on the host), `x` and `y` each contiguous. A padded batch
/// (`Remainder::pad`, or a rank a window short) and every batch of a stride other than the
/// context are gathered too: their rows are not one span of the stream. Conversions apply
/// (`convert<0>` for `x`, `convert<1>` for `y`); augmentations do not.
/// @tparam Space `HostSpace`, `CudaSpace`, `CudaHostPinnedSpace` or any memory space
/// @tparam T the token type: `std::uint16_t` (llm.c's and GPT-2's), `std::uint32_t` or
/// `std::int32_t`
/// @note Move-only RAII, as `DeviceDataset` (moves, epochs after a move, thread-safety).
template <class Space, class T>
class TokenDataset : public DatasetAccessors<TokenDataset<Space, T>, Space, T, T>,
                     public detail::PreloadedStorage<Space, 2>,
                     public detail::EpochSource<TokenDataset<Space, T>> {
  using Storage = detail::PreloadedStorage<Space, 2>;
  static_assert(detail::is_token_type_v<T>,
                "a TokenDataset holds tokens of std::uint16_t, std::uint32_t or std::int32_t");

 public:
  using typename DatasetAccessors<TokenDataset, Space, T, T>::batch_type;
  using DatasetAccessors<TokenDataset, Space, T, T>::num_fields;
  using token_type = T;  ///< The tokens' type.

  /// @brief Checks capacity, makes one allocation, uploads the tokens this rank's windows
  /// cover into it (every window when replicated).
  /// @param space where to put the tokens; copies of a space share its accounting
  /// @param options batch size (windows per batch), remainder policy, sharding, reserve, upload
  /// tuning, stream, progress, as for `DeviceDataset`
  /// @param window the context length and the stride of the windows
  /// @param tokens the stream, a 1-D tensor; read only during this call
  /// @throws InvalidArgument for a tensor that is not 1-D, a context of 0, fewer tokens than one
  /// window, and the options a `DeviceDataset` refuses; CapacityError when the tokens do not
  /// fit (before allocating) or the allocation fails; Cancelled; CudaError.
  /// @note Strong guarantee, and on return the upload is complete, as for `DeviceDataset`.
  TokenDataset(Space space, DatasetOptions options, TokenOptions window,
               const HostTensor<const T>& tokens)
      : TokenDataset(std::move(space), std::move(options), window,
                     detail::TokenSource{stream_length(tokens), {tokens.data(), nullptr}}) {}

  /// @brief Exchanges the contents of two token datasets (epochs of either then throw).
  void swap(TokenDataset& other) noexcept { std::swap(*this, other); }

  /// @brief Tokens of a row of `x` and of `y` (`TokenOptions::context`).
  [[nodiscard]] std::size_t context() const noexcept { return context_; }
  /// @brief Tokens from one window's start to the next's (`TokenOptions::stride`, or the
  /// context when that is 0).
  [[nodiscard]] std::size_t stride() const noexcept { return stride_; }
  /// @brief Tokens stored: those this rank's windows cover (0 once moved from).
  [[nodiscard]] std::size_t num_tokens() const noexcept { return this->bytes() / sizeof(T); }
  /// @brief Token of the caller's stream that stored token 0 is: window `first_row()`'s start.
  [[nodiscard]] std::size_t first_token() const noexcept { return first_token_.get(); }
  /// @brief The whole stored stream: `num_tokens()` tokens in the space's memory.
  [[nodiscard]] BatchView<const T> tokens() const noexcept {
    return BatchView<const T>(stored(), num_tokens(), Shape{});
  }

  /// @brief Batch `index` of an unshuffled epoch, as views into the stream: `x` is windows
  /// `[index * batch_size(), ...)` (this rank's, when sharded), `y` the same one token on.
  /// @throws std::out_of_range when `index >= num_batches()`; InvalidArgument when the batch is
  /// not one span of the stream (a padded batch, a stride other than the context, a rank that
  /// stores several parts): read it from an epoch, which gathers it.
  [[nodiscard]] batch_type batch(std::size_t index) const {
    const detail::BatchSlice slice = this->plain_slice(index, "token dataset");
    detail::refuse_unless_span(index, slice, context_, stride_);
    return views(slice);
  }

  /// @cond impl
  // What `Epoch` asks of the dataset beyond what every preloaded dataset answers (see
  // `detail::PreloadedStorage`): its batches as views of the stream where they are one span
  // of it, and where a gathered batch's windows are.
  using typename Storage::impl_gathered;
  using typename Storage::impl_pass_type;
  static constexpr const char* impl_holding = "the token stream";
  static constexpr bool impl_augments = false;  // token windows are not images
  [[nodiscard]] bool impl_views(const EpochOptions& options) const noexcept {
    return stride_ == context_ && options.shuffle != Shuffle::samples &&
           this->impl_core().geometry().rank_parts == 1;
  }
  // A view epoch gathers its padded batches: only a replica's last batch can be one (see
  // `ShardGeometry::slice`), or all of them on a rank that owns no window; and those that are
  // no run of the stored windows (see `PreloadedStorage`).
  [[nodiscard]] bool impl_gathers_some(const impl_pass_type& pass) const noexcept {
    const std::size_t batches = pass.batches();
    return Storage::impl_gathers_some(pass) ||
           (batches != 0 && impl_gathers_batch(pass, batches - 1));
  }
  [[nodiscard]] bool impl_gathers_batch(const impl_pass_type& pass, std::size_t k) const noexcept {
    return !spans(pass.slice(k)) || Storage::impl_gathers_batch(pass, k);
  }
  [[nodiscard]] batch_type impl_view(const impl_pass_type& pass, std::size_t k) const {
    const detail::BatchSlice slice = pass.slice(k);
    return views({pass.run_first(k), slice.rows, slice.valid});
  }
  // Windows that overlap or leave gaps are another order of the same rows' shapes; tiling
  // windows (stride = context) are those a stream of the tokens serves too, whose states it
  // resumes.
  [[nodiscard]] detail::OrderKey impl_order_key(const EpochOptions& /*options*/,
                                                std::uint64_t /*position*/) const noexcept {
    return {stride_ == context_ ? 0 : detail::mix64(stride_), false};
  }
  // Field 0 (x) reads each window from its start, field 1 (y) one token on.
  template <std::size_t Field>
  [[nodiscard]] detail::WindowRows<T> impl_rows(const impl_pass_type& /*pass*/,
                                                const impl_gathered& /*gathered*/) const noexcept {
    return {stored() + Field, stride_, stored_windows_.get()};
  }
  /// @endcond

 private:
  friend struct detail::FromSources;

  static std::size_t stream_length(const HostTensor<const T>& tokens) {
    RESIDENT_EXPECTS(tokens.shape().rank() == 1,
                     "a token stream is a 1-D tensor, but the tensor given has shape " +
                         tokens.shape().to_string() +
                         "; pass the tokens as one axis (Shape{count}), e.g. a flattened view");
    return tokens.shape()[0];
  }

  // From a source of any kind (host memory, or token files' bytes): the same checks,
  // allocation and upload.
  TokenDataset(Space space, const DatasetOptions& options, TokenOptions window,
               const detail::TokenSource& source)
      : TokenDataset(std::move(space), options, detail::make_token_windows(source.tokens, window),
                     source) {}
  TokenDataset(Space space, const DatasetOptions& options, const detail::TokenWindows& stream,
               const detail::TokenSource& source)
      : Storage(std::move(space), options, request(options, stream),
                [&stream, &source](const detail::DatasetLayout<2>& layout) {
                  return upload(stream, source, layout);
                }),
        context_(stream.context),
        stride_(stream.stride) {
    const detail::StoredWindows windows =
        detail::stored_windows(stream, this->impl_core().geometry());
    stored_windows_ = detail::ResetOnMove<std::size_t>(windows.windows);
    first_token_ = detail::ResetOnMove<std::size_t>(windows.first_token(stream));
  }

  // The stored tokens (those this rank's windows cover) and what the capacity check counts
  // besides: a ring, where every epoch gathers.
  static detail::PreloadRequest<2> request(const DatasetOptions& options,
                                           const detail::TokenWindows& stream) {
    detail::PreloadRequest<2> request;
    request.layout = detail::make_token_layout(options, stream, sizeof(T));
    request.needed_bytes = detail::token_dataset_bytes(options, stream, request.layout, sizeof(T));
    request.row_shapes = {Shape{stream.context}, Shape{stream.context}};
    request.advice =
        "shard it (Sharding::partitioned stores a rank's windows only), free memory, or load it "
        "with load_token_file, which streams a token file that does not fit";
    request.subject = "token dataset";
    return request;
  }
  // The stored tokens, read from `source` from the first stored window's first token.
  static detail::UploadPlan upload(const detail::TokenWindows& stream,
                                   const detail::TokenSource& source,
                                   const detail::DatasetLayout<2>& layout) {
    const std::size_t first_byte =
        detail::stored_windows(stream, layout.geometry).first_token(stream) * sizeof(T);
    detail::UploadPlan parts;
    parts.total_bytes = layout.total_bytes;
    if (source.source.streamed != nullptr)
      parts.parts.push_back({0, layout.total_bytes, nullptr, source.source.streamed, first_byte});
    else
      parts.parts.push_back({0, layout.total_bytes,
                             static_cast<const std::byte*>(source.source.memory) + first_byte});
    return parts;
  }

  // The allocation's tokens.
  [[nodiscard]] const T* stored() const noexcept {
    return reinterpret_cast<const T*>(this->data());  // NOLINT: the allocation holds tokens
  }

  // Whether a batch's rows are one span of the stream: consecutive windows that tile it, none
  // of them padding.
  [[nodiscard]] bool spans(const detail::BatchSlice& slice) const noexcept {
    return stride_ == context_ && slice.valid == slice.rows;
  }
  [[nodiscard]] batch_type views(const detail::BatchSlice& slice) const {
    const T* x = stored() + slice.first * stride_;
    const Shape row{context_};
    return batch_type(BatchView<const T>(x, slice.rows, row),
                      BatchView<const T>(x + 1, slice.rows, row));
  }

  std::size_t context_ = 0;  // kept after a move, as the batch size
  std::size_t stride_ = 0;
  detail::ResetOnMove<std::size_t> stored_windows_;
  detail::ResetOnMove<std::size_t> first_token_;
};

/// Deduces the token type from the tensor: `TokenDataset ds(space, options, window, tokens)`.
template <class Space, class T>
TokenDataset(Space, DatasetOptions, TokenOptions, HostTensor<T>)
    -> TokenDataset<Space, std::remove_const_t<T>>;

/// @brief Exchanges the contents of two token datasets.
template <class Space, class T>
void swap(TokenDataset<Space, T>& a, TokenDataset<Space, T>& b) noexcept {
  a.swap(b);
}

}  // namespace resident
