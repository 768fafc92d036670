#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 The resident authors
# SPDX-License-Identifier: Apache-2.0
"""Renders the benchmark JSON of one scripts/bench.sh run as PNG plots and a Markdown table.

    plot_bench.py [RESULTS_DIR] [--img DIR] [--readme FILE]

RESULTS_DIR defaults to the newest folder under benchmarks/results/ that holds bench_*.json.
The plots go to --img (default docs/img/): upload.png (GB/s against size, with the memcpy and
cudaMemcpy baselines), epoch.png (epoch throughput by shuffle mode against a contiguous copy,
and the PyTorch peers on GPU runs), preload_vs_stream.png (training steps/s by input
pipeline) and stream.png (streaming against its copy baselines). Every plot is titled with the
run's date and machine; runs without a GPU say "host only".

    plot_bench.py --peers EPOCH_JSON... [--img DIR]

renders peers.png alone: the shuffled host epoch against its peers (NumPy, PyTorch's two
idioms, the raw gather), quiet and with one core busy, one mark per file (a round of
bench_epoch's BM_HostEpochVsPeers; the files of one sitting), bars at the median. The table of headline figures is
written to <img>/performance.md and, with --readme (default benchmarks/README.md when --img is
the default), replaces the block between that file's performance-table markers
(<!-- performance-table:begin --> and <!-- performance-table:end -->).
"""
import argparse
import glob
import json
import os
import re
import sys


def ensure_matplotlib():
    """Re-runs under Debian's Python when this interpreter has no matplotlib."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        system = "/usr/bin/python3"
        if os.path.exists(system) and os.path.realpath(sys.executable) != os.path.realpath(system):
            os.execv(system, [system] + sys.argv)
        sys.exit("plot_bench: matplotlib is missing (apt-get install python3-matplotlib)")


ensure_matplotlib()
import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MARK_BEGIN = "<!-- performance-table:begin -->"
MARK_END = "<!-- performance-table:end -->"


def newest_results():
    folders = [d for d in glob.glob(os.path.join(ROOT, "benchmarks", "results", "*"))
               if os.path.isdir(d) and glob.glob(os.path.join(d, "bench_*.json"))]
    if not folders:
        sys.exit("plot_bench: no results folder with bench_*.json; run scripts/bench.sh first")
    return max(folders, key=os.path.basename)


def load(folder, name):
    path = os.path.join(folder, name + ".json")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


def runs(data, prefix):
    """Measured (not errored) iteration rows whose name starts with prefix."""
    if not data:
        return []
    return [b for b in data["benchmarks"] if b["name"].startswith(prefix)
            and not b.get("error_occurred") and b.get("run_type", "iteration") == "iteration"]


def describe(folder, data):
    """'<date>, <machine>' from the folder name and the JSON's context."""
    name = os.path.basename(os.path.normpath(folder))
    match = re.match(r"(\d{4}-\d{2}-\d{2})-(.*)", name)
    date, machine = (match.group(1), match.group(2)) if match else (name, "unknown machine")
    if data:
        machine += f" ({data['context']['num_cpus']} CPUs)"
    return date, machine


def title(ax, text, date, machine, gpu):
    ax.set_title(f"{text}\n{date}, {machine}" + ("" if gpu else ", host only"), fontsize=10)


def size_of(run):
    return int(re.search(r"/(?:bytes:)?(\d+)", run["name"]).group(1))


def plot_upload(data, date, machine, gpu, path):
    fig, ax = plt.subplots(figsize=(7, 4.5))
    host = sorted(runs(data, "BM_HostUploadVsMemcpy"), key=size_of)
    if host:
        sizes = [size_of(r) / 2**20 for r in host]
        ax.plot(sizes, [r["upload_GBps"] for r in host], "o-", label="resident upload (host)")
        ax.plot(sizes, [r["memcpy_GBps"] for r in host], "s--", label="malloc + memcpy (fresh)")
        ax.plot(sizes, [r["memcpy_warm_GBps"] for r in host], "^:", label="memcpy (touched)")
        if all("fresh_limit_GBps" in r for r in host):
            ax.plot(sizes, [r["fresh_limit_GBps"] for r in host], "v-.",
                    label="all-thread memcpy into fresh huge pages")
    for pinned, label in ((0, "pageable"), (1, "pinned")):
        device = sorted([r for r in runs(data, "BM_CudaUploadVsMemcpy")
                         if f"pinned_source:{pinned}" in r["name"]], key=size_of)
        if device:
            sizes = [size_of(r) / 2**20 for r in device]
            ax.plot(sizes, [r["upload_GBps"] for r in device], "o-",
                    label=f"resident upload (GPU, {label} source)")
            if pinned:
                ax.plot(sizes, [r["pinned_GBps"] for r in device], "k--",
                        label="cudaMemcpy from pinned")
                ax.plot(sizes, [r["naive_GBps"] for r in device], "k:",
                        label="cudaMemcpy from pageable")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("dataset size (MiB)")
    ax.set_ylabel("throughput (GB/s)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    title(ax, "Upload: one allocation, pipelined copy", date, machine, gpu)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def mode_of(run):
    return run.get("label", "").split(",")[0]


def plot_epoch(data, date, machine, gpu, path):
    groups = []
    for prefix, where in (("BM_HostEpoch", "host"), ("BM_CudaEpoch", "GPU")):
        for case in ("cifar_u8", "wide_f32"):
            gathered = [r for r in runs(data, f"{prefix}/{case}") if mode_of(r).startswith("samples")]
            if gathered:
                groups.append((f"{where} {case}", gathered))
    fig, ax = plt.subplots(figsize=(7, 4.5))
    x = 0
    ticks, labels = [], []
    for name, gathered in groups:
        copy = sum(r["copy_GBps"] for r in gathered) / len(gathered)
        bars = [("contiguous copy", copy)] + [(mode_of(r), r["bytes_per_second"] / 1e9)
                                             for r in gathered]
        for i, (label, value) in enumerate(bars):
            ax.bar(x + i, value, color=f"C{i}", label=label if name == groups[0][0] else None)
            ax.text(x + i, value, f"{value:.1f}", ha="center", va="bottom", fontsize=7)
        ticks.append(x + (len(bars) - 1) / 2)
        labels.append(name)
        x += len(bars) + 1
    peers = (data or {}).get("peers", {}).get("peers", [])
    if peers:
        row_bytes = 3 * 32 * 32
        for i, peer in enumerate(peers):
            ax.bar(x + i, peer["rows_per_s"] * row_bytes / 1e9, color=f"C{5 + i}",
                   label=peer["name"])
        ticks.append(x + (len(peers) - 1) / 2)
        labels.append("PyTorch peers (cifar_u8)")
    ax.set_xticks(ticks, labels, fontsize=8)
    ax.set_ylabel("epoch throughput (GB/s delivered)")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=8)
    title(ax, "Sample-shuffled epochs (gathered) against a contiguous copy\n"
          "(Shuffle::none and ::batches are zero-copy views, not shown)", date, machine, gpu)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


PEER_RATIOS = (("ratio_to_numpy", "NumPy fancy indexing"),
               ("ratio_to_torch_randperm", "PyTorch x[randperm] sliced"),
               ("ratio_to_torch_dataloader", "PyTorch DataLoader"),
               ("ratio_to_raw_gather", "raw gather (the memory limit)"))


def plot_peers(paths, path):
    """Ratios of BM_HostEpochVsPeers (peer's epoch time over resident's), quiet and loaded."""
    rounds = []
    for file in paths:
        with open(file) as f:
            rounds.append(json.load(f))
    cases = {}  # "quiet" / "one core busy" -> ratio name -> [one value per round]
    for data in rounds:
        for run in runs(data, "BM_HostEpochVsPeers"):
            load = run.get("label", "").split(",")[0]
            for key, _ in PEER_RATIOS:
                if key in run:
                    cases.setdefault(load, {}).setdefault(key, []).append(run[key])
    if not cases:
        sys.exit("plot_bench: no BM_HostEpochVsPeers runs in " + ", ".join(paths))
    date, machine = describe(os.path.dirname(os.path.abspath(paths[0])), rounds[0])
    fig, ax = plt.subplots(figsize=(7.5, 5.2))
    width = 0.8 / len(PEER_RATIOS)
    names = sorted(cases, key=lambda name: name != "quiet")
    for i, (key, label) in enumerate(PEER_RATIOS):
        for c, case in enumerate(names):
            values = sorted(cases[case].get(key, []))
            if not values:
                continue
            x = c + (i - (len(PEER_RATIOS) - 1) / 2) * width
            median = values[len(values) // 2]
            ax.bar(x, median, width, color=f"C{i}", label=label if c == 0 else None)
            ax.plot([x] * len(values), values, "k.", markersize=4)
            ax.text(x, median, f"{median:.2f}", ha="center", va="bottom", fontsize=7)
    ax.axhline(1.0, color="k", linewidth=0.8)
    ax.set_yscale("log")
    ax.set_xticks(range(len(names)), names)
    ax.set_ylabel("peer's epoch time / resident's (above 1: resident faster)")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.1), ncol=2)
    title(ax, f"Shuffled CIFAR epoch on the host against its peers, {len(rounds)} rounds "
          "(dots), bars at the median", date, machine, False)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def steps(run):
    return {k[len("steps_per_s_"):]: v for k, v in run.items() if k.startswith("steps_per_s_")}


def plot_preload(data, date, machine, gpu, path):
    panels = [(name, runs(data, prefix)) for name, prefix in
              (("host (OpenBLAS)", "BM_HostPreloadVsCollate"), ("GPU (cuBLAS)", "BM_CudaPreloadVsStream"))]
    panels = [(name, rows[0]) for name, rows in panels if rows]
    fig, axes = plt.subplots(1, max(len(panels), 1), figsize=(7 if len(panels) < 2 else 10, 4.5),
                             squeeze=False)
    for ax, (name, run) in zip(axes[0], panels):
        figures = steps(run)
        ax.bar(range(len(figures)), list(figures.values()), color=[f"C{i}" for i in range(len(figures))])
        for i, value in enumerate(figures.values()):
            ax.text(i, value, f"{value:.0f}", ha="center", va="bottom", fontsize=8)
        ax.set_xticks(range(len(figures)), list(figures.keys()), fontsize=8)
        ax.set_ylabel("training steps/s (batch 256, 3072 -> 256 GEMM)")
        ax.grid(True, axis="y", alpha=0.3)
        title(ax, f"Input pipeline, {name}", date, machine, gpu)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_stream(data, date, machine, gpu, path):
    fig, ax = plt.subplots(figsize=(7, 4.5))
    rows = [r for r in runs(data, "BM_") if "stream_GBps" in r and "wait_fraction" not in r]
    labels = []
    for i, run in enumerate(rows):
        baseline = [k for k in run if k.endswith("_GBps") and k != "stream_GBps"][0]
        ax.bar(3 * i, run["stream_GBps"], color="C0", label="streamed" if i == 0 else None)
        ax.bar(3 * i + 1, run[baseline], color="C1", label="baseline" if i == 0 else None)
        ax.text(3 * i + 1, run[baseline], baseline[:-5], ha="center", va="bottom", fontsize=7)
        labels.append(run["name"].split("/manual_time")[0].replace("BM_", ""))
    ax.set_xticks([3 * i + 0.5 for i in range(len(rows))], labels, fontsize=7, rotation=15)
    ax.set_ylabel("throughput (GB/s)")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=8)
    title(ax, "StreamingDataset against the copy it is made of", date, machine, gpu)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def table(folder, date, machine, gpu):
    lines = [f"Figures of {date}, {machine}" + ("" if gpu else " (host only: no GPU figures)") +
             f", from `{os.path.relpath(folder, ROOT)}`:", "",
             "| benchmark | figure | baseline (same run) | ratio |", "|---|---|---|---|"]
    batch = load(folder, "bench_batch_view")
    index = runs(batch, "BM_BatchViewIndex")
    collate = runs(batch, "BM_BatchCollateCopy")
    if index and collate:
        lines.append(f"| `batch(i)` | {index[0]['real_time']:.1f} ns | collating the batch "
                     f"{collate[0]['real_time']:.0f} ns | {collate[0]['real_time'] / index[0]['real_time']:.0f}x cheaper |")
    for run in runs(load(folder, "bench_upload"), "BM_"):
        if "upload_GBps" in run:
            ratios = ", ".join(f"`{k}` {v:.2f}" for k, v in run.items() if k.startswith("ratio_to_"))
            baselines = ", ".join(f"{k[:-5]} {v:.2f} GB/s" for k, v in run.items()
                                  if k.endswith("_GBps") and k != "upload_GBps")
            lines.append(f"| `{run['name'].split('/manual_time')[0]}` | upload {run['upload_GBps']:.2f} GB/s "
                         f"| {baselines} | {ratios} |")
    for run in runs(load(folder, "bench_epoch"), "BM_"):
        if mode_of(run).startswith("samples"):
            numpy = (f", NumPy {run['numpy_epochs_per_s']:.1f} epochs/s"
                     if "numpy_epochs_per_s" in run else "")
            numpy_ratio = (f", `ratio_to_numpy` {run['ratio_to_numpy']:.2f}"
                           if "ratio_to_numpy" in run else "")
            if "ratio_to_samples" in run:  # augmented: against plain samples epochs beside it, same conversion
                numpy += ", plain samples epochs (same conversion) in the same iterations"
                numpy_ratio += f", `ratio_to_samples` {run['ratio_to_samples']:.2f}"
            lines.append(f"| `{run['name'].split('/manual_time')[0]}` {mode_of(run)} | "
                         f"{run['bytes_per_second'] / 1e9:.2f} GB/s, {run['epochs_per_s']:.1f} epochs/s "
                         f"| copy {run['copy_GBps']:.2f} GB/s{numpy} "
                         f"| `ratio_to_copy` {run['ratio_to_copy']:.2f}{numpy_ratio} |")
    for run in runs(load(folder, "bench_stream"), "BM_"):
        if "ratio_to_preloaded" in run:  # the computing reader: against the preloaded compute
            lines.append(f"| `{run['name'].split('/manual_time')[0]}` | {run['real_time']:.1f} ms "
                         f"| preloaded {run['preloaded_ms']:.1f} ms "
                         f"| `ratio_to_preloaded` {run['ratio_to_preloaded']:.2f} |")
            continue
        baseline = [k for k in run if k.endswith("_GBps") and k != "stream_GBps"]
        ratio = [k for k in run if k.startswith("ratio_to_")]
        extra = f", `wait_fraction` {run['wait_fraction']:.3f}" if "wait_fraction" in run else ""
        lines.append(f"| `{run['name'].split('/manual_time')[0]}` | {run['stream_GBps']:.2f} GB/s | "
                     f"{baseline[0][:-5]} {run[baseline[0]]:.2f} GB/s | `{ratio[0]}` {run[ratio[0]]:.2f}{extra} |")
    for run in runs(load(folder, "bench_preload_vs_stream"), "BM_"):
        figures = ", ".join(f"{k} {v:.0f}" for k, v in steps(run).items())
        ratios = ", ".join(f"`{k}` {v:.2f}" for k, v in run.items() if k.startswith("ratio_"))
        lines.append(f"| `{run['name']}` | steps/s: {figures} | (in the figure) | {ratios} |")
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", nargs="?", metavar="RESULTS_DIR",
                        help="a scripts/bench.sh results folder (default: the newest under "
                             "benchmarks/results/)")
    parser.add_argument("--img", default=None,
                        help="folder for the plots and performance.md (default docs/img/)")
    parser.add_argument("--readme", default=None, metavar="FILE",
                        help="Markdown file whose performance-table block is replaced "
                             "(default benchmarks/README.md when --img is the default)")
    parser.add_argument("--peers", nargs="+", metavar="EPOCH_JSON",
                        help="render peers.png alone from these bench_epoch JSON files")
    args = parser.parse_args()
    img = os.path.abspath(args.img or os.path.join(ROOT, "docs", "img"))
    if args.peers:
        os.makedirs(img, exist_ok=True)
        plot_peers(args.peers, os.path.join(img, "peers.png"))
        print(f"plot_bench: {len(args.peers)} rounds -> {os.path.join(img, 'peers.png')}")
        return 0
    folder = os.path.abspath(args.results or newest_results())
    readme = args.readme or (os.path.join(ROOT, "benchmarks", "README.md")
                             if args.img is None else None)
    os.makedirs(img, exist_ok=True)

    upload = load(folder, "bench_upload")
    date, machine = describe(folder, upload or load(folder, "bench_epoch"))
    gpu = any(runs(load(folder, name), "BM_Cuda") for name in
              ("bench_upload", "bench_epoch", "bench_stream", "bench_preload_vs_stream"))
    plot_upload(upload, date, machine, gpu, os.path.join(img, "upload.png"))
    plot_epoch(load(folder, "bench_epoch"), date, machine, gpu, os.path.join(img, "epoch.png"))
    plot_preload(load(folder, "bench_preload_vs_stream"), date, machine, gpu,
                 os.path.join(img, "preload_vs_stream.png"))
    plot_stream(load(folder, "bench_stream"), date, machine, gpu, os.path.join(img, "stream.png"))
    text = table(folder, date, machine, gpu)
    with open(os.path.join(img, "performance.md"), "w") as f:
        f.write(text)
    if readme:
        with open(readme) as f:
            content = f.read()
        if MARK_BEGIN in content and MARK_END in content:
            head, rest = content.split(MARK_BEGIN, 1)
            _, tail = rest.split(MARK_END, 1)
            with open(readme, "w") as f:
                f.write(head + MARK_BEGIN + "\n" + text + MARK_END + tail)
    print(f"plot_bench: {folder} -> {img}" + (f" and {readme}" if readme else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
