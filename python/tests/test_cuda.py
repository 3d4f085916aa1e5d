"""The CUDA path with CuPy: device arrays used in place, every CUDA algorithm against scipy.

Skipped when CuPy cannot be imported, when no GPU is present, or when the extension was built
without CUDA. Tolerances: oracle.py.
"""

import inspect

import numpy as np
import pytest
import scipy.sparse as sp

import spmv
from cases import CASES, COMBOS, NO_PADDING_LIMIT, concurrently, require_cupy_and_cuda, stored
from oracle import assert_close, random_vector

cupy = require_cupy_and_cuda()

CUDA_PRODUCTS = [(name, False) for name in ["auto"] + spmv.algorithms("cuda")] + [
    (name, True) for name in ["auto"] + spmv.algorithms("cuda", transpose=True)]


def _sizes(a, transpose):
    rows, cols = a.shape
    return (rows, cols) if transpose else (cols, rows)


@pytest.fixture
def no_host_path(monkeypatch):
    """Fails a test whose device arrays would go through the host conversion path."""
    def refuse(*args, **kwargs):
        raise AssertionError("a device array took the host path")
    monkeypatch.setattr(spmv.Matrix, "_host_x", refuse)
    monkeypatch.setattr(spmv.Matrix, "_check_host_y", refuse)


@pytest.mark.parametrize("algorithm,transpose", CUDA_PRODUCTS,
                         ids=[f"{n}-{'T' if t else 'N'}" for n, t in CUDA_PRODUCTS])
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("case", list(CASES))
def test_every_cuda_algorithm_matches_scipy(case, dtype, algorithm, transpose, no_host_path):
    a = spmv.Matrix.from_scipy(CASES[case], dtype=dtype, algorithm=algorithm, options=NO_PADDING_LIMIT)
    if algorithm == "symmetric":  # A^T x as A x: refused, with its reason, unless A == A^T exactly
        try:
            a.plan_info(transpose=True, device="cuda")
        except spmv.UnsupportedError as e:
            assert "A == A^T exactly" in str(e), str(e)
            return
    held = stored(a)
    n_x, n_y = _sizes(a, transpose)
    x = random_vector(n_x, dtype, 1)
    y0 = random_vector(n_y, dtype, 2)
    dx = cupy.asarray(x)
    for alpha, beta in COMBOS:
        dy = cupy.full(n_y, np.nan, dtype=dtype) if beta == 0 else cupy.asarray(y0)
        pointer = dy.data.ptr
        out = a.apply(dx, dy, alpha, beta, transpose=transpose)
        assert out is dy and dy.data.ptr == pointer  # written in place
        assert_close(cupy.asnumpy(dy), held, x, alpha, beta, y0, transpose, dtype)


def test_cupy_in_cupy_out(no_host_path):
    s = CASES["tall_empty_rows"]
    a = spmv.Matrix.from_scipy(s)
    x = random_vector(23, np.float64, 3)
    for y in (a @ cupy.asarray(x), a.matvec(cupy.asarray(x))):
        assert isinstance(y, cupy.ndarray) and y.dtype == np.float64 and y.shape == (37,)
        assert_close(cupy.asnumpy(y), s, x)
    xt = random_vector(37, np.float64, 4)
    yt = a.rmatvec(cupy.asarray(xt))
    assert isinstance(yt, cupy.ndarray)
    assert_close(cupy.asnumpy(yt), s, xt, transpose=True)
    assert a._core.cached_plans == 2  # (cuda, auto, N) and (cuda, auto, T)
    a @ cupy.asarray(x)
    assert a._core.cached_plans == 2
    assert a.plan_info(device="cuda")["algorithm"] in spmv.algorithms("cuda")


def test_cupy_matrix_of_vectors():
    s = CASES["wide_empty_cols"]
    a = spmv.Matrix.from_scipy(s)
    x = np.random.default_rng(5).uniform(-1, 1, (37, 3))
    y = a @ cupy.asarray(x)
    assert isinstance(y, cupy.ndarray) and y.shape == (23, 3)
    for j in range(3):
        assert_close(cupy.asnumpy(y[:, j]), s, x[:, j])


def test_numpy_input_with_device_cuda():
    s = CASES["random_2k_plus_97"]
    a = spmv.Matrix.from_scipy(s, device="cuda")
    x = random_vector(1121, np.float64, 6)
    y = a @ x  # copied to the device and back once per call
    assert isinstance(y, np.ndarray)
    assert_close(y, s, x)
    y0 = random_vector(1121, np.float64, 7)
    y = y0.copy()
    a.apply(x, y, alpha=2.0, beta=-1.0)
    assert_close(y, s, x, 2.0, -1.0, y0)
    y = np.full(1121, np.nan)
    a.apply(x, y)  # beta == 0: y is not read
    assert_close(y, s, x)
    assert a.plan_info()["algorithm"] in spmv.algorithms("cuda")


def test_non_default_stream():
    s = CASES["poisson2d"]
    a = spmv.Matrix.from_scipy(s)
    x = random_vector(49, np.float64, 8)
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        dx = cupy.asarray(x)
        dy = a @ dx
        dz = a @ dy  # ordered after the first product on the same stream
    stream.synchronize()
    assert_close(cupy.asnumpy(dy), s, x)
    assert_close(cupy.asnumpy(dz), s, cupy.asnumpy(dy))


class _InterfaceOnly:
    """A producer exposing only __cuda_array_interface__ (as Numba or PyTorch do)."""

    def __init__(self, array):
        self._array = array
        self.__cuda_array_interface__ = array.__cuda_array_interface__


class _DLPackOnly:
    """A producer exposing only DLPack."""

    def __init__(self, array):
        self._array = array

    def __dlpack__(self, **kwargs):
        return self._array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._array.__dlpack_device__()


def test_other_producers(no_host_path):
    s = CASES["tall_empty_rows"]
    a = spmv.Matrix.from_scipy(s, dtype=np.float32)
    x = random_vector(23, np.float32, 9)
    dx = cupy.asarray(x)
    for wrapped in (_InterfaceOnly(dx), _DLPackOnly(dx)):
        y = a @ wrapped
        assert isinstance(y, cupy.ndarray)
        assert_close(cupy.asnumpy(y), stored(a), x, dtype=np.float32)
    dy = cupy.zeros(37, dtype=np.float32)
    out = _InterfaceOnly(dy)
    assert a.apply(_InterfaceOnly(dx), out) is out
    assert_close(cupy.asnumpy(dy), stored(a), x, dtype=np.float32)


def test_no_hidden_device_copies():
    a = spmv.Matrix.from_scipy(CASES["poisson2d"])  # float64
    with pytest.raises(TypeError, match="x has dtype float32"):
        a @ cupy.ones(49, dtype=np.float32)
    with pytest.raises(TypeError, match="y has dtype float32"):
        a.apply(cupy.ones(49), cupy.zeros(49, dtype=np.float32))
    with pytest.raises(ValueError, match="non-contiguous"):
        a @ cupy.ones(98)[::2]
    with pytest.raises(ValueError, match="device='cpu'"):
        a.matvec(cupy.ones(49), device="cpu")


class _Fake:
    def __init__(self, address, n, typestr="<f8"):
        self.__cuda_array_interface__ = {"shape": (n,), "typestr": typestr, "data": (address, False),
                                         "strides": None, "version": 3}


def test_bad_device_pointers_are_refused_not_dereferenced():
    a = spmv.Matrix([0, 1], [5], [1.0], (1, 2**20))
    with pytest.raises(ValueError, match="not known to CUDA|not device memory"):
        a @ _Fake(0xDEAD0000, 2**20)
    host = np.ones(2**20)
    with pytest.raises(ValueError, match="not device memory|not known to CUDA"):
        a @ _Fake(host.ctypes.data, 2**20)
    # Without the bounds check the next product would read 8 MB past a 128-byte allocation.
    assert spmv._core.allocation_ranges_checked()
    pointer = cupy.cuda.runtime.malloc(8 * 16)  # 16 doubles, claimed to be 2^20
    try:
        with pytest.raises(ValueError, match="past the end"):
            a @ _Fake(pointer, 2**20)
        with pytest.raises(ValueError, match="aligned"):
            a @ _Fake(pointer + 4, 2**20)
    finally:
        cupy.cuda.runtime.free(pointer)
    square = spmv.Matrix.from_scipy(sp.eye(8, format="csr"))
    buffer = cupy.arange(9, dtype=np.float64)
    with pytest.raises(ValueError, match="overlap"):
        square.apply(buffer[:8], buffer[1:])
    with pytest.raises(spmv.UnsupportedError, match="no CUDA device"):
        square.matvec(cupy.ones(8), device=f"cuda:{cupy.cuda.runtime.getDeviceCount()}")  # one past the last


def _tolerance_keyword(solver):
    return "rtol" if "rtol" in inspect.signature(solver).parameters else "tol"


def test_cg_with_cupy_vectors():
    import cupyx.scipy.sparse.linalg as cla

    a = spmv.generate.poisson2d(24)
    op = a.as_cupy_linearoperator()
    b = random_vector(a.shape[0], np.float64, 10)
    x, info = cla.cg(op, cupy.asarray(b), **{_tolerance_keyword(cla.cg): 1e-10}, maxiter=2000)
    assert info == 0 and isinstance(x, cupy.ndarray)
    residual = b - a.to_scipy() @ cupy.asnumpy(x)
    assert np.linalg.norm(residual) <= 2e-10 * np.linalg.norm(b)


def test_scipy_cg_on_the_gpu_with_numpy_vectors():
    import scipy.sparse.linalg as spla

    a = spmv.generate.poisson2d(24)
    b = random_vector(a.shape[0], np.float64, 11)
    x, info = spla.cg(a.aslinearoperator(device="cuda"), b, **{_tolerance_keyword(spla.cg): 1e-10}, maxiter=2000)
    assert info == 0
    assert np.linalg.norm(b - a.to_scipy() @ x) <= 2e-10 * np.linalg.norm(b)


def test_bench_on_the_gpu():
    rows = spmv.bench(spmv.generate.poisson2d(32), "all", device="cuda", dtype="both", repetitions=1, warmup=0,
                      min_sample_ms=0.0)
    assert rows and all(r["backend"] == "cuda" for r in rows)
    for r in rows:
        assert r["verified"] == "ok", r


@pytest.mark.parametrize("algorithm", ["merge-path", "pcsr", "lightspmv", "hyb", "coo", "csr-vector", "auto"])
def test_one_matrix_many_cupy_streams_and_threads(algorithm):
    """Issue 19: 8 Python threads, each on its own non-blocking CuPy stream, share one Matrix; every
    product is checked (the plan chains products of algorithms with a workspace on the device)."""
    n = 1 << 19
    rng = np.random.default_rng(19)
    cols = rng.integers(0, n, size=(n, 12))
    s = sp.csr_array((rng.uniform(-1, 1, n * 12), (np.repeat(np.arange(n), 12), cols.ravel())), shape=(n, n))
    s.sum_duplicates()
    a = spmv.Matrix.from_scipy(s, algorithm=algorithm, options=NO_PADDING_LIMIT)
    xs = [random_vector(n, np.float64, 700 + i) for i in range(8)]

    def work(i):
        stream = cupy.cuda.Stream(non_blocking=True)
        with stream:
            dx = cupy.asarray(xs[i])
            ys = [a @ dx for _ in range(10)]  # enqueued back to back
            stream.synchronize()
        return [cupy.asnumpy(y) for y in ys]

    results = concurrently(8, work)
    for i in range(8):
        assert len(results[i]) == 10
        for y in results[i]:
            assert_close(y, s, xs[i])


@pytest.mark.parametrize("algorithm", ["auto"] + spmv.algorithms("cuda", transpose=True))
def test_transposed_view_on_cupy_vectors(algorithm, no_host_path):
    s = CASES["tall_empty_rows"]  # 37 x 23
    a = spmv.Matrix.from_scipy(s, algorithm=algorithm, options=NO_PADDING_LIMIT)
    x = random_vector(37, np.float64, 11)
    if algorithm == "symmetric":  # for matrices equal to their transpose only
        with pytest.raises(spmv.UnsupportedError, match="not square"):
            a.T @ cupy.asarray(x)
        return
    for y in (a.T @ cupy.asarray(x), a.T.dot(cupy.asarray(x)), a.T.matvec(cupy.asarray(x))):
        assert isinstance(y, cupy.ndarray) and y.shape == (23,)
        assert_close(cupy.asnumpy(y), s, x, transpose=True)
    plans = 1  # (cuda, algorithm, T)
    if algorithm == "auto" or algorithm in spmv.algorithms("cuda"):  # transpose-only ones have no A x
        xa = random_vector(23, np.float64, 12)
        assert_close(cupy.asnumpy(a.T.T @ cupy.asarray(xa)), s, xa)
        assert_close(cupy.asnumpy(a.T.rmatvec(cupy.asarray(xa))), s, xa)
        plans = 2  # and (cuda, algorithm, N), shared with A
    assert a._core.cached_plans == plans
    dy = cupy.full(23, np.nan)
    assert a.T.apply(cupy.asarray(x), dy, 2.0, 0.0) is dy
    assert_close(cupy.asnumpy(dy), s, x, 2.0, 0.0, None, transpose=True)
    assert a._core.cached_plans == plans


def test_transposed_view_matrix_of_vectors_and_numpy_on_the_gpu():
    s = CASES["wide_empty_cols"]  # 23 x 37
    a = spmv.Matrix.from_scipy(s, device="cuda")
    x = np.random.default_rng(13).uniform(-1, 1, (23, 3))
    y = a.T @ cupy.asarray(x)
    assert isinstance(y, cupy.ndarray) and y.shape == (37, 3)
    for j in range(3):
        assert_close(cupy.asnumpy(y[:, j]), s, x[:, j], transpose=True)
    xt = random_vector(23, np.float64, 14)
    yh = a.T.dot(xt)  # NumPy with device="cuda": the host path, transposed
    assert isinstance(yh, np.ndarray)
    assert_close(yh, s, xt, transpose=True)


SEMIRINGS = ["plus-times", "min-plus", "max-times", "or-and", "max-min"]


@pytest.mark.parametrize("algorithm", [None, "csr-vector", "merge-path", "sell", "csr-scalar", "csr-coop",
                                       "csr-adaptive", "lightspmv", "column-chunked", "ellr-vector"])
@pytest.mark.parametrize("transpose", [False, True], ids=["N", "T"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("semiring", SEMIRINGS[1:])
@pytest.mark.parametrize("case", ["tall_empty_rows", "wide_empty_cols", "long_row", "random_2k_plus_97",
                                  "no_nonzeros"])
def test_semirings_on_cupy_match_the_cpu(case, semiring, dtype, transpose, algorithm):
    # min, max and or give the same value in any order, so each GPU kernel (None: Auto's) must equal the CPU
    # exactly (a zero's sign may differ: compared as values). y is poisoned: every entry must be written.
    s = CASES[case]
    a = spmv.Matrix.from_scipy(s, dtype=dtype)
    n_x, n_y = (s.shape[0], s.shape[1]) if transpose else (s.shape[1], s.shape[0])
    x = np.random.default_rng(21).standard_normal(n_x).astype(dtype)
    x[::5] = 0
    want = a.apply(x, semiring=semiring, transpose=transpose, device="cpu")
    dy = cupy.full(n_y, np.nan, dtype=dtype)
    if algorithm in ("sell", "ellr-vector") and case == "long_row" and not transpose:
        # SELL's padding rule on the GPU (C = 32): the 200-entry row's slice would hold over 6,400 slots for
        # under 300 nonzeros, above 3 x nnz + 1024; ELLR-T pads all 50 rows to 200 (10,000 slots).
        with pytest.raises(spmv.UnsupportedError, match="padding factor"):
            a.apply(cupy.asarray(x), dy, semiring=semiring, transpose=transpose, algorithm=algorithm)
        return
    assert a.apply(cupy.asarray(x), dy, semiring=semiring, transpose=transpose, algorithm=algorithm) is dy
    np.testing.assert_array_equal(cupy.asnumpy(dy), want)
    fresh = a.apply(cupy.asarray(x), semiring=semiring, transpose=transpose, algorithm=algorithm)
    assert isinstance(fresh, cupy.ndarray)
    np.testing.assert_array_equal(cupy.asnumpy(fresh), want)


def test_semirings_on_the_gpu_with_numpy_vectors_and_the_transposed_view():
    s = CASES["random_2k_plus_97"]
    a = spmv.Matrix.from_scipy(s, device="cuda")
    x = random_vector(s.shape[1], np.float64, 22)
    xt = random_vector(s.shape[0], np.float64, 23)
    for semiring in SEMIRINGS[1:]:
        y = a.apply(x, semiring=semiring)  # NumPy with device="cuda": one upload, one download
        assert isinstance(y, np.ndarray)
        np.testing.assert_array_equal(y, a.apply(x, semiring=semiring, device="cpu"))
        np.testing.assert_array_equal(cupy.asnumpy(a.T.apply(cupy.asarray(xt), semiring=semiring)),
                                      a.apply(xt, semiring=semiring, transpose=True, device="cpu"))
    # plus-times is the ordinary product, on the device too
    assert_close(cupy.asnumpy(a.apply(cupy.asarray(x), semiring="plus-times")), s, x)
    with pytest.raises(ValueError, match="no alpha or beta"):
        a.apply(cupy.asarray(x), alpha=2.0, semiring="min-plus")
    with pytest.raises(TypeError, match="dtype"):
        a.apply(cupy.asarray(x.astype(np.float32)), semiring="min-plus")
