"""How spmv sees the arrays it is given: host (NumPy) or CUDA device arrays.

Device arrays are recognised by ``__cuda_array_interface__`` (CuPy, Numba, PyTorch, ...) or by DLPack
(``__dlpack_device__`` naming a CUDA device, converted with ``cupy.from_dlpack`` without a copy).
Everything about a device array is checked here -- one dimension, contiguity, dtype, read-only flag --
before its address goes to the extension, which checks again that the address is device memory of
the right device and that the vector fits inside its allocation.
"""

from __future__ import annotations

import numpy as np

# DLPack device types (dlpack.h): CUDA memory and CUDA managed memory.
_DLPACK_CUDA_DEVICES = (2, 13)

_cupy = None
_cupy_checked = False


def cupy_module():
    """The cupy module when it can be imported, else None (imported once, on first need)."""
    global _cupy, _cupy_checked
    if not _cupy_checked:
        _cupy_checked = True
        try:
            import cupy  # noqa: PLC0415 - optional dependency

            _cupy = cupy
        except Exception:  # ImportError, or a CuPy that cannot load its CUDA libraries
            _cupy = None
    return _cupy


def _dlpack_on_cuda(obj) -> bool:
    device = getattr(obj, "__dlpack_device__", None)
    if device is None or isinstance(obj, np.ndarray):
        return False
    try:
        kind, _ = device()
    except Exception:
        return False
    return int(kind) in _DLPACK_CUDA_DEVICES


def is_device_array(obj) -> bool:
    """True for objects that live in CUDA memory (CUDA array interface or a CUDA DLPack producer)."""
    if obj is None or isinstance(obj, np.ndarray):
        return False
    return hasattr(obj, "__cuda_array_interface__") or _dlpack_on_cuda(obj)


def to_host(obj):
    """A NumPy copy of a CUDA array (one device-to-host copy, in the array's own dtype), for the
    matrix's CSR arrays, which spmv.Matrix holds on the host; anything else is returned as given."""
    if not is_device_array(obj):
        return obj
    cupy = cupy_module()
    if cupy is None:
        raise TypeError("CSR arrays in CUDA memory need CuPy (not installed) to be copied to the host")
    return cupy.asnumpy(cupy.asarray(obj))


class DeviceVector:
    """A 1-D, contiguous device array: the object, its address, length, dtype and producer stream."""

    __slots__ = ("obj", "address", "size", "dtype", "readonly", "stream", "device")

    def __init__(self, obj, address, size, dtype, readonly, stream, device):
        self.obj = obj
        self.address = int(address)
        self.size = int(size)
        self.dtype = dtype
        self.readonly = bool(readonly)
        self.stream = int(stream)  # 0: no ordering needed (same stream or none given)
        self.device = device  # CUDA ordinal when the producer says, else None


def as_device_vector(obj, name: str) -> DeviceVector:
    """Describes a device array, refusing (ValueError) what the products cannot take without a copy."""
    cupy = cupy_module()
    if not hasattr(obj, "__cuda_array_interface__"):
        if cupy is None:
            raise TypeError(
                f"{name} is a CUDA DLPack array; reading it needs CuPy (cupy.from_dlpack), which is not installed"
            )
        obj = cupy.from_dlpack(obj)

    if cupy is not None and isinstance(obj, cupy.ndarray):
        # CuPy arrays directly: the interface dict costs more than the product on small vectors. They
        # are used on CuPy's current stream, which is the stream the product is enqueued on.
        if obj.ndim != 1:
            raise ValueError(f"{name} must be 1-D, got shape {obj.shape}")
        if not obj.flags.c_contiguous:
            raise ValueError(
                f"{name} is a non-contiguous CuPy array; pass cupy.ascontiguousarray({name}) "
                "(spmv makes no hidden device copies)"
            )
        return DeviceVector(obj, obj.data.ptr, obj.size, obj.dtype, False, 0, obj.device.id)

    cai = obj.__cuda_array_interface__
    shape = tuple(cai["shape"])
    if len(shape) != 1:
        raise ValueError(f"{name} must be 1-D, got shape {shape}")
    dtype = np.dtype(cai["typestr"])
    if not dtype.isnative:
        raise ValueError(f"{name} has non-native byte order ({cai['typestr']})")
    strides = cai.get("strides")
    if strides is not None and shape[0] > 1 and tuple(strides) != (dtype.itemsize,):
        raise ValueError(
            f"{name} is not contiguous (strides {tuple(strides)}); pass a contiguous copy "
            "(spmv makes no hidden device copies)"
        )
    if cai.get("mask") is not None:
        raise ValueError(f"{name} has a mask; masked device arrays are not supported")
    address, readonly = cai["data"]
    stream = cai.get("stream") or 0  # version 3: the producer's stream; 0 is not a valid value
    return DeviceVector(obj, address or 0, shape[0], dtype, readonly, stream, None)
