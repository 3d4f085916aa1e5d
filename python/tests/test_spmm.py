"""SpMM from Python (issue 11): ``A @ X`` and ``X @ A`` for 2-D NumPy arrays run one SpMM, and
``aslinearoperator().matmat``; each column is checked against scipy with oracle.py's bound (every entry
of Y = op(A) X is one SpMV entry). The CuPy twin is at the end (skipped without CuPy and a GPU)."""

import numpy as np
import pytest
import scipy.sparse as sp

import spmv
from cases import CASES, concurrently, stored
from oracle import assert_close

KS = [1, 2, 3, 4, 5, 8, 16, 31, 32, 33, 64]


def _check(y, held, x, transpose=False, dtype=np.float64):
    assert y.ndim == 2 and y.shape[1] == x.shape[1]
    for j in range(x.shape[1]):
        assert_close(y[:, j], held, x[:, j], transpose=transpose, dtype=dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("case", list(CASES))
def test_matmul_2d_matches_scipy(case, order, dtype):
    a = spmv.Matrix.from_scipy(CASES[case], dtype=dtype)
    held = stored(a)
    rng = np.random.default_rng(11)
    for k in (1, 3, 8, 33):
        x = np.asarray(rng.uniform(-1, 1, (a.shape[1], k)).astype(dtype), order=order)
        y = a @ x
        assert isinstance(y, np.ndarray) and y.dtype == dtype and y.shape == (a.shape[0], k)
        _check(y, held, x, dtype=dtype)
        xt = np.asarray(rng.uniform(-1, 1, (a.shape[0], k)).astype(dtype), order=order)
        _check(a.T @ xt, held, xt, transpose=True, dtype=dtype)


@pytest.mark.parametrize("k", KS)
def test_every_k_and_strided_operands(k):
    s = CASES["tall_empty_rows"]
    a = spmv.Matrix.from_scipy(s)
    rng = np.random.default_rng(k)
    wide = rng.uniform(-1, 1, (a.shape[1], 2 * k + 3))
    x = wide[:, 1:k + 1]  # a slice: rows contiguous, leading dimension 2k + 3, read in place
    _check(a @ x, s, x)
    xf = np.asfortranarray(wide)[:, :k]  # columns contiguous
    _check(a @ xf, s, xf)
    xs = wide[:, ::2][:, :k]  # no contiguous dimension: copied first
    _check(a @ xs, s, xs)
    xi = rng.integers(-3, 4, (a.shape[1], k))  # integers: converted to the matrix's dtype
    _check(a @ xi, s, xi.astype(np.float64))


def test_rmatmul_and_linear_operator_matmat_use_spmm():
    s = sp.csr_array(sp.random(300, 200, density=0.05, random_state=6))
    a = spmv.Matrix.from_scipy(s)
    rng = np.random.default_rng(3)
    xt = rng.uniform(-1, 1, (4, 300))
    z = xt @ a  # rows of xt times A = (A^T xt^T)^T
    assert z.shape == (4, 200)
    for i in range(4):
        assert_close(z[i], s, xt[i], transpose=True)
    op = a.aslinearoperator()
    x = rng.uniform(-1, 1, (200, 7))
    _check(op.matmat(x), s, x)
    _check(op @ x, s, x)
    x2 = rng.uniform(-1, 1, (300, 5))
    _check(op.rmatmat(x2), s, x2, transpose=True)


def test_degenerate_shapes():
    a = spmv.Matrix.from_scipy(sp.csr_array((5, 0)))
    y = a @ np.ones((0, 3))
    assert y.shape == (5, 3) and not y.any()
    b = spmv.Matrix.from_scipy(sp.csr_array((0, 4)))
    assert (b @ np.ones((4, 2))).shape == (0, 2)
    c = spmv.Matrix.from_scipy(CASES["poisson2d"])
    assert (c @ np.ones((c.shape[1], 0))).shape == (c.shape[0], 0)


def test_shape_and_type_errors():
    a = spmv.Matrix.from_scipy(CASES["poisson2d"])
    with pytest.raises(ValueError, match="rows"):
        a @ np.ones((a.shape[1] + 1, 2))
    with pytest.raises(TypeError, match="complex"):
        a @ np.ones((a.shape[1], 2), dtype=np.complex128)


def test_concurrent_matmul_on_one_matrix():
    s = CASES["poisson2d"]
    a = spmv.Matrix.from_scipy(s)
    x = np.random.default_rng(5).uniform(-1, 1, (a.shape[1], 6))
    expected = a @ x

    def work(i):
        for _ in range(10):
            assert np.array_equal(a @ x, expected)  # one plan, no scratch: same bits from every thread

    concurrently(4, work)


# ---- CUDA (CuPy) ------------------------------------------------------------------------------

def _cupy_or_skip():
    from cases import require_cupy_and_cuda  # noqa: PLC0415 - skips the test without CuPy / a GPU
    return require_cupy_and_cuda()


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("case", list(CASES))
def test_cupy_matmul_2d(case, order, dtype):
    cupy = _cupy_or_skip()
    a = spmv.Matrix.from_scipy(CASES[case], dtype=dtype)
    held = stored(a)
    rng = np.random.default_rng(12)
    for k in (1, 4, 8, 32, 33):
        xh = np.asarray(rng.uniform(-1, 1, (a.shape[1], k)).astype(dtype), order=order)
        y = a @ cupy.asarray(xh, order=order)
        assert isinstance(y, cupy.ndarray) and y.dtype == dtype and y.shape == (a.shape[0], k)
        _check(cupy.asnumpy(y), held, xh, dtype=dtype)
        xt = np.asarray(rng.uniform(-1, 1, (a.shape[0], k)).astype(dtype), order=order)
        _check(cupy.asnumpy(a.T @ cupy.asarray(xt, order=order)), held, xt, transpose=True, dtype=dtype)
        # Host X with device='cuda': copied up and back once.
        on_gpu = spmv.Matrix.from_scipy(CASES[case], dtype=dtype, device="cuda")
        y_host = on_gpu @ xh
        assert isinstance(y_host, np.ndarray)
        _check(y_host, held, xh, dtype=dtype)


def test_cupy_dtype_is_not_converted():
    cupy = _cupy_or_skip()
    a = spmv.Matrix.from_scipy(CASES["poisson2d"])
    with pytest.raises(TypeError, match="dtype"):
        a @ cupy.ones((a.shape[1], 2), dtype=cupy.float32)


def test_cupy_linear_operator_matmat():
    cupy = _cupy_or_skip()
    s = sp.csr_array(sp.random(300, 200, density=0.05, random_state=9))
    op = spmv.Matrix.from_scipy(s).as_cupy_linearoperator()
    x = np.random.default_rng(4).uniform(-1, 1, (200, 6))
    y = op.matmat(cupy.asarray(x))
    assert isinstance(y, cupy.ndarray)
    _check(cupy.asnumpy(y), s, x)
