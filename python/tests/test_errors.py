"""Bad input raises a Python exception carrying the library's message; nothing crashes."""

import gzip

import numpy as np
import pytest
import scipy.sparse as sp

import spmv


@pytest.fixture
def a():
    return spmv.Matrix.from_scipy(sp.random(5, 4, density=0.5, format="csr", random_state=1) + sp.eye(5, 4))


class FakeDeviceArray:
    """An object claiming CUDA memory through __cuda_array_interface__ (never dereferenced here)."""

    def __init__(self, n, typestr="<f8", strides=None, address=0xDEAD0000, shape=None, readonly=False):
        self.__cuda_array_interface__ = {
            "shape": shape if shape is not None else (n,),
            "typestr": typestr,
            "data": (address, readonly),
            "strides": strides,
            "version": 3,
            "stream": None,
        }


def test_exception_hierarchy():
    assert issubclass(spmv.ParseError, ValueError)
    assert issubclass(spmv.UnsupportedError, RuntimeError)
    assert issubclass(spmv.CudaError, RuntimeError)
    assert spmv.ParseError.__module__ == "spmv"


def test_shape_mismatch(a):
    with pytest.raises(ValueError, match="x has 5 entries"):
        a @ np.ones(5)
    with pytest.raises(ValueError, match="x has 4 entries"):
        a.rmatvec(np.ones(4))
    with pytest.raises(ValueError, match="y has 4 entries"):
        a.apply(np.ones(4), np.zeros(4))
    with pytest.raises(ValueError, match="1-D"):
        a.apply(np.ones((4, 1)))
    with pytest.raises(ValueError, match="rows"):
        a @ np.ones((3, 2))
    with pytest.raises(TypeError, match="dense vectors"):
        a @ sp.eye(4, format="csr")


def test_y_is_never_converted(a):
    x = np.ones(4)
    with pytest.raises(TypeError, match="y has dtype float32"):
        a.apply(x, np.zeros(5, np.float32))
    with pytest.raises(TypeError, match="NumPy array"):
        a.apply(x, [0.0] * 5)
    with pytest.raises(ValueError, match="not contiguous"):
        a.apply(x, np.zeros(10)[::2])
    readonly = np.zeros(5)
    readonly.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        a.apply(x, readonly)
    with pytest.raises(TypeError, match="y has dtype"):
        a.apply(x, np.zeros(5).astype(">f8"))  # byte-swapped


def test_bad_x_and_scalars(a):
    with pytest.raises(TypeError, match="complex"):
        a @ (np.ones(4) + 1j)
    with pytest.raises(TypeError, match="real numbers"):
        a @ np.array(["a", "b", "c", "d"])
    with pytest.raises(TypeError, match="alpha"):
        a.apply(np.ones(4), alpha=1j)
    with pytest.raises(ValueError, match="pass y"):
        a.apply(np.ones(4), beta=1.0)
    with pytest.raises(TypeError, match="algorithm"):
        a.apply(np.ones(4), algorithm=3)


def test_overlapping_x_and_y_are_refused():
    a = spmv.Matrix.from_scipy(sp.eye(4, format="csr"))
    buffer = np.arange(5.0)
    with pytest.raises(ValueError, match="overlap"):
        a.apply(buffer[:4], buffer[1:])


def test_unknown_and_unoffered_algorithms(a):
    with pytest.raises(ValueError, match="unknown algorithm 'fastest'.*merge-parallel"):
        a.matvec(np.ones(4), algorithm="fastest")
    with pytest.raises(ValueError, match="unknown algorithm"):
        spmv.Matrix.from_scipy(sp.eye(3), algorithm="nope")
    with pytest.raises(spmv.UnsupportedError, match="cpu backend does not offer algorithm csr-vector"):
        a.matvec(np.ones(4), algorithm="csr-vector", device="cpu")


def test_padding_refusal_names_the_limit():
    long_row = sp.lil_array((50, 200))
    long_row[0, :] = 1.0
    a = spmv.Matrix.from_scipy(long_row)
    with pytest.raises(spmv.UnsupportedError, match="padding factor"):
        a.matvec(np.ones(200), algorithm="ell")
    with pytest.raises(ValueError, match="unknown option 'max_pad'"):
        spmv.Matrix.from_scipy(long_row, options={"max_pad": 10})
    with pytest.raises(TypeError, match="must be an int"):
        spmv.Matrix.from_scipy(long_row, options={"threads": 1.5})


def test_bad_devices(a):
    with pytest.raises(ValueError, match="unknown device 'gpu'"):
        a.matvec(np.ones(4), device="gpu")
    with pytest.raises(ValueError, match="unknown device"):
        spmv.bench(a, device="tpu")


@pytest.mark.skipif(spmv.cuda_available(), reason="a CUDA device is present")
def test_cuda_without_a_device(a):
    with pytest.raises(spmv.UnsupportedError, match="no CUDA device"):
        a.matvec(np.ones(4), device="cuda")
    with pytest.raises(spmv.UnsupportedError, match="no CUDA device"):
        spmv.Matrix.from_scipy(sp.eye(3), device="cuda")
    with pytest.raises(spmv.UnsupportedError, match="no CUDA device"):
        spmv.bench(a, device="cuda")
    with pytest.raises(spmv.UnsupportedError, match="no CUDA device"):
        a @ FakeDeviceArray(4)  # a device array is never dereferenced without a device
    if not spmv._core.cuda_built():
        assert spmv.algorithms("cuda") == []


def test_device_arrays_are_checked_before_any_use(a):
    # These are refused from the interface alone, with or without a GPU.
    with pytest.raises(TypeError, match="x has dtype float32"):
        a @ FakeDeviceArray(4, typestr="<f4")
    with pytest.raises(ValueError, match="not contiguous"):
        a @ FakeDeviceArray(4, strides=(16,))
    with pytest.raises(ValueError, match="1-D"):
        a.apply(FakeDeviceArray(4, shape=(2, 2)))
    with pytest.raises(ValueError, match="x has 3 entries"):
        a @ FakeDeviceArray(3)
    with pytest.raises(ValueError, match="read-only"):
        a.apply(FakeDeviceArray(4), FakeDeviceArray(5, readonly=True))
    with pytest.raises(ValueError, match="both be host"):
        a.apply(np.ones(4), FakeDeviceArray(5))
    with pytest.raises(ValueError, match="device='cpu'"):
        a.matvec(FakeDeviceArray(4), device="cpu")


def test_invalid_csr_arrays():
    with pytest.raises(ValueError, match="row_ptr"):
        spmv.Matrix([0, 1], [0], [1.0], (2, 2))  # indptr too short
    with pytest.raises(ValueError):
        spmv.Matrix([0, 1, 2], [0, 5], [1.0, 2.0], (2, 2))  # column out of range
    with pytest.raises(ValueError):
        spmv.Matrix([0, 2, 1], [0, 1], [1.0, 2.0], (2, 2))  # decreasing
    with pytest.raises(ValueError):
        spmv.Matrix([0, 1, 2], [0, 1], [1.0], (2, 2))  # lengths differ
    with pytest.raises(ValueError, match="out of range"):
        spmv.Matrix([0, 1], np.array([2**40], np.int64), [1.0], (1, 4))  # would wrap in int32
    with pytest.raises(ValueError, match="negative"):
        spmv.Matrix([0], [], [], (-1, 2))
    with pytest.raises(TypeError, match="integers"):
        spmv.Matrix([0.0, 1.0], [0.5], [1.0], (1, 2))
    with pytest.raises(TypeError, match="complex"):
        spmv.Matrix([0, 1], [0], [1j], (1, 1))
    with pytest.raises(TypeError, match="shape"):
        spmv.Matrix([0, 1], [0], [1.0], "1x1")
    with pytest.raises(TypeError, match="float32 or float64"):
        spmv.Matrix([0, 1], [0], [1.0], (1, 1), dtype=np.float16)
    with pytest.raises(spmv.UnsupportedError, match="32-bit"):
        spmv.Matrix([0, 1], [0], [1.0], (1, 2**31 + 1), index_dtype=np.int32)
    with pytest.raises(TypeError, match="scipy.sparse"):
        spmv.Matrix.from_scipy(np.eye(3))


def test_matrix_market_errors(tmp_path):
    bad = tmp_path / "bad.mtx"
    bad.write_text("%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1.0\n3 1 2.0\n")
    with pytest.raises(spmv.ParseError, match="bad.mtx:4"):
        spmv.read_matrix_market(bad)
    with pytest.raises(ValueError):  # ParseError is a ValueError
        spmv.read_matrix_market(str(bad))
    truncated = tmp_path / "truncated.mtx.gz"
    truncated.write_bytes(gzip.compress(b"%%MatrixMarket matrix coordinate real general\n3 3 4\n1 1 1\n")[:-6])
    with pytest.raises(spmv.ParseError):
        spmv.read_matrix_market(truncated)
    with pytest.raises(FileNotFoundError):
        spmv.read_matrix_market(tmp_path / "missing.mtx")


def test_read_matrix_market_max_memory(tmp_path):
    # Refused from the size line (2 * 10^6 rows: 8 bytes of CSR row pointers each), before the entries.
    big = tmp_path / "big.mtx"
    big.write_text("%%MatrixMarket matrix coordinate real general\n2000000 2000000 1\n1 1 1.0\n")
    with pytest.raises(spmv.UnsupportedError, match=r"big.mtx:2: reading this 2000000 x 2000000 matrix .*"
                       r"more than the max_memory limit of 1.0 MB"):
        spmv.read_matrix_market(big, max_memory=10**6)
    assert spmv.read_matrix_market(big, max_memory=10**9).nnz == 1
    for bad in (0, -1, 1.5, True, "1G"):
        with pytest.raises(ValueError, match="max_memory"):
            spmv.read_matrix_market(big, max_memory=bad)


def test_generator_errors():
    with pytest.raises(ValueError, match="unknown generator 'poisson4d'"):
        spmv.generate.generate("poisson4d")
    with pytest.raises(ValueError, match="unknown parameter 'm'"):
        spmv.generate.generate("poisson2d", m=3)
    with pytest.raises(TypeError):
        spmv.generate.poisson2d(m=3)  # not in the signature
    with pytest.raises(ValueError, match="integer"):
        spmv.generate.poisson2d(2.5)
    with pytest.raises(TypeError, match="real number"):
        spmv.generate.poisson2d("3")
    with pytest.raises(TypeError, match="real number"):
        spmv.generate.poisson2d(True)
