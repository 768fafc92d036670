#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The resident authors
# SPDX-License-Identifier: Apache-2.0
# Static analysis, as CI runs it; any finding fails.
#   cppcheck over include/, once with the CUDA parts and once without (seconds);
#   clang-tidy (checks in .clang-tidy) over every test translation unit, which instantiates the
#     library's templates, reporting findings in include/resident/ and in the tests themselves.
#     Two passes, because the CUDA headers cost clang-tidy in every unit that includes them
#     (CCCL's mdspan alone ~4 s; every check walks them although their findings are
#     suppressed): every unit in a host build (RESIDENT_HAS_CUDA=0), then, where the CUDA
#     toolkit is, the units that name a CUDA space and the simulated runtime in a build against
#     that runtime (RESIDENT_SIMULATED_CUDA: the CUDA-only code, without CCCL).
# Usage: scripts/static-analysis.sh [cppcheck|tidy|all]   (default all)
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-all}
jobs=$(nproc)

run_cppcheck() {
  # unusedStructMember is off: the public option structs' members are read by the callers,
  # whom cppcheck does not see from the headers alone. duplInheritedMember is off: a space's
  # `space_traits` specialisation derives from `default_space_traits` to override some of its
  # members by name, which is the design. The two configurations run side by side.
  local headers pids=() status=0
  mapfile -t headers < <(git ls-files 'include/*.hpp')
  for cuda in 0 1; do
    cppcheck --enable=warning,style,performance,portability --std=c++17 --language=c++ \
      --platform=unix64 -D__linux__ -D__unix__ -D__GNUC__ -DRESIDENT_HAS_CUDA=$cuda \
      --suppress=unusedStructMember --suppress=duplInheritedMember --inline-suppr \
      --error-exitcode=1 --quiet -I include "${headers[@]}" &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid" || status=1; done
  if ((status)); then
    echo "static-analysis: cppcheck found the problems above" >&2
    exit 1
  fi
  echo "static-analysis: cppcheck clean over ${#headers[@]} headers (with and without CUDA)"
}

# tidy_units BUILD LOG UNIT...: clang-tidy over the units, $jobs at a time. The compile
# database has no -std flag (g++ defaults to C++17; clang-tidy's clang to C++14), so the
# library's standard is passed explicitly.
tidy_units() {
  local build=$1 log=$2
  shift 2
  if ! printf '%s\n' "$@" |
    xargs -P "$jobs" -n 1 clang-tidy -p "$build" --quiet --extra-arg=-std=c++17 >"$log" 2>&1; then
    grep -E 'warning:|error:' "$log" >&2 || cat "$log" >&2
    echo "static-analysis: clang-tidy found the problems above (full log: $log)" >&2
    exit 1
  fi
}

run_tidy() {
  local start units cuda_units host=build/tidy-host cuda=build/tidy-simulated
  start=$(date +%s)
  # The host build's compile database: configured, never built; with libtorch's tests where
  # libtorch is found (as .ci/run installs it).
  cmake -S . -B "$host" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_EXPORT_COMPILE_COMMANDS=ON \
    -DRESIDENT_ENABLE_CUDA=OFF -DRESIDENT_BUILD_EXAMPLES=OFF -DRESIDENT_BUILD_BENCHMARKS=OFF \
    -DRESIDENT_WITH_TORCH=ON \
    >"$host.configure.log" 2>&1 || { cat "$host.configure.log" >&2; exit 1; }
  # tests/torch/refuses.cpp must not compile (their test looks for the compiler's refusal).
  mapfile -t units < <(git ls-files 'tests/*.cpp' |
    grep -v -e '^tests/fuzz/' -e '^tests/consumer/' -e '^tests/simcuda/' -e '^tests/torch/refuses')
  # The DLPack probe module is built only where Python's headers are (its tests skip elsewhere).
  if ! grep -q 'tests/dlpack_numpy/probe.cpp' "$host/compile_commands.json"; then
    mapfile -t units < <(printf '%s\n' "${units[@]}" | grep -v '^tests/dlpack_numpy/')
  fi
  # libtorch's tests are built only with RESIDENT_WITH_TORCH, which needs libtorch (the ci
  # preset compiles them, warning-free, with -Werror).
  if ! grep -q 'tests/torch/test_torch.cpp' "$host/compile_commands.json"; then
    mapfile -t units < <(printf '%s\n' "${units[@]}" | grep -v '^tests/torch/')
  fi
  tidy_units "$host" "$host/clang-tidy.log" "${units[@]}"
  echo "static-analysis: clang-tidy clean over ${#units[@]} units of the host build" \
    "in $(($(date +%s) - start)) s"

  start=$(date +%s)
  if ! command -v nvcc >/dev/null && [[ ! -x /usr/local/cuda/bin/nvcc ]]; then
    echo "static-analysis: no nvcc here; the CUDA pass of clang-tidy did not run"
    return
  fi
  cmake -S . -B "$cuda" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_EXPORT_COMPILE_COMMANDS=ON \
    -DRESIDENT_ENABLE_CUDA=OFF -DRESIDENT_SIMULATED_CUDA=ON -DRESIDENT_BUILD_EXAMPLES=OFF \
    -DRESIDENT_BUILD_BENCHMARKS=OFF >"$cuda.configure.log" 2>&1 ||
    { cat "$cuda.configure.log" >&2; exit 1; }
  # libtorch's tests: the host pass has them (this build has no libtorch). The size sweep and
  # the moved-from cases name the CUDA spaces only as type parameters of cases the host pass
  # analyses already, and reach no CUDA code the other units do not; CCCL's headers would cost
  # them some 45 s each here.
  mapfile -t cuda_units < <(git grep -l -E 'Cuda(HostPinned)?Space' -- 'tests/*.cpp' |
    grep -v -e '^tests/fuzz/' -e '^tests/consumer/' -e '^tests/torch/' \
      -e '^tests/adversarial/test_size_sweep.cpp' -e '^tests/adversarial/test_moved_from.cpp')
  cuda_units+=(tests/simcuda/simcuda.cpp)
  tidy_units "$cuda" "$cuda/clang-tidy.log" "${cuda_units[@]}"
  echo "static-analysis: clang-tidy clean over the ${#cuda_units[@]} units that name a CUDA" \
    "space or simulate its runtime, in $(($(date +%s) - start)) s"
}

case $what in
  cppcheck) run_cppcheck ;;
  tidy) run_tidy ;;
  all) run_cppcheck && run_tidy ;;
  *)
    echo "usage: scripts/static-analysis.sh [cppcheck|tidy|all]" >&2
    exit 2
    ;;
esac
