#!/bin/sh
# SPDX-FileCopyrightText: 2026 The resident authors
# SPDX-License-Identifier: Apache-2.0
# The sitting of these figures: bench_epoch's mixed epoch (CIFAR rows in sources of a quarter
# and three quarters, weights 0.25 and 0.75 in periods of one batch) beside the single dataset's
# shuffled epoch of the same rows, three repetitions, on the 2-core host (no GPU).
set -eu
build=${1:-build/ci}
out=$(dirname "$0")
"$build/benchmarks/bench_epoch" --benchmark_filter='BM_HostMixedEpoch' \
  --benchmark_repetitions=3 --benchmark_min_time=3 --benchmark_out="$out/bench_epoch-mixture.json" \
  --benchmark_out_format=json
