# Type stubs of spmv.generate: one function per generator of the C++ registry (spmv::gen::generators();
# python/tests/test_stubs.py checks these against it), plus generate() by name.
from typing import Any, Mapping, Optional, Union

import numpy.typing as npt

from ._matrix import Device, Matrix

_Number = Union[int, float]

def generate(
    kind: str,
    *,
    dtype: npt.DTypeLike = ...,
    device: Device = ...,
    algorithm: str = ...,
    options: Optional[Mapping[str, int]] = ...,
    **params: _Number,
) -> Matrix: ...
def generators() -> list[dict[str, Any]]: ...
def poisson2d(
    n: _Number = ..., *, dtype: npt.DTypeLike = ..., device: Device = ..., algorithm: str = ...,
    options: Optional[Mapping[str, int]] = ...,
) -> Matrix: ...
def poisson3d(
    n: _Number = ..., *, dtype: npt.DTypeLike = ..., device: Device = ..., algorithm: str = ...,
    options: Optional[Mapping[str, int]] = ...,
) -> Matrix: ...
def stencil27(
    n: _Number = ..., *, dtype: npt.DTypeLike = ..., device: Device = ..., algorithm: str = ...,
    options: Optional[Mapping[str, int]] = ...,
) -> Matrix: ...
def random_uniform(
    *, cols: _Number = ..., per_row: _Number = ..., rows: _Number = ..., seed: _Number = ...,
    dtype: npt.DTypeLike = ..., device: Device = ..., algorithm: str = ..., options: Optional[Mapping[str, int]] = ...,
) -> Matrix: ...
def rmat(
    *, a: _Number = ..., b: _Number = ..., c: _Number = ..., edge_factor: _Number = ..., scale: _Number = ...,
    seed: _Number = ..., dtype: npt.DTypeLike = ..., device: Device = ..., algorithm: str = ...,
    options: Optional[Mapping[str, int]] = ...,
) -> Matrix: ...
def banded(
    *, half_bandwidth: _Number = ..., n: _Number = ..., seed: _Number = ..., dtype: npt.DTypeLike = ...,
    device: Device = ..., algorithm: str = ..., options: Optional[Mapping[str, int]] = ...,
) -> Matrix: ...
def long_rows(
    *, cols: _Number = ..., long_length: _Number = ..., long_rows: _Number = ..., rows: _Number = ...,
    seed: _Number = ..., short_length: _Number = ..., dtype: npt.DTypeLike = ..., device: Device = ...,
    algorithm: str = ..., options: Optional[Mapping[str, int]] = ...,
) -> Matrix: ...
def mostly_empty(
    *, cols: _Number = ..., nonempty_fraction: _Number = ..., per_row: _Number = ..., rows: _Number = ...,
    seed: _Number = ..., dtype: npt.DTypeLike = ..., device: Device = ..., algorithm: str = ...,
    options: Optional[Mapping[str, int]] = ...,
) -> Matrix: ...
def dense_rows(
    *, dense_fraction: _Number = ..., dense_rows: _Number = ..., n: _Number = ..., per_row: _Number = ...,
    seed: _Number = ..., dtype: npt.DTypeLike = ..., device: Device = ..., algorithm: str = ...,
    options: Optional[Mapping[str, int]] = ...,
) -> Matrix: ...
def fem2d(
    *, distortion: _Number = ..., kappa_amplitude: _Number = ..., n: _Number = ..., dtype: npt.DTypeLike = ...,
    device: Device = ..., algorithm: str = ..., options: Optional[Mapping[str, int]] = ...,
) -> Matrix: ...
def fem3d(
    *, distortion: _Number = ..., kappa_amplitude: _Number = ..., n: _Number = ..., dtype: npt.DTypeLike = ...,
    device: Device = ..., algorithm: str = ..., options: Optional[Mapping[str, int]] = ...,
) -> Matrix: ...

__all__: list[str]
