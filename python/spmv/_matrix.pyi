# Type stubs of spmv._matrix (spmv.Matrix, spmv.read_matrix_market); see _matrix.py for the rules.
from os import PathLike
from typing import Any, Literal, Mapping, Optional, Tuple, Union

import numpy as np
import numpy.typing as npt
import scipy.sparse.linalg

from . import _core

Device = Optional[str]  # None (follow the data), "auto", "cpu", "cuda", "cuda:N"
DTypeLike = npt.DTypeLike
# NumPy input (anything numpy.asarray takes) or a CUDA array (CuPy, __cuda_array_interface__).
Vector = Any
# Half storage of a float32 matrix's values: "native", "f16", "bf16" (any case), or None: follow the data.
ValueStorage = Optional[str]

def parse_device(device: Device) -> Tuple[Optional[str], Optional[int]]: ...
def value_dtype(dtype: DTypeLike) -> np.dtype[Any]: ...

class Matrix:
    ndim: int
    def __init__(
        self,
        indptr: npt.ArrayLike,
        indices: npt.ArrayLike,
        data: npt.ArrayLike,
        shape: Tuple[int, int],
        *,
        dtype: DTypeLike = ...,
        index_dtype: DTypeLike = ...,
        device: Device = ...,
        algorithm: str = ...,
        options: Optional[Mapping[str, Any]] = ...,
        values: ValueStorage = ...,
    ) -> None: ...
    @classmethod
    def from_scipy(
        cls,
        a: Any,
        *,
        dtype: DTypeLike = ...,
        index_dtype: DTypeLike = ...,
        device: Device = ...,
        algorithm: str = ...,
        options: Optional[Mapping[str, Any]] = ...,
        values: ValueStorage = ...,
    ) -> Matrix: ...
    @property
    def shape(self) -> Tuple[int, int]: ...
    @property
    def T(self) -> Matrix: ...
    def transpose(self) -> Matrix: ...
    @property
    def format(self) -> Literal["csr", "csc"]: ...
    @property
    def nnz(self) -> int: ...
    @property
    def dtype(self) -> np.dtype[Any]: ...
    @property
    def value_storage(self) -> Literal["native", "f16", "bf16"]: ...
    @property
    def index_dtype(self) -> np.dtype[Any]: ...
    @property
    def device(self) -> Device: ...
    @property
    def algorithm(self) -> str: ...
    @property
    def options(self) -> dict[str, int]: ...
    @property
    def indptr(self) -> npt.NDArray[Any]: ...
    @property
    def indices(self) -> npt.NDArray[Any]: ...
    @property
    def data(self) -> npt.NDArray[Any]: ...
    def to_scipy(self) -> Any: ...
    def astype(self, dtype: DTypeLike) -> Matrix: ...
    def matvec(self, x: Vector, *, device: Device = ..., algorithm: Optional[str] = ...) -> Any: ...
    def rmatvec(self, x: Vector, *, device: Device = ..., algorithm: Optional[str] = ...) -> Any: ...
    def dot(self, x: Vector) -> Any: ...
    def __matmul__(self, x: Vector) -> Any: ...
    def __rmatmul__(self, x: Vector) -> Any: ...
    def apply(
        self,
        x: Vector,
        y: Optional[Vector] = ...,
        alpha: float = ...,
        beta: float = ...,
        *,
        transpose: bool = ...,
        device: Device = ...,
        algorithm: Optional[str] = ...,
        semiring: Optional[str] = ...,
    ) -> Any: ...
    def plan_info(
        self, *, transpose: bool = ..., device: Device = ..., algorithm: Optional[str] = ...
    ) -> dict[str, Any]: ...
    def aslinearoperator(
        self, *, device: Device = ..., algorithm: Optional[str] = ...
    ) -> scipy.sparse.linalg.LinearOperator: ...
    def as_cupy_linearoperator(self, *, algorithm: Optional[str] = ...) -> Any: ...

def as_matrix(a: Any) -> Matrix: ...
def read_matrix_market(
    path: Union[str, PathLike[str]],
    *,
    dtype: Optional[DTypeLike] = ...,
    device: Device = ...,
    algorithm: str = ...,
    options: Optional[Mapping[str, Any]] = ...,
    max_memory: Optional[int] = ...,
    values: ValueStorage = ...,
) -> Matrix: ...
