"""`tf.nn.isotonic_regression` on the IsotonicRegression op (kernels/isotonic_regression.py):
for each vector along `axis`, the non-increasing (`decreasing=True`, TF's default) or
non-decreasing sequence nearest in squared distance, and int32 segment ids numbering its runs
of pooled points 0, 1, ... (equal neighbouring values of the input stay separate segments).

As TF's wrapper: the output type is the input's for half/bfloat16/float32, float32 for int8
and int16, float64 for every other type; the increasing problem is the decreasing one of the
negated input (negated in its own type, so an int8 -128 stays -128), its output negated back;
another axis is swapped with the last (and back). The gradient of the output is TF's
`_MeanAggregator`: each point's incoming gradient replaced by its segment's mean. TF's
aggregator splits a 2-D gradient into rows, so its gradient of a rank-1 input has shape
[n, 1] and a rank-3 input's mixes the segments of a slice's rows; ndflow's takes the means
per vector of the op's last dimension, whatever the rank (equal to TF's for rank 2).
"""

from __future__ import annotations

import collections

from ndflow.core import context, dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.errors import InvalidArgumentError
from ndflow.core.tensor import Tensor
from ndflow.ops import array_core
from ndflow.ops.apply import apply_op, constant_value, convert_to_tensor
from ndflow.ops.arithmetic import add, floor_div, multiply, negative
from ndflow.ops.array_gather import gather
from ndflow.ops.array_range import range as range_
from ndflow.ops.array_transpose import transpose
from ndflow.ops.op_def import op_def
from ndflow.ops.segment import unsorted_segment_mean

_T = ("T: {float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, uint32, "
      "uint64}")

IsotonicRegression = op_def(
    "IsotonicRegression", inputs=["input: T"],
    outputs=["output: output_dtype", "segments: int32"],
    attrs=[_T, "output_dtype: {half, bfloat16, float, double} = DT_FLOAT"],
    shape=lambda ctx: [ctx.shapes[0], ctx.shapes[0]])

# TF's result type of the raw op (`tf.raw_ops.IsotonicRegression(...).segments`).
IsotonicRegressionResult = collections.namedtuple("IsotonicRegression", ["output", "segments"])

# TF's type_promotions: float types map to themselves, int8/16 to float32, the rest to double
_PROMOTIONS = {dtypes.float32: dtypes.float32, dtypes.float16: dtypes.float16,
               dtypes.bfloat16: dtypes.bfloat16, dtypes.int8: dtypes.float32,
               dtypes.int16: dtypes.float32}
# what TF's Neg takes (ndflow's Neg also negates uint8/uint16)
_NEGATABLE = ("bfloat16, half, float, double, int8, int16, int32, int64, complex64, "
              "complex128")


def _negate(x: Tensor) -> Tensor:
    if x.dtype.is_unsigned:
        if context.executing_eagerly():
            raise InvalidArgumentError(None, None, (
                f"Value for attr 'T' of {x.dtype.name} is not in the list of allowed values: "
                f"{_NEGATABLE}\n\t; NodeDef: {{{{node Neg}}}}; Op<name=Neg; signature=x:T -> "
                f"y:T> [Op:Neg] name: "))
        raise TypeError(f"Value passed to parameter 'x' has DataType {x.dtype.name} not in "
                        f"list of allowed values: {_NEGATABLE}")
    return negative(x)


def _swap_axis(x, axis: int, rank: int):
    perm = list(range(rank))
    perm[axis], perm[-1] = perm[-1], perm[axis]
    return transpose(x, perm)


@tf_export("nn.isotonic_regression", v1=[])
def isotonic_regression(inputs, decreasing=True, axis=-1):
    """`tf.nn.isotonic_regression`: (output, segments) of the isotonic regression of each
    vector of `inputs` along `axis`."""
    inputs = convert_to_tensor(inputs)
    output_dtype = _PROMOTIONS.get(inputs.dtype, dtypes.float64)

    def compute(matrix):
        if decreasing:
            return IsotonicRegressionResult(*apply_op(
                IsotonicRegression, [matrix], {"output_dtype": output_dtype}).outputs)
        output, segments = apply_op(IsotonicRegression, [_negate(matrix)],
                                    {"output_dtype": output_dtype}).outputs
        return negative(output), segments

    if isinstance(axis, Tensor):
        value = constant_value(axis)
        if value is None:
            raise NotImplementedError("isotonic_regression needs a static axis")
        axis = int(value)
    rank = inputs.shape.rank
    if axis == -1 or (rank is not None and axis == rank - 1):
        return compute(inputs)
    if rank is None:
        raise TypeError("bad operand type for unary -: 'NoneType'")
    if not -rank <= axis < rank:
        raise InvalidArgumentError(None, None, (
            f"`dim` must be in the range [{-rank}, {rank}) where {rank} is the number of "
            f"dimensions in the input. Received: dim={axis}"))
    axis %= rank
    outputs = compute(_swap_axis(inputs, axis, rank))
    return tuple(_swap_axis(out, axis, rank) for out in outputs)


def segment_means(values, segments):
    """Each element of `values` replaced by the mean of its segment of its vector along the
    last dimension (`segments` as IsotonicRegression numbers them)."""
    if values.shape.rank == 0:
        return values
    shape = array_core.shape(values)
    n = shape[-1]
    count = array_core.size(values)
    rows = floor_div(range_(count), n)
    ids = add(array_core.reshape(segments, [-1]), multiply(rows, n))
    means = unsorted_segment_mean(array_core.reshape(values, [-1]), ids, count)
    return array_core.reshape(gather(means, ids), shape)


@IsotonicRegression.def_grad
def _isotonic_regression_grad(op, grad_output, grad_segments):
    del grad_segments  # discrete
    return [segment_means(grad_output, op.outputs[1])]
