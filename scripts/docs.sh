#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The resident authors
# SPDX-License-Identifier: Apache-2.0
# Documentation checks, as CI runs them; any finding fails.
#   1. Links: every relative link (inline or a reference's definition) in every Markdown page
#      of the project points at a file that exists, and every #anchor at a heading of that
#      file (GitHub's heading ids).
#   2. Headers: docs/design.md's tables of headers name exactly the files in include/resident/
#      and, by their path below it, in include/resident/detail/ and its folders.
#   3. README.md's example: the code under "## Example" is examples/readme_example.cpp.
#   4. API reference: Doxygen (docs/Doxyfile) over the public headers, into build/docs/html/;
#      every warning (an undocumented public name, a documentation error) is printed and fails
#      the run. The warnings are also kept in build/docs/doxygen-warnings.txt.
# Usage: scripts/docs.sh
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
failures=0

# 1 to 3: plain Python 3, no packages needed.
if ! python3 - <<'PY'; then failures=$((failures + 1)); fi
import os
import re
import subprocess
import sys

FENCE = re.compile(r"^\s*(```|~~~)")
LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
CODE_SPAN = re.compile(r"`+[^`]*`+")
# A reference-style link's definition: [label]: target "title"
REFERENCE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?([^>\s]+)>?")


def prose_lines(path):
    """(line number, text) of the lines outside fenced code blocks."""
    fenced = False
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if FENCE.match(line):
                fenced = not fenced
                continue
            if not fenced:
                yield number, line


def slug(heading):
    """GitHub's id for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"<[^>]+>", "", heading).strip().lower()
    text = "".join(c for c in text if c.isalnum() or c in " -_")
    return text.replace(" ", "-")


anchors_cache = {}


def anchors(path):
    if path not in anchors_cache:
        seen, ids = {}, set()
        for _, line in prose_lines(path):
            match = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
            if match:
                base = slug(match.group(1))
                count = seen.get(base, 0)
                seen[base] = count + 1
                ids.add(base if count == 0 else f"{base}-{count}")
        anchors_cache[path] = ids
    return anchors_cache[path]


# Every Markdown page of the project (tracked or new), wherever it lies.
listed = subprocess.run(["git", "-c", "core.quotePath=false", "ls-files", "--cached", "--others",
                         "--exclude-standard", "*.md"], capture_output=True, text=True,
                        check=True).stdout.split("\n")
pages = sorted({page for page in listed if page and os.path.isfile(page)})
problems, links = [], 0
for page in pages:
    for number, line in prose_lines(page):
        prose = CODE_SPAN.sub("", line)
        for target in LINK.findall(prose) + REFERENCE.findall(prose):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):  # https:, mailto: ...
                continue
            links += 1
            path, _, anchor = target.partition("#")
            resolved = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path \
                else page
            where = f"{page}:{number}: [{target}]"
            if not os.path.exists(resolved):
                problems.append(f"{where}: {resolved} does not exist")
            elif anchor and resolved.endswith(".md") and anchor not in anchors(resolved):
                problems.append(f"{where}: {resolved} has no heading with id #{anchor}")
print(f"docs: {links} relative links in {len(pages)} pages checked")

# docs/design.md's tables of headers, against the files: the public headers by name, the
# internals by their path below detail/ (a section may hold a table per folder, under ####).
design = open("docs/design.md", encoding="utf-8").read()
for heading, folder, recursive in (("### Public headers", "include/resident", False),
                                   ("### Internals", "include/resident/detail", True)):
    start = design.find(heading)
    if start < 0:
        problems.append(f"docs/design.md: no section '{heading}' with the table of {folder}/")
        continue
    body = design[start + len(heading):]
    end = re.search(r"^#{1,3} ", body, re.M)
    section = body[:end.start()] if end else body
    listed = set(re.findall(r"^\|\s*`([^`]+\.(?:hpp|cuh|h))`\s*\|", section, re.M))
    present = set()
    for root, _, names in os.walk(folder):
        for name in names:
            if name.endswith((".hpp", ".cuh", ".h")):
                present.add(os.path.relpath(os.path.join(root, name), folder))
        if not recursive:
            break
    for name in sorted(present - listed):
        problems.append(f"docs/design.md: {folder}/{name} has no row in '{heading}'")
    for name in sorted(listed - present):
        problems.append(f"docs/design.md: '{heading}' lists {name}, which {folder}/ lacks")
print("docs: docs/design.md's header tables checked against include/resident/")

# README.md's example is examples/readme_example.cpp (built and run by the tests), after the
# file's two license lines.
readme = open("README.md", encoding="utf-8").read()
example = readme.split("## Example", 1)[-1].split("```cpp\n", 1)[-1].split("```", 1)[0]
source = open("examples/readme_example.cpp", encoding="utf-8").read().split("\n", 2)[2]
if example != source:
    problems.append("README.md: the code under '## Example' is not examples/readme_example.cpp "
                    "(after its license lines): change both")
print("docs: README.md's example checked against examples/readme_example.cpp")

# README.md's libtorch loop is an excerpt of examples/train_libtorch.cpp (built and run by the
# tests): its lines appear there in the same order, the example's own lines between them.
loop = readme.split("## libtorch", 1)[-1].split("```cpp\n", 1)[-1].split("```", 1)[0]
remaining = iter(line.strip() for line in
                 open("examples/train_libtorch.cpp", encoding="utf-8").read().splitlines())
missing = [line for line in (l.strip() for l in loop.splitlines())
           if line and not any(line == other for other in remaining)]
if missing:
    problems.append("README.md: the loop under '## libtorch' is not an excerpt of "
                    "examples/train_libtorch.cpp; first line not found in order: " + missing[0])
print("docs: README.md's libtorch loop checked against examples/train_libtorch.cpp")

for problem in problems:
    print(problem, file=sys.stderr)
if problems:
    print(f"docs: {len(problems)} problem(s) in the pages (above)", file=sys.stderr)
    sys.exit(1)
PY

# 3: Doxygen. WARN_AS_ERROR=FAIL_ON_WARNINGS makes it exit non-zero after a warning, and
# reports each warning as "error:"; an empty log is the only clean run.
if ! command -v doxygen >/dev/null; then
  echo "docs: doxygen not found (Debian: apt-get install doxygen)" >&2
  exit 1
fi
mkdir -p build/docs
log=build/docs/doxygen-warnings.txt
doxygen docs/Doxyfile 2>"$log"
status=$?
if ((status != 0)) || [[ -s $log ]]; then
  cat "$log" >&2
  count=$(grep -cE '^[^ ].*: (warning|error): ' "$log")
  echo "docs: doxygen exited $status with $count warning(s) (above; also in $log)" >&2
  failures=$((failures + 1))
else
  echo "docs: doxygen clean; the API reference is in build/docs/html/index.html"
fi

exit $((failures > 0))
