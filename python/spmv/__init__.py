"""spmv: sparse matrix-vector products y = alpha*op(A)*x + beta*y on the CPU and CUDA GPUs.

    import scipy.sparse, spmv
    A = spmv.Matrix.from_scipy(scipy_matrix)          # or spmv.read_matrix_market / spmv.generate.*
    y = A @ x                                         # NumPy in, NumPy out (CPU)
    y = A @ cupy_x                                    # CuPy in, CuPy out (GPU, no host copies)
    A.apply(x, y, alpha=2.0, beta=1.0)                # in place
    scipy.sparse.linalg.cg(A.aslinearoperator(), b)
    x, info = spmv.cg(A, b, M="jacobi", tol=1e-8)     # spmv's own solvers (also bicgstab, gmres)

Errors: ValueError for bad arguments, spmv.ParseError (a ValueError) for malformed Matrix Market
files, spmv.UnsupportedError (a RuntimeError) for requests the library cannot honour (an algorithm a
backend does not offer, no CUDA device), spmv.CudaError (a RuntimeError) for failing CUDA calls.
"""

from . import _core
from ._core import CudaError, ParseError, UnsupportedError
from ._matrix import Matrix, read_matrix_market
from ._solvers import SolveInfo, bicgstab, cg, gmres
from ._tools import algorithms, bench, cuda_available, info
from . import generate

__version__ = "0.1.0"

for _exception in (ParseError, UnsupportedError, CudaError):
    _exception.__module__ = __name__
del _exception

__all__ = [
    "Matrix",
    "read_matrix_market",
    "generate",
    "info",
    "bench",
    "algorithms",
    "cuda_available",
    "cg",
    "bicgstab",
    "gmres",
    "SolveInfo",
    "ParseError",
    "UnsupportedError",
    "CudaError",
]
