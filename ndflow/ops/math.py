"""Math ops: elementwise arithmetic, comparisons, reductions, matrix products."""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.shapes import TensorShape, broadcast_shapes, fmt
from ndflow.core.tensor import OPERATORS
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.array import reshape
from ndflow.ops.op_def import op_def

_NUMERIC = "T: {half, bfloat16, float, double, int8, int16, int32, int64, uint8}"


def broadcast_shape(ctx):
    try:
        return [broadcast_shapes(ctx.shapes[0], ctx.shapes[1])]
    except ValueError:
        raise ValueError(f"Incompatible shapes: {fmt(ctx.shapes[0])} vs. "
                         f"{fmt(ctx.shapes[1])}") from None


def reduce_to_shape(grad, shape: TensorShape):
    """Sums a broadcast gradient back to `shape` (static shapes; dynamic case TODO)."""
    gshape = grad.shape
    if gshape == shape:
        return grad
    if gshape.rank is None or not shape.is_fully_defined() or not gshape.is_fully_defined():
        raise NotImplementedError("dynamic-shape broadcast gradients")
    g = gshape.as_list()
    s = [1] * (len(g) - shape.rank) + shape.as_list()
    axes = [i for i, (a, b) in enumerate(zip(g, s)) if b == 1 and a != 1]
    axes += [i for i in range(len(g) - shape.rank)]
    out = reduce_sum(grad, sorted(set(axes)), keepdims=True) if axes else grad
    return reshape(out, shape.as_list())


AddV2 = op_def("AddV2", inputs=["x: T", "y: T"], outputs=["z: T"], attrs=[_NUMERIC],
               shape=broadcast_shape)


@AddV2.def_grad
def _add_grad(op, grad):
    x, y = op.inputs
    return [reduce_to_shape(grad, x.shape), reduce_to_shape(grad, y.shape)]


def _binary_args(x, y):
    x = convert_to_tensor(x) if not hasattr(y, "dtype") else x
    if hasattr(x, "dtype") and not hasattr(y, "dtype"):
        y = convert_to_tensor(y, dtype_hint=x.dtype)
    elif hasattr(y, "dtype") and not hasattr(x, "dtype"):
        x = convert_to_tensor(x, dtype_hint=y.dtype)
    return x, y


def add(x, y, name=None):
    x, y = _binary_args(x, y)
    return apply_op(AddV2, [x, y], name=name).outputs[0]


def _matmul_shape(ctx):
    a, b = ctx.shapes
    ta, tb = ctx.attrs["transpose_a"], ctx.attrs["transpose_b"]
    if a.rank is not None and a.rank != 2:
        raise ValueError(f"Shape must be rank 2 but is rank {a.rank}")
    if b.rank is not None and b.rank != 2:
        raise ValueError(f"Shape must be rank 2 but is rank {b.rank}")
    a = a if a.rank is not None else TensorShape([None, None])
    b = b if b.rank is not None else TensorShape([None, None])
    m, k1 = (a[1], a[0]) if ta else (a[0], a[1])
    k2, n = (b[1], b[0]) if tb else (b[0], b[1])
    if k1 is not None and k2 is not None and k1 != k2:
        raise ValueError(f"Dimensions must be equal, but are {k1} and {k2}")
    return [TensorShape([m, n])]


MatMul = op_def("MatMul", inputs=["a: T", "b: T"], outputs=["product: T"],
                attrs=["transpose_a: bool = false", "transpose_b: bool = false",
                       "T: {half, bfloat16, float, double, int32, int64}"],
                shape=_matmul_shape)


@MatMul.def_grad
def _matmul_grad(op, grad):
    a, b = op.inputs
    ta, tb = op.get_attr("transpose_a"), op.get_attr("transpose_b")
    if not ta and not tb:
        return [matmul(grad, b, transpose_b=True), matmul(a, grad, transpose_a=True)]
    if not ta and tb:
        return [matmul(grad, b), matmul(grad, a, transpose_a=True)]
    if ta and not tb:
        return [matmul(b, grad, transpose_b=True), matmul(a, grad)]
    return [matmul(b, grad, transpose_a=True, transpose_b=True),
            matmul(grad, a, transpose_a=True, transpose_b=True)]


def matmul(a, b, transpose_a=False, transpose_b=False, name=None):
    a, b = _binary_args(a, b)
    return apply_op(MatMul, [a, b], {"transpose_a": transpose_a, "transpose_b": transpose_b},
                    name=name).outputs[0]


def _add_n_shape(ctx):
    merged = TensorShape(None)
    for s in ctx.shapes:
        merged = merged.merge_with(s)
    return [merged]


AddN = op_def("AddN", inputs=["inputs: N * T"], outputs=["sum: T"],
              attrs=["N: int >= 1", _NUMERIC], shape=_add_n_shape,
              grad=lambda op, grad: [grad] * len(op.inputs))


def add_n(inputs, name=None):
    inputs = list(inputs)
    if len(inputs) == 1 and name is None:
        return inputs[0]
    return apply_op(AddN, [inputs], name=name).outputs[0]


Sum = op_def("Sum", inputs=["input: T", "reduction_indices: Tidx"], outputs=["output: T"],
             attrs=["keep_dims: bool = false", _NUMERIC, "Tidx: {int32, int64} = DT_INT32"])


def reduce_sum(x, axis, keepdims=False, name=None):
    return apply_op(Sum, [x, convert_to_tensor(axis, dtypes.int32)], {"keep_dims": keepdims},
                    name=name).outputs[0]


OPERATORS.update(add=add, matmul=matmul)
