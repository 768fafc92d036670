#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The resident authors
# SPDX-License-Identifier: Apache-2.0
# Runs every benchmark binary with JSON output into one folder, building the `ci` preset's
# benchmarks first when they are missing. On a GPU machine the PyTorch peers of bench_epoch are
# measured too and merged into its JSON. Then `python3 scripts/plot_bench.py` renders the plots.
#
#   scripts/bench.sh [--build-dir DIR] [--out DIR] [--quick] [--timeout S] [--allow-missing]
#   scripts/bench.sh --list            # the benchmark binaries, one a line
#
# --quick: each figure measured for 0.05 s instead of Google Benchmark's 0.5 s, and the 4 GiB
#   uploads left out (their setup, 4 GiB of source filled and pinned per row, dominates; the
#   1 GiB rows show the same plateau); for a short GPU run.
# --timeout S: a benchmark (or the PyTorch peers) still running after S seconds is stopped and
#   counted as failed.
# A benchmark binary absent from the build (bench_preload_vs_stream needs OpenBLAS) is named,
# the others still run, and the exit status is non-zero unless --allow-missing is given: a run
# that silently lacks a benchmark must not look complete.
#
# Default out: benchmarks/results/<date>-<machine>/, <machine> being the GPU's name from
# nvidia-smi, or host-<N>core-cpu without a GPU. Prints the folder on its last line.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
benchmarks=(bench_batch_view bench_upload bench_epoch bench_stream bench_tokens bench_preload_vs_stream)
usage="usage: scripts/bench.sh [--build-dir DIR] [--out DIR] [--quick] [--timeout S]"
usage+=" [--allow-missing] | --list"
build=build/ci
out=
quick_flags=()
limit=()
allow_missing=0
while (($#)); do
  case $1 in
    --build-dir) build=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --quick) quick_flags=(--benchmark_min_time=0.05 --benchmark_filter=-bytes:4294967296/); shift ;;
    --timeout) limit=(timeout --kill-after=10 "$2"); shift 2 ;;
    --allow-missing) allow_missing=1; shift ;;
    --list) printf '%s\n' "${benchmarks[@]}"; exit 0 ;;
    *) echo "$usage" >&2; exit 2 ;;
  esac
done
if [[ -d /usr/local/cuda/bin ]]; then export PATH="/usr/local/cuda/bin:$PATH"; fi

gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1)
if [[ -n $gpu ]]; then
  machine=$(echo "$gpu" | tr '[:upper:] ' '[:lower:]-' | tr -cd 'a-z0-9-')
else
  machine="host-$(nproc)core-cpu"
fi
out=${out:-benchmarks/results/$(date +%F)-$machine}
mkdir -p "$out"

missing=()
for name in "${benchmarks[@]}"; do [[ -x $build/benchmarks/$name ]] || missing+=("$name"); done
if ((${#missing[@]})) && [[ $build == build/ci ]]; then
  # Every benchmark the configuration defines (bench_preload_vs_stream only where OpenBLAS is).
  { cmake --preset ci >/dev/null && cmake --build --preset ci --target benchmarks/all; } ||
    { echo "bench: building the benchmarks failed" >&2; exit 1; }
  missing=()
  for name in "${benchmarks[@]}"; do [[ -x $build/benchmarks/$name ]] || missing+=("$name"); done
fi

status=0
for name in "${benchmarks[@]}"; do
  [[ -x $build/benchmarks/$name ]] || continue
  echo "bench: $name"
  "${limit[@]}" "$build/benchmarks/$name" --benchmark_out="$out/$name.json" \
    --benchmark_out_format=json "${quick_flags[@]}" >"$out/$name.txt" 2>&1 ||
    { echo "bench: $name failed, exit $? (see $out/$name.txt)"; status=1; }
done
if ((${#missing[@]})); then
  echo "bench: not in $build, so not run: ${missing[*]} (bench_preload_vs_stream is built only" \
    "where OpenBLAS is found: apt-get install libopenblas-dev)"
  ((allow_missing)) || status=1
fi

# The PyTorch peers of bench_epoch (GPU machines with PyTorch), merged into its JSON.
if [[ -n $gpu && -f $out/bench_epoch.json ]] && python3 -c "import torch" 2>/dev/null; then
  if "${limit[@]}" python3 benchmarks/peers/torch_epoch.py --out "$out/torch_epoch.json"; then
    python3 - "$out/bench_epoch.json" "$out/torch_epoch.json" <<'PY' || status=1
import json, sys
bench_path, peer_path = sys.argv[1], sys.argv[2]
with open(bench_path) as f:
    bench = json.load(f)
with open(peer_path) as f:
    bench["peers"] = json.load(f)
with open(bench_path, "w") as f:
    json.dump(bench, f, indent=2)
PY
    rm -f "$out/torch_epoch.json"
  else
    status=1
  fi
fi
echo "$out"
exit $status
