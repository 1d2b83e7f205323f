"""TensorFlow's key-and-counter random ops: the stateless V2 ops (StatelessRandomUniformV2,
NormalV2, TruncatedNormalV2, UniformIntV2, UniformFullIntV2), which draw from an explicit
Philox key (uint64 [1]) and counter (uint64 [2]) with an algorithm id; the ops that make
those inputs (StatelessRandomGetKeyCounterAlg from a seed, StatelessRandomGetAlg); and
RngReadAndSkip / RngSkip, which read a `tf.random.Generator`'s state and advance its
counter. TF 2.21's `tf.random.stateless_*` and Generator draws are built from them, so graphs
TensorFlow wrote (SavedModels, GraphDefs) use them; the kernels give TF's values bit for bit
(kernels/stateless_random_v2.py)."""

from __future__ import annotations

from ndflow.core.shapes import TensorShape
from ndflow.ops.op_def import op_def
from ndflow.ops.random import shape_from_tensor

_FLOATS = "dtype: {half, bfloat16, float, double} = DT_FLOAT"
_INTS = "dtype: {int32, int64, uint32, uint64}"
_KEY_COUNTER = ["key: uint64", "counter: uint64", "alg: int32"]


def _shape(ctx):
    return [shape_from_tensor(ctx, 0)]


def _v2(name: str, dtype_attr: str, extra_inputs=()):
    return op_def(name, inputs=["shape: Tshape", *_KEY_COUNTER, *extra_inputs],
                  outputs=["output: dtype"],
                  attrs=[dtype_attr, "Tshape: {int32, int64} = DT_INT32"], shape=_shape,
                  not_differentiable=True)


StatelessRandomUniformV2 = _v2("StatelessRandomUniformV2", _FLOATS)
StatelessRandomNormalV2 = _v2("StatelessRandomNormalV2", _FLOATS)
StatelessTruncatedNormalV2 = _v2("StatelessTruncatedNormalV2", _FLOATS)
StatelessRandomUniformIntV2 = _v2("StatelessRandomUniformIntV2", _INTS,
                                  ["minval: dtype", "maxval: dtype"])
StatelessRandomUniformFullIntV2 = _v2("StatelessRandomUniformFullIntV2",
                                      _INTS + " = DT_UINT64")


def _key_counter_alg_shape(ctx):
    seed = ctx.shapes[0]
    if seed.rank is not None and seed.as_list() not in ([2], [None]):
        raise ValueError(f"Shape must be [2] but is {seed}")
    return [TensorShape([1]), TensorShape([2]), TensorShape([])]


StatelessRandomGetKeyCounterAlg = op_def(
    "StatelessRandomGetKeyCounterAlg", inputs=["seed: Tseed"],
    outputs=["key: uint64", "counter: uint64", "alg: int32"],
    attrs=["Tseed: {int32, int64} = DT_INT64"], shape=_key_counter_alg_shape,
    gradient_undefined=True,
    doc="The Philox key, counter and algorithm the CPU's stateless ops derive from a seed.")

StatelessRandomGetAlg = op_def(
    "StatelessRandomGetAlg", outputs=["alg: int32"], shape=lambda ctx: [TensorShape([])],
    stateful=True, gradient_undefined=True,
    doc="The algorithm the device's stateless ops use (Philox on CPUs and GPUs).")

RngReadAndSkip = op_def(
    "RngReadAndSkip", inputs=["resource: resource", "alg: int32", "delta: uint64"],
    outputs=["value: int64"], shape=lambda ctx: [TensorShape([3])], stateful=True,
    gradient_undefined=True,
    doc="A Generator's state before advancing its counter by 256 calls per `delta`.")

RngSkip = op_def(
    "RngSkip", inputs=["resource: resource", "algorithm: int64", "delta: int64"],
    outputs=[], stateful=True, gradient_undefined=True,
    doc="Advances a Generator's counter by 256 calls per `delta` (TF1's form).")
