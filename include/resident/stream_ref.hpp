// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// @brief `StreamRef`: a non-owning view of a CUDA stream, the type in which the public API
/// takes a stream it borrows (`DatasetOptions::stream`).
///
/// A bare `cudaStream_t` accepts `0` and `nullptr`, and both name the legacy default stream,
/// which synchronises with every other blocking stream of the device: a dataset ordered on it
/// would serialise its copies with the training. `StreamRef` refuses the literals at compile
/// time, as rmm's `cuda_stream_view` and CCCL's `cuda::stream_ref` do; a handle that is null
/// (or `cudaStreamLegacy`) only at run time is refused by the dataset that is given it.
///
/// The header needs no CUDA header: it declares the runtime's stream struct itself (as
/// PyTorch's c10 does), so that g++ translation units without the toolkit can name streams.
/// Where CCCL's `<cuda/stream_ref>` is available and the CUDA runtime is
/// (`RESIDENT_HAS_CUDA`), a `StreamRef` also converts to and from `cuda::stream_ref`.

#include <cstddef>

#include "resident/config.hpp"

/// @brief 1 where `StreamRef` converts to and from CCCL's `cuda::stream_ref`, 0 otherwise.
/// Unless defined beforehand (0 leaves CCCL out), 1 where the CUDA runtime is available
/// (`RESIDENT_HAS_CUDA`) and `<cuda/stream_ref>` is on the include path. CCCL's header includes
/// the runtime's, so it is only looked for with the runtime: a g++-only consumer may well have
/// CCCL on its include path without it.
#if !defined(RESIDENT_HAS_CUDA_STREAM_REF)
#if RESIDENT_HAS_CUDA && __has_include(<cuda/stream_ref>)
#define RESIDENT_HAS_CUDA_STREAM_REF 1
#else
#define RESIDENT_HAS_CUDA_STREAM_REF 0
#endif
#endif

#if RESIDENT_HAS_CUDA_STREAM_REF
#include <cuda/stream_ref>
#endif

/// The CUDA runtime's stream struct: `cudaStream_t` is `CUstream_st*`. Declared here, in the
/// global namespace as the runtime declares it, and nowhere else in resident, so that the
/// options and the space traits name CUDA streams without including CUDA headers.
struct CUstream_st;

namespace resident {

/// @brief A non-owning, trivially copyable view of a CUDA stream (`cudaStream_t`), after rmm's
/// `cuda_stream_view` and CCCL's `cuda::stream_ref`.
///
/// It converts implicitly from a `cudaStream_t`, so that `options.stream = my_stream;` reads as
/// it did with a bare handle, but not from the literals `0` and `nullptr` (those constructors
/// are deleted): both would name the legacy default stream. Unlike `cuda::stream_ref` it has
/// no default constructor, for the same reason. It never creates, synchronises or destroys
/// the stream; the stream must outlive every use of the view.
class StreamRef {
 public:
  /// @brief The CUDA runtime's stream handle, `cudaStream_t`.
  using value_type = CUstream_st*;

  /// @brief Views `stream`, a handle the CUDA runtime gave (`cudaStreamCreate`,
  /// `cudaStreamCreateWithFlags`) or `cudaStreamPerThread`. Implicit, as a handle is one.
  // cppcheck-suppress noExplicitConstructor ; a handle converts, as to cuda::stream_ref
  constexpr StreamRef(value_type stream) noexcept  // NOLINT(google-explicit-constructor)
      : stream_(stream) {}
  /// @brief Deleted: `0` would name the legacy default stream.
  StreamRef(int) = delete;
  /// @brief Deleted: `nullptr` would name the legacy default stream.
  StreamRef(std::nullptr_t) = delete;

#if RESIDENT_HAS_CUDA_STREAM_REF
  /// @brief Views the stream `stream` refers to (where CCCL is available).
  // cppcheck-suppress noExplicitConstructor ; either view converts to the other
  constexpr StreamRef(cuda::stream_ref stream) noexcept  // NOLINT(google-explicit-constructor)
      : stream_(stream.get()) {}
  /// @brief The same stream as a `cuda::stream_ref`, for CCCL's APIs (where CCCL is available).
  constexpr operator cuda::stream_ref() const noexcept {  // NOLINT(google-explicit-constructor)
    return cuda::stream_ref(stream_);
  }
  /// @brief Whether both name the same stream. Spelled out for the mixed pair: otherwise
  /// `StreamRef == cuda::stream_ref` would find both types' operators, each as good as the
  /// other.
  [[nodiscard]] friend constexpr bool operator==(StreamRef a, cuda::stream_ref b) noexcept {
    return a.stream_ == b.get();
  }
  /// @brief Whether both name the same stream.
  [[nodiscard]] friend constexpr bool operator==(cuda::stream_ref a, StreamRef b) noexcept {
    return a.get() == b.stream_;
  }
  /// @brief Whether they name different streams.
  [[nodiscard]] friend constexpr bool operator!=(StreamRef a, cuda::stream_ref b) noexcept {
    return !(a == b);
  }
  /// @brief Whether they name different streams.
  [[nodiscard]] friend constexpr bool operator!=(cuda::stream_ref a, StreamRef b) noexcept {
    return !(a == b);
  }
#endif

  /// @brief The viewed handle, as the CUDA runtime's calls take it.
  [[nodiscard]] constexpr value_type get() const noexcept { return stream_; }

  /// @brief Whether both view the same stream.
  [[nodiscard]] friend constexpr bool operator==(StreamRef a, StreamRef b) noexcept {
    return a.stream_ == b.stream_;
  }
  /// @brief Whether they view different streams.
  [[nodiscard]] friend constexpr bool operator!=(StreamRef a, StreamRef b) noexcept {
    return !(a == b);
  }
  /// @brief Whether `a` views `b`. Spelled out, as the mixed pairs with `cuda::stream_ref` are:
  /// with both types' conversions from a handle, `ref == handle` would be ambiguous.
  [[nodiscard]] friend constexpr bool operator==(StreamRef a, const CUstream_st* b) noexcept {
    return a.stream_ == b;
  }
  /// @brief Whether `b` views `a`.
  [[nodiscard]] friend constexpr bool operator==(const CUstream_st* a, StreamRef b) noexcept {
    return a == b.stream_;
  }
  /// @brief Whether `a` views another stream than `b`.
  [[nodiscard]] friend constexpr bool operator!=(StreamRef a, const CUstream_st* b) noexcept {
    return !(a == b);
  }
  /// @brief Whether `b` views another stream than `a`.
  [[nodiscard]] friend constexpr bool operator!=(const CUstream_st* a, StreamRef b) noexcept {
    return !(a == b);
  }

 private:
  value_type stream_;
};

}  // namespace resident
