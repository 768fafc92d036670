#!/bin/sh
# SPDX-FileCopyrightText: 2026 The resident authors
# SPDX-License-Identifier: Apache-2.0
# The sitting of these figures: bench_stream's streams read in place (and the window-order file
# stream beside them), three repetitions, on the 2-core host (no GPU).
set -eu
build=${1:-build/ci}
out=$(dirname "$0")
"$build/benchmarks/bench_stream" --benchmark_filter='InPlace|FileVsRead' \
  --benchmark_repetitions=3 --benchmark_out="$out/bench_stream-in-place.json" \
  --benchmark_out_format=json
