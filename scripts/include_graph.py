# SPDX-FileCopyrightText: 2026 The resident authors
# SPDX-License-Identifier: Apache-2.0
"""The include graph of the library's headers, read once for the include checks.

`include_root(script)` is the folder that holds resident/: include/ here, or DIR from the
script's `--root DIR`. `read_includes(root, system)` is {header: sorted includes} for every
header under root/resident, by path below root: every `#include "resident/..."` whatever
preprocessor branch it sits in (so that the CUDA-only includes count too), and the system
headers named in `system` as written (`<zlib.h>`).
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def include_root(script):
    if len(sys.argv) == 3 and sys.argv[1] == "--root":
        return sys.argv[2]
    if len(sys.argv) != 1:
        sys.exit(f"usage: scripts/{script} [--root DIR]")
    return os.path.join(ROOT, "include")


def read_includes(root, system=()):
    names = "|".join(re.escape(name) for name in system)
    directive = re.compile(r'^\s*#\s*include\s+(?:"(resident/[^"]+)"' +
                           (rf"|(<(?:{names})>)" if names else "") + ")", re.M)
    edges = {}
    for folder, _, files in os.walk(os.path.join(root, "resident")):
        for name in files:
            if name.endswith((".hpp", ".cuh")):
                path = os.path.join(folder, name)
                with open(path, encoding="utf-8") as f:
                    found = directive.finditer(f.read())
                edges[os.path.relpath(path, root)] = sorted(
                    {next(group for group in match.groups() if group) for match in found})
    return edges
