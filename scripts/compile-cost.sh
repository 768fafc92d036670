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
#   - token_program:   examples/token_epochs.cpp (llm.c shards, preloaded or streamed);
#   - image_program:   a CIFAR-like loop of its own: make_dataset of HWC uint8 images and int32
#                      labels, epochs with RandomCrop, RandomFlip and Normalize;
# and, counted once: the lines of include/'s headers; the lines resident/resident.hpp and
# resident/streaming_dataset.hpp preprocess to; and the lines of <zlib.h> (and of the headers
# it includes) in streaming_dataset.hpp's, 0 where the streaming core reaches no file format.
# The CUDA toolkit's headers are on the include path where it is installed (RESIDENT_HAS_CUDA
# then holds, as in a CUDA build).
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
printf '#include "resident/streaming_dataset.hpp"\n' >"$scratch/streaming_dataset.cpp"
cat >"$scratch/image_program.cpp" <<'PROGRAM'
#include <cstdint>
#include <cstdio>
#include <resident/resident.hpp>
#include <vector>

int main() try {
  const std::size_t rows = 1024, side = 32, channels = 3;
  std::vector<std::uint8_t> pixels(rows * side * side * channels);
  std::vector<std::int32_t> labels(rows);
  for (std::size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<std::uint8_t>(i * 31);
  for (std::size_t i = 0; i < rows; ++i) labels[i] = static_cast<std::int32_t>(i % 10);
  resident::DatasetOptions options;
  options.batch_size = 128;
  auto images = resident::make_dataset(
      resident::HostSpace{}, options,
      resident::HostTensor<const std::uint8_t>(pixels.data(), {rows, side, side, channels}),
      resident::HostTensor<const std::int32_t>(labels.data(), {rows}));
  const auto image = resident::ImageLayout::hwc(side, side, channels);
  double sum = 0;
  for (std::uint64_t e = 0; e < 2; ++e)
    for (auto [x, y] : images.epoch({1, e, resident::Shuffle::samples},
                                    resident::augment<0>(image, resident::RandomCrop{4},
                                                         resident::RandomFlip{}),
                                    resident::convert<0>(resident::Normalize{1.0f / 255, 0.5f})))
      for (std::size_t r = 0; r < x.valid_rows(); ++r) sum += x.row(r)[0] + y.row(r)[0];
  std::printf("%f\n", sum);
  return 0;
} catch (const resident::Error& error) {
  std::fprintf(stderr, "%s\n", error.what());
  return 1;
}
PROGRAM

# best SOURCE TREE: the fastest of `runs` compiles, in seconds.
best() {
  local source=$1 include=$2 fastest=-1 start elapsed run
  for ((run = 0; run < runs; ++run)); do
    start=${EPOCHREALTIME/./}
    "$cxx" -std=c++17 -O2 -I"$include/include" -I"$include/examples" "${cuda_include[@]}" -c "$source" \
      -o /dev/null
    elapsed=$((${EPOCHREALTIME/./} - start))
    if ((fastest < 0 || elapsed < fastest)); then fastest=$elapsed; fi
  done
  printf '%d.%02d' $((fastest / 1000000)) $((fastest % 1000000 / 10000))
}

# preprocessed SOURCE TREE: the lines SOURCE preprocesses to with TREE's headers.
preprocessed() {
  "$cxx" -std=c++17 -I"$2/include" "${cuda_include[@]}" -E "$1" | wc -l
}

# zlib_lines TREE: the lines of streaming_dataset.hpp's preprocessed text that come from zlib's
# headers (the line markers name the file each run of lines comes from).
zlib_lines() {
  "$cxx" -std=c++17 -I"$1/include" "${cuda_include[@]}" -E "$scratch/streaming_dataset.cpp" |
    awk '/^# [0-9]+ "/ { from = $3 } !/^#/ && from ~ /\/(zlib|zconf)\.h"$/ { ++n } END { print n + 0 }'
}

# measure LABEL TREE: one row for the tree at TREE (include/ and examples/).
measure() {
  local label=$1 tree=$2 header_lines
  header_lines=$(find "$tree/include" -name '*.hpp' -o -name '*.cuh' | xargs cat | wc -l)
  printf '%-14s %6s %15s %9s %15s %14s %14s %9s %11s %11s %6s\n' "$label" \
    "$(best "$scratch/std6.cpp" "$tree")" \
    "$(best "$scratch/device_dataset.cpp" "$tree")" \
    "$(best "$scratch/resident.cpp" "$tree")" \
    "$(best "$tree/examples/readme_example.cpp" "$tree")" \
    "$(best "$tree/examples/token_epochs.cpp" "$tree")" \
    "$(best "$scratch/image_program.cpp" "$tree")" "$header_lines" \
    "$(preprocessed "$scratch/resident.cpp" "$tree")" \
    "$(preprocessed "$scratch/streaming_dataset.cpp" "$tree")" "$(zlib_lines "$tree")"
}

printf '%-14s %6s %15s %9s %15s %14s %14s %9s %11s %11s %6s\n' tree std6 device_dataset \
  resident readme_example token_program image_program headers resident.E streaming.E zlib
for rev in "$@"; do
  mkdir -p "$scratch/$rev"
  git archive "$rev" include examples | tar -x -C "$scratch/$rev"
  measure "$(git rev-parse --short "$rev")" "$scratch/$rev"
done
measure "working tree" "$PWD"
echo "compile-cost: $cxx -std=c++17 -O2, best of $runs; seconds; lines of include/'s headers," \
  "of resident.hpp and streaming_dataset.hpp preprocessed, and of zlib's headers in the latter"
