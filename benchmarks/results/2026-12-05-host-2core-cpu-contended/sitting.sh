#!/usr/bin/env bash
# Before/after in one sitting, 3 rounds, host-only Release builds (RESIDENT_ENABLE_CUDA=OFF),
# both with this commit's benchmark sources:
#   before: 42da989 (each batch cut into fixed equal shares, idle workers pausing on their core);
#   after: the commit these figures are filed with (blocks claimed, idle workers yielding).
# BM_HostGatherTeam needs DatasetOptions::gather_threads: after only.
set -u
out=${1:?out dir}; mkdir -p "$out"
B=${BEFORE:-/work/wt-before30/build/hostbench/benchmarks}
A=${AFTER:-/work/main/build/hostbench/benchmarks}
epochs='BM_HostEpoch/cifar_u8/mode:[0-3]/|BM_HostEpoch/wide_f32/mode:2/|BM_HostEpochVsPeers'
for round in 1 2 3; do
  for side in before after; do
    d=$B; [[ $side == after ]] && d=$A
    $d/bench_epoch --benchmark_filter="$epochs" --benchmark_format=json > "$out/epoch-$side-$round.json" 2>/dev/null
    $d/bench_stream --benchmark_filter='BM_Host' --benchmark_format=json > "$out/stream-$side-$round.json" 2>/dev/null
    $d/bench_batch_view --benchmark_format=json > "$out/batch_view-$side-$round.json" 2>/dev/null
    $d/bench_upload --benchmark_format=json > "$out/upload-$side-$round.json" 2>/dev/null
  done
  $A/bench_epoch --benchmark_filter='BM_HostGatherTeam' --benchmark_format=json > "$out/team-after-$round.json" 2>/dev/null
  echo "round $round done $(date +%T)"
done
