#!/bin/sh
# SPDX-FileCopyrightText: 2026 The resident authors
# SPDX-License-Identifier: Apache-2.0
# The sitting of these figures: bench_epoch's CIFAR rows stored HWC and served CHW
# (OutputLayout) beside the same epoch served HWC, three repetitions, on the 2-core host (no GPU).
set -eu
build=${1:-build/ci}
out=$(dirname "$0")
"$build/benchmarks/bench_epoch" --benchmark_filter='BM_HostEpochChw' \
  --benchmark_repetitions=3 --benchmark_out="$out/bench_epoch-chw.json" \
  --benchmark_out_format=json
