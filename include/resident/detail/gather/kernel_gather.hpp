// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// The gather engine of the spaces whose gathers run as kernels (`CudaSpace`'s, and by default
// every space that kernels can read). It is the same in every unit, whichever compiler; the
// kernels, which need nvcc, it reaches through weak references that only units compiled by
// nvcc define (see docs/design.md, "nvcc and g++ in one program").

#include <cstddef>
#include <cstdint>
#include <utility>

#include "resident/augment.hpp"
#include "resident/detail/gather/augment_draws.hpp"
#include "resident/error.hpp"
#include "resident/space_traits.hpp"

namespace resident::detail {

/// @brief `device_gather` of one field as CUDA kernels on `stream` (see the file comment).
template <class Source, class Out, class Op, class Order, class Stream>
[[gnu::weak]] void gather_field_kernels(const Source& source, Out* destination,
                                        std::size_t row_elements, const Order& order,
                                        std::size_t rows, const Op& op,
                                        const Augmentation* augmentation, const AugmentKey& key,
                                        std::int64_t* indices, Stream stream);
/// @brief `device_fill_indices` as a CUDA kernel on `stream` (see the file comment).
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

  /// @brief Refuses, when the epoch is made, an epoch whose kernels no unit compiled.
  /// @throws InvalidArgument saying what to do.
  template <class Order, class Stream, class... Fields>
  static void check() {
    (kernels<Fields, Order, Stream>(), ...);
    (void)indices_kernel<Order, Stream>();
  }

  /// @brief One kernel per field on `stream`, field 0's also writing the row ids.
  /// @throws InvalidArgument where no unit compiled the kernels; CudaError when a launch fails.
  template <class Order, class Stream, class... Fields>
  void gather(const Order& order, std::size_t rows, std::int64_t* indices, Stream stream,
              const Fields&... fields) const {
    std::int64_t* first = indices;
    (kernels<Fields, Order, Stream>()(fields.source, fields.destination, fields.row_elements, order,
                                      rows, fields.op, fields.augmentation, fields.key,
                                      std::exchange(first, nullptr), stream),
     ...);
  }

  /// @brief The row ids alone, by one kernel on `stream`.
  /// @throws what `gather` throws.
  template <class Order, class Stream>
  void fill_indices(const Order& order, std::size_t rows, std::int64_t* indices,
                    Stream stream) const {
    indices_kernel<Order, Stream>()(order, rows, indices, stream);
  }

 private:
  // `function` where the weak reference found its definition; else refused. GCC takes every
  // instantiation of a function template to be defined somewhere (as the language asks of a
  // program) and would fold the comparison away: the empty statement hides the address.
  template <class Function>
  static Function* linked(Function* function) {
    auto address = reinterpret_cast<std::uintptr_t>(function);  // NOLINT: its value alone
    asm("" : "+r"(address));  // NOLINT(hicpp-no-assembler): an optimisation barrier, no code
    if (address == 0) refuse();
    return function;
  }
  template <class Field, class Order, class Stream>
  static auto kernels() {
    return linked(&gather_field_kernels<typename Field::source_type, typename Field::output_type,
                                        typename Field::op_type, Order, Stream>);
  }
  template <class Order, class Stream>
  static auto indices_kernel() {
    return linked(&fill_indices_kernels<Order, Stream>);
  }

  [[noreturn]] static void refuse() {
    throw InvalidArgument(
        "resident: this epoch gathers on the device (Shuffle::samples, a conversion, an "
        "augmentation or batch_indices()), which launches kernels, but no translation unit of "
        "this program that nvcc compiled made an epoch of this type (dataset, conversion and "
        "augmentation), which is what compiles its kernels, or the linker left that unit out "
        "(a static library's member that nothing names, a shared library dropped by "
        "--as-needed); make such an epoch in a unit compiled as CUDA and link its object "
        "(then every unit's epochs of this type gather), or make an epoch that gathers "
        "nothing: Shuffle::none or Shuffle::batches, without a conversion, an augmentation or "
        "batch_indices(). A space of your own whose streams are not CUDA streams names a "
        "gather engine that needs no kernels instead (space_traits<S>::gather_engine: "
        "detail::HostGather, or its own)");
  }
};

}  // namespace resident::detail

#if defined(__CUDACC__)
#include "resident/detail/cuda/gather.cuh"  // the kernels' definitions
#endif
