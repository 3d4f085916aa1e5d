"""Module-level helpers: CUDA availability, algorithm names, statistics and benchmarks."""

from __future__ import annotations

import numbers

import numpy as np

from . import _core
from ._matrix import Matrix, as_matrix, parse_device, value_dtype


def cuda_available():
    """True when spmv was built with CUDA and a CUDA device is usable."""
    return bool(_core.cuda_available())


def _backend(device):
    kind, ordinal = parse_device(device)
    if kind is None:
        kind = "cuda" if cuda_available() else "cpu"
    return kind, ordinal


def algorithms(device="cpu", transpose=False):
    """Names of the algorithms a backend offers for A @ x (or A.T @ x with transpose=True).

    'auto' is always accepted besides these. device None / 'auto' means 'cuda' when available, else
    'cpu'. Without CUDA, the 'cuda' list is empty.
    """
    kind, _ = _backend(device)
    return list(_core.algorithm_names(kind, bool(transpose)))


def info(a):
    """Statistics of a Matrix (or scipy.sparse matrix) as a dict, with the keys of `spmv info --json`:
    rows, cols, nnz, row_mean, row_std, row_min, row_max, empty_rows, diagonals, ell_padding,
    bandwidth, symmetric (numerically), structurally_symmetric, numerically_symmetric, fits_int32;
    plus file, format, field and stored_symmetry for matrices read from Matrix Market files."""
    m = as_matrix(a)
    if m._transposed:  # statistics of A^T: its rows are A's columns, so they are computed on a CSR copy
        return dict(_core.stats(Matrix.from_scipy(m.to_scipy())._core))
    d = dict(_core.stats(m._core))
    if m._header is not None:
        d["file"] = m._source
        d.update(m._header)
    return d


_HALF_PRECISIONS = ("f16", "bf16")  # float32 products with half storage of the values (issue 11)


def _precisions(dtype, matrix):
    if dtype is None:  # the matrix's own: its storage for a half-storage matrix
        return [matrix.value_storage if matrix.value_storage in _HALF_PRECISIONS else
                "f64" if matrix.dtype == np.float64 else "f32"]
    if isinstance(dtype, str) and dtype == "both":
        dtypes = [np.float64, np.float32]
    elif isinstance(dtype, (list, tuple)):
        dtypes = list(dtype)
    else:
        dtypes = [dtype]
    names = {"f32": np.float32, "f64": np.float64}
    return [d if isinstance(d, str) and d in _HALF_PRECISIONS else
            "f64" if value_dtype(names.get(d, d)) == np.float64 else "f32" for d in dtypes]


def bench(a, algorithms=None, *, device="auto", dtype=None, transpose=False, alpha=1.0, beta=0.0, repetitions=9,
          warmup=3, min_sample_ms=2.0, threads=0, block_size=0, bandwidth=None, as_frame=False, verbose=False):
    """Benchmarks algorithms on one matrix with the engine of `spmv bench` (spmv::bench::bench_matrix).

    Each algorithm's plan is built, one product is verified against the double-accumulating reference
    (per-entry bound c*eps*(|beta|*|y_i| + |alpha|*sum_j |a_ij*x_j|), c = 2*(longest row + 2)), then
    timed: ``warmup`` products, then the median of ``repetitions`` samples of at least
    ``min_sample_ms``. Returns one dict per algorithm and precision with the keys of a
    `spmv bench --json` result (algorithm, resolved, policy, verified: ok / FAILED / skipped / error,
    message, error_ratio, median_ms, gflops, gbs, pct_bandwidth, speedup_vs_vendor, setup_ms, ...)
    plus backend, device and bandwidth_gbs; missing numbers are NaN. With ``as_frame=True`` a pandas
    DataFrame instead (needs pandas).

    algorithms: None -> 'auto' and the backend's vendor baselines; 'all' -> every algorithm the
    backend offers; or a list of names. Vendor baselines run first, so every row gets its speed-up
    over the best of them. device: 'auto' (CUDA when available), 'cpu', 'cuda', 'cuda:N'. dtype:
    None (the matrix's: 'f16' / 'bf16' for a matrix with half storage), float32, float64, 'both',
    'f16' / 'bf16' (float32 products with half storage of the values: rows of algorithms that do not
    offer it are skipped; the byte model counts 2 bytes a value), or a list. bandwidth: None (no % of bandwidth), a
    number in GB/s, or 'measure' (a copy benchmark first, as `spmv bench` does). The byte model is
    `spmv bench`'s (docs/CLI.md). The call holds the GIL; with verbose=False (default) the table that
    `spmv bench` prints is suppressed, with verbose=True it goes to standard output.
    """
    m = as_matrix(a)
    transpose = bool(transpose) != m._transposed  # bench(A.T) times A^T x: A's transposed products
    kind, ordinal = _backend(device)
    if kind == "cuda" and ordinal is None:
        ordinal = _core.current_device()
    if algorithms is None:
        names = []
    elif isinstance(algorithms, str):
        names = [algorithms]
    else:
        names = [str(n) for n in algorithms]
        if not names:
            raise ValueError("algorithms is empty")
    if bandwidth is None:
        gbs = 0.0
    elif isinstance(bandwidth, str) and bandwidth == "measure":
        gbs = -1.0
    elif isinstance(bandwidth, numbers.Real) and not isinstance(bandwidth, bool) and bandwidth > 0:
        gbs = float(bandwidth)
    else:
        raise ValueError(f"bandwidth must be None, 'measure' or a positive number of GB/s, got {bandwidth!r}")
    for name, value in (("repetitions", repetitions), ("warmup", warmup), ("threads", threads),
                        ("block_size", block_size)):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise TypeError(f"{name} must be an int, got {value!r}")
    rows = _core.bench(m._core, names, kind, ordinal or 0, _precisions(dtype, m), bool(transpose),
                       float(alpha), float(beta), int(repetitions), int(warmup), float(min_sample_ms), int(threads),
                       int(block_size), gbs, bool(verbose))
    if as_frame:
        try:
            import pandas as pd
        except ImportError as e:
            raise ImportError("bench(..., as_frame=True) needs pandas") from e
        return pd.DataFrame(rows)
    return rows
