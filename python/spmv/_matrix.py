"""spmv.Matrix: a CSR matrix with cached plans, usable from NumPy, SciPy and CuPy."""

from __future__ import annotations

import errno
import operator
import os
import re

import numpy as np

from . import _core
from ._arrays import as_device_vector, cupy_module, is_device_array, to_host

_VALUE_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
_INDEX_DTYPES = (np.dtype(np.int32), np.dtype(np.int64))
_DEVICE_PATTERN = re.compile(r"^cuda(?::(\d+))?$")
# Half storage of a float32 matrix's values (Options::values, include/spmv/value_storage.hpp).
_VALUE_STORAGES = ("native", "f16", "bf16")
_HALF_STORAGES = ("f16", "bf16")


def parse_device(device):
    """(kind, ordinal) from a device choice: None/'auto' -> (None, None), 'cpu', 'cuda', 'cuda:N'."""
    if device is None or device == "auto":
        return None, None
    if device == "cpu":
        return "cpu", None
    if isinstance(device, str):
        match = _DEVICE_PATTERN.match(device)
        if match:
            return "cuda", None if match.group(1) is None else int(match.group(1))
    raise ValueError(f"unknown device {device!r}; expected 'cpu', 'cuda', 'cuda:N' or None (follow the data)")


def value_dtype(dtype):
    """np.float32 or np.float64 from a dtype-like; TypeError otherwise."""
    try:
        dt = np.dtype(dtype)
    except TypeError as e:
        raise TypeError(f"dtype {dtype!r} is not a NumPy dtype: {e}") from None
    if dt.newbyteorder("=") not in _VALUE_DTYPES:
        raise TypeError(f"dtype {dt} is not supported; use float32 or float64")
    return dt.newbyteorder("=")


def _is_bfloat16(dtype):
    # ml_dtypes.bfloat16 (NumPy kind 'V'), recognised by name so that ml_dtypes stays optional.
    return dtype.name == "bfloat16" and dtype.itemsize == 2


def _real_dtype(dtype):
    """True for the element types spmv converts from: bool, integers, floats, ml_dtypes.bfloat16."""
    return dtype.kind in "fiub" or _is_bfloat16(dtype)


def _wide_float(dtype):
    return dtype.kind == "f" and dtype.itemsize >= 8


def _storage_name(values):
    if values is None:
        return None
    if not isinstance(values, str):
        raise TypeError(f"values must be 'native', 'f16', 'bf16' or None (follow the data), got {values!r}")
    name = values.lower()
    if name not in _VALUE_STORAGES:
        raise ValueError(f"unknown values {values!r}; expected 'native', 'f16', 'bf16' or None (follow the data)")
    return name


def _data_dtype(data_dtype, requested, values=None):
    """(the matrix's dtype, its value storage) from the data's dtype, dtype= and values=.

    values=None follows the data: float16 data is stored as 'f16', bfloat16 data as 'bf16', both in a
    float32 matrix (unless dtype=float64 asks for float64 products: then they are widened exactly and
    stored natively). Half storage of float64 data is refused rather than rounded twice unasked.
    """
    if data_dtype.kind == "c":
        raise TypeError("complex values are not supported (spmv computes in float32 or float64)")
    if not _real_dtype(data_dtype):
        raise TypeError(f"data has dtype {data_dtype}, expected real numbers")
    storage = _storage_name(values)
    if storage is None:
        wants_double = requested is not None and value_dtype(requested) == np.float64
        half = "f16" if data_dtype.newbyteorder("=") == np.float16 else "bf16" if _is_bfloat16(data_dtype) else None
        storage = "native" if wants_double or half is None else half
    if requested is not None:
        target = value_dtype(requested)
    elif data_dtype.newbyteorder("=") == np.float32 or storage in _HALF_STORAGES and not _wide_float(data_dtype):
        target = np.dtype(np.float32)  # float32 data, or half storage of narrower floats or integers
    else:
        target = np.dtype(np.float64)
    _check_half_float32(storage, target, "dtype=float64 was asked" if requested is not None else
                        f"the data is {data_dtype}")
    return target, storage


def _check_half_float32(storage, target, what):
    if storage in _HALF_STORAGES and target == np.float64:
        raise ValueError(f"values={storage!r} stores a float32 matrix's values in half precision, but {what}; "
                         "pass dtype=np.float32 to round the values to float32 first")


def _requested_storage(values, options):
    """values= or options['values'] (the C++ field's name), which must agree when both are given."""
    given = (options or {}).get("values")
    if given is None:
        return values
    if values is not None and _storage_name(values) != _storage_name(given):
        raise ValueError(f"values={values!r} and options['values']={given!r} disagree")
    return given


def _core_options(options, storage):
    """The options dict the core is built with: the user's, with 'values' set to the storage."""
    options = dict(options or {})
    options.pop("values", None)
    if storage != "native":
        options["values"] = storage
    return options


def _is_cupy_sparse(a):
    cupy = cupy_module() if type(a).__module__.startswith("cupyx") else None
    if cupy is None:
        return False
    import cupyx.scipy.sparse as csp

    return csp.issparse(a)


def _index_array(a, name):
    a = np.asarray(a)
    if a.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {a.shape}")
    if a.size == 0 and a.dtype.kind not in "iu":
        return np.zeros(0, np.int32)  # np.asarray([]) is float64
    if a.dtype.kind not in "iu":
        raise TypeError(f"{name} has dtype {a.dtype}, expected integers")
    if a.dtype.newbyteorder("=") not in _INDEX_DTYPES:
        if a.dtype.kind == "u" and a.dtype.itemsize == 8 and a.size and a.max() > np.iinfo(np.int64).max:
            raise ValueError(f"{name} holds values beyond int64")
        a = a.astype(np.int64)
    # int32 / int64 go to the extension as they are; it narrows while copying when the sizes fit.
    return np.ascontiguousarray(a, dtype=a.dtype.newbyteorder("="))


def _index_bits(index_dtype):
    if index_dtype is None:
        return 0
    dt = np.dtype(index_dtype)
    if dt not in _INDEX_DTYPES:
        raise TypeError(f"index_dtype must be int32, int64 or None (automatic), got {dt}")
    return 8 * dt.itemsize


def _scalar(value, name):
    if isinstance(value, (complex, np.complexfloating)):
        raise TypeError(f"{name} must be real, got {value!r}")
    try:
        return float(value)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a real number, got {value!r}") from None


class Matrix:
    """A sparse matrix in CSR form for y = alpha*op(A)*x + beta*y on the CPU or a CUDA GPU.

    The matrix holds one copy of its CSR arrays (float32 or float64 values, following the data;
    int32 indices, or int64 when the sizes need them). Plans -- the preprocessing an algorithm needs --
    are built on first use and cached per (device, algorithm, operation), so repeated products do no
    preprocessing. On a GPU the matrix is uploaded once per device, on first use.

    ``index_dtype``: None picks int32 when rows, cols and nnz fit it, else int64; int32 or int64 forces.
    ``device``: None (default) follows the data -- CUDA arrays run on the GPU holding them, anything
    else on the CPU; ``'cpu'``; ``'cuda'`` (CUDA arrays: their GPU; NumPy arrays: the current GPU);
    ``'cuda:N'``. ``algorithm``: ``'auto'``, ``'tune'`` (run-time tuning: docs/algorithms/tuning.md) or a name from :func:`spmv.algorithms`. Both can be
    overridden per call. ``options``: tuning knobs of the C++ ``spmv::Options`` by field name
    (``threads``, ``block_size``, ``sell_c``, ...); they never change results beyond rounding.
    ``options={'reorder': 'rcm'}`` (or ``'degree'``) renumbers a square matrix once for the locality of
    the x gathers and permutes x and y in every product (docs/ALGORITHMS.md "Reordering").
    ``options={'deterministic': True}`` makes every product bitwise reproducible run to run: algorithms
    whose summation order depends on timing refuse, and 'auto' picks a reproducible one.

    ``values``: how the products store A's values (issue 11). None (default) follows the data:
    float16 data gives ``'f16'``, ``ml_dtypes.bfloat16`` data ``'bf16'``, anything else ``'native'``
    (scipy.sparse and cupyx.scipy.sparse hold no float16: pass the CSR arrays, or ``values=``). ``'f16'`` / ``'bf16'`` keep a float32 matrix's values in IEEE half precision /
    bfloat16, rounded once to nearest even (beyond fp16's range: +-inf), with float32 x, y, alpha, beta
    and sums: ``A.dtype`` is float32 and products take and return float32 (float16 or bfloat16 x is
    cast, exactly). The products are those of the rounded matrix: ``A.data`` holds the rounded values
    (in float32), and every path uses them. SpMV plans on the CPU and GPU (and the solvers on them)
    store them in half precision; SpMM (2-D operands) and semirings, which have no half-storage
    kernel, read the same rounded values in float32 -- the same matrix, without the halved value
    bytes. An algorithm that does not offer half storage raises spmv.UnsupportedError; 'auto' picks
    one that does. float64 data with half storage is a ValueError (pass ``dtype=np.float32`` to round
    to float32 first); ``dtype=np.float64`` with float16 data widens it exactly, natively stored.
    ``A.value_storage`` says which: 'native', 'f16' or 'bf16'. On a GPU the matrix is uploaded in
    float32 (4 bytes a value) and each plan keeps its half copy (2 bytes a value) beside it.

    CSR arrays given as CUDA arrays (CuPy, float16 data included) are copied to the host once, in
    their own dtype: the matrix holds its CSR on the host and uploads it once per GPU, on first use.

    ``A.T`` (or ``A.transpose()``) is A^T as a view, like scipy's: it shares A's arrays and plan cache,
    its products run A's transposed products (``A.T @ x`` is ``A.rmatvec(x)``), its shape is swapped,
    and ``A.T.T is A``.

    Input rules: x given as NumPy (or anything ``numpy.asarray`` takes) is converted to the matrix's
    dtype and made contiguous, with a copy only when needed. x or y given as CUDA arrays must already
    have the matrix's dtype (TypeError otherwise) and be contiguous (ValueError otherwise): spmv makes
    no hidden device copies. A y given for an in-place product is never converted: it must be a
    writable, contiguous array of the matrix's dtype.
    """

    __array_ufunc__ = None  # so that `x @ A` with a NumPy x reaches __rmatmul__
    ndim = 2

    def __init__(self, indptr, indices, data, shape, *, dtype=None, index_dtype=None, device=None, algorithm="auto",
                 options=None, values=None):
        try:
            rows, cols = (operator.index(s) for s in shape)
        except (TypeError, ValueError):
            raise TypeError(f"shape must be a pair of integers, got {shape!r}") from None
        indptr, indices, data = to_host(indptr), to_host(indices), np.asarray(to_host(data))
        if data.ndim != 1:
            raise ValueError(f"data must be 1-D, got shape {data.shape}")
        target, storage = _data_dtype(data.dtype, dtype, _requested_storage(values, options))
        if data.dtype.newbyteorder("=") not in _VALUE_DTYPES or not data.dtype.isnative:
            data = data.astype(target)  # float16 and bfloat16 widen exactly; the core rounds to the storage
        data = np.ascontiguousarray(data)
        core = _core.matrix_from_arrays(
            rows, cols, _index_array(indptr, "indptr"), _index_array(indices, "indices"), data,
            target == np.float64, _index_bits(index_dtype), _core_options(options, storage),
        )
        self._init(core, device, algorithm, options)

    def _init(self, core, device, algorithm, options, header=None, source=None):
        kind, ordinal = parse_device(device)
        if kind == "cuda":
            _core.require_cuda_device(ordinal if ordinal is not None else _core.current_device())
        self._core = core
        self._device = device
        self._algorithm = _core.parse_algorithm(algorithm)
        self._options = dict(options or {})
        self._header = header
        self._source = source
        self._transposed = False  # A.T: a view of `_base` whose products run with op = A^T
        self._base = None

    @classmethod
    def _wrap(cls, core, device=None, algorithm="auto", options=None, header=None, source=None):
        self = cls.__new__(cls)
        self._init(core, device, algorithm, options, header, source)
        return self

    @classmethod
    def from_scipy(cls, a, *, dtype=None, index_dtype=None, device=None, algorithm="auto", options=None,
                   values=None):
        """From any scipy.sparse matrix or array (converted with ``.tocsr()``, free for CSR input), or a
        cupyx.scipy.sparse matrix, whose arrays are copied to the host once (the Matrix holds its CSR
        on the host and uploads it once per GPU, on first use). ``values='f16'`` / ``'bf16'`` asks
        for half storage of a float32 matrix (see :class:`Matrix`)."""
        import scipy.sparse as sp

        if not sp.issparse(a):
            if not _is_cupy_sparse(a):
                raise TypeError(f"expected a scipy.sparse matrix or array, got {type(a).__name__}")
            a = a.get()  # one device-to-host copy of the arrays, in their own dtypes
        csr = a.tocsr()
        return cls(csr.indptr, csr.indices, csr.data, csr.shape, dtype=dtype, index_dtype=index_dtype, device=device,
                   algorithm=algorithm, options=options, values=values)

    # ---- properties ------------------------------------------------------------------------------

    @property
    def shape(self):
        rows, cols = self._core.rows, self._core.cols
        return (cols, rows) if self._transposed else (rows, cols)

    @property
    def T(self):
        """A^T as a view (no copy): the same arrays and plan cache, products through A^T. A.T.T is A."""
        if self._transposed:
            return self._base
        view = Matrix.__new__(Matrix)
        view.__dict__.update(self.__dict__)
        view._transposed = True
        view._base = self
        return view

    def transpose(self):
        """The same as ``A.T`` (scipy's spelling)."""
        return self.T

    @property
    def format(self):
        """'csr', or 'csc' for a transposed view (its arrays are A's CSR arrays, A^T's CSC ones)."""
        return "csc" if self._transposed else "csr"

    @property
    def nnz(self):
        return self._core.nnz

    @property
    def dtype(self):
        return np.dtype(np.float64 if self._core.double_values else np.float32)

    @property
    def value_storage(self):
        """How the products store A's values: 'native' (the dtype's), or 'f16' / 'bf16' (half
        precision) for a float32 matrix -- x, y and the sums stay float32 (``dtype``)."""
        return self._core.value_storage

    @property
    def index_dtype(self):
        return np.dtype(np.int64 if self._core.wide_indices else np.int32)

    @property
    def device(self):
        return self._device

    @property
    def algorithm(self):
        return self._algorithm

    @property
    def options(self):
        return dict(self._options)

    @property
    def indptr(self):
        """Read-only view of the row pointers (no copy; keeps the matrix alive). On ``A.T`` these are
        A's arrays, i.e. the column pointers of A^T (``format == 'csc'``), as with scipy's ``csr.T``."""
        return self._core.indptr

    @property
    def indices(self):
        return self._core.indices

    @property
    def data(self):
        return self._core.data

    def __repr__(self):
        rows, cols = self.shape
        view = ", transposed view" if self._transposed else ""
        storage = "" if self.value_storage == "native" else f" ({self.value_storage} storage)"
        return (f"<spmv.Matrix {rows}x{cols}{view}, {self.nnz} nonzeros, {self.dtype} values{storage}, {self.index_dtype} "
                f"indices, device={self._device!r}, algorithm={self._algorithm!r}>")

    # ---- conversions -----------------------------------------------------------------------------

    def to_scipy(self):
        """A scipy.sparse.csr_array holding copies of the arrays (a csc_array for a transposed view)."""
        import scipy.sparse as sp

        if self._transposed:
            return self._base.to_scipy().T
        return sp.csr_array((self.data.copy(), self.indices.copy(), self.indptr.copy()), shape=self.shape)

    def astype(self, dtype):
        """The same matrix with float32 or float64 values (a new Matrix; plans are not shared).
        A half-storage matrix keeps its storage as float32; as float64 its (rounded) values are
        widened exactly and stored natively."""
        if self._transposed:
            return self._base.astype(dtype).T
        dt = value_dtype(dtype)
        core = self._core.with_values(dt == np.float64)
        return Matrix._wrap(core, self._device, self._algorithm, self._options, self._header, self._source)

    # ---- products --------------------------------------------------------------------------------

    def matvec(self, x, *, device=None, algorithm=None):
        """y = A @ x (a new array: NumPy for host input, CuPy for device input)."""
        return self.apply(x, None, device=device, algorithm=algorithm)

    def rmatvec(self, x, *, device=None, algorithm=None):
        """y = A.T @ x."""
        return self.apply(x, None, transpose=True, device=device, algorithm=algorithm)

    def dot(self, x):
        """A @ x (scipy's spelling): a vector or a 2-D array of columns, NumPy or CUDA."""
        return self @ x

    def __matmul__(self, x):
        # The common case first: a contiguous NumPy vector of the matrix's dtype, on the CPU. The general
        # path's checks and conversions cost ~2 us a call, a tenth of a 10^4-row product.
        if (type(x) is np.ndarray and x.ndim == 1 and x.dtype == self.dtype and x.flags.c_contiguous
                and x.shape[0] == self.shape[1] and self._device in (None, "auto", "cpu")):
            y = np.empty(self.shape[0], dtype=self.dtype)
            self._core.apply_host("cpu", 0, self._algorithm, self._transposed, 1.0, x, 0.0, y)
            return y
        if isinstance(x, Matrix):
            return NotImplemented
        return self._product(x, transpose=False)

    def __rmatmul__(self, x):
        # x @ A = (A^T x^T)^T: rows of x (or the vector x) times A.
        if isinstance(x, Matrix):
            return NotImplemented
        ndim = _ndim(x)
        if ndim == 2:
            return self._product(x.T, transpose=True).T
        return self._product(x, transpose=True)

    def _product(self, x, transpose):
        import scipy.sparse as sp

        if sp.issparse(x):
            raise TypeError("spmv multiplies by dense vectors; for a sparse operand use A.to_scipy()")
        if _ndim(x) == 2:
            return self._columns(x, transpose)
        return self.apply(x, None, transpose=transpose)

    def _columns(self, x, transpose, device=None):
        # One SpMM, Y = op(A) X (spmv.Matrix documents it): X is read in place when one of its dimensions
        # is contiguous (C or Fortran order, or a slice of one), Y gets X's order. Host X of another dtype
        # is converted (a copy); device X must already have the matrix's dtype (no hidden device copies).
        dev = is_device_array(x)
        n_in = self.shape[0] if transpose else self.shape[1]
        n_out = self.shape[1] if transpose else self.shape[0]
        op = self._op(transpose)
        if dev:
            return self._columns_device(x, n_in, n_out, op, transpose, device)
        a = np.asarray(x)
        if a.dtype.kind == "c":
            raise TypeError("X is complex; spmv computes in float32 or float64")
        if not _real_dtype(a.dtype):
            raise TypeError(f"X has dtype {a.dtype}, expected real numbers")
        if a.shape[0] != n_in:
            raise ValueError(f"operand has {a.shape[0]} rows, {self._what(transpose)} needs {n_in}")
        if a.shape[1] == 0 or n_out == 0:
            return np.zeros((n_out, a.shape[1]), dtype=self.dtype)
        if a.dtype != self.dtype or _dense_layout(a.shape, a.strides, a.itemsize) is None:
            a = np.asfortranarray(a, dtype=self.dtype) if a.flags.f_contiguous and not a.flags.c_contiguous \
                else np.ascontiguousarray(a, dtype=self.dtype)
        order = "F" if _dense_layout(a.shape, a.strides, a.itemsize)[0] == "F" else "C"
        out = np.empty((n_out, a.shape[1]), dtype=self.dtype, order=order)
        kind, ordinal = parse_device(self._device if device is None else device)
        if kind == "cuda":
            backend, ordinal = "cuda", ordinal if ordinal is not None else _core.current_device()
        else:
            backend, ordinal = "cpu", 0
        self._core.spmm_host(backend, ordinal, op, 1.0, a, 0.0, out)
        return out

    def _columns_device(self, x, n_in, n_out, op, transpose, device):
        cupy = cupy_module()
        if cupy is None:
            raise TypeError("a 2-D device array needs CuPy (not installed)")
        kind, ordinal = parse_device(self._device if device is None else device)
        if kind == "cpu":
            raise ValueError("X is a CUDA array but device='cpu'; use device='cuda' (or None), "
                             "or copy it to the host explicitly (cupy.asnumpy)")
        if not isinstance(x, cupy.ndarray):
            x = cupy.asarray(x)  # a view of the producer's memory (__cuda_array_interface__ / DLPack), no copy
        if x.dtype != self.dtype:
            raise TypeError(f"operand has dtype {x.dtype}, the matrix {self.dtype}; convert it explicitly "
                            "(spmv makes no hidden device copies)")
        if x.shape[0] != n_in:
            raise ValueError(f"operand has {x.shape[0]} rows, {self._what(transpose)} needs {n_in}")
        if x.shape[1] == 0 or n_out == 0:
            with cupy.cuda.Device(x.device.id):
                return cupy.zeros((n_out, x.shape[1]), dtype=self.dtype)
        layout = _dense_layout(x.shape, x.strides, x.itemsize)
        if layout is None:
            raise ValueError("X has no contiguous dimension; pass cupy.ascontiguousarray(X) "
                             "(spmv makes no hidden device copies)")
        if not _core.cuda_available():
            _core.require_cuda_device(x.device.id)
        ordinal = x.device.id if ordinal is None else ordinal
        _core.require_cuda_device(ordinal)
        with cupy.cuda.Device(ordinal):
            out = cupy.empty((n_out, x.shape[1]), dtype=self.dtype, order=layout[0])
            stream = cupy.cuda.get_current_stream().ptr
        out_layout = _dense_layout(out.shape, out.strides, out.itemsize)
        self._core.spmm_device(ordinal, op, 1.0, x.data.ptr, x.shape[0], x.shape[1], layout[1], layout[0] == "C", 0,
                               0.0, out.data.ptr, out.shape[0], out.shape[1], out_layout[1], out_layout[0] == "C", 0,
                               stream)
        return out

    def apply(self, x, y=None, alpha=1.0, beta=0.0, *, transpose=False, device=None, algorithm=None,
              semiring=None):
        """y = alpha * op(A) @ x + beta * y, in place on y; op(A) = A.T when ``transpose``. Returns y.

        Without y a new array is returned (then beta must be 0). When beta == 0, y is not read: it may
        hold anything, NaN included. Host arrays with device='cuda' are copied to the GPU and back
        once per call; CUDA arrays are used in place on the current CuPy stream (no host round trip).

        ``semiring`` ('plus-times', 'min-plus', 'max-times', 'or-and', 'max-min'; docs/SEMIRINGS.md):
        y = op(A) (+).(x) x over that semiring, without alpha and beta (an empty row gives the
        semiring's zero: +inf for min-plus, -inf for max-times and max-min); on the CPU, or on the GPU
        for device='cuda' or CUDA arrays, like the ordinary product. With a semiring, ``algorithm``
        names its kernel ('auto' when None; the matrix's default algorithm is for the ordinary product):
        on the CPU 'row-loop', 'merge-parallel', 'column-chunked', or a format: 'sell' (SELL-C-sigma), 'ell',
        'ellr', 'hyb', 'coo' or 'dia' (padding never enters a row; DIA refuses duplicate entries), on the GPU
        'csr-vector', 'merge-path', the SpMV's CSR kernels 'csr-scalar', 'csr-coop', 'csr-adaptive', 'lightspmv',
        'pcsr', 'hola', 'segmented-sum', 'column-chunked' and 'ellr-vector', or the same formats. A plan is kept
        per semiring, algorithm and direction on each device, so a format is converted by the first call only (on the CPU with the matrix's options: threads, max_padding,
        sell_c, ...).
        """
        alpha = _scalar(alpha, "alpha")
        beta = _scalar(beta, "beta")
        if semiring is not None and semiring != "plus-times":
            return self._apply_semiring(x, y, alpha, beta, bool(transpose), device, semiring, algorithm)
        if y is None and beta != 0.0:
            raise ValueError("beta != 0 reads y: pass y")
        algorithm = self._algorithm if algorithm is None else algorithm
        if not isinstance(algorithm, str):
            raise TypeError(f"algorithm must be a name (str), got {algorithm!r}")
        transpose = bool(transpose)
        on_device, backend, ordinal = self._placement(x, y, device)
        if on_device:
            return self._apply_device(x, y, alpha, beta, transpose, ordinal, algorithm)
        xh, yh = self._host_xy(x, y, transpose)
        self._core.apply_host(backend, ordinal, algorithm, self._op(transpose), alpha, xh, beta, yh)
        return yh

    def _placement(self, x, y, device):
        # Where a product of x into y runs: (True, "cuda", ordinal or None to follow the data) for CUDA
        # arrays, (False, backend, ordinal) for NumPy arrays.
        kind, ordinal = parse_device(self._device if device is None else device)
        x_device = is_device_array(x)
        if y is not None and is_device_array(y) != x_device:
            raise ValueError("x and y must both be host (NumPy) arrays or both CUDA arrays")
        if x_device:
            if kind == "cpu":
                raise ValueError("x is a CUDA array but device='cpu'; use device='cuda' (or None), "
                                 "or copy it to the host explicitly (cupy.asnumpy)")
            return True, "cuda", ordinal
        if kind == "cuda":
            return False, "cuda", ordinal if ordinal is not None else _core.current_device()
        return False, "cpu", 0

    def _apply_semiring(self, x, y, alpha, beta, transpose, device, semiring, algorithm):
        if not isinstance(semiring, str):
            raise TypeError(f"semiring must be a name (str), got {semiring!r}")
        algorithm = "auto" if algorithm is None else algorithm
        if not isinstance(algorithm, str):
            raise TypeError(f"algorithm must be a name (str), got {algorithm!r}")
        if alpha != 1.0 or beta != 0.0:
            raise ValueError(f"semiring {semiring!r}: y = op(A) (+).(x) x has no alpha or beta (plus-times only)")
        on_device, backend, ordinal = self._placement(x, y, device)
        if on_device:
            xv, yv, out, ordinal, stream = self._device_xy(x, y, transpose, ordinal)
            self._core.semiring_device(ordinal, semiring, algorithm, self._op(transpose), xv.address, xv.size,
                                       xv.stream, yv.address, yv.size, yv.stream, stream)
            return out
        xh, yh = self._host_xy(x, y, transpose)
        self._core.semiring_host(backend, ordinal, semiring, algorithm, self._op(transpose), xh, yh)
        return yh

    def _op(self, transpose):
        # The operation the core runs: a product through the view A.T is the transposed product of A.
        return transpose != self._transposed

    def _sizes(self, transpose):
        rows, cols = self.shape
        return (rows, cols) if transpose else (cols, rows)

    def _what(self, transpose):
        return f"{'A^T' if transpose else 'A'} (A is {self.shape[0]} x {self.shape[1]})"

    def _host_xy(self, x, y, transpose):
        # x checked (and converted when allowed) and y checked, or a new y when none is given.
        n_x, n_y = self._sizes(transpose)
        xh = self._host_x(x, n_x)
        if y is None:
            return xh, np.empty(n_y, dtype=self.dtype)
        self._check_host_y(y, n_y)
        return xh, y

    def _host_x(self, x, n):
        a = np.asarray(x)
        if a.dtype.kind == "c":
            raise TypeError("x is complex; spmv computes in float32 or float64")
        if not _real_dtype(a.dtype):
            raise TypeError(f"x has dtype {a.dtype}, expected real numbers")
        if a.ndim != 1:
            raise ValueError(f"x must be 1-D, got shape {a.shape}")
        if a.shape[0] != n:
            raise ValueError(f"x has {a.shape[0]} entries, the product needs {n}")
        # The documented conversion: to the matrix's dtype, contiguous; a copy only when needed.
        return np.ascontiguousarray(a, dtype=self.dtype)

    def _check_host_y(self, y, n):
        if not isinstance(y, np.ndarray):
            raise TypeError(f"y must be a NumPy array (it is written in place), got {type(y).__name__}")
        if y.dtype != self.dtype:
            raise TypeError(f"y has dtype {y.dtype}, the matrix {self.dtype}; y is written in place and never converted")
        if y.ndim != 1:
            raise ValueError(f"y must be 1-D, got shape {y.shape}")
        if y.shape[0] != n:
            raise ValueError(f"y has {y.shape[0]} entries, the product gives {n}")
        if not y.flags.c_contiguous:
            raise ValueError("y is not contiguous; it is written in place, so pass a contiguous array")
        if not y.flags.writeable:
            raise ValueError("y is read-only")

    def _apply_device(self, x, y, alpha, beta, transpose, ordinal, algorithm):
        xv, yv, out, ordinal, stream = self._device_xy(x, y, transpose, ordinal)
        self._core.apply_device(ordinal, algorithm, self._op(transpose), alpha, xv.address, xv.size, xv.stream, beta,
                                yv.address, yv.size, yv.stream, stream)
        return out

    def _device_xy(self, x, y, transpose, ordinal):
        # Device x and y checked (y made with CuPy when none is given), the device, and the stream the
        # product runs on: (x, y, the array returned, ordinal, stream).
        n_x, n_y = self._sizes(transpose)
        xv = as_device_vector(x, "x")
        if xv.dtype != self.dtype:
            raise TypeError(f"x has dtype {xv.dtype}, the matrix {self.dtype}; convert it explicitly "
                            "(x.astype(...)): spmv makes no hidden device copies")
        if xv.size != n_x:
            raise ValueError(f"x has {xv.size} entries, {self._what(transpose)} needs {n_x}")
        yv = None
        if y is not None:
            yv = as_device_vector(y, "y")
            if yv.dtype != self.dtype:
                raise TypeError(f"y has dtype {yv.dtype}, the matrix {self.dtype}; y is written in place and "
                                "never converted")
            if yv.size != n_y:
                raise ValueError(f"y has {yv.size} entries, {self._what(transpose)} gives {n_y}")
            if yv.readonly:
                raise ValueError("y is read-only")

        if not _core.cuda_available():
            _core.require_cuda_device(0 if ordinal is None else ordinal)  # raises "no CUDA device ..."
        if ordinal is None:  # follow the data
            ordinal = _vector_device(xv)
            if ordinal is None and yv is not None:
                ordinal = _vector_device(yv)
            if ordinal is None:
                ordinal = _core.current_device()
        _core.require_cuda_device(ordinal)

        cupy = cupy_module()
        if yv is None:
            if cupy is None:
                raise _core.UnsupportedError("returning a device result needs CuPy (not installed); "
                                             "pass y to apply() to write into your own array")
            with cupy.cuda.Device(ordinal):
                out = cupy.empty(n_y, dtype=self.dtype)
                stream = cupy.cuda.get_current_stream().ptr
            yv = as_device_vector(out, "y")
        else:
            out = y
            if cupy is not None:
                with cupy.cuda.Device(ordinal):
                    stream = cupy.cuda.get_current_stream().ptr
            else:
                stream = xv.stream  # no CuPy: run on the producer's stream (0: the legacy default stream)
        return xv, yv, out, ordinal, stream

    def plan_info(self, *, transpose=False, device=None, algorithm=None):
        """Builds the plan (if not cached yet) and returns what it resolved to: algorithm, policy,
        setup_ms, extra_bytes. device None means the CPU here."""
        kind, ordinal = parse_device(self._device if device is None else device)
        algorithm = self._algorithm if algorithm is None else algorithm
        op = self._op(bool(transpose))
        if kind == "cuda":
            return self._core.plan_info("cuda", ordinal if ordinal is not None else _core.current_device(),
                                        algorithm, op)
        return self._core.plan_info("cpu", 0, algorithm, op)

    # ---- solvers ---------------------------------------------------------------------------------

    def aslinearoperator(self, *, device=None, algorithm=None):
        """A scipy.sparse.linalg.LinearOperator (matvec, rmatvec, matmat, rmatmat) on NumPy vectors."""
        from scipy.sparse.linalg import LinearOperator

        def matvec(x):
            return self.apply(np.asarray(x).reshape(-1), device=device, algorithm=algorithm)

        def rmatvec(x):
            return self.apply(np.asarray(x).reshape(-1), transpose=True, device=device, algorithm=algorithm)

        def matmat(x):  # one SpMM, not a product per column
            return self._columns(np.asarray(x), False, device)

        def rmatmat(x):
            return self._columns(np.asarray(x), True, device)

        return LinearOperator(self.shape, matvec=matvec, rmatvec=rmatvec, matmat=matmat, rmatmat=rmatmat,
                              dtype=self.dtype)

    def as_cupy_linearoperator(self, *, algorithm=None):
        """A cupyx.scipy.sparse.linalg.LinearOperator on CuPy vectors (products on their GPU)."""
        cupy = cupy_module()
        if cupy is None:
            raise ImportError("as_cupy_linearoperator needs CuPy")
        from cupyx.scipy.sparse.linalg import LinearOperator

        def matvec(x):
            return self.apply(cupy.ascontiguousarray(x.reshape(-1)), device="cuda", algorithm=algorithm)

        def rmatvec(x):
            return self.apply(cupy.ascontiguousarray(x.reshape(-1)), transpose=True, device="cuda",
                              algorithm=algorithm)

        def matmat(x):  # one SpMM on the device
            return self._columns(x, False, "cuda")

        def rmatmat(x):
            return self._columns(x, True, "cuda")

        return LinearOperator(self.shape, matvec=matvec, rmatvec=rmatvec, matmat=matmat, rmatmat=rmatmat,
                              dtype=self.dtype)


def _dense_layout(shape, strides, itemsize):
    """("C", ld) when the rows of a 2-D array are contiguous, ("F", ld) when its columns are (ld in
    elements), None when neither is (negative or doubly strided): what SpMM can read in place."""
    rows, cols = shape
    if rows == 0 or cols == 0:  # NumPy and CuPy give empty arrays zero strides
        return ("C", max(cols, 1))
    s0, s1 = strides
    if s0 % itemsize or s1 % itemsize:
        return None
    s0 //= itemsize
    s1 //= itemsize
    if (cols <= 1 or s1 == 1) and (rows <= 1 or s0 >= max(cols, 1)):
        return ("C", max(cols, 1) if rows <= 1 else s0)
    if (rows <= 1 or s0 == 1) and (cols <= 1 or s1 >= max(rows, 1)):
        return ("F", max(rows, 1) if cols <= 1 else s1)
    return None


def _ndim(x):
    nd = getattr(x, "ndim", None)
    if nd is not None:
        return nd
    if hasattr(x, "__cuda_array_interface__"):
        return len(x.__cuda_array_interface__["shape"])
    return np.ndim(x)


def _vector_device(v):
    if v.device is not None:
        return v.device
    if v.size == 0 or v.address == 0:
        return None
    return _core.pointer_device(v.address)


def as_matrix(a):
    """A Matrix from a Matrix or any scipy.sparse matrix/array."""
    if isinstance(a, Matrix):
        return a
    return Matrix.from_scipy(a)


def read_matrix_market(path, *, dtype=None, device=None, algorithm="auto", options=None, max_memory=None,
                       values=None):
    """Reads a Matrix Market file (.mtx, or gzip-compressed .mtx.gz; '-' for standard input).

    ``dtype``: float64 by default, float32 when ``values`` asks for half storage ('f16' / 'bf16': the
    values are read, rounded to float32, then to the storage; see :class:`Matrix`).

    Symmetric files are expanded to both triangles, duplicates are summed, pattern entries are 1.
    Malformed files raise spmv.ParseError naming the file and line. The text is streamed; a matrix
    whose size line asks for more than ``max_memory`` bytes (default: the memory available) raises
    spmv.UnsupportedError naming both sizes, before anything large is allocated.
    """
    path = os.fspath(path)
    if path != "-" and not os.path.exists(path):
        raise FileNotFoundError(errno.ENOENT, "no such Matrix Market file", path)
    storage = _storage_name(_requested_storage(values, options)) or "native"
    dt = value_dtype(dtype if dtype is not None else np.float32 if storage in _HALF_STORAGES else np.float64)
    _check_half_float32(storage, dt, "dtype=float64 was asked")
    if max_memory is not None and (isinstance(max_memory, bool) or not isinstance(max_memory, int) or max_memory <= 0):
        raise ValueError(f"max_memory must be a positive number of bytes, got {max_memory!r}")
    core, header = _core.read_matrix_market(path, dt == np.float64, _core_options(options, storage), max_memory or 0)
    return Matrix._wrap(core, device, algorithm, options, header=header, source=path)
