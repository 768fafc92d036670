#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 The resident authors
# SPDX-License-Identifier: Apache-2.0
"""torch.from_dlpack reads every field and every batch of both fields that
resident_dlpack_exporter (exporter.cpp) exports through resident::to_dlpack, on the host and on
each CUDA device, and finds each view's own values: a consumer that ignored the view's offset
would read the start of the allocation instead (batch 0 of field 0). Where PyTorch is not
installed, numpy.from_dlpack reads the host exports.

Usage: test_dlpack_torch.py EXPORTER_LIBRARY [--require-cuda]
  --require-cuda   fail, rather than skip, when PyTorch, a CUDA device or the exporter's CUDA
                   support is missing (the GPU check runs it so)
Exits 77 (ctest's skip code) when neither PyTorch nor NumPy is there to consume the exports."""
import ctypes
import sys

ROWS, BATCH = 10, 4  # batches of 4, 4 and 2 rows
BATCHES = (ROWS + BATCH - 1) // BATCH
require_cuda = "--require-cuda" in sys.argv[2:]
exporter = ctypes.CDLL(sys.argv[1])
exporter.resident_exporter_export.restype = ctypes.c_void_p
exporter.resident_exporter_export.argtypes = [ctypes.c_int, ctypes.c_size_t, ctypes.c_size_t,
                                              ctypes.c_int, ctypes.c_long]
exporter.resident_exporter_error.restype = ctypes.c_char_p
VERSIONED = exporter.resident_exporter_dlpack_version() >= 100
CAPSULE_NAME = b"dltensor_versioned" if VERSIONED else b"dltensor"  # alive as long as capsules
new_capsule = ctypes.pythonapi.PyCapsule_New
new_capsule.restype = ctypes.py_object
new_capsule.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]

try:
    import torch
except ImportError:
    torch = None
try:
    import numpy as np
except ImportError:
    np = None
failures = []


def check(condition, what):
    if not condition:
        failures.append(what)
        print("FAILED", what)


def expected(field, batch):
    """The values of field `field` of batch `batch` (the whole field when None), as lists."""
    rows = range(ROWS) if batch is None else range(batch * BATCH, min(ROWS, (batch + 1) * BATCH))
    if field == 0:
        return [[3 * row + column + 0.5 for column in range(3)] for row in rows]
    return [1000 + row for row in rows]


class Export:
    """One view exported on `device` (-1: the host), with the DLPack Python protocol: the
    capsule is made when the consumer asks for it, and the consumer takes it over."""

    def __init__(self, device, field, batch):
        self.device, self.field, self.batch = device, field, batch

    def __dlpack__(self, **_):  # stream, max_version, dl_device, copy: the export is ready
        tensor = exporter.resident_exporter_export(self.device, ROWS, BATCH, self.field,
                                                   -1 if self.batch is None else self.batch)
        if not tensor:
            raise BufferError(exporter.resident_exporter_error().decode())
        return new_capsule(tensor, CAPSULE_NAME, None)

    def __dlpack_device__(self):
        return (1, 0) if self.device < 0 else (2, self.device)  # kDLCPU, kDLCUDA


def views():
    for field in (0, 1):
        yield field, None
        for batch in range(BATCHES):
            yield field, batch


def consume_with_torch(device):
    where = "host" if device < 0 else f"cuda:{device}"
    for field, batch in views():
        name = f"torch, {where}, field {field}, " + ("whole" if batch is None else f"batch {batch}")
        try:
            tensor = torch.from_dlpack(Export(device, field, batch))
        except Exception as error:  # noqa: BLE001 (every failure is reported, then counted)
            check(False, f"{name}: torch.from_dlpack raised {error!r}")
            continue
        check(tensor.device == torch.device("cpu" if device < 0 else f"cuda:{device}"),
              f"{name}: on {tensor.device}")
        check(tensor.dtype == (torch.float32 if field == 0 else torch.int32),
              f"{name}: dtype {tensor.dtype}")
        check(tensor.cpu().tolist() == expected(field, batch),
              f"{name}: {tensor.cpu().tolist()} where {expected(field, batch)} was exported")
    print(f"dlpack_torch: torch {torch.__version__} read every view on {where}")


def consume_with_numpy():
    for field, batch in views():
        name = f"numpy, host, field {field}, " + ("whole" if batch is None else f"batch {batch}")
        array = np.from_dlpack(Export(-1, field, batch))
        check(array.tolist() == expected(field, batch),
              f"{name}: {array.tolist()} where {expected(field, batch)} was exported")
    print(f"dlpack_torch: no PyTorch here; numpy {np.__version__} read every host view")


devices = exporter.resident_exporter_cuda_devices()
if torch is not None:
    consume_with_torch(-1)
    if devices > 0 and torch.cuda.is_available():
        for device in range(min(devices, torch.cuda.device_count())):
            consume_with_torch(device)
    elif require_cuda:
        check(False, f"--require-cuda: the exporter sees {devices} CUDA device(s) and torch "
                     f"{torch.__version__} says cuda.is_available() is "
                     f"{torch.cuda.is_available()}; the GPU check needs both")
    else:
        print("dlpack_torch: no CUDA device for PyTorch here; the device half did not run")
elif require_cuda:
    check(False, f"--require-cuda: PyTorch is not installed for {sys.executable}")
elif np is not None and hasattr(np, "from_dlpack"):
    consume_with_numpy()
else:
    print("dlpack_torch: skipped: no NumPy or PyTorch: neither PyTorch nor a NumPy with "
          "from_dlpack is installed for", sys.executable)
    sys.exit(77)

if failures:
    print(f"dlpack_torch: {len(failures)} check(s) failed")
    sys.exit(1)
print("dlpack_torch: every check passed")
