#!/usr/bin/env python3
"""Issue 9's tuning table from `spmv bench --tune` logs (the `tune-summary,...` lines of bench_tune.cpp).

    python3 bench/tune_table.py LOG [LOG ...]

Prints one markdown row per (matrix, precision, expected applies): products to settle, the settled
choice's speed as a share of the exhaustive sweep's best (both re-timed side by side), Auto's and the
fixed rule's share, and the tuning cost in products' worth of the best; then a summary per hint.
"""
import csv
import sys

FIELDS = ["tag", "matrix", "precision", "hint", "applies", "samples", "tuned_ms", "best_ms", "sweep_best_ms",
          "auto_ms", "fixed_ms", "cost_ms", "choice", "best"]


def read(paths):
    rows = []
    for path in paths:
        with open(path) as f:
            for rec in csv.reader(line for line in f if line.startswith("tune-summary,")):
                rows.append(dict(zip(FIELDS, rec)))
    return rows


def share(best, other):
    return 100.0 * best / other if other > 0 else float("nan")


def main(paths):
    rows = read(paths)
    if not rows:
        sys.exit("tune_table.py: no tune-summary lines in " + " ".join(paths))
    print("| matrix | prec | hint | products to settle | settled on | tuned % of best | Auto % of best |"
          " fixed rule % of best | tuning cost (products of the best) | exhaustive best |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        best, tuned, fixed = float(r["best_ms"]), float(r["tuned_ms"]), float(r["fixed_ms"])
        fixed_share = f"{share(best, fixed):.1f}%" if fixed > 0 else "-"
        print(f"| {r['matrix']} | {r['precision']} | {r['hint']} | {r['applies']} | {r['choice'].split(' ', 1)[-1]} |"
              f" {share(best, tuned):.1f}% | {share(best, float(r['auto_ms'])):.1f}% | {fixed_share} |"
              f" {float(r['cost_ms']) / best:.1f} | {r['best']} ({best:.4f} ms) |")
    print()
    for hint in sorted({r["hint"] for r in rows}, key=int):
        sel = [r for r in rows if r["hint"] == hint]
        tuned = [share(float(r["best_ms"]), float(r["tuned_ms"])) for r in sel]
        auto = [share(float(r["best_ms"]), float(r["auto_ms"])) for r in sel]
        applies = [int(r["applies"]) for r in sel]
        below = [f"{r['matrix']} {r['precision']} {t:.1f}%" for r, t in zip(sel, tuned) if t < 95.0]
        print(f"hint {hint}: {len(sel)} studies; tuned >= 95% of the best on {len(sel) - len(below)}; "
              f"min {min(tuned):.1f}%, mean {sum(tuned) / len(tuned):.1f}% (Auto: min {min(auto):.1f}%, "
              f"mean {sum(auto) / len(auto):.1f}%); products to settle <= {max(applies)}"
              + (f"; below 95%: {', '.join(below)}" if below else ""))


if __name__ == "__main__":
    main(sys.argv[1:])
