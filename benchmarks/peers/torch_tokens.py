#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 The resident authors
# SPDX-License-Identifier: Apache-2.0
"""PyTorch peer of bench_tokens: nanoGPT's `get_batch`, verbatim, over the same stream.

The stream is numpy_tokens.py's (bench_tokens' values from the same --seed, in memory), and a
batch is nanoGPT's train.py on the CPU:

    ix = torch.randint(len(data) - block_size, (batch_size,))
    x = torch.stack([torch.from_numpy((data[i:i+block_size]).astype(np.int64)) for i in ix])
    y = torch.stack([torch.from_numpy((data[i+1:i+1+block_size]).astype(np.int64)) for i in ix])

(its batches are int64, four times the bytes of the uint16 tokens resident serves). It runs with
torch's default thread count, as a training script gets it. The command line, the output and
--serve are numpy_tokens.py's, with {"torch": version, "threads": torch's intra-op threads}
beside the seconds. Exits with status 3, saying why on stderr, when PyTorch or NumPy is missing.
"""
import sys

from numpy_tokens import arguments, measure, token_stream  # the same folder: sys.path[0]


def main():
    args = arguments(__doc__)
    try:
        import numpy as np
        import torch
    except ImportError as missing:
        print(f"torch_tokens: {missing.name} is not installed for {sys.executable}",
              file=sys.stderr)
        return 3

    data = token_stream(np, args.tokens, args.seed)
    torch.manual_seed(args.seed)
    batch_size, block_size = args.batch, args.context

    def get_batch():
        ix = torch.randint(len(data) - block_size, (batch_size,))
        x = torch.stack([torch.from_numpy((data[i:i + block_size]).astype(np.int64)) for i in ix])
        y = torch.stack(
            [torch.from_numpy((data[i + 1:i + 1 + block_size]).astype(np.int64)) for i in ix])
        return x, y

    return measure(get_batch, args,
                   {"torch": torch.__version__, "threads": torch.get_num_threads()})


if __name__ == "__main__":
    sys.exit(main())
