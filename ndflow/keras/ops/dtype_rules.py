"""Keras 3's dtype rules for `keras.ops` (TensorFlow backend): the JAX-style promotion lattice
with weak Python scalars (`result_type`), Keras' `convert_to_tensor` (ints and bools cast
rather than refused) and the helpers the op modules share: the operands of a binary op
brought to their common dtype, the float dtype a unary math op computes in."""

from __future__ import annotations

import functools

import numpy as np

from ndflow.core import dtypes
from ndflow.core.tensor import Tensor
from ndflow.keras import global_config
from ndflow.ops import apply
from ndflow.ops.cast import cast

INT_TYPES = ("uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64")
FLOAT_TYPES = ("bfloat16", "float16", "float32", "float64")
_PYTHON = {bool: "bool", int: "int64", float: "float32", str: "string", complex: "complex128"}

# Each dtype -> the dtypes just above it ("int"/"float": weakly typed Python scalars).
_LATTICE = {
    "bool": ["int"], "uint8": ["int16", "uint16"], "uint16": ["int32", "uint32"],
    "uint32": ["int64", "uint64"], "uint64": ["float"], "int": ["uint8", "int8", "complex64"],
    "int8": ["int16"], "int16": ["int32"], "int32": ["int64"], "int64": ["float"],
    "float": ["bfloat16", "float16"], "bfloat16": ["float32"], "float16": ["float32"],
    "float32": ["float64", "complex64"], "float64": ["complex128"],
    "complex64": ["complex128"], "complex128": [],
}


def _upper_bounds() -> dict:
    bounds = {n: {n} for n in _LATTICE}
    for n in _LATTICE:
        while True:
            more = set().union(*(_LATTICE[b] for b in bounds[n]))
            if more <= bounds[n]:
                break
            bounds[n] |= more
    return bounds


_UPPER = _upper_bounds()


@functools.lru_cache(512)
def _least_upper_bound(*nodes) -> str:
    try:
        common = set.intersection(*(_UPPER[n] for n in nodes))
    except KeyError:
        bad = next(n for n in nodes if n not in _UPPER)
        raise ValueError(f"dtype={bad!r} is not a valid dtype for Keras type promotion.") \
            from None
    least = (common & set(nodes)) or {c for c in common if common <= _UPPER[c]}
    if len(least) != 1:
        raise ValueError(f"Input dtypes {tuple(nodes)} have no available implicit dtype "
                         "promotion path. Try explicitly casting inputs to the desired "
                         "output type.")
    return least.pop()


def standardize(dtype) -> str:
    """Keras' dtype name for a name, Python type, NumPy/ndflow dtype; None -> floatx."""
    if dtype is None:
        return global_config.floatx()
    if isinstance(dtype, type) and dtype in _PYTHON:
        return _PYTHON[dtype]
    if dtype == "int":
        return "int64"
    if isinstance(dtype, str) and dtype in _UPPER:
        return dtype
    try:
        return dtypes.as_dtype(dtype).name
    except TypeError:
        raise ValueError(f"Invalid dtype: {dtype}") from None


def _weak(dtype: str) -> str:
    if dtype == "bool":
        return dtype
    return "float" if "float" in dtype else ("int" if "int" in dtype else "complex")


def result_type(*types) -> str:
    """Keras' `backend.result_type`: Python `int`/`float` are weak (they take the other
    operand's kind and precision); 64-bit results stay 64-bit on the TensorFlow backend."""
    try:
        return _cached_result_type(types, global_config.floatx())
    except TypeError:   # an unhashable dtype spec
        return _result_type(types)


@functools.lru_cache(1024)
def _cached_result_type(types, floatx):
    return _result_type(types)


def _result_type(types) -> str:
    if not types:
        return global_config.floatx()
    names, weak = [], []
    for t in types:
        is_weak = t is int or t is float
        names.append(standardize(global_config.floatx() if t is None else t))
        weak.append(is_weak)
    if len(names) == 1:
        out, out_weak = names[0], weak[0]
    elif len(set(names)) == 1 and not all(weak):
        out, out_weak = names[0], False
    elif all(weak):
        out, out_weak = _least_upper_bound(*sorted(set(names))), True
    else:
        out = _least_upper_bound(*sorted({_weak(n) if w else n for n, w in zip(names, weak)}))
        out_weak = out in ("int", "float")
    if out != "bool" and out_weak:
        precision = global_config.floatx()[-2:]
        kind = "f" if out == "bfloat16" else out[:1]
        out = {"b": "bool", "i": f"int{precision}", "u": f"uint{precision}"}.get(
            kind, f"float{precision}")
    return {"uint64": "uint32", "complex128": "complex64"}.get(out, out)


def dtype_of(x):
    """What `result_type` takes for an operand: its dtype, or `int`/`float` for Python
    scalars (weak)."""
    if isinstance(x, bool):
        return "bool"
    if isinstance(x, (int, float)):
        return type(x)
    d = getattr(x, "dtype", None)
    return d if d is not None else type(x)


def is_tensor(x) -> bool:
    return isinstance(x, Tensor)


def to_tensor(x, dtype=None) -> Tensor:
    """Keras' `convert_to_tensor`: tensors are cast to `dtype`; Python and NumPy values
    convert as TensorFlow converts them, then cast (bool and int targets accept any)."""
    if dtype is not None:
        dtype = standardize(dtype)
    if not isinstance(x, Tensor):
        if dtype == "bool" or (dtype is not None and dtype in INT_TYPES):
            return cast(apply.convert_to_tensor(x), dtype)
        if dtype is not None and isinstance(x, (list, tuple)):
            x = np.asarray(x, dtype=np.float64 if dtype in FLOAT_TYPES else None)
            return cast(apply.convert_to_tensor(x), dtype)
        x = apply.convert_to_tensor(x, dtype=dtype)
    elif dtype is not None and x.dtype.name != dtype:
        return cast(x, dtype)
    return x


def promote(*xs, extra=()):
    """Operands converted to their Keras result dtype (`extra`: more dtypes, e.g. `float`)."""
    xs = [x if isinstance(x, (int, float)) else to_tensor(x) for x in xs]
    if not extra and len(xs) == 2 and isinstance(xs[0], Tensor) and \
            isinstance(xs[1], Tensor) and xs[0].dtype is xs[1].dtype:
        return xs   # the common case: nothing to promote
    dtype = result_type(*(dtype_of(x) for x in xs), *extra)
    return [to_tensor(x, dtype) for x in xs]


def float_dtype(x) -> str:
    """The dtype a float op on `x` computes in: floatx for int64, else result_type(x, float)
    (bool and small ints -> floatx; float16 stays float16)."""
    name = x.dtype.name
    return global_config.floatx() if name == "int64" else result_type(name, float)


def to_float(x) -> Tensor:
    x = to_tensor(x)
    return to_tensor(x, float_dtype(x))


def canonical_axis(axis, ndim: int | None):
    """A normalized axis or tuple of axes (negative ones counted from the end)."""
    if axis is None or ndim is None:
        return axis
    if isinstance(axis, (list, tuple)):
        return tuple(a % ndim if a < 0 else a for a in axis)
    return axis % ndim if axis < 0 else axis
