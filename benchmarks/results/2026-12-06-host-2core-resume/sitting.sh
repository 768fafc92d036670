#!/bin/sh
# SPDX-FileCopyrightText: 2026 The resident authors
# SPDX-License-Identifier: Apache-2.0
# The sitting of these figures: bench_resume of the ci build, on the 2-core host (no GPU).
set -eu
build=${1:-build/ci}
out=$(dirname "$0")
"$build/benchmarks/bench_resume" --benchmark_min_time=0.3 --benchmark_out="$out/resume-1.json" \
  --benchmark_out_format=json
