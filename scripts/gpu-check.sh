#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The resident authors
# SPDX-License-Identifier: Apache-2.0
# GPU check: runs every test, the example, the benchmarks (JSON) and compute-sanitizer's
# memcheck, racecheck, initcheck and synccheck over the `gpu` preset's build, writing all logs
# under the folder given (default: $OUT).
#
#   scripts/gpu-check.sh --build-only   # here (GoogleTest/Benchmark installed): build build/gpu
#                                       # and gather build/gpu-carry (executables + libraries,
#                                       # within the 64 MiB carry limit), ready to carry
#   scripts/gpu-check.sh [OUT_DIR]      # on the GPU machine: build if needed, then run it all
#
# Every step runs even when an earlier one fails; the exit status is non-zero if any failed.
# It leaves gpu.csv, one log per step (tests, quickstart, bench, sanitizer-memcheck, -racecheck,
# -initcheck, -synccheck), the JSON and text output of every benchmark (scripts/bench.sh;
# bench_epoch's JSON with the PyTorch peers merged in) and, where matplotlib is installed, the
# plots under img/.
set -uo pipefail
cd "$(dirname "$0")/.."
build=build/gpu
carry=build/gpu-carry  # what the GPU machine needs: executables and shared libraries only
carry_limit_mib=60     # the device tool carries at most 64 MiB in all
if [[ -d /usr/local/cuda/bin ]]; then export PATH="/usr/local/cuda/bin:$PATH"; fi

build_gpu_preset() {
  cmake --preset gpu && cmake --build --preset gpu || return 1
  # The GPU machine has no GoogleTest, Google Benchmark or OpenBLAS, and the carry limit leaves
  # no room for object files: copy the executables, and the shared libraries they need that
  # the machine lacks (Benchmark, OpenBLAS and its Fortran runtime), into $carry.
  rm -rf "$carry"
  mkdir -p "$carry/lib"
  local dir file lib
  for dir in tests examples benchmarks; do
    mkdir -p "$carry/$dir"
    for file in "$build/$dir"/*; do
      if [[ -f $file && -x $file ]]; then cp "$file" "$carry/$dir/"; fi
    done
  done
  for lib in $(ldd "$build/benchmarks/bench_upload" "$build/benchmarks/bench_preload_vs_stream" |
    awk '/libbenchmark|libopenblas|libblas|libgfortran|libquadmath/ {print $3}' | sort -u); do
    cp -L "$lib" "$carry/lib/"
  done
  local mib
  mib=$(du -sm "$carry" | cut -f1)
  echo "gpu-check: $carry holds ${mib} MiB (limit ${carry_limit_mib}); carry it with the run"
  ((mib <= carry_limit_mib)) || { echo "gpu-check: $carry is too large to carry" >&2; return 1; }
}

if [[ ${1:-} == --build-only ]]; then
  build_gpu_preset
  exit $?
fi

out=${1:-${OUT:-gpu-check-out}}
mkdir -p "$out"
failures=0
step() {  # step <name> <command...>: runs it, logs to $out/<name>.log, counts failures
  local name=$1
  shift
  echo "== $name: $*" | tee "$out/$name.log"
  if "$@" >>"$out/$name.log" 2>&1; then
    echo "== $name: ok" | tee -a "$out/$name.log"
  else
    echo "== $name: FAILED (exit $?)" | tee -a "$out/$name.log"
    failures=$((failures + 1))
  fi
}

if [[ ! -x $carry/tests/resident_tests ]]; then
  step build build_gpu_preset
fi
build=$carry  # from here on, run what was carried (or just built)
export LD_LIBRARY_PATH="$PWD/$build/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export RESIDENT_TEST_DATA_DIR="$PWD/tests/data"  # the build may come from another checkout
export RESIDENT_REQUIRE_CUDA=1  # a test that would skip for want of a device fails here

nvidia-smi --query-gpu=name,driver_version,memory.total,pcie.link.gen.max,pcie.link.width.max \
  --format=csv >"$out/gpu.csv" 2>&1 || echo "nvidia-smi unavailable" >"$out/gpu.csv"
run_tests() {
  "$build/tests/resident_tests" && "$build/tests/resident_cuda_tests" &&
    "$build/tests/resident_device_loss" &&
    timeout 300 "$build/tests/resident_adversarial"  # misuse: a hang must fail, not stall
}
step tests run_tests
step quickstart "$build/examples/quickstart" --space cuda
run_benchmarks() {
  scripts/bench.sh --build-dir "$build" --out "$out" &&
    if python3 -c "import matplotlib" 2>/dev/null || /usr/bin/python3 -c "import matplotlib" 2>/dev/null; then
      python3 scripts/plot_bench.py "$out" --img "$out/img"
    else
      echo "matplotlib is not installed here; plot later with scripts/plot_bench.py $out"
    fi
}
step bench run_benchmarks
# compute-sanitizer, all four tools, over the device tests and every CUDA-typed host test (the
# fault-injecting CUDA space included). A missing compute-sanitizer fails the check: a GPU run
# that skipped it must not look clean.
sanitize() {  # sanitize <tool> [options...]
  local tool=$1
  shift
  compute-sanitizer --tool "$tool" --error-exitcode 1 "$@" "$build/tests/resident_cuda_tests" &&
    compute-sanitizer --tool "$tool" --error-exitcode 1 "$@" \
      "$build/tests/resident_tests" --gtest_filter='*Cuda*'
}
if command -v compute-sanitizer >/dev/null; then
  step sanitizer-memcheck sanitize memcheck --leak-check full
  step sanitizer-racecheck sanitize racecheck
  step sanitizer-initcheck sanitize initcheck
  step sanitizer-synccheck sanitize synccheck
else
  echo "compute-sanitizer not found on PATH; install the CUDA toolkit's sanitizer" |
    tee "$out/sanitizer.log"
  failures=$((failures + 1))
fi

echo "gpu-check: $failures step(s) failed; logs in $out"
exit $((failures > 0))
