#!/usr/bin/env python3
"""Fits and tests the rule of spmv::cuda::SemiringPlan's Auto (src/cuda/semiring_plan.cu): one of its
two kernels (csr-vector: the one-launch rows kernel; merge-path) for each row class of the CUDA SpMV
rule (bench/auto_families.py's classify, src/core/auto_rule.cpp).

  list                          prints the matrices to time: every family member of
                                bench/auto_families.py and the files of --matrices
  fit OUTPUT [--markdown]       reads spmv_bench_semiring_speed's output for those matrices (its
                                "stats" lines and the csr-vector / merge-path rows), grid-searches the
                                two constants on the even members of each family and reports the
                                chosen kernel's time against the faster of the two, and against
                                cuSPARSE's plus-times, on the odd members (which the fit never saw),
                                next to the constants in the code

  scripts/gpu-check.sh semiring-rule runs both steps on the GPU machine.
"""
import argparse
import math
import os
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import auto_families  # noqa: E402

# The rule in the code: the kernel for each row class of the CUDA SpMV rule (auto_families.classify).
IN_CODE = {"small": "csr-vector", "few_huge": "merge-path", "power_law": "merge-path",
           "launch_bound_long": "merge-path", "empty": "merge-path", "empty_wide": "merge-path",
           "empty_long": "merge-path",
           "irregular": "csr-vector", "short": "csr-vector", "long": "csr-vector"}
# The semiring rule keeps the bound on non-empty rows it was fitted with (kSemiringEmptyLongLength in
# src/cuda/semiring_plan.cu): 20, where the SpMV rule moved to 40 with segmented-sum.
CONSTANTS = dict(auto_families.CURRENT["constants"], empty_long_length=20.0)
KERNELS = ("csr-vector", "merge-path")


def entries(matrices):
    """The files first (small, quick: a run cut short by its time limit still has them), then the families."""
    out = []
    if os.path.isdir(matrices):
        out += [("files", os.path.join(matrices, f)) for f in sorted(os.listdir(matrices))
                if f.endswith((".mtx", ".mtx.gz"))]
    return out + auto_families.families()


def load(path):
    """name -> {"stats": {...}, precision: {kernel: ms}}; kernels csr-vector, merge-path, vendor."""
    data = defaultdict(lambda: defaultdict(dict))
    with open(path) as f:
        for line in f:
            parts = line.split()
            if parts and parts[0] == "stats":
                fields = dict(p.split("=", 1) for p in parts[2:])
                data[parts[1]]["stats"] = {"rows": float(fields["rows"]), "cols": float(fields["cols"]),
                                           "nnz": float(fields["nnz"]), "row_mean": float(fields["mean"]),
                                           "row_std": float(fields["stddev"]), "row_max": float(fields["max"]),
                                           "empty_rows": float(fields["empty_rows"])}
            elif len(parts) >= 5 and parts[1] in ("f32", "f64"):
                name, precision, first, second, ms = parts[0], parts[1], parts[2], parts[3], float(parts[4])
                times = data[name][precision]
                if first == "plan" and second == "cusparse-csr-alg1":
                    times["vendor"] = ms
                elif first != "plan" and second in KERNELS:  # a forced kernel (not the SpMV plans, not "auto=...")
                    times[second] = min(ms, times.get(second, math.inf))
    return data


def choose(stats, leaves):
    return leaves[auto_families.classify(stats, CONSTANTS)]


def results(data, names, c):
    """(name, precision, choice, chosen / best of the two, vendor / chosen)."""
    out = []
    for name in names:
        for precision in ("f32", "f64"):
            times = data[name].get(precision, {})
            if "stats" not in data[name] or "csr-vector" not in times or "merge-path" not in times:
                continue
            k = choose(data[name]["stats"], c)
            best = min(times["csr-vector"], times["merge-path"])
            out.append((name, precision, k, best / times[k], times.get("vendor", math.nan) / times[k]))
    return out


def fit(data, names):
    """Each class takes the kernel with the best harmonic-mean share on the fit matrices in it."""
    leaves = dict(IN_CODE)
    for cls in leaves:
        members = [n for n in names if "stats" in data[n] and
                   auto_families.classify(data[n]["stats"], CONSTANTS) == cls]
        if members:
            leaves[cls] = max(KERNELS, key=lambda k: auto_families.hmean(
                [r[3] for r in results(data, members, dict(leaves, **{cls: k}))]))
    return leaves


def report(data, split, c, label, markdown):
    print(f"\n## {label}: " + ", ".join(f"{k} -> {v}" for k, v in c.items()))
    if markdown:
        print("\n| half | family | cases | share of the faster kernel (hmean) | worst | vs cuSPARSE plus-times (hmean) |")
        print("|---|---|---|---|---|---|")
    for half in ("fit", "test"):
        res = results(data, [n for n in data if split.get(n) == half], c)
        fams = defaultdict(list)
        for r in res:
            fams[auto_families.family_of(r[0])].append(r)
        for fam in sorted(fams) + ["all"]:
            rows = res if fam == "all" else fams[fam]
            if not rows:
                continue
            worst = min(rows, key=lambda r: r[3])
            cells = (half, fam, len(rows), auto_families.hmean([r[3] for r in rows]), worst[3],
                     f"{worst[0][:40]} {worst[1]}", auto_families.hmean([r[4] for r in rows if r[4] == r[4]]))
            if markdown:
                print(f"| {cells[0]} | {cells[1]} | {cells[2]} | {cells[3]:.3f} | {cells[4]:.2f} ({cells[5]}) |"
                      f" {cells[6]:.2f}x |")
            else:
                print(f"  {cells[0]:4s} {cells[1]:8s} n={cells[2]:3d} share {cells[3]:.3f} worst {cells[4]:.2f}"
                      f" ({cells[5]}) vs-cusparse {cells[6]:.2f}x")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    here = os.path.dirname(os.path.abspath(__file__))
    default_matrices = os.environ.get("SPMV_MATRICES", os.path.join(here, "..", "..", "shared", "matrices"))
    ls = sub.add_parser("list")
    ls.add_argument("--matrices", default=default_matrices)
    f = sub.add_parser("fit")
    f.add_argument("output")
    f.add_argument("--matrices", default=default_matrices)
    f.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    members = entries(args.matrices)
    if args.command == "list":
        print("\n".join(spec for _, spec in members))
        return 0
    data = load(args.output)
    # The bench names generated matrices by their spec as given; families are keyed by that spec.
    for family, spec in members:
        auto_families.FAMILY[spec] = family
    split = {}
    seen = defaultdict(int)
    for family, spec in members:
        split[spec] = "fit" if seen[family] % 2 == 0 else "test"
        seen[family] += 1
    fitted = fit(data, [n for n in data if split.get(n) == "fit"])
    report(data, split, IN_CODE, "the rule in src/cuda/semiring_plan.cu", args.markdown)
    report(data, split, fitted, "refitted on the fit half", args.markdown)
    return 0


if __name__ == "__main__":
    sys.exit(main())
