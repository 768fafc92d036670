// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// The one big cost of preloading, at the sizes users upload: the host upload against memcpy,
// the CUDA upload (from pageable and from pinned memory) against pinned and pageable
// cudaMemcpy, and the alternative to staging (page-locking the source in large chunks).
// Read the ratio_to_* counters; absolute times on shared machines are noise.
#include <benchmark/benchmark.h>

#include "support/upload_benchmarks.hpp"

namespace {

constexpr long kMiB = 1 << 20;

BENCHMARK(resident::bench::BM_HostUploadVsMemcpy)
    ->Name("BM_HostUploadVsMemcpy")
    ->Arg(64 * kMiB)
    ->Arg(256 * kMiB)
    ->Arg(1024 * kMiB)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

#if RESIDENT_HAS_CUDA
BENCHMARK(resident::bench::BM_CudaUploadVsMemcpy)
    ->Name("BM_CudaUploadVsMemcpy")
    ->ArgsProduct({{64 * kMiB, 256 * kMiB, 1024 * kMiB, 4096 * kMiB}, {0, 1}})
    ->ArgNames({"bytes", "pinned_source"})
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

BENCHMARK(resident::bench::BM_CudaRegisterChunksThenCopy)
    ->Name("BM_CudaRegisterChunksThenCopy")
    ->ArgsProduct({{256 * kMiB, 1024 * kMiB, 4096 * kMiB}, {64 * kMiB, 256 * kMiB}})
    ->ArgNames({"bytes", "chunk_bytes"})
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);
#endif

}  // namespace

BENCHMARK_MAIN();
