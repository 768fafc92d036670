#!/usr/bin/env bash
# One sitting, 3 rounds, Release builds, nothing else running: bench_libtorch (libtorch's own
# DataLoader against resident's to_tensors epochs, and one core's memcpy), and, before/after for
# the preloaded epochs and the batch views, whose gather ring is now shared with the tensors
# made of it:
#   before: b5a1adc (the ring an allocation the dataset owns alone);
#   after: the commit these figures are filed with.
set -u
out=${1:?out dir}; mkdir -p "$out"
B=${BEFORE:-/work/wt-before32/build/hostbench/benchmarks}
A=${AFTER:-/work/main/build/hostbench/benchmarks}
T=${TORCH:-/work/main/build/torch/benchmarks}
epochs='BM_HostEpoch/cifar_u8/mode:[0-2]/'
for round in 1 2 3; do
  $T/bench_libtorch --benchmark_format=json > "$out/libtorch-$round.json" 2>/dev/null
  for side in before after; do
    d=$B; [[ $side == after ]] && d=$A
    $d/bench_epoch --benchmark_filter="$epochs" --benchmark_format=json > "$out/epoch-$side-$round.json" 2>/dev/null
    $d/bench_batch_view --benchmark_format=json > "$out/batch_view-$side-$round.json" 2>/dev/null
  done
  echo "round $round done $(date +%T)"
done
