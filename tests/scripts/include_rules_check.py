#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 The resident authors
# SPDX-License-Identifier: Apache-2.0
"""scripts/include-rules.py against the library's headers, which pass, and against copies of
them with one leak each, which fail, naming the include chain: the streaming core including
the rows loaders read once (a leak two headers below the dataset that reaches it), a dataset
header including a format header, `<zlib.h>` or a loader, and a format header the rule lists
renamed away.
Usage: include_rules_check.py CHECK_SCRIPT INCLUDE_DIR"""
import os
import shutil
import subprocess
import sys
import tempfile

SCRIPT, INCLUDE = sys.argv[1], sys.argv[2]
failures = []
cases = 0


def run(root):
    done = subprocess.run([sys.executable, SCRIPT, "--root", root], capture_output=True,
                          text=True, check=False)
    return done.returncode, done.stdout + done.stderr


def expect(name, returned, output, code, parts):
    global cases
    cases += 1
    if returned != code:
        failures.append(f"{name}: exit {returned}, expected {code}:\n{output}")
    for part in parts:
        if part not in output:
            failures.append(f"{name}: '{part}' not in:\n{output}")


def leak(name, header, include, *parts, remove=None):
    """Runs the check on a copy of the headers where `header` (below resident/) also includes
    `include` (a full directive) and `remove` (below resident/), if given, is gone."""
    with tempfile.TemporaryDirectory() as root:
        shutil.copytree(os.path.join(INCLUDE, "resident"), os.path.join(root, "resident"))
        if header:
            path = os.path.join(root, "resident", header)
            with open(path, encoding="utf-8") as f:
                text = f.read()
            # Below `#pragma once`, where an include of the header's own would be.
            with open(path, "w", encoding="utf-8") as f:
                f.write(text.replace("#pragma once\n", f"#pragma once\n{include}\n", 1))
        if remove:
            os.remove(os.path.join(root, "resident", remove))
        expect(name, *run(root), 1, parts)


returned, output = run(INCLUDE)
expect("the library's headers", returned, output, 0, ["no file format or loader outside"])
leak("the streaming core", "detail/stream/chunk_streamer.hpp",
     '#include "resident/detail/io/host_staging.hpp"',
     "resident/streaming_dataset.hpp reaches a file format: resident/streaming_dataset.hpp -> "
     "resident/detail/stream/chunk_streamer.hpp -> resident/detail/io/host_staging.hpp",
     "resident/dataset.hpp reaches a file format: resident/dataset.hpp -> "
     "resident/streaming_dataset.hpp -> resident/detail/stream/chunk_streamer.hpp -> "
     "resident/detail/io/host_staging.hpp")
leak("a format header", "epoch.hpp", '#include "resident/detail/io/inflate.hpp"',
     "resident/epoch.hpp reaches a file format: resident/epoch.hpp -> "
     "resident/detail/io/inflate.hpp")
leak("zlib", "detail/dataset/row_order.hpp", "#include <zlib.h>",
     "resident/detail/dataset/row_order.hpp reaches a file format: "
     "resident/detail/dataset/row_order.hpp -> <zlib.h>",
     "resident/device_dataset.hpp reaches a file format: resident/device_dataset.hpp -> ")
leak("a loader", "token_dataset.hpp", '#include "resident/npy.hpp"',
     "resident/token_dataset.hpp reaches a loader: resident/token_dataset.hpp -> "
     "resident/npy.hpp")
leak("a listed header renamed", None, None,
     "the rule lists resident/detail/io/zip_format.hpp, which does not exist",
     remove="detail/io/zip_format.hpp")

for failure in failures:
    print("include_rules_check: FAILED:", failure)
print("include_rules_check: " +
      (f"{len(failures)} failure(s)" if failures else f"all {cases} cases as expected"))
sys.exit(1 if failures else 0)
