#!/usr/bin/env bash
# Before/after in one sitting, 3 rounds, host-only Release builds (RESIDENT_ENABLE_CUDA=OFF):
#   before: b477d81 (separate preloaded and streamed epochs, window order only);
#   after: the commit these figures are filed with (one gathering epoch, whole-epoch order).
# The streamed epochs against the preloaded ones (BM_HostStreamedEpoch) exist after only; they
# measure both in the same run.
set -u
out=${1:?out dir}; mkdir -p "$out"
B=/work/wt-before27/build/hostbench/benchmarks
A=/work/main/build/hostbench/benchmarks
epochs='BM_HostEpoch/cifar_u8/mode:[0-3]/|BM_HostEpoch/wide_f32/mode:2/'
for round in 1 2 3; do
  for side in before after; do
    d=$B; [[ $side == after ]] && d=$A
    RESIDENT_PYTHON=/bin/false $d/bench_epoch --benchmark_filter="$epochs" --benchmark_format=json > "$out/epoch-$side-$round.json" 2>/dev/null
    $d/bench_stream --benchmark_filter='BM_Host' --benchmark_format=json > "$out/stream-$side-$round.json" 2>/dev/null
  done
  $A/bench_epoch --benchmark_filter='BM_HostStreamedEpoch' --benchmark_format=json > "$out/streamed-after-$round.json" 2>/dev/null
  echo "round $round done $(date +%T)"
done
