#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 The resident authors
# SPDX-License-Identifier: Apache-2.0
"""Checks that the nvcc object and the g++ object of the mixed program name one class alike.

Reads the symbols each object defines (`nm -C --defined-only`) and collects the resident
classes they are members of (`resident::DeviceDataset<...>`, `resident::Epoch<...>`). Fails when
either object has none of the classes named on the command line, or when a class of the nvcc
object is missing from the g++ object (the g++ unit uses every class the nvcc unit does): two
units that see two definitions of one class (as a template argument that the compiler chooses
would make) name it differently, and the sets part.

Usage: one_definition.py NVCC_OBJECT GXX_OBJECT CLASS_PREFIX...
"""

import subprocess
import sys


def owner_classes(obj, prefixes):
    """The classes, named by a prefix in `prefixes`, that `obj` defines members of."""
    names = subprocess.run(["nm", "-C", "--defined-only", obj], check=True, text=True,
                           capture_output=True).stdout
    classes = set()
    for line in names.splitlines():
        symbol = line.split(" ", 2)[-1]
        for prefix in prefixes:
            at = symbol.find(prefix + "<")
            while at != -1:
                depth, end = 0, at + len(prefix)
                for end in range(at + len(prefix), len(symbol)):
                    depth += {"<": 1, ">": -1}.get(symbol[end], 0)
                    if depth == 0:
                        break
                if symbol.startswith("::", end + 1):  # a member of the class, not an argument
                    classes.add(symbol[at:end + 1])
                at = symbol.find(prefix + "<", end)
    return classes


def main():
    nvcc_object, gxx_object, *prefixes = sys.argv[1:]
    nvcc = owner_classes(nvcc_object, prefixes)
    gxx = owner_classes(gxx_object, prefixes)
    for name, found in (("nvcc", nvcc), ("g++", gxx)):
        print(f"one_definition: the {name} object defines members of {len(found)} classes:")
        for cls in sorted(found):
            print(f"  {cls}")
    missing = {p for p in prefixes if not any(c.startswith(p + "<") for c in nvcc)}
    missing |= {p for p in prefixes if not any(c.startswith(p + "<") for c in gxx)}
    if missing:
        print(f"one_definition: FAILED: no member of {sorted(missing)} in one of the objects")
        return 1
    apart = nvcc - gxx
    if apart:
        print("one_definition: FAILED: the nvcc object names classes the g++ object does not:")
        for cls in sorted(apart):
            print(f"  {cls}")
        return 1
    print(f"one_definition: every class of the nvcc object is the g++ object's ({len(nvcc)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
