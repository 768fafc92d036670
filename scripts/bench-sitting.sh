#!/bin/sh
# SPDX-FileCopyrightText: 2026 The resident authors
# SPDX-License-Identifier: Apache-2.0
# One sitting of a before/after comparison: the benchmarks FILTER selects, of two builds of one
# benchmark binary (BEFORE and AFTER), run in turn, three times each, three repetitions a run
# of at least MIN_TIME seconds, each run's JSON written to OUT/before-N.json and
# OUT/after-N.json. Run it on an otherwise idle machine.
# Usage: scripts/bench-sitting.sh OUT FILTER MIN_TIME BEFORE AFTER
set -eu
out=$1
filter=$2
min_time=$3
before=$4
after=$5
for i in 1 2 3; do
  for side in before after; do
    if [ "$side" = before ]; then binary=$before; else binary=$after; fi
    "$binary" --benchmark_filter="$filter" --benchmark_repetitions=3 \
      --benchmark_min_time="$min_time" --benchmark_out="$out/$side-$i.json" \
      --benchmark_out_format=json
  done
done
