#!/usr/bin/env bash
# Before/after in one sitting, 3 rounds, host-only Release builds (RESIDENT_ENABLE_CUDA=OFF):
#   before: 78223ad (whole-epoch streams read the caller's rows on whatever pages they lie on);
#   after: the commit these figures are filed with (StreamOptions::large_pages).
# BM_HostStreamedEpoch's third argument changed meaning (rows: 0 a vector left on small pages,
# 1 a vector with the default options, 2 large pages): before, it is 0 a vector, 1 large pages.
set -u
out=${1:?out dir}; mkdir -p "$out"
B=/work/wt-before/build/hostbench/benchmarks
A=/work/main/build/hostbench/benchmarks
epochs='BM_HostEpoch/cifar_u8/mode:[0-3]/|BM_HostEpoch/wide_f32/mode:2/|BM_HostStreamedEpoch/cifar_u8/mode:[23]/'
for round in 1 2 3; do
  for side in before after; do
    d=$B; [[ $side == after ]] && d=$A
    RESIDENT_PYTHON=/bin/false $d/bench_epoch --benchmark_filter="$epochs" --benchmark_format=json > "$out/epoch-$side-$round.json" 2>/dev/null
    $d/bench_stream --benchmark_filter='BM_HostStreamVsMemcpy' --benchmark_format=json > "$out/stream-$side-$round.json" 2>/dev/null
  done
  echo "round $round done $(date +%T)"
done
