// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// @brief `BatchView<T>`: a non-owning, trivially copyable view of consecutive rows of one
/// field; what `DeviceDataset::batch(i)` returns, usable in host and device code.

#include <cstddef>
#include <string>
#include <type_traits>
#include <utility>

#include "resident/config.hpp"
#include "resident/shape.hpp"

#if __has_include(<cuda/std/mdspan>)
#include <cuda/std/mdspan>

#include "resident/error.hpp"
#define RESIDENT_DETAIL_HAS_MDSPAN 1
#else
#define RESIDENT_DETAIL_HAS_MDSPAN 0
#endif

namespace resident {

/// @brief `rows()` consecutive rows of `row_shape()` elements each, in the memory of the
/// dataset's space. Never owns, never allocates, never copies.
/// @tparam T element type, `const` for dataset views.
/// @note Valid while the data it views lives: a dataset that is moved or swapped hands its data
/// on and the views stay valid; destroying or assigning over the dataset that holds the data
/// ends them, and a view of a gathering epoch's ring also ends when its slot is reused.
/// Works with Thrust directly: `thrust::device_pointer_cast(view.begin())`.
template <class T>
class BatchView {
 public:
  using element_type = T;                  ///< Element type as viewed.
  using value_type = std::remove_cv_t<T>;  ///< Element type without qualifiers.

  /// @brief An empty view: no rows, no data.
  constexpr BatchView() noexcept = default;

  /// @brief `rows` rows of `row_shape` elements starting at `data`, of which the first
  /// `valid_rows` are real data and the rest padding (not checked; the row rank is below
  /// `Shape::max_rank`).
  RESIDENT_HOST_DEVICE constexpr BatchView(T* data, std::size_t rows, Shape row_shape,
                                           std::size_t valid_rows) noexcept
      : data_(data),
        rows_(rows),
        valid_rows_(valid_rows),
        row_shape_(row_shape),
        row_elements_(row_shape.elements()) {}

  /// @brief `rows` rows of `row_shape` elements starting at `data`, all of them real.
  RESIDENT_HOST_DEVICE constexpr BatchView(T* data, std::size_t rows, Shape row_shape) noexcept
      : BatchView(data, rows, row_shape, rows) {}

  /// @brief A view of mutable elements converts to a view of const elements.
  template <class U, std::enable_if_t<std::is_same_v<const U, T> && !std::is_const_v<U>, int> = 0>
  // cppcheck-suppress noExplicitConstructor ; T* converts to const T*, and so do views of them
  RESIDENT_HOST_DEVICE constexpr BatchView(  // NOLINT(google-explicit-constructor)
      const BatchView<U>& other) noexcept
      : BatchView(other.data(), other.rows(), other.row_shape(), other.valid_rows()) {}

  /// @brief First element, in the memory of the dataset's space (null for a default view).
  [[nodiscard]] RESIDENT_HOST_DEVICE constexpr T* data() const noexcept { return data_; }
  /// @brief Rows in the view, padding rows included (see `valid_rows()`).
  [[nodiscard]] RESIDENT_HOST_DEVICE constexpr std::size_t rows() const noexcept { return rows_; }
  /// @brief Rows that hold real data: `rows()`, except in a last batch that is padded (under
  /// `Remainder::pad`, or on a rank whose share is a row short of the others'), whose rows
  /// past `valid_rows()` are padding for a loss to mask.
  [[nodiscard]] RESIDENT_HOST_DEVICE constexpr std::size_t valid_rows() const noexcept {
    return valid_rows_;
  }
  /// @brief Shape of one row (the field's shape without its first axis).
  [[nodiscard]] RESIDENT_HOST_DEVICE constexpr const Shape& row_shape() const noexcept {
    return row_shape_;
  }
  /// @brief Elements in one row: `row_shape().elements()` (1 for a row of one value).
  [[nodiscard]] RESIDENT_HOST_DEVICE constexpr std::size_t row_elements() const noexcept {
    return row_elements_;
  }
  /// @brief Elements in the view: `rows() * row_elements()`.
  [[nodiscard]] RESIDENT_HOST_DEVICE constexpr std::size_t size() const noexcept {
    return rows_ * row_elements_;
  }
  /// @brief Bytes in the view: `size() * sizeof(value_type)`.
  [[nodiscard]] RESIDENT_HOST_DEVICE constexpr std::size_t bytes() const noexcept {
    return size() * sizeof(value_type);
  }
  /// @brief Whether the view holds no elements (`size() == 0`).
  [[nodiscard]] RESIDENT_HOST_DEVICE constexpr bool empty() const noexcept { return size() == 0; }
  /// @brief Raw pointers, so the view works as a range and with Thrust/CUB.
  [[nodiscard]] RESIDENT_HOST_DEVICE constexpr T* begin() const noexcept { return data_; }
  /// @brief One past the last element: `data() + size()`.
  [[nodiscard]] RESIDENT_HOST_DEVICE constexpr T* end() const noexcept { return data_ + size(); }
  /// @brief First element of row `row` (< `rows()`, not checked).
  [[nodiscard]] RESIDENT_HOST_DEVICE constexpr T* row(std::size_t row) const noexcept {
    return data_ + row * row_elements_;
  }
  /// @brief Full shape: `{rows(), row_shape()...}`.
  [[nodiscard]] RESIDENT_HOST_DEVICE constexpr Shape shape() const noexcept {
    return row_shape_.prepend(rows_);
  }
  /// @brief Rows `[first, first + count)` of this view, all real, clamped to the view (as
  /// `std::string::substr` clamps): a range past the end gives the rows there are, or none,
  /// never memory past the view.
  [[nodiscard]] RESIDENT_HOST_DEVICE constexpr BatchView subview(std::size_t first,
                                                                 std::size_t count) const noexcept {
    BatchView part = *this;  // a copy keeps row_elements_: no recount on the batch(i) path
    const std::size_t start = first < rows_ ? first : rows_;
    part.data_ = row(start);
    part.rows_ = count < rows_ - start ? count : rows_ - start;
    part.valid_rows_ = part.rows_;
    return part;
  }
  /// @brief The same rows, of which the first `valid` (at most `rows()`) are real.
  [[nodiscard]] RESIDENT_HOST_DEVICE constexpr BatchView with_valid_rows(
      std::size_t valid) const noexcept {
    BatchView same = *this;
    same.valid_rows_ = valid < rows_ ? valid : rows_;
    return same;
  }

#if RESIDENT_DETAIL_HAS_MDSPAN
  /// @brief `cuda::std::mdspan` type of rank `Rank` over this view.
  template <std::size_t Rank>
  using mdspan_type = cuda::std::mdspan<T, cuda::std::dextents<std::size_t, Rank>>;

  /// @brief The view as a row-major `cuda::std::mdspan` of rank `Rank` (= 1 + row rank):
  /// `x.to_mdspan<3>()(r, i, j)` for a batch of 28x28 images. Usable in device code.
  /// @throws InvalidArgument on the host when `Rank` is not 1 + `row_shape().rank()`; traps
  /// in device code.
  template <std::size_t Rank>
  [[nodiscard]] RESIDENT_HOST_DEVICE mdspan_type<Rank> to_mdspan() const {
    static_assert(Rank >= 1, "a batch has at least one axis (its rows)");
    if (Rank != row_shape_.rank() + 1) {
#if defined(__CUDA_ARCH__)
      __trap();
#else
      throw InvalidArgument(
          "resident: to_mdspan<" + std::to_string(Rank) + ">() called on a batch of rank " +
          std::to_string(row_shape_.rank() + 1) + " (shape " + shape().to_string() +
          "); use to_mdspan<" + std::to_string(row_shape_.rank() + 1) + ">()");
#endif
    }
    return make_mdspan<Rank>(std::make_index_sequence<Rank>{});
  }

 private:
  template <std::size_t Rank, std::size_t... Axes>
  RESIDENT_HOST_DEVICE mdspan_type<Rank> make_mdspan(std::index_sequence<Axes...>) const {
    return mdspan_type<Rank>(data_, (Axes == 0 ? rows_ : row_shape_[Axes - 1])...);
  }
#endif

 private:
  T* data_ = nullptr;
  std::size_t rows_ = 0;
  std::size_t valid_rows_ = 0;
  Shape row_shape_;
  std::size_t row_elements_ = 0;
};

static_assert(std::is_trivially_copyable_v<BatchView<const float>>,
              "BatchView is passed to kernels by value");

}  // namespace resident

#undef RESIDENT_DETAIL_HAS_MDSPAN
