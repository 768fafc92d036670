#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 The resident authors
# SPDX-License-Identifier: Apache-2.0
"""PyTorch peers of bench_epoch, on the same data and batch size (GPU machine only).

(a) torch.utils.data.DataLoader(TensorDataset(x, y), shuffle=True, pin_memory=True) from host
    tensors, each batch moved to the GPU: what most training scripts do (num_workers=0, the
    default).
(b) The GPU-resident idiom: x[torch.randperm(n, device="cuda")] once per epoch, sliced into
    batches.

Writes {"peers": [...]} as JSON; scripts/gpu-check.sh merges it into bench_epoch's JSON.
"""
import argparse
import json
import sys
import time


def timed_epochs(run_epoch, epochs, synchronize):
    run_epoch()  # warm-up: allocator, kernels, pinned buffers
    synchronize()
    start = time.perf_counter()
    for _ in range(epochs):
        run_epoch()
    synchronize()
    return (time.perf_counter() - start) / epochs


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", required=True, help="JSON file to write")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--rows", type=int, default=50000)
    args = parser.parse_args()

    import torch
    from torch.utils.data import DataLoader, TensorDataset

    if not torch.cuda.is_available():
        print("torch_epoch: no CUDA device", file=sys.stderr)
        return 1
    generator = torch.Generator().manual_seed(7)
    x = torch.randint(0, 256, (args.rows, 3, 32, 32), dtype=torch.uint8, generator=generator)
    y = torch.randint(0, 10, (args.rows,), dtype=torch.int32, generator=generator)
    batches = args.rows // args.batch
    synchronize = torch.cuda.synchronize

    loader = DataLoader(TensorDataset(x, y), batch_size=args.batch, shuffle=True,
                        pin_memory=True, drop_last=True)

    def dataloader_epoch():
        for xb, yb in loader:
            xb = xb.cuda(non_blocking=True)
            yb = yb.cuda(non_blocking=True)

    xg, yg = x.cuda(), y.cuda()

    def randperm_epoch():
        order = torch.randperm(args.rows, device="cuda")
        xs, ys = xg[order], yg[order]
        for k in range(batches):
            xb = xs[k * args.batch:(k + 1) * args.batch]
            yb = ys[k * args.batch:(k + 1) * args.batch]

    peers = []
    for name, run in (("torch_dataloader_pin_memory", dataloader_epoch),
                      ("torch_gpu_randperm", randperm_epoch)):
        seconds = timed_epochs(run, args.epochs, synchronize)
        peers.append({"name": name, "seconds_per_epoch": seconds, "epochs_per_s": 1.0 / seconds,
                      "rows_per_s": batches * args.batch / seconds})
        print(f"{name}: {1.0 / seconds:.2f} epochs/s")
    with open(args.out, "w") as out:
        json.dump({"peers": peers, "torch": torch.__version__,
                   "device": torch.cuda.get_device_name(0), "rows": args.rows,
                   "batch": args.batch, "shape": [3, 32, 32], "dtype": "uint8"}, out, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
