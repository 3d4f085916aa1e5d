"""A.T (a transposed view sharing A's data and plan cache) and A.dot, as scipy.sparse users write them."""

import numpy as np
import pytest
import scipy.sparse as sp

import spmv
from cases import CASES, COMBOS, NO_PADDING_LIMIT
from oracle import assert_close, random_vector


def test_t_is_a_view_with_swapped_shape_and_t_t_is_a():
    s = CASES["wide_empty_cols"]  # 23 x 37
    a = spmv.Matrix.from_scipy(s)
    t = a.T
    assert t.shape == (37, 23) and a.shape == (23, 37)
    assert t.T is a and a.transpose().T is a
    assert t._core is a._core  # the same C++ core: same arrays, same plan cache
    assert t.nnz == a.nnz and t.dtype == a.dtype and t.index_dtype == a.index_dtype
    assert t.format == "csc" and a.format == "csr"
    assert np.shares_memory(t.data, a.data)
    assert "transposed view" in repr(t) and "37x23" in repr(t)


def test_t_products_match_scipy_and_run_the_transposed_operation():
    s = CASES["wide_empty_cols"]
    a = spmv.Matrix.from_scipy(s)
    xt = random_vector(23, np.float64, 1)
    x = random_vector(37, np.float64, 2)
    for y in (a.T @ xt, a.T.dot(xt), a.T.matvec(xt), xt @ a.T.T):
        assert y.shape == (37,)
        assert_close(y, s, xt, transpose=True)
    for y in (a.T.rmatvec(x), a.T.T @ x, x @ a.T, a.dot(x)):
        assert y.shape == (23,)
        assert_close(y, s, x)
    assert a.T.plan_info()["algorithm"] == a.plan_info(transpose=True)["algorithm"]


def symmetric_case():
    """37 x 37, equal to its transpose (values included), with empty rows."""
    b = CASES["tall_empty_rows"]  # 37 x 23
    return (sp.hstack([b, sp.csr_matrix((37, 14))]) + sp.hstack([b, sp.csr_matrix((37, 14))]).T).tocsr()


@pytest.mark.parametrize("algorithm", ["auto"] + spmv.algorithms("cpu", transpose=True))
def test_t_apply_with_alpha_beta_for_every_transpose_algorithm(algorithm):
    s = CASES["tall_empty_rows"]  # 37 x 23
    if algorithm == "symmetric":  # A^T x as A x: for matrices equal to their transpose only
        with pytest.raises(spmv.UnsupportedError, match=r"A is 37 x 23, not square"):
            spmv.Matrix.from_scipy(s, algorithm=algorithm).T @ random_vector(37, np.float64, 3)
        s = symmetric_case()
    a = spmv.Matrix.from_scipy(s, algorithm=algorithm, options=NO_PADDING_LIMIT)
    t = a.T
    rows, cols = s.shape
    x = random_vector(rows, np.float64, 3)
    y0 = random_vector(cols, np.float64, 4)
    for alpha, beta in COMBOS:
        y = np.full(cols, np.nan) if beta == 0 else y0.copy()
        assert t.apply(x, y, alpha, beta) is y
        assert_close(y, s, x, alpha, beta, y0, transpose=True)
    # transpose=True through the view is A itself (where the algorithm also offers A x: the explicit
    # transpose and the symmetric route are for A^T x only, and say so).
    xa = random_vector(cols, np.float64, 5)
    if algorithm in ["auto"] + spmv.algorithms("cpu"):
        assert_close(t.apply(xa, transpose=True), s, xa)
    else:
        with pytest.raises(spmv.UnsupportedError, match="does not offer"):
            t.apply(xa, transpose=True)


def test_auto_runs_a_symmetric_matrix_transposed_through_its_own_plan_with_the_hint():
    s = symmetric_case()
    hinted = spmv.Matrix.from_scipy(s, options={"expected_applies": 1000})
    assert hinted.plan_info(transpose=True)["algorithm"] == "symmetric"
    assert spmv.Matrix.from_scipy(s).plan_info(transpose=True)["algorithm"] != "symmetric"  # no hint
    x = random_vector(37, np.float64, 8)
    assert_close(hinted.T @ x, s, x, transpose=True)
    skewed = s.copy()
    row = np.repeat(np.arange(37), np.diff(skewed.indptr))
    skewed.data[np.flatnonzero(skewed.indices != row)[0]] += 1  # off the diagonal: the explicit transpose instead
    assert spmv.Matrix.from_scipy(skewed, options={"expected_applies": 1000}).plan_info(
        transpose=True)["algorithm"] == "explicit-transpose"


def test_t_shares_the_plan_cache():
    s = CASES["random_2k_plus_97"]
    a = spmv.Matrix.from_scipy(s)
    x = random_vector(s.shape[0], np.float64, 6)
    a.rmatvec(x)
    assert a._core.cached_plans == 1
    a.T @ x
    a.T.dot(x)
    assert a._core.cached_plans == 1  # the plan of (cpu, auto, T) built by A.rmatvec serves A.T @ x
    a.T.T @ x
    assert a._core.cached_plans == 2


def test_dot_and_t_with_a_matrix_of_vectors():
    s = CASES["wide_empty_cols"]
    a = spmv.Matrix.from_scipy(s)
    x = np.random.default_rng(7).uniform(-1, 1, (23, 3))
    y = a.T.dot(x)
    assert y.shape == (37, 3)
    np.testing.assert_allclose(y, s.T @ x, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(a.dot(np.ones((37, 2))), s @ np.ones((37, 2)), rtol=1e-12)


def test_t_conversions_statistics_and_errors():
    s = sp.random(12, 7, density=0.3, format="csr", random_state=8)
    a = spmv.Matrix.from_scipy(s)
    t = a.T
    back = t.to_scipy()
    assert back.shape == (7, 12) and back.format == "csc"
    assert abs(back - s.T).max() == 0
    assert t.astype(np.float32).dtype == np.float32 and t.astype(np.float32).shape == (7, 12)
    info = spmv.info(t)
    assert (info["rows"], info["cols"], info["nnz"]) == (7, 12, s.nnz)
    assert info["row_max"] == np.diff(s.tocsc().indptr).max()
    with pytest.raises(ValueError, match="entries"):
        t @ np.ones(7)  # A.T needs A.rows = 12 entries
    lin = t.aslinearoperator()
    assert lin.shape == (7, 12)
    xt = random_vector(12, np.float64, 9)
    assert_close(lin.matvec(xt), s, xt, transpose=True)


def test_bench_through_the_view_times_the_transposed_product():
    a = spmv.generate.poisson2d(4)
    rows = spmv.bench(a.T, "row-loop", device="cpu", repetitions=1, warmup=0, min_sample_ms=0.0)
    assert rows[0]["op"] == "T" and rows[0]["verified"] == "ok"
    rows = spmv.bench(a.T, "row-loop", device="cpu", transpose=True, repetitions=1, warmup=0, min_sample_ms=0.0)
    assert rows[0]["op"] == "N"
