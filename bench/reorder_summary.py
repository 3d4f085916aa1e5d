#!/usr/bin/env python3
"""Summarises the reorder step of scripts/gpu-check.sh: for each matrix and precision, the best
cuSPARSE time on the matrix as given, and each spmv algorithm's time with no reordering, RCM and the
degree order (product times include the permutations of x and y), as speed-ups over that cuSPARSE.

    python3 bench/reorder_summary.py OUT/reorder_s0_none.csv OUT/reorder_s0_rcm.csv ...

File names carry the run: reorder_s<shuffle>_<none|rcm|degree>.csv."""
import csv
import re
import sys
from collections import defaultdict


def main(paths):
    vendor = {}                     # (shuffle, matrix, precision) -> best cuSPARSE ms (any run)
    times = defaultdict(dict)       # (shuffle, matrix, precision, algorithm) -> {how: (ms, setup_ms)}
    for path in paths:
        m = re.search(r"reorder_s(\d+)_(\w+)\.csv$", path)
        if not m:
            sys.exit(f"{path}: expected a name reorder_s<shuffle>_<how>.csv")
        shuffle, how = m.group(1), m.group(2)
        with open(path, newline="") as f:
            for r in csv.DictReader(f):
                if r["verified"] != "ok" or not r["median_ms"]:
                    continue
                key = (shuffle, r["matrix"], r["precision"])
                ms = float(r["median_ms"])
                if r["vendor"] == "1":
                    vendor[key] = min(vendor.get(key, ms), ms)
                else:
                    times[key + (r["algorithm"],)][how] = (ms, float(r["setup_ms"] or 0), r["resolved"])
    hows = ["none", "rcm", "degree"]
    print("speed-up over the best cuSPARSE algorithm on the matrix as given (setup ms of the reordered plan)")
    print(f"{'shuffled':8} {'matrix':44} {'prec':4} {'algorithm':10} {'cusparse ms':>11} "
          + " ".join(f"{h:>18}" for h in hows))
    for key in sorted(times):
        shuffle, matrix, precision, algorithm = key
        base = vendor.get((shuffle, matrix, precision))
        if not base:
            continue
        cells = []
        for h in hows:
            if h in times[key]:
                ms, setup, _ = times[key][h]
                cells.append(f"{base / ms:6.2f}x ({setup:7.0f})")
            else:
                cells.append(f"{'-':>18}")
        print(f"{'yes' if shuffle != '0' else 'no':8} {matrix[:44]:44} {precision:4} {algorithm:10} {base:11.4f} "
              + " ".join(cells))


if __name__ == "__main__":
    main(sys.argv[1:])
