# Type stubs of spmv/_solvers.py.
from collections.abc import Callable
from typing import Any, Literal

from ._matrix import Matrix

class SolveInfo:
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
    history: list[float]
    variant: str
    apply_bytes: int
    applies_per_iteration: int
    vector_bytes: int
    def __init__(self, converged: bool, iterations: int, residual: float, recurrence_residual: float, applies: int,
                 total_ms: float, ms_per_iteration: float, apply_share: float, breakdown: str, algorithm: str,
                 history: list[float] = ..., variant: str = ..., apply_bytes: int = ...,
                 applies_per_iteration: int = ..., vector_bytes: int = ...) -> None: ...
    @property
    def floor_bytes(self) -> int: ...
    def floor_ms(self, bandwidth_gbs: float) -> float: ...

def cg(A: Matrix | Any, b: Any, x0: Any | None = None, *, tol: float = 1e-8, maxiter: int = 1000,
       M: Literal["jacobi", "none"] | None = None, algorithm: str | None = None, backend: str | None = None,
       callback: Callable[[int, float], Any] | None = None, callback_every: int = 1, history: bool = False,
       check_every: int = 1, fused: bool = True, graph: bool = False,
       pipelined: bool = False) -> tuple[Any, SolveInfo]: ...
def bicgstab(A: Matrix | Any, b: Any, x0: Any | None = None, *, tol: float = 1e-8, maxiter: int = 1000,
             M: Literal["jacobi", "none"] | None = None, algorithm: str | None = None, backend: str | None = None,
             callback: Callable[[int, float], Any] | None = None, callback_every: int = 1, history: bool = False,
             check_every: int = 1, graph: bool = False) -> tuple[Any, SolveInfo]: ...
def gmres(A: Matrix | Any, b: Any, x0: Any | None = None, *, tol: float = 1e-8, restart: int = 30,
          maxiter: int = 1000, M: Literal["jacobi", "none"] | None = None, algorithm: str | None = None,
          backend: str | None = None, callback: Callable[[int, float], Any] | None = None, callback_every: int = 1,
          history: bool = False, check_every: int = 1, basis: str | Any = "working",
          s_step: int = 1) -> tuple[Any, SolveInfo]: ...
