"""spmv.bench (the loop of `spmv bench`), algorithm lists, and SciPy solvers on the LinearOperator."""

import inspect
import math

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import spmv
from oracle import assert_close, random_vector

FAST = {"repetitions": 1, "warmup": 0, "min_sample_ms": 0.0}


def test_algorithm_lists():
    cpu = spmv.algorithms("cpu")
    assert {"reference", "row-loop", "column-chunked", "merge-parallel"} <= set(cpu)
    assert "auto" not in cpu and "csr-vector" not in cpu
    assert spmv.algorithms("cpu", transpose=True)
    assert isinstance(spmv.cuda_available(), bool)


def test_bench_verifies_and_times_every_cpu_algorithm(capfd):
    a = spmv.generate.poisson2d(8)
    rows = spmv.bench(a, "all", device="cpu", **FAST)
    assert [r["algorithm"] for r in rows if not r["vendor"]] == [n for n in spmv.algorithms("cpu")
                                                                   if n not in ("eigen", "mkl")]
    for r in rows:
        assert r["verified"] == "ok", r
        assert r["backend"] == "cpu" and r["precision"] == "f64" and r["op"] == "N"
        assert r["median_ms"] > 0 and r["gflops"] > 0 and r["error_ratio"] <= 1.0
        assert r["model_bytes"] > 0 and math.isnan(r["pct_bandwidth"])  # no bandwidth given
        # Formats convert the matrix: the row says when that pays off (a count or inf); CSR rows do not.
        if r["algorithm"] in ("coo", "ell", "ellr", "ellr-vector", "dia", "hyb", "sell", "compressed-csr"):
            assert r["break_even_products"] > 0
        else:
            assert math.isnan(r["break_even_products"])
    out, err = capfd.readouterr()
    assert out == "" and err == ""  # quiet unless verbose


def test_bench_options():
    s = sp.random(40, 30, density=0.2, format="csr", random_state=3)
    rows = spmv.bench(s, ["auto", "row-loop"], device="cpu", dtype="both", transpose=True, alpha=2.0, beta=0.5,
                      bandwidth=100.0, **FAST)
    assert [(r["algorithm"], r["precision"]) for r in rows] == [("auto", "f64"), ("row-loop", "f64"),
                                                                ("auto", "f32"), ("row-loop", "f32")]
    for r in rows:
        assert r["verified"] == "ok" and r["op"] == "T" and (r["alpha"], r["beta"]) == (2.0, 0.5)
        assert r["resolved"] in spmv.algorithms("cpu") and r["bandwidth_gbs"] == 100.0
        assert r["pct_bandwidth"] == pytest.approx(r["gbs"])  # gbs / 100 GB/s in percent


def test_bench_skips_what_a_backend_does_not_offer_and_prints_when_verbose(capfd):
    rows = spmv.bench(spmv.generate.poisson2d(4), ["csr-vector", "row-loop"], device="cpu", verbose=True, **FAST)
    assert [r["verified"] for r in rows] == ["skipped", "ok"]
    assert "does not offer" in rows[0]["message"]
    out, _ = capfd.readouterr()
    assert "row-loop" in out  # the table of `spmv bench`


def test_bench_argument_errors():
    a = spmv.generate.poisson2d(3)
    with pytest.raises(ValueError, match="unknown algorithm"):
        spmv.bench(a, ["warp-speed"], device="cpu")
    with pytest.raises(ValueError, match="repetitions"):
        spmv.bench(a, device="cpu", repetitions=0)
    with pytest.raises(ValueError, match="bandwidth"):
        spmv.bench(a, device="cpu", bandwidth=-3)
    with pytest.raises(TypeError, match="float32 or float64"):
        spmv.bench(a, device="cpu", dtype=np.int32)


def test_bench_as_frame():
    pd = pytest.importorskip("pandas")
    frame = spmv.bench(spmv.generate.poisson2d(4), "row-loop", device="cpu", as_frame=True, **FAST)
    assert isinstance(frame, pd.DataFrame) and list(frame["verified"]) == ["ok"]


def _tolerance_keyword(solver):
    # SciPy 1.12 renamed tol to rtol (and 1.14 removed tol).
    return "rtol" if "rtol" in inspect.signature(solver).parameters else "tol"


RTOL = 1e-10


def _check_residual(a_scipy, x, b):
    # The solvers stop on their recurrence residual <= rtol*|b|; the true residual may differ by
    # rounding (a few eps*|A|*|x|), far below this factor of 2.
    assert np.linalg.norm(b - a_scipy @ x) <= 2 * RTOL * np.linalg.norm(b)


@pytest.mark.parametrize("dtype", [np.float64])
@pytest.mark.parametrize("algorithm", ["auto", "merge-parallel", "sell"])
def test_cg_on_poisson(dtype, algorithm):
    a = spmv.generate.poisson2d(24, algorithm=algorithm)
    op = a.aslinearoperator()
    assert isinstance(op, spla.LinearOperator) and op.shape == a.shape and op.dtype == dtype
    b = random_vector(a.shape[0], dtype, 1)
    x, info = spla.cg(op, b, **{_tolerance_keyword(spla.cg): RTOL}, maxiter=2000)
    assert info == 0
    _check_residual(a.to_scipy(), x, b)


def test_gmres_on_a_nonsymmetric_poisson_problem():
    # Poisson plus a first-order (convection) term: nonsymmetric, still well conditioned.
    n = 16
    lap = spmv.generate.poisson2d(n).to_scipy()
    convection = sp.csr_array(sp.kron(sp.eye(n), sp.diags([-0.5, 0.5], [-1, 1], shape=(n, n))))
    s = sp.csr_array(lap + convection)
    a = spmv.Matrix.from_scipy(s)
    b = random_vector(n * n, np.float64, 2)
    x, info = spla.gmres(a.aslinearoperator(), b, **{_tolerance_keyword(spla.gmres): RTOL}, restart=50,
                         maxiter=200)
    assert info == 0
    _check_residual(s, x, b)


def test_lsqr_uses_rmatvec_on_a_rectangular_matrix():
    rng = np.random.default_rng(4)
    s = sp.csr_array(sp.random(60, 25, density=0.2, random_state=5) + sp.eye(60, 25))
    a = spmv.Matrix.from_scipy(s)
    op = a.aslinearoperator()
    xt = rng.uniform(-1, 1, 60)
    assert_close(op.rmatvec(xt), s, xt, transpose=True)
    assert_close(op.H @ xt, s, xt, transpose=True)
    b = rng.uniform(-1, 1, 60)
    x = spla.lsqr(op, b, atol=1e-12, btol=1e-12, iter_lim=1000)[0]
    expected = np.linalg.lstsq(s.toarray(), b, rcond=None)[0]
    # Normal equations: the least-squares solution is unique (full column rank); lsqr's stopping rule at
    # atol = btol = 1e-12 leaves an error of order cond(A) * 1e-12, with cond(A) below 1e2 here.
    assert np.linalg.cond(s.toarray()) < 1e2
    assert np.allclose(x, expected, rtol=0, atol=1e-8)


def test_linear_operator_matmat():
    s = sp.csr_array(sp.random(30, 20, density=0.3, random_state=6))
    op = spmv.Matrix.from_scipy(s).aslinearoperator()
    x = np.random.default_rng(7).uniform(-1, 1, (20, 3))
    y = op @ x
    for j in range(3):
        assert_close(y[:, j], s, x[:, j])
