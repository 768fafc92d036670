#!/usr/bin/env bash
# Before/after in one sitting, 3 rounds, host-only Release builds (RESIDENT_ENABLE_CUDA=OFF):
#   before-pipeline: 9fb2e7b (before the one-pass host gather, the copy team's hand-off, the
#     streaming-store copies and the reader's pieces), epoch/stream/upload/view;
#   before-augment: 6611436 (augmentation by line runs), the augmented epochs;
#   after: this commit, all of them. NumPy's epochs are measured in every round.
set -u
out=${1:?out dir}; mkdir -p "$out"
P=/work/wt-before18/build/hostbench/benchmarks
G=/work/wt-before19/build/hostbench/benchmarks
A=/work/main/build/host/benchmarks
epochs='BM_HostEpoch/cifar_u8/mode:[23]|BM_HostEpoch/wide_f32/mode:2'
for round in 1 2 3; do
  for side in before-pipeline after; do
    d=$P; [[ $side == after ]] && d=$A
    $d/bench_epoch --benchmark_filter="$epochs" --benchmark_format=json > "$out/epoch-$side-$round.json" 2> "$out/epoch-$side-$round.err"
    $d/bench_stream --benchmark_filter='BM_Host' --benchmark_format=json > "$out/stream-$side-$round.json" 2>/dev/null
    $d/bench_upload --benchmark_filter='BM_HostUpload' --benchmark_format=json > "$out/upload-$side-$round.json" 2>/dev/null
    $d/bench_batch_view --benchmark_filter='BM_BatchViewIndex' --benchmark_format=json > "$out/view-$side-$round.json" 2>/dev/null
  done
  for side in before-augment after; do
    d=$G; [[ $side == after ]] && d=$A
    $d/bench_epoch --benchmark_filter='BM_HostEpoch/cifar_u8/mode:[45]' --benchmark_format=json > "$out/augment-$side-$round.json" 2>/dev/null
  done
  for mode in plain normalize; do
    extra=""; [[ $mode == normalize ]] && extra="--normalize 0.00392156862745098 -0.5"
    python3 /work/main/benchmarks/peers/numpy_epoch.py --rows 50000 --row-elements 3072 --dtype uint8 --batch 256 $extra > "$out/numpy-$mode-$round.json"
  done
  echo "round $round done $(date +%T)"
done
