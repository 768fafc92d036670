#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The resident authors
# SPDX-License-Identifier: Apache-2.0
# Mutation check of the CUDA path's ordering: do the tests over the simulated CUDA runtime
# (tests/simcuda: streams are host threads, copies read page-locked memory when they run, a
# free is not stream-ordered, stream work on freed memory stops the program) catch plausible
# ordering bugs? Each mutant is a small patch of the library under tests/mutants/
# (NN-short-name.patch, a unified diff with paths from the repository root): a stream wait, an
# event record, a host wait or a release dropped, a free not ordered after its stream, a kernel
# bound off by one. Each is applied in turn to a scratch copy of include/ and tests/ (never to
# the working tree); the simulated tests are rebuilt there (g++ -O0 straight against the
# simulated runtime, no CMake: every unit includes the mutated headers, so the build is most of
# the time, and -O0 builds and runs the set below faster than -O1) and run REPEAT times, each
# run with another seed of the simulation's delays. Prints, for each mutant, the tests that
# failed, crashed or hung in every run; a mutant caught by fewer than two tests in every run is
# flagged. A test that crashes is taken as catching the mutant and the rest of its unit is run
# again without it.
#
# Too slow for CI: the unmutated baseline and 17 mutants at --repeat 2 took 991 s (16.5 minutes)
# on two cores shared with other builds, most of it the build of the units for each mutant
# (about 40 s; a run of their tests about 5 s). Run it after changing how the CUDA spaces order
# their work, or the tests that check it.
#
#   scripts/mutants.sh [--repeat N] [--only PATTERN] [--jobs N] [--keep] [--exclude TESTS]
#     --repeat N       runs of each mutant's tests (default 2)
#     --only PATTERN   the mutants whose names (01-chunk-...) match PATTERN (an extended regex)
#     --jobs N         compiles and test binaries at a time (default: the cores)
#     --keep           keep the scratch copy (its path is printed)
#     --exclude TESTS  tests left out besides (gtest patterns, ':' between them): one that the
#                      unmutated tree fails for a reason of its own would catch every mutant
# Exit status: 0 when the baseline passes in every run and every mutant is caught by at least
# two tests in every run; 1 otherwise; 2 for a usage error.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS

usage="usage: scripts/mutants.sh [--repeat N] [--only PATTERN] [--jobs N] [--keep]"
usage+=" [--exclude TESTS]"
repeat=2
only=
jobs=$(nproc)
keep=0
excluded=
while (($#)); do
  case $1 in
    --repeat) repeat=${2:?$usage}; shift 2 ;;
    --only) only=${2:?$usage}; shift 2 ;;
    --jobs) jobs=${2:?$usage}; shift 2 ;;
    --keep) keep=1; shift ;;
    --exclude) excluded=${2:?$usage}; shift 2 ;;
    *) echo "$usage" >&2; exit 2 ;;
  esac
done
if ! [[ $repeat =~ ^[1-9][0-9]*$ && $jobs =~ ^[1-9][0-9]*$ ]]; then
  echo "$usage" >&2
  exit 2
fi

# The units: each mutant is caught by as many tests here as by the simulated suite's other
# units that use a CUDA space (tests/test_streaming_dataset.cpp and the tests/cuda units it
# compiles as C++ were measured: they add catches only where these have two or more), for the
# least build: some 80 s of compiling at -O0, against 117 s at -O1, which saves only 1 s of
# running. tests/detail/test_gather_kernels.cpp runs the kernels on the host, where a kernel
# that writes past its rows corrupts the heap.
units=(
  tests/test_consumer_stream.cpp
  tests/test_cuda_host_pinned_space.cpp
  tests/test_cuda_resource.cpp
  tests/test_cuda_space.cpp
  tests/test_epoch.cpp
  tests/test_faults.cpp
  tests/test_streaming_gather.cpp
  tests/test_upload.cpp
  tests/detail/test_gather_kernels.cpp
)
# The tests of the units on HostSpace (and on a test space of the host) order nothing on a
# stream: left out.
exclude='*/HostSpace.*:HostSpace/*:*/FaultyHostSpace.*:*/BlockGatherSpace.*'
exclude+=${excluded:+:$excluded}
test_timeout=300  # seconds a unit's binary may run (a mutant can make a test wait forever)

mapfile -t mutants < <(find tests/mutants -name '*.patch' | sort)
if [[ -n $only ]]; then
  # Matched against the patch's file name (01-chunk-...), not its path.
  mapfile -t mutants < <(printf '%s\n' "${mutants[@]}" | awk -F/ -v pattern="$only" '$NF ~ pattern')
fi
if ((${#mutants[@]} == 0)); then
  echo "mutants: no mutant under tests/mutants matches '$only'" >&2
  exit 2
fi

scratch=$(mktemp -d "${TMPDIR:-/tmp}/resident-mutants.XXXXXX")
# shellcheck disable=SC2317 # runs through the trap
cleanup() {
  if ((keep)); then echo "mutants: scratch copy kept in $scratch"; else rm -rf "$scratch"; fi
}
trap cleanup EXIT
tree=$scratch/tree
out=$scratch/build
mkdir -p "$tree" "$out"
# The tracked and untracked (not ignored) files of include/ and tests/, as they are now.
git -c core.quotePath=false ls-files -z --cached --others --exclude-standard -- include tests |
  while IFS= read -r -d '' file; do
    if [[ -f $file ]]; then printf '%s\0' "$file"; fi
  done | xargs -0 cp --parents -t "$tree"

# The build: a Makefile, so that a unit that does not include the mutated header is not rebuilt
# (make's timestamps; `patch` leaves the header newer than the objects, applied or reversed).
cuda_include=/usr/local/cuda/include
binaries=()
# shellcheck disable=SC2016 # $(CXX), $< and $@ are make's
{
  echo "CXX := ${CXX:-g++}"
  echo "FLAGS := -std=c++17 -O0 -I$tree/include -I$tree/tests -isystem $cuda_include" \
    "-isystem $cuda_include/cccl -DRESIDENT_HAS_CUDA=1 -DRESIDENT_TEST_ENABLE_CUDA=1" \
    "-DRESIDENT_TEST_SIMULATED_CUDA=1 '-DRESIDENT_TEST_DATA_DIR=\"$tree/tests/data\"'"
  echo "LIBS := -lgtest_main -lgtest -lz -pthread"
  echo "$out/simcuda.o: $tree/tests/simcuda/simcuda.cpp"
  printf '\t$(CXX) $(FLAGS) -c $< -o $@\n'
  for unit in "${units[@]}"; do
    name=$(basename "${unit%.*}")
    binaries+=("$out/$name")
    echo "$out/$name.o: $tree/$unit"
    printf '\t$(CXX) $(FLAGS) -MMD -MP -include %s -x c++ -c $< -o $@\n' \
      "$tree/tests/simcuda/kernel_harness.hpp"
    echo "$out/$name: $out/$name.o $out/simcuda.o"
    printf '\t$(CXX) -o $@ $^ $(LIBS)\n'
  done
  echo "all: ${binaries[*]}"
  echo "-include $out/*.d"
} >"$out/Makefile"

build() {  # LOG: builds every binary, compiler output into LOG
  nice make -s -j "$jobs" -f "$out/Makefile" all >"$1" 2>&1
}

# run_unit BINARY SEED DIR: runs BINARY's tests (but the excluded ones) with the simulation's
# delays seeded SEED; writes DIR/NAME.caught, a line per test that failed ("NAME"), crashed
# ("NAME (crashed)") or hung ("NAME (hung)"), and DIR/NAME.ran, the tests that finished.
run_unit() {
  local binary=$1 seed=$2 dir=$3
  local name=${binary##*/} skip=$exclude attempt status log last
  : >"$dir/$name.caught"
  : >"$dir/$name.ran"
  for ((attempt = 0; attempt < 50; ++attempt)); do
    log=$dir/$name.$attempt.log
    status=0
    # In a subshell of its own, so that the shell that reports a crash (Aborted) is silenced.
    (
      RESIDENT_SIMCUDA_SEED=$seed timeout --kill-after=10 "$test_timeout" "$binary" \
        --gtest_filter="*-$skip" >"$log" 2>&1
      exit $?
    ) 2>/dev/null || status=$?
    # A test's own result line ends with its time; the summary repeats the failures without.
    sed -n 's/^\[  FAILED  \] \([^ ,]*\).* ms)$/\1/p' "$log" >>"$dir/$name.caught"
    sed -n 's/^\[ *\(OK\|FAILED\|SKIPPED\) *\] \([^ ,]*\).* ms)$/\2/p' "$log" >>"$dir/$name.ran"
    ((status != 0)) || return 0
    # The test running when the binary stopped, if any: it crashed (or hung) on the mutant.
    last=$(sed -n 's/^\[ RUN      \] //p' "$log" | tail -n 1)
    if [[ -z $last ]] || grep -qxF -- "$last" "$dir/$name.ran"; then
      if ! grep -q '^\[  FAILED  \]' "$log"; then
        echo "$name (stopped outside a test, status $status)" >>"$dir/$name.caught"
      fi
      return 0
    fi
    if ((status == 124 || status == 137)); then
      echo "$last (hung)" >>"$dir/$name.caught"
    else
      echo "$last (crashed)" >>"$dir/$name.caught"
    fi
    echo "$last" >>"$dir/$name.ran"
    skip=$exclude:$(paste -sd: "$dir/$name.ran")
  done
}

# run_all DIR RUN: every binary once, at most `jobs` at a time, seed RUN; the tests that caught
# the code as it stands into DIR/caught, one a line.
run_all() {
  local dir=$1 run=$2 binary running=0
  mkdir -p "$dir"
  for binary in "${binaries[@]}"; do
    run_unit "$binary" "$run" "$dir" &
    running=$((running + 1))
    if ((running >= jobs)); then
      wait -n || true
      running=$((running - 1))
    fi
  done
  wait
  sort -u "$dir"/*.caught >"$dir/caught"
}

# The names of a catch list, without what happened ("(crashed)").
names_of() { sed 's/ (.*)$//' "$@"; }
# Test names (stdin) as a list for the table: the instances of a parameterised test that are
# there together as one ("Suite.Test/* (12)"), the first `shown` entries only.
listed() {
  sed -E 's#^([^.]*\.[^/]*)/.*$#& \1/*#; t; s#^.*$#& &#' |
    awk -v shown=6 '{ if (!($2 in count)) { order[++n] = $2; first[$2] = $1 } ++count[$2] }
      END {
        for (i = 1; i <= n && i <= shown; ++i) {
          key = order[i]
          out = out (i > 1 ? ", " : "") (count[key] > 1 ? key " (" count[key] ")" : first[key])
        }
        if (n > shown) out = out ", and " (n - shown) " more"
        print out
      }'
}

echo "mutants: building the baseline (${#units[@]} units) in $scratch"
if ! build "$out/baseline.log"; then
  cat "$out/baseline.log" >&2
  echo "mutants: the unmutated tree does not build" >&2
  exit 1
fi
status=0
for ((run = 1; run <= repeat; ++run)); do
  run_all "$out/runs/baseline/$run" "$run"
  if [[ -s $out/runs/baseline/$run/caught ]]; then
    echo "mutants: the baseline fails in run $run (seed $run):" >&2
    sed 's/^/  /' "$out/runs/baseline/$run/caught" >&2
    status=1
  fi
done
if ((status != 0)); then
  echo "mutants: fix the baseline first, or leave its failing tests out (--exclude)" >&2
  exit 1
fi
echo "mutants: baseline passes ($repeat runs, $((SECONDS - start)) s so far)"

rows=()
for patch in "${mutants[@]}"; do
  mutant=$(basename "$patch" .patch)
  if ! patch -p1 -s -d "$tree" --dry-run <"$patch" >/dev/null 2>&1; then
    rows+=("$mutant|-|-|0|!! the patch does not apply to the tree as it is now")
    status=1
    continue
  fi
  patch -p1 -s -d "$tree" <"$patch"
  dir=$out/runs/$mutant
  mkdir -p "$dir"
  if build "$dir/build.log"; then
    for ((run = 1; run <= repeat; ++run)); do run_all "$dir/$run" "$run"; done
    # Tests that caught it in every run, then in some.
    counted=$(for caught in "$dir"/*/caught; do names_of "$caught" | sort -u; done | sort | uniq -c)
    every=$(awk -v n="$repeat" '$1 == n { print $2 }' <<<"$counted")
    some=$(awk -v n="$repeat" '$1 < n { print $2 }' <<<"$counted")
    count=$(grep -c . <<<"$every" || true)
    all_runs=yes
    for ((run = 1; run <= repeat; ++run)); do
      [[ -s $dir/$run/caught ]] || all_runs=no
    done
    names=$(grep . <<<"$every" | listed || true)
    if [[ -n $some ]]; then names+="${names:+; }in some runs only: $(listed <<<"$some")"; fi
    flag=
    if ((count < 2)); then
      flag='!! '
      status=1
    fi
    rows+=("$mutant|$repeat|$all_runs|$count|$flag${names:-nothing}")
  else
    # A mutant that does not compile checks nothing: the patch needs mending.
    rows+=("$mutant|0|-|0|!! does not build (see $dir/build.log with --keep)")
    status=1
  fi
  patch -p1 -s -R -d "$tree" <"$patch"
  echo "mutants: $mutant done ($((SECONDS - start)) s so far)"
done

echo
{
  echo "mutant|runs|caught in every run|tests|caught by (in every run)"
  printf '%s\n' "${rows[@]}"
} | column -t -s '|'
echo
echo "mutants: ${#mutants[@]} mutants, $repeat runs each, in $((SECONDS - start)) s"
if ((status != 0)); then
  echo "mutants: flagged (!!): caught by fewer than two tests in every run, or not checked" >&2
fi
exit "$status"
