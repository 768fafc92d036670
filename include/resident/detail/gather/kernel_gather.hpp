// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// The gather engine of the spaces whose gathers run as kernels (`CudaSpace`'s, and by default
// every space that kernels can read): one kernel per field on the dataset's stream.
//
// Every translation unit sees this engine token for token, whichever compiler compiles it, so
// that a program of g++ and nvcc units holds one definition of every epoch. The kernels
// themselves can only be compiled by nvcc: the engine reaches them through two function
// templates that every unit declares and only nvcc units define (detail/cuda/gather.cuh, or the
// simulated runtime's harness in a test build). The declarations are weak references: where no
// unit of the program instantiated a field's kernels, the program still links and sees a null
// address, which the engine refuses with a sentence when the epoch is made. An nvcc unit
// instantiates them by making an epoch of the same type, so that once it is linked every unit's
// epochs of that type gather.

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "resident/augment.hpp"
#include "resident/detail/gather/augment_draws.hpp"
#include "resident/detail/gather/gather_setup.hpp"
#include "resident/error.hpp"

namespace resident::detail {

/// @brief Gathers `rows` rows of one field with kernels on `stream`: `device_gather` of
/// gather_kernels.hpp, launched as CUDA kernels. Declared in every unit, defined only where
/// kernels are compiled (see the file comment).
template <class Source, class Out, class Op, class Order, class Stream>
[[gnu::weak]] void gather_field_kernels(const Source& source, Out* destination,
                                        std::size_t row_elements, const Order& order,
                                        std::size_t rows, const Op& op,
                                        const Augmentation* augmentation, const AugmentKey& key,
                                        std::int64_t* indices, Stream stream);

/// @brief Writes a batch's row ids alone with a kernel on `stream`; declared as
/// `gather_field_kernels` is.
template <class Order, class Stream>
[[gnu::weak]] void fill_indices_kernels(const Order& order, std::size_t rows, std::int64_t* indices,
                                        Stream stream);

/// @brief The kernels' gather engine (see `default_space_traits::gather_engine`).
class KernelGather {
 public:
  /// Gathers read the space's memory, never host memory: a whole-epoch stream's gathers read
  /// its chunk slots.
  static constexpr bool reads_host_memory = false;

  explicit KernelGather(const GatherSetup& /*setup*/) noexcept {}

  /// @brief Refuses, when the epoch is made, an epoch whose kernels no unit of the program
  /// compiled.
  /// @throws InvalidArgument saying what to do.
  template <class Order, class Stream, class... Fields>
  static void check() {
    if (!(linked(&gather_field_kernels<typename Fields::source_type, typename Fields::output_type,
                                       typename Fields::op_type, Order, Stream>) &&
          ...) ||
        !linked(&fill_indices_kernels<Order, Stream>))
      refuse();
  }

  /// @brief One kernel per field on `stream`, field 0's also writing the row ids.
  /// @throws InvalidArgument where no unit compiled the kernels; CudaError when a launch fails.
  template <class Order, class Stream, class... Fields>
  void gather(const Order& order, std::size_t rows, std::int64_t* indices, Stream stream,
              const Fields&... fields) const {
    std::int64_t* first = indices;
    (launch(fields, order, rows, std::exchange(first, nullptr), stream), ...);
  }

  /// @brief The row ids alone, by one kernel on `stream`.
  /// @throws what `gather` throws.
  template <class Order, class Stream>
  void fill_indices(const Order& order, std::size_t rows, std::int64_t* indices,
                    Stream stream) const {
    const auto kernels = &fill_indices_kernels<Order, Stream>;
    if (!linked(kernels)) refuse();
    kernels(order, rows, indices, stream);
  }

 private:
  // Whether a weak reference found its definition. GCC takes every instantiation of a function
  // template to be defined somewhere (as the language asks of a program) and would fold the
  // comparison to true; the empty statement hides the address from the optimiser, so that a
  // reference that found no definition reads as null.
  template <class Function>
  [[nodiscard]] static bool linked(Function* function) noexcept {
    std::uintptr_t address = reinterpret_cast<std::uintptr_t>(function);  // NOLINT: its value
    asm("" : "+r"(address));  // NOLINT(hicpp-no-assembler): an optimisation barrier, no code
    return address != 0;
  }

  template <class Field, class Order, class Stream>
  static void launch(const Field& field, const Order& order, std::size_t rows,
                     std::int64_t* indices, Stream stream) {
    const auto kernels =
        &gather_field_kernels<typename Field::source_type, typename Field::output_type,
                              typename Field::op_type, Order, Stream>;
    if (!linked(kernels)) refuse();
    kernels(field.source, field.destination, field.row_elements, order, rows, field.op,
            field.augmentation, field.key, indices, stream);
  }

  [[noreturn]] static void refuse() {
    throw InvalidArgument(
        "resident: this epoch gathers on the device (Shuffle::samples, a conversion, an "
        "augmentation or batch_indices()), which launches kernels, but no translation unit of "
        "this program that nvcc compiled made an epoch of this type (dataset, conversion and "
        "augmentation), which is what compiles its kernels; make such an epoch in a unit "
        "compiled as CUDA (then every unit's epochs of this type gather), or make an epoch "
        "that gathers nothing: Shuffle::none or Shuffle::batches, without a conversion, an "
        "augmentation or batch_indices()");
  }
};

}  // namespace resident::detail

#if defined(__CUDACC__)
#include "resident/detail/cuda/gather.cuh"  // the kernels' definitions
#endif
