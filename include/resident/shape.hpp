// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// @brief `Shape`: the extents of a row-major tensor, of bounded rank, trivially copyable so
/// that views carrying it can be passed to kernels by value.

#include <cstddef>
#include <numeric>
#include <string>
#include <type_traits>
#include <vector>

#include "resident/config.hpp"
#include "resident/detail/checked_math.hpp"
#include "resident/detail/expects.hpp"

namespace resident {

/// @brief Extents of a row-major tensor, outermost first: `{rows, d1, d2, ...}`.
/// @note Construction checks every extent (non-negative, product fits `size_t`), so
/// `elements()` of an existing shape never overflows.
class Shape {
 public:
  static constexpr std::size_t max_rank = 8;  ///< Highest rank a shape can hold.

  /// @brief The rank-0 shape (a scalar: one element).
  constexpr Shape() noexcept = default;

  /// @brief `Shape{60000, 28, 28}`; accepts any integer types, so `{n, 28}` with an `int n`
  /// compiles without narrowing casts.
  /// @throws InvalidArgument if an extent is negative or the element count overflows.
  template <class... Extents,
            std::enable_if_t<(sizeof...(Extents) > 0) && (std::is_integral_v<Extents> && ...),
                             int> = 0>
  Shape(Extents... extents)  // NOLINT(google-explicit-constructor): `{rows, cols}` must convert
  {
    static_assert(sizeof...(Extents) <= max_rank, "resident::Shape holds at most 8 extents");
    (push_back_checked(extents), ...);
    check_elements();
  }

  /// @brief A shape of run-time rank, e.g. one read from a file header.
  /// @throws InvalidArgument if the rank exceeds `max_rank` or the element count overflows.
  // cppcheck-suppress noExplicitConstructor ; shapes convert from extents, as {n, d} does
  Shape(const std::vector<std::size_t>& extents) {  // NOLINT(google-explicit-constructor)
    RESIDENT_EXPECTS(extents.size() <= max_rank,
                     "a shape holds at most " + std::to_string(max_rank) + " extents, got " +
                         std::to_string(extents.size()) + "; reshape the data to fewer axes");
    for (const std::size_t extent : extents) extents_[rank_++] = extent;
    check_elements();
  }

  /// @brief Number of extents (0 for the scalar shape).
  [[nodiscard]] RESIDENT_HOST_DEVICE constexpr std::size_t rank() const noexcept { return rank_; }
  /// @brief Same as `rank()`, so a shape reads like the container it is.
  [[nodiscard]] RESIDENT_HOST_DEVICE constexpr std::size_t size() const noexcept { return rank_; }
  /// @brief Extent of axis `axis`, outermost first (`axis < rank()`, not checked).
  [[nodiscard]] RESIDENT_HOST_DEVICE constexpr std::size_t operator[](std::size_t axis) const {
    return extents_[axis];
  }
  /// @brief First extent, so a shape works as a range of its extents.
  [[nodiscard]] RESIDENT_HOST_DEVICE constexpr const std::size_t* begin() const noexcept {
    return extents_;
  }
  /// @brief One past the last extent: `begin() + rank()`.
  [[nodiscard]] RESIDENT_HOST_DEVICE constexpr const std::size_t* end() const noexcept {
    return extents_ + rank_;
  }

  /// @brief Product of the extents (1 for rank 0).
  [[nodiscard]] RESIDENT_HOST_DEVICE constexpr std::size_t elements() const noexcept {
    std::size_t product = 1;
    for (std::size_t axis = 0; axis < rank_; ++axis) product *= extents_[axis];
    return product;
  }

  /// @brief The shape without its outermost extent: the shape of one row.
  [[nodiscard]] RESIDENT_HOST_DEVICE constexpr Shape drop_front() const noexcept {
    Shape inner;
    for (std::size_t axis = 1; axis < rank_; ++axis) inner.extents_[inner.rank_++] = extents_[axis];
    return inner;
  }

  /// @brief The shape with `extent` as a new outermost axis; the rank must be below
  /// `max_rank` (a shape at `max_rank` is returned unchanged).
  [[nodiscard]] RESIDENT_HOST_DEVICE constexpr Shape prepend(std::size_t extent) const noexcept {
    if (rank_ == max_rank) return *this;
    Shape outer;
    outer.extents_[outer.rank_++] = extent;
    for (std::size_t axis = 0; axis < rank_; ++axis) outer.extents_[outer.rank_++] = extents_[axis];
    return outer;
  }

  /// @brief `"(60000, 28, 28)"`, for messages.
  [[nodiscard]] std::string to_string() const {
    std::string text = "(";
    for (std::size_t axis = 0; axis < rank_; ++axis) {
      if (axis > 0) text += ", ";
      text += std::to_string(extents_[axis]);
    }
    return text + (rank_ == 1 ? ",)" : ")");
  }

  [[nodiscard]] RESIDENT_HOST_DEVICE friend constexpr bool operator==(const Shape& a,
                                                                      const Shape& b) noexcept {
    if (a.rank_ != b.rank_) return false;
    for (std::size_t axis = 0; axis < a.rank_; ++axis)
      if (a.extents_[axis] != b.extents_[axis]) return false;
    return true;
  }
  [[nodiscard]] RESIDENT_HOST_DEVICE friend constexpr bool operator!=(const Shape& a,
                                                                      const Shape& b) noexcept {
    return !(a == b);
  }

 private:
  template <class Extent>
  void push_back_checked(Extent extent) {
    if constexpr (std::is_signed_v<Extent>) {
      RESIDENT_EXPECTS(extent >= 0, "shape extent " + std::to_string(rank_) + " is " +
                                        std::to_string(extent) +
                                        "; extents must be zero or positive");
    }
    extents_[rank_++] = static_cast<std::size_t>(extent);
  }

  // Zero extents are skipped so that a shape with no rows but huge rows is refused too:
  // then every sub-product (a row's element count included) fits as well.
  void check_elements() const {
    std::size_t product = 1;
    for (std::size_t axis = 0; axis < rank_; ++axis)
      if (extents_[axis] != 0)
        product = detail::checked_mul(product, extents_[axis], "element count of shape");
  }

  std::size_t extents_[max_rank]{};  // NOLINT(modernize-avoid-c-arrays): usable in device code
  std::size_t rank_ = 0;
};

static_assert(std::is_trivially_copyable_v<Shape>, "Shape travels to kernels by value");

namespace detail {

/// @brief Bytes of an array of `shape` with elements of `element_bytes` bytes.
/// @throws InvalidArgument naming `what` when the bytes of any part of the array overflow
/// `size_t`, its rows' included: a zero extent (no rows) does not excuse rows too large to
/// address, which a reader or a dataset would later multiply out.
inline std::size_t checked_shape_bytes(const Shape& shape, std::size_t element_bytes,
                                       const char* what) {
  (void)std::accumulate(shape.begin(), shape.end(), element_bytes,
                        [what](std::size_t bytes, std::size_t extent) {
                          return extent == 0 ? bytes : checked_mul(bytes, extent, what);
                        });
  return shape.elements() * element_bytes;
}

}  // namespace detail

}  // namespace resident
