"""`keras.ops` products and matrix-shaped helpers (ops.numpy): matmul, dot, einsum,
tensordot, inner/outer/kron/vdot, cross, diag/diagonal/trace, tril/triu, diff, vander,
trapezoid, correlate, corrcoef. Integer products compute in a float dtype and return
Keras' result dtype (int8 x int8 -> int32, as Keras on the TensorFlow backend)."""

from __future__ import annotations

from ndflow.keras import docstrings, global_config
from ndflow.keras.ops import dtype_rules as rules
from ndflow.keras.ops import numpy_array as arr
from ndflow.keras.ops import numpy_linear_docs
from ndflow.keras.ops.symbolic import keras_op
from ndflow.ops import (
    arithmetic,
    array_core,
    array_fill,
    array_range,
    array_slicing,
    comparison,
    linalg,
    linalg_diag,
    linalg_extra,
    nn_conv_nd,
    reduction,
)
from ndflow.ops import einsum as einsum_ops
from ndflow.ops.cast import cast


def _np(name):
    return keras_op(name, "numpy")


def _product_dtypes(x1, x2):
    """(compute, result) dtypes of a product: floats for the arithmetic."""
    if x1.dtype.name == "int8" and x2.dtype.name == "int8":
        return global_config.floatx(), "int32"
    result = rules.result_type(x1.dtype.name, x2.dtype.name)
    return rules.result_type(x1.dtype.name, x2.dtype.name, float), result


def _operands(x1, x2):
    """(x1, x2, result dtype): both as tensors cast to the product's compute dtype."""
    x1, x2 = rules.to_tensor(x1), rules.to_tensor(x2)
    compute, result = _product_dtypes(x1, x2)
    return cast(x1, compute), cast(x2, compute), result


@_np("matmul")
def matmul(x1, x2):
    x1, x2 = rules.to_tensor(x1), rules.to_tensor(x2)
    if x1.shape.rank == 0 or x2.shape.rank == 0:
        raise ValueError("matmul: inputs must not be scalars (use multiply). Received: "
                         f"x1.shape={x1.shape}, x2.shape={x2.shape}")
    compute, result = _product_dtypes(x1, x2)
    if x1.dtype.name != compute or x2.dtype.name != compute:
        x1, x2 = cast(x1, compute), cast(x2, compute)
    if x2.shape.rank == 1:
        out = linalg_extra.tensordot(x1, x2, axes=1)
    elif x1.shape.rank == 1:
        out = linalg_extra.tensordot(x1, x2, axes=[[0], [x2.shape.rank - 2]])
    else:
        out = linalg.matmul(x1, x2)
    return out if out.dtype.name == result else cast(out, result)


@_np("dot")
def dot(x1, x2):
    x1, x2, result = _operands(x1, x2)
    if x1.shape.rank == 0 or x2.shape.rank == 0:
        out = x1 * x2
    elif x2.shape.rank == 1:
        out = linalg_extra.tensordot(x1, x2, axes=1)
    else:
        out = linalg_extra.tensordot(x1, x2, axes=[[x1.shape.rank - 1], [x2.shape.rank - 2]])
    return cast(out, result)


@_np("tensordot")
def tensordot(x1, x2, axes=2):
    x1, x2, result = _operands(x1, x2)
    return cast(linalg_extra.tensordot(x1, x2, axes), result)


@_np("inner")
def inner(x1, x2):
    x1, x2, result = _operands(x1, x2)
    if x1.shape.rank == 0 or x2.shape.rank == 0:
        return cast(x1 * x2, result)
    return cast(linalg_extra.tensordot(x1, x2, axes=[[-1], [-1]]), result)


@_np("outer")
def outer(x1, x2):
    x1, x2, result = _operands(x1, x2)
    return cast(array_core.reshape(x1, [-1, 1]) * array_core.reshape(x2, [1, -1]), result)


@_np("vdot")
def vdot(x1, x2):
    x1, x2, result = _operands(x1, x2)
    return cast(linalg_extra.tensordot(array_core.reshape(x1, [-1]), array_core.reshape(x2, [-1]),
                                       axes=1), result)


@_np("kron")
def kron(x1, x2):
    x1, x2 = rules.to_tensor(x1), rules.to_tensor(x2)
    dtype = rules.result_type(x1.dtype.name, x2.dtype.name)
    x1, x2 = cast(x1, dtype), cast(x2, dtype)
    r = max(x1.shape.rank, x2.shape.rank)
    x1 = array_core.reshape(x1, [1] * (r - x1.shape.rank) + x1.shape.as_list())
    x2 = array_core.reshape(x2, [1] * (r - x2.shape.rank) + x2.shape.as_list())
    # out[i*b + j] = x1[i] * x2[j]: interleave the axes, then merge the pairs
    a = array_core.reshape(x1, [d for s in x1.shape.as_list() for d in (s, 1)])
    b = array_core.reshape(x2, [d for s in x2.shape.as_list() for d in (1, s)])
    return array_core.reshape(a * b, [p * q for p, q in zip(x1.shape.as_list(),
                                                           x2.shape.as_list())])


@_np("einsum")
def einsum(subscripts, *operands, **kwargs):
    operands = [rules.to_tensor(x) for x in operands]
    names = sorted({x.dtype.name for x in operands})
    if names == ["int8"]:
        compute, result = global_config.floatx(), "int32"
    else:
        result = rules.result_type(*names)
        compute = global_config.floatx() if "int" in result else result
    if result == "bool":
        raise TypeError("einsum does not take bool operands (Keras' TensorFlow backend has "
                        "no bool kernel)")
    out = einsum_ops.einsum(subscripts, *[cast(x, compute) for x in operands], **kwargs)
    return cast(out, result)


@_np("cross")
def cross(x1, x2, axisa=-1, axisb=-1, axisc=-1, axis=None):
    x1, x2 = rules.promote(rules.to_tensor(x1), rules.to_tensor(x2))
    if axis is not None:
        axisa = axisb = axisc = axis
    x1, x2 = arr.moveaxis(x1, axisa, -1), arr.moveaxis(x2, axisb, -1)
    two = x1.shape[-1] == 2 and x2.shape[-1] == 2

    def pad3(v):
        return array_fill.pad(v, [[0, 0]] * (v.shape.rank - 1) + [[0, 1]]) \
            if v.shape[-1] == 2 else v
    a, b = pad3(x1), pad3(x2)
    a0, a1, a2 = (a[..., i] for i in range(3))
    b0, b1, b2 = (b[..., i] for i in range(3))
    c = array_core.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)
    return c[..., 2] if two else arr.moveaxis(c, -1, axisc)


@_np("diag")
def diag(x, k=0):
    x = rules.to_tensor(x)
    if x.shape.rank == 1:
        return linalg_diag.matrix_diag(x, k=k)
    if x.shape.rank == 2:
        return diagonal(x, offset=k)
    raise ValueError(f"`x` must be 1d or 2d. Received: x.shape={x.shape}")


@_np("diagflat")
def diagflat(x, k=0):
    return diag(arr.ravel(x), k=k)


@_np("diagonal")
def diagonal(x, offset=0, axis1=0, axis2=1):
    x = rules.to_tensor(x)
    x = arr.moveaxis(x, (axis1, axis2), (-2, -1))
    return linalg_diag.matrix_diag_part(x, k=offset)


@_np("trace")
def trace(x, offset=0, axis1=0, axis2=1):
    x = rules.to_tensor(x)
    name = x.dtype.name
    dtype = {"bool": "int32", "int8": "int32", "int16": "int32", "uint8": "int64"}.get(
        name, name)
    return reduction.reduce_sum(diagonal(cast(x, dtype), offset, axis1, axis2), axis=-1)


def _band(x, keep):
    x = rules.to_tensor(x)
    shape = array_core.shape(x)
    rows = array_range.range(0, shape[-2])[:, None]
    cols = array_range.range(0, shape[-1])[None, :]
    return arithmetic.where(keep(cols - rows), x, array_fill.zeros_like(x))


@_np("tril")
def tril(x, k=0):
    return _band(x, lambda d: comparison.less_equal(d, k))


@_np("triu")
def triu(x, k=0):
    return _band(x, lambda d: comparison.greater_equal(d, k))


@_np("diff")
def diff(a, n=1, axis=-1):
    a = rules.to_tensor(a)
    for _ in range(n):
        hi = array_slicing.slice_helper(a, _axis_slice(a.shape.rank, axis, slice(1, None)))
        lo = array_slicing.slice_helper(a, _axis_slice(a.shape.rank, axis, slice(None, -1)))
        a = comparison.not_equal(hi, lo) if a.dtype.name == "bool" else hi - lo
    return a


def _axis_slice(rank, axis, s):
    key = [slice(None)] * rank
    key[axis] = s
    return tuple(key)


@_np("vander")
def vander(x, N=None, increasing=False):  # noqa: N803 - Keras' name
    x = rules.to_tensor(x)
    n = x.shape[0] if N is None else N
    powers = array_range.range(0, n) if increasing else array_range.range(n - 1, -1, -1)
    dtype = x.dtype.name if x.dtype.name != "bool" else "int32"
    return arithmetic.pow(cast(array_core.expand_dims(x, -1), dtype),
                          cast(array_core.expand_dims(powers, 0), dtype))


@_np("trapezoid")
def trapezoid(y, x=None, dx=1.0, axis=-1):
    y = rules.to_tensor(y)
    y = cast(y, rules.result_type(y.dtype.name, float))
    rank = y.shape.rank
    hi = array_slicing.slice_helper(y, _axis_slice(rank, axis, slice(1, None)))
    lo = array_slicing.slice_helper(y, _axis_slice(rank, axis, slice(None, -1)))
    if x is None:
        widths = cast(dx, y.dtype)
    else:
        x = cast(rules.to_tensor(x), y.dtype)
        widths = diff(x, axis=axis if x.shape.rank == rank else -1)
        if x.shape.rank == 1 and rank > 1:
            shape = [1] * rank
            shape[axis] = -1
            widths = array_core.reshape(widths, shape)
    return reduction.reduce_sum((hi + lo) * widths, axis=axis) / cast(2.0, y.dtype)


@_np("correlate")
def correlate(x1, x2, mode="valid"):
    x1, x2 = rules.to_tensor(x1), rules.to_tensor(x2)
    dtype = rules.result_type(x1.dtype.name, x2.dtype.name)
    dtype = "float64" if dtype == "int64" else (
        dtype if dtype in ("bfloat16", "float16", "float64") else "float32")
    x1, x2 = cast(x1, dtype), cast(x2, dtype)
    if mode not in ("valid", "same", "full"):
        raise ValueError(f"Invalid mode: '{mode}'. Mode must be one of: 'valid', 'same', "
                         "'full'.")
    n, m = x1.shape[0], x2.shape[0]
    if mode == "full":
        x1 = array_fill.pad(x1, [[m - 1, m - 1]])
    elif mode == "same":
        # Keras' TF backend: the middle max(n, m) values of the full correlation (m values
        # when x2 is the longer, where NumPy would swap the sequences)
        if n is not None and n < m:
            left = (m - 1) - (n - 1) // 2
            x1 = array_fill.pad(x1, [[left, 2 * m - 1 - n - left]])
        else:
            x1 = array_fill.pad(x1, [[m // 2, (m - 1) // 2]])
    out = nn_conv_nd.convolution(array_core.reshape(x1, [1, -1, 1]),
                                 array_core.reshape(x2, [-1, 1, 1]), padding="VALID")
    return array_core.reshape(out, [-1])


@_np("corrcoef")
def corrcoef(x):
    x = rules.to_tensor(x)
    dtype = rules.result_type(x.dtype.name, float)
    x = cast(x, dtype)
    centered = x - reduction.reduce_mean(x, axis=-1, keepdims=True)
    cov = linalg.matmul(centered, centered, transpose_b=True)
    d = linalg_diag.matrix_diag_part(cov)
    norm = arithmetic.pow(array_core.expand_dims(d, 0) * array_core.expand_dims(d, 1),
                          cast(0.5, dtype))
    return cov / norm


docstrings.attach(globals(), numpy_linear_docs.DOCS)
