"""Krylov solvers: spmv.cg, spmv.bicgstab, spmv.gmres (the C++ solvers of spmv/solvers.hpp).

Each returns ``(x, info)``. NumPy input solves on the CPU (or, with backend='cuda', uploads b and x0
once and downloads x once); CuPy input solves on the GPU in place, with the scalars on the device.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import _core
from ._arrays import as_device_vector, cupy_module, is_device_array
from ._matrix import Matrix, parse_device


@dataclass
class SolveInfo:
    """What a solve reports. ``residual`` is the true ||b - A x|| / ||b||, recomputed after the loop."""

    converged: bool
    iterations: int
    residual: float
    recurrence_residual: float
    applies: int
    total_ms: float
    ms_per_iteration: float
    apply_share: float
    breakdown: str
    algorithm: str
    history: list = field(default_factory=list)
    # The iteration's memory floor (docs/SOLVERS.md, "The floor"): bytes of one operator apply (CSR byte
    # model), applies per iteration and the vector traffic of the kernels as implemented.
    variant: str = ""
    apply_bytes: int = 0
    applies_per_iteration: int = 0
    vector_bytes: int = 0

    @property
    def floor_bytes(self) -> int:
        """Bytes one iteration must move: applies_per_iteration * apply_bytes + vector_bytes."""
        return self.applies_per_iteration * self.apply_bytes + self.vector_bytes

    def floor_ms(self, bandwidth_gbs: float) -> float:
        """The floor of one iteration in ms at a copy bandwidth in GB/s (1e9 bytes/s)."""
        return self.floor_bytes / (bandwidth_gbs * 1e9) * 1e3


def _as_matrix(A, algorithm):
    if isinstance(A, Matrix):
        return A
    try:
        import scipy.sparse as sp  # noqa: PLC0415 - optional
    except ImportError:  # pragma: no cover - SciPy is a dependency of the tests only
        sp = None
    if sp is not None and sp.issparse(A):
        return Matrix.from_scipy(A, algorithm=algorithm or "auto")
    raise TypeError(f"A must be an spmv.Matrix or a SciPy sparse matrix, got {type(A).__name__}")


def _preconditioner(M):
    if M is None or M == "none":
        return "none"
    if M == "jacobi":
        return "jacobi"
    raise ValueError(f"M must be 'jacobi' or None, got {M!r}")


def _basis_name(basis, dtype):
    """GMRES's basis storage as the core names it: 'working', 'f32' or 'f16' (a dtype is accepted too)."""
    if isinstance(basis, str):
        return basis.lower()
    dt = np.dtype(basis)
    if dt == np.dtype(dtype):
        return "working"
    if dt == np.float32:
        return "f32"
    if dt == np.float16:
        return "f16"
    raise ValueError(f"basis must be 'working', 'f32', 'f16', numpy.float32 or numpy.float16, got {basis!r}")


def _solve(method, A, b, x0, tol, maxiter, M, algorithm, backend, restart, callback, callback_every, history,
           check_every, fused=True, graph=False, pipelined=False, basis="working", s_step=1):
    A = _as_matrix(A, algorithm)
    algorithm = A.algorithm if algorithm is None else algorithm
    if not isinstance(algorithm, str):
        raise TypeError(f"algorithm must be a name (str), got {algorithm!r}")
    if A._transposed:
        raise ValueError("solve with the matrix, not a transposed view (A.T): build A.T.to_scipy() instead")
    rows, cols = A.shape
    if rows != cols:
        raise ValueError(f"{method}: the matrix is {rows} x {cols}; Krylov solvers need a square matrix")
    settings = {
        "method": method,
        "preconditioner": _preconditioner(M),
        "tol": float(tol),
        "maxiter": int(maxiter),
        "restart": int(restart),
        "gmres_basis": _basis_name(basis, A.dtype),
        "gmres_s_step": int(s_step),
        "history": bool(history),
        "progress_every": int(callback_every) if callback is not None else 0,
        "callback": callback,
        "check_every": int(check_every),
        "fused": bool(fused),
        "graph": bool(graph),
        "pipelined": bool(pipelined),
    }
    kind, ordinal = parse_device(A.device if backend is None else backend)

    if is_device_array(b):
        if kind == "cpu":
            raise ValueError("b is a CUDA array but backend='cpu'")
        bv = as_device_vector(b, "b")
        if bv.dtype != A.dtype:
            raise TypeError(f"b has dtype {bv.dtype}, the matrix {A.dtype}; convert it explicitly")
        cupy = cupy_module()
        if cupy is None:
            raise _core.UnsupportedError("solving on CUDA arrays needs CuPy (not installed)")
        if ordinal is None:
            ordinal = bv.device if bv.device is not None else _core.current_device()
        with cupy.cuda.Device(ordinal):
            if x0 is None:
                x = cupy.zeros(rows, dtype=A.dtype)
            else:
                if not is_device_array(x0):
                    raise ValueError("b is a CUDA array, x0 must be one too")
                x = cupy.array(x0, dtype=A.dtype, copy=True)  # x0 is not overwritten
            stream = cupy.cuda.get_current_stream().ptr
        xv = as_device_vector(x, "x")
        r = A._core.solve_device(ordinal, algorithm, settings, bv.address, bv.size, bv.stream, xv.address, xv.size,
                                 xv.stream, stream)
        return x, SolveInfo(**r)

    bh = np.asarray(b)
    if bh.dtype.kind not in "fiub" or bh.ndim != 1:
        raise TypeError(f"b must be a 1-D array of real numbers, got dtype {bh.dtype} and shape {bh.shape}")
    if bh.shape[0] != rows:
        raise ValueError(f"b has {bh.shape[0]} entries, the matrix has {rows} rows")
    bh = np.ascontiguousarray(bh, dtype=A.dtype)
    if x0 is None:
        x = np.zeros(rows, dtype=A.dtype)
    else:
        x = np.array(x0, dtype=A.dtype, copy=True)
        if x.ndim != 1 or x.shape[0] != cols:
            raise ValueError(f"x0 has shape {x.shape}, the matrix has {cols} columns")
    if kind == "cuda":
        backend_name, ordinal = "cuda", ordinal if ordinal is not None else _core.current_device()
    else:
        backend_name, ordinal = "cpu", 0
    r = A._core.solve_host(backend_name, ordinal, algorithm, settings, bh, x)
    return x, SolveInfo(**r)


def cg(A, b, x0=None, *, tol=1e-8, maxiter=1000, M=None, algorithm=None, backend=None, callback=None,
       callback_every=1, history=False, check_every=1, fused=True, graph=False, pipelined=False):
    """Conjugate Gradient for symmetric positive definite A; M='jacobi' for the diagonal preconditioner.

    Stops when ||r|| <= tol * ||b|| or after maxiter iterations; ``callback(iteration, relative_residual)``
    runs every ``callback_every`` iterations. ``fused=False`` runs issue 9's unfused kernels (to compare);
    ``graph=True`` (CUDA) captures one iteration in a CUDA graph; ``pipelined=True`` runs the pipelined
    recurrence, one global reduction per iteration (built for distributed solves). Returns ``(x, SolveInfo)``.
    """
    return _solve("cg", A, b, x0, tol, maxiter, M, algorithm, backend, 30, callback, callback_every, history,
                  check_every, fused, graph, pipelined)


def bicgstab(A, b, x0=None, *, tol=1e-8, maxiter=1000, M=None, algorithm=None, backend=None, callback=None,
             callback_every=1, history=False, check_every=1, graph=False):
    """BiCGStab (right Jacobi preconditioning with M='jacobi'); two products per iteration. ``graph=True``
    (CUDA) captures one iteration in a CUDA graph, as for :func:`cg`."""
    return _solve("bicgstab", A, b, x0, tol, maxiter, M, algorithm, backend, 30, callback, callback_every, history,
                  check_every, graph=graph)


def gmres(A, b, x0=None, *, tol=1e-8, restart=30, maxiter=1000, M=None, algorithm=None, backend=None, callback=None,
          callback_every=1, history=False, check_every=1, basis="working", s_step=1):
    """Restarted GMRES(restart), right Jacobi preconditioning; maxiter counts Arnoldi steps (products).

    ``basis="f32"`` (or ``numpy.float32``) stores the Krylov basis in float32 for a float64 solve (a compressed
    basis: half the bytes of the orthogonalisation, which dominates a step; sums, A v, x and the residual stay
    float64); ``basis="f16"`` (or ``numpy.float16``) stores it in IEEE half for a float32 solve (float64 solves
    reject it); ``"working"`` stores it in the matrix's dtype.

    ``s_step=S`` (1-8) builds the basis S vectors at a time after a first cycle of Arnoldi steps (s-step GMRES
    with a Newton basis: one Gram-Schmidt pass over the basis per block instead of two per step;
    docs/SOLVERS.md, "s-step GMRES"); the working-precision basis only. 1 (the default) is one Arnoldi step
    at a time.
    """
    return _solve("gmres", A, b, x0, tol, maxiter, M, algorithm, backend, restart, callback, callback_every, history,
                  check_every, basis=basis, s_step=s_step)
