"""Edge probes of the Python package's newer paths, as a demanding user would try them (the C++ twin is
tests/cpu/edge_probe_test.cpp): ``A @ X`` with NaN in one entry of X, X in every memory layout NumPy
can hand over (Fortran order, column and row slices, reversed, broadcast, big-endian), X of another
dtype than A, ``A.T @ X`` and ``X @ A``, empty shapes, concurrent products on one matrix, and the
semiring refusals of alpha and beta. Every numeric check uses oracle.py's bound (c*eps*(|beta||y0| +
|alpha| sum |a_ij x_j|), c = 2(k + 2), Higham section 3.1); exact checks are for results that involve
no rounding."""

import numpy as np
import pytest
import scipy.sparse as sp

import spmv
from cases import CASES, concurrently, stored
from oracle import assert_close, expected

SEMIRINGS = ["min-plus", "max-times", "or-and", "max-min"]


def _check(y, held, x, transpose=False, dtype=np.float64):
    x = np.asarray(x, dtype=np.float64)
    assert y.ndim == 2 and y.shape[1] == x.shape[1]
    for j in range(x.shape[1]):
        assert_close(y[:, j], held, x[:, j], transpose=transpose, dtype=dtype)


def _touching(held, r0, transpose):
    """Outputs of op(A) whose row stores an entry in column r0 of op(A) (explicit zeros included)."""
    coo = sp.coo_array(held)
    out, inner = (coo.col, coo.row) if transpose else (coo.row, coo.col)
    n_out = held.shape[1] if transpose else held.shape[0]
    hit = np.zeros(n_out, dtype=bool)
    hit[out[inner == r0]] = True
    return hit


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("case", ["tall_empty_rows", "unsorted_duplicates", "long_row"])
@pytest.mark.parametrize("transpose", [False, True], ids=["N", "T"])
def test_nan_in_one_entry_of_x_stays_in_its_column(case, order, dtype, transpose):
    a = spmv.Matrix.from_scipy(CASES[case], dtype=dtype)
    held = stored(a)
    n_in = a.shape[0] if transpose else a.shape[1]
    k = 37  # tiles 32 + 4 + 1 (f32) or 16 + 16 + 4 + 1 (f64)
    rng = np.random.default_rng(7)
    for c in (0, 5, 16, k - 1):
        r0 = (c * 131 + 7) % n_in
        x = np.asarray(rng.uniform(-1, 1, (n_in, k)).astype(dtype), order=order)
        x[r0, c] = np.nan
        x_before = x.copy()
        y = (a.T @ x) if transpose else (a @ x)
        assert np.array_equal(x, x_before, equal_nan=True), "X was modified"
        assert y.dtype == dtype
        hit = _touching(held, r0, transpose)
        for j in range(k):
            xj = np.where(np.isnan(x[:, j]), 0.0, x[:, j].astype(np.float64))
            ref, bound = expected(held, xj, transpose=transpose, dtype=dtype)
            nan_expected = hit if j == c else np.zeros_like(hit)
            assert np.array_equal(np.isnan(y[:, j]), nan_expected), (c, j, np.flatnonzero(np.isnan(y[:, j])))
            ok = np.abs(y[~nan_expected, j].astype(np.float64) - ref[~nan_expected]) <= bound[~nan_expected]
            assert ok.all(), (c, j)


def test_all_nan_x_leaves_empty_rows_zero():
    # An empty row is an empty sum: 0 whatever X holds (scipy agrees), never NaN from 0 * NaN.
    s = CASES["tall_empty_rows"]
    a = spmv.Matrix.from_scipy(s)
    x = np.full((a.shape[1], 5), np.nan)
    y = a @ x
    empty = np.diff(stored(a).indptr) == 0
    assert empty.sum() >= 3
    assert np.array_equal(y[empty], np.zeros((empty.sum(), 5)))
    assert np.isnan(y[~empty]).all()
    z = spmv.Matrix.from_scipy(CASES["no_nonzeros"]) @ np.full((6, 3), np.inf)
    assert np.array_equal(z, np.zeros((4, 3)))


def _layouts(base):
    """X in every layout NumPy can hand over, each with the same values as `base` (n x k, k = 7)."""
    n, k = base.shape
    wide = np.empty((n, 2 * k), dtype=base.dtype)
    wide[:, ::2] = base
    tall = np.empty((2 * n, k), dtype=base.dtype)
    tall[::2] = base
    wide[:, 1::2] = np.nan  # what a strided read past its columns would pick up
    tall[1::2] = np.nan
    rev = np.ascontiguousarray(base[::-1, ::-1])
    return {
        "C": np.ascontiguousarray(base),
        "F": np.asfortranarray(base),
        "column_stride_2": wide[:, ::2],  # no contiguous dimension: copied
        "row_stride_2": tall[::2],  # rows contiguous, leading dimension 2k: read in place
        "F_row_stride_2": np.asfortranarray(tall)[::2],  # no contiguous dimension
        "F_column_slice": np.asfortranarray(wide)[:, ::2],  # columns contiguous, leading dimension 2n
        "reversed": rev[::-1, ::-1],  # negative strides
        "transposed_C": np.ascontiguousarray(base.T).T,  # F-contiguous view of a C array
    }


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("case", ["tall_empty_rows", "wide_empty_cols", "unsorted_duplicates"])
def test_every_layout_of_x_gives_the_same_product(case, dtype):
    a = spmv.Matrix.from_scipy(CASES[case], dtype=dtype)
    held = stored(a)
    rng = np.random.default_rng(31)
    for transpose in (False, True):
        n_in = a.shape[0] if transpose else a.shape[1]
        base = rng.uniform(-1, 1, (n_in, 7)).astype(dtype)
        for name, x in _layouts(base).items():
            assert np.array_equal(x, base), name
            y = (a.T @ x) if transpose else (a @ x)
            assert y.dtype == dtype and y.shape == (a.shape[1] if transpose else a.shape[0], 7), name
            _check(y, held, base, transpose=transpose, dtype=dtype)
        # One column out of a wider array, in both orders (leading dimension > 1 with k = 1).
        for src in (np.ascontiguousarray(base), np.asfortranarray(base)):
            for j in (0, 6):
                y = (a.T @ src[:, j:j + 1]) if transpose else (a @ src[:, j:j + 1])
                _check(y, held, base[:, j:j + 1], transpose=transpose, dtype=dtype)


def test_broadcast_and_big_endian_x():
    s = CASES["poisson2d"]
    a = spmv.Matrix.from_scipy(s)
    rng = np.random.default_rng(2)
    row = rng.uniform(-1, 1, 4)
    col = rng.uniform(-1, 1, a.shape[1])
    for x in (np.broadcast_to(row, (a.shape[1], 4)),  # stride 0 between rows
              np.broadcast_to(col[:, None], (a.shape[1], 4)),  # stride 0 between columns
              np.broadcast_to(col[:, None], (a.shape[1], 1))):
        _check(a @ x, s, np.array(x))
    for order in ("C", "F"):
        x = np.asarray(rng.uniform(-1, 1, (a.shape[1], 5)), order=order)
        big = x.astype(">f8")  # same values, other byte order: converted, never reinterpreted
        _check(a @ big, s, x)
        a32 = a.astype(np.float32)
        _check(a32 @ x.astype(">f4"), stored(a32), x.astype(np.float32), dtype=np.float32)


def test_dtype_mismatch_is_cast_not_reinterpreted():
    s = CASES["random_2k_plus_97"]
    a64 = spmv.Matrix.from_scipy(s, dtype=np.float64)
    a32 = spmv.Matrix.from_scipy(s, dtype=np.float32)
    rng = np.random.default_rng(9)
    x64 = rng.uniform(-1, 1, (s.shape[1], 6))
    for order in ("C", "F"):
        x = np.asarray(x64, order=order)
        # float64 X into a float32 matrix: X is rounded to float32 first (documented), result float32.
        y = a32 @ x
        assert y.dtype == np.float32
        _check(y, stored(a32), x.astype(np.float32), dtype=np.float32)
        assert x.dtype == np.float64 and np.array_equal(x, x64), "X was converted in place"
        # float32 X into a float64 matrix: widened exactly, result float64 at float64's bound.
        x32 = x.astype(np.float32)
        y = a64 @ x32
        assert y.dtype == np.float64
        _check(y, stored(a64), x32.astype(np.float64))
        # Integers and booleans: converted.
        xi = rng.integers(-4, 5, (s.shape[1], 3)).astype(np.int16)
        _check(a64 @ xi, stored(a64), xi.astype(np.float64))
        xb = xi > 0
        _check(a32 @ xb, stored(a32), xb.astype(np.float32), dtype=np.float32)
    for bad, err in ((np.ones((s.shape[1], 2), dtype=np.complex64), TypeError),
                     (np.array([["a", "b"]] * s.shape[1]), TypeError)):
        with pytest.raises(err):
            a32 @ bad


@pytest.mark.parametrize("case", ["wide_empty_cols", "long_row", "unsorted_duplicates"])
def test_transposed_view_and_rmatmul(case):
    s = CASES[case]
    a = spmv.Matrix.from_scipy(s)
    rng = np.random.default_rng(4)
    xt = rng.uniform(-1, 1, (a.shape[0], 6))
    _check(a.T @ xt, s, xt, transpose=True)
    x = rng.uniform(-1, 1, (a.shape[1], 3))
    _check(a.T.T @ x, s, x)
    # Rows of z times A: z @ A = (A^T z^T)^T, and z @ A.T = (A z^T)^T.
    z = rng.uniform(-1, 1, (4, a.shape[0]))
    za = z @ a
    assert za.shape == (4, a.shape[1])
    for i in range(4):
        assert_close(za[i], s, z[i], transpose=True)
    w = np.asfortranarray(rng.uniform(-1, 1, (5, a.shape[1])))
    wat = w @ a.T
    assert wat.shape == (5, a.shape[0])
    for i in range(5):
        assert_close(wat[i], s, w[i])


def test_empty_shapes_with_poisoned_x():
    for name, k in (("zero_rows", 3), ("zero_cols", 3), ("no_nonzeros", 4)):
        a = spmv.Matrix.from_scipy(CASES[name])
        for transpose in (False, True):
            n_in = a.shape[0] if transpose else a.shape[1]
            n_out = a.shape[1] if transpose else a.shape[0]
            for order in ("C", "F"):
                x = np.asarray(np.full((n_in, k), np.nan), order=order)
                y = (a.T @ x) if transpose else (a @ x)
                assert y.shape == (n_out, k) and y.dtype == a.dtype
                assert np.array_equal(y, np.zeros((n_out, k))), (name, transpose, order)
            y0 = (a.T @ np.ones((n_in, 0))) if transpose else (a @ np.ones((n_in, 0)))
            assert y0.shape == (n_out, 0)


def test_alpha_zero_and_beta_zero_on_vectors_and_2d_refused():
    # SpMM from Python has no alpha or beta (A @ X is alpha = 1, beta = 0); the vector product has both.
    s = CASES["tall_empty_rows"]
    a = spmv.Matrix.from_scipy(s)
    x = np.full(a.shape[1], np.nan)
    x[::3] = np.inf
    y0 = np.random.default_rng(1).uniform(-1, 1, a.shape[0])
    for beta in (0.0, 1.0, -1.0, 2.5):
        y = y0.copy() if beta else np.full(a.shape[0], np.nan)
        a.apply(x, y, alpha=0.0, beta=beta)
        assert np.array_equal(y, beta * y0 if beta else np.zeros(a.shape[0])), beta  # one rounding: exact
    with pytest.raises(ValueError, match="1-D"):
        a.apply(np.ones((a.shape[1], 2)), alpha=0.0)


@pytest.mark.parametrize("semiring", SEMIRINGS)
def test_semiring_refuses_alpha_and_beta(semiring):
    s = CASES["tall_empty_rows"]
    a = spmv.Matrix.from_scipy(s)
    x = np.random.default_rng(3).uniform(-1, 1, a.shape[1])
    for alpha, beta in ((2.5, 0.0), (0.0, 0.0), (-1.0, 0.0), (1.0, 1.0), (1.0, -1.0), (np.nan, 0.0)):
        y = np.full(a.shape[0], 7.0)
        with pytest.raises(ValueError, match="alpha or beta"):
            a.apply(x, y, alpha=alpha, beta=beta, semiring=semiring)
        assert np.array_equal(y, np.full(a.shape[0], 7.0)), "y written by a refused call"
    with pytest.raises(ValueError, match="entries"):
        a.apply(np.ones(a.shape[1] + 1), semiring=semiring)
    with pytest.raises(ValueError):
        a.apply(x, np.empty(a.shape[0] - 1), semiring=semiring)
    if not spmv.cuda_available():  # on a GPU the CUDA kernel runs (test_cuda.py)
        with pytest.raises(spmv.UnsupportedError, match="no CUDA device"):
            a.apply(x, semiring=semiring, device="cuda")
    # alpha = 1, beta = 0 are the semiring's own product: accepted.
    assert a.apply(x, semiring=semiring).shape == (a.shape[0],)


@pytest.mark.parametrize("semiring", SEMIRINGS)
@pytest.mark.parametrize("transpose", [False, True], ids=["N", "T"])
def test_semiring_empty_rows_are_the_identity_whatever_x_holds(semiring, transpose):
    s = CASES["wide_empty_cols"] if transpose else CASES["tall_empty_rows"]
    a = spmv.Matrix.from_scipy(s)
    held = stored(a)
    n_in = a.shape[0] if transpose else a.shape[1]
    x = np.resize(np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.5, -2.0]), n_in)
    y = a.apply(x, semiring=semiring, transpose=transpose)
    lengths = np.bincount(sp.coo_array(held).col, minlength=a.shape[1]) if transpose else np.diff(held.indptr)
    zero = {"min-plus": np.inf, "max-times": -np.inf, "or-and": 0.0, "max-min": -np.inf}[semiring]
    assert (lengths == 0).sum() >= 2
    assert np.array_equal(y[lengths == 0], np.full((lengths == 0).sum(), zero))


def test_concurrent_mixed_products_on_one_matrix():
    s = CASES["random_2k_plus_97"]
    a = spmv.Matrix.from_scipy(s)
    rng = np.random.default_rng(8)
    xs = [rng.uniform(-1, 1, (a.shape[1], 5)), np.asfortranarray(rng.uniform(-1, 1, (a.shape[1], 33))),
          rng.uniform(-1, 1, (a.shape[0], 8)), rng.uniform(-1, 1, (2 * a.shape[1], 3))[::2]]
    transposes = [False, False, True, False]
    alone = [(a.T @ x) if t else (a @ x) for x, t in zip(xs, transposes)]

    def work(i):
        for _ in range(8):
            y = (a.T @ xs[i]) if transposes[i] else (a @ xs[i])
            assert np.array_equal(y, alone[i]), i  # every entry summed by one thread: same bits
        return True

    assert all(concurrently(4, work))
    for x, t, y in zip(xs, transposes, alone):
        _check(y, s, x, transpose=t)
