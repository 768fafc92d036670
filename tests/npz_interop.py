#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 The resident authors
# SPDX-License-Identifier: Apache-2.0
"""NumPy writes .npz archives (numpy.savez and numpy.savez_compressed, and ZIP64 archives through
Python's zipfile as NumPy writes them) of every dtype resident supports, in both byte orders and
memory orders, 0-d and empty arrays included; npz_resave (resident) reads every member, checks
its CRC, and writes the archive back, stored and deflated; NumPy must read resident's archives
and find the same arrays. Exits 77 (ctest's skip code) when NumPy is not installed."""
import os
import subprocess
import sys
import tempfile
import zipfile

try:
    import numpy as np
except ImportError:
    print("npz_interop: skipped: no NumPy: it is not installed for", sys.executable)
    sys.exit(77)

resave = sys.argv[1]
arrays = {}
for dtype in ["?", "i1", "u1", "<i2", "<u2", "<i4", "<u4", "<i8", "<u8", "<f2", "<f4", "<f8",
              ">i4", ">f8", ">u2", ">f2"]:
    for shape in [(), (0,), (5,), (3, 4), (2, 0, 3), (2, 3, 4)]:
        values = (np.arange(int(np.prod(shape)), dtype=np.int64) % 3).astype(dtype).reshape(shape)
        tag = f"{dtype.replace('<', 'le_').replace('>', 'be_').replace('?', 'bool')}_{len(shape)}d"
        tag += "_" + "x".join(map(str, shape))
        arrays[tag + "_c"] = values
        arrays[tag + "_f"] = np.asfortranarray(values)
# A key that is not ASCII: zipfile flags its name as UTF-8, and so must resident's writer, or
# NumPy reads the name back as CP437 ("caf├⌐") and finds no key "café".
arrays["caf\u00e9_\u00fc"] = np.arange(3, dtype="u1")


def write_zip64(path, compression):
    """As numpy.savez writes (force_zip64=True), with zipfile's limits lowered so that the central
    directory holds ZIP64 extra fields and the archive ends with ZIP64 end records, as one with
    members of 4 GiB and more does."""
    limits = zipfile.ZIP64_LIMIT, zipfile.ZIP_FILECOUNT_LIMIT
    zipfile.ZIP64_LIMIT, zipfile.ZIP_FILECOUNT_LIMIT = 1, 1
    try:
        with zipfile.ZipFile(path, "w", compression=compression, allowZip64=True) as archive:
            for key, value in arrays.items():
                with archive.open(key + ".npy", "w", force_zip64=True) as member:
                    np.lib.format.write_array(member, value)
    finally:
        zipfile.ZIP64_LIMIT, zipfile.ZIP_FILECOUNT_LIMIT = limits


writers = {
    "savez": lambda path: np.savez(path, **arrays),
    "savez_compressed": lambda path: np.savez_compressed(path, **arrays),
    "zip64_stored": lambda path: write_zip64(path, zipfile.ZIP_STORED),
    "zip64_deflated": lambda path: write_zip64(path, zipfile.ZIP_DEFLATED),
}

failures = checked = 0
with tempfile.TemporaryDirectory() as folder:
    for writer, write in writers.items():
        source = os.path.join(folder, writer + ".npz")
        write(source)
        for compression in ["stored", "deflated"]:
            target = os.path.join(folder, f"{writer}_{compression}_out.npz")
            result = subprocess.run([resave, source, target, compression], capture_output=True,
                                    text=True)
            if result.returncode != 0:
                print(f"FAILED {writer} -> {compression}: npz_resave: {result.stderr.strip()}")
                failures += 1
                continue
            with np.load(target) as back:
                if sorted(back.files) != sorted(arrays):
                    print(f"FAILED {writer} -> {compression}: keys {sorted(back.files)}")
                    failures += 1
                    continue
                for key, array in arrays.items():
                    checked += 1
                    got = back[key]
                    expected = np.array(array, order="C").astype(array.dtype.newbyteorder("="))
                    if got.dtype != expected.dtype or got.shape != expected.shape or \
                            not np.array_equal(got, expected) or not got.flags.c_contiguous:
                        print(f"FAILED {writer} -> {compression} {key}: got {got.dtype} "
                              f"{got.shape}, expected {expected.dtype} {expected.shape}")
                        failures += 1
print(f"npz_interop: {checked - failures} of {checked} members survived NumPy -> resident -> "
      f"NumPy across {len(writers)} archive kinds, each resaved stored and deflated "
      f"(NumPy {np.__version__})")
sys.exit(1 if failures else 0)
