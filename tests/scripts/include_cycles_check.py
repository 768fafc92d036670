#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 The resident authors
# SPDX-License-Identifier: Apache-2.0
"""scripts/include-cycles.py against header trees written here: a tree without a cycle
passes; a cycle of two headers, a longer one, a header that includes itself and an include of
a header that does not exist fail, naming the headers; and the library's own headers pass.
Usage: include_cycles_check.py CHECK_SCRIPT"""
import os
import subprocess
import sys
import tempfile

SCRIPT = sys.argv[1]
failures = []


def run(tree):
    """Writes `tree` ({path below resident/: [included paths]}) and runs the check on it."""
    with tempfile.TemporaryDirectory() as root:
        for header, includes in tree.items():
            path = os.path.join(root, "resident", header)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write("#pragma once\n#include <vector>\n")
                for target in includes:
                    f.write(f'#if SOME_CONDITION\n#include "resident/{target}"\n#endif\n')
        done = subprocess.run([sys.executable, SCRIPT, "--root", root], capture_output=True,
                              text=True, check=False)
        return done.returncode, done.stdout + done.stderr


def expect(name, tree, code, *parts):
    returned, output = run(tree)
    if returned != code:
        failures.append(f"{name}: exit {returned}, expected {code}:\n{output}")
    for part in parts:
        if part not in output:
            failures.append(f"{name}: '{part}' not in:\n{output}")


expect("no cycle", {"a.hpp": ["detail/b.hpp"], "detail/b.hpp": ["c.hpp"], "c.hpp": []}, 0,
       "none among 3 headers (2 includes)")
expect("two headers", {"a.hpp": ["detail/b.hpp"], "detail/b.hpp": ["a.hpp"], "c.hpp": []}, 1,
       "resident/a.hpp -> resident/detail/b.hpp", "resident/detail/b.hpp -> resident/a.hpp")
expect("three headers", {"a.hpp": ["b.hpp"], "b.hpp": ["c.hpp"], "c.hpp": ["a.hpp"]}, 1,
       "resident/c.hpp -> resident/a.hpp")
expect("itself", {"a.hpp": ["a.hpp"], "b.hpp": ["a.hpp"]}, 1, "resident/a.hpp -> resident/a.hpp")
expect("missing", {"a.hpp": ["gone.hpp"]}, 1, "includes resident/gone.hpp, which does not exist")
real = subprocess.run([sys.executable, SCRIPT], capture_output=True, text=True, check=False)
if real.returncode != 0 or "none among" not in real.stdout:
    failures.append(f"the library's headers: exit {real.returncode}:\n{real.stdout}")

for failure in failures:
    print("include_cycles_check: FAILED:", failure)
print("include_cycles_check: " +
      (f"{len(failures)} failure(s)" if failures else "all 6 cases as expected"))
sys.exit(1 if failures else 0)
