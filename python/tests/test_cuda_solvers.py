"""spmv.cg / bicgstab / gmres on CuPy arrays (in place on the GPU) against the CPU solve.

Skipped when CuPy, a GPU or the extension's CUDA backend is missing. Iteration counts may differ from
the CPU's by the summation order of the device reductions: 3 + 5% (tests/common/solver_problems.hpp).
"""

import numpy as np
import pytest

import spmv
from cases import require_cupy_and_cuda

cupy = require_cupy_and_cuda()


@pytest.mark.parametrize("method", ["cg", "bicgstab", "gmres"])
@pytest.mark.parametrize("jacobi", [False, True])
@pytest.mark.parametrize("algorithm", ["auto", "csr-vector", "merge-path"])
def test_cupy_solve_matches_the_cpu(method, jacobi, algorithm):
    A = spmv.generate.poisson2d(40)
    b = np.random.default_rng(3).uniform(-1, 1, A.shape[0])
    solver = getattr(spmv, method)
    M = "jacobi" if jacobi else None
    x_cpu, info_cpu = solver(A, b, tol=1e-10, maxiter=3000, M=M)
    x_gpu, info = solver(A, cupy.asarray(b), tol=1e-10, maxiter=3000, M=M, algorithm=algorithm)
    assert isinstance(x_gpu, cupy.ndarray)
    assert info.converged, info
    assert abs(info.iterations - info_cpu.iterations) <= 3 + info_cpu.iterations // 20
    assert info.residual <= 100 * 1e-10
    assert np.linalg.norm(cupy.asnumpy(x_gpu) - x_cpu) / np.linalg.norm(x_cpu) <= 1e-6  # kappa(poisson2d 40) ~ 700
    if algorithm != "auto":
        assert info.algorithm.startswith(algorithm)


def test_host_arrays_on_the_cuda_backend_and_bad_input():
    A = spmv.generate.poisson2d(10)
    b = A @ np.ones(100)
    x, info = spmv.cg(A, b, backend="cuda", tol=1e-12)
    assert isinstance(x, np.ndarray) and info.converged and np.allclose(x, 1.0, atol=1e-9)
    bad = cupy.ones(100)
    bad[9] = cupy.nan
    with pytest.raises(ValueError, match="row 9"):
        spmv.cg(A, bad)


@pytest.mark.parametrize("jacobi", [False, True])
def test_cupy_cg_graph_and_unfused(jacobi):
    # Issue 15: the CUDA graph replays the stream path's kernels (bitwise the same x); the unfused
    # variant converges in as many iterations within the device reductions' slack.
    A = spmv.generate.poisson2d(50)
    b = cupy.asarray(np.random.default_rng(5).uniform(-1, 1, A.shape[0]))
    M = "jacobi" if jacobi else None
    x_s, info_s = spmv.cg(A, b, tol=1e-9, maxiter=3000, M=M)
    x_g, info_g = spmv.cg(A, b, tol=1e-9, maxiter=3000, M=M, graph=True)
    x_u, info_u = spmv.cg(A, b, tol=1e-9, maxiter=3000, M=M, fused=False)
    assert info_s.converged and info_g.converged and info_u.converged
    assert info_g.iterations == info_s.iterations
    assert cupy.array_equal(x_g, x_s)
    assert info_g.apply_share == -1 and "graph" in info_g.variant
    assert abs(info_u.iterations - info_s.iterations) <= 3 + info_s.iterations // 20
    assert info_s.floor_bytes > 0
    # BiCGStab's graph replays its stream path's kernels too
    x_bs, info_bs = spmv.bicgstab(A, b, tol=1e-9, maxiter=3000, M=M)
    x_bg, info_bg = spmv.bicgstab(A, b, tol=1e-9, maxiter=3000, M=M, graph=True)
    assert info_bs.converged and info_bg.converged
    assert info_bg.iterations == info_bs.iterations
    assert cupy.array_equal(x_bg, x_bs)
    assert info_bg.apply_share == -1 and "graph" in info_bg.variant


def test_auto_converts_during_a_long_cupy_solve():
    """On the device too (cuda::ConvertingPlanOperator): a 250,000-row Laplacian's CG converts to DIA during
    the solve, and converges as the fixed plan's solve does."""
    s = spmv.generate.poisson2d(500).to_scipy().tocsr()
    b = cupy.asarray(s @ np.ones(s.shape[0]))
    a = spmv.Matrix.from_scipy(s, device="cuda")
    x, info = spmv.cg(a, b, tol=1e-7, maxiter=5000)
    assert info.converged
    assert "converted after" in info.algorithm, info.algorithm
    first = info.algorithm.split(" products of ", 1)[1].split()[0]  # '... (converted after N products of <algo> ...)'
    _, fixed = spmv.cg(a, b, tol=1e-7, maxiter=5000, algorithm=first)
    assert "converted" not in fixed.algorithm
    assert abs(info.iterations - fixed.iterations) <= 3 + fixed.iterations // 20
