#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The resident authors
# SPDX-License-Identifier: Apache-2.0
# Fuzzes the .npy loader and the .npz archive reader with libFuzzer under ASan and UBSan for
# SECONDS each (default 60), from seed corpora of the checked-in NumPy fixtures (tests/data: the
# .npz ones were written by numpy.savez, numpy.savez_compressed, and zipfile with ZIP64 records
# forced, as tests/npz_interop.py writes them); fails on any finding.
#   scripts/fuzz.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
out=build/fuzz
for target in npy npz; do
  mkdir -p "$out/corpus_$target"
  cp tests/data/*."$target" "$out/corpus_$target/"
  clang++ -std=c++17 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
    -DRESIDENT_HAS_CUDA=0 -Iinclude "tests/fuzz/fuzz_$target.cpp" -lz -o "$out/fuzz_$target"
  "$out/fuzz_$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$out/$target-" "$out/corpus_$target"
done
