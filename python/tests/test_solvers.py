"""spmv.cg / spmv.bicgstab / spmv.gmres against scipy.sparse.linalg on the same problems (CPU)."""

import inspect

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import spmv


def _convection_diffusion(n, wind=0.5):
    lap = spmv.generate.poisson2d(n).to_scipy().tocsr()
    upwind = sp.diags([-wind], [-n], shape=lap.shape) + sp.eye(lap.shape[0]) * wind
    return (lap + upwind).tocsr()


def _scipy_solve(method, a, b, tol, maxiter, restart, jacobi):
    kw = "rtol" if "rtol" in inspect.signature(spla.cg).parameters else "tol"
    count = [0]

    def callback(_):
        count[0] += 1

    m = None
    if jacobi:
        m = sp.diags(1.0 / a.diagonal())
    if method == "cg":
        x, info = spla.cg(a, b, M=m, maxiter=maxiter, callback=callback, **{kw: tol, "atol": 0.0})
    elif method == "bicgstab":
        x, info = spla.bicgstab(a, b, M=m, maxiter=maxiter, callback=callback, **{kw: tol, "atol": 0.0})
    else:
        x, info = spla.gmres(a, b, M=m, restart=restart, maxiter=maxiter, callback=callback,
                             callback_type="pr_norm", **{kw: tol, "atol": 0.0})
    return x, info, count[0]


CASES = [(m, j, dt) for m in ("cg", "bicgstab", "gmres") for j in (False, True) for dt in (np.float64, np.float32)]


@pytest.mark.parametrize("method,jacobi,dtype", CASES)
def test_agrees_with_scipy(method, jacobi, dtype):
    a = spmv.generate.poisson2d(24).to_scipy().tocsr() if method == "cg" else _convection_diffusion(20)
    rng = np.random.default_rng(42)
    b = rng.uniform(-1, 1, a.shape[0])
    tol = 1e-10 if dtype == np.float64 else 1e-5
    A = spmv.Matrix.from_scipy(a, dtype=dtype)
    solver = getattr(spmv, method)
    kwargs = {"restart": 20} if method == "gmres" else {}
    x, info = solver(A, b, tol=tol, maxiter=2000, M="jacobi" if jacobi else None, history=True, **kwargs)
    assert info.converged, info
    assert x.dtype == dtype
    assert info.breakdown == ""
    assert len(info.history) == info.iterations + 1
    # The true residual, recomputed here in double, matches the reported one and the tolerance (with
    # the attainable-accuracy allowance of tests/common/solver_problems.hpp: 20 eps k |A| |x| / |b|).
    r = np.linalg.norm(b - a @ x.astype(np.float64)) / np.linalg.norm(b)
    eps = float(np.finfo(dtype).eps)
    scale = abs(a).sum(axis=1).max() * np.linalg.norm(x) / np.linalg.norm(b)  # |A| |x| / |b|
    bound = tol + 20 * eps * (info.iterations + 1) * scale
    assert r <= bound
    # The reported residual was computed in the value type: one product's rounding apart.
    assert info.residual == pytest.approx(r, rel=0, abs=10 * eps * scale)
    # SciPy on the same problem: its solution within kappa * (both residuals) (kappa < 1000 here) and
    # about the same number of iterations (different orthogonalisation / summation order: 3 + 5%;
    # SciPy's GMRES callback counts inner iterations as we do).
    xs, status, its = _scipy_solve(method, a, b, tol if dtype == np.float64 else 1e-5, 2000, 20, jacobi)
    assert status == 0
    assert np.linalg.norm(x - xs) / np.linalg.norm(xs) <= 1000 * 2 * bound
    if dtype == np.float64:
        assert abs(info.iterations - its) <= 3 + its // 20, (info.iterations, its)


def test_scipy_input_x0_callback_and_info():
    a = spmv.generate.poisson2d(15).to_scipy().tocsr()
    b = a @ np.ones(a.shape[0])
    seen = []
    x, info = spmv.cg(a, b, x0=np.zeros(a.shape[0]), tol=1e-12, callback=lambda k, r: seen.append((k, r)),
                      callback_every=5)
    assert info.converged and np.allclose(x, 1.0, atol=1e-9)
    assert [k for k, _ in seen] == list(range(5, info.iterations + 1, 5))
    assert all(r > 0 for _, r in seen)
    assert info.ms_per_iteration > 0 and 0 <= info.apply_share <= 1 and info.applies == info.iterations + 2
    assert info.algorithm
    # x0 is the exact solution: converged at iteration 0, and x0 itself is not modified.
    x0 = np.ones(a.shape[0])
    x, info = spmv.gmres(a, b, x0=x0)
    assert info.iterations == 0 and info.converged
    assert np.array_equal(x0, np.ones(a.shape[0]))


def test_zero_rhs_and_bad_input():
    A = spmv.generate.poisson2d(5)
    x, info = spmv.bicgstab(A, np.zeros(25), x0=np.full(25, 3.0))
    assert info.converged and info.iterations == 0 and not x.any()
    b = np.ones(25)
    b[4] = np.nan
    with pytest.raises(ValueError, match="b holds NaN or Inf at row 4"):
        spmv.cg(A, b)
    with pytest.raises(ValueError, match="square"):
        spmv.cg(sp.random(4, 5, density=0.5, format="csr", random_state=1), np.ones(4))
    with pytest.raises(ValueError, match="x0 has shape"):
        spmv.cg(A, np.ones(25), x0=np.ones(24))
    with pytest.raises(ValueError, match="b has 24 entries"):
        spmv.cg(A, np.ones(24))
    with pytest.raises(ValueError, match="M must be"):
        spmv.cg(A, np.ones(25), M="ilu")
    no_diagonal = sp.csr_matrix(np.array([[2.0, 1.0, 0.0], [1.0, 0.0, 1.0], [0.0, 1.0, 2.0]]))
    with pytest.raises(ValueError, match=r"row 1 \(0-based\) has 0"):
        spmv.gmres(no_diagonal, np.ones(3), M="jacobi")


def test_breakdown_is_reported():
    indefinite = sp.csr_matrix(np.diag([1.0, -1.0]))
    x, info = spmv.cg(indefinite, np.ones(2))
    assert not info.converged and "p.Ap <= 0" in info.breakdown
    rho_zero = sp.csr_matrix(np.array([[1.0, 0, 1], [2, 1, -1], [0, -1, -2]]))
    x, info = spmv.bicgstab(rho_zero, np.array([1.0, 0, 0]))
    assert "rho = 0" in info.breakdown and info.iterations == 1


def test_maxiter_not_converged():
    A = spmv.generate.poisson2d(20)
    x, info = spmv.gmres(A, np.ones(400), tol=1e-14, maxiter=7, restart=3)
    assert not info.converged and info.iterations == 7 and info.breakdown == ""


@pytest.mark.parametrize("jacobi", [False, True])
def test_cg_fused_and_unfused_agree_and_report_the_floor(jacobi):
    # Issue 15: the fused CG (default) and issue 9's unfused one take the same iterations and reach the
    # same x within the tolerance's reach; the floor's byte counts are those of docs/SOLVERS.md.
    a = spmv.generate.poisson2d(30)
    b = a.to_scipy() @ np.ones(a.shape[0])
    m = "jacobi" if jacobi else None
    x_f, info_f = spmv.cg(a, b, tol=1e-10, maxiter=1000, M=m)
    x_u, info_u = spmv.cg(a, b, tol=1e-10, maxiter=1000, M=m, fused=False)
    assert info_f.converged and info_u.converged
    assert info_f.iterations == info_u.iterations
    np.testing.assert_allclose(x_f, x_u, rtol=0, atol=1e-8)
    assert (info_f.variant, info_u.variant) == ("fused", "unfused")
    n = a.shape[0]
    assert info_f.vector_bytes == (12 if jacobi else 10) * n * 8
    assert info_u.vector_bytes == (13 if jacobi else 11) * n * 8
    assert info_f.apply_bytes == a.nnz * 12 + (n + 1) * 4 + 2 * n * 8
    assert info_f.floor_bytes == info_f.apply_bytes + info_f.vector_bytes
    assert info_f.floor_ms(100.0) == pytest.approx(info_f.floor_bytes / 100e9 * 1e3)
    with pytest.raises(ValueError, match="graph"):
        spmv.cg(a, b, graph=True, backend="cpu")


@pytest.mark.parametrize("jacobi", [False, True])
def test_pipelined_cg_matches_cg(jacobi):
    # pipelined=True: the same Krylov iterates in exact arithmetic; iterations within 2 and x within
    # the tolerance's reach of the fused CG's; 13 vector words per row, 20 with Jacobi (docs/SOLVERS.md).
    a = spmv.generate.poisson2d(30)
    b = a.to_scipy() @ np.ones(a.shape[0])
    m = "jacobi" if jacobi else None
    x_f, info_f = spmv.cg(a, b, tol=1e-10, maxiter=1000, M=m)
    x_p, info_p = spmv.cg(a, b, tol=1e-10, maxiter=1000, M=m, pipelined=True)
    assert info_p.converged and info_p.variant == "pipelined"
    assert abs(info_p.iterations - info_f.iterations) <= 2
    np.testing.assert_allclose(x_p, x_f, rtol=0, atol=1e-7)  # 2 * kappa * tol with kappa(poisson2d 30) ~ 390
    assert info_p.vector_bytes == (20 if jacobi else 13) * a.shape[0] * 8


def test_reordered_matrix_solves_once_in_the_new_numbering():
    # options={'reorder': 'rcm'}: spmv.cg on NumPy vectors runs the whole solve on P A P^T (b and x
    # permuted once) and returns x in the caller's numbering; a scrambled grid so that RCM has work.
    s = spmv.generate.poisson2d(30).to_scipy().tocsr()
    p = np.random.default_rng(3).permutation(s.shape[0])
    s = s[p][:, p].tocsr()
    truth = 1.0 + (np.arange(s.shape[0]) % 7) / 7.0
    b = s @ truth
    a = spmv.Matrix.from_scipy(s, options={"reorder": "rcm"})
    x, info = spmv.cg(a, b, tol=1e-12, maxiter=2000)
    assert info.converged
    assert info.algorithm.startswith("reorder=rcm"), info.algorithm
    np.testing.assert_allclose(x, truth, rtol=0, atol=1e-8)  # kappa(poisson2d 30) ~ 390 times tol 1e-12


def test_gmres_float32_basis():
    """basis='f32' (a compressed Krylov basis for float64 solves): same tolerance, a float64 x, the floor's
    vector bytes smaller than the working basis's; a float32 solve is unchanged; bad names refused."""
    a = _convection_diffusion(20)
    b = np.random.default_rng(4).uniform(-1, 1, a.shape[0])
    A = spmv.Matrix.from_scipy(a)
    x_w, info_w = spmv.gmres(A, b, tol=1e-10, restart=20, maxiter=2000)
    x, info = spmv.gmres(A, b, tol=1e-10, restart=20, maxiter=2000, basis="f32")
    assert info.converged and x.dtype == np.float64
    assert np.linalg.norm(b - a @ x) / np.linalg.norm(b) <= 1e-10 * (1 + 1e-6)
    assert info.iterations <= info_w.iterations + 20
    assert info.vector_bytes < info_w.vector_bytes
    _, same = spmv.gmres(A, b, tol=1e-10, restart=20, maxiter=2000, basis=np.float32)
    assert same.iterations == info.iterations
    A32 = spmv.Matrix.from_scipy(a, dtype=np.float32)
    x32, i32 = spmv.gmres(A32, b, tol=1e-5, restart=20, basis="f32")
    x32w, i32w = spmv.gmres(A32, b, tol=1e-5, restart=20)
    assert i32.iterations == i32w.iterations and np.array_equal(x32, x32w)
    with pytest.raises(ValueError, match="basis"):
        spmv.gmres(A, b, basis="bf16")


def test_gmres_s_step():
    """s_step=S (s-step GMRES, docs/SOLVERS.md): the tolerance met with the s = 1 solver's iterations (within
    s - 1 + 5%), the variant naming the blocks, fewer floor bytes a step; S outside 1..8 and a compressed basis
    refused."""
    a = _convection_diffusion(20)
    b = np.random.default_rng(6).uniform(-1, 1, a.shape[0])
    A = spmv.Matrix.from_scipy(a)
    _, info_1 = spmv.gmres(A, b, tol=1e-10, restart=20, maxiter=2000)
    for s in (2, 5, 8):
        x, info = spmv.gmres(A, b, tol=1e-10, restart=20, maxiter=2000, s_step=s)
        assert info.converged
        assert np.linalg.norm(b - a @ x) / np.linalg.norm(b) <= 1e-10 * (1 + 1e-6)
        assert abs(info.iterations - info_1.iterations) <= s - 1 + (info_1.iterations + 19) // 20
        assert info.variant.startswith(f"s-step {s}") and "blocks" in info.variant
        assert info.vector_bytes < info_1.vector_bytes
    for bad in (0, 9):
        with pytest.raises(ValueError, match="gmres_s_step"):
            spmv.gmres(A, b, s_step=bad)
    with pytest.raises(ValueError, match="s-step basis"):
        spmv.gmres(A, b, s_step=4, basis="f32")


def test_gmres_float16_basis():
    """basis='f16' (an IEEE-half Krylov basis for float32 solves): the same tolerance, a float32 x, fewer floor
    bytes; float64 solves refuse it."""
    a = _convection_diffusion(20)
    b = np.random.default_rng(5).uniform(-1, 1, a.shape[0])
    A32 = spmv.Matrix.from_scipy(a, dtype=np.float32)
    x_w, info_w = spmv.gmres(A32, b, tol=1e-5, restart=20, maxiter=2000)
    x, info = spmv.gmres(A32, b, tol=1e-5, restart=20, maxiter=2000, basis="f16")
    assert info.converged and x.dtype == np.float32
    # Converged means the float residual met 1e-5; its rounding (5 nonzeros a row, |A||x| ~ |b|) is ~1e-6 of ||b||.
    assert np.linalg.norm(b - a @ x.astype(np.float64)) / np.linalg.norm(b) <= 1.1e-5
    assert info.iterations <= info_w.iterations + 20  # a cycle more at most (docs/SOLVERS.md)
    assert info.vector_bytes < info_w.vector_bytes
    _, same = spmv.gmres(A32, b, tol=1e-5, restart=20, maxiter=2000, basis=np.float16)
    assert same.iterations == info.iterations
    with pytest.raises(ValueError, match="f16 basis is for float solves"):
        spmv.gmres(spmv.Matrix.from_scipy(a), b, basis="f16")


def test_auto_converts_during_a_long_solve():
    """Auto without the hint may convert the matrix during a solve once the products made would have repaid
    it (docs/SOLVERS.md "Conversion during a solve"): reported in info.algorithm; the solve converges as on
    the fixed operator; a hint or a named algorithm never converts. Deterministic and two threads: the CPU
    rule then measures nothing and weighs the same thread count on every host (on 16 threads merge-parallel
    is fast enough that DIA does not repay itself on this matrix)."""
    s = spmv.generate.poisson2d(300).to_scipy().tocsr()
    b = s @ np.ones(s.shape[0])
    a = spmv.Matrix.from_scipy(s, options={"deterministic": True, "threads": 2})
    x, info = spmv.cg(a, b, tol=1e-7, maxiter=3000)
    assert info.converged
    assert "converted after" in info.algorithm, info.algorithm
    fixed = spmv.Matrix.from_scipy(s, options={"deterministic": True, "threads": 2})
    x_fixed, info_fixed = spmv.cg(fixed, b, tol=1e-7, maxiter=3000, algorithm=_first_algorithm(info))
    assert "converted" not in info_fixed.algorithm
    assert abs(info.iterations - info_fixed.iterations) <= 3 + info_fixed.iterations // 20
    hinted = spmv.Matrix.from_scipy(s, options={"deterministic": True, "threads": 2, "expected_applies": 3})
    _, info_hinted = spmv.cg(hinted, b, tol=1e-7, maxiter=3000)
    assert "converted" not in info_hinted.algorithm, info_hinted.algorithm


def _first_algorithm(info):
    """The first operator's algorithm named in a converted solve's label: '... of <algorithm> <policy>)'."""
    return info.algorithm.split(" products of ", 1)[1].split()[0]
