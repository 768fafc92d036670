// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// @brief `HostTensor<T>`: a non-owning, typed view of contiguous row-major host data; the
/// input of every upload.

#include <cstddef>
#include <string>
#include <type_traits>

#include "resident/detail/checked_math.hpp"
#include "resident/detail/expects.hpp"
#include "resident/shape.hpp"

namespace resident {

/// @brief Non-owning view of contiguous row-major host memory: `shape()[0]` rows, each of
/// `row_shape()` elements of type `T`.
/// @tparam T element type, usually `const float`, `const std::int32_t`, `const std::uint8_t`.
/// @note The view does not extend the lifetime of the data. How long resident reads it depends
/// on where it is passed: a `DeviceDataset` (and `plan`, `make_dataset` when it preloads) reads
/// it only during the call; a `StreamingDataset` (and `make_dataset` when it streams) reads it
/// every epoch, so the data must outlive the dataset and stay unchanged.
template <class T>
class HostTensor {
 public:
  using element_type = T;                  ///< Element type as viewed (often const).
  using value_type = std::remove_cv_t<T>;  ///< Element type without qualifiers.
  static_assert(std::is_trivially_copyable_v<value_type>,
                "resident copies elements bytewise; T must be trivially copyable");
  static_assert(!std::is_volatile_v<T>, "volatile elements are not supported");

  /// @brief An empty tensor: no data, shape `(0,)`.
  // Shape(0) checks rank and element count, neither of which can fail for one extent of 0.
  HostTensor() noexcept : shape_(0) {}  // NOLINT(bugprone-exception-escape)

  /// @brief Views `shape.elements()` elements starting at `data`.
  /// @param data first element; may be null only when the tensor is empty
  /// @param shape `{rows, d1, d2, ...}`, rank at least 1
  /// @throws InvalidArgument on rank 0, a null pointer for non-empty data, or a byte size that
  /// overflows `size_t`.
  HostTensor(T* data, const Shape& shape) : data_(data), shape_(shape) {
    RESIDENT_EXPECTS(shape_.rank() >= 1,
                     "a HostTensor needs at least one axis (its rows); pass {rows, ...}, e.g. "
                     "{n} for one value per row");
    bytes_ = detail::checked_mul(shape_.elements(), sizeof(value_type), "HostTensor byte size");
    // Checked apart from bytes_: with zero rows a row can still be too large to address.
    (void)detail::checked_mul(row_elements(), sizeof(value_type), "HostTensor row byte size");
    RESIDENT_EXPECTS(data_ != nullptr || bytes_ == 0,
                     "HostTensor of shape " + shape_.to_string() +
                         " has a null data pointer; pass the address of its first element");
  }

  /// @brief A view of mutable data converts to a view of const data.
  template <class U, std::enable_if_t<std::is_same_v<const U, T> && !std::is_const_v<U>, int> = 0>
  HostTensor(const HostTensor<U>& other) noexcept  // NOLINT(google-explicit-constructor)
      : data_(other.data()), shape_(other.shape()), bytes_(other.bytes()) {}

  /// @brief First element; may be null when the tensor is empty.
  [[nodiscard]] T* data() const noexcept { return data_; }
  /// @brief Full shape: `{rows(), row_shape()...}`.
  [[nodiscard]] const Shape& shape() const noexcept { return shape_; }
  /// @brief Rows: the first extent of the shape.
  [[nodiscard]] std::size_t rows() const noexcept { return shape_[0]; }
  [[nodiscard]] std::size_t size() const noexcept { return shape_.elements(); }  ///< elements
  /// @brief Bytes of the data: `size() * sizeof(value_type)`.
  [[nodiscard]] std::size_t bytes() const noexcept { return bytes_; }
  /// @brief Shape of one row: the shape without its first extent.
  [[nodiscard]] Shape row_shape() const noexcept { return shape_.drop_front(); }
  /// @brief Elements in one row: `row_shape().elements()` (1 for a 1-d tensor).
  [[nodiscard]] std::size_t row_elements() const noexcept { return row_shape().elements(); }
  /// @brief Bytes of one row: `row_elements() * sizeof(value_type)`.
  [[nodiscard]] std::size_t row_bytes() const noexcept {
    return row_elements() * sizeof(value_type);  // checked at construction
  }

 private:
  T* data_ = nullptr;
  Shape shape_;
  std::size_t bytes_ = 0;
};

}  // namespace resident
