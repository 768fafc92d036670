#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 The resident authors
# SPDX-License-Identifier: Apache-2.0
"""Fails when the library's headers include each other in a cycle.

Reads every `#include "resident/..."` of every header under include/resident (whatever
preprocessor branch it sits in, so that the CUDA-only includes count too), and prints each
cycle (a strongly connected component of more than one header, or a header that includes
itself) with the includes that close it. Exit status 1 when there is one, else 0.

Usage: scripts/include-cycles.py [--root DIR]   DIR holds resident/ (default: include/ here)
"""
import sys

import include_graph

INCLUDE = include_graph.include_root("include-cycles.py")


def graph():
    edges = include_graph.read_includes(INCLUDE)
    missing = [(h, t) for h, ts in edges.items() for t in ts if t not in edges]
    for header, target in missing:
        print(f"include-cycles: {header} includes {target}, which does not exist")
    return edges, bool(missing)


def components(edges):
    """Tarjan's strongly connected components, iteratively."""
    index, low, on_stack, stack, found, counter = {}, {}, set(), [], [], [0]
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            node, child = work.pop()
            if child == 0:
                index[node] = low[node] = counter[0]
                counter[0] += 1
                stack.append(node)
                on_stack.add(node)
            targets = edges[node]
            if child < len(targets):
                work.append((node, child + 1))
                target = targets[child]
                if target not in index:
                    work.append((target, 0))
                elif target in on_stack:
                    low[node] = min(low[node], index[target])
                continue
            for target in targets:
                if target in on_stack:
                    low[node] = min(low[node], low[target])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                found.append(sorted(component))
    return found


def main():
    edges, missing = graph()
    cycles = [c for c in components(edges) if len(c) > 1 or c[0] in edges[c[0]]]
    for cycle in cycles:
        members = set(cycle)
        print("include-cycles: these headers include each other:")
        for header in cycle:
            for target in edges[header]:
                if target in members:
                    print(f"  {header} -> {target}")
    headers_count = len(edges)
    includes = sum(len(t) for t in edges.values())
    if cycles or missing:
        return 1
    print(f"include-cycles: none among {headers_count} headers ({includes} includes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
