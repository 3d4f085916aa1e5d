# Type stubs of spmv._tools (spmv.info, spmv.bench, spmv.algorithms, spmv.cuda_available).
from typing import Any, Literal, Optional, Sequence, Union

import numpy.typing as npt

from ._matrix import Device

def cuda_available() -> bool: ...
def algorithms(device: Device = ..., transpose: bool = ...) -> list[str]: ...
def info(a: Any) -> dict[str, Any]: ...
def bench(
    a: Any,
    algorithms: Union[None, str, Sequence[str]] = ...,
    *,
    device: Device = ...,
    dtype: Union[None, Literal["both"], npt.DTypeLike, Sequence[npt.DTypeLike]] = ...,
    transpose: bool = ...,
    alpha: float = ...,
    beta: float = ...,
    repetitions: int = ...,
    warmup: int = ...,
    min_sample_ms: float = ...,
    threads: int = ...,
    block_size: int = ...,
    bandwidth: Union[None, float, Literal["measure"]] = ...,
    as_frame: bool = ...,
    verbose: bool = ...,
) -> Any: ...
