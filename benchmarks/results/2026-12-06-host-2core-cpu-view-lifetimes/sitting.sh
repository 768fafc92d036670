#!/usr/bin/env bash
# Before/after in one sitting, 3 rounds alternating, Release builds of the same configuration
# (RESIDENT_ENABLE_CUDA=ON, nothing run on a device) on a 2-core host without a GPU:
#   before: 3989822 (one gather ring per dataset, one set of chunk slots per stream);
#   after: the commit these figures are filed with (each live epoch borrows its own ring and
#   chunk slots from the dataset).
set -u
out=${1:?out dir}; B=${2:?before benchmarks dir}; A=${3:?after benchmarks dir}
mkdir -p "$out"
epochs='BM_HostEpoch/cifar_u8/mode:[0-3]/|BM_HostEpoch/wide_f32/mode:2/|BM_HostStreamedEpoch/cifar_u8/mode:[0-3]/window:[01]/rows:0/'
for round in 1 2 3; do
  for side in before after; do
    d=$B; [[ $side == after ]] && d=$A
    RESIDENT_PYTHON=/bin/false $d/bench_epoch --benchmark_filter="$epochs" --benchmark_format=json > "$out/epoch-$side-$round.json" 2>/dev/null
    $d/bench_stream --benchmark_filter='BM_HostStream(VsMemcpy|ComputingReader)' --benchmark_format=json > "$out/stream-$side-$round.json" 2>/dev/null
  done
  echo "round $round done $(date +%T)"
done
