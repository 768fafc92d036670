#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 The resident authors
# SPDX-License-Identifier: Apache-2.0
"""scripts/test-report.py against JUnit files written here: skips grouped by the reason their
output gives (GoogleTest's and a script's), an unexpected reason failing the report, a failed
test failing it, and a required label that ran (or did not) in the build folder given.
Usage: test_report_check.py REPORT_SCRIPT BUILD_DIR (a configured build with the label
`interop`)."""
import os
import subprocess
import sys
import tempfile
from xml.sax.saxutils import escape

REPORT, BUILD = sys.argv[1], sys.argv[2]
failures = []
checks = 0


def check(condition, what):
    global checks
    checks += 1
    if not condition:
        failures.append(what)
        print("test_report_check: FAILED:", what)


def gtest_skip(reason):
    return (f"[ RUN      ] A.B\n/src/tests/support/spaces.hpp:65: Skipped\n{reason}\n"
            "[  SKIPPED ] A.B (0 ms)\n")


def junit(cases):
    """cases: (name, status, output), status one of run, notrun (a skip), missing (ctest could
    not start it), disabled, fail."""
    body = []
    for name, status, output in cases:
        inner = {"notrun": '<skipped message="SKIP_REGULAR_EXPRESSION_MATCHED"/>',
                 "missing": '<skipped message="Unable to find executable"/>',
                 "fail": '<failure message="Failed"/>'}.get(status, "")
        status = "notrun" if status == "missing" else status
        body.append(f'<testcase name="{escape(name)}" status="{status}">{inner}'
                    f"<system-out>{escape(output)}</system-out></testcase>")
    return f'<?xml version="1.0"?><testsuite>{"".join(body)}</testsuite>'


def report(cases, *args):
    """The report's exit status and output over a JUnit file of `cases` (or of this text)."""
    with tempfile.TemporaryDirectory() as folder:
        with open(os.path.join(folder, "ctest-junit.xml"), "w", encoding="utf-8") as f:
            f.write(cases if isinstance(cases, str) else junit(cases))
        # The labels come from BUILD's ctest listing: the JUnit file is read from a copy.
        run = subprocess.run([sys.executable, REPORT, folder, *args],
                             capture_output=True, text=True, check=False,
                             env={**os.environ, "RESIDENT_TEST_REPORT_LABELS_FROM": BUILD})
    return run.returncode, run.stdout + run.stderr


cases = [
    ("Typed.A<CudaSpace>", "notrun", gtest_skip("skipped: no CUDA device: cudaErrorNoDevice")),
    ("Typed.B<CudaSpace>", "notrun", gtest_skip("skipped: no CUDA device: cudaErrorNoDevice")),
    ("npy.numpy_interop", "notrun", "npy_interop: skipped: no NumPy: it is not installed\n"),
    ("Typed.A<HostSpace>", "run", "[       OK ] Typed.A\n"),
]
code, out = report(cases)
check(code == 0, f"skips without --allow-skip do not fail (exit {code}):\n{out}")
check("4 tests: 1 passed, 0 failed, 3 skipped" in out, f"the counts:\n{out}")
check("     2  no CUDA device" in out and "     1  no NumPy" in out,
      f"skips grouped by reason:\n{out}")

code, out = report(cases, "--allow-skip", "no CUDA device")
check(code == 1, f"a skip for another reason fails (exit {code})")
check("1 test(s) skipped because 'no NumPy'" in out and "npy.numpy_interop" in out,
      f"the failure names the reason and the test:\n{out}")

code, out = report(cases[:2] + cases[3:], "--allow-skip", "no CUDA device")
check(code == 0, f"only allowed skips pass (exit {code}):\n{out}")

code, out = report([("A.B", "notrun", "no line that says why\n")], "--allow-skip", "x")
check(code == 1 and "no reason given" in out, f"a skip without a reason fails:\n{out}")

code, out = report([("A.B", "fail", "boom\n")])
check(code == 1 and "1 failed" in out, f"a failed test fails the report:\n{out}")

code, out = report([("A.B", "missing", ""), ("A.C", "run", "")])
check(code == 1 and "A.B did not run: Unable to find executable" in out,
      f"a test ctest could not start fails the report, as such:\n{out}")

code, out = report([("A.B", "disabled", ""), ("A.C", "run", "")], "--allow-skip", "x")
check(code == 0 and "1 passed, 0 failed, 0 skipped, 1 disabled" in out,
      f"a disabled test is counted apart, not passed:\n{out}")

for text in ("", "<testsuite>", "<testsuite></testsuite>"):
    code, out = report(text)
    check(code == 1 and "Traceback" not in out and ("not a JUnit file" in out or
                                                   "holds no test" in out),
          f"an unreadable or empty JUnit file ({text!r}) fails in one line:\n{out}")

ran = [("npy.numpy_interop", "run", "ok\n")]
code, out = report(ran, "--require-label", "interop")
check(code == 0 and "label interop: 1 passed" in out, f"a required label that ran:\n{out}")
code, out = report([("npy.numpy_interop", "disabled", "")], "--require-label", "interop")
check(code == 1, f"a disabled test does not satisfy a required label:\n{out}")
code, out = report(cases, "--require-label", "interop")
check(code == 1 and "no test labelled 'interop' ran" in out,
      f"a required label whose tests skipped fails:\n{out}")

if failures:
    print(f"test_report_check: {len(failures)} of {checks} checks failed")
    sys.exit(1)
print(f"test_report_check: {checks} checks passed")
