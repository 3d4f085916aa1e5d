#!/usr/bin/env python3
"""Python `A @ x` on the CPU against scipy.sparse (issue 12 item 4, issue 17): 2D Poisson matrices of
10^4, 2.25*10^4 and 10^5 rows (and any --n given), f64, best (minimum) per-product time over many
samples, the two taken in interleaved rounds so that both see the same load of a shared machine.

    python3 bench/python_vs_scipy.py [--rounds 7] [--n 100 150 317] [--dtype float64]

Prints one line per matrix: rows, nonzeros, scipy us, spmv us, scipy / spmv (> 1: spmv is faster),
and the CPU algorithm and policy spmv's Auto chose.
"""
import argparse
import os
import time

import numpy as np
import scipy.sparse as sp

import spmv


def poisson2d(n, dtype):
    t = sp.diags([-1.0, 4.0, -1.0], [-1, 0, 1], shape=(n, n))
    e = sp.diags([-1.0, -1.0], [-1, 1], shape=(n, n))
    return (sp.kron(sp.identity(n), t) + sp.kron(e, sp.identity(n))).tocsr().astype(dtype)


def best_us(fn, x, reps):
    """Minimum over samples of the mean time of `reps` products, in microseconds."""
    fn(x)
    t0 = time.perf_counter()
    for _ in range(reps):
        fn(x)
    return (time.perf_counter() - t0) / reps * 1e6


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, nargs="*", default=[100, 150, 317], help="grid sides (rows = n^2)")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--samples", type=int, default=20, help="samples per round, each ~2 ms of products")
    ap.add_argument("--dtype", default="float64")
    args = ap.parse_args()
    print(f"# load average {os.getloadavg()}, OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}")
    print(f"{'rows':>8} {'nnz':>9} {'scipy_us':>9} {'spmv_us':>9} {'ratio':>6}  policy")
    for n in args.n:
        a = poisson2d(n, args.dtype)
        m = spmv.Matrix.from_scipy(a)
        x = np.random.default_rng(1).standard_normal(a.shape[1]).astype(args.dtype)
        assert np.allclose(m @ x, a @ x)
        reps = max(1, int(2e-3 / max(a.nnz * 1e-9, 1e-7)))
        best = {"scipy": float("inf"), "spmv": float("inf")}
        for _ in range(args.rounds):
            for _ in range(args.samples):
                best["scipy"] = min(best["scipy"], best_us(a.__matmul__, x, reps))
                best["spmv"] = min(best["spmv"], best_us(m.__matmul__, x, reps))
        info = m.plan_info()
        print(f"{a.shape[0]:>8} {a.nnz:>9} {best['scipy']:>9.1f} {best['spmv']:>9.1f} "
              f"{best['scipy'] / best['spmv']:>6.2f}  {info}")


if __name__ == "__main__":
    main()
