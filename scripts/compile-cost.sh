#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The resident authors
# SPDX-License-Identifier: Apache-2.0
# What including resident costs a translation unit, for the working tree and for each REV
# given, measured in one sitting so that the figures compare: wall seconds of `g++ -std=c++17
# -O2 -c` (the best of RUNS, default 5) for
#   - std6:            a unit of six standard headers (<algorithm> <cstddef> <cstdint> <memory>
#                      <string> <vector>), the floor any C++ unit pays;
#   - device_dataset:  a unit that includes resident/device_dataset.hpp alone;
#   - resident:        a unit that includes resident/resident.hpp;
#   - readme_example:  examples/readme_example.cpp (the README's example);
# and the lines resident/resident.hpp preprocesses to. The CUDA toolkit's headers are on the
# include path where it is installed (RESIDENT_HAS_CUDA then holds, as in a CUDA build).
# Usage: scripts/compile-cost.sh [REV...]   (run it on an otherwise idle machine)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${RUNS:-5}
cxx=${CXX:-g++}
cuda_include=()
if [[ -d /usr/local/cuda/include ]]; then cuda_include=(-isystem /usr/local/cuda/include); fi
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

printf '#include <algorithm>\n#include <cstddef>\n#include <cstdint>\n#include <memory>\n#include <string>\n#include <vector>\n' >"$scratch/std6.cpp"
printf '#include "resident/device_dataset.hpp"\n' >"$scratch/device_dataset.cpp"
printf '#include "resident/resident.hpp"\n' >"$scratch/resident.cpp"

# best SOURCE INCLUDE_DIR: the fastest of `runs` compiles, in seconds.
best() {
  local source=$1 include=$2 fastest=-1 start elapsed run
  for ((run = 0; run < runs; ++run)); do
    start=${EPOCHREALTIME/./}
    "$cxx" -std=c++17 -O2 -I"$include" "${cuda_include[@]}" -c "$source" -o /dev/null
    elapsed=$((${EPOCHREALTIME/./} - start))
    if ((fastest < 0 || elapsed < fastest)); then fastest=$elapsed; fi
  done
  printf '%d.%02d' $((fastest / 1000000)) $((fastest % 1000000 / 10000))
}

# measure LABEL TREE: one row for the tree at TREE (include/ and examples/).
measure() {
  local label=$1 tree=$2 lines
  lines=$("$cxx" -std=c++17 -I"$tree/include" "${cuda_include[@]}" -E "$scratch/resident.cpp" |
    wc -l)
  printf '%-14s %6s %15s %9s %15s %9s\n' "$label" "$(best "$scratch/std6.cpp" "$tree/include")" \
    "$(best "$scratch/device_dataset.cpp" "$tree/include")" \
    "$(best "$scratch/resident.cpp" "$tree/include")" \
    "$(best "$tree/examples/readme_example.cpp" "$tree/include")" "$lines"
}

printf '%-14s %6s %15s %9s %15s %9s\n' tree std6 device_dataset resident readme_example lines
for rev in "$@"; do
  mkdir -p "$scratch/$rev"
  git archive "$rev" include examples | tar -x -C "$scratch/$rev"
  measure "$(git rev-parse --short "$rev")" "$scratch/$rev"
done
measure "working tree" "$PWD"
echo "compile-cost: $cxx -std=c++17 -O2, best of $runs; seconds, and the lines resident.hpp preprocesses to"
