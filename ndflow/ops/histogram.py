"""Counting values: DenseBincount (`tf.math.bincount`), HistogramFixedWidth
(`tf.histogram_fixed_width`) and `tf.histogram_fixed_width_bins` (TF's composition)."""

from __future__ import annotations

from ndflow.core import dtypes, scopes
from ndflow.core.api_export import tf_export
from ndflow.core.shapes import TensorShape
from ndflow.core.tensor import Tensor
from ndflow.ops import array_core
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.arithmetic import maximum, minimum, multiply, truediv
from ndflow.ops.array_core import reshape, size
from ndflow.ops.cast import cast
from ndflow.ops.comparison import greater
from ndflow.ops.control_flow_assert import Assert
from ndflow.ops.math import clip_by_value, floor
from ndflow.ops.op_def import op_def
from ndflow.ops.reduction import reduce_max


def _bincount_shape(ctx):
    arr = ctx.shapes[0]
    if arr.rank is not None and arr.rank > 2:
        raise ValueError(f"Shape must be at most rank 2 but is rank {arr.rank}")
    rows = [arr.dims[0]] if arr.rank == 2 else []
    size = ctx.value(1)   # TF's shape fn: a constant size is the last dimension
    return [TensorShape(rows + [int(size) if size is not None and size.ndim == 0 else None])]


DenseBincount = op_def(
    "DenseBincount", inputs=["input: Tidx", "size: Tidx", "weights: T"], outputs=["output: T"],
    attrs=["Tidx: {int32, int64}", "T: {int32, int64, float, double}",
           "binary_output: bool = false"], shape=_bincount_shape, gradient_undefined=True)


@tf_export("math.bincount", v1=[])
def bincount(arr, weights=None, minlength=None, maxlength=None, dtype=dtypes.int32,
             name=None, axis=None, binary_output: bool = False) -> Tensor:
    """`tf.math.bincount`: how often each value 0..size-1 occurs in `arr` (summing `weights`
    if given), size = max(arr) + 1 bounded by `minlength`/`maxlength`; `axis=-1` counts each
    row of a matrix."""
    with scopes.name_scope(name or "bincount"):
        arr = convert_to_tensor(arr, name="arr")
        if weights is not None:
            weights = convert_to_tensor(weights, name="weights")
            if binary_output:
                raise ValueError("Arguments `binary_output` and `weights` are mutually "
                                 "exclusive. Please specify only one.")
        if not arr.dtype.is_integer:
            arr = cast(arr, dtypes.int32)
        axis = 0 if axis is None else axis
        if axis not in (0, -1):
            raise ValueError(f"Unsupported value for argument axis={axis}. Only 0 and -1 are "
                             "currently supported.")
        nonempty = cast(greater(size(arr), 0), arr.dtype)
        out_size = multiply(nonempty, reduce_max(arr) + 1)
        if minlength is not None:
            out_size = maximum(convert_to_tensor(minlength, name="minlength", dtype=arr.dtype),
                               out_size)
        if maxlength is not None:
            out_size = minimum(convert_to_tensor(maxlength, name="maxlength", dtype=arr.dtype),
                               out_size)
        if axis == 0:
            arr = reshape(arr, [-1])
            if weights is not None:
                weights = reshape(weights, [-1])
        if weights is None:
            weights = convert_to_tensor([], dtype=dtypes.as_dtype(dtype))
        return apply_op(DenseBincount, [arr, out_size, weights],
                        {"binary_output": bool(binary_output)}).outputs[0]


@tf_export(v1=["math.bincount", "bincount"])
def bincount_v1(arr, weights=None, minlength=None, maxlength=None, dtype=dtypes.int32):
    """`tf.compat.v1.math.bincount`."""
    return bincount(arr, weights, minlength, maxlength, dtype)


HistogramFixedWidth = op_def(
    "HistogramFixedWidth", inputs=["values: T", "value_range: T", "nbins: int32"],
    outputs=["out: dtype"], attrs=["T: {int32, int64, float, double}",
                                   "dtype: {int32, int64} = DT_INT32"],
    shape=lambda ctx: [TensorShape([None])], gradient_undefined=True)


@tf_export("histogram_fixed_width")
def histogram_fixed_width(values, value_range, nbins=100, dtype=dtypes.int32,
                          name=None) -> Tensor:
    """Counts the values falling in `nbins` equal-width bins over a range.

    Values below the range go to the first bin, values at or above its top to the last.

    Args:
      values: a numeric tensor.
      value_range: a shape-[2] tensor [lo, hi] of values' dtype, lo < hi.
      nbins: the number of bins (a positive int).
      dtype: the count dtype, int32 or int64.
      name: optional name for the operation.

    Returns:
      A 1-D tensor of `nbins` counts.

    Example:
      >>> tf.histogram_fixed_width([0.0, 0.5, 1.0, 2.0], [0.0, 2.0], nbins=2).numpy()
      array([2, 2], dtype=int32)
    """
    with scopes.name_scope(name, "histogram_fixed_width"):
        return apply_op(HistogramFixedWidth,
                        [convert_to_tensor(values), convert_to_tensor(value_range),
                         convert_to_tensor(nbins, dtype=dtypes.int32)],
                        {"dtype": dtypes.as_dtype(dtype)}).outputs[0]


@tf_export("histogram_fixed_width_bins")
def histogram_fixed_width_bins(values, value_range, nbins=100, dtype=dtypes.int32,
                               name=None) -> Tensor:
    """The bin index of each value, for `nbins` equal-width bins over a range.

    Bins are as in `tf.histogram_fixed_width` (values outside the range go to the end bins).

    Args:
      values: a numeric tensor.
      value_range: a shape-[2] tensor [lo, hi] of values' dtype.
      nbins: the number of bins.
      dtype: the index dtype.
      name: optional name for the operation.

    Returns:
      An int tensor of values' shape with indices in [0, nbins).

    Example:
      >>> tf.histogram_fixed_width_bins([0.0, 0.5, 1.0, 2.0], [0.0, 2.0], nbins=2).numpy()
      array([0, 0, 1, 1], dtype=int32)
    """
    with scopes.name_scope(name, "histogram_fixed_width_bins"):
        values = convert_to_tensor(values, name="values")
        shape_ = array_core.shape(values)
        values = reshape(values, [-1])
        value_range = convert_to_tensor(value_range, name="value_range")
        nbins = convert_to_tensor(nbins, dtype=dtypes.int32, name="nbins")
        check = Assert(greater(nbins, 0), [f"nbins {nbins} must > 0"])
        with scopes.control_dependencies([check] if check is not None else []):
            nbins = array_core.identity(nbins)
        nbins_float = cast(nbins, values.dtype)
        scaled = truediv(values - value_range[0], value_range[1] - value_range[0],
                         name="scaled_values")
        indices = floor(multiply(nbins_float, scaled), name="indices")
        indices = cast(clip_by_value(indices, 0, nbins_float - 1), dtypes.int32)
        return reshape(indices, shape_)
