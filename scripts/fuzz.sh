#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The resident authors
# SPDX-License-Identifier: Apache-2.0
# Fuzzes the .npy loader with libFuzzer under ASan and UBSan for SECONDS (default 60), from a
# seed corpus of the checked-in NumPy fixtures; fails on any finding.
#   scripts/fuzz.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
out=build/fuzz
mkdir -p "$out/corpus"
cp tests/data/*.npy "$out/corpus/"
clang++ -std=c++17 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
  -DRESIDENT_HAS_CUDA=0 -Iinclude tests/fuzz/fuzz_npy.cpp -o "$out/fuzz_npy"
"$out/fuzz_npy" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
  -artifact_prefix="$out/" "$out/corpus"
