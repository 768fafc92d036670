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
#     that runtime (RESIDENT_SIMULATED_CUDA: the CUDA-only code, without CCCL). A unit found
#     clean is not analysed again until its key changes (the cache below, outside the clone).
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

# The clang-tidy result cache, as ccache is for compiles: a unit whose key is in the cache was
# found clean before and is not analysed again. Its key is a SHA-256 over clang-tidy (its
# version, the bytes of its executable and LLVM libraries, its arguments), clang++'s version,
# the unit's compile commands, the unit as clang++ of clang-tidy's version preprocesses it
# with those commands (the predefined macros, include paths and __has_include answers that
# clang-tidy's parser sees; some 0.4 s a unit against clang-tidy's 13 s), the bytes of every
# file that preprocessing read (comments, so NOLINT, included), which of those
# HeaderFilterRegex admits, and every .clang-tidy that applies. The clone's path is replaced
# by a placeholder, so every clean clone on a machine shares the cache. Only a clean result is
# kept (exit 0, no diagnostic), as an empty file named by the key, and only if no file the key
# read changed while clang-tidy ran; a finding is never kept, so it is reported every run. A
# unit that cannot be keyed (its preprocessing fails) is analysed. Entries unused for 30 days
# are removed. RESIDENT_TIDY_CACHE names the folder.
tidy_cache=${RESIDENT_TIDY_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/resident-clang-tidy}
# clang-tidy's arguments besides -p and the unit. The compile database has no -std flag (g++
# defaults to C++17; clang-tidy's clang to C++14), so the library's standard is passed.
tidy_args='--quiet --extra-arg=-std=c++17'
tidy_key_py=$(
  cat <<'PY'
"""key BUILD UNIT STATS: prints the unit's clang-tidy cache key (exits 1 if it has none) and
writes to STATS the size and time of change of every file the key read; check STATS: exits 0
if none of them changed since."""
import hashlib, json, os, re, shlex, subprocess, sys


def stat(name):
    info = os.stat(name)
    return [info.st_size, info.st_mtime_ns, info.st_ctime_ns]


if sys.argv[1] == "check":
    with open(sys.argv[2]) as f:
        sys.exit(any(stat(name) != was for name, was in json.load(f)))
build, unit, stats_file = sys.argv[2:5]
root = os.getcwd()
stats = [[os.path.join(build, "compile_commands.json"), None]]
stats[0][1] = stat(stats[0][0])
args = os.environ["TIDY_ARGS"].split()
before = [a.split("=", 1)[1] for a in args if a.startswith("--extra-arg-before=")]
after = [a.split("=", 1)[1] for a in args if a.startswith("--extra-arg=")]
source = os.path.abspath(unit)
entries = [e for e in json.load(open(os.path.join(build, "compile_commands.json")))
           if os.path.abspath(os.path.join(e["directory"], e["file"])) == source]
if not entries:
    sys.exit(1)
placeholder = b"\0root\0"
root_bytes = os.fsencode(root)


def relative(data):
    return data.replace(root_bytes, placeholder)


key = hashlib.sha256(os.environb[b"TIDY_KEY_BASE"])
files = set()
for entry in sorted(entries, key=lambda e: json.dumps(e, sort_keys=True)):
    argv = entry["arguments"] if "arguments" in entry else shlex.split(entry["command"])
    key.update(relative(os.fsencode(json.dumps([entry["directory"], argv]))) + b"\n")
    # clang-tidy parses the command as the clang driver does, without -c and -o.
    flags, i = [], 1
    while i < len(argv):
        if argv[i] == "-o":
            i += 2
            continue
        if argv[i] != "-c" and not argv[i].startswith("-o"):
            flags.append(argv[i])
        i += 1
    text = subprocess.run([os.environ["TIDY_CLANGXX"], *before, *flags, *after, "-E"],
                          cwd=entry["directory"], stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL, check=True).stdout
    key.update(hashlib.sha256(relative(text)).digest())
    for marker in re.finditer(rb'^# [0-9]+ "((?:[^"\\]|\\.)*)"', text, re.M):
        name = re.sub(rb"\\(.)", rb"\1", marker.group(1))
        if not name.startswith(b"<"):
            files.add(os.path.join(os.fsencode(entry["directory"]), name))

# Every .clang-tidy that applies: the nearest to the unit and to each file below the root,
# and its parents' while it says InheritParentConfig.
configs, filters = {}, []
for directory in {os.path.dirname(source)} | {
        os.path.dirname(os.fsdecode(f)) for f in files if f.startswith(root_bytes + b"/")}:
    while True:
        config = os.path.join(directory, ".clang-tidy")
        if os.path.isfile(config):
            stats.append([config, stat(config)])
            with open(config, "rb") as f:
                configs[config] = f.read()
            if not re.search(rb"^InheritParentConfig:\s*true", configs[config], re.M):
                break
        if directory == "/":
            break
        directory = os.path.dirname(directory)
for config, data in sorted(configs.items()):
    key.update(relative(os.fsencode(config)) + b"\0" + hashlib.sha256(data).digest())
    match = re.search(rb"^HeaderFilterRegex:\s*(.*?)\s*$", data, re.M)
    if match:
        value = match.group(1)
        if value[:1] == b"'" and value[-1:] == b"'":
            value = value[1:-1].replace(b"''", b"'")
        elif value[:1] == b'"' or b"#" in value:
            key.update(root_bytes)  # not read here: the clone's path stays in the key
            continue
        filters.append(re.compile(value))
# Each file's bytes, and whether a header filter admits its path (which the placeholder hides).
for name in sorted(files):
    stats.append([os.fsdecode(name), stat(name)])
    with open(name, "rb") as f:
        digest = hashlib.sha256(f.read()).digest()
    admitted = any(filter.search(name) for filter in filters)
    key.update(relative(name) + b"\0" + digest + (b"1" if admitted else b"0"))
with open(stats_file, "w") as f:
    json.dump(stats, f)
print(key.hexdigest())
PY
)

# tidy_unit UNIT: clang-tidy over one unit of $TIDY_BUILD, unless the cache has its key; its
# output goes to $TIDY_OUT/UNIT.log, and one line to stdout: "cached UNIT" or "analysed UNIT"
# (after "unkeyed UNIT" if it could not be keyed).
tidy_unit() {
  local unit=$1 out stats key=""
  out=$TIDY_OUT/${unit//\//%}.log
  stats=$TIDY_OUT/${unit//\//%}.stats
  if [[ -n $TIDY_CACHE ]]; then
    key=$(python3 -c "$TIDY_KEY_PY" key "$TIDY_BUILD" "$unit" "$stats" 2>/dev/null) || key=""
    if [[ -z $key ]]; then
      echo "static-analysis: $unit could not be preprocessed for its cache key" >"$out"
      echo "unkeyed $unit"
    elif [[ -e $TIDY_CACHE/$key ]]; then
      touch "$TIDY_CACHE/$key"
      echo "cached $unit"
      return 0
    fi
  fi
  echo "analysed $unit"
  # shellcheck disable=SC2086 # TIDY_ARGS: words without spaces
  clang-tidy -p "$TIDY_BUILD" $TIDY_ARGS "$unit" >>"$out" 2>&1 || return 1
  # Kept if clean (exit 0, and nothing printed but the count of the warnings that were not
  # reported: those in system headers and in headers HeaderFilterRegex leaves out) and no file
  # the key read changed while clang-tidy ran.
  if [[ -n $key ]] && ! grep -q -v -E '^[0-9]+ warnings? generated\.$' "$out" &&
    python3 -c "$TIDY_KEY_PY" check "$stats" 2>/dev/null; then
    : >"$TIDY_CACHE/$key"
  fi
}

# tidy_cache_setup: exports what tidy_unit needs; TIDY_CACHE empty if no cache can be used
# (no clang++ of clang-tidy's version, no python3, or a cache folder that cannot be written).
tidy_cache_setup() {
  local version cxx tidy libraries
  export TIDY_ARGS=$tidy_args TIDY_KEY_PY=$tidy_key_py TIDY_CACHE="" TIDY_CLANGXX=""
  version=$(clang-tidy --version | grep -o -E -m 1 'version [0-9.]+' | head -n 1)
  for cxx in "clang++-$(grep -o -E '[0-9]+' <<<"$version" | head -n 1)" clang++; do
    if command -v "$cxx" >/dev/null &&
      [[ $("$cxx" --version | grep -o -E -m 1 'version [0-9.]+' | head -n 1) == "$version" ]]; then
      TIDY_CLANGXX=$cxx
      break
    fi
  done
  if [[ -z $TIDY_CLANGXX ]] || ! command -v python3 >/dev/null ||
    ! mkdir -p "$tidy_cache" 2>/dev/null || [[ ! -w $tidy_cache ]]; then
    echo "static-analysis: no clang-tidy cache here (it needs python3, a writable" \
      "$tidy_cache and clang++ of clang-tidy's $version): every unit is analysed"
    return
  fi
  TIDY_CACHE=$tidy_cache
  find "$TIDY_CACHE" -type f -mtime +30 -delete 2>/dev/null || true
  # The executable and its LLVM libraries by their bytes too: a rebuild (a distribution's
  # patch) can change the checks and keep the version.
  tidy=$(readlink -f "$(command -v clang-tidy)")
  mapfile -t libraries < <(ldd "$tidy" 2>/dev/null |
    grep -o -E '/[^ ]*lib(clang|LLVM)[^ ]*' || true)
  TIDY_KEY_BASE=$(printf '%s\n' "resident clang-tidy cache 1" "$(clang-tidy --version)" \
    "$("$TIDY_CLANGXX" --version)" "$TIDY_ARGS" "$(sha256sum "$tidy" "${libraries[@]}")")
  export TIDY_KEY_BASE
}

# tidy_units BUILD LOG UNIT...: clang-tidy over the units, $jobs at a time (through the
# cache), each unit's output written to LOG in the units' order; sets tidy_counts. A unit that
# no target of BUILD compiles (a unit of the nvcc builds only) is named and left out: without
# its compile command clang-tidy would parse it without include paths and fail.
tidy_units() {
  local build=$1 log=$2 status=0 analysed cached unkeyed unit built=() unbuilt=() here
  shift 2
  here=$(pwd -P)
  for unit in "$@"; do
    if grep -q -F -e "\"$here/$unit\"" -e "\"$PWD/$unit\"" "$build/compile_commands.json"; then
      built+=("$unit")
    else
      unbuilt+=("$unit")
    fi
  done
  if ((${#unbuilt[@]})); then
    echo "static-analysis: not analysed, as no target of $build compiles them: ${unbuilt[*]}"
  fi
  if ((${#built[@]} == 0)); then
    echo "static-analysis: $build/compile_commands.json compiles none of the units" >&2
    exit 1
  fi
  set -- "${built[@]}"
  export TIDY_BUILD=$build TIDY_OUT=$build/clang-tidy.units
  rm -rf "$TIDY_OUT"
  mkdir -p "$TIDY_OUT"
  # shellcheck disable=SC2016 # $1 is the unit, in the shell that xargs starts
  printf '%s\n' "$@" | xargs -P "$jobs" -n 1 bash -c 'tidy_unit "$1"' tidy_unit \
    >"$TIDY_OUT/status" || status=1
  for unit in "$@"; do cat "$TIDY_OUT/${unit//\//%}.log" 2>/dev/null || true; done >"$log"
  analysed=$(grep -c '^analysed ' "$TIDY_OUT/status" || true)
  cached=$(grep -c '^cached ' "$TIDY_OUT/status" || true)
  unkeyed=$(grep -c '^unkeyed ' "$TIDY_OUT/status" || true)
  tidy_counts="$analysed analysed, $cached clean in the cache"
  tidy_total=$#
  if ((unkeyed)); then tidy_counts+=", $unkeyed not keyed (preprocessing failed)"; fi
  if ((status)); then
    grep -E 'warning:|error:' "$log" >&2 || cat "$log" >&2
    echo "static-analysis: clang-tidy found the problems above ($tidy_counts; full log: $log)" >&2
    exit 1
  fi
}
export -f tidy_unit

run_tidy() {
  local start units cuda_units host=build/tidy-host cuda=build/tidy-simulated tidy_counts tidy_total
  start=$(date +%s)
  mkdir -p build
  tidy_cache_setup
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
  echo "static-analysis: clang-tidy clean over $tidy_total units of the host build" \
    "($tidy_counts) in $(($(date +%s) - start)) s"

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
  echo "static-analysis: clang-tidy clean over the $tidy_total units that name a CUDA" \
    "space or simulate its runtime ($tidy_counts), in $(($(date +%s) - start)) s"
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
