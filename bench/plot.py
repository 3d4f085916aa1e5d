#!/usr/bin/env python3
"""GFLOP/s against mean row length, one point per (matrix, algorithm), from a `spmv bench` CSV.

Writes one PNG per (backend, precision, operation) found in the CSV:
    gflops_<backend>_<precision>_<N|T>.png
Only verified rows count ("verified" == "ok"). When a matrix/algorithm pair appears several times
(--sweep block sizes, repeated runs appended to one file) the fastest is plotted: the question the
plot answers is how fast each algorithm can go on each kind of matrix. Points are not joined: the
matrices are unrelated, and a line between them would suggest an interpolation that does not exist.

With profiler columns (spmv bench --profile), also one PNG per metric and (backend, precision, op):
    profile_<metric>_<backend>_<precision>_<N|T>.png
the metric (y, percent) per algorithm (x), one marker per matrix.

usage: bench/plot.py results/suite.csv [--out DIR] [--device SUBSTRING]
"""
import argparse
import csv
import math
import os
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")  # files only: no display on benchmark machines
import matplotlib.pyplot as plt  # noqa: E402


def read_rows(path, device_filter):
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        required = {"matrix", "row_mean", "algorithm", "gflops", "verified", "precision", "op", "backend"}
        missing = required - set(reader.fieldnames or [])
        if missing:
            sys.exit(f"plot.py: {path} is not a spmv bench CSV (missing columns: {', '.join(sorted(missing))})")
        for row in reader:
            if row["verified"] != "ok" or not row["gflops"]:
                continue
            if device_filter and device_filter not in row.get("device", ""):
                continue
            yield row


PROFILE_METRICS = {
    "achieved_occupancy": "achieved occupancy (% of peak warps)",
    "warp_efficiency": "warp execution efficiency (% active lanes)",
    "global_load_efficiency": "global load efficiency (% of sector bytes used)",
    "l2_hit_rate": "L2 hit rate (% of sectors)",
    "dram_throughput": "DRAM throughput (% of peak)",
    "l2_throughput": "L2 sector throughput (% of peak)",
    "l2_requests": "L2 requests (% of peak)",
}


def plot_profiles(path, device_filter, out):
    """One PNG per profiler metric: the metric per algorithm, a marker per matrix."""
    # (backend, precision, op) -> metric -> algorithm -> matrix -> value
    groups = defaultdict(lambda: defaultdict(lambda: defaultdict(dict)))
    for row in read_rows(path, device_filter):
        for metric in PROFILE_METRICS:
            value = row.get(metric, "")
            if value:
                groups[(row["backend"], row["precision"], row["op"])][metric][row["algorithm"]][row["matrix"]] = \
                    float(value)
    for (backend, precision, op), metrics in sorted(groups.items()):
        for metric, algorithms in sorted(metrics.items()):
            names = sorted(algorithms)
            matrices = sorted({m for values in algorithms.values() for m in values})
            fig, ax = plt.subplots(figsize=(max(6, 0.6 * len(names) + 3), 5))
            for j, matrix in enumerate(matrices):
                xs = [i for i, a in enumerate(names) if matrix in algorithms[a]]
                ys = [algorithms[names[i]][matrix] for i in xs]
                ax.scatter(xs, ys, label=matrix[:40], marker="osD^v<>phX*P"[j % 11], color=f"C{j % 10}", s=30)
            ax.set_xticks(range(len(names)))
            ax.set_xticklabels(names, rotation=45, ha="right", fontsize=8)
            ax.set_ylabel(PROFILE_METRICS[metric])
            ax.set_ylim(0, 105)
            ax.set_title(f"{backend} {precision} {op}: {metric}")
            ax.grid(True, axis="y", alpha=0.3)
            ax.legend(fontsize=7, loc="best")
            fig.tight_layout()
            file = os.path.join(out, f"profile_{metric}_{backend}_{precision}_{op}.png")
            fig.savefig(file, dpi=120)
            plt.close(fig)
            print(file)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv", help="CSV written by spmv bench --csv (or bench/run_suite.sh)")
    parser.add_argument("--out", default=None, help="folder for the PNG files (default: beside the CSV)")
    parser.add_argument("--device", default="", help="only rows whose device contains this text")
    args = parser.parse_args()

    # (backend, precision, op) -> algorithm -> matrix -> (row_mean, best GFLOP/s)
    groups = defaultdict(lambda: defaultdict(dict))
    vendors = set()
    for row in read_rows(args.csv, args.device):
        key = (row["backend"], row["precision"], row["op"])
        mean, gflops = float(row["row_mean"]), float(row["gflops"])
        if mean <= 0 or not math.isfinite(gflops):
            continue  # an empty matrix has no place on a log axis
        algorithm = row["algorithm"]
        if row.get("vendor") == "1":
            vendors.add(algorithm)
        best = groups[key][algorithm].get(row["matrix"])
        if best is None or gflops > best[1]:
            groups[key][algorithm][row["matrix"]] = (mean, gflops)

    if not groups:
        sys.exit(f"plot.py: no verified rows in {args.csv}")
    out = args.out or os.path.dirname(os.path.abspath(args.csv))
    os.makedirs(out, exist_ok=True)

    markers = "osD^v<>phX*P"
    for (backend, precision, op), algorithms in sorted(groups.items()):
        fig, ax = plt.subplots(figsize=(9, 5.5))
        for i, (algorithm, points) in enumerate(sorted(algorithms.items())):
            xs, ys = zip(*sorted(points.values()))
            vendor = algorithm in vendors
            ax.scatter(xs, ys, label=algorithm + (" (vendor)" if vendor else ""), marker=markers[i % len(markers)],
                       s=40 if vendor else 28, facecolors="none" if vendor else None,
                       edgecolors=f"C{i % 10}", color=f"C{i % 10}", linewidths=1.4)
        ax.set_xscale("log")
        ax.set_xlabel("mean nonzeros per row (log)")
        ax.set_ylabel("GFLOP/s (2 nnz / median time)")
        operation = "y = alpha A^T x + beta y" if op == "T" else "y = alpha A x + beta y"
        ax.set_title(f"{backend} {precision}: {operation}")
        ax.grid(True, which="both", alpha=0.3)
        ax.set_ylim(bottom=0)
        ax.legend(fontsize=8, ncol=2, loc="best")
        fig.tight_layout()
        path = os.path.join(out, f"gflops_{backend}_{precision}_{op}.png")
        fig.savefig(path, dpi=120)
        plt.close(fig)
        print(path)
    plot_profiles(args.csv, args.device, out)


if __name__ == "__main__":
    main()
