#!/usr/bin/env python3
"""Issue 15: Krylov solvers per iteration, in one process, on the same systems and tolerance.

spmv's CG (fused, unfused, in a CUDA graph), BiCGStab (also in a graph) and GMRES (also with a float32 basis in f64, fp16 in f32,
and s-step GMRES, --gmres-s-step, default S = 5 and 8: docs/SOLVERS.md "s-step GMRES") against
``cupyx.scipy.sparse.linalg`` (CUDA, when CuPy is importable) and ``scipy.sparse.linalg`` (CPU):
iterations to the tolerance, time per
iteration, the memory floor of spmv's iteration (docs/SOLVERS.md "The floor": the CSR byte model of
one SpMV plus the vector traffic of the kernels as implemented, over the measured copy bandwidth), the
time as a multiple of that floor and of the unfused CSR CG floor, and the speed-up over the vendor
library of the same backend. Prints a markdown table; --json writes the rows.

    python3 bench/solver_compare.py --scale small            # a few seconds on a laptop CPU
    python3 bench/solver_compare.py --scale medium --backend cpu  # ~0.5 M unknowns, beyond a CPU's caches
    python3 bench/solver_compare.py --scale full --backend cuda   # issue 15's ~4 M-unknown systems

b = A * 1 and x0 = 0 everywhere; the stopping rule is ||r|| <= tol * ||b|| for every library (SciPy and
CuPy: rtol = tol, atol = 0). spmv's time per iteration is its own loop timing (SolveInfo.ms_per_iteration,
CUDA events on the device); the others' is the wall time of the solve (device synchronised) over the
iterations counted by their callback, after one warm-up solve. SciPy/CuPy GMRES count restart cycles in
maxiter; their iterations are counted per inner step (scipy: callback_type='pr_norm'; cupyx: cycles x
restart, an upper bound, marked ~).
"""

from __future__ import annotations

import argparse
import json
import math
import pathlib
import sys
import time

import numpy as np
import scipy.sparse.linalg as sla

import spmv

ROOT = pathlib.Path(__file__).resolve().parent.parent
SCALES = {
    # name: (generator, params) at ~4 M unknowns (full), ~0.5 M (medium) or a few thousand (small)
    "full": [("poisson2d", {"n": 2000}), ("poisson3d", {"n": 160}), ("fem3d", {"n": 160}), ("file", "bcsstk16")],
    "medium": [("poisson2d", {"n": 700}), ("poisson3d", {"n": 80}), ("fem3d", {"n": 80}), ("file", "bcsstk16")],
    "small": [("poisson2d", {"n": 150}), ("poisson3d", {"n": 24}), ("fem3d", {"n": 20}), ("file", "bcsstk16")],
}
RESTART = 30


def cupy_or_none():
    try:
        import cupy  # noqa: PLC0415 - optional
        import cupyx.scipy.sparse  # noqa: PLC0415, F401
        import cupyx.scipy.sparse.linalg  # noqa: PLC0415, F401

        cupy.cuda.runtime.getDeviceCount()
        return cupy
    except Exception:  # noqa: BLE001 - no CuPy or no device: CPU columns only
        return None


def load(kind, spec, dtype, matrices):
    if kind == "file":
        path = pathlib.Path(matrices) / f"{spec}.mtx.gz"
        if not path.exists():  # fall back to a generated SPD matrix (documented in the table)
            return "fem3d:n=24 (no " + spec + ")", spmv.generate.fem3d(n=24, dtype=dtype)
        return spec, spmv.read_matrix_market(str(path), dtype=dtype)
    label = kind + ":" + ",".join(f"{k}={v}" for k, v in spec.items())
    return label, getattr(spmv.generate, kind)(**spec, dtype=dtype)


def copy_bandwidth(device):
    """GB/s of the copy spmv bench measures (device-to-device on CUDA, STREAM-like on the host)."""
    probe = spmv.generate.poisson2d(n=64)
    rows = spmv.bench(probe, ["csr-scalar"] if device == "cuda" else None, device=device, bandwidth="measure",
                      repetitions=3, warmup=1, min_sample_ms=0.5)
    return float(rows[0]["bandwidth_gbs"])


def vendor_solve(lib, method, a, b, tol, maxit, sync):
    """(iterations, ms per iteration, converged) for scipy.sparse.linalg or cupyx.scipy.sparse.linalg."""
    count = [0]
    kwargs = {"maxiter": maxit, "atol": 0.0}
    if method == "gmres":
        kwargs.update(restart=RESTART, maxiter=max(1, maxit // RESTART))
        if lib is sla:
            kwargs["callback_type"] = "pr_norm"

    def callback(*_):
        count[0] += 1

    def run(**extra):
        fn = getattr(lib, method)
        try:
            return fn(a, b, rtol=tol, callback=callback, **{**kwargs, **extra})
        except TypeError:  # older SciPy/CuPy: tol instead of rtol
            return fn(a, b, tol=tol, callback=callback, **{**kwargs, **extra})

    run(maxiter=2)  # warm-up: kernels compiled, handles created
    count[0] = 0
    sync()
    t0 = time.perf_counter()
    _, info = run()
    sync()
    ms = (time.perf_counter() - t0) * 1e3
    its = count[0] * (RESTART if (method == "gmres" and lib is not sla) else 1)
    return its, ms / max(its, 1), int(info) == 0


def hinted_matrix(s, device, maxit):
    return spmv.Matrix.from_scipy(s, device=device, options={"expected_applies": maxit})


def spmv_solve(method, a, b, tol, maxit, backend, **extra):
    fn = getattr(spmv, method)
    kwargs = {"tol": tol, "maxiter": maxit, "backend": backend, **extra}
    if method == "gmres":
        kwargs["restart"] = RESTART
    fn(a, b, **{**kwargs, "maxiter": 2})  # warm-up: the plan is built, Auto resolved
    _, info = fn(a, b, **kwargs)
    return info


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--scale", choices=sorted(SCALES), default="small")
    p.add_argument("--backend", choices=["auto", "cpu", "cuda"], default="auto")
    p.add_argument("--methods", default="cg,bicgstab,gmres")
    p.add_argument("--precision", default="f64,f32")
    p.add_argument("--tol", type=float, default=1e-6)
    p.add_argument("--maxit", type=int, default=5000)
    p.add_argument("--matrices", default=str(ROOT.parent / "shared" / "matrices"))
    p.add_argument("--json", help="write the rows as JSON here")
    p.add_argument("--gmres-s-step", default="5,8",
                   help="GMRES: the s-step variants to run, comma-separated block sizes in 2..8 ('' for none)")
    args = p.parse_args()

    cupy = cupy_or_none()
    backends = []
    if args.backend in ("auto", "cuda") and spmv.cuda_available():
        backends.append("cuda")
    if args.backend in ("auto", "cpu"):
        backends.append("cpu")
    if args.backend == "cuda" and not backends:
        sys.exit("solver_compare: --backend cuda but spmv has no usable CUDA device")
    bandwidth = {d: copy_bandwidth(d) for d in backends}
    print(f"copy bandwidth (GB/s): {', '.join(f'{d} {g:.1f}' for d, g in bandwidth.items())}; "
          f"tol {args.tol:g}, maxit {args.maxit}; cupyx: {'yes' if cupy is not None else 'not importable'}",
          file=sys.stderr)

    rows = []
    for kind, spec in SCALES[args.scale]:
        for prec in args.precision.split(","):
            dtype = np.float64 if prec == "f64" else np.float32
            label, a = load(kind, spec, dtype, args.matrices)
            s = a.to_scipy()
            b = np.asarray(s @ np.ones(s.shape[0], dtype=dtype), dtype=dtype)
            for backend in backends:
                if backend == "cuda":
                    a_dev = spmv.Matrix.from_scipy(s, device="cuda")
                    b_dev = cupy.asarray(b) if cupy is not None else None
                for method in args.methods.split(","):
                    base = {"matrix": label, "rows": s.shape[0], "nnz": s.nnz, "precision": prec, "method": method,
                            "backend": backend}
                    # "hint": Auto told how many products to expect (maxit), so it may convert the matrix to
                    # a format that reads fewer bytes than CSR (DIA on stencils); the floor stays CSR's.
                    # CG and BiCGStab also with the iteration captured in a CUDA graph; GMRES also with a
                    # compressed basis (f32 in f64 solves, fp16 in f32 ones: its own floor).
                    graph = [("spmv fused, graph", {"fused": True, "graph": True})] if backend == "cuda" else []
                    bicg_graph = [("spmv, graph", {"graph": True})] if backend == "cuda" else []
                    basis = "f32" if prec == "f64" else "f16"
                    compressed = [(f"spmv, {basis} basis", {"basis": basis}),
                                  (f"spmv, {basis} basis, hint", {"basis": basis})]
                    # s-step GMRES: the working-precision basis, no hint (the target setting).
                    sstep = [(f"spmv, s-step {k}", {"s_step": int(k)}) for k in args.gmres_s_step.split(",") if k]
                    variants = [("spmv fused", {"fused": True}), ("spmv unfused", {"fused": False}), *graph,
                                ("spmv fused, hint", {"fused": True})] \
                        if method == "cg" else [("spmv", {}), *compressed, *sstep] if method == "gmres" \
                        else [("spmv", {}), *bicg_graph]
                    unfused_floor = None
                    for name, extra in variants:
                        hinted = name.endswith("hint")
                        if backend == "cuda":
                            m = hinted_matrix(s, "cuda", args.maxit) if hinted else a_dev
                            info = spmv_solve(method, m, b_dev if b_dev is not None else b, args.tol, args.maxit,
                                              "cuda", **extra)
                        else:
                            m = hinted_matrix(s, "cpu", args.maxit) if hinted else a
                            info = spmv_solve(method, m, b, args.tol, args.maxit, "cpu", **extra)
                        floor = info.floor_ms(bandwidth[backend])
                        if name == "spmv unfused":
                            unfused_floor = floor
                        shown = f"{name}: {info.algorithm.split()[0]}" if hinted else name
                        rows.append({**base, "impl": shown, "algorithm": info.algorithm, "iterations": info.iterations,
                                     "converged": info.converged, "ms_per_iteration": info.ms_per_iteration,
                                     "floor_ms": floor, "variant": info.variant})
                    vendor = None
                    if backend == "cuda" and cupy is not None:
                        import cupyx.scipy.sparse as csp  # noqa: PLC0415

                        its, ms, ok = vendor_solve(cupyx_linalg(), method, csp.csr_matrix(s), cupy.asarray(b),
                                                   args.tol, args.maxit, cupy.cuda.Device().synchronize)
                        vendor = {**base, "impl": "cupyx", "iterations": its, "converged": ok, "ms_per_iteration": ms}
                    elif backend == "cpu":
                        its, ms, ok = vendor_solve(sla, method, s.tocsr(), b, args.tol, args.maxit, lambda: None)
                        vendor = {**base, "impl": "scipy", "iterations": its, "converged": ok, "ms_per_iteration": ms}
                    if vendor is not None:
                        rows.append(vendor)
                    for r in rows:
                        if r["matrix"] == label and r["precision"] == prec and r["method"] == method and \
                                r["backend"] == backend:
                            spmv_floor = next(x["floor_ms"] for x in rows if x["impl"].startswith("spmv") and
                                              x["matrix"] == label and x["precision"] == prec and
                                              x["method"] == method and x["backend"] == backend)
                            r.setdefault("floor_ms", spmv_floor)
                            r["x_floor"] = r["ms_per_iteration"] / r["floor_ms"] if r["floor_ms"] else math.nan
                            ref = unfused_floor or spmv_floor
                            r["x_unfused_floor"] = r["ms_per_iteration"] / ref if ref else math.nan
                            r["speedup_vs_vendor"] = (vendor["ms_per_iteration"] / r["ms_per_iteration"]
                                                      if vendor is not None and r["ms_per_iteration"] > 0 else math.nan)

    print("| matrix | rows | prec | method | backend | impl | iterations | ms/iter | floor ms | x floor | "
          "x unfused floor | vs vendor |")
    print("|---|---:|---|---|---|---|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        its = f"{r['iterations']}{'' if r['converged'] else ' (not conv.)'}"
        if r["impl"] == "cupyx" and r["method"] == "gmres":
            its = "~" + its
        print(f"| {r['matrix']} | {r['rows']} | {r['precision']} | {r['method']} | {r['backend']} | {r['impl']} | "
              f"{its} | {r['ms_per_iteration']:.4f} | {r['floor_ms']:.4f} | {r['x_floor']:.2f} | "
              f"{r['x_unfused_floor']:.2f} | {r['speedup_vs_vendor']:.2f} |")
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(rows, indent=1))


def cupyx_linalg():
    import cupyx.scipy.sparse.linalg as cla  # noqa: PLC0415

    return cla


if __name__ == "__main__":
    main()
