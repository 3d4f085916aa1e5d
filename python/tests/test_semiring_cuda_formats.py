"""The CUDA semiring product on ELL, ELL-R, HYB, COO, DIA and compressed CSR (docs/SEMIRINGS.md): a SemiringPlan
with the format asked for, on CuPy arrays in place and on NumPy vectors through the device, against numpy
evaluations of the definition; the refusals (the padding rule, DIA's duplicates) where the CPU's conversion of the
same format refuses too. Skipped when CuPy cannot be imported, when no GPU is present, or when the extension was
built without CUDA."""

import numpy as np
import pytest

import spmv
from cases import CASES, require_cupy_and_cuda, stored
from test_semirings import FORMATS, SEMIRINGS, definition

cupy = require_cupy_and_cuda()


@pytest.mark.parametrize("algorithm", FORMATS)
@pytest.mark.parametrize("transpose", [False, True], ids=["N", "T"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("semiring", SEMIRINGS)
@pytest.mark.parametrize("case", ["tall_empty_rows", "wide_empty_cols", "long_row", "random_2k_plus_97",
                                  "unsorted_duplicates", "no_nonzeros", "zero_rows", "zero_cols", "poisson2d"])
def test_formats_on_cupy_match_the_definition(case, semiring, dtype, transpose, algorithm):
    # min, max and or are exact in any order: each format must give the definition's values. y is poisoned with
    # NaN, so every entry must be written (an empty row: the semiring's zero).
    s = CASES[case]
    a = spmv.Matrix.from_scipy(s, dtype=dtype)
    n_x, n_y = (s.shape[0], s.shape[1]) if transpose else (s.shape[1], s.shape[0])
    x = np.random.default_rng(31).standard_normal(n_x).astype(dtype)
    x[::7] = 0
    dy = cupy.full(n_y, np.nan, dtype=dtype)
    try:
        out = a.apply(cupy.asarray(x), dy, semiring=semiring, transpose=transpose, algorithm=algorithm)
    except spmv.UnsupportedError as e:
        # The SpMV conversions' padding rule (ELL's long row, DIA's scattered diagonals: over 3 x nnz + 1024 slots)
        # and DIA's duplicates, which it would sum; COO refuses nothing. The CPU's conversion refuses as well.
        message = str(e)
        assert algorithm != "coo" and ("padding factor" in message or
                                       (algorithm == "dia" and "duplicate" in message)), message
        with pytest.raises(spmv.UnsupportedError):
            a.apply(x, semiring=semiring, transpose=transpose, algorithm=algorithm, device="cpu")
        return
    assert out is dy
    held = stored(a)
    np.testing.assert_array_equal(cupy.asnumpy(dy), definition(held.T if transpose else held, a, x, semiring))


@pytest.mark.parametrize("algorithm", FORMATS)
@pytest.mark.parametrize("semiring", SEMIRINGS)
def test_formats_on_the_gpu_with_numpy_vectors(semiring, algorithm):
    # A 2D Poisson matrix fits every format; x0 = -1e3 would win min-plus's rows if a padding slot (ELL's column -1,
    # DIA's slots outside the matrix or without an entry) were read as 0 at column 0. NumPy x with device="cuda":
    # one upload and one download, the same values as the CPU's format.
    s = CASES["poisson2d"]
    a = spmv.Matrix.from_scipy(s, device="cuda")
    x = np.random.default_rng(32).standard_normal(s.shape[1])
    x[0] = -1e3
    y = a.apply(x, semiring=semiring, algorithm=algorithm)
    assert isinstance(y, np.ndarray)
    np.testing.assert_array_equal(y, definition(stored(a), a, x, semiring))
    np.testing.assert_array_equal(y, a.apply(x, semiring=semiring, algorithm=algorithm, device="cpu"))


def test_format_refusals_on_the_gpu():
    a = spmv.Matrix.from_scipy(CASES["long_row"])
    x = cupy.ones(a.shape[1])
    for algorithm in ["ell", "ellr"]:  # the 200-entry row pads every row to 200 slots
        with pytest.raises(spmv.UnsupportedError, match="padding factor"):
            a.apply(x, semiring="min-plus", algorithm=algorithm)
    for algorithm in ["hyb", "coo"]:  # no padding bound to break
        assert a.apply(x, semiring="min-plus", algorithm=algorithm).shape == (a.shape[0],)
    d = spmv.Matrix.from_scipy(CASES["unsorted_duplicates"])
    with pytest.raises(spmv.UnsupportedError, match="duplicate"):
        d.apply(cupy.ones(d.shape[1]), semiring="max-min", algorithm="dia")
