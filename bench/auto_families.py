#!/usr/bin/env python3
"""Auto's cross-validation on matrix families with swept parameters (issue 13, section 2).

  run   times every CUDA kernel Auto may choose and the cuSPARSE baselines on each family member
        (spmv bench, one CSV), stopping early when --budget seconds are spent (rerun to resume);
  fit   fits the constants of Auto's A*x rule (and which kernel each of its classes gets) on the even
        members of each family and reports Auto against the best cuSPARSE algorithm and against the
        per-matrix best of spmv's kernels on the odd members, which the fit never saw.

  python3 bench/auto_families.py run --spmv build-gpu/src/cli/spmv --out DIR [--budget 500]
  python3 bench/auto_families.py fit DIR/families.csv [--markdown]

Families (each sweeps one parameter; members alternate fit / test in sweep order):
  rowlen   uniform random columns, 1..512 per row, ~8 M nonzeros
  empty    75-98% empty rows (16 or 64 per nonempty row)
  skew     R-MAT power law, a = 0.45..0.70, and scale 14..21
  band     banded, half bandwidth 1..40 (column locality)
  size     poisson2d / poisson3d / stencil27 from 10^4 to 4*10^7 nonzeros
  longrow  a few long rows among short ones; circuit-like dense rows
  files    the SuiteSparse matrices of ../shared/matrices (sorted by name)
"""
import argparse
import csv
import math
import os
import subprocess
import sys
import time
from collections import defaultdict

# Kernels Auto may pick without a conversion hint, plus the formats (for the oracle column) and the
# vendor baselines. The slow seeds (csr-coop, pcsr, lightspmv) never win on Hopper (docs/PERFORMANCE.md).
ALGORITHMS = ("auto,csr-scalar,csr-vector,csr-adaptive,merge-path,hola,coo,ell,ellr,ellr-vector,dia,hyb,sell,"
              "cusparse-csr-alg1,cusparse-csr-alg2,cusparse-coo-alg1")
CSR_KERNELS = ["csr-scalar", "csr-vector", "csr-adaptive", "merge-path", "hola"]
VENDOR = ["cusparse-csr-alg1", "cusparse-csr-alg2", "cusparse-coo-alg1"]


def families():
    out = []
    target = 8_000_000
    for k in [1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 128, 256, 512]:
        n = max(target // k, 20_000)
        out.append(("rowlen", f"random_uniform:rows={n},cols={n},per_row={k},seed=3"))
    for per_row, fracs in [(16, [0.02, 0.05, 0.1, 0.15, 0.25, 0.35, 0.5]), (64, [0.03, 0.08, 0.2])]:
        for f in fracs:
            n = min(int(target / (per_row * f)), 16_000_000)
            out.append(("empty", f"mostly_empty:rows={n},cols={n},nonempty_fraction={f},per_row={per_row},seed=3"))
    for a in [0.45, 0.5, 0.55, 0.6, 0.65, 0.7]:
        b = round((1 - a) / 3, 4)
        out.append(("skew", f"rmat:scale=20,edge_factor=8,a={a},b={b},c={b},seed=3"))
    for s in [14, 16, 18, 21]:
        out.append(("skew", f"rmat:scale={s},edge_factor=16,seed=3"))
    for hb in [1, 2, 3, 5, 8, 12, 20, 40]:
        out.append(("band", f"banded:n={target // (2 * hb + 1)},half_bandwidth={hb},seed=3"))
    for n in [64, 128, 256, 512, 1024, 2048, 2800]:
        out.append(("size", f"poisson2d:n={n}"))
    for n in [16, 32, 64, 100, 160]:
        out.append(("size", f"poisson3d:n={n}"))
    for n in [8, 16, 32, 64, 90]:
        out.append(("size", f"stencil27:n={n}"))
    for count, length in [(1, 500000), (10, 100000), (100, 50000), (1000, 10000), (10000, 1000)]:
        out.append(("longrow", f"long_rows:rows=1000000,cols=1000000,long_rows={count},long_length={length},"
                               f"short_length=8,seed=3"))
    for d in [1, 4, 16, 64]:
        out.append(("longrow", f"dense_rows:n=1000000,dense_rows={d},dense_fraction=0.3,per_row=8,seed=3"))
    return out


def files(folder):
    if not os.path.isdir(folder):
        return []
    names = sorted(f for f in os.listdir(folder) if f.endswith((".mtx", ".mtx.gz")))
    return [("files", os.path.join(folder, f)) for f in names]


def member_split(entries):
    """Even members of each family fit, odd ones test (in sweep order)."""
    seen = defaultdict(int)
    split = {}
    for family, spec in entries:
        split[spec] = "fit" if seen[family] % 2 == 0 else "test"
        seen[family] += 1
    return split


def run(args):
    os.makedirs(args.out, exist_ok=True)
    table = os.path.join(args.out, "families.csv")
    done = set()
    if os.path.exists(table):
        with open(table) as f:
            done = {row["source"] for row in csv.DictReader(f)}
    entries = families() + files(args.matrices)
    start = time.time()
    bandwidth = args.bandwidth
    for i, (family, spec) in enumerate(entries):
        source = os.path.basename(spec) if family == "files" else spec
        if spec in done or source in done or any(source in d for d in done):
            continue
        if time.time() - start > args.budget:
            print(f"budget of {args.budget:.0f} s spent after {i} of {len(entries)} matrices; rerun to resume")
            return 3
        inp = [spec] if family == "files" else ["--gen", spec]
        cmd = [args.spmv, "bench", *inp, "--backend", "cuda", "--precision", "both", "--algo", ALGORITHMS,
               "--csv", table, "--reps", "7", "--warmup", "2", "--min-sample-ms", "0.5", "--quiet"]
        if bandwidth:
            cmd += ["--bandwidth", str(bandwidth)]
        t0 = time.time()
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if not bandwidth:
            for line in proc.stdout.splitlines():
                if "copy bandwidth" in line:
                    bandwidth = float(line.split("copy bandwidth")[1].split()[0])
        status = "ok" if proc.returncode == 0 else f"exit {proc.returncode}: {proc.stderr.strip()[-300:]}"
        print(f"[{i + 1}/{len(entries)}] {family:8s} {source[:70]:70s} {time.time() - t0:5.1f} s {status}",
              flush=True)
    return 0


# ---- fit -----------------------------------------------------------------------------------------

def load(path):
    """matrix -> precision -> {stats, times: algorithm -> median ms} (verified rows only)."""
    data = defaultdict(dict)
    with open(path) as f:
        for row in csv.DictReader(f):
            if row["op"] != "N" or row["backend"] != "cuda":
                continue
            entry = data[row["source"]].setdefault(row["precision"], {"times": {}, "resolved": {}})
            entry["stats"] = {k: float(row[k]) for k in ("rows", "cols", "nnz", "row_mean", "row_std", "row_max",
                                                         "empty_rows")}
            if row["verified"] == "ok" and row["median_ms"]:
                name = row["algorithm"]
                entry["times"][name] = min(float(row["median_ms"]), entry["times"].get(name, math.inf))
                entry["resolved"][name] = row["resolved"]
    return data


# Auto's A*x rule without a hint (src/cuda/dispatch.cu, choose_algorithm): classes from row statistics,
# each mapped to one kernel. `constants` holds the thresholds, `leaves` the kernel of each class.
CURRENT = {
    "constants": {"long_row_factor": 32.0, "few_huge_rows_cv": 20.0, "irregular_cv": 1.0, "scalar_max_mean": 8.0,
                  "small_nnz": 2 ** 18, "empty_fraction": 2.0},
    "leaves": {"small": "csr-vector", "few_huge": "csr-vector", "power_law": "hola", "irregular": "csr-adaptive",
               "empty": "csr-adaptive", "short": "csr-scalar", "long": "csr-vector"},
}


def classify(s, c):
    mean, std, rmax = s["row_mean"], s["row_std"], s["row_max"]
    if s["nnz"] < c["small_nnz"]:
        return "small"
    if rmax > c["long_row_factor"] * (mean + 1):
        return "few_huge" if std > c["few_huge_rows_cv"] * mean else "power_law"
    if s["empty_rows"] > c["empty_fraction"] * s["rows"]:
        return "empty"
    if std > c["irregular_cv"] * mean:
        return "irregular"
    return "short" if mean <= c["scalar_max_mean"] else "long"


def vendor_best(entry):
    times = [entry["times"][v] for v in VENDOR if v in entry["times"]]
    return min(times) if times else None


def speedups(data, names, rule):
    """(matrix, precision, class, choice, speed-up over best cuSPARSE, share of spmv's best CSR kernel)."""
    out = []
    for name in names:
        for precision, entry in sorted(data[name].items()):
            vb = vendor_best(entry)
            if vb is None or "stats" not in entry:
                continue
            cls = classify(entry["stats"], rule["constants"])
            choice = rule["leaves"][cls]
            t = entry["times"].get(choice)
            best = min((entry["times"][k] for k in CSR_KERNELS if k in entry["times"]), default=None)
            if t is None:  # the kernel failed or refused: count it as a tenth of cuSPARSE's speed
                out.append((name, precision, cls, choice, 0.1, 0.1))
            else:
                out.append((name, precision, cls, choice, vb / t, best / t if best else 1.0))
    return out


def hmean(values):
    values = [v for v in values if v > 0]
    return len(values) / sum(1 / v for v in values) if values else float("nan")


def score(results):
    # Harmonic mean of the speed-up, with losses below 1.0x counted twice: "no matrix below cuSPARSE".
    ratios = [r[4] for r in results]
    penalty = [min(r, 1.0) for r in ratios]
    return hmean(ratios + penalty)


def fit(data, names):
    grid = {
        "long_row_factor": [8, 16, 32, 64, 128],
        "few_huge_rows_cv": [5, 10, 20, 40],
        "irregular_cv": [0.5, 0.75, 1.0, 1.5, 2.0],
        "scalar_max_mean": [3, 4, 6, 8, 12, 16],
        "small_nnz": [2 ** 14, 2 ** 16, 2 ** 18, 2 ** 20],
        "empty_fraction": [0.25, 0.4, 0.5, 0.6, 0.75, 0.9, 2.0],
    }
    best_rule, best_score = None, -1
    keys = list(grid)

    def leaves_for(constants):
        # Each class takes the kernel with the best harmonic mean on the fit matrices that fall in it.
        by_class = defaultdict(list)
        for name in names:
            for entry in data[name].values():
                if vendor_best(entry) is not None and "stats" in entry:
                    by_class[classify(entry["stats"], constants)].append(entry)
        leaves = dict(CURRENT["leaves"])
        for cls, entries in by_class.items():
            def class_score(k):
                return hmean([vendor_best(e) / e["times"][k] if k in e["times"] else 0.1 for e in entries])
            leaves[cls] = max(CSR_KERNELS, key=class_score)
        return leaves

    def search(i, constants):
        nonlocal best_rule, best_score
        if i == len(keys):
            rule = {"constants": dict(constants), "leaves": leaves_for(constants)}
            s = score(speedups(data, names, rule))
            if s > best_score + 1e-9:
                best_rule, best_score = rule, s
            return
        for v in grid[keys[i]]:
            constants[keys[i]] = v
            search(i + 1, constants)

    search(0, {})
    return best_rule


def report(data, split, rule, label, markdown):
    print(f"\n## {label}")
    print("constants: " + ", ".join(f"{k}={v:g}" for k, v in rule["constants"].items()))
    print("classes:   " + ", ".join(f"{k}->{v}" for k, v in rule["leaves"].items()))
    for half in ("fit", "test"):
        names = [n for n in data if split.get(n) == half]
        res = speedups(data, names, rule)
        fams = defaultdict(list)
        for r in res:
            fams[family_of(r[0])].append(r)
        if markdown:
            print(f"\n| {half} half | matrices x precisions | Auto vs best cuSPARSE (hmean) | worst | below 1.0x |"
                  " Auto vs spmv's best CSR kernel (hmean) |")
            print("|---|---|---|---|---|---|")
        for fam in sorted(fams) + ["all"]:
            rows = res if fam == "all" else fams[fam]
            worst = min(rows, key=lambda r: r[4])
            line = (fam, len(rows), hmean([r[4] for r in rows]), worst[4], f"{worst[0][:40]} {worst[1]}",
                    sum(r[4] < 1.0 for r in rows), hmean([r[5] for r in rows]))
            if markdown:
                print(f"| {line[0]} | {line[1]} | {line[2]:.2f}x | {line[3]:.2f}x ({line[4]}) | {line[5]} |"
                      f" {line[6]:.2f} |")
            else:
                print(f"  {half:4s} {line[0]:8s} n={line[1]:3d} hmean {line[2]:.2f}x worst {line[3]:.2f}x"
                      f" ({line[4]}) below1 {line[5]} vs-own-best {line[6]:.2f}")


FAMILY = {}


def family_of(source):
    return FAMILY.get(source, "files")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run")
    r.add_argument("--spmv", required=True)
    r.add_argument("--out", required=True)
    r.add_argument("--budget", type=float, default=500, help="seconds; stops before the next matrix after it")
    r.add_argument("--bandwidth", type=float, default=None)
    here = os.path.dirname(os.path.abspath(__file__))
    r.add_argument("--matrices", default=os.environ.get("SPMV_MATRICES", os.path.join(here, "..", "..", "shared",
                                                                                      "matrices")))
    f = sub.add_parser("fit")
    f.add_argument("table")
    f.add_argument("--matrices", default="")
    f.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    if args.command == "run":
        return run(args)
    data = load(args.table)
    entries = families() + [("files", n) for n in sorted(k for k in data if k.endswith((".mtx", ".mtx.gz")))]
    for family, spec in entries:
        FAMILY[spec] = family
    split = member_split(entries)
    names_fit = [n for n in data if split.get(n) == "fit"]
    report(data, split, CURRENT, "current rule", args.markdown)
    fitted = fit(data, names_fit)
    report(data, split, fitted, "rule fitted on the fit half", args.markdown)
    return 0


if __name__ == "__main__":
    sys.exit(main())
