#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The resident authors
# SPDX-License-Identifier: Apache-2.0
# The fast half of CI, in minutes rather than CI's 25: formatting, the documentation checks,
# cppcheck over the headers, and a compile (warnings as errors, host build) of what changed
# since BASE: every public header alone, and each test unit that changed or whose header
# changed. Run it before committing; .ci/run runs all of it and the rest.
#   scripts/precheck.sh [BASE]   BASE: a commit (default: the merge base with origin/main, or
#                                HEAD where there is none; uncommitted changes always count)
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS

mapfile -t sources < <(git ls-files '*.hpp' '*.cpp' '*.cu' '*.cuh')
clang-format --dry-run --Werror "${sources[@]}"
echo "precheck: clang-format clean (${#sources[@]} files)"
scripts/docs.sh
scripts/static-analysis.sh cppcheck

# What changed: committed since BASE, staged, unstaged and untracked.
base=${1:-$(git merge-base HEAD origin/main 2>/dev/null || git rev-parse HEAD)}
mapfile -t changed < <({
  git diff --name-only "$base"
  git ls-files --others --exclude-standard
} | sort -u)

# The units to compile: a changed test unit; the test of a changed public header
# (tests/test_<header>.cpp); the units that include a changed test support header.
build=build/precheck
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DRESIDENT_ENABLE_CUDA=OFF \
  -DRESIDENT_BUILD_EXAMPLES=ON -DRESIDENT_BUILD_BENCHMARKS=ON >"$build.configure.log" 2>&1 ||
  { cat "$build.configure.log" >&2; exit 1; }
units=()
for file in "${changed[@]}"; do
  [[ -f $file ]] || continue
  case $file in
    tests/*.cpp | examples/*.cpp | benchmarks/*.cpp) units+=("$file") ;;
    include/resident/*.hpp)
      test_unit="tests/test_$(basename "$file" .hpp).cpp"
      [[ -f $test_unit ]] && units+=("$test_unit")
      ;;
    tests/support/*.hpp)
      mapfile -t -O "${#units[@]}" units < <(git grep -l "support/$(basename "$file")" -- 'tests/*.cpp')
      ;;
  esac
done
targets=(resident_header_check)
if ((${#units[@]})); then
  mapfile -t units < <(printf '%s\n' "${units[@]}" | sort -u)
  # Each unit's object, as ninja names it in this build (absent where the build has no such
  # unit: a CUDA-only or optional example).
  all_targets=$(ninja -C "$build" -t targets all)
  for unit in "${units[@]}"; do
    folder=${unit%%/*}
    mapfile -t -O "${#targets[@]}" targets < <(grep -oE \
      "^$folder/CMakeFiles/[^/]*\.dir/${unit#*/}\.o" <<<"$all_targets" || true)
  done
fi
ninja -C "$build" "${targets[@]}" >"$build/build.log" 2>&1 || {
  grep -E 'error|warning|FAILED' "$build/build.log" >&2 || cat "$build/build.log" >&2
  echo "precheck: the build above failed (full log: $build/build.log)" >&2
  exit 1
}
echo "precheck: compiled every public header alone and ${#units[@]} changed unit(s)" \
  "${units[*]:+(${units[*]})}"
echo "precheck: passed in $((SECONDS - start)) s; .ci/run runs the tests, clang-tidy and the" \
  "sanitizers"
