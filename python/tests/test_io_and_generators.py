"""Matrix Market reading, generators and statistics."""

import gzip
import inspect
import os

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

import spmv
from oracle import assert_close, matrices_dir, random_vector

MATRICES = matrices_dir()
needs_matrices = pytest.mark.skipif(MATRICES is None, reason="no test matrices (set SPMV_MATRICES)")


def _scipy_read(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        m = sp.csr_array(scipy.io.mmread(f))
    m.sum_duplicates()
    return m


@needs_matrices
@pytest.mark.parametrize("name", ["west0067", "lp_afiro", "bcsstk13", "whitaker3"])
def test_read_matrix_market_matches_scipy(name):
    path = os.path.join(MATRICES, name + ".mtx.gz")
    if not os.path.exists(path):
        pytest.skip(f"{path} is absent")
    a = spmv.read_matrix_market(path)
    s = _scipy_read(path)
    assert a.shape == s.shape and a.nnz == s.nnz
    # Both readers round each decimal correctly and both sum duplicates and sort columns: exact equality.
    assert np.array_equal(a.indptr, s.indptr)
    assert np.array_equal(a.indices, s.indices)
    assert np.array_equal(a.data, s.data)
    x = random_vector(a.shape[1], np.float64, 1)
    assert_close(a @ x, s, x)
    a32 = spmv.read_matrix_market(path, dtype=np.float32)
    assert a32.dtype == np.float32 and np.array_equal(a32.data, s.data.astype(np.float32))


@needs_matrices
def test_info_of_a_file():
    path = os.path.join(MATRICES, "bcsstk13.mtx.gz")
    if not os.path.exists(path):
        pytest.skip(f"{path} is absent")
    d = spmv.info(spmv.read_matrix_market(path))
    # README.md of the matrices: 2003 x 2003, 83883 nonzeros once expanded, longest row 95.
    assert (d["rows"], d["cols"], d["nnz"], d["row_max"]) == (2003, 2003, 83883, 95)
    assert d["stored_symmetry"] == "symmetric" and d["structurally_symmetric"] and d["file"] == path


def test_read_plain_pattern_symmetric_file(tmp_path):
    path = tmp_path / "small.mtx"
    path.write_text("%%MatrixMarket matrix coordinate pattern symmetric\n% comment\n3 3 3\n1 1\n3 1\n2 2\n")
    a = spmv.read_matrix_market(path)
    dense = a.to_scipy().toarray()
    assert np.array_equal(dense, [[1, 0, 1], [0, 1, 0], [1, 0, 0]])
    assert spmv.info(a)["format"] == "coordinate" and spmv.info(a)["field"] == "pattern"


def test_read_gzip_and_duplicates(tmp_path):
    path = tmp_path / "dups.mtx.gz"
    path.write_bytes(gzip.compress(b"%%MatrixMarket matrix coordinate real general\n2 3 3\n1 2 1.5\n1 2 2.5\n2 3 -1\n"))
    a = spmv.read_matrix_market(str(path))
    assert a.shape == (2, 3) and a.nnz == 2  # duplicates summed
    assert np.array_equal(a.to_scipy().toarray(), [[0, 4.0, 0], [0, 0, -1.0]])


def _laplacian_2d(n):
    t = sp.diags([-1.0, 4.0, -1.0], [-1, 0, 1], shape=(n, n))
    off = sp.diags([-1.0, -1.0], [-1, 1], shape=(n, n))
    return sp.csr_array(sp.kron(sp.eye(n), t) + sp.kron(off, sp.eye(n)))


def test_poisson2d_is_the_5_point_laplacian():
    for n in (1, 2, 5):
        a = spmv.generate.poisson2d(n)
        s = _laplacian_2d(n)
        s.eliminate_zeros()  # kron stores the zeros of its factors
        s.sort_indices()
        assert np.array_equal(a.indptr, s.indptr) and np.array_equal(a.indices, s.indices)
        assert np.array_equal(a.data, s.data)


SMALL = {
    "poisson2d": {"n": 6},
    "poisson3d": {"n": 4},
    "stencil27": {"n": 3},
    "random_uniform": {"rows": 50, "cols": 40, "per_row": 5, "seed": 3},
    "rmat": {"scale": 6, "edge_factor": 4, "seed": 2},
    "banded": {"n": 30, "half_bandwidth": 2, "seed": 4},
    "long_rows": {"rows": 60, "cols": 80, "long_rows": 2, "long_length": 70, "short_length": 3, "seed": 5},
    "mostly_empty": {"rows": 100, "cols": 50, "nonempty_fraction": 0.1, "per_row": 4, "seed": 6},
    "dense_rows": {"n": 60, "dense_rows": 2, "dense_fraction": 0.5, "per_row": 2, "seed": 7},
    "fem2d": {"n": 6, "kappa_amplitude": 0.25, "distortion": 0.05},
    "fem3d": {"n": 4, "kappa_amplitude": 0.5, "distortion": 0.0},
}


def test_every_generator_has_a_function():
    names = [g["name"] for g in spmv.generate.generators()]
    assert set(names) == set(SMALL)  # a new generator needs a small case here
    for g in spmv.generate.generators():
        f = getattr(spmv.generate, g["name"])
        params = inspect.signature(f).parameters
        for key, default in g["defaults"].items():
            assert params[key].default == default


@pytest.mark.parametrize("name", list(SMALL))
def test_generators_are_deterministic_and_valid(name):
    f = getattr(spmv.generate, name)
    a = f(**SMALL[name])
    b = spmv.generate.generate(name, **SMALL[name])
    assert np.array_equal(a.indptr, b.indptr) and np.array_equal(a.indices, b.indices)
    assert np.array_equal(a.data, b.data)
    assert a.dtype == np.float64 and a.index_dtype == np.int32
    s = a.to_scipy()
    assert s.has_canonical_format  # sorted columns, no duplicates
    x = random_vector(a.shape[1], np.float64, 8)
    assert_close(a @ x, s, x)
    c = f(**SMALL[name], dtype=np.float32)
    assert c.dtype == np.float32 and np.array_equal(c.data, a.data.astype(np.float32))


def test_generator_defaults_and_positional_single_parameter():
    assert spmv.generate.poisson2d(4).shape == (16, 16)
    assert spmv.generate.poisson2d(n=4).shape == (16, 16)
    with pytest.raises(TypeError):
        spmv.generate.banded(10, 2, 1)  # several parameters: keywords only
    assert inspect.signature(spmv.generate.poisson2d).parameters["n"].default == 1000


def test_info_keys_and_values():
    # Rows of lengths 2, 0, 3, 1; one empty row; diagonals j - i in {0, 2, -2, -1, 1, -3}.
    s = sp.csr_array((np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0]), np.array([0, 2, 0, 1, 3, 0]),
                      np.array([0, 2, 2, 5, 6])), shape=(4, 4))
    d = spmv.info(s)
    keys = ["rows", "cols", "nnz", "row_mean", "row_std", "row_min", "row_max", "empty_rows", "diagonals",
            "ell_padding", "bandwidth", "symmetric", "structurally_symmetric", "numerically_symmetric", "fits_int32"]
    assert list(d) == keys  # the keys and order of `spmv info --json`
    lengths = np.array([2, 0, 3, 1])
    assert (d["rows"], d["cols"], d["nnz"]) == (4, 4, 6)
    assert d["row_mean"] == pytest.approx(lengths.mean()) and d["row_std"] == pytest.approx(lengths.std())
    assert (d["row_min"], d["row_max"], d["empty_rows"]) == (0, 3, 1)
    assert d["diagonals"] == 6 and d["bandwidth"] == 3
    assert d["ell_padding"] == pytest.approx(4 * 3 / 6)
    assert d["symmetric"] is False and d["fits_int32"] is True
    sym = spmv.info(spmv.generate.poisson2d(3))
    assert sym["symmetric"] and sym["structurally_symmetric"] and sym["numerically_symmetric"]
