#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 The resident authors
# SPDX-License-Identifier: Apache-2.0
"""numpy.from_dlpack reads every field and batch that resident_dlpack_probe (probe.cpp) exports
through resident::to_dlpack, and finds each view's own values; the capsules follow the DLPack
Python specification; the arrays outlive the dataset and release its memory when they go.
A consumer that ignores byte_offset (as torch.from_dlpack does) is emulated with ctypes: it must
find the same values from `data` alone. Usage: test_dlpack_numpy.py MODULE_DIR.
Exits 77 (ctest's skip code) when NumPy is not installed or has no from_dlpack."""
import ctypes
import gc
import sys

try:
    import numpy as np
except ImportError:
    print("dlpack_numpy: skipped: no NumPy: it is not installed for", sys.executable)
    sys.exit(77)
if not hasattr(np, "from_dlpack"):
    print(f"dlpack_numpy: skipped: NumPy too old: {np.__version__} has no from_dlpack (1.22 and later)")
    sys.exit(77)

sys.path.insert(0, sys.argv[1])
import resident_dlpack_probe as probe  # noqa: E402

ROWS, BATCH = 10, 4  # batches of 4, 4 and 2 rows
NUMPY = tuple(int(part) for part in np.__version__.split(".")[:2])
HEADER = probe.header_version()
VERSIONED = HEADER >= (1, 0)
# NumPy reads DLPack's bool code from 1.25; before DLPack 0.8 resident exports bool as uint8.
BOOL_READABLE = not VERSIONED or NUMPY >= (1, 25)
EXPECTED = [
    (np.arange(ROWS * 3, dtype=np.float32) + 0.5).reshape(ROWS, 3),
    np.arange(1000, 1000 + ROWS, dtype=np.int32),
    (np.arange(ROWS) % 3 == 0).astype(np.bool_ if VERSIONED else np.uint8),
]
NAMES = ["features", "labels", "mask"]
failures = []


def check(condition, what):
    if not condition:
        failures.append(what)
        print("FAILED", what)


# --- the C structs, to read a capsule as a consumer that ignores byte_offset would ----------
class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p)]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("version", DLPackVersion), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p), ("flags", ctypes.c_uint64), ("dl_tensor", DLTensor)]


capsule_name = ctypes.pythonapi.PyCapsule_GetName
capsule_name.restype, capsule_name.argtypes = ctypes.c_char_p, [ctypes.py_object]
capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
capsule_pointer.restype = ctypes.c_void_p
capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
READ_ONLY = 1  # DLPACK_FLAG_BITMASK_READ_ONLY


def read_from_data_alone(exporter, expected, label):
    """What torch.from_dlpack sees: the values at `data`, byte_offset ignored. The capsule is
    left unconsumed, so its destructor releases the tensor. Returns `data`."""
    max_version = (1, 0) if VERSIONED else None
    capsule = exporter.__dlpack__(max_version=max_version)
    name = capsule_name(capsule)
    check(name == (b"dltensor_versioned" if VERSIONED else b"dltensor"),
          f"{label}: capsule named {name!r}")
    if name == b"dltensor_versioned":
        managed = DLManagedTensorVersioned.from_address(capsule_pointer(capsule, name))
        check(managed.version.major == 1, f"{label}: version {managed.version.major}")
        check(managed.flags & READ_ONLY, f"{label}: flags {managed.flags} lack READ_ONLY")
    else:
        managed = DLManagedTensor.from_address(capsule_pointer(capsule, name))
    tensor = managed.dl_tensor
    shape = tuple(tensor.shape[axis] for axis in range(tensor.ndim))
    check(shape == expected.shape, f"{label}: DLTensor shape {shape}")
    check(not tensor.strides, f"{label}: DLTensor strides are not null (C-contiguous)")
    check((tensor.device.device_type, tensor.device.device_id) == (1, 0),
          f"{label}: DLTensor device ({tensor.device.device_type}, {tensor.device.device_id})")
    code = {"f": 2, "i": 0, "u": 1, "b": 6}[expected.dtype.kind]  # kDLFloat, kDLInt, ...
    check((tensor.dtype.code, tensor.dtype.bits, tensor.dtype.lanes) ==
          (code, expected.itemsize * 8, 1),
          f"{label}: DLTensor dtype (code, bits, lanes) ({tensor.dtype.code}, "
          f"{tensor.dtype.bits}, {tensor.dtype.lanes}), not ({code}, {expected.itemsize * 8}, 1)")
    check(tensor.byte_offset == 0, f"{label}: byte_offset {tensor.byte_offset}, not 0")
    raw = (ctypes.c_char * expected.nbytes).from_address(tensor.data)
    seen = np.frombuffer(raw, dtype=expected.dtype).reshape(expected.shape).copy()
    check(np.array_equal(seen, expected),
          f"{label}: the values at `data` (byte_offset ignored) are {seen.ravel()[:6]}..., "
          f"not {expected.ravel()[:6]}...")
    data = tensor.data
    del capsule, managed, tensor, raw
    return data


def views(dataset):
    """(label, exporter, expected values) for every field and every batch of every field."""
    for field, name in enumerate(NAMES):
        yield f"field {field} ({name})", dataset.field(field), EXPECTED[field]
        for batch in range(dataset.num_batches()):
            rows = EXPECTED[field][batch * BATCH:(batch + 1) * BATCH]
            yield f"batch {batch} of field {field} ({name})", dataset.batch(batch, field), rows


print(f"dlpack_numpy: NumPy {np.__version__} (Python {sys.version.split()[0]}), module built "
      f"with DLPack header {HEADER[0]}.{HEADER[1]}")

# 1. Every view, through numpy.from_dlpack and through `data` alone.
dataset = probe.dataset(ROWS, BATCH)
check(dataset.num_batches() == 3, f"{dataset.num_batches()} batches, not 3")
arrays = []
count = 0
for label, exporter, expected in views(dataset):
    check(exporter.__dlpack_device__() == (1, 0),
          f"{label}: __dlpack_device__ {exporter.__dlpack_device__()}")
    data = read_from_data_alone(exporter, expected, label)
    count += 1
    if expected.dtype == np.bool_ and not BOOL_READABLE:
        try:
            np.from_dlpack(exporter)
            check(False, f"{label}: NumPy {np.__version__} read DLPack's bool, unexpectedly")
        except (RuntimeError, BufferError, TypeError):
            print(f"note: {label}: NumPy {np.__version__} refuses DLPack's bool (1.25 reads it)")
        continue
    array = np.from_dlpack(exporter)
    check(array.shape == expected.shape and array.dtype == expected.dtype,
          f"{label}: NumPy array {array.shape} {array.dtype}, not {expected.shape} "
          f"{expected.dtype}")
    check(np.array_equal(array, expected),
          f"{label}: NumPy read {array.ravel()[:6]}..., not {expected.ravel()[:6]}...")
    check(array.ctypes.data == data,
          f"{label}: NumPy's array starts at {array.ctypes.data:#x}, `data` is {data:#x}")
    # Read-only: the versioned capsule carries the flag, which NumPy 2.1 and later honour;
    # NumPy 1.x makes every imported array read-only; an unversioned capsule cannot say so.
    if (VERSIONED and NUMPY >= (2, 1)) or NUMPY < (2, 0):
        check(not array.flags.writeable, f"{label}: NumPy's array is writeable")
        try:
            array.flat[0] = array.flat[0]
            check(False, f"{label}: NumPy let the export be written")
        except ValueError:
            pass
    arrays.append((label, array, expected))
if not VERSIONED and NUMPY >= (2, 0):
    print(f"note: DLPack {HEADER[0]}.{HEADER[1]} capsules cannot flag read-only data; NumPy "
          f"{np.__version__} makes them writeable arrays")

# 2. The arrays outlive the dataset (shared ownership) and release its memory when they go.
imported = len(arrays)
held = probe.used_bytes()
check(held > 0, "the dataset holds no memory")
del dataset, exporter
gc.collect()
check(probe.live_datasets() == 0, f"{probe.live_datasets()} datasets alive after del")
check(probe.used_bytes() == held, f"{probe.used_bytes()} bytes held, not {held}, by the arrays")
for label, array, expected in arrays:
    check(np.array_equal(array, expected), f"{label}: values changed after the dataset went")
del arrays, array
gc.collect()
check(probe.used_bytes() == 0, f"{probe.used_bytes()} bytes held after the arrays went")

# 3. The protocol: capsule names by max_version, an unconsumed capsule releases its tensor,
#    and requests the export cannot honour raise BufferError.
dataset = probe.dataset(ROWS, BATCH)
exporter = dataset.batch(1, 1)
for max_version, name in [(None, b"dltensor"), ((0, 8), b"dltensor"),
                          ((1, 0), b"dltensor_versioned" if VERSIONED else b"dltensor"),
                          ((2, 3), b"dltensor_versioned" if VERSIONED else b"dltensor")]:
    capsule = exporter.__dlpack__(max_version=max_version)
    check(capsule_name(capsule) == name,
          f"max_version {max_version}: capsule {capsule_name(capsule)!r}, not {name!r}")
capsule = exporter.__dlpack__(stream=None, max_version=(1, 0), dl_device=(1, 0), copy=False)
del dataset, exporter
gc.collect()
check(probe.live_datasets() == 0 and probe.used_bytes() > 0, "the capsule holds no memory")
del capsule
check(probe.used_bytes() == 0, f"{probe.used_bytes()} bytes held after an unconsumed capsule")
exporter = probe.dataset(ROWS, BATCH).field(0)
for kwargs in [{"stream": 1}, {"dl_device": (2, 0)}, {"copy": True}]:
    try:
        exporter.__dlpack__(**kwargs)
        check(False, f"__dlpack__({kwargs}) did not raise BufferError")
    except BufferError:
        pass
try:
    exporter.__dlpack__(None)
    check(False, "__dlpack__ took a positional argument")
except TypeError:
    pass
del exporter
gc.collect()
check(probe.used_bytes() == 0, f"{probe.used_bytes()} bytes held at the end")

if failures:
    print(f"dlpack_numpy: {len(failures)} failures")
    sys.exit(1)
print(f"dlpack_numpy: {count} views read from `data` alone, {imported} by numpy.from_dlpack; "
      "lifetime and protocol checks passed")
