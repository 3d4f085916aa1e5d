#!/usr/bin/env python3
"""Summarises `spmv bench --k K --csv FILE` rows (issue 11, SpMM): per matrix, precision and k, spmv's
SpMM time against the fastest baseline row of the same run (cusparseSpMM on CUDA, k SpMV products on the
CPU), then the harmonic mean of the speed-ups per (k, precision) and over everything.

    python3 bench/spmm_summary.py spmm.csv [more.csv ...]

k and the layout are the first words of each row's policy ("k=8 row-major; ..."). A speed-up counts only
when spmv's row was verified; a (matrix, precision, k) whose baseline rows all failed or were skipped
is listed with '-'.
"""
import csv
import statistics
import sys
from collections import defaultdict


def k_of(policy):
    head = policy.split(";")[0].split()
    return int(head[0][2:]) if head and head[0].startswith("k=") else None


def main(paths):
    cases = defaultdict(dict)  # (matrix, precision, k, op) -> {"spmm": row, "baseline": best row}
    for path in paths:
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                k = k_of(row.get("policy", ""))
                if k is None or row.get("verified") != "ok":
                    continue
                key = (row["matrix"], row["precision"], k, row["op"])
                ms = float(row["median_ms"])
                if row["algorithm"] == "spmm":
                    cases[key]["spmm"] = (ms, float(row["gbs"]))
                else:
                    best = cases[key].get("baseline")
                    if best is None or ms < best[0]:
                        cases[key]["baseline"] = (ms, float(row["gbs"]), row["algorithm"])
    if not cases:
        print("no SpMM rows found")
        return 1
    print(f"{'matrix':44} {'prec':4} {'op':2} {'k':>3} {'spmm GB/s':>10} {'base GB/s':>10} {'speed-up':>8}  baseline")
    groups = defaultdict(list)
    for key in sorted(cases):
        c = cases[key]
        matrix, precision, k, op = key
        if "spmm" in c and "baseline" in c:
            speedup = c["baseline"][0] / c["spmm"][0]
            groups[(k, precision)].append(speedup)
            print(f"{matrix[:44]:44} {precision:4} {op:2} {k:>3} {c['spmm'][1]:>10.1f} {c['baseline'][1]:>10.1f} "
                  f"{speedup:>7.2f}x  {c['baseline'][2]}")
        else:
            print(f"{matrix[:44]:44} {precision:4} {op:2} {k:>3} {'-':>10} {'-':>10} {'-':>8}")
    print()
    print("harmonic mean of spmm / best baseline (target: >= 1.2 for k = 4, 8, 32 on the H200):")
    everything = []
    for (k, precision) in sorted(groups):
        values = groups[(k, precision)]
        everything += values
        print(f"  k={k:<3} {precision}: {statistics.harmonic_mean(values):.2f}x over {len(values)} matrices "
              f"(min {min(values):.2f}x, max {max(values):.2f}x)")
    print(f"  all: {statistics.harmonic_mean(everything):.2f}x over {len(everything)} cases")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
