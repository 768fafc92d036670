#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 The resident authors
# SPDX-License-Identifier: Apache-2.0
"""PyTorch peers of bench_epoch, on the same data shape and batch size.

--device cuda (GPU machine; writes {"peers": [...]} to --out, which scripts/bench.sh merges
into bench_epoch's JSON):
  (a) torch.utils.data.DataLoader(TensorDataset(x, y), shuffle=True, pin_memory=True) from
      host tensors, each batch moved to the GPU: what most training scripts do
      (num_workers=0, the default).
  (b) The GPU-resident idiom: x[torch.randperm(n, device="cuda")] once per epoch, sliced into
      batches.

--device cpu (bench_epoch runs it as a subprocess, beside its host epochs and under the same
load; prints one JSON object on stdout: {"seconds_per_epoch": {name: seconds}, "torch":
version, "threads": torch's intra-op threads}):
  (a) DataLoader(TensorDataset(x, y), batch_size, shuffle=True): the default loader, which
      collates each batch from single rows.
  (b) x[torch.randperm(n)] once per epoch, sliced into batches.
Both run with torch's default thread count, as a training script gets them. Exits with status
3, saying why on stderr, when PyTorch is missing.
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
    parser.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    parser.add_argument("--out", help="JSON file to write (--device cuda)")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--rows", type=int, default=50000)
    args = parser.parse_args()
    on_device = args.device == "cuda"
    if on_device and not args.out:
        parser.error("--device cuda writes its figures to --out")

    try:
        import torch
        from torch.utils.data import DataLoader, TensorDataset
    except ImportError:
        print("torch_epoch: PyTorch is not installed for " + sys.executable, file=sys.stderr)
        return 3

    if on_device and not torch.cuda.is_available():
        print("torch_epoch: no CUDA device", file=sys.stderr)
        return 1
    generator = torch.Generator().manual_seed(7)
    x = torch.randint(0, 256, (args.rows, 3, 32, 32), dtype=torch.uint8, generator=generator)
    y = torch.randint(0, 10, (args.rows,), dtype=torch.int32, generator=generator)
    batches = args.rows // args.batch
    synchronize = torch.cuda.synchronize if on_device else (lambda: None)

    loader = DataLoader(TensorDataset(x, y), batch_size=args.batch, shuffle=True,
                        pin_memory=on_device, drop_last=True)

    def dataloader_epoch():
        for xb, yb in loader:
            if on_device:
                xb = xb.cuda(non_blocking=True)
                yb = yb.cuda(non_blocking=True)

    xs_source, ys_source = (x.cuda(), y.cuda()) if on_device else (x, y)

    def randperm_epoch():
        order = torch.randperm(args.rows, device=args.device)
        xs, ys = xs_source[order], ys_source[order]
        for k in range(batches):
            xb = xs[k * args.batch:(k + 1) * args.batch]
            yb = ys[k * args.batch:(k + 1) * args.batch]

    names = (("torch_dataloader_pin_memory", "torch_gpu_randperm") if on_device else
             ("torch_dataloader", "torch_randperm"))
    seconds = {name: timed_epochs(run, args.epochs, synchronize)
               for name, run in zip(names, (dataloader_epoch, randperm_epoch))}
    if not on_device:
        json.dump({"seconds_per_epoch": seconds, "torch": torch.__version__,
                   "threads": torch.get_num_threads()}, sys.stdout)
        return 0
    peers = []
    for name, s in seconds.items():
        peers.append({"name": name, "seconds_per_epoch": s, "epochs_per_s": 1.0 / s,
                      "rows_per_s": batches * args.batch / s})
        print(f"{name}: {1.0 / s:.2f} epochs/s")
    with open(args.out, "w") as out:
        json.dump({"peers": peers, "torch": torch.__version__,
                   "device": torch.cuda.get_device_name(0), "rows": args.rows,
                   "batch": args.batch, "shape": [3, 32, 32], "dtype": "uint8"}, out, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
