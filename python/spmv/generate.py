"""Deterministic, seeded test matrices: one function per generator of the C++ registry
(spmv::gen::generators()), plus :func:`generate` by name.

Every function takes the generator's parameters as keyword arguments with the registry's defaults
(a generator with a single parameter also takes it positionally: ``poisson2d(100)``), and
``dtype`` (float64 by default, or float32), ``device``, ``algorithm`` and ``options`` as for
:class:`spmv.Matrix`. The same arguments give the same matrix on every platform.
"""

from __future__ import annotations

import inspect
import numbers

import numpy as np

from . import _core
from ._matrix import Matrix, value_dtype

_EXACT_INTEGER_LIMIT = 2**53  # parameters travel as doubles, exact up to here
_MATRIX_KEYWORDS = ("dtype", "device", "algorithm", "options")


def _number(kind, key, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{kind}: parameter {key} must be a real number, got {value!r}")
    if isinstance(value, numbers.Integral) and abs(int(value)) > _EXACT_INTEGER_LIMIT:
        raise ValueError(f"{kind}: parameter {key} = {value} is beyond 2^53")
    return float(value)


def _label(kind, params):
    return kind + "".join(f"{':' if i == 0 else ','}{k}={v}" for i, (k, v) in enumerate(sorted(params.items())))


def generate(kind, *, dtype=np.float64, device=None, algorithm="auto", options=None, **params):
    """The matrix of generator ``kind`` with ``params`` (unset ones take their defaults).

    Unknown kinds or parameter names raise ValueError listing the valid ones.
    """
    values = {k: _number(kind, k, v) for k, v in params.items()}
    dt = value_dtype(dtype)
    core = _core.generate(kind, values, dt == np.float64, dict(options or {}))
    return Matrix._wrap(core, device, algorithm, options, source=_label(kind, params))


def generators():
    """[{'name', 'description', 'defaults'}] for every generator, in registry order."""
    return [{"name": name, "description": description, "defaults": {k: _default(v) for k, v in defaults.items()}}
            for name, description, defaults in _core.generators()]


def _default(value):
    return int(value) if float(value).is_integer() else value


def _make(name, description, defaults):
    kind = inspect.Parameter.POSITIONAL_OR_KEYWORD if len(defaults) == 1 else inspect.Parameter.KEYWORD_ONLY
    parameters = [inspect.Parameter(key, kind, default=_default(value)) for key, value in defaults.items()]
    parameters += [
        inspect.Parameter("dtype", inspect.Parameter.KEYWORD_ONLY, default=np.float64),
        inspect.Parameter("device", inspect.Parameter.KEYWORD_ONLY, default=None),
        inspect.Parameter("algorithm", inspect.Parameter.KEYWORD_ONLY, default="auto"),
        inspect.Parameter("options", inspect.Parameter.KEYWORD_ONLY, default=None),
    ]
    signature = inspect.Signature(parameters)

    def generator(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        arguments = dict(bound.arguments)
        matrix_args = {k: arguments.pop(k) for k in _MATRIX_KEYWORDS}
        return generate(name, **matrix_args, **arguments)

    generator.__name__ = generator.__qualname__ = name
    generator.__signature__ = signature
    generator.__doc__ = f"{description}.\n\nParameters (defaults): " + ", ".join(
        f"{p.name}={p.default!r}" for p in parameters[: len(defaults)]) + "."
    generator.__module__ = __name__
    return generator


def _register():
    names = []
    for name, description, defaults in _core.generators():
        if not name.isidentifier() or name in globals() or set(defaults) & set(_MATRIX_KEYWORDS):
            raise RuntimeError(f"generator {name!r} cannot be a function of spmv.generate (name or parameters clash)")
        globals()[name] = _make(name, description, defaults)
        names.append(name)
    return names


__all__ = ["generate", "generators", *_register()]
