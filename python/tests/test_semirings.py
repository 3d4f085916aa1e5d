"""Semiring products (docs/SEMIRINGS.md) against numpy evaluations of their definitions, and two graph
algorithms against scipy.sparse.csgraph: BFS levels with or-and, shortest paths with min-plus."""

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.csgraph as csgraph

import spmv
from cases import CASES, stored

SEMIRINGS = ["min-plus", "max-times", "or-and", "max-min"]
# The formats the CPU semiring product converts A to (once, in the plan the matrix keeps; docs/SEMIRINGS.md).
FORMATS = ["ell", "ellr", "hyb", "coo", "dia", "compressed-csr"]


def definition(s, a, x, semiring):
    """y_i over the stored entries of row i of the scipy matrix `s`, in a's dtype."""
    s = sp.csr_matrix(s, dtype=a.dtype)
    zero = {"min-plus": np.inf, "max-times": -np.inf, "or-and": 0, "max-min": -np.inf}[semiring]
    y = np.full(s.shape[0], zero, dtype=a.dtype)
    for i in range(s.shape[0]):
        cols = s.indices[s.indptr[i]:s.indptr[i + 1]]
        vals = s.data[s.indptr[i]:s.indptr[i + 1]]
        if len(cols) == 0:
            continue
        xs = x[cols]
        if semiring == "min-plus":
            y[i] = np.fmin.reduce(vals + xs)
        elif semiring == "max-times":
            y[i] = np.fmax.reduce(vals * xs)
        elif semiring == "or-and":
            y[i] = 1 if np.any((vals != 0) & (xs != 0)) else 0
        else:
            y[i] = np.fmax.reduce(np.fmin(vals, xs))
    return y


@pytest.mark.parametrize("algorithm", [None, "row-loop", "merge-parallel", "column-chunked", "sell"] + FORMATS)
@pytest.mark.parametrize("transpose", [False, True], ids=["N", "T"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("semiring", SEMIRINGS)
@pytest.mark.parametrize("case", ["tall_empty_rows", "wide_empty_cols", "long_row", "random_2k_plus_97",
                                  "unsorted_duplicates", "no_nonzeros", "zero_rows", "zero_cols"])
def test_semirings_match_their_definition(case, semiring, dtype, transpose, algorithm):
    # Each CPU kernel (None: Auto's), SELL-C-sigma's padding and row permutation included.
    s = CASES[case]
    a = spmv.Matrix.from_scipy(s, dtype=dtype)
    rng = np.random.default_rng(5)
    n_x = s.shape[0] if transpose else s.shape[1]
    x = rng.standard_normal(n_x).astype(dtype)
    x[::7] = 0
    y = np.full(s.shape[1] if transpose else s.shape[0], np.nan, dtype)
    try:
        out = a.apply(x, y, semiring=semiring, transpose=transpose, algorithm=algorithm)
    except spmv.UnsupportedError as e:
        if algorithm in FORMATS:
            # The padded formats refuse as their SpMV conversions do (ELL's long row, DIA's random diagonals: over
            # 3 x nnz + 1024 slots; compressed-csr's slices too), and DIA refuses duplicate entries, which it would
            # sum; COO refuses nothing.
            # test_semiring_formats_on_regular_rows checks that they do run.
            message = str(e)
            assert algorithm != "coo" and ("padding factor" in message or "diagonals" in message or
                                           (algorithm == "dia" and "duplicate" in message)), message
            return
        # SELL's padding rule (C = the SIMD width, 3 x nnz + 1024 slots): the 200-entry row pads its slice of C
        # rows beyond it where C is 16 (f32 with AVX-512); nothing else may be refused.
        assert algorithm == "sell" and case == "long_row" and not transpose and "padding factor" in str(e), str(e)
        return
    assert out is y
    held = stored(a)
    want = definition(held.T if transpose else held, a, x, semiring)
    np.testing.assert_array_equal(y, want)  # min, max and or are exact in any order


@pytest.mark.parametrize("algorithm", FORMATS)
@pytest.mark.parametrize("semiring", SEMIRINGS)
def test_semiring_formats_on_regular_rows(semiring, algorithm):
    # A 2D Poisson matrix (5 diagonals, rows of 3 to 5) fits every format; x0 = -1e3 would win min-plus's rows if
    # a padding slot (ELL's column -1, DIA's slots outside the matrix) were read as 0 at column 0.
    s = CASES["poisson2d"]
    a = spmv.Matrix.from_scipy(s)
    x = np.random.default_rng(7).standard_normal(s.shape[1])
    x[0] = -1e3
    np.testing.assert_array_equal(a.apply(x, semiring=semiring, algorithm=algorithm),
                                  definition(stored(a), a, x, semiring))


@pytest.mark.parametrize("semiring", SEMIRINGS)
def test_semiring_through_the_transposed_view(semiring):
    a = spmv.Matrix.from_scipy(CASES["tall_empty_rows"])
    x_t = np.random.default_rng(2).standard_normal(a.shape[0])
    x_n = np.random.default_rng(3).standard_normal(a.shape[1])
    np.testing.assert_array_equal(a.T.apply(x_t, semiring=semiring), a.apply(x_t, semiring=semiring, transpose=True))
    np.testing.assert_array_equal(a.T.apply(x_n, semiring=semiring, transpose=True), a.apply(x_n, semiring=semiring))


def test_semiring_refusals():
    a = spmv.Matrix.from_scipy(CASES["random_2k_plus_97"])
    x = np.ones(a.shape[1])
    with pytest.raises(ValueError, match="no alpha or beta"):
        a.apply(x, alpha=2.0, semiring="min-plus")
    with pytest.raises(ValueError, match="expected one of"):
        a.apply(x, semiring="plus-min")
    # A kernel the CPU semiring product does not have; the matrix's default algorithm is not read.
    with pytest.raises(spmv.UnsupportedError,
                       match="no semiring kernel on the CPU; use auto, row-loop, merge-parallel"):
        a.apply(x, semiring="min-plus", algorithm="csr-vector", device="cpu")
    with pytest.raises(TypeError, match="algorithm must be a name"):
        a.apply(x, semiring="min-plus", algorithm=3)
    if not spmv.cuda_available():  # with a GPU the CUDA kernel runs (test_cuda.py)
        with pytest.raises(spmv.UnsupportedError, match="no CUDA device"):
            a.apply(x, semiring="or-and", device="cuda")
    # plus-times is the ordinary product
    np.testing.assert_allclose(a.apply(x, semiring="plus-times"), a @ x)


def _bits(y):
    return y.view(np.uint64 if y.dtype == np.float64 else np.uint32)


@pytest.mark.parametrize("algorithm", [None, "auto", "row-loop", "merge-parallel", "column-chunked", "sell"] + FORMATS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_semiring_plans_are_kept(dtype, algorithm):
    # One CPU plan per (semiring, algorithm, direction), made by the first call: later calls give the first call's
    # bits, another x on the same plan its own definition, and no plan is made again.
    s = CASES["poisson2d"]
    a = spmv.Matrix.from_scipy(s, dtype=dtype)
    rng = np.random.default_rng(11)
    x1 = rng.standard_normal(s.shape[1]).astype(dtype)
    x2 = rng.standard_normal(s.shape[1]).astype(dtype)
    assert a._core.cached_semiring_plans == 0
    first = a.apply(x1, semiring="min-plus", algorithm=algorithm, device="cpu")
    assert a._core.cached_semiring_plans == 1
    for _ in range(3):
        np.testing.assert_array_equal(_bits(a.apply(x1, semiring="min-plus", algorithm=algorithm)), _bits(first))
        y = np.full(s.shape[0], np.nan, dtype)
        a.apply(x2, y, semiring="min-plus", algorithm=algorithm)
        np.testing.assert_array_equal(y, definition(stored(a), a, x2, "min-plus"))
    assert a._core.cached_semiring_plans == 1
    a.apply(x1, semiring="max-min", algorithm=algorithm)
    a.T.apply(x1, semiring="min-plus", algorithm=algorithm)  # A^T x: its own plan, on A^T
    np.testing.assert_array_equal(a.apply(x1, semiring="min-plus", algorithm=algorithm, transpose=True),
                                  definition(stored(a).T, a, x1, "min-plus"))
    assert a._core.cached_semiring_plans == 3


def test_semiring_plan_refusal_is_not_kept_and_options_reach_it():
    # 4000 rows of 1 or 3 entries: ELL stores 1.5 slots a nonzero, under the default bound (3 x nnz + 1024) and over
    # max_padding=1.1's. The refusal comes from the conversion, and no plan is kept for it.
    n = 4000
    rows = np.repeat(np.arange(n), np.where(np.arange(n) % 2 == 1, 3, 1))
    cols = (rows + 17 * np.concatenate([np.arange(k) for k in np.where(np.arange(n) % 2 == 1, 3, 1)])) % n
    s = sp.csr_matrix((np.linspace(0.5, 2.0, rows.size), (rows, cols)), shape=(n, n))
    x = np.random.default_rng(12).standard_normal(n)
    want = definition(s, spmv.Matrix.from_scipy(s), x, "min-plus")
    tight = spmv.Matrix.from_scipy(s, options={"max_padding": 1.1})
    for algorithm in ("ell", "ellr"):
        with pytest.raises(spmv.UnsupportedError, match="padding factor"):
            tight.apply(x, semiring="min-plus", algorithm=algorithm)
        np.testing.assert_array_equal(spmv.Matrix.from_scipy(s).apply(x, semiring="min-plus", algorithm=algorithm),
                                      want)
    assert tight._core.cached_semiring_plans == 0
    np.testing.assert_array_equal(tight.apply(x, semiring="min-plus", algorithm="coo"), want)
    assert tight._core.cached_semiring_plans == 1
    sell = spmv.Matrix.from_scipy(s, options={"sell_c": 4, "sell_sigma": 8, "hyb_ell_width": 0})
    for algorithm in ("sell", "hyb"):
        np.testing.assert_array_equal(sell.apply(x, semiring="min-plus", algorithm=algorithm), want)
    with pytest.raises(ValueError, match="power of two"):
        spmv.Matrix.from_scipy(s, options={"sell_c": 3}).apply(x, semiring="min-plus", algorithm="sell")


@pytest.mark.parametrize("algorithm", ["merge-parallel", "sell", "ell", "hyb"])
def test_semiring_plan_from_several_threads(algorithm):
    # The kept plan is applied with the GIL released: four Python threads, each its own x and y, must each get the
    # bits of a call made alone.
    s = CASES["poisson2d"]
    a = spmv.Matrix.from_scipy(s, options={"threads": 2})
    xs = [np.random.default_rng(20 + t).standard_normal(s.shape[1]) for t in range(4)]
    alone = [_bits(a.apply(x, semiring="min-plus", algorithm=algorithm)).copy() for x in xs]

    def work(t):
        y = np.empty(s.shape[0])
        for _ in range(50):
            a.apply(xs[t], y, semiring="min-plus", algorithm=algorithm)
            if not np.array_equal(_bits(y), alone[t]):
                return False
        return True

    with ThreadPoolExecutor(4) as pool:
        assert all(pool.map(work, range(4)))
    assert a._core.cached_semiring_plans == 1


def _graph(n=600, seed=3):
    rng = np.random.default_rng(seed)
    rows = rng.integers(0, n, 6 * n)
    cols = rng.integers(0, n, 6 * n)
    w = rng.uniform(0.5, 3.0, 6 * n)
    g = sp.csr_matrix((w, (rows, cols)), shape=(n, n))
    g.sum_duplicates()
    return g


def test_bfs_levels_with_or_and():
    g = _graph()
    a = spmv.Matrix.from_scipy(g)
    n, source = g.shape[0], 0
    level = np.full(n, -1)
    level[source] = 0
    frontier = np.zeros(n)
    frontier[source] = 1
    depth = 0
    while frontier.any():
        depth += 1
        reached = a.apply(frontier, semiring="or-and", transpose=True)  # one edge from the frontier
        frontier = ((reached != 0) & (level < 0)).astype(float)
        level[frontier != 0] = depth
    want = csgraph.shortest_path(g, unweighted=True, indices=source)
    np.testing.assert_array_equal(np.where(np.isinf(want), -1, want).astype(int), level)


def test_shortest_paths_with_min_plus():
    g = _graph()
    a = spmv.Matrix.from_scipy(g)
    n, source = g.shape[0], 4
    d = np.full(n, np.inf)
    d[source] = 0
    for _ in range(n):
        relaxed = np.minimum(d, a.apply(d, semiring="min-plus", transpose=True))
        if np.array_equal(relaxed, d):
            break
        d = relaxed
    want = csgraph.dijkstra(g, indices=source)
    np.testing.assert_allclose(d, want, rtol=1e-12)
