#!/usr/bin/env python3
"""Fit and check the CPU semiring product's Auto rule (src/cpu/semiring_multiply.cpp) from the RESULT
lines of spmv_bench_semiring_cpu_kernels (docs/SEMIRINGS.md, "The CPU kernels on power-law rows").

    semiring_cpu_rule.py --fit FIT_RUN.txt... --test TEST_RUN.txt... [--markdown]

Each file is one process's output. A kernel's time on a matrix is the fastest sample over all the
processes (--estimator min: another program on the machine can only add time), or the median of the
processes' medians (--estimator median); the table also gives the range of the per-process ratios. The rule is: on more than one thread, the merge-path kernel when
the heaviest 512-row chunk holds more than SHARE of a thread's rows + nonzeros, or when the matrix holds
at least NNZ nonzeros; else the row loop. SHARE and NNZ are chosen on the fit files alone (grid over
the midpoints between the observed values, and "never"), maximising the harmonic mean over the fit
cases of (time of the faster kernel / time of the chosen one); ties go to the larger size bound, then
the larger share (the row loop). The test files, which the fit never saw, are then scored with the chosen constants.
"""
import argparse
import collections
import math
import statistics

ESTIMATOR = "min"  # set by --estimator


def read(paths):
    """{(matrix, threads, semiring): case}, the processes' medians and samples gathered."""
    cases = {}
    for path in paths:
        for line in open(path):
            if not line.startswith("RESULT "):
                continue
            kv = dict(item.split("=", 1) for item in line.split()[1:])
            key = (kv["matrix"], int(kv["threads"]), kv["semiring"])
            case = cases.setdefault(key, {"rows": [], "merge": [], "rows_range": [], "merge_range": [],
                                          "share": float(kv["share"]), "nnz": int(kv["nnz"]),
                                          "check": []})
            r = [float(v) for v in kv["rows_ms"].split(",")]
            m = [float(v) for v in kv["merge_ms"].split(",")]
            case["rows"].append(r[0] if ESTIMATOR == "min" else r[1])
            case["merge"].append(m[0] if ESTIMATOR == "min" else m[1])
            case["rows_range"] += [r[0], r[2]]
            case["merge_range"] += [m[0], m[2]]
            case["check"].append(kv["check"])
    pick = min if ESTIMATOR == "min" else statistics.median
    for case in cases.values():
        case["t_rows"] = pick(case["rows"])
        case["t_merge"] = pick(case["merge"])
    return cases


def chooses_merge(case, threads, share, nnz):
    return threads > 1 and (case["share"] > share or case["nnz"] >= nnz)


def score(cases, share, nnz):
    """(hmean of best / chosen, worst, its key) over the cases."""
    ratios = []
    for key, c in cases.items():
        chosen = c["t_merge"] if chooses_merge(c, key[1], share, nnz) else c["t_rows"]
        ratios.append((min(c["t_rows"], c["t_merge"]) / chosen, key))
    if not ratios:
        return 1.0, 1.0, None
    hmean = len(ratios) / sum(1 / r for r, _ in ratios)
    worst = min(ratios)
    return hmean, worst[0], worst[1]


def midpoints(values):
    v = sorted(set(values))
    return [(a + b) / 2 for a, b in zip(v, v[1:])] + [math.inf]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--fit", nargs="+", required=True)
    p.add_argument("--test", nargs="+", required=True)
    p.add_argument("--markdown", action="store_true", help="print the per-case table as Markdown")
    p.add_argument("--rule", nargs=2, type=float, metavar=("SHARE", "NNZ"),
                   help="score this rule (the constants kept in the code) instead of the fitted one")
    p.add_argument("--estimator", choices=["min", "median"], default="min",
                   help="a kernel's time on a matrix: the fastest sample of all processes (default: other "
                        "programs on the machine only add time), or the median of the processes' medians")
    args = p.parse_args()
    global ESTIMATOR
    ESTIMATOR = args.estimator
    fit, test = read(args.fit), read(args.test)
    multi = {k: c for k, c in fit.items() if k[1] > 1}
    best = None
    for share in midpoints(c["share"] for c in multi.values()):
        for nnz in midpoints(c["nnz"] for c in multi.values()):
            h = score(multi, share, nnz)[0]
            # Ties (within 1e-9) keep the larger size bound, then the larger share: the row loop on small
            # matrices unless one chunk outweighs the other threads' work.
            if best is None or h > best[0] + 1e-9 or (abs(h - best[0]) <= 1e-9 and (nnz, share) > (best[2], best[1])):
                best = (h, share, nnz)
    h_best, share, nnz = best
    print(f"fitted: merge-path on more than one thread when chunk share > {share:.4g} or nnz >= {nnz:.4g} "
          f"(fit hmean {h_best:.3f})")
    # The gaps of equally good thresholds: any value between the observed ones bracketing them fits as well.
    tied_nnz = [n for n in midpoints(c["nnz"] for c in multi.values())
                if any(abs(score(multi, sh, n)[0] - h_best) <= 1e-9
                       for sh in midpoints(c["share"] for c in multi.values()))]
    tied_share = [sh for sh in midpoints(c["share"] for c in multi.values())
                  if abs(score(multi, sh, nnz)[0] - h_best) <= 1e-9]
    print(f"  as good: nnz bound {min(tied_nnz):.6g} .. {max(tied_nnz):.6g}; with nnz >= {nnz:.6g}, share bound "
          f"{min(tied_share):.4g} .. {max(tied_share):.4g} (midpoints of observed values)")
    if args.rule:
        share, nnz = args.rule
        print(f"scored: chunk share > {share:.4g} or nnz >= {nnz:.6g} (fit hmean {score(multi, share, nnz)[0]:.3f})")
    for name, cases in (("fit", fit), ("test", test)):
        for threads in sorted({k[1] for k in cases}):
            sub = {k: c for k, c in cases.items() if k[1] == threads}
            h, w, wk = score(sub, share, nnz)
            rows_only = score(sub, math.inf, math.inf)
            merge_only = score(sub, -1, -1) if threads > 1 else rows_only
            print(f"{name:4s} threads={threads} cases={len(sub):3d} rule {h:.3f} (worst {w:.2f}: {wk and wk[0]} "
                  f"{wk and wk[2]}); always row loop {rows_only[0]:.3f}; always merge-path {merge_only[0]:.3f}")
    bad = [k for k, c in list(fit.items()) + list(test.items()) if any(x != "agree" for x in c["check"])]
    if bad:
        print("kernels DIFFER on:", bad)
    if args.markdown:
        # One row per matrix and thread count: row loop / merge-path time (the estimator's) for each
        # semiring, the ratio's range over the processes (same estimator per process), and the rule's choice.
        sems = sorted({k[2] for k in list(fit) + list(test)}, key=["min-plus", "or-and", "plus-times"].index)
        print()
        print("| half | matrix | nnz | chunk share (2 thr.) | threads | " +
              " | ".join(f"{s_}: row loop / merge-path ms (ratio, range)" for s_ in sems) + " | Auto |")
        print("|---|---|---|---|---|" + "---|" * len(sems) + "---|")
        for name, cases in (("fit", fit), ("test", test)):
            for matrix, threads in sorted({(k[0], k[1]) for k in cases}):
                cells = []
                for s_ in sems:
                    c = cases.get((matrix, threads, s_))
                    if c is None:
                        cells.append("")
                        continue
                    ratios = [r / m for r, m in zip(c["rows"], c["merge"])]
                    cells.append(f"{c['t_rows']:.3g} / {c['t_merge']:.3g} ({c['t_rows'] / c['t_merge']:.2f}, "
                                 f"{min(ratios):.2f}–{max(ratios):.2f})")
                c = cases[(matrix, threads, sems[0])]
                two = cases.get((matrix, 2, sems[0]), c)["share"]
                rule = "merge-path" if chooses_merge(c, threads, share, nnz) else "row loop"
                label = matrix.replace("/work/shared/matrices/", "").replace(".mtx.gz", "")
                print(f"| {name} | {label} | {c['nnz']} | {two:.3f} | {threads} | " + " | ".join(cells) +
                      f" | {rule} |")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
