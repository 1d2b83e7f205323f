"""`tf.random.stateless_binomial`, `tf.random.stateless_parameterized_truncated_normal` and
`tf.random.experimental.stateless_shuffle`: TensorFlow's ops StatelessRandomBinomial,
StatelessParameterizedTruncatedNormal and StatelessShuffle (with StatelessRandomGetKeyCounter,
which turns a seed into the key and counter StatelessShuffle takes). Their CPU kernels draw
TensorFlow's values bit for bit for the same seed (kernels/stateless_random_extra.py).

The binomial and the truncated normal broadcast their parameters against each other, and the
broadcast shape must be the trailing dimensions of `shape` exactly (TF's kernels check it at
run time); the leading dimensions are independent samples. As in TF, the truncated normal is
differentiable in its four parameters (the implicit reparameterization gradient), the
binomial is not differentiable, and the shuffle has no gradient (LookupError)."""

from __future__ import annotations

import enum

import numpy as np

from ndflow.core import dtypes, scopes
from ndflow.core.api_export import tf_export
from ndflow.core.shapes import TensorShape
from ndflow.core.tensor import Tensor
from ndflow.ops import arithmetic, array_core, bitwise, cast, math, math_special, reduction
from ndflow.ops.apply import apply_op, constant_value, convert_to_tensor
from ndflow.ops.array_fill import broadcast_gradient_args, ones_like, zeros
from ndflow.ops.array_misc import broadcast_dynamic_shape
from ndflow.ops.array_range import range as tf_range
from ndflow.ops.op_def import op_def
from ndflow.ops.random import shape_from_tensor

PHILOX, THREEFRY, AUTO_SELECT = 1, 2, 3   # TF's RNG algorithm ids


def _seed_shape(seed: TensorShape) -> None:
    """TF's check of a seed input at graph construction: a vector of 2."""
    if seed.rank is None:
        return
    if seed.rank != 1:
        raise ValueError(f"Shape must be rank 1 but is rank {seed.rank}")
    if seed[0] is not None and seed[0] != 2:
        raise ValueError(f"Dimension must be 2 but is {seed[0]}")


def _sampled_shape(ctx):
    _seed_shape(ctx.shapes[1])
    return [shape_from_tensor(ctx, 0)]


StatelessRandomBinomial = op_def(
    "StatelessRandomBinomial",
    inputs=["shape: S", "seed: Tseed", "counts: T", "probs: T"], outputs=["output: dtype"],
    attrs=["S: {int32, int64}", "Tseed: {int32, int64} = DT_INT64",
           "T: {half, float, double, int32, int64} = DT_DOUBLE",
           "dtype: {half, float, double, int32, int64} = DT_INT64"],
    shape=_sampled_shape, not_differentiable=True,
    doc="Binomial(counts, probs) samples of shape `shape`, a function of `seed` alone.")

StatelessParameterizedTruncatedNormal = op_def(
    "StatelessParameterizedTruncatedNormal",
    inputs=["shape: S", "seed: Tseed", "means: dtype", "stddevs: dtype", "minvals: dtype",
            "maxvals: dtype"], outputs=["output: dtype"],
    attrs=["S: {int32, int64}", "Tseed: {int32, int64} = DT_INT64",
           "dtype: {half, float, double}"],
    shape=_sampled_shape,
    doc="Normal(means, stddevs) samples within [minvals, maxvals], a function of `seed`.")


def _ndtr(x: Tensor) -> Tensor:
    """TF's _Ndtr: the standard normal CDF from erf near 0 and erfc in the tails."""
    half_sqrt_2 = convert_to_tensor(0.5 * np.sqrt(2.0), dtype=x.dtype)
    w = x * half_sqrt_2
    z = math.abs(w)
    y = arithmetic.where(z < half_sqrt_2, 1.0 + math.erf(w),
                         arithmetic.where(w > 0.0, 2.0 - math_special.erfc(z),
                                          math_special.erfc(z)))
    return 0.5 * y


@StatelessParameterizedTruncatedNormal.def_grad
def _truncated_normal_grad(op, grad):
    """TF's _StatelessParameterizedTruncatedNormalGrad: the implicit reparameterization
    gradients of the samples in the four parameters (Figurnov et al., 2018), summed over the
    sample dimensions and each parameter's broadcast dimensions."""
    shape_t, _, mean, stddev, minval, maxval = op.inputs
    sample = op.outputs[0]
    minval_std = (minval - mean) / stddev
    maxval_std = (maxval - mean) / stddev
    sample_std = (sample - mean) / stddev
    cdf = (_ndtr(sample_std) - _ndtr(minval_std)) / (_ndtr(maxval_std) - _ndtr(minval_std))
    info = np.finfo(mean.dtype.np_dtype)
    cdf = math.clip_by_value(cdf, info.tiny, 1 - info.eps)   # log's argument above 0
    square = sample_std ** 2
    partials = [ones_like(sample_std), sample_std,
                math.exp(0.5 * (square - minval_std ** 2) + math.log1p(-cdf)),
                math.exp(0.5 * (square - maxval_std ** 2) + arithmetic.log(cdf))]
    params = [mean, stddev, minval, maxval]
    shapes = [array_core.shape(p) for p in params]
    batch = broadcast_dynamic_shape(shapes[0], shapes[1])
    batch = broadcast_dynamic_shape(shapes[2], batch)
    batch = broadcast_dynamic_shape(shapes[3], batch)
    extra = tf_range(array_core.size(shape_t) - array_core.size(batch))
    grads = []
    for partial, param_shape in zip(partials, shapes):
        g = reduction.reduce_sum(grad * partial, axis=extra)
        axes = broadcast_gradient_args(batch, param_shape)[1]
        grads.append(array_core.reshape(reduction.reduce_sum(g, axis=axes, keepdims=True),
                                        param_shape))
    return [None, None, *grads]


def _key_counter_shape(ctx):
    _seed_shape(ctx.shapes[0])
    return [TensorShape([1]), TensorShape([2])]


StatelessRandomGetKeyCounter = op_def(
    "StatelessRandomGetKeyCounter", inputs=["seed: Tseed"],
    outputs=["key: uint64", "counter: uint64"], attrs=["Tseed: {int32, int64} = DT_INT64"],
    shape=_key_counter_shape, gradient_undefined=True,
    doc="The Philox key and counter the CPU's stateless ops derive from a seed.")

StatelessShuffle = op_def(
    "StatelessShuffle", inputs=["value: T", "key: uint64", "counter: uint64", "alg: int32"],
    outputs=["output: T"], attrs=["T: type"], shape=lambda ctx: [ctx.shapes[0]],
    gradient_undefined=True,
    doc="`value` shuffled along its first dimension, a function of key, counter and alg.")


def _shape_tensor(shape) -> Tensor:
    """TF's shape_util.shape_tensor: a list or tuple (empty: int32) or a tensor, unchanged in
    rank (a scalar stays a scalar, which the kernels refuse)."""
    if isinstance(shape, TensorShape):
        shape = shape.as_list()
    if isinstance(shape, (tuple, list)):
        if not shape:
            return convert_to_tensor(shape, dtype=dtypes.int32, name="shape")
        shape = [getattr(d, "value", d) for d in shape]
    return convert_to_tensor(shape, name="shape")


@tf_export("random.stateless_binomial")
def stateless_binomial(shape, seed, counts, probs, output_dtype=dtypes.int32, name=None):
    """`tf.random.stateless_binomial`: Binomial(counts, probs) samples of shape `shape` (counts
    and probs broadcast together to its trailing dimensions), a function of `seed` (two
    integers) only: TensorFlow's values for the same seed."""
    with scopes.name_scope(name, "stateless_random_binomial"):
        shape_t = _shape_tensor(shape)
        probs = convert_to_tensor(probs, dtype_hint=dtypes.float32, name="probs")
        counts = convert_to_tensor(counts, dtype_hint=probs.dtype, name="counts")
        return apply_op(StatelessRandomBinomial,
                        [shape_t, convert_to_tensor(seed, name="seed"), counts, probs],
                        {"dtype": dtypes.as_dtype(output_dtype)}).outputs[0]


@tf_export("random.stateless_parameterized_truncated_normal")
def stateless_parameterized_truncated_normal(shape, seed, means=0.0, stddevs=1.0, minvals=-2.0,
                                             maxvals=2.0, name=None):
    """`tf.random.stateless_parameterized_truncated_normal`: Normal(means, stddevs) samples
    restricted to [minvals, maxvals] (the four broadcast together to the trailing dimensions
    of `shape`), a function of `seed` only: TensorFlow's values for the same seed."""
    with scopes.name_scope(name, "stateless_parameterized_truncated_normal"):
        shape_t = _shape_tensor(shape)
        params = [convert_to_tensor(v, name=n) for v, n in
                  ((means, "means"), (stddevs, "stddevs"), (minvals, "minvals"),
                   (maxvals, "maxvals"))]
        return apply_op(StatelessParameterizedTruncatedNormal,
                        [shape_t, convert_to_tensor(seed, name="seed"), *params]).outputs[0]


def unsupported_alg_message(alg) -> str:
    if isinstance(alg, int):
        return (f"Argument `alg` got unsupported value {alg}. Supported values are {PHILOX} "
                f"for the Philox algorithm, {THREEFRY} for the ThreeFry algorithm, and "
                f"{AUTO_SELECT} for auto-selection.")
    return (f"Argument `alg` got unsupported value {alg}. Supported values are philox for the "
            "Philox algorithm, threefry for the ThreeFry algorithm, and auto_select for "
            "auto-selection.")


def convert_alg_to_int(alg):
    """TF's random_ops_util.convert_alg_to_int (None: auto-select)."""
    if alg is None:
        return AUTO_SELECT
    if isinstance(alg, bool):
        raise TypeError(f"Can't convert argument `alg` (of value {alg} and type {type(alg)}) "
                        "to int.")
    if isinstance(alg, int):
        return alg
    if isinstance(alg, enum.Enum):   # tf.random.Algorithm
        return alg.value
    if isinstance(alg, Tensor):
        return alg
    if isinstance(alg, str):
        canon = alg.strip().lower().replace("-", "").replace("_", "")
        ids = {"philox": PHILOX, "threefry": THREEFRY, "autoselect": AUTO_SELECT}
        if canon in ids:
            return ids[canon]
        raise ValueError(unsupported_alg_message(alg))
    raise TypeError(f"Can't convert argument `alg` (of value {alg} and type {type(alg)}) to "
                    "int.")


def key_counter_alg(seed, alg):
    """TF's get_key_counter_alg: the (key, counter, alg) of the V2 stateless ops for `seed`.
    Philox and auto-select scramble the seed (StatelessRandomGetKeyCounter, the same words
    TF's Python scrambling of 'philox' gives); ThreeFry packs it into the key."""
    alg = convert_alg_to_int(alg)
    if isinstance(alg, Tensor):   # TF compares the tensor with the ids: known values only
        value = constant_value(alg)
        if value is None:
            raise ValueError(unsupported_alg_message(alg))
        alg = int(value)
    if alg in (PHILOX, AUTO_SELECT):
        key, counter = apply_op(StatelessRandomGetKeyCounter,
                                [convert_to_tensor(seed, name="seed")]).outputs
    elif alg == THREEFRY:
        words = cast.cast(convert_to_tensor(seed, name="seed"), dtypes.uint32)
        low = cast.cast(words[0], dtypes.uint64)
        high = bitwise.left_shift(cast.cast(words[1], dtypes.uint64),
                                      convert_to_tensor(32, dtypes.uint64))
        key = array_core.reshape(bitwise.bitwise_or(low, high), [1])
        counter = zeros([1], dtypes.uint64)
    else:
        raise ValueError(unsupported_alg_message(alg))
    return key, counter, convert_to_tensor(alg, dtypes.int32, name="alg")


@tf_export("random.experimental.stateless_shuffle")
def stateless_shuffle(value, seed, alg="auto_select", name=None):
    """`tf.random.experimental.stateless_shuffle`: `value` shuffled along its first dimension
    by a permutation that `seed` (two integers) alone chooses: TensorFlow's for the same
    seed."""
    with scopes.name_scope(name, "stateless_shuffle"):
        key, counter, alg = key_counter_alg(seed, alg)
        return apply_op(StatelessShuffle, [value, key, counter, alg]).outputs[0]
