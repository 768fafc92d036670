#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 The resident authors
# SPDX-License-Identifier: Apache-2.0
"""NumPy writes arrays of every supported dtype, order and format version; npy_resave (resident)
reads each and writes it back; NumPy must read resident's files and find the same arrays.
Exits 77 (ctest's skip code) when NumPy is not installed."""
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
except ImportError:
    print("npy_interop: skipped: no NumPy: it is not installed for", sys.executable)
    sys.exit(77)

resave = sys.argv[1]
cases = []
for dtype in ["?", "i1", "u1", "<i2", "<u2", "<i4", "<u4", "<i8", "<u8", "<f2", "<f4", "<f8",
              ">i4", ">f8", ">u2", ">f2"]:
    for shape in [(), (0,), (5,), (3, 4), (2, 0, 3), (2, 3, 4)]:
        values = (np.arange(int(np.prod(shape)), dtype=np.int64) % 3).astype(dtype).reshape(shape)
        cases.append((f"{dtype}-{shape}-c", values, (1, 0)))
        cases.append((f"{dtype}-{shape}-f", np.asfortranarray(values), (1, 0)))
cases.append(("v2", np.arange(7, dtype="<i4"), (2, 0)))
cases.append(("v3", np.arange(7, dtype="<f4"), (3, 0)))

failures = 0
with tempfile.TemporaryDirectory() as folder:
    for index, (name, array, version) in enumerate(cases):
        source = os.path.join(folder, f"in{index}.npy")
        target = os.path.join(folder, f"out{index}.npy")
        with open(source, "wb") as f:
            np.lib.format.write_array(f, array, version=version)
        result = subprocess.run([resave, source, target], capture_output=True, text=True)
        if result.returncode != 0:
            print(f"FAILED {name}: npy_resave: {result.stderr.strip()}")
            failures += 1
            continue
        back = np.load(target)
        expected = np.array(array, order="C").astype(array.dtype.newbyteorder("="))
        if back.dtype != expected.dtype or back.shape != expected.shape or \
                not np.array_equal(back, expected) or not back.flags.c_contiguous:
            print(f"FAILED {name}: got {back.dtype} {back.shape}, expected "
                  f"{expected.dtype} {expected.shape}")
            failures += 1
print(f"npy_interop: {len(cases) - failures} of {len(cases)} arrays survived NumPy -> resident "
      f"-> NumPy (NumPy {np.__version__})")
sys.exit(1 if failures else 0)
