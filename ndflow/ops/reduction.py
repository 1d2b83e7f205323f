"""Reductions (Sum, Mean, Max, Min, Prod, All, Any) and ArgMax/ArgMin.

Axis handling is TF's: `axis=None` reduces every axis, negative axes count from the end,
an empty axis list is the identity; `keepdims` maps to the `keep_dims` attr, and the axes
are the `reduction_indices` input of type `Tidx`. Gradients are in `math_grad.py`.
"""

from __future__ import annotations

import numpy as np

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.composite_tensor import CompositeTensor
from ndflow.core.deprecation import deprecated_argument_lookup
from ndflow.core.doc_tables import attach
from ndflow.core.shapes import TensorShape, unknown_shape
from ndflow.core.tensor import Tensor
from ndflow.ops import array_core, array_fill, composite_dispatch, reduction_docs
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.arithmetic import NUMERIC, WITH_COMPLEX
from ndflow.ops.op_def import REDUCTION, op_def


def normalize_axes(axes, rank: int) -> list:
    """Reduction indices as sorted non-negative ints; TF's error for out-of-range ones."""
    out = set()
    for a in np.asarray(axes).reshape(-1).tolist():
        if not -rank <= a < rank:
            raise ValueError(f"Invalid reduction dimension {a} for input with {rank} "
                             "dimensions.")
        out.add(a % rank if rank else a)
    return sorted(out)


def reduction_shape(ctx) -> list:
    """Shape rule of Sum/Mean/Max/Min/Prod/All/Any (TF's `ReductionShape`)."""
    shape, keep = ctx.shapes[0], ctx.attrs["keep_dims"]
    axes = ctx.value(1)
    if shape.rank is None:
        return [TensorShape(None)]
    if axes is None:
        if keep:
            return [unknown_shape(shape.rank)]
        n = ctx.shapes[1].num_elements()
        return [unknown_shape(shape.rank - n) if n is not None and ctx.shapes[1].rank == 1
                and n <= shape.rank else TensorShape(None)]
    red = set(normalize_axes(axes, shape.rank))
    dims = shape.as_list()
    if keep:
        return [TensorShape([1 if i in red else d for i, d in enumerate(dims)])]
    return [TensorShape([d for i, d in enumerate(dims) if i not in red])]


def _reduction_op(name: str, type_attr: str = NUMERIC):
    attrs = ["keep_dims: bool = false", "Tidx: {int32, int64} = DT_INT32"]
    if type_attr == "bool":  # All, Any: TF registers no gradient
        return op_def(name, inputs=["input: bool", "reduction_indices: Tidx"],
                      outputs=["output: bool"], attrs=attrs, shape=reduction_shape,
                      gradient_undefined=True, tags=[REDUCTION])
    return op_def(name, inputs=["input: T", "reduction_indices: Tidx"], outputs=["output: T"],
                  attrs=[type_attr] + attrs, shape=reduction_shape, tags=[REDUCTION])


Sum = _reduction_op("Sum", WITH_COMPLEX)
Mean = _reduction_op("Mean", WITH_COMPLEX)
Max = _reduction_op("Max")
Min = _reduction_op("Min")
Prod = _reduction_op("Prod", WITH_COMPLEX)
All = _reduction_op("All", type_attr="bool")
Any = _reduction_op("Any", type_attr="bool")


def reduce(op, x, axis, keepdims, name):
    """Applies reduction `op`: axis None = all axes (for unknown rank, via a flat view)."""
    if isinstance(x, CompositeTensor):  # a RaggedTensor: ops/ragged_math.py
        return composite_dispatch.call("reduce", op.name, x, axis, keepdims, name)
    if not isinstance(x, Tensor):
        x = convert_to_tensor(x)
    keepdims = bool(keepdims)
    if axis is None:
        rank = x.shape.rank
        if rank is None:
            flat = apply_op(op, [array_core.reshape(x, [-1]), 0],
                            {"keep_dims": False}).outputs[0]
            if not keepdims:
                return array_core.identity(flat, name=name)
            return array_core.reshape(flat, array_fill.ones_like(array_core.shape(x)),
                                      name=name)
        axis = convert_to_tensor(np.arange(rank, dtype=np.int32))
    return apply_op(op, [x, axis], {"keep_dims": keepdims}, name=name).outputs[0]


def _named(fn, name: str):
    """`fn` under its public function's name (the docstring comes from reduction_docs)."""
    fn.__name__ = fn.__qualname__ = name
    return fn


def _reductions(op, public: str):
    """The functions tf.math.<public> and its TF1 spelling (`reduction_indices` for `axis`,
    `keep_dims` for `keepdims`), applying reduction `op`."""
    def reduction(input_tensor, axis=None, keepdims=False, name=None) -> Tensor:
        return reduce(op, input_tensor, axis, keepdims, name)

    def reduction_v1(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None,
                     keep_dims=None) -> Tensor:
        axis = deprecated_argument_lookup("axis", axis, "reduction_indices", reduction_indices)
        keepdims = deprecated_argument_lookup("keepdims", keepdims, "keep_dims", keep_dims)
        return reduce(op, input_tensor, axis, bool(keepdims), name)
    paths = [f"math.{public}", public]
    return (tf_export(*paths, v1=[])(_named(reduction, public)),
            tf_export(v1=paths)(_named(reduction_v1, f"{public}_v1")))


reduce_sum, reduce_sum_v1 = _reductions(Sum, "reduce_sum")
reduce_mean, reduce_mean_v1 = _reductions(Mean, "reduce_mean")
reduce_max, reduce_max_v1 = _reductions(Max, "reduce_max")
reduce_min, reduce_min_v1 = _reductions(Min, "reduce_min")
reduce_prod, reduce_prod_v1 = _reductions(Prod, "reduce_prod")
reduce_all, reduce_all_v1 = _reductions(All, "reduce_all")
reduce_any, reduce_any_v1 = _reductions(Any, "reduce_any")


# -- ArgMax / ArgMin ------------------------------------------------------------------------------

def _arg_shape(ctx):
    shape = ctx.shapes[0]
    dim = ctx.value(1)
    if shape.rank is None:
        return [TensorShape(None)]
    if dim is None:
        return [TensorShape([None] * (shape.rank - 1))] if shape.rank else [TensorShape(None)]
    d = int(np.asarray(dim).reshape(()))
    rank = shape.rank
    if rank == 1:   # TF's ArgOpShape: a vector gives a scalar, the kernel checks the axis
        return [TensorShape([])]
    if not -rank <= d < rank:
        raise ValueError(f"Expected dimension in the range [{-rank}, {rank}), but got {d}")
    d %= rank
    return [TensorShape([s for i, s in enumerate(shape.as_list()) if i != d])]


def _arg_op(name):
    return op_def(name, inputs=["input: T", "dimension: Tidx"], outputs=["output: output_type"],
                  attrs=[NUMERIC[:-1] + ", bool}", "Tidx: {int16, int32, int64} = DT_INT32",
                         "output_type: {int16, int32, int64} = DT_INT64"],
                  shape=_arg_shape, tags=[REDUCTION])


ArgMax = _arg_op("ArgMax")
ArgMin = _arg_op("ArgMin")


def _arg(op, input, axis, output_type, name):  # noqa: A002 - TF's name
    if axis is None:
        axis = 0
    return apply_op(op, [input, array_core.int_input(axis)],
                    {"output_type": dtypes.as_dtype(output_type)},
                    name=name).outputs[0]


def _arg_functions(op, public: str, v1_alias: str):
    """tf.math.<public> (argmax, argmin) and its TF1 spelling (`dimension` for `axis`)."""
    def arg(input, axis=None, output_type=dtypes.int64, name=None) -> Tensor:  # noqa: A002
        return _arg(op, input, axis, output_type, name)

    def arg_v1(input, axis=None, name=None, dimension=None,  # noqa: A002
               output_type=dtypes.int64) -> Tensor:
        axis = deprecated_argument_lookup("axis", axis, "dimension", dimension)
        return _arg(op, input, axis, output_type, name)
    return (tf_export(public, f"math.{public}", v1=[])(_named(arg, public)),
            tf_export(v1=[v1_alias, public, f"math.{public}"])(_named(arg_v1, f"{public}_v1")))


argmax, argmax_v1 = _arg_functions(ArgMax, "argmax", "arg_max")
argmin, argmin_v1 = _arg_functions(ArgMin, "argmin", "arg_min")

attach(globals(), reduction_docs.DOCS)
