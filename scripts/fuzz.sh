#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The resident authors
# SPDX-License-Identifier: Apache-2.0
# Fuzzes the .npy loader and the .npz archive reader with libFuzzer under ASan and UBSan for
# SECONDS each (default 60), side by side (one core each), from seed corpora of the checked-in
# NumPy fixtures (tests/data: the .npz ones were written by numpy.savez,
# numpy.savez_compressed, and zipfile with ZIP64 records forced, as tests/npz_interop.py writes
# them); fails on any finding. Each fuzzer's log is build/fuzz/<target>.log.
#   scripts/fuzz.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
out=build/fuzz
mkdir -p "$out"

fuzz() {
  local target=$1
  mkdir -p "$out/corpus_$target"
  cp tests/data/*."$target" "$out/corpus_$target/"
  clang++ -std=c++17 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
    -DRESIDENT_HAS_CUDA=0 -Iinclude "tests/fuzz/fuzz_$target.cpp" -lz -o "$out/fuzz_$target"
  "$out/fuzz_$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$out/$target-" "$out/corpus_$target"
}

targets=(npy npz)
pids=()
for target in "${targets[@]}"; do
  fuzz "$target" >"$out/$target.log" 2>&1 &
  pids+=($!)
done
status=0
for i in "${!targets[@]}"; do
  target=${targets[$i]}
  if wait "${pids[$i]}"; then
    runs=$(grep -m1 -o 'number_of_executed_units: *[0-9]*' "$out/$target.log" | grep -o '[0-9]*$')
    echo "fuzz: $target: no finding in $seconds s ($runs runs)"
  else
    cat "$out/$target.log" >&2
    echo "fuzz: $target failed (log above: $out/$target.log)" >&2
    status=1
  fi
done
exit $status
