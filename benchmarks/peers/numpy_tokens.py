#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 The resident authors
# SPDX-License-Identifier: Apache-2.0
"""NumPy peer of bench_tokens: nanoGPT's batch sampling, written in NumPy, over the same stream.

The stream is bench_tokens' own: --tokens uint16 tokens, token i being
splitmix64(seed + (i + 1) * 0x9E3779B97F4A7C15) % 50257 (GPT-2's vocabulary), so that both
sides read the same values from the same --seed. It lies in memory, as a `np.memmap` of a
warm file would, without nanoGPT's fresh memmap per batch: the idiom's most favourable case.

A batch is nanoGPT's `get_batch` with NumPy in place of PyTorch:

    ix = rng.integers(len(data) - T, size=B)
    x = np.stack([data[i:i+T] for i in ix])
    y = np.stack([data[i+1:i+1+T] for i in ix])

Without --serve it prints one JSON object on stdout: {"seconds_per_batch": mean over --batches
after one warm-up batch, "numpy": version}. With --serve it instead runs, for each line it reads
on stdin, as many batches as the line says and answers with their seconds on one line (after a
first line "ready", once the stream is made and a batch warmed up), so that bench_tokens can
alternate its batches with NumPy's under the same conditions; it ends at the end of stdin.
Exits with status 3, saying why on stderr, when NumPy is missing.

torch_tokens.py imports `token_stream` and `measure` from here.
"""
import argparse
import json
import sys
import time

VOCABULARY = 50257  # GPT-2's: the tokens fit uint16, as nanoGPT's train.bin stores them


def token_stream(np, count, seed):
    """bench_tokens' stream: splitmix64 of each position, modulo the vocabulary, as uint16."""
    tokens = np.empty(count, dtype=np.uint16)
    chunk = 1 << 22  # bounds the uint64 temporaries at 32 MiB
    for start in range(0, count, chunk):
        stop = min(start + chunk, count)
        # In-place uint64 array arithmetic wraps modulo 2^64, as the C++ side's does.
        z = np.arange(start + 1, stop + 1, dtype=np.uint64)
        z *= np.uint64(0x9E3779B97F4A7C15)
        z += np.uint64(seed)
        z ^= z >> np.uint64(30)
        z *= np.uint64(0xBF58476D1CE4E5B9)
        z ^= z >> np.uint64(27)
        z *= np.uint64(0x94D049BB133111EB)
        z ^= z >> np.uint64(31)
        tokens[start:stop] = z % np.uint64(VOCABULARY)
    return tokens


def arguments(description):
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--tokens", type=int, required=True, help="length of the stream")
    parser.add_argument("--seed", type=int, required=True, help="of the stream and the sampling")
    parser.add_argument("--batch", type=int, required=True, help="B: rows per batch")
    parser.add_argument("--context", type=int, required=True, help="T: tokens per row")
    parser.add_argument("--batches", type=int, default=200, help="measured, without --serve")
    parser.add_argument("--serve", action="store_true",
                        help="for each line read on stdin, that many batches, their seconds written")
    return parser.parse_args()


def measure(get_batch, args, versions):
    """One warm-up batch, then the batches measured as --serve or --batches asks."""
    get_batch()
    if args.serve:
        print("ready", flush=True)
        for line in sys.stdin:
            count = int(line)
            start = time.perf_counter()
            for _ in range(count):
                get_batch()
            print(time.perf_counter() - start, flush=True)
        return 0
    start = time.perf_counter()
    for _ in range(args.batches):
        get_batch()
    seconds = (time.perf_counter() - start) / args.batches
    json.dump(dict(seconds_per_batch=seconds, **versions), sys.stdout)
    return 0


def main():
    args = arguments(__doc__)
    try:
        import numpy as np
    except ImportError:
        print("numpy_tokens: NumPy is not installed for " + sys.executable, file=sys.stderr)
        return 3

    data = token_stream(np, args.tokens, args.seed)
    rng = np.random.default_rng(args.seed)
    B, T = args.batch, args.context

    def get_batch():
        ix = rng.integers(len(data) - T, size=B)
        x = np.stack([data[i:i + T] for i in ix])
        y = np.stack([data[i + 1:i + 1 + T] for i in ix])
        return x, y

    return measure(get_batch, args, {"numpy": np.__version__})


if __name__ == "__main__":
    sys.exit(main())
