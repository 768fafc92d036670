#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The resident authors
# SPDX-License-Identifier: Apache-2.0
# Static analysis, as CI runs it; any finding fails.
#   clang-tidy (checks in .clang-tidy) over every test translation unit, which instantiates the
#     library's templates, reporting findings in include/resident/ and in the tests themselves;
#   cppcheck over include/, once with the CUDA parts and once without.
# Usage: scripts/static-analysis.sh [build-dir with compile_commands.json, default build/ci]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/ci}
[[ -f "$build/compile_commands.json" ]] || cmake --preset ci >/dev/null

# 1. clang-tidy. The compile database has no -std flag (g++ defaults to C++17; clang-tidy's
#    clang to C++14), so the library's standard is passed explicitly.
mapfile -t units < <(git ls-files 'tests/*.cpp' | grep -v '^tests/fuzz/' | grep -v '^tests/consumer/')
# The DLPack probe module is built only where Python's headers are (its tests skip elsewhere).
if ! grep -q 'tests/dlpack_numpy/probe.cpp' "$build/compile_commands.json"; then
  mapfile -t units < <(printf '%s\n' "${units[@]}" | grep -v '^tests/dlpack_numpy/')
fi
start=$(date +%s)
if ! printf '%s\n' "${units[@]}" |
  xargs -P "$(nproc)" -n 1 clang-tidy -p "$build" --quiet --extra-arg=-std=c++17 \
    >"$build/clang-tidy.log" 2>&1; then
  grep -E 'warning:|error:' "$build/clang-tidy.log" >&2 || cat "$build/clang-tidy.log" >&2
  echo "static-analysis: clang-tidy found the problems above (full log: $build/clang-tidy.log)" >&2
  exit 1
fi
echo "static-analysis: clang-tidy clean over ${#units[@]} translation units in $(( $(date +%s) - start )) s"

# 2. cppcheck over the headers. unusedStructMember is off: the public option structs' members
#    are read by the callers, whom cppcheck does not see from the headers alone.
#    duplInheritedMember is off: a space's `space_traits` specialisation derives from
#    `default_space_traits` to override some of its members by name, which is the design.
mapfile -t headers < <(git ls-files 'include/*.hpp')
for cuda in 0 1; do
  cppcheck --enable=warning,style,performance,portability --std=c++17 --language=c++ \
    --platform=unix64 -D__linux__ -D__unix__ -D__GNUC__ -DRESIDENT_HAS_CUDA=$cuda \
    --suppress=unusedStructMember --suppress=duplInheritedMember --inline-suppr --error-exitcode=1 --quiet \
    -I include "${headers[@]}"
done
echo "static-analysis: cppcheck clean over ${#headers[@]} headers (with and without CUDA)"
