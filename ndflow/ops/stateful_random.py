"""TensorFlow's stateful random ops on a `tf.random.Generator`'s state variable: each reads
the Philox state [counter low, counter high, key] from the resource, fills its output from
that key and counter (TensorFlow's exact streams, kernels/philox.py) and advances the counter
by 256 per output element, as TensorFlow's kernels do (StatefulRandomBinomial: by 256 for each
of the 50 (samples per batch + 3) Philox calls it reserves per batch, as TF's)."""

from __future__ import annotations

from ndflow.ops.op_def import op_def
from ndflow.ops.random import shape_from_tensor


def _shape(ctx):
    return [shape_from_tensor(ctx, 2)]


def _stateful(name: str, dtype_attr: str, extra_inputs=()):
    return op_def(name, inputs=["resource: resource", "algorithm: int64", "shape: shape_dtype",
                                *extra_inputs],
                  outputs=["output: dtype"],
                  attrs=[dtype_attr, "shape_dtype: type = DT_INT64"], shape=_shape,
                  stateful=True, gradient_undefined=True)


_FLOATS = "dtype: {half, bfloat16, float, double} = DT_FLOAT"
StatefulUniform = _stateful("StatefulUniform", _FLOATS)
StatefulStandardNormalV2 = _stateful("StatefulStandardNormalV2", _FLOATS)
StatefulTruncatedNormal = _stateful("StatefulTruncatedNormal", _FLOATS)
StatefulUniformInt = _stateful("StatefulUniformInt", "dtype: {int32, int64} = DT_INT64",
                               ["minval: dtype", "maxval: dtype"])
StatefulUniformFullInt = _stateful("StatefulUniformFullInt",
                                   "dtype: {int32, int64, uint32, uint64} = DT_UINT64")
StatefulRandomBinomial = op_def(
    "StatefulRandomBinomial",
    inputs=["resource: resource", "algorithm: int64", "shape: S", "counts: T", "probs: T"],
    outputs=["output: dtype"],
    attrs=["S: {int32, int64}", "T: {half, float, double, int32, int64} = DT_DOUBLE",
           "dtype: {half, float, double, int32, int64} = DT_INT64"],
    shape=_shape, stateful=True, gradient_undefined=True)
