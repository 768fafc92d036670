#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The resident authors
# SPDX-License-Identifier: Apache-2.0
# GPU check over the `gpu` preset's build, in three phases, each of which can run on its own,
# in this order of priority. Time on the GPU: an estimate (from the host runs, scaled), then
# the bound that the steps' time limits set; a time limit around a phase should allow at least
# the bound.
#
#   tests     ~1.5 min, at most 9.5: the GPU and its driver (nvidia-smi; the driver must support
#             the CUDA version the bundled runtime was built with), every test with
#             RESIDENT_REQUIRE_CUDA=1 (a test that would skip for want of a device fails),
#             the device-loss test, the misuse suite, the internals' tests, the quickstart on
#             the device, torch.from_dlpack reading every field and batch on the device, and
#             train_mlp on the digits data on the host and on the device with the same seed
#             (test accuracies printed, within 1 point of each other), and train_tokens on the
#             device (a held-out gain of at least 1 bit per byte over the unigram baseline)
#   bench     ~2.5 min, at most 8: every benchmark with JSON (scripts/bench.sh --quick: short
#             measurements, no 4 GiB rows), the PyTorch peers and, where matplotlib is
#             installed, the plots under img/
#   sanitize  ~3 min, at most 5.5: compute-sanitizer's memcheck (with leak check), racecheck,
#             initcheck and synccheck over the CUDA tests, the sweeps left out; first the
#             canary, an out-of-bounds write that memcheck must report
#   libtorch  ~2.5 min, at most 5: train_libtorch built there against PyTorch's libtorch (the
#             bundle's is Debian's, without CUDA; nvcc compiles the example with libtorch's
#             headers), run on the digits on the host and on the device with the same seed,
#             and on the device with its datasets in libtorch's caching allocator; rmm's
#             resources (tests/cuda/rmm_resource.cpp) where the librmm wheel is installed
#
#   scripts/gpu-check.sh --build-only   # on a build machine (GoogleTest, Google Benchmark,
#                                       # OpenBLAS and a Python with scikit-learn installed):
#                                       # build build/gpu, gather build/gpu-bundle (the
#                                       # executables the phases run, the shared libraries
#                                       # the GPU machine lacks, the digits data) within its
#                                       # size limit, and print the phase commands
#   scripts/gpu-check.sh [--phase tests|bench|sanitize|libtorch] [OUT_DIR]
#                                       # on the GPU machine, with build/gpu-bundle copied there;
#                                       # without --phase, all four in turn
#
# Logs go under OUT_DIR (default: the OUT environment variable, else gpu-check-out), one per
# step, written as the step runs, so that a run stopped by a time limit still leaves what ran.
# Every step has a time limit of its own and runs even when an earlier one failed; the exit
# status is non-zero if any failed. A machine without a usable GPU (no nvidia-smi, no device,
# a driver too old) fails at the first step, saying which, and runs nothing else.
# shellcheck disable=SC2317  # the functions below run through step, which shellcheck cannot see
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
build=build/gpu
bundle=build/gpu-bundle  # what the GPU machine needs: executables, shared libraries, data
bundle_limit_mib=60  # MiB: a larger bundle is refused, so the copy to a GPU machine stays small
for dir in /usr/local/cuda/bin /usr/local/cuda/compute-sanitizer; do
  if [[ -d $dir ]]; then export PATH="$dir:$PATH"; fi
done

# The executables the phases run; --build-only fails naming any the build lacks.
bundled=(tests/resident_tests tests/resident_cuda_tests tests/resident_device_loss
  tests/resident_mixed_units tests/resident_adversarial tests/resident_detail_tests
  tests/resident_detail_adversarial tests/resident_cuda_versions tests/resident_sanitizer_canary
  tests/libresident_dlpack_exporter.so examples/quickstart examples/train_mlp
  examples/train_tokens)
mapfile -t benchmarks < <(scripts/bench.sh --list)
bundled+=("${benchmarks[@]/#/benchmarks/}")
# train_mlp on the digits as examples/CMakeLists.txt runs it (example.train_mlp_digits).
digits_args=(--x "$bundle/data/digits_x.npy" --y "$bundle/data/digits_y.npy" --scale 0.0625
  --epochs 20 --batch 32 --rate 0.1 --seed 1)
digits_floor=95  # the test accuracy example.train_mlp_digits asks of the host run

# The GPU machine has no GoogleTest, Google Benchmark, OpenBLAS or scikit-learn, and the bundle
# limit leaves no room for object files: copy the executables the phases run, and the shared
# libraries they need that the machine lacks (Benchmark, OpenBLAS and its Fortran runtime),
# into $bundle, with the digits data. The libraries go as lib.tar.gz (OpenBLAS alone is 36 MB,
# 12 MB compressed), unpacked outside the bundle when a phase runs.
python_with() {  # python_with <module>: prints the Python that has it (Debian's has more)
  local python
  for python in python3 /usr/bin/python3; do
    if "$python" -c "import $1" 2>/dev/null; then echo "$python"; return 0; fi
  done
  return 1
}
build_gpu_preset() {
  local python
  python=$(python_with sklearn) || {
    echo "gpu-check: the digits data needs a Python with scikit-learn (apt-get install" \
      "python3-sklearn)" >&2
    return 1
  }
  cmake --preset gpu && cmake --build --preset gpu || return 1
  rm -rf "$bundle"
  gather_bundle "$python" && return 0
  rm -rf "$bundle"  # a bundle short of anything must not look ready
  return 1
}
gather_bundle() {  # gather_bundle <python with scikit-learn>
  mkdir -p "$bundle/lib" "$bundle/data" "$bundle/tests" "$bundle/examples" "$bundle/benchmarks"
  local missing=() executable
  for executable in "${bundled[@]}"; do
    if [[ -x $build/$executable ]]; then
      cp "$build/$executable" "$bundle/$executable"
    else
      missing+=("$build/$executable")
    fi
  done
  if ((${#missing[@]})); then
    {
      echo "gpu-check: the gpu build lacks what the GPU phases run:"
      printf '  %s\n' "${missing[@]}"
      echo "bench_preload_vs_stream and train_mlp are built only where OpenBLAS is found" \
        "(apt-get install libopenblas-dev), the CUDA tests only where nvcc is"
    } >&2
    return 1
  fi
  local lib
  for lib in $(ldd "$bundle"/{tests,examples,benchmarks}/* |
    awk '/libbenchmark|libopenblas|libblas|libgfortran|libquadmath/ {print $3}' | sort -u); do
    cp -L "$lib" "$bundle/lib/"
  done
  { tar -C "$bundle" -czf "$bundle/lib.tar.gz" lib && rm -r "${bundle:?}/lib"; } || return 1
  "$1" scripts/prepare_digits.py "$bundle/data" || return 1
  local mib
  mib=$(du -sm "$bundle" | cut -f1)
  echo "gpu-check: $bundle holds ${mib} MiB (limit ${bundle_limit_mib})"
  ((mib <= bundle_limit_mib)) || { echo "gpu-check: $bundle is too large to copy" >&2; return 1; }
}

if [[ ${1:-} == --build-only ]]; then
  build_gpu_preset || exit 1
  echo "gpu-check: on the GPU machine, from the repository root with $bundle copied there, each"
  echo "phase on its own (time each: the header of scripts/gpu-check.sh; logs under OUT_DIR,"
  echo "default \$OUT, else gpu-check-out):"
  for phase in tests bench sanitize libtorch; do echo "  scripts/gpu-check.sh --phase $phase"; done
  exit 0
fi

phases=(tests bench sanitize libtorch)
if [[ ${1:-} == --phase ]]; then
  case ${2:-} in
    tests | bench | sanitize | libtorch) phases=("$2") ;;
    *) echo "usage: scripts/gpu-check.sh [--build-only | --phase tests|bench|sanitize|libtorch]" \
      "[OUT_DIR]" >&2
      exit 2 ;;
  esac
  shift 2
fi
out=${1:-${OUT:-gpu-check-out}}
mkdir -p "$out"
exec 3>&1  # the console: a step's output goes to its log, and what say says here too
say() { echo "$*"; echo "$*" >&3; }
failures=0
step() {  # step <name> <command...>: runs it, logging to $out/<name>.log as it goes
  local name=$1 log="$out/$1.log" status
  shift
  echo "== $name: $*" | tee "$log"
  "$@" >>"$log" 2>&1
  status=$?
  if ((status == 0)); then
    echo "== $name: ok" | tee -a "$log"
    return 0
  fi
  if ((status == 124 || status == 137)); then echo "(ran past its time limit)" >>"$log"; fi
  echo "== $name: FAILED (exit $status); the log ends:"
  tail -n +2 "$log" | tail -n 15 | sed 's/^/   | /'
  echo "== $name: FAILED (exit $status)" >>"$log"
  failures=$((failures + 1))
  return 1
}
limit() {  # limit <seconds> <command...>: the command, stopped after that many seconds
  timeout --kill-after=10 "$@"
}

# Before anything else, the GPU and its driver (nvidia-smi); then, from the bundle, the CUDA
# version the driver supports against the one the bundled runtime was built with (the gpu
# preset links it statically: the toolkit's), by resident_cuda_versions, which calls
# cudaDriverGetVersion and cudaRuntimeGetVersion (nvidia-smi knows the driver's side only).
# A failure of either ends the run. Then the shared libraries of every bundled executable: one
# not found here (cuBLAS, for train_mlp and bench_preload_vs_stream, comes from the machine's
# CUDA toolkit) fails that step, naming it, and the executables that need it fail in turn.
check_gpu() {
  command -v nvidia-smi >/dev/null ||
    { echo "no nvidia-smi: this machine has no NVIDIA driver"; return 1; }
  local query=name,driver_version,memory.total,pcie.link.gen.max,pcie.link.width.max
  if ! limit 30 nvidia-smi --query-gpu="$query" --format=csv >"$out/gpu.csv" 2>&1; then
    cat "$out/gpu.csv"
    echo "nvidia-smi finds no usable GPU"
    return 1
  fi
  say "$(<"$out/gpu.csv")"
}
check_cuda() {
  local versions status
  versions=$(limit 30 "$build/tests/resident_cuda_versions")
  status=$?
  if ((status == 0)); then say "$versions"; else echo "$versions"; fi
  return "$status"
}
check_libraries() {
  local executable unresolved status=0
  for executable in "$build"/{tests,examples,benchmarks}/*; do
    unresolved=$(ldd "$executable" | grep 'not found')
    [[ -z $unresolved ]] || { echo "$executable:"; echo "$unresolved"; status=1; }
  done
  return "$status"
}
not_run() { echo "gpu-check: $1; phase(s) ${phases[*]} not run"; exit 1; }

step gpu check_gpu || not_run "no usable GPU here (see above)"
if [[ ! -x $bundle/tests/resident_tests ]]; then
  step build build_gpu_preset || not_run "no $bundle, and building it failed"
fi
build=$bundle  # from here on, run what was bundled (or just built)
libraries=$(mktemp -d) || exit 1
trap 'rm -rf "$libraries"' EXIT
tar -C "$libraries" -xzf "$build/lib.tar.gz" || not_run "$build/lib.tar.gz cannot be unpacked"
export LD_LIBRARY_PATH="$libraries/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
if [[ -d /usr/local/cuda/lib64 ]]; then  # cuBLAS (train_mlp, bench_preload_vs_stream)
  export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:/usr/local/cuda/lib64"
fi
export RESIDENT_TEST_DATA_DIR="$PWD/tests/data"  # the build may come from another checkout
export RESIDENT_REQUIRE_CUDA=1  # a test that would skip for want of a device fails here
step cuda check_cuda || not_run "the driver cannot run the bundled build (see above)"
step libraries check_libraries

# The byte-level language model on the device, on the machine's Python sources, held to the
# gain its ctest asks (example.train_tokens_cuda).
train_tokens_cuda() {
  limit 60 "$build/examples/train_tokens" --device cuda | tee "$out/train_tokens-cuda.txt" ||
    return 1
  grep -qE 'cuda:0: held-out bits/byte: .*gain over unigram [1-9]\.[0-9]+ bits/byte' \
    "$out/train_tokens-cuda.txt"
}

train_mlp_host_vs_cuda() {
  local space accuracy host cuda
  for space in host cuda; do
    limit 45 "$build/examples/train_mlp" "${digits_args[@]}" --space "$space" |
      tee "$out/train_mlp-$space.txt" || return 1
    accuracy=$(sed -n 's/^train_mlp: final test accuracy \([0-9.]*\) %$/\1/p' \
      "$out/train_mlp-$space.txt")
    [[ -n $accuracy ]] || { echo "train_mlp --space $space printed no final accuracy"; return 1; }
    printf -v "$space" '%s' "$accuracy"
  done
  say "digits, seed 1: test accuracy $host % on the host, $cuda % on the device"
  awk -v host="$host" -v cuda="$cuda" -v floor="$digits_floor" 'BEGIN {
    difference = host > cuda ? host - cuda : cuda - host
    if (difference > 1) { print "the two differ by " difference " points, more than 1"; exit 1 }
    if (host < floor || cuda < floor) { print "under the " floor " % the example asks"; exit 1 }
  }'
}

dlpack_torch() {  # torch.from_dlpack reads every field and batch, on the host and the device
  local python
  python=$(python_with torch) || { echo "no Python here has PyTorch (import torch)"; return 1; }
  limit 60 "$python" tests/dlpack_torch/test_dlpack_torch.py \
    "$build/tests/libresident_dlpack_exporter.so" --require-cuda
}

# The libtorch example on the device, against the libtorch of PyTorch's wheel (the bundle's
# Debian libtorch has no CUDA): built here, the example alone, then run on the digits on the
# host and on the device with the same seed, each held to example.train_libtorch_digits's 95 %.
train_libtorch_cuda() {
  local python prefix space accuracy
  python=$(python_with torch) || { echo "no Python here has PyTorch (import torch)"; return 1; }
  prefix=$("$python" -c 'import torch; print(torch.utils.cmake_prefix_path)') || return 1
  limit 60 cmake -S . -B build/gpu-libtorch -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_PREFIX_PATH="$prefix" -DRESIDENT_WITH_TORCH=ON -DRESIDENT_BUILD_TESTS=OFF \
    -DRESIDENT_BUILD_BENCHMARKS=OFF -DRESIDENT_BUILD_EXAMPLES=ON || return 1
  limit 150 cmake --build build/gpu-libtorch --target train_libtorch || return 1
  for space in host cuda; do
    limit 45 build/gpu-libtorch/examples/train_libtorch --x "$bundle/data/digits_x.npy" \
      --y "$bundle/data/digits_y.npy" --seed 1 --device "$space" |
      tee "$out/train_libtorch-$space.txt" || return 1
    accuracy=$(sed -n 's/^held-out accuracy \([0-9.]*\) %$/\1/p' "$out/train_libtorch-$space.txt")
    say "train_libtorch --device $space, seed 1: held-out accuracy ${accuracy:-none} %"
    awk -v a="${accuracy:-0}" -v floor="$digits_floor" 'BEGIN { exit !(a >= floor) }' || return 1
  done
}

phase_tests() {
  step tests-resident limit 120 "$build/tests/resident_tests"
  step tests-cuda limit 45 "$build/tests/resident_cuda_tests"
  step tests-device-loss limit 45 "$build/tests/resident_device_loss"
  # A program of an nvcc unit and a g++ unit sharing one dataset and one epoch type: the g++
  # unit's epochs gather with the kernels the nvcc unit compiled.
  step tests-mixed-units limit 30 "$build/tests/resident_mixed_units"
  # The misuse suite: a hang must fail, not stall the phase.
  step tests-adversarial limit 60 "$build/tests/resident_adversarial"
  # The internals' unit tests, and those at their edges (a hang must fail there too).
  step tests-detail limit 30 "$build/tests/resident_detail_tests"
  step tests-detail-adversarial limit 30 "$build/tests/resident_detail_adversarial"
  step quickstart limit 30 "$build/examples/quickstart" --space cuda
  step dlpack-torch dlpack_torch
  step train_mlp-digits train_mlp_host_vs_cuda
  step train_tokens-cuda train_tokens_cuda
}

# The libtorch loop with its datasets in libtorch's caching allocator (TorchCudaResource):
# memory_allocated rises by at least the datasets' bytes while they live and falls back to
# where it was once they are gone.
train_libtorch_torch_memory() {
  local line before with delta bytes after
  limit 45 build/gpu-libtorch/examples/train_libtorch --x "$bundle/data/digits_x.npy" \
    --y "$bundle/data/digits_y.npy" --seed 1 --device cuda --memory torch --epochs 2 |
    tee "$out/train_libtorch-torch-memory.txt" || return 1
  line=$(grep '^torch memory_allocated:' "$out/train_libtorch-torch-memory.txt") || return 1
  read -r before with delta bytes after < <(echo "$line" | sed -E \
    's/^torch memory_allocated: ([0-9]+) B before the datasets, ([0-9]+) B with them \(\+([0-9-]+) B; the datasets take ([0-9]+) B\), ([0-9]+) B after them$/\1 \2 \3 \4 \5/')
  say "libtorch memory_allocated: $before B before the datasets, $with B with them (+$delta B; the datasets take $bytes B), $after B after"
  ((delta >= bytes && after == before))
}

# rmm's resources under CudaSpace::with_resource (tests/cuda/rmm_resource.cpp): built here
# against the librmm wheel's headers and library where a Python has it (pip install
# librmm-cu13), and skipped, saying so, where none has.
rmm_resources() {
  local python rmm logger cuda=/usr/local/cuda
  if ! python=$(python_with librmm) || ! "$python" -c 'import rapids_logger' 2>/dev/null; then
    say "rmm: skipped: no Python here has librmm and rapids_logger (pip install librmm-cu13)"
    return 0
  fi
  rmm=$("$python" -c 'import librmm, os; print(os.path.dirname(librmm.__file__))') || return 1
  logger=$("$python" -c 'import rapids_logger, os; print(os.path.dirname(rapids_logger.__file__))') ||
    return 1
  mkdir -p build/gpu-rmm
  # rmm's own CCCL (include/rapids) comes first: rmm's resource refs are of that version.
  limit 180 g++ -std=c++17 -O2 -Iinclude -isystem "$rmm/include/rapids" -isystem "$rmm/include" \
    -isystem "$logger/include" -isystem "$cuda/include" -DRESIDENT_HAS_CUDA=1 \
    tests/cuda/rmm_resource.cpp -o build/gpu-rmm/rmm_resource -L"$rmm/lib64" -lrmm \
    -L"$logger/lib64" -lrapids_logger -L"$cuda/lib64" -lcudart \
    -Wl,-rpath,"$rmm/lib64:$logger/lib64" || return 1
  limit 60 build/gpu-rmm/rmm_resource | tee "$out/rmm_resource.txt" || return 1
  say "$(grep '^rmm ' "$out/rmm_resource.txt")"
}

phase_libtorch() {
  step train_libtorch train_libtorch_cuda
  step train_libtorch-torch-memory train_libtorch_torch_memory
  step rmm rmm_resources
}

plot() {
  local python
  if python=$(python_with matplotlib); then
    "$python" scripts/plot_bench.py "$out" --img "$out/img"
  else
    echo "matplotlib is not installed here; plot later with scripts/plot_bench.py $out"
  fi
}

phase_bench() {
  step bench scripts/bench.sh --build-dir "$build" --out "$out" --quick --timeout 75
  step plots plot
}

# compute-sanitizer over the device tests and every CUDA-typed host test (the fault-injecting
# CUDA space included), leaving out:
#  - AllocationBeyondTheDevice...: it asks cudaMalloc for twice the device's memory on purpose,
#    and compute-sanitizer reports that API error. Left out by name rather than with
#    --report-api-errors no, which would hide every other API error, the unintended ones too.
#  - the sweeps, which the plain runs cover: the CUDA instances of the typed tests whose host
#    instance takes over 0.1 s here (streamed batches equal to preloaded ones over 1,728
#    configurations, 4.2 s; the epochs of all ranks, 0.4 s; the ring at the edges of the
#    chunking, 0.14 s), which under a sanitizer's per-call overhead would take minutes.
sanitizer_filter='*Cuda*-*AllocationBeyondTheDevice*'
sanitizer_filter+=':*UnshuffledBatchesEqualTheDeviceDatasetByteForByte*'
sanitizer_filter+=':*ZeroCopyEpochsOfAllRanksCoverTheRowsWithEqualBatches*'
sanitizer_filter+=':*TheRingNeverExceedsTheDataAtTheEdgesOfTheChunking*'
sanitize() {  # sanitize <tool> [options...]
  local tool=$1 status=0
  shift
  limit 30 compute-sanitizer --tool "$tool" --error-exitcode 1 "$@" \
    "$build/tests/resident_cuda_tests" || status=1
  limit 45 compute-sanitizer --tool "$tool" --error-exitcode 1 "$@" \
    "$build/tests/resident_tests" --gtest_filter="$sanitizer_filter" || status=1
  return "$status"
}
# The canary's out-of-bounds write must make memcheck exit with its error code and report it:
# a sanitizer that catches nothing cannot pass the phase.
canary() {
  local status
  limit 30 compute-sanitizer --tool memcheck --error-exitcode 86 \
    "$build/tests/resident_sanitizer_canary" | tee "$out/canary.txt"
  status=${PIPESTATUS[0]}
  if ((status == 86)) && grep -q 'Invalid __global__ write' "$out/canary.txt"; then
    echo "memcheck flagged the canary's out-of-bounds write, as it must"
    return 0
  fi
  echo "memcheck did not flag the canary's out-of-bounds write (exit $status): the sanitizer" \
    "runs would catch nothing"
  return 1
}

phase_sanitize() {
  command -v compute-sanitizer >/dev/null || {
    echo "compute-sanitizer not found on PATH; install the CUDA toolkit's sanitizer" |
      tee "$out/sanitizer.log"
    failures=$((failures + 1))
    return
  }
  step sanitizer-canary canary
  step sanitizer-memcheck sanitize memcheck --leak-check full
  step sanitizer-racecheck sanitize racecheck
  step sanitizer-initcheck sanitize initcheck
  step sanitizer-synccheck sanitize synccheck
}

for phase in "${phases[@]}"; do "phase_$phase"; done
echo "gpu-check: phase(s) ${phases[*]}: $failures step(s) failed; logs in $out"
exit $((failures > 0))
