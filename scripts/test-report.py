#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 The resident authors
# SPDX-License-Identifier: Apache-2.0
"""What a ctest run did: passed, failed and skipped tests, the skips grouped by reason.

Reads the JUnit file the test presets write (<build>/ctest-junit.xml). ctest counts a skip as
a pass in its summary and prints the reason only with -V; this report prints every reason
with its count, so that a test that stopped running here cannot hide among them.

A skip's reason is the line a test prints as "skipped: <reason>[: <detail>]" (GoogleTest
tests: the message of GTEST_SKIP(), which tests/support/spaces.hpp and the tests spell so;
script tests: their output). Skips are grouped by <reason>.

  scripts/test-report.py BUILD_DIR [--allow-skip REASON]... [--no-skips]
                        [--require-label LABEL]...

--allow-skip REASON   fail unless every skip has one of these reasons (repeatable); without
                      it (and without --no-skips), skips are reported and never fail
--no-skips            fail at any skip
--require-label LABEL fail unless at least one test with this label ran and passed
                      (repeatable): a build that lost, say, MPI cannot pass by omission

A failed test, a test ctest could not start (its "Not Run": no executable, a failed fixture),
an unreadable or empty JUnit file fail the report; disabled tests are counted apart.
"""
import argparse
import collections
import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ElementTree

GTEST_SKIP_LINE = re.compile(r"^.*:\d+: Skipped$")
SKIPPED_PREFIX = re.compile(r"skipped: (.+)$")


def skip_reason(output):
    """(reason, detail) of a skipped test's output."""
    lines = output.splitlines()
    for index, line in enumerate(lines):
        if GTEST_SKIP_LINE.match(line) and index + 1 < len(lines):
            message = lines[index + 1].strip()
            message = message[len("skipped: "):] if message.startswith("skipped: ") else message
            break
    else:
        found = next((m for m in map(SKIPPED_PREFIX.search, lines) if m), None)
        message = found.group(1).strip() if found else ""
    if not message:
        return "no reason given", "the test printed no 'skipped: <reason>' line"
    reason, _, detail = message.partition(": ")
    return reason, detail


def labels_by_test(build):
    """{test name: [labels]} from ctest's own listing of BUILD (or of the build folder that
    RESIDENT_TEST_REPORT_LABELS_FROM names, where the JUnit file was copied elsewhere)."""
    build = os.environ.get("RESIDENT_TEST_REPORT_LABELS_FROM", build)
    listing = subprocess.run(["ctest", "--test-dir", build, "--show-only=json-v1"],
                             check=True, capture_output=True, text=True).stdout
    result = {}
    for test in json.loads(listing).get("tests", []):
        for prop in test.get("properties", []):
            if prop.get("name") == "LABELS":
                result[test["name"]] = prop.get("value", [])
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("build")
    parser.add_argument("--allow-skip", action="append", default=[], metavar="REASON")
    parser.add_argument("--no-skips", action="store_true")
    parser.add_argument("--require-label", action="append", default=[], metavar="LABEL")
    args = parser.parse_args()

    junit = os.path.join(args.build, "ctest-junit.xml")
    if not os.path.exists(junit):
        print(f"test-report: {junit} does not exist; run the tests through a test preset "
              "(it writes the file), e.g. cmake --workflow --preset ci", file=sys.stderr)
        return 1
    try:
        cases = list(ElementTree.parse(junit).getroot().iter("testcase"))
    except ElementTree.ParseError as error:
        print(f"test-report: {junit} is not a JUnit file ({error}); run the tests again",
              file=sys.stderr)
        return 1
    if not cases:
        print(f"test-report: {junit} holds no test; the run registered none", file=sys.stderr)
        return 1
    status = collections.Counter()
    skips = collections.defaultdict(list)  # reason -> [(test, detail)]
    not_run = []  # (test, why): ctest's "Not Run" (no executable, a failed fixture)
    ran = set()
    for case in cases:
        name = case.get("name")
        skipped = case.find("skipped")
        # ctest marks both skips and tests it could not start "notrun"; a skip's message is
        # SKIP_REGULAR_EXPRESSION_MATCHED or SKIP_RETURN_CODE=<code>.
        if case.get("status") == "notrun" or skipped is not None:
            why = skipped.get("message", "") if skipped is not None else ""
            if why.startswith("SKIP_"):
                out = case.find("system-out")
                reason, detail = skip_reason(out.text if out is not None and out.text else "")
                skips[reason].append((name, detail))
                status["skipped"] += 1
            else:
                not_run.append((name, why or "ctest did not run it"))
                status["not run"] += 1
        elif case.get("status") == "disabled":
            status["disabled"] += 1
        elif case.find("failure") is not None or case.get("status") == "fail":
            status["failed"] += 1
        else:
            status["passed"] += 1
            ran.add(name)
    counts = ", ".join(f"{status[kind]} {kind}" for kind in
                       ("passed", "failed", "skipped", "not run", "disabled")
                       if status[kind] or kind in ("passed", "failed", "skipped"))
    print(f"test-report ({args.build}): {len(cases)} tests: {counts}")
    if skips:
        print("  skipped, by reason:")
        for reason, tests in sorted(skips.items(), key=lambda item: -len(item[1])):
            print(f"    {len(tests):6d}  {reason}")

    problems = [f"{test} did not run: {why}" for test, why in not_run]
    if args.allow_skip or args.no_skips:
        for reason, tests in sorted(skips.items()):
            if reason in args.allow_skip:
                continue
            shown = "".join(f"\n      {test}" + (f" ({detail})" if detail else "")
                            for test, detail in tests[:10])
            more = f"\n      ... and {len(tests) - 10} more" if len(tests) > 10 else ""
            expected = ", ".join(repr(r) for r in args.allow_skip) or "none"
            problems.append(f"{len(tests)} test(s) skipped because '{reason}', which is not "
                            f"an expected reason here (expected: {expected}); make them run "
                            f"here:{shown}{more}")
    if args.require_label:
        labels = labels_by_test(args.build)
        for label in args.require_label:
            passed = sum(1 for test in ran if label in labels.get(test, []))
            print(f"  label {label}: {passed} passed")
            if passed == 0:
                problems.append(f"no test labelled '{label}' ran and passed; the build lost "
                                "them (see the configure output for what it did not find)")
    for problem in problems:
        print(f"test-report: {problem}", file=sys.stderr)
    return 1 if problems or status["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
