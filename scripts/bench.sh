#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The resident authors
# SPDX-License-Identifier: Apache-2.0
# Runs every benchmark binary with JSON output into one folder, building the `ci` preset's
# benchmarks first when they are missing. On a GPU machine the PyTorch peers of bench_epoch are
# measured too and merged into its JSON. Then `python3 scripts/plot_bench.py` renders the plots.
#
#   scripts/bench.sh [--build-dir DIR] [--out DIR]
#
# Default out: benchmarks/results/<date>-<machine>/, <machine> being the GPU's name from
# nvidia-smi, or host-<N>core-cpu without a GPU. Prints the folder on its last line.
set -uo pipefail
cd "$(dirname "$0")/.."
build=build/ci
out=
while (($#)); do
  case $1 in
    --build-dir) build=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "usage: scripts/bench.sh [--build-dir DIR] [--out DIR]" >&2; exit 2 ;;
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

benchmarks=(bench_batch_view bench_upload bench_epoch bench_stream bench_preload_vs_stream)
missing=0
for name in "${benchmarks[@]}"; do [[ -x $build/benchmarks/$name ]] || missing=1; done
if ((missing)); then
  [[ $build == build/ci ]] || { echo "bench: $build lacks benchmarks; build it first" >&2; exit 1; }
  { cmake --preset ci >/dev/null && cmake --build --preset ci --target "${benchmarks[@]}"; } ||
    { echo "bench: building the benchmarks failed" >&2; exit 1; }
fi

status=0
for name in "${benchmarks[@]}"; do
  echo "bench: $name"
  "$build/benchmarks/$name" --benchmark_out="$out/$name.json" --benchmark_out_format=json \
    >"$out/$name.txt" 2>&1 || { echo "bench: $name failed (see $out/$name.txt)"; status=1; }
done

# The PyTorch peers of bench_epoch (GPU machines with PyTorch), merged into its JSON.
if [[ -n $gpu ]] && python3 -c "import torch" 2>/dev/null; then
  if python3 benchmarks/peers/torch_epoch.py --out "$out/torch_epoch.json"; then
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
