"""Half-precision value storage (issue 11): fp16 / bfloat16 values, float32 x, y and sums.

Oracle. A matrix with values='f16' or 'bf16' computes the product of its *rounded* matrix: every
value rounded once, to nearest even, from float32 to the storage. The rounded values are computed
here independently -- NumPy's float32 -> float16 conversion (round to nearest even, overflow to inf)
for f16; for bf16, round to nearest even on the top 16 bits of the float32 pattern with integer ops
(and ml_dtypes, where installed, must agree). They are exact in float32 and float64, so the product
differs from the float64 product of the rounded matrix only by the float32 summation: per row,
|y_i - ref_i| <= c*eps32*(|beta|*|y0_i| + |alpha|*sum_j |a_ij*x_j|), c = 2*(longest row + 2)
(Higham, ASNA 2nd ed. section 3.1; the bound oracle.py states and `spmv bench` verifies with). The
rounding itself is checked exactly, bit for bit, on A.data.

CUDA cases are skipped without CuPy, a GPU, or an extension built with CUDA (as test_cuda.py).
"""

import numpy as np
import pytest
import scipy.sparse as sp

import spmv
from cases import CASES, COMBOS, require_cupy_and_cuda, stored
from oracle import assert_close, random_vector

try:
    import ml_dtypes
except ImportError:  # optional: the bfloat16 dtype for input data
    ml_dtypes = None

STORAGES = ["f16", "bf16"]
HALF_CASES = list(CASES)


def round_f16(values):
    """float32 values rounded to IEEE binary16 and widened back (exact)."""
    with np.errstate(over="ignore"):  # beyond 65520: inf, as the conversion defines
        return np.asarray(values, np.float32).astype(np.float16).astype(np.float32)


def round_bf16(values):
    """float32 values rounded to bfloat16 (nearest, ties to even) and widened back: the top 16 bits of
    the pattern plus half an ulp of them, minus one unless the kept part is odd; NaN stays NaN."""
    v = np.ascontiguousarray(values, np.float32)
    bits = v.view(np.uint32).astype(np.uint64)
    bits = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16
    out = (bits & 0xFFFFFFFF).astype(np.uint32).view(np.float32)
    return np.where(np.isnan(v), np.float32(np.nan), out)


ROUND = {"f16": round_f16, "bf16": round_bf16}


def rounded(a, storage):
    """The float32 scipy matrix whose values are `a`'s rounded to the storage: what the products use."""
    csr = sp.csr_array(a).astype(np.float32)
    return sp.csr_array((ROUND[storage](csr.data), csr.indices.copy(), csr.indptr.copy()), shape=csr.shape)


def half_matrix(case, storage, **kwargs):
    return spmv.Matrix.from_scipy(CASES[case].astype(np.float32), values=storage, **kwargs)


def sizes(a, transpose):
    rows, cols = a.shape
    return (rows, cols) if transpose else (cols, rows)


# ---- construction -------------------------------------------------------------------------------

def _f16_arrays(case):
    """(indptr, indices, float16 data, shape) of a case: scipy.sparse itself holds no float16."""
    a = sp.csr_array(CASES[case])
    return a.indptr, a.indices, a.data.astype(np.float16), a.shape


def test_float16_data_gives_a_float32_matrix_with_f16_storage():
    indptr, indices, data, shape = _f16_arrays("tall_empty_rows")
    a = spmv.Matrix(indptr, indices, data, shape)
    assert a.dtype == np.float32 and a.value_storage == "f16"
    assert a.data.dtype == np.float32
    np.testing.assert_array_equal(a.data, data.astype(np.float32))  # float16 widens exactly
    assert "f16 storage" in repr(a)
    x = random_vector(shape[1], np.float32, 1)
    y = a @ x
    assert y.dtype == np.float32
    assert_close(y, rounded(CASES["tall_empty_rows"], "f16"), x, dtype=np.float32)


def test_scipy_float16_follows_the_data_where_scipy_holds_it():
    try:
        a16 = sp.csr_matrix(CASES["tall_empty_rows"]).astype(np.float16)
    except (ValueError, TypeError) as e:
        pytest.skip(f"this scipy holds no float16: {e}")
    a = spmv.Matrix.from_scipy(a16)
    assert a.dtype == np.float32 and a.value_storage == "f16"


def test_native_is_the_default_for_float32_and_float64():
    assert spmv.Matrix.from_scipy(CASES["tall_empty_rows"]).value_storage == "native"
    assert spmv.Matrix.from_scipy(CASES["tall_empty_rows"].astype(np.float32)).value_storage == "native"


@pytest.mark.parametrize("storage", STORAGES)
def test_values_keyword_rounds_float32_data_once_to_nearest_even(storage):
    # Ties, values just off ties, subnormals of both formats, fp16's overflow and a NaN.
    special = np.array([1 + 2**-11, 1 + 3 * 2**-11, 1 + 2**-8, 1 + 3 * 2**-8, 1 + 2**-8 + 2**-20, 65504.0,
                        65519.0, 65520.0, 2**-24, 2**-25, 3 * 2**-26, 1e-40, -0.0, 3.0e38, np.nan],
                       dtype=np.float32)
    rng = np.random.default_rng(7)
    data = np.concatenate([special, rng.standard_normal(200).astype(np.float32) * 10.0 ** rng.integers(-6, 6, 200)])
    n = data.size
    a = spmv.Matrix(np.arange(n + 1), np.zeros(n, np.int32), data.astype(np.float32), (n, 1), values=storage)
    assert a.dtype == np.float32 and a.value_storage == storage
    np.testing.assert_array_equal(a.data, ROUND[storage](data))  # NaN equals NaN here
    if storage == "f16":
        assert np.isinf(a.data[7]) and a.data[6] == 65504.0  # 65520 is the tie past the largest fp16


@pytest.mark.skipif(ml_dtypes is None, reason="ml_dtypes is not installed")
def test_bfloat16_data_gives_bf16_storage_and_ml_dtypes_agrees_with_the_bit_rounding():
    bf = ml_dtypes.bfloat16
    data = np.random.default_rng(3).standard_normal(1000).astype(np.float32)
    np.testing.assert_array_equal(data.astype(bf).astype(np.float32), round_bf16(data))
    a16 = sp.csr_array((data[:20].astype(bf), np.arange(20) % 7, np.arange(0, 21, 2)), shape=(10, 7))
    a = spmv.Matrix(a16.indptr, a16.indices, a16.data, a16.shape)
    assert a.dtype == np.float32 and a.value_storage == "bf16"
    np.testing.assert_array_equal(a.data, a16.data.astype(np.float32))
    x = random_vector(7, np.float32, 1).astype(bf)  # a bfloat16 x is cast to float32 like float16
    y = a @ x
    assert y.dtype == np.float32
    assert_close(y, stored(a), x.astype(np.float32), dtype=np.float32)


def test_explicit_native_and_float64_widen_half_data_exactly():
    indptr, indices, data, shape = _f16_arrays("tall_empty_rows")
    native = spmv.Matrix(indptr, indices, data, shape, values="native")
    assert native.value_storage == "native" and native.dtype == np.float64  # the usual rule for non-float32
    wide = spmv.Matrix(indptr, indices, data, shape, dtype=np.float64)
    assert wide.value_storage == "native" and wide.dtype == np.float64
    np.testing.assert_array_equal(wide.data, data.astype(np.float64))
    with pytest.raises(ValueError, match="dtype=float64 was asked"):
        spmv.Matrix(indptr, indices, data, shape, dtype=np.float64, values="f16")


def test_options_values_is_the_same_request():
    a = spmv.Matrix.from_scipy(CASES["tall_empty_rows"].astype(np.float32), options={"values": "bf16"})
    assert a.value_storage == "bf16" and a.options == {"values": "bf16"}
    b = spmv.Matrix.from_scipy(CASES["tall_empty_rows"].astype(np.float32), values="BF16", options={"values": "bf16"})
    assert b.value_storage == "bf16"


def test_astype_keeps_or_leaves_the_storage():
    a = half_matrix("tall_empty_rows", "f16")
    assert a.astype(np.float32).value_storage == "f16"
    wide = a.astype(np.float64)
    assert wide.value_storage == "native" and wide.dtype == np.float64
    np.testing.assert_array_equal(wide.data, a.data.astype(np.float64))  # the rounded values, exactly
    assert a.T.astype(np.float64).value_storage == "native"
    scipy_copy = a.to_scipy()
    assert scipy_copy.dtype == np.float32
    np.testing.assert_array_equal(scipy_copy.data, a.data)


def test_matrix_market_and_generators_take_the_storage(tmp_path):
    import scipy.io

    path = tmp_path / "a.mtx"
    scipy.io.mmwrite(str(path), sp.coo_matrix(CASES["tall_empty_rows"]))
    a = spmv.read_matrix_market(path, values="f16")
    assert a.dtype == np.float32 and a.value_storage == "f16"
    np.testing.assert_array_equal(a.data, round_f16(np.asarray(a.to_scipy().data)))
    assert spmv.read_matrix_market(path).dtype == np.float64  # the default stays float64
    g = spmv.generate.generate("poisson2d", dtype=np.float32, options={"values": "bf16"})
    assert g.value_storage == "bf16" and g.dtype == np.float32


# ---- errors --------------------------------------------------------------------------------------

def test_bad_values_names_and_types():
    a32 = CASES["tall_empty_rows"].astype(np.float32)
    with pytest.raises(ValueError, match="unknown values 'fp8'"):
        spmv.Matrix.from_scipy(a32, values="fp8")
    with pytest.raises(TypeError, match="values must be"):
        spmv.Matrix.from_scipy(a32, values=np.float16)
    with pytest.raises(ValueError, match="unknown values 'half'"):
        spmv.Matrix.from_scipy(a32, options={"values": "half"})
    with pytest.raises(ValueError, match="options\\['values'\\] must be one of"):  # the core's own check
        spmv.generate.generate("poisson2d", dtype=np.float32, options={"values": "half"})
    with pytest.raises(ValueError, match="disagree"):
        spmv.Matrix.from_scipy(a32, values="f16", options={"values": "bf16"})


@pytest.mark.parametrize("storage", STORAGES)
def test_half_storage_of_float64_is_refused(storage, tmp_path):
    with pytest.raises(ValueError, match="float32 matrix's values.*the data is float64"):
        spmv.Matrix.from_scipy(CASES["tall_empty_rows"], values=storage)
    with pytest.raises(ValueError, match="dtype=float64 was asked"):
        spmv.Matrix.from_scipy(CASES["tall_empty_rows"].astype(np.float32), values=storage, dtype=np.float64)
    with pytest.raises(ValueError, match="float64 values"):  # the core's own check, for every constructor
        spmv.generate.generate("poisson2d", dtype=np.float64, options={"values": storage})
    # float64 data with dtype=float32 is the documented opt-in: rounded to float32, then to the storage.
    a = spmv.Matrix.from_scipy(CASES["tall_empty_rows"], values=storage, dtype=np.float32)
    np.testing.assert_array_equal(a.data, ROUND[storage](CASES["tall_empty_rows"].data.astype(np.float32)))


def test_device_vectors_of_another_dtype_are_still_refused_on_the_host_path():
    a = half_matrix("tall_empty_rows", "f16")
    with pytest.raises(TypeError, match="never converted"):
        a.apply(np.ones(23, np.float32), np.zeros(37, np.float16))  # y is written in place


# ---- products ------------------------------------------------------------------------------------

def _offers_half(algorithm, transpose, storage):
    """True when a CPU algorithm builds with the storage (False when it refuses, as allowed)."""
    a = half_matrix("tall_empty_rows", storage, algorithm=algorithm)
    try:
        a.plan_info(transpose=transpose)
    except spmv.UnsupportedError:
        return False
    return True


CPU_PRODUCTS = [(name, False) for name in ["auto"] + spmv.algorithms("cpu")] + [
    (name, True) for name in ["auto"] + spmv.algorithms("cpu", transpose=True)]


@pytest.mark.parametrize("algorithm,transpose", CPU_PRODUCTS,
                         ids=[f"{n}-{'T' if t else 'N'}" for n, t in CPU_PRODUCTS])
@pytest.mark.parametrize("storage", STORAGES)
@pytest.mark.parametrize("case", HALF_CASES)
def test_cpu_products_are_those_of_the_rounded_matrix(case, storage, algorithm, transpose):
    a = half_matrix(case, storage, algorithm=algorithm)
    ref = rounded(CASES[case], storage)
    np.testing.assert_array_equal(stored(a).toarray(), ref.toarray())
    n_x, n_y = sizes(a, transpose)
    x = random_vector(n_x, np.float32, 1)
    y0 = random_vector(n_y, np.float32, 2)
    try:
        a.plan_info(transpose=transpose)
    except spmv.UnsupportedError as e:
        assert algorithm != "auto", f"auto must pick an algorithm with half storage: {e}"
        # Refused for the storage, or (sell) for its padding on this matrix, as in f32.
        message = str(e).lower()
        assert storage in message or "half" in message or "values" in message or "padding" in message, str(e)
        return
    for alpha, beta in COMBOS:  # beta == 0 with a NaN-filled y: y must be overwritten, never read
        y = np.full(n_y, np.nan, np.float32) if beta == 0 else y0.copy()
        out = a.apply(x, y, alpha=alpha, beta=beta, transpose=transpose)
        assert out is y and y.dtype == np.float32
        assert_close(y, ref, x, alpha, beta, y0, transpose, dtype=np.float32)


def test_auto_offers_both_storages():
    for storage in STORAGES:
        assert _offers_half("auto", False, storage)


@pytest.mark.parametrize("storage", STORAGES)
def test_alpha_zero_ignores_nan_in_x(storage):
    a = half_matrix("tall_empty_rows", storage)
    y = np.arange(37, dtype=np.float32)
    a.apply(np.full(23, np.nan, np.float32), y, alpha=0.0, beta=3.0)
    np.testing.assert_array_equal(y, 3.0 * np.arange(37, dtype=np.float32))


@pytest.mark.parametrize("storage", STORAGES)
def test_operators_and_float16_x(storage):
    a = half_matrix("tall_empty_rows", storage)
    ref = rounded(CASES["tall_empty_rows"], storage)
    x16 = random_vector(23, np.float16, 3)  # float16 x is cast (exactly) to float32
    x = x16.astype(np.float32)
    for y in (a @ x16, a.dot(x16), a.matvec(x16)):
        assert y.dtype == np.float32
        assert_close(y, ref, x, dtype=np.float32)
    z = random_vector(37, np.float32, 4)
    for y in (a.T @ z, z @ a, a.rmatvec(z)):
        assert y.dtype == np.float32
        assert_close(y, ref, z, transpose=True, dtype=np.float32)


@pytest.mark.parametrize("storage", STORAGES)
def test_many_columns_use_the_rounded_values(storage):
    # SpMM has no half-storage kernel: it reads the rounded values the matrix holds, in float32
    # (documented), so its columns are products of the same rounded matrix.
    a = half_matrix("tall_empty_rows", storage)
    ref = rounded(CASES["tall_empty_rows"], storage)
    X = np.random.default_rng(5).uniform(-1, 1, (23, 4)).astype(np.float16)
    Y = a @ X
    assert Y.dtype == np.float32 and Y.shape == (37, 4)
    for j in range(4):
        assert_close(Y[:, j], ref, X[:, j].astype(np.float32), dtype=np.float32)
    lo = a.aslinearoperator()
    assert lo.dtype == np.float32
    assert_close(lo.matvec(X[:, 0]), ref, X[:, 0].astype(np.float32), dtype=np.float32)
    Z = lo.rmatmat(np.ones((37, 2), np.float32))
    assert_close(Z[:, 1], ref, np.ones(37, np.float32), transpose=True, dtype=np.float32)


@pytest.mark.parametrize("storage", STORAGES)
def test_semirings_run_on_the_rounded_matrix(storage):
    a = half_matrix("tall_empty_rows", storage)
    ref = rounded(CASES["tall_empty_rows"], storage).toarray().astype(np.float64)
    x = random_vector(23, np.float32, 6)
    y = a.apply(x, semiring="min-plus")
    present = rounded(CASES["tall_empty_rows"], storage).astype(bool).toarray()
    expect = np.where(present, ref + x.astype(np.float64)[None, :], np.inf).min(axis=1)
    # One float32 addition per entry, then an exact min: the bound is one rounding of each sum.
    np.testing.assert_allclose(y, expect, rtol=np.finfo(np.float32).eps, atol=0)


@pytest.mark.parametrize("storage", STORAGES)
def test_solvers_run_with_half_storage(storage):
    a32 = spmv.generate.generate("poisson2d", n=12, dtype=np.float32)
    a = spmv.Matrix.from_scipy(a32.to_scipy(), values=storage)
    ref = rounded(a32.to_scipy(), storage)  # poisson's 4 and -1 are exact in both formats
    b = np.ones(a.shape[0], np.float32)
    x, info = spmv.cg(a, b, tol=1e-5)
    assert info.converged and storage in info.algorithm
    r = b - ref @ x.astype(np.float64)
    assert np.linalg.norm(r) <= 1e-4 * np.linalg.norm(b)


def test_bench_times_the_storage():
    a = half_matrix("random_2k_plus_97", "f16")
    rows = spmv.bench(a, algorithms=["auto", "row-loop", "coo"], device="cpu", repetitions=1, warmup=0,
                      min_sample_ms=0.0)
    by_name = {r["algorithm"]: r for r in rows}
    assert {r["precision"] for r in rows} == {"f16"}
    assert by_name["row-loop"]["verified"] == "ok" and by_name["auto"]["verified"] == "ok"
    assert by_name["coo"]["verified"] == "skipped"  # an algorithm without half storage
    native = spmv.Matrix.from_scipy(CASES["random_2k_plus_97"].astype(np.float32))
    assert {r["precision"] for r in spmv.bench(native, algorithms=["row-loop"], device="cpu", dtype=["f32", "bf16"],
                                               repetitions=1, warmup=0, min_sample_ms=0.0)} == {"f32", "bf16"}


# ---- CUDA ----------------------------------------------------------------------------------------

@pytest.fixture
def cupy():
    return require_cupy_and_cuda(module_level=False)


@pytest.mark.parametrize("storage", STORAGES)
@pytest.mark.parametrize("transpose", [False, True], ids=["N", "T"])
def test_cuda_products_are_those_of_the_rounded_matrix(cupy, storage, transpose):
    a = half_matrix("tall_empty_rows", storage)
    ref = rounded(CASES["tall_empty_rows"], storage)
    n_x, n_y = sizes(a, transpose)
    x = random_vector(n_x, np.float32, 1)
    y0 = random_vector(n_y, np.float32, 2)
    try:
        a.plan_info(transpose=transpose, device="cuda")
    except spmv.UnsupportedError:
        pytest.skip(f"no CUDA algorithm offers {storage} storage for this operation")
    dx = cupy.asarray(x)
    for alpha, beta in COMBOS:
        dy = cupy.full(n_y, np.nan, np.float32) if beta == 0 else cupy.asarray(y0)
        a.apply(dx, dy, alpha=alpha, beta=beta, transpose=transpose)
        assert_close(cupy.asnumpy(dy), ref, x, alpha, beta, y0, transpose, dtype=np.float32)
        y = np.full(n_y, np.nan, np.float32) if beta == 0 else y0.copy()  # NumPy with device='cuda'
        a.apply(x, y, alpha=alpha, beta=beta, transpose=transpose, device="cuda")
        assert_close(y, ref, x, alpha, beta, y0, transpose, dtype=np.float32)
    with pytest.raises(TypeError, match="no hidden device copies"):
        a.apply(dx.astype(cupy.float16), transpose=transpose)


@pytest.mark.parametrize("storage", STORAGES)
def test_cupy_sparse_matrix_with_half_storage(cupy, storage):
    import cupyx.scipy.sparse as csp

    a32 = CASES["tall_empty_rows"].astype(np.float32)
    a = spmv.Matrix.from_scipy(csp.csr_matrix(sp.csr_matrix(a32)), values=storage)
    assert a.dtype == np.float32 and a.value_storage == storage
    x = random_vector(23, np.float32, 1)
    y = a @ cupy.asarray(x)
    assert isinstance(y, cupy.ndarray) and y.dtype == np.float32
    assert_close(cupy.asnumpy(y), rounded(a32, storage), x, dtype=np.float32)


def test_cupy_float16_csr_arrays(cupy):
    indptr, indices, data, shape = _f16_arrays("tall_empty_rows")
    a = spmv.Matrix(cupy.asarray(indptr), cupy.asarray(indices), cupy.asarray(data), shape)
    assert a.dtype == np.float32 and a.value_storage == "f16"
    np.testing.assert_array_equal(a.data, data.astype(np.float32))
    x = random_vector(shape[1], np.float32, 1)
    y = a @ cupy.asarray(x)
    assert_close(cupy.asnumpy(y), rounded(CASES["tall_empty_rows"], "f16"), x, dtype=np.float32)
