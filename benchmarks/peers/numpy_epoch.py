#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 The resident authors
# SPDX-License-Identifier: Apache-2.0
"""NumPy peer of bench_epoch's host epochs, on the same shapes, values and batch size.

One shuffled epoch as a Python user writes it: a fresh permutation of the rows, then for each
full batch `x[idx]` and `y[idx]` (fancy indexing, one gather per field). With --normalize
SCALE OFFSET the features also become float32 `x * SCALE + OFFSET` in the batch, as
`Shuffle::samples` with `Normalize{SCALE, OFFSET}` does.

bench_epoch runs it as a subprocess before its own epochs and reads one JSON object from
stdout: {"seconds_per_epoch": mean over --epochs, after one warm-up epoch, "numpy": version}.
With --serve it instead runs one epoch for each line it reads on stdin and answers with its
seconds on one line (after a first line "ready", once the data is made and one epoch warmed
up), so that bench_epoch can alternate its epochs with NumPy's under the same conditions;
it ends at the end of stdin. Exits with status 3, saying why on stderr, when NumPy is missing.
"""
import argparse
import json
import sys
import time


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, required=True)
    parser.add_argument("--row-elements", type=int, required=True)
    parser.add_argument("--dtype", choices=("uint8", "float32"), required=True)
    parser.add_argument("--batch", type=int, required=True)
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--normalize", type=float, nargs=2, metavar=("SCALE", "OFFSET"))
    parser.add_argument("--serve", action="store_true",
                        help="one epoch per line read on stdin, its seconds written back")
    args = parser.parse_args()
    try:
        import numpy as np
    except ImportError:
        print("numpy_epoch: NumPy is not installed for " + sys.executable, file=sys.stderr)
        return 3

    # bench_epoch's synthetic values: element i is i * 2654435761 % 251.
    count = args.rows * args.row_elements
    values = (np.arange(count, dtype=np.uint64) * np.uint64(2654435761)) % np.uint64(251)
    x = values.astype(args.dtype).reshape(args.rows, args.row_elements)
    y = ((np.arange(args.rows, dtype=np.uint64) * np.uint64(2654435761)) %
         np.uint64(251)).astype(np.int32)
    batches = args.rows // args.batch
    generator = np.random.default_rng(7)
    if args.normalize:
        scale, offset = (np.float32(v) for v in args.normalize)

    def epoch():
        order = generator.permutation(args.rows)
        for k in range(batches):
            idx = order[k * args.batch:(k + 1) * args.batch]
            xb = x[idx]
            if args.normalize:
                xb = xb.astype(np.float32)
                xb *= scale
                xb += offset
            yb = y[idx]
        return xb, yb

    epoch()
    if args.serve:
        print("ready", flush=True)
        for _ in sys.stdin:
            start = time.perf_counter()
            epoch()
            print(time.perf_counter() - start, flush=True)
        return 0
    start = time.perf_counter()
    for _ in range(args.epochs):
        epoch()
    seconds = (time.perf_counter() - start) / args.epochs
    json.dump({"seconds_per_epoch": seconds, "numpy": np.__version__}, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
