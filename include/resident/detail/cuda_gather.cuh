// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// Device gathers of a sample-shuffled (or converted) epoch: one kernel per field and batch,
// on the dataset's stream. Needs nvcc; device_dataset.hpp includes it only then.

#if !defined(__CUDACC__)
#error "resident/detail/cuda_gather.cuh holds kernels: compile this file with nvcc"
#endif

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "resident/augment.hpp"
#include "resident/convert.hpp"
#include "resident/detail/augment_draws.hpp"
#include "resident/detail/chunk_rows.hpp"
#include "resident/detail/cuda_try.hpp"
#include "resident/detail/row_order.hpp"

namespace resident::detail {

inline constexpr unsigned gather_threads = 128;

/// One block per row: every thread works out the row (a few dozen integer operations), then
/// the block copies it in `Word`s, coalesced.
template <class Word, class Source, class Order>
__global__ void copy_rows_kernel(Source source, Word* destination, std::size_t row_words,
                                 Order order, std::int64_t* indices) {
  const std::size_t r = blockIdx.x;
  const std::uint64_t row = order.row(r);
  if (indices != nullptr && threadIdx.x == 0) indices[r] = static_cast<std::int64_t>(row);
  const Word* from = source.at(r, row);
  Word* to = destination + r * row_words;
  for (std::size_t w = threadIdx.x; w < row_words; w += blockDim.x) to[w] = from[w];
}

template <class Source, class Out, class Op, class Order>
__global__ void convert_rows_kernel(Source source, Out* destination, std::size_t row_elements,
                                    Order order, Op op, std::int64_t* indices) {
  const std::size_t r = blockIdx.x;
  const std::uint64_t row = order.row(r);
  if (indices != nullptr && threadIdx.x == 0) indices[r] = static_cast<std::int64_t>(row);
  const auto* from = source.at(r, row);
  Out* to = destination + r * row_elements;
  for (std::size_t e = threadIdx.x; e < row_elements; e += blockDim.x) to[e] = op(from[e], e);
}

/// One block per row: the block's first thread draws the sample's augmentation (shared), then
/// each element is read from where the crop and flip move it, converted, and cut out.
template <class Source, class Out, class Op, class Order>
__global__ void augment_rows_kernel(Source source, Out* destination, std::size_t row_elements,
                                    Order order, Op op, Augmentation augmentation, AugmentKey key,
                                    std::int64_t* indices) {
  __shared__ SampleDraws draws;
  const std::size_t r = blockIdx.x;
  const std::uint64_t row = order.row(r);
  if (threadIdx.x == 0) {
    if (indices != nullptr) indices[r] = static_cast<std::int64_t>(row);
    draws = draw_sample(augmentation, key, row);
  }
  __syncthreads();
  using In = typename Source::element_type;
  const In* from = source.at(r, row);
  Out* to = destination + r * row_elements;
  for (std::size_t e = threadIdx.x; e < row_elements; e += blockDim.x) {
    const std::int64_t at = source_element(augmentation, draws, e);
    const In value = at < 0 ? In{} : from[at];
    Out converted{};
    if constexpr (std::is_same_v<Op, NoConversion>)
      converted = value;
    else
      converted = op(value, e);
    to[e] = cut_out(augmentation.image, draws, e) ? Out{} : converted;
  }
}

// A template so that the header can be included by many translation units.
template <class Index, class Order>
__global__ void fill_indices_kernel(Order order, std::size_t rows, Index* indices) {
  const std::size_t r = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (r < rows) indices[r] = static_cast<Index>(order.row(r));
}

template <class Word, class Source, class Order>
void launch_copy_rows(const Source& source, void* destination, std::size_t row_bytes,
                      const Order& order, std::size_t rows, std::int64_t* indices,
                      cudaStream_t stream) {
  const auto words = source.template as<Word>();
  copy_rows_kernel<Word, decltype(words), Order>
      <<<static_cast<unsigned>(rows), gather_threads, 0, stream>>>(
          words, static_cast<Word*>(destination), row_bytes / sizeof(Word), order, indices);
}

/// @brief The device counterpart of `host_gather`, launched on `stream` (no synchronisation).
/// Rows are copied in the widest word their size allows: field bases and ring slots are
/// 256-byte aligned, so every row of a size divisible by the word is aligned to it.
/// With an `augmentation`, one kernel gathers, augments (keyed by `key`) and converts. `source`
/// is a `StoredRows` or a `ChunkSlotRows` of the field; `order` a `RowOrder` or a `ChunkRows`.
template <class Source, class Out, class Op, class Order>
void device_gather(const Source& source, Out* destination, std::size_t row_elements,
                   const Order& order, std::size_t rows, const Op& op,
                   const Augmentation* augmentation, const AugmentKey& key, std::int64_t* indices,
                   cudaStream_t stream) {
  using In = typename Source::element_type;
  if (rows == 0) return;
  if (augmentation != nullptr) {
    augment_rows_kernel<Source, Out, Op, Order>
        <<<static_cast<unsigned>(rows), gather_threads, 0, stream>>>(
            source, destination, row_elements, order, op, *augmentation, key, indices);
  } else if constexpr (std::is_same_v<Op, NoConversion>) {
    static_assert(std::is_same_v<In, Out>, "a gather without conversion keeps the type");
    const std::size_t row_bytes = row_elements * sizeof(In);
    if (row_bytes % 16 == 0)
      launch_copy_rows<uint4>(source, destination, row_bytes, order, rows, indices, stream);
    else if (row_bytes % 8 == 0)
      launch_copy_rows<uint2>(source, destination, row_bytes, order, rows, indices, stream);
    else if (row_bytes % 4 == 0)
      launch_copy_rows<std::uint32_t>(source, destination, row_bytes, order, rows, indices, stream);
    else
      launch_copy_rows<std::uint8_t>(source, destination, row_bytes, order, rows, indices, stream);
  } else {
    convert_rows_kernel<Source, Out, Op, Order>
        <<<static_cast<unsigned>(rows), gather_threads, 0, stream>>>(
            source, destination, row_elements, order, op, indices);
  }
  RESIDENT_CUDA_TRY(cudaGetLastError());
}

/// @brief Writes a batch's row ids only (zero-copy epochs asked for `batch_indices()`).
template <class Order>
void device_fill_indices(const Order& order, std::size_t rows, std::int64_t* indices,
                         cudaStream_t stream) {
  if (rows == 0) return;
  const auto blocks = static_cast<unsigned>((rows + gather_threads - 1) / gather_threads);
  fill_indices_kernel<std::int64_t, Order>
      <<<blocks, gather_threads, 0, stream>>>(order, rows, indices);
  RESIDENT_CUDA_TRY(cudaGetLastError());
}

}  // namespace resident::detail
