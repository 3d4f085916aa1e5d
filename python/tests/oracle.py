"""The test oracle: scipy's own product in double precision, and the per-entry error bound.

For y = alpha*op(A)*x + beta*y0 computed in precision eps (float32 or float64), every summation order
of row i gives |y_i - exact_i| <= gamma_k * (|beta|*|y0_i| + |alpha|*sum_j |a_ij*x_j|) with
gamma_k ~ k*eps, k = the longest row of op(A) (Higham, "Accuracy and Stability of Numerical
Algorithms", 2nd ed., section 3.1). The reference is scipy's A @ x on the same (already rounded)
values widened to float64; it carries the same kind of error with eps = 2^-53, so the difference of
the two is bounded by c*eps*(...) with c = 2*(k + 2), the constant `spmv bench` verifies with. Entries
whose bound is 0 (empty rows with beta = 0) must be exactly 0; NaN never passes.
"""

import os

import numpy as np
import scipy.sparse as sp

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def matrices_dir():
    """$SPMV_MATRICES, else the repository's ../shared/matrices; None when it does not exist."""
    path = os.environ.get("SPMV_MATRICES") or os.path.join(REPO_ROOT, "..", "shared", "matrices")
    return path if os.path.isdir(path) else None


def expected(a, x, alpha=1.0, beta=0.0, y0=None, transpose=False, dtype=np.float64):
    """(reference, bound) for y = alpha*op(A)*x + beta*y0 computed in `dtype`.

    `a` is a scipy matrix holding the values the spmv.Matrix holds (already rounded to dtype). Its
    arrays are copied first: scipy sums duplicates in place in some operations (abs() among them),
    which would also hide |a1| + |a2| behind |a1 + a2| in the magnitude.
    """
    csr = sp.csr_array(a)
    data = np.array(csr.data, dtype=np.float64)
    indices = np.array(csr.indices, dtype=np.int64)
    rows = np.repeat(np.arange(csr.shape[0]), np.diff(csr.indptr))
    out, inner = (indices, rows) if transpose else (rows, indices)
    n_out = csr.shape[1] if transpose else csr.shape[0]
    shape = (csr.shape[1], csr.shape[0]) if transpose else csr.shape
    xd = np.asarray(x, dtype=np.float64)
    op = sp.coo_array((data, (out, inner)), shape=shape)  # duplicates kept as separate entries
    reference = alpha * (op @ xd)
    magnitude = abs(alpha) * np.bincount(out, weights=np.abs(data * xd[inner]), minlength=n_out)
    if beta != 0.0:
        y0d = np.asarray(y0, dtype=np.float64)
        reference = reference + beta * y0d
        magnitude = magnitude + abs(beta) * np.abs(y0d)
    lengths = np.bincount(out, minlength=n_out)
    c = 2.0 * ((int(lengths.max()) if lengths.size else 0) + 2)
    return reference, c * np.finfo(dtype).eps * magnitude


def assert_close(y, a, x, alpha=1.0, beta=0.0, y0=None, transpose=False, dtype=np.float64):
    reference, bound = expected(a, x, alpha, beta, y0, transpose, dtype)
    y = np.asarray(y, dtype=np.float64)
    assert y.shape == reference.shape, (y.shape, reference.shape)
    error = np.abs(y - reference)
    ok = error <= bound  # False for NaN
    if not ok.all():
        i = int(np.argmax(~ok))
        raise AssertionError(
            f"{int((~ok).sum())} of {y.size} entries exceed the bound; first: entry {i}: got {y[i]!r}, "
            f"expected {reference[i]!r}, error {error[i]:.3g} > bound {bound[i]:.3g}")


def random_vector(n, dtype, seed):
    return np.random.default_rng(seed).uniform(-1.0, 1.0, n).astype(dtype)
