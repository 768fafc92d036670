#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The resident authors
# SPDX-License-Identifier: Apache-2.0
# The fast half of CI, in about a minute rather than CI's 25: formatting (tracked and untracked
# files), no include cycle among the headers and no file format outside the loaders, the
# documentation checks, cppcheck over the headers, and a compile (warnings as errors) of what
# changed since BASE:
#   - every public header alone, in a host build, and the changed public headers (and those
#     that include a changed internal header) alone in a CUDA build too, where nvcc exists;
#   - each changed unit of tests/, examples/ and benchmarks/, the test of each changed public
#     header (tests/test_<header>.cpp) and of each changed internal header
#     (tests/detail/test_<header>.cpp, tests/detail/adversarial/test_<header>.cpp), and every
#     unit that includes a changed header of tests/, examples/ or benchmarks/, directly or
#     through other headers.
# Run it before committing; .ci/run runs all of it and the rest.
#   scripts/precheck.sh [BASE]   BASE: a commit (default: the merge base with origin/main, or
#                                HEAD where there is none); uncommitted and untracked changes
#                                always count
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
git_files() { git -c core.quotePath=false "$@"; }

base=${1:-$(git merge-base HEAD origin/main 2>/dev/null || git rev-parse HEAD)}
if ! git rev-parse --verify --quiet "$base^{commit}" >/dev/null; then
  echo "precheck: '$base' names no commit; give a commit, a branch or a tag (or nothing)" >&2
  exit 2
fi

mapfile -t sources < <({
  git_files ls-files '*.hpp' '*.cpp' '*.cu' '*.cuh'
  git_files ls-files --others --exclude-standard '*.hpp' '*.cpp' '*.cu' '*.cuh'
} | sort -u)
clang-format --dry-run --Werror "${sources[@]}"
echo "precheck: clang-format clean (${#sources[@]} files)"
scripts/include-cycles.py
scripts/include-rules.py
scripts/docs.sh
scripts/static-analysis.sh cppcheck

# What changed: committed since BASE, staged, unstaged and untracked.
diff=$(git_files diff --name-only "$base")
untracked=$(git_files ls-files --others --exclude-standard)
mapfile -t changed < <(printf '%s\n%s\n' "$diff" "$untracked" | grep -v '^$' | sort -u || true)
echo "precheck: ${#changed[@]} file(s) changed since $(git rev-parse --short "$base")"

# includers HEADER...: the files that include one of the headers, directly or through other
# headers (matched by the path the #include names, which ends in the header's name).
includers() {
  local -A seen=()
  local queue=("$@") header name file
  while ((${#queue[@]})); do
    header=${queue[0]}
    queue=("${queue[@]:1}")
    name=$(basename "$header")
    while IFS= read -r file; do
      [[ -n $file && -z ${seen[$file]:-} ]] || continue
      seen[$file]=1
      echo "$file"
      [[ $file == *.hpp || $file == *.cuh ]] && queue+=("$file")
    done < <(git_files grep -l -E "#include [<\"]([^>\"]*/)?$name[>\"]" -- \
      'include/*' 'tests/*' 'examples/*' 'benchmarks/*' || true)
  done
}

units=()
public_headers=()
for file in "${changed[@]}"; do
  [[ -f $file ]] || continue
  case $file in
    tests/*.cpp | examples/*.cpp | benchmarks/*.cpp) units+=("$file") ;;
    include/resident/detail/*)
      mapfile -t -O "${#public_headers[@]}" public_headers < <(includers "$file" |
        grep -E '^include/resident/[^/]+\.hpp$' || true)
      for test_unit in tests/detail/test_"$(basename "$file" .hpp)".cpp \
        tests/detail/adversarial/test_"$(basename "$file" .hpp)".cpp; do
        if [[ -f $test_unit ]]; then units+=("$test_unit"); fi
      done
      ;;
    include/resident/*.hpp)
      public_headers+=("$file")
      test_unit="tests/test_$(basename "$file" .hpp).cpp"
      if [[ -f $test_unit ]]; then units+=("$test_unit"); fi
      ;;
    tests/*.hpp | examples/*.hpp | benchmarks/*.hpp)
      mapfile -t -O "${#units[@]}" units < <(includers "$file" | grep -E '\.(cpp|cu)$' || true)
      ;;
  esac
done

# compile BUILD CUDA(ON|OFF) UNIT...: configures BUILD, then compiles the header check's
# units of the changed public headers (all of them in the host build) and the given units,
# each as ninja names its object; a unit with no object in BUILD is reported, not compiled.
compile() {
  local build=$1 cuda=$2 unit folder objects=() all_targets found
  shift 2
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DRESIDENT_ENABLE_CUDA="$cuda" \
    -DRESIDENT_BUILD_EXAMPLES=ON -DRESIDENT_BUILD_BENCHMARKS=ON >"$build.configure.log" 2>&1 ||
    { cat "$build.configure.log" >&2; exit 1; }
  all_targets=$(ninja -C "$build" -t targets all)
  if [[ $cuda == OFF ]]; then objects=(resident_header_check); fi
  for unit in "$@"; do
    folder=${unit%%/*}
    found=$(grep -oE "^$folder/CMakeFiles/[^/]*\.dir/${unit#*/}\.o" <<<"$all_targets" || true)
    if [[ -z $found ]]; then
      echo "precheck: $unit is built by no target of $build (a CUDA-only or optional unit," \
        "or one CMake does not list); not compiled here"
      continue
    fi
    mapfile -t -O "${#objects[@]}" objects <<<"$found"
  done
  ((${#objects[@]})) || return 0
  ninja -C "$build" "${objects[@]}" >"$build/build.log" 2>&1 || {
    grep -E 'error|warning|FAILED' "$build/build.log" >&2 || cat "$build/build.log" >&2
    echo "precheck: the build above failed (full log: $build/build.log)" >&2
    exit 1
  }
}

mapfile -t units < <(printf '%s\n' "${units[@]}" | grep -v '^$' | sort -u || true)
compile build/precheck OFF "${units[@]}"
echo "precheck: host build: compiled every public header alone and ${#units[@]} unit(s)${units[*]:+: ${units[*]}}"

# The CUDA-only parts of the changed public headers (RESIDENT_HAS_CUDA=1), where nvcc is.
mapfile -t public_headers < <(printf '%s\n' "${public_headers[@]}" | grep -v '^$' | sort -u || true)
if ((${#public_headers[@]})); then
  if command -v nvcc >/dev/null || [[ -x /usr/local/cuda/bin/nvcc ]]; then
    alone=()
    for header in "${public_headers[@]}"; do
      alone+=("tests/CMakeFiles/resident_header_check.dir/headers/alone_$(basename "$header" .hpp).cpp.o")
    done
    compile build/precheck-cuda ON
    ninja -C build/precheck-cuda "${alone[@]}" >build/precheck-cuda/build.log 2>&1 || {
      grep -E 'error|warning|FAILED' build/precheck-cuda/build.log >&2
      echo "precheck: a changed public header fails alone in the CUDA build (above)" >&2
      exit 1
    }
    echo "precheck: CUDA build: compiled ${#public_headers[@]} changed public header(s) alone"
  else
    echo "precheck: no nvcc here; the CUDA-only parts of changed headers were not compiled"
  fi
fi
echo "precheck: passed in $((SECONDS - start)) s; .ci/run runs the tests, clang-tidy and the" \
  "sanitizers"
