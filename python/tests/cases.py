"""The matrices every backend is tested on (fixed seeds), the (alpha, beta) sweep, and a harness that
runs products from several threads at once."""

import threading

import numpy as np
import scipy.sparse as sp

import spmv

# Formats refuse matrices that would pad beyond a factor (3 by default); the sweep lifts the limit so
# that every algorithm computes every case (the refusal itself is tested in test_errors.py).
NO_PADDING_LIMIT = {"max_padding": 1e9}

# (alpha, beta): plain, scaled with a NaN-poisoned y (beta == 0 must not read y), general, alpha == 0
# (y = beta*y), accumulate.
COMBOS = [(1.0, 0.0), (2.5, 0.0), (-1.5, 0.75), (0.0, 2.0), (1.0, 1.0)]


def _random_csr(rows, cols, density, rng):
    dense = rng.uniform(-1.0, 1.0, (rows, cols)) * (rng.random((rows, cols)) < density)
    return sp.csr_array(dense)


def _cases():
    rng = np.random.default_rng(20240611)
    tall = _random_csr(37, 23, 0.3, rng).tolil()
    tall[[0, 5, 36], :] = 0  # empty rows, first and last included
    wide = _random_csr(23, 37, 0.25, rng).tolil()
    wide[:, [0, 10]] = 0  # empty columns: empty rows of A^T
    long_row = sp.lil_array((50, 200))
    long_row[0, :] = rng.uniform(-1, 1, 200)  # one row holding every column
    for i in range(1, 50):
        long_row[i, rng.integers(0, 200, 2)] = rng.uniform(-1, 1, 2)
    # Unsorted columns and duplicate entries, kept as given (scipy sums duplicates in its product).
    unsorted = sp.csr_array(
        (np.array([1.0, -2.0, 0.5, 3.0, 0.25, -1.0, 4.0]), np.array([3, 0, 3, 2, 1, 1, 0]),
         np.array([0, 3, 3, 6, 7])), shape=(4, 4))
    return {
        "tall_empty_rows": sp.csr_array(tall),
        "wide_empty_cols": sp.csr_array(wide),
        "poisson2d": spmv.generate.poisson2d(7).to_scipy(),
        "long_row": sp.csr_array(long_row),
        "unsorted_duplicates": unsorted,
        "random_2k_plus_97": _random_csr(1121, 1121, 8 / 1121, rng),  # several merge-path segments
        "no_nonzeros": sp.csr_array((4, 6)),
        "zero_rows": sp.csr_array((0, 5)),
        "zero_cols": sp.csr_array((5, 0)),
    }


CASES = _cases()


def stored(a):
    """The values an spmv.Matrix holds, as a scipy matrix (already rounded to its dtype)."""
    return sp.csr_array((a.data.copy(), a.indices.copy(), a.indptr.copy()), shape=a.shape)


def concurrently(count, work):
    """Runs work(i) for i in range(count), each on its own thread, all at once; returns their results
    in order and re-raises the first error any of them met."""
    results = [None] * count
    errors = []

    def run(i):
        try:
            results[i] = work(i)
        except Exception as e:  # pragma: no cover - re-raised below
            errors.append(e)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return results


def require_cupy_and_cuda(module_level=True):
    """Skips the calling test module unless CuPy reaches a CUDA device and spmv has its CUDA backend.

    Returns the cupy module. Call at module level: `cupy = require_cupy_and_cuda()`; or from a fixture
    with module_level=False, which skips only the tests that use it.
    """
    import pytest

    try:
        import cupy

        devices = cupy.cuda.runtime.getDeviceCount()
    except Exception as e:  # ImportError, or a CuPy that cannot reach the driver
        pytest.skip(f"CuPy is not usable: {e}", allow_module_level=module_level)
    if devices == 0:
        pytest.skip("no CUDA device", allow_module_level=module_level)
    if not spmv.cuda_available():
        pytest.skip("the spmv extension was built without CUDA (no nvcc at build time)",
                    allow_module_level=module_level)
    return cupy
