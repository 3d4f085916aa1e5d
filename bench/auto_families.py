#!/usr/bin/env python3
"""Auto's cross-validation on matrix families with swept parameters (issue 13, section 2).

  run   times every CUDA kernel Auto may choose and the cuSPARSE baselines on each family member
        (spmv bench, one CSV), stopping early when --budget seconds are spent (rerun to resume);
  fit   reports Auto's A*x rule (before and after the fit, without and with expected products) against
        the best cuSPARSE algorithm and against the per-matrix best of spmv's kernels, on the even
        members of each family (the fit half) and on the odd members (the test half, which the fit
        never saw); then refits the constants and class kernels on the fit half (grid search) so that
        a drift between the data and the rule in the code shows.

  python3 bench/auto_families.py run --spmv build-gpu/src/cli/spmv --out DIR [--budget 500]
  python3 bench/auto_families.py fit DIR/families.csv [--markdown]

Families (each sweeps one parameter; members alternate fit / test in sweep order):
  rowlen   uniform random columns, 1..512 per row, ~8 M nonzeros
  empty    50-98% empty rows, 16 to 64 per nonempty row
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
ALGORITHMS = ("auto,csr-scalar,csr-vector,csr-adaptive,merge-path,hola,segmented-sum,coo,ell,ellr,ellr-vector,dia,"
              "hyb,sell,cusparse-csr-alg1,cusparse-csr-alg2,cusparse-coo-alg1")
CSR_KERNELS = ["csr-scalar", "csr-vector", "csr-adaptive", "merge-path", "hola", "segmented-sum"]
VENDOR = ["cusparse-csr-alg1", "cusparse-csr-alg2", "cusparse-coo-alg1"]


def families():
    out = []
    target = 8_000_000
    for k in [1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 128, 256, 512]:
        n = max(target // k, 20_000)
        out.append(("rowlen", f"random_uniform:rows={n},cols={n},per_row={k},seed=3"))
    for per_row, fracs in [(16, [0.02, 0.05, 0.1, 0.15, 0.25, 0.35, 0.5]), (24, [0.1, 0.25]), (32, [0.1, 0.25]),
                           (48, [0.1, 0.25]), (64, [0.03, 0.08, 0.1, 0.2, 0.25])]:
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


def canonical(spec):
    """spmv bench names a generated matrix KIND:key=value,... with the keys sorted."""
    kind, _, params = spec.partition(":")
    return kind + ":" + ",".join(sorted(params.split(","))) if params else spec


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
        split[canonical(spec)] = "fit" if seen[family] % 2 == 0 else "test"
        seen[family] += 1
    return split


def run(args):
    os.makedirs(args.out, exist_ok=True)
    table = os.path.join(args.out, "families.csv")
    done = set()
    if os.path.exists(table):
        with open(table) as f:
            done = {row["source"] for row in csv.DictReader(f)}
    entries = [e for e in families() + files(args.matrices) if not args.families or e[0] in args.families]
    start = time.time()
    bandwidth = args.bandwidth
    for i, (family, spec) in enumerate(entries):
        source = os.path.basename(spec) if family == "files" else canonical(spec)
        if source in done or any(d.endswith("/" + source) for d in done):
            continue
        if time.time() - start > args.budget:
            print(f"budget of {args.budget:.0f} s spent after {i} of {len(entries)} matrices; rerun to resume")
            return 3
        inp = [spec] if family == "files" else ["--gen", spec]
        cmd = [args.spmv, "bench", *inp, "--backend", "cuda", "--precision", "both", "--algo", args.algo,
               "--csv", table, "--reps", "7", "--warmup", "2", "--min-sample-ms", "0.5", "--quiet"]
        if bandwidth:
            cmd += ["--bandwidth", str(bandwidth)]
        if args.expected_applies:
            cmd += ["--expected-applies", str(args.expected_applies)]
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
            entry = data[row["source"]].setdefault(row["precision"], {"times": {}, "resolved": {}, "setup": {}})
            entry["stats"] = {k: float(row[k] or "nan") for k in ("rows", "cols", "nnz", "row_mean", "row_std",
                                                                  "row_max", "empty_rows", "diagonals",
                                                                  "ell_padding")}
            if row["verified"] == "ok" and row["median_ms"]:
                name = row["algorithm"]
                entry["times"][name] = min(float(row["median_ms"]), entry["times"].get(name, math.inf))
                entry["resolved"][name] = row["resolved"]
                entry["setup"][name] = float(row["setup_ms"] or 0)
    return data


# Auto's A*x rule without a hint (src/core/auto_rule.cpp): classes from row statistics, each mapped to
# one kernel. `constants` holds the thresholds, `leaves` the kernel of each class. PREVIOUS is the rule
# before this fit (for the report).
CURRENT = {
    "constants": {"long_row_factor": 128.0, "few_huge_rows_cv": 18.0, "irregular_cv": 0.5, "scalar_max_mean": 6.0,
                  "small_nnz": 2 ** 16, "empty_fraction": 0.9, "empty_long_length": 40.0,
                  "mostly_empty_vector_length": 32.0},
    "leaves": {"small": "csr-vector", "few_huge": "csr-vector", "power_law": "segmented-sum", "irregular": "csr-vector",
               "empty": "merge-path", "empty_wide": "csr-vector", "empty_long": "segmented-sum", "short": "csr-scalar",
               "long": "csr-vector", "launch_bound_long": "csr-vector"},
}
PREVIOUS = {
    "constants": {"long_row_factor": 128.0, "few_huge_rows_cv": 18.0, "irregular_cv": 0.5, "scalar_max_mean": 6.0,
                  "small_nnz": 2 ** 16, "empty_fraction": 0.9, "empty_long_length": 40.0,
                  "mostly_empty_vector_length": math.inf},
    "leaves": {"small": "csr-vector", "few_huge": "csr-vector", "power_law": "segmented-sum", "irregular": "csr-vector",
               "empty": "merge-path", "empty_wide": "csr-vector", "empty_long": "segmented-sum", "short": "csr-scalar",
               "long": "csr-vector", "launch_bound_long": "csr-vector"},
}


# csr-vector's kGroupEmptyFraction (src/cuda/csr_vector.cu): not fitted here.
GROUP_EMPTY_FRACTION = 0.5
LAUNCH_BOUND_NNZ = 2 ** 20
LAUNCH_BOUND_EMPTY_LONG_LENGTH = 20.0


def classify(s, c):
    mean, std, rmax = s["row_mean"], s["row_std"], s["row_max"]
    if s["nnz"] < c["small_nnz"]:
        return "small"
    if rmax > c["long_row_factor"] * (mean + 1):
        if std > c["few_huge_rows_cv"] * mean:
            return "few_huge"
        # kLaunchBoundNnz (src/core/auto_rule.hpp): csr-vector's one-pass chunks there; not fitted here.
        return "launch_bound_long" if s["nnz"] < LAUNCH_BOUND_NNZ else "power_law"
    empty = s["empty_rows"]
    if empty > c["empty_fraction"] * s["rows"]:
        # Non-empty rows of kMostlyEmptyVectorLength and more, from 2^20 nonzeros: csr-vector's group walk.
        wide = s["nnz"] >= c["mostly_empty_vector_length"] * (s["rows"] - empty) and s["nnz"] >= LAUNCH_BOUND_NNZ
        return "empty_wide" if wide else "empty"
    # Over half the rows empty, csr-vector walks 32 rows per warp: a loss when the others are long.
    if empty > GROUP_EMPTY_FRACTION * s["rows"]:
        # Launch-bound products keep the first fit's bound (kLaunchBoundEmptyLongLength, auto_rule.cpp).
        launch_bound = s["nnz"] < LAUNCH_BOUND_NNZ
        long_length = LAUNCH_BOUND_EMPTY_LONG_LENGTH if launch_bound else c["empty_long_length"]
        if s["nnz"] > long_length * (s["rows"] - empty):
            return "empty" if launch_bound else "empty_long"
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


# With Options::expected_applies >= FORMAT_MIN_APPLIES, Auto converts: DIA first when it stores few
# slots per nonzero (the rule already in dispatch.cu), else the format its class names, when the ELL
# padding (rows * longest row / nnz) allows it; a refusal leaves the CSR choice.
FORMATS = ["ell", "ellr", "ellr-vector", "sell", "hyb"]
ELL_FAMILY = {"ell", "ellr", "ellr-vector"}
DIA_MAX_PADDING = {"f64": 1.2, "f32": 1.5}
# The conversions in src/core/auto_rule.cpp: ELL for short rows, and for long ones of at most 128 a row
# (fitted on the rowlen family, 2026-11-27) in matrices of at least 2^15 rows (EX5, 6,545 rows, lost),
# whose ELL padding is at most 1.1.
CURRENT_HINT = {"max_ell_padding": 1.1, "max_ell_mean": 128, "leaves": {"short": "ell", "long": "ell"}}
ELL_LONG_MIN_ROWS = 2 ** 15
# The repayment model (src/cuda/auto_rule.hpp holds the same constants): a conversion is taken when
# applies * (estimated CSR product time * the format's typical gain) >= its estimated setup. Measured
# on this sweep (H200, all members, nnz > 1 M): Auto's CSR kernels ran at a median 1.34 / 1.68 TB/s
# (f32 / f64) of CSR bytes; setup = 0.7 ms (the f64 fixed part, which includes a first use's module load; f32 0.2 ms) + a per-nonzero cost (least squares).
LAUNCH_MS = 0.005
CSR_RATE_BYTES_PER_MS = 1.5e9
GAIN = {"dia": 0.4, "ell": 0.15, "ellr": 0.13, "ellr-vector": 0.0, "sell": 0.05, "hyb": 0.0}
SETUP_MS = 0.7
SETUP_MS_PER_MNNZ = {"dia": 0.12, "ell": 0.15, "ellr": 0.022, "ellr-vector": 0.032, "sell": 0.15, "hyb": 0.04}


# SELL for rows more than half empty (src/core/auto_rule.cpp; the lower bound on the non-empty share that
# this script's empty family once fitted is gone since the empty rows left SELL's slices, 2026-11-28); its
# setup grows with the rows (the sort).
SETUP_MS_PER_MROWS = {"sell": 0.5}


def repaid(fmt, s, precision, applies):
    if fmt == "dia" and s["nnz"] < LAUNCH_BOUND_NNZ:  # DIA's launch-bound products lose (auto_rule.cpp)
        return False
    v = 4 if precision == "f32" else 8
    csr_bytes = s["nnz"] * (v + 4) + (s["rows"] + 1) * 4 + s["cols"] * v + s["rows"] * v
    t = LAUNCH_MS + csr_bytes / CSR_RATE_BYTES_PER_MS
    setup = SETUP_MS + SETUP_MS_PER_MNNZ[fmt] * s["nnz"] / 1e6 + SETUP_MS_PER_MROWS.get(fmt, 0) * s["rows"] / 1e6
    return applies * t * GAIN[fmt] >= setup


def hinted_choice(entry, precision, rule, hint, applies):
    s, times = entry["stats"], entry["times"]
    if (s["diagonals"] * s["rows"] <= DIA_MAX_PADDING[precision] * s["nnz"] and "dia" in times
            and repaid("dia", s, precision, applies)):
        return "dia"
    empty = s["empty_rows"]
    if GROUP_EMPTY_FRACTION * s["rows"] < empty:
        return "sell" if "sell" in times and repaid("sell", s, precision, applies) else \
            rule["leaves"][classify(s, rule["constants"])]
    cls = classify(s, rule["constants"])
    fmt = hint["leaves"].get(cls)
    ell_fits = s["ell_padding"] <= hint["max_ell_padding"] and (
        cls != "long" or (s["row_mean"] <= hint.get("max_ell_mean", math.inf) and s["rows"] >= ELL_LONG_MIN_ROWS))
    if fmt and fmt in times and (fmt not in ELL_FAMILY or ell_fits) and repaid(fmt, s, precision, applies):
        return fmt
    return rule["leaves"][classify(s, rule["constants"])]


def hinted_speedups(data, names, rule, hint, applies):
    """Like speedups, the conversion's setup spread over `applies` products."""
    out = []
    for name in names:
        for precision, entry in sorted(data[name].items()):
            vb = vendor_best(entry)
            if vb is None or "stats" not in entry:
                continue
            choice = hinted_choice(entry, precision, rule, hint, applies)
            t = entry["times"].get(choice)
            if t is None:
                out.append((name, precision, "", choice, 0.1, 0.1))
                continue
            if choice in FORMATS or choice == "dia":
                t += entry["setup"].get(choice, 0) / applies
            best = min(entry["times"][k] + (entry["setup"].get(k, 0) / applies if k in FORMATS + ["dia"] else 0)
                       for k in entry["times"] if k not in VENDOR and k != "auto")
            out.append((name, precision, classify(entry["stats"], rule["constants"]), choice, vb / t, best / t))
    return out


def fit_hint(data, names, rule, applies):
    # Ascending grids: on a tie the smaller bound (the one that converts fewer matrices) is kept.
    best, best_score = None, -1
    for pad in [1.1, 1.25, 1.5, 2.0, 3.0]:
        for mean in [8, 16, 32, 64, 128, 256, math.inf]:
            hint = {"max_ell_padding": pad, "max_ell_mean": mean, "leaves": {}}
            for cls in CURRENT["leaves"]:
                def cls_score(fmt):
                    trial = dict(hint, leaves=dict(hint["leaves"], **{cls: fmt}))
                    res = [r for r in hinted_speedups(data, names, rule, trial, applies) if r[2] == cls]
                    return score(res) if res else 0
                hint["leaves"][cls] = max([None] + FORMATS, key=cls_score)
            sc = score(hinted_speedups(data, names, rule, hint, applies))
            if sc > best_score + 1e-9:
                best, best_score = hint, sc
    return best


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
        "few_huge_rows_cv": [5, 10, 18, 20, 40],
        "irregular_cv": [0.5, 0.75, 1.0, 1.5, 2.0],
        "scalar_max_mean": [3, 4, 6, 8, 12, 16],
        "small_nnz": [2 ** 14, 2 ** 16, 2 ** 18, 2 ** 20],
        "empty_fraction": [0.25, 0.4, 0.5, 0.6, 0.75, 0.9, 2.0],
        "empty_long_length": [16, 20, 28, 40, 56, math.inf],
        "mostly_empty_vector_length": [16, 24, 32, 48, 64, math.inf],
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


def measured_speedups(data, names):
    """Auto as it ran (the `auto` rows), against the best cuSPARSE algorithm."""
    out = []
    for name in names:
        for precision, entry in sorted(data[name].items()):
            vb, t = vendor_best(entry), entry["times"].get("auto")
            if vb is not None and t is not None:
                out.append((name, precision, entry["resolved"]["auto"], "auto", vb / t, 1.0))
    return out


def report(data, split, rule, label, markdown, hint=None, applies=0, measured=False):
    print(f"\n## {label}")
    print("constants: " + ", ".join(f"{k}={v:g}" for k, v in rule["constants"].items()))
    print("classes:   " + ", ".join(f"{k}->{v}" for k, v in rule["leaves"].items()))
    if hint:
        print(f"with {applies} expected products: max ELL padding {hint['max_ell_padding']}, max ELL mean "
              f"{hint.get('max_ell_mean', math.inf):g}, formats: " +
              ", ".join(f"{k}->{v}" for k, v in hint["leaves"].items() if v))
    for half in ("fit", "test"):
        names = [n for n in data if split.get(n) == half]
        if measured:
            res = measured_speedups(data, names)
        else:
            res = hinted_speedups(data, names, rule, hint, applies) if hint else speedups(data, names, rule)
        if not res:
            continue
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
    r.add_argument("--algo", default=ALGORITHMS, help="spmv bench --algo (default: the kernels Auto may pick, the "
                                                       "formats and cuSPARSE)")
    r.add_argument("--expected-applies", type=int, default=0, help="passed to spmv bench (Auto's conversions)")
    r.add_argument("--families", type=lambda v: v.split(","), default=None,
                   help="comma-separated families to run (default: all)")
    here = os.path.dirname(os.path.abspath(__file__))
    r.add_argument("--matrices", default=os.environ.get("SPMV_MATRICES", os.path.join(here, "..", "..", "shared",
                                                                                      "matrices")))
    f = sub.add_parser("fit")
    f.add_argument("table")
    f.add_argument("--matrices", default="")
    f.add_argument("--markdown", action="store_true")
    f.add_argument("--applies", type=int, default=1000, help="expected products for the converting rule")
    f.add_argument("--measured", action="store_true", help="only report Auto's measured rows against cuSPARSE")
    f.add_argument("--no-refit", action="store_true", help="only report the rules (the grid search takes ~30 s)")
    args = parser.parse_args()
    if args.command == "run":
        return run(args)
    data = load(args.table)
    entries = families() + [("files", n) for n in sorted(k for k in data if k.endswith((".mtx", ".mtx.gz")))]
    for family, spec in entries:
        FAMILY[canonical(spec)] = family
    split = member_split(entries)
    names_fit = [n for n in data if split.get(n) == "fit"]
    if args.measured:
        report(data, split, CURRENT, "Auto as measured", args.markdown, measured=True)
        return 0
    report(data, split, PREVIOUS, "the rule before this fit", args.markdown)
    report(data, split, CURRENT, "the rule in src/core/auto_rule.cpp", args.markdown)
    for applies in (args.applies, 100):
        report(data, split, CURRENT, f"the rule in src/core/auto_rule.cpp with {applies} expected products",
               args.markdown, CURRENT_HINT, applies)
    if not args.no_refit:
        fitted = fit(data, names_fit)
        report(data, split, fitted, "refitted on the fit half (compare with the rule in the code)", args.markdown)
        hint = fit_hint(data, names_fit, fitted, args.applies)
        report(data, split, fitted, f"refitted, formats refitted for {args.applies} expected products",
               args.markdown, hint, args.applies)
    return 0


if __name__ == "__main__":
    sys.exit(main())
