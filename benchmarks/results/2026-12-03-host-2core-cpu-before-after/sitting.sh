#!/usr/bin/env bash
# Before/after in one sitting: alternates the two builds, 3 rounds.
out=${1:-/tmp/sitting}; mkdir -p $out
B=/work/wt-before/build/hostbench/benchmarks; A=/work/main/build/hostbench/benchmarks
for round in 1 2 3; do
  for side in before after; do
    d=$B; [[ $side == after ]] && d=$A
    $d/bench_epoch --benchmark_filter='BM_HostEpoch/cifar_u8/mode:[23]|BM_HostEpoch/wide_f32/mode:2' --benchmark_format=json > $out/epoch-$side-$round.json 2>$out/epoch-$side-$round.err
    $d/bench_stream --benchmark_filter='BM_Host' --benchmark_format=json > $out/stream-$side-$round.json 2>/dev/null
    $d/bench_upload --benchmark_filter='BM_HostUpload' --benchmark_format=json > $out/upload-$side-$round.json 2>/dev/null
    $d/bench_batch_view --benchmark_filter='BM_BatchViewIndex' --benchmark_format=json > $out/view-$side-$round.json 2>/dev/null
  done
  for mode in plain normalize; do
    extra=""; [[ $mode == normalize ]] && extra="--normalize 0.00392156862745098 -0.5"
    python3 /work/main/benchmarks/peers/numpy_epoch.py --rows 50000 --row-elements 3072 --dtype uint8 --batch 256 $extra > $out/numpy-$mode-$round.json
  done
done
