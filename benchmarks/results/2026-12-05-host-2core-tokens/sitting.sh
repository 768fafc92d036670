#!/usr/bin/env bash
# One sitting, 3 rounds, host-only Release builds (RESIDENT_ENABLE_CUDA=OFF), nothing else
# running: bench_tokens (token batches against nanoGPT's sampling in NumPy and PyTorch, and a
# memcpy), and, before/after for the batch views and the preloaded epochs that every dataset's
# epochs share:
#   before: 254eb34 (the epoch asks no dataset whether a view epoch's batch must be gathered);
#   after: the commit these figures are filed with (token datasets).
set -u
out=${1:?out dir}; mkdir -p "$out"
B=${BEFORE:-/work/wt-before31/build/hostbench/benchmarks}
A=${AFTER:-/work/main/build/hostbench/benchmarks}
epochs='BM_HostEpoch/cifar_u8/mode:[0-2]/'
for round in 1 2 3; do
  $A/bench_tokens --benchmark_format=json > "$out/tokens-$round.json" 2> "$out/tokens-$round.err"
  for side in before after; do
    d=$B; [[ $side == after ]] && d=$A
    $d/bench_epoch --benchmark_filter="$epochs" --benchmark_format=json > "$out/epoch-$side-$round.json" 2>/dev/null
    $d/bench_batch_view --benchmark_format=json > "$out/batch_view-$side-$round.json" 2>/dev/null
  done
  echo "round $round done $(date +%T)"
done
