#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 The resident authors
# SPDX-License-Identifier: Apache-2.0
"""Line coverage of the CUDA-specific headers, from a build instrumented with --coverage (the
asan preset) whose tests have run.

  scripts/coverage.py BUILD [--min PERCENT] [--gcov GCOV]

Runs gcov (the build's g++'s: gcov-<major>, else gcov) in JSON mode over every .gcda file under
BUILD and merges each header of HEADERS over all translation units: a line is executable where
any unit compiled it, executed where any unit ran it. Prints, per header, its executable and
executed lines and their share; with --min, exits 1 when a header is below PERCENT, naming the
lines no test ran. Counts add up over test runs; delete BUILD's .gcda files to start afresh.
"""

import argparse
import concurrent.futures
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The headers measured, relative to the repository. detail/cuda/gather.cuh is nvcc's alone (no g++
# unit of the simulated build compiles it): its kernels' logic is gather_kernels.hpp, which the
# simulated runtime's kernel harness runs.
HEADERS = [
    "include/resident/detail/gather/gather_kernels.hpp",
    "include/resident/cuda_space.hpp",
    "include/resident/cuda_host_pinned_space.hpp",
    "include/resident/detail/cuda/*.hpp",
]


def listed_headers():
    found = set()
    for pattern in HEADERS:
        matches = [os.path.relpath(m, ROOT) for m in glob.glob(os.path.join(ROOT, pattern))]
        if not matches:
            sys.exit(f"coverage: {pattern} names no file of the repository; update HEADERS")
        found.update(matches)
    return sorted(found)


def default_gcov(build):
    """gcov-<major> of the build's C++ compiler where it exists (gcov must match the compiler
    that wrote the notes), else gcov."""
    compiler = None
    cache_path = os.path.join(build, "CMakeCache.txt")
    if os.path.exists(cache_path):
        with open(cache_path, encoding="utf-8") as cache:
            for line in cache:
                if line.startswith("CMAKE_CXX_COMPILER:"):
                    compiler = line.split("=", 1)[1].strip()
    if compiler:
        version = subprocess.run([compiler, "-dumpversion"], capture_output=True, text=True)
        major = version.stdout.strip().split(".")[0]
        if version.returncode == 0 and major and shutil.which(f"gcov-{major}"):
            return f"gcov-{major}"
    return "gcov"


def data_pairs(build):
    """(notes, data) file pairs, each .gcda with the .gcno of its object, and the .gcda files
    that match none. A .gcda lies beside its .gcno, or, where the build sets -fprofile-dir, in
    that folder (below the tests' working directory) named by its object's absolute path with
    '#' for '/'; that path may be another clone's, whose objects ccache handed out, so it is
    matched by its part inside the build."""
    build = os.path.abspath(build)
    found = {
        kind: [os.path.relpath(p, build) for p in glob.glob(f"{build}/**/*.{kind}", recursive=True)]
        for kind in ("gcno", "gcda")
    }
    notes = {path[: -len(".gcno")]: os.path.join(build, path) for path in found["gcno"]}
    pairs, unmatched = [], []
    for path in found["gcda"]:
        stem = path[: -len(".gcda")]
        if stem not in notes:
            parts = os.path.basename(stem).split("#")
            stem = next(
                (s for s in ("/".join(parts[i:]) for i in range(len(parts))) if s in notes), None
            )
        if stem is None:
            unmatched.append(path)
        else:
            pairs.append((notes[stem], os.path.join(build, path)))
    return pairs, unmatched


def run_gcov(gcov, pairs, folder):
    """gcov's JSON documents (one per unit) for `pairs`, each given to gcov as a notes file and
    a data file of one name in `folder` (gcov looks for both beside each other)."""
    os.mkdir(folder)
    names = []
    for index, (notes, data) in enumerate(pairs):
        name = os.path.join(folder, str(index))
        os.symlink(notes, name + ".gcno")
        os.symlink(data, name + ".gcda")
        names.append(name + ".gcda")
    done = subprocess.run(
        [gcov, "--json-format", "--stdout", *names], cwd=folder, capture_output=True, text=True
    )
    if done.returncode != 0:
        sys.exit(f"coverage: {gcov} failed:\n{done.stderr}")
    return done.stdout.splitlines()


def header_lines(gcov, pairs, headers):
    """header -> {line: executed by any unit} over every unit that compiled the header."""
    lines = {header: {} for header in headers}
    with tempfile.TemporaryDirectory() as folder:
        halves = [half for half in (pairs[0::2], pairs[1::2]) if half]  # CI has two cores
        with concurrent.futures.ThreadPoolExecutor(len(halves)) as pool:
            outputs = pool.map(
                lambda i: run_gcov(gcov, halves[i], os.path.join(folder, str(i))),
                range(len(halves)),
            )
            for document in (line for output in outputs for line in output):
                unit = json.loads(document)
                for entry in unit["files"]:
                    path = os.path.normpath(
                        os.path.join(unit["current_working_directory"], entry["file"])
                    )
                    header = next((h for h in headers if path == h or path.endswith("/" + h)), None)
                    if header is None:
                        continue
                    seen = lines[header]
                    for line in entry["lines"]:
                        number = line["line_number"]
                        seen[number] = seen.get(number, False) or line["count"] > 0
    return lines


def line_ranges(numbers):
    """'3-5, 9' for [3, 4, 5, 9]."""
    ranges = []
    for number in sorted(numbers):
        if ranges and number == ranges[-1][1] + 1:
            ranges[-1][1] = number
        else:
            ranges.append([number, number])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in ranges)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("build", help="a build folder configured with --coverage, tests run")
    parser.add_argument("--min", type=float, help="fail when a header's share is below this")
    parser.add_argument("--gcov", help="the gcov to run (default: the build's g++'s)")
    args = parser.parse_args()

    headers = listed_headers()
    pairs, unmatched = data_pairs(args.build)
    if not pairs:
        sys.exit(
            f"coverage: no .gcda file under {args.build}: build with --coverage (the asan "
            "preset does) and run its tests first"
        )
    if unmatched:
        print(f"coverage: {len(unmatched)} .gcda file(s) match no .gcno of {args.build} and are "
              f"left out, such as {unmatched[0]}", file=sys.stderr)
    gcov = args.gcov or default_gcov(args.build)
    lines = header_lines(gcov, pairs, headers)

    print(f"coverage: lines of the CUDA-specific headers the tests executed "
          f"({len(pairs)} .gcda files of {args.build}, {gcov})")
    print(f"  {'header':<52} {'lines':>6} {'executed':>9} {'%':>6}")
    below = []
    for header in headers:
        seen = lines[header]
        executed = sum(seen.values())
        share = 100.0 * executed / len(seen) if seen else 0.0
        shown = f"{share:6.1f}" if seen else "     -"
        print(f"  {header:<52} {len(seen):>6} {executed:>9} {shown}")
        if args.min is not None and (not seen or share < args.min):
            below.append((header, seen, share))
    for header, seen, share in below:
        if not seen:
            print(f"coverage: {header}: no instrumented unit compiled it", file=sys.stderr)
        else:
            missed = line_ranges(n for n, ran in seen.items() if not ran)
            print(f"coverage: {header}: {share:.1f} % of its lines executed, below "
                  f"{args.min:g} %; lines no test ran: {missed}", file=sys.stderr)
    return 1 if below else 0


if __name__ == "__main__":
    sys.exit(main())
