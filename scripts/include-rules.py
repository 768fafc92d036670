#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 The resident authors
# SPDX-License-Identifier: Apache-2.0
"""Fails when a header other than the file loaders reaches a file format or a loader.

The datasets, their epochs and the streaming core read rows from memory or from plain files
(detail/io/file_io.hpp); parsing `.npy` and `.npz` files (ZIP records, inflate, zlib) is the
loaders' work. Every unit includes the dataset headers, so a format header they reach is parsed
by every unit, and a change to it compiles every unit again. The rule, with its lists below:
no header outside the loaders, the format headers and the umbrella header includes a format
header or a loader, directly or through other headers.

Reads every `#include "resident/..."` and `#include <zlib.h>` of every header under
include/resident (whatever preprocessor branch it sits in, so that the CUDA-only includes count
too), and prints, for each header that breaks the rule, the shortest include chain to what it
must not reach. Exit status 1 when one does (or when a header the lists name does not exist,
which would leave the rule checking nothing), else 0.

Usage: scripts/include-rules.py [--root DIR]   DIR holds resident/ (default: include/ here)
"""
import collections
import sys

import include_graph

# The rule's lists, kept here alone.
# File formats: the ZIP records `.npz` files are made of, raw inflate and zlib, and the rows
# that a loader reads or inflates once from such a file (host_staging.hpp).
FORMATS = [
    "resident/detail/io/zip_format.hpp",
    "resident/detail/io/zip_directory.hpp",
    "resident/detail/io/zip_writer.hpp",
    "resident/detail/io/inflate.hpp",
    "resident/detail/io/host_staging.hpp",
    "<zlib.h>",
]
# The loaders: the public headers that read (and write) files of a format. They may include
# the format headers and each other; nothing but the umbrella header may include them, so that
# a unit that makes datasets from memory parses no file format.
LOADERS = [
    "resident/load_dataset.hpp",
    "resident/load_tokens.hpp",
    "resident/npy.hpp",
    "resident/npz.hpp",
]
# The umbrella header includes every public header, the loaders among them.
UMBRELLA = ["resident/resident.hpp"]

INCLUDE = include_graph.include_root("include-rules.py")


def graph():
    """{header: sorted includes} for every header under resident/, `<zlib.h>` among them."""
    return include_graph.read_includes(INCLUDE, system=["zlib.h"])


def chain_to_forbidden(edges, start, forbidden):
    """The shortest include chain from `start` to a header in `forbidden`, or None."""
    before = {start: None}
    queue = collections.deque([start])
    while queue:
        header = queue.popleft()
        for target in edges.get(header, []):
            if target in before:
                continue
            before[target] = header
            if target in forbidden:
                chain = [target]
                while before[chain[-1]] is not None:
                    chain.append(before[chain[-1]])
                return chain[::-1]
            queue.append(target)
    return None


def main():
    edges = graph()
    listed = [h for h in FORMATS + LOADERS + UMBRELLA if not h.startswith("<")]
    missing = [h for h in listed if h not in edges]
    for header in missing:
        print(f"include-rules: the rule lists {header}, which does not exist; update the lists "
              "in scripts/include-rules.py")
    forbidden = set(FORMATS) | set(LOADERS)
    exempt = forbidden | set(UMBRELLA)
    leaks = []
    for header in sorted(edges):
        if header in exempt:
            continue
        chain = chain_to_forbidden(edges, header, forbidden)
        if chain:
            leaks.append(chain)
    if leaks:
        print("include-rules: only the loaders (" + ", ".join(LOADERS) + "), the format headers "
              "and " + ", ".join(UMBRELLA) + " may reach a file format or a loader; these "
              "headers do:")
    for chain in leaks:
        what = "a file format" if chain[-1] in FORMATS else "a loader"
        print(f"  {chain[0]} reaches {what}: " + " -> ".join(chain))
    if leaks or missing:
        return 1
    print(f"include-rules: no file format or loader outside the loaders among {len(edges)} "
          "headers")
    return 0


if __name__ == "__main__":
    sys.exit(main())
