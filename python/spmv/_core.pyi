"""spmv C++ core (use the spmv package)"""

# Type stubs of the extension spmv._core: written by `python -m nanobind.stubgen -m spmv._core` from a
# build, then edited (the exceptions declared here, the CSR views typed). python/tests/test_stubs.py
# checks that they name exactly what the module holds; regenerate after changing the bindings.

from collections.abc import Mapping, Sequence
from typing import Annotated

from numpy.typing import NDArray


class ParseError(ValueError):
    """A malformed Matrix Market file (spmv::ParseError; the message names file and line)."""

class UnsupportedError(RuntimeError):
    """A request the library cannot honour (spmv::Unsupported)."""

class CudaError(RuntimeError):
    """A failing CUDA call (spmv::CudaError)."""


class MatrixCore:
    """
    The C++ half of spmv.Matrix: the host CSR arrays and the cached plans (use spmv.Matrix).
    """

    @property
    def rows(self) -> int: ...

    @property
    def cols(self) -> int: ...

    @property
    def nnz(self) -> int: ...

    @property
    def double_values(self) -> bool: ...

    @property
    def wide_indices(self) -> bool: ...
    @property
    def value_storage(self) -> str: ...

    @property
    def indptr(self) -> NDArray: ...

    @property
    def indices(self) -> NDArray: ...

    @property
    def data(self) -> NDArray: ...

    def with_values(self, double_values: bool) -> MatrixCore: ...

    def apply_host(self, backend: str, ordinal: int, algorithm: str, transpose: bool, alpha: float, x: Annotated[NDArray, dict(shape=(None,), order='C', device='cpu', writable=False)], beta: float, y: Annotated[NDArray, dict(shape=(None,), order='C', device='cpu')]) -> None: ...

    def apply_device(self, ordinal: int, algorithm: str, transpose: bool, alpha: float, x: int, x_size: int, x_stream: int, beta: float, y: int, y_size: int, y_stream: int, stream: int) -> None: ...

    def semiring_host(self, backend: str, ordinal: int, semiring: str, algorithm: str, transpose: bool, x: Annotated[NDArray, dict(shape=(None,), order='C', device='cpu', writable=False)], y: Annotated[NDArray, dict(shape=(None,), order='C', device='cpu')]) -> None: ...
    def semiring_device(self, ordinal: int, semiring: str, algorithm: str, transpose: bool, x: int, x_size: int, x_stream: int, y: int, y_size: int, y_stream: int, stream: int) -> None: ...
    def spmm_host(self, backend: str, ordinal: int, transpose: bool, alpha: float, x: Annotated[NDArray, dict(shape=(None, None), device='cpu', writable=False)], beta: float, y: Annotated[NDArray, dict(shape=(None, None), device='cpu')]) -> None: ...

    def spmm_device(self, ordinal: int, transpose: bool, alpha: float, x: int, x_rows: int, x_cols: int, x_ld: int, x_row_major: bool, x_stream: int, beta: float, y: int, y_rows: int, y_cols: int, y_ld: int, y_row_major: bool, y_stream: int, stream: int) -> None: ...

    def plan_info(self, backend: str, ordinal: int, algorithm: str, transpose: bool) -> dict: ...

    def solve_host(self, backend: str, ordinal: int, algorithm: str, settings: dict, b: Annotated[NDArray, dict(shape=(None,), order='C', device='cpu', writable=False)], x: Annotated[NDArray, dict(shape=(None,), order='C', device='cpu')]) -> dict: ...

    def solve_device(self, ordinal: int, algorithm: str, settings: dict, b: int, b_size: int, b_stream: int, x: int, x_size: int, x_stream: int, stream: int) -> dict: ...

    @property
    def cached_plans(self) -> int: ...

    @property
    def cached_semiring_plans(self) -> int: ...

def matrix_from_arrays(rows: int, cols: int, indptr: Annotated[NDArray, dict(shape=(None,), order='C', device='cpu', writable=False)], indices: Annotated[NDArray, dict(shape=(None,), order='C', device='cpu', writable=False)], data: Annotated[NDArray, dict(shape=(None,), order='C', device='cpu', writable=False)], double_values: bool, index_bits: int, options: dict) -> MatrixCore:
    """
    Copies CSR arrays (int32/int64 indices, float32/float64 values) into a validated MatrixCore.
    """

def parse_algorithm(name: str) -> str:
    """
    The canonical name of an algorithm; ValueError listing the valid names otherwise.
    """

def cuda_built() -> bool:
    """True when the extension was built with the CUDA backend."""

def cuda_available() -> bool:
    """True when spmv was built with CUDA and a CUDA device is usable."""

def algorithm_names(device: str, transpose: bool = False) -> list[str]:
    """
    Names of the algorithms a backend ('cpu' or 'cuda') offers for A*x (or A^T*x), Auto excluded.
    """

def all_algorithm_names() -> list[str]: ...

def generators() -> list[tuple[str, str, dict[str, float]]]: ...

def generate(kind: str, params: Mapping[str, float], double_values: bool, options: dict) -> MatrixCore: ...

def read_matrix_market(path: str, double_values: bool, options: dict) -> tuple[MatrixCore, dict]: ...

def stats(core: MatrixCore) -> dict: ...

def require_cuda_device(ordinal: int) -> None: ...

def current_device() -> int: ...

def pointer_device(address: int) -> int: ...

def allocation_ranges_checked() -> bool:
    """
    True when device vectors are checked against the bounds of their allocation.
    """

def bench(core: MatrixCore, algorithms: Sequence[str], device: str, ordinal: int, precisions: Sequence[str], transpose: bool, alpha: float, beta: float, repetitions: int, warmup: int, min_sample_ms: float, threads: int, block_size: int, bandwidth: float, verbose: bool) -> list: ...
