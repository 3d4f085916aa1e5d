"""Products on the CPU backend against scipy's own A @ x (oracle.py states the error bound)."""

import numpy as np
import pytest
import scipy.sparse as sp

import spmv
from cases import CASES, COMBOS, NO_PADDING_LIMIT, concurrently, stored
from oracle import assert_close, random_vector

CPU_ALGORITHMS = ["auto"] + spmv.algorithms("cpu")


def _sizes(a, transpose):
    rows, cols = a.shape
    return (rows, cols) if transpose else (cols, rows)


@pytest.mark.parametrize("algorithm", CPU_ALGORITHMS)
@pytest.mark.parametrize("transpose", [False, True], ids=["N", "T"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("case", list(CASES))
def test_every_cpu_algorithm_matches_scipy(case, dtype, transpose, algorithm):
    a = spmv.Matrix.from_scipy(CASES[case], dtype=dtype, algorithm=algorithm, options=NO_PADDING_LIMIT)
    assert a.dtype == dtype
    held = stored(a)
    n_x, n_y = _sizes(a, transpose)
    x = random_vector(n_x, dtype, 1)
    y0 = random_vector(n_y, dtype, 2)
    for alpha, beta in COMBOS:
        y = np.full(n_y, np.nan, dtype) if beta == 0 else y0.copy()
        out = a.apply(x, y, alpha, beta, transpose=transpose)
        assert out is y
        assert_close(y, held, x, alpha, beta, y0, transpose, dtype)


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("algorithm", CPU_ALGORITHMS)
def test_64_bit_indices(index_dtype, algorithm):
    s = CASES["tall_empty_rows"]
    a = spmv.Matrix.from_scipy(s, index_dtype=index_dtype, algorithm=algorithm, options=NO_PADDING_LIMIT)
    assert a.index_dtype == index_dtype and a.indices.dtype == index_dtype
    x = random_vector(a.shape[1], np.float64, 3)
    assert_close(a @ x, s, x)
    xt = random_vector(a.shape[0], np.float64, 4)
    assert_close(a.rmatvec(xt), s, xt, transpose=True)


def test_matvec_rmatvec_matmul_return_new_arrays():
    s = CASES["wide_empty_cols"]
    a = spmv.Matrix.from_scipy(s)
    x = random_vector(37, np.float64, 5)
    xt = random_vector(23, np.float64, 6)
    for y in (a.matvec(x), a @ x):
        assert isinstance(y, np.ndarray) and y.dtype == np.float64 and y.shape == (23,)
        assert_close(y, s, x)
    for y in (a.rmatvec(xt), xt @ a):
        assert y.shape == (37,)
        assert_close(y, s, xt, transpose=True)


def test_matmul_with_a_matrix_of_vectors():
    s = CASES["tall_empty_rows"]
    a = spmv.Matrix.from_scipy(s)
    x = np.random.default_rng(7).uniform(-1, 1, (23, 3))
    y = a @ x
    assert y.shape == (37, 3)
    for j in range(3):
        assert_close(y[:, j], s, x[:, j])
    xt = np.random.default_rng(8).uniform(-1, 1, (2, 37))
    z = xt @ a  # rows of xt times A
    assert z.shape == (2, 23)
    for i in range(2):
        assert_close(z[i], s, xt[i], transpose=True)


def test_dtype_follows_the_data():
    s = CASES["poisson2d"]
    assert spmv.Matrix.from_scipy(s).dtype == np.float64
    assert spmv.Matrix.from_scipy(s.astype(np.float32)).dtype == np.float32
    assert spmv.Matrix.from_scipy(s.astype(np.int64)).dtype == np.float64  # integers: float64
    assert spmv.Matrix.from_scipy(s, dtype=np.float32).dtype == np.float32
    assert spmv.Matrix.from_scipy(s).astype(np.float32).dtype == np.float32


def test_indices_are_32_bit_unless_sizes_need_more():
    s = CASES["poisson2d"]
    wide = sp.csr_array((s.data, s.indices.astype(np.int64), s.indptr.astype(np.int64)), shape=s.shape)
    assert spmv.Matrix.from_scipy(wide).index_dtype == np.int32
    # 2^31 columns do not fit int32: the matrix switches to int64 by itself.
    big = spmv.Matrix([0, 1], [2**31 + 3], [2.0], (1, 2**31 + 5))
    assert big.index_dtype == np.int64
    assert big.indices.tolist() == [2**31 + 3]
    assert spmv.info(big)["fits_int32"] is False


def test_x_is_converted_to_the_matrix_dtype():
    s = CASES["tall_empty_rows"]
    a32 = spmv.Matrix.from_scipy(s, dtype=np.float32)
    x64 = random_vector(23, np.float64, 9)
    y = a32 @ x64  # float64 x converted (copied) to float32
    assert y.dtype == np.float32
    assert_close(y, stored(a32), x64.astype(np.float32), dtype=np.float32)
    a = spmv.Matrix.from_scipy(s)
    x = list(range(23))  # anything numpy.asarray takes
    assert_close(a @ x, s, np.arange(23.0))
    assert_close(a @ np.arange(23), s, np.arange(23.0))  # integers
    strided = random_vector(46, np.float64, 10)[::2]  # non-contiguous: copied to contiguous
    assert_close(a @ strided, s, strided)
    readonly = random_vector(23, np.float64, 11)
    readonly.flags.writeable = False
    assert_close(a @ readonly, s, readonly)


def test_scipy_formats_and_array_types():
    s = CASES["wide_empty_cols"]
    x = random_vector(37, np.float64, 12)
    for converted in (sp.csr_matrix(s), s.tocoo(), s.tocsc(), sp.lil_matrix(s), sp.dok_array(s), sp.bsr_array(s)):
        a = spmv.Matrix.from_scipy(converted)
        assert a.shape == (23, 37) and a.nnz == s.nnz
        assert_close(a @ x, s, x)


def test_constructor_from_arrays_and_views():
    indptr, indices, data = [0, 2, 2, 3], [0, 2, 1], [1.0, 2.0, 3.0]
    a = spmv.Matrix(indptr, indices, data, (3, 3))
    assert a.shape == (3, 3) and a.nnz == 3
    assert a.indptr.tolist() == indptr and a.indices.tolist() == indices and a.data.tolist() == data
    assert not a.data.flags.writeable  # views of the matrix's own storage
    assert np.array_equal(a @ np.array([1.0, 10.0, 100.0]), [201.0, 0.0, 30.0])
    assert np.array_equal((a.to_scipy() @ np.ones(3)), a @ np.ones(3))
    view = a.data
    del a  # the view keeps the storage alive
    assert view.tolist() == data


def test_apply_in_place_and_beta_zero_overwrites_nan():
    s = CASES["poisson2d"]
    a = spmv.Matrix.from_scipy(s)
    x = random_vector(49, np.float64, 13)
    y = np.full(49, np.nan)
    assert a.apply(x, y) is y
    assert_close(y, s, x)
    y0 = random_vector(49, np.float64, 14)
    y = y0.copy()
    a.apply(x, y, alpha=-2.0, beta=0.5)
    assert_close(y, s, x, -2.0, 0.5, y0)
    # alpha == 0 skips A entirely: y = beta*y exactly.
    y = y0.copy()
    a.apply(np.full(49, np.nan), y, alpha=0.0, beta=3.0)
    assert np.array_equal(y, 3.0 * y0)


def test_algorithm_and_device_per_call():
    s = CASES["tall_empty_rows"]
    a = spmv.Matrix.from_scipy(s, algorithm="merge-parallel", device="cpu")
    assert a.algorithm == "merge-parallel" and a.device == "cpu"
    x = random_vector(23, np.float64, 15)
    assert_close(a.matvec(x, algorithm="row-loop"), s, x)
    assert a.plan_info()["algorithm"] == "merge-parallel"
    assert a.plan_info(algorithm="Column_Chunked")["algorithm"] == "column-chunked"  # names as parse_algorithm reads them
    assert spmv.Matrix.from_scipy(s).plan_info()["algorithm"] in spmv.algorithms("cpu")  # auto resolves


def test_plans_are_cached():
    s = CASES["random_2k_plus_97"]
    a = spmv.Matrix.from_scipy(s)
    x = random_vector(1121, np.float64, 16)
    assert a._core.cached_plans == 0
    a @ x
    a @ x
    assert a._core.cached_plans == 1
    a.rmatvec(x)
    a.matvec(x, algorithm="column-chunked")
    a.matvec(x, algorithm="column-chunked")
    assert a._core.cached_plans == 3
    first = a.plan_info(algorithm="column-chunked")
    assert a.plan_info(algorithm="column-chunked")["setup_ms"] == first["setup_ms"]  # the same plan


@pytest.mark.parametrize("algorithm", ["merge-parallel", "column-chunked", "hyb"])
def test_concurrent_products_on_one_matrix(algorithm):
    # Plans with per-product scratch (carry-outs, cursors, row sums) shared by 8 threads: every
    # product is checked, not only the last (issue 19).
    s = CASES["random_2k_plus_97"]
    a = spmv.Matrix.from_scipy(s, algorithm=algorithm, options=NO_PADDING_LIMIT)
    xs = [random_vector(1121, np.float64, 100 + i) for i in range(8)]
    results = concurrently(8, lambda i: [a @ xs[i] for _ in range(20)])
    for i in range(8):
        assert len(results[i]) == 20
        for y in results[i]:
            assert_close(y, s, xs[i])


def test_repr_and_properties():
    a = spmv.generate.poisson2d(3, dtype=np.float32, algorithm="row-loop")
    assert a.shape == (9, 9) and a.nnz == 33 and a.ndim == 2
    assert a.dtype == np.float32 and a.index_dtype == np.int32
    assert "9x9" in repr(a) and "row-loop" in repr(a)


@pytest.mark.parametrize("cpu_simd", [0, 1])
@pytest.mark.parametrize("algorithm", ["row-loop", "merge-parallel", "dia"])
def test_cpu_simd_option_selects_kernels_with_the_same_result(algorithm, cpu_simd):
    # options={"cpu_simd": 0} forces the scalar loops, 1 the SIMD kernels; both match scipy.
    s = CASES["poisson2d"]
    a = spmv.Matrix.from_scipy(s, dtype=np.float64, algorithm=algorithm,
                               options=dict(NO_PADDING_LIMIT, cpu_simd=cpu_simd))
    x = random_vector(a.shape[1], np.float64, 3)
    assert_close(a @ x, stored(a), x)
    with pytest.raises(TypeError):
        spmv.Matrix.from_scipy(s, options={"cpu_simd": "on"})


@pytest.mark.parametrize("cpu_rows", [0, 1, 2, 3])
@pytest.mark.parametrize("algorithm", ["row-loop", "merge-parallel"])
def test_cpu_rows_option_selects_the_row_kernel(algorithm, cpu_rows):
    # options={"cpu_rows": k} forces the CPU row kernel (plain, unrolled, rows in lanes, a vector per
    # row); each matches scipy, and a number outside 0-3 (or -1) is refused.
    s = CASES["poisson2d"]
    a = spmv.Matrix.from_scipy(s, dtype=np.float64, algorithm=algorithm,
                               options={"cpu_simd": 1, "cpu_rows": cpu_rows})
    x = random_vector(a.shape[1], np.float64, 3)
    assert_close(a @ x, stored(a), x)
    with pytest.raises(ValueError, match="cpu_rows"):
        b = spmv.Matrix.from_scipy(s, dtype=np.float64, algorithm=algorithm, options={"cpu_simd": 1, "cpu_rows": 4})
        b @ x


@pytest.mark.parametrize("reorder", ["rcm", "degree"])
@pytest.mark.parametrize("transpose", [False, True])
def test_reorder_option_keeps_the_callers_numbering(reorder, transpose):
    # options={"reorder": ...}: the plan multiplies P A P^T and permutes x and y; y must still be A x
    # (a scrambled grid, so that RCM has work to do and a wrong permutation shows).
    s = CASES["poisson2d"].tocsr()
    p = np.random.default_rng(5).permutation(s.shape[0])
    s = s[p][:, p].tocsr()
    a = spmv.Matrix.from_scipy(s, dtype=np.float64, options={"reorder": reorder})
    x = random_vector(a.shape[1], np.float64, 4)
    y0 = random_vector(a.shape[0], np.float64, 5)
    y = y0.copy()
    a.apply(x, y, alpha=-0.5, beta=2.0, transpose=transpose)
    assert_close(y, stored(a), x, alpha=-0.5, beta=2.0, y0=y0, transpose=transpose)
    with pytest.raises(TypeError):
        spmv.Matrix.from_scipy(s, options={"reorder": "metis"})
    rect = sp.random(5, 7, density=0.5, format="csr", random_state=1)
    with pytest.raises(Exception):
        spmv.Matrix.from_scipy(rect, options={"reorder": "rcm"}) @ np.ones(7)


def test_deterministic_option_repeats_bits_and_refuses_tune():
    # options={"deterministic": True}: products repeat bit for bit; the tuner (choice set by timing)
    # refuses; a non-bool value is a TypeError.
    s = CASES["poisson2d"]
    a = spmv.Matrix.from_scipy(s, dtype=np.float64, options={"deterministic": True})
    x = random_vector(a.shape[1], np.float64, 6)
    first = a @ x
    for _ in range(3):
        assert np.array_equal((a @ x).view(np.uint64), first.view(np.uint64))
    assert_close(first, stored(a), x)
    with pytest.raises(Exception):
        spmv.Matrix.from_scipy(s, algorithm="tune", options={"deterministic": True}) @ x
    with pytest.raises(TypeError):
        spmv.Matrix.from_scipy(s, options={"deterministic": 1})


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("case", ["tall_empty_rows", "wide_empty_cols", "zero_rows"])
def test_matmul_fast_path_and_general_path_agree(case, dtype):
    # A @ x takes a short path for a contiguous vector of the matrix's dtype on the CPU; every other x (a
    # strided view, another dtype, a list) goes through the general path's checks and conversions. Both
    # must give A x, on A and on the view A.T.
    a = spmv.Matrix.from_scipy(CASES[case], dtype=dtype)
    held = stored(a)
    for view, transpose in ((a, False), (a.T, True)):
        n_x, n_y = _sizes(a, transpose)
        x = random_vector(n_x, dtype, 3)
        wide = np.zeros(2 * n_x, dtype)
        wide[::2] = x
        other = x.astype(np.float64 if dtype == np.float32 else np.float32)
        for operand in (x, wide[::2], list(x)):
            y = view @ operand
            assert y.dtype == dtype and y.shape == (n_y,)
            assert_close(y, held, x, 1.0, 0.0, np.zeros(n_y, dtype), transpose, dtype)
        y = view @ other  # converted to the matrix's dtype: the product of the rounded x
        assert_close(y, held, other.astype(dtype), 1.0, 0.0, np.zeros(n_y, dtype), transpose, dtype)
        with pytest.raises(ValueError):
            view @ np.ones(n_x + 1, dtype)
