#!/usr/bin/env python3
"""Short table from a `spmv bench` CSV: per matrix and precision, the best cuSPARSE algorithm, what
Auto picked and its speed-up, and the fastest spmv algorithm overall (formats included)."""
import argparse
import csv
import math
from collections import OrderedDict

VENDOR = ("cusparse-", "eigen")


def pct(row):
    return float(row["pct_bandwidth"]) if row["pct_bandwidth"] else math.nan


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("csv", nargs="+")
    args = p.parse_args()
    groups = OrderedDict()
    for path in args.csv:
        with open(path) as f:
            for r in csv.DictReader(f):
                if r["verified"] != "ok" or r["block_size"]:
                    continue
                groups.setdefault((r["matrix"], r["precision"], r["op"]), []).append(r)
    print(f"{'matrix':<28} {'prec':<4} {'op':<2} {'vendor best':>18} {'auto (resolved)':>26} {'auto/vendor':>11}  fastest spmv")
    wins = total = 0
    for (matrix, prec, op), rows in groups.items():
        vendor = [r for r in rows if r["algorithm"].startswith(VENDOR)]
        auto = [r for r in rows if r["algorithm"] == "auto"]
        ours = [r for r in rows if not r["algorithm"].startswith(VENDOR) and r["algorithm"] != "auto"]
        if not vendor or not auto:
            continue
        v = min(vendor, key=lambda r: float(r["median_ms"]))
        a = auto[0]
        ratio = float(v["median_ms"]) / float(a["median_ms"])
        total += 1
        wins += ratio >= 1.0
        best = min(ours, key=lambda r: float(r["median_ms"])) if ours else None
        best_text = f"{best['algorithm']} {pct(best):.1f}%" if best else ""
        name = matrix if len(matrix) <= 28 else matrix[:25] + "..."
        print(f"{name:<28} {prec:<4} {op:<2} {v['algorithm'][9:] if v['algorithm'].startswith('cusparse-') else v['algorithm']:>12} {pct(v):4.1f}%"
              f" {a['resolved']:>19} {pct(a):5.1f}% {ratio:10.2f}x  {best_text}")
    print(f"auto at least as fast as the best vendor algorithm on {wins} of {total} (matrix, precision, op)")


if __name__ == "__main__":
    main()
