"""Fractional pooling: `tf.nn.fractional_max_pool` / `fractional_avg_pool` (TF2's and
`tf.compat.v1.nn`'s), the ops FractionalMaxPool / FractionalAvgPool (outputs: the pooled
value, then the row and column pooling sequences, int64) and their gradient ops
FractionalMaxPoolGrad / FractionalAvgPoolGrad.

The pooling sequences are TF's random boundaries 0 = a_0 < ... < a_n = length, drawn by the
kernel (kernels/nn_fractional_pool.py) from TF's Philox stream at (seed, seed2): the same
sequences as TensorFlow for the same seeds. As TF's, the ops are not stateful: each execution
starts a fresh generator at (seed, seed2), so seeded calls repeat their sequences; seed and
seed2 both 0 (with `deterministic=False`, the only seeds it allows) draw fresh ones per call.

The shape function is TF's, including its static shape of the sequences, `[rows]` / `[cols]`
(one less than the `rows + 1` / `cols + 1` values they hold at run time).
"""

from __future__ import annotations

import collections

import numpy as np

from ndflow.core import context, determinism, dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.shapes import TensorShape
from ndflow.core.tensor import Tensor
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.array_core import constant
from ndflow.ops.array_core import shape as shape_op
from ndflow.ops.nn_common import check_rank
from ndflow.ops.op_def import op_def
from ndflow.ops.random_seed import get_seed

_T = "T: {float, double, int32, int64}"
_POOL_ATTRS = ["pooling_ratio: list(float)", "pseudo_random: bool = false",
               "overlapping: bool = false", "deterministic: bool = false", "seed: int = 0",
               "seed2: int = 0", _T]
_POOL_OUTPUTS = ["output: T", "row_pooling_sequence: int64", "col_pooling_sequence: int64"]
_INT64_MIN = -(2**63)


def tf_float(v) -> str:
    """A float attr value as TF's StrCat prints it (six significant digits)."""
    return f"{float(np.float32(v)):.6g}"


def pooled_size(n: int, ratio) -> int:
    """TF's `floor(n / ratio)` in float32 (an int64; the x86 conversion's INT64_MIN where the
    quotient is not finite)."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        q = np.floor(np.float32(n) / np.float32(ratio))
    return int(q) if np.isfinite(q) and abs(float(q)) < 2.0**63 else _INT64_MIN


def _check_ratio_length(ctx) -> list:
    ratio = list(ctx.attrs["pooling_ratio"])
    if len(ratio) < 4:
        if context.executing_eagerly():
            raise ValueError(f"Length for attr 'pooling_ratio' of {len(ratio)} must be at "
                             "least minimum 4")
        raise ValueError(f"Attr 'pooling_ratio' of '{ctx.op_type}' Op passed list of length "
                         f"{len(ratio)} less than minimum 4.")
    return ratio


def _pool_shape(ctx):
    ratio = _check_ratio_length(ctx)
    if context.executing_eagerly():   # TF runs no shape function eagerly: the kernel checks
        return [TensorShape(None), TensorShape([None]), TensorShape([None])]
    x = check_rank(ctx.shapes[0], 4)
    if len(ratio) != 4:
        raise ValueError("pooling_ratio field must specify 4 dimensions")
    dims = []
    for i in range(4):
        d = x[i]
        if d is None:
            dims.append(None)
            continue
        size = pooled_size(d, ratio[i])
        if size < 0:
            raise ValueError(f"Size computed for dim {i} is negative: {size}")
        dims.append(size)
    for r in ratio:
        if np.float32(r) < 1:
            raise ValueError(f"pooling_ratio cannot be smaller than 1, got: {tf_float(r)}")
    # TF's shape function: the sequences as vectors of the pooled rows / cols.
    return [TensorShape(dims), TensorShape([dims[1]]), TensorShape([dims[2]])]


def _max_grad_shape(ctx):
    if context.executing_eagerly():   # the kernel's checks, as TF's
        return [TensorShape(None)]
    return [check_rank(ctx.shapes[0], 4)]


def _avg_grad_shape(ctx):
    s = ctx.shapes[0]
    if s.rank is not None and s.rank != 1:
        raise ValueError(f"Shape must be rank 1 but is rank {s.rank}")
    v = ctx.value(0)
    if v is not None:
        dims = [int(d) for d in np.asarray(v).reshape(-1)]
        if any(d < -1 for d in dims):
            raise ValueError(f"Dimension {min(dims)} must be >= -1")
        return [TensorShape([None if d == -1 else d for d in dims])]
    return [TensorShape([None] * 4)]


FractionalMaxPool = op_def(
    "FractionalMaxPool", inputs=["value: T"], outputs=_POOL_OUTPUTS, attrs=_POOL_ATTRS,
    shape=_pool_shape, doc="Max pooling over TF's random fractional pooling regions.")
FractionalAvgPool = op_def(
    "FractionalAvgPool", inputs=["value: T"], outputs=_POOL_OUTPUTS, attrs=_POOL_ATTRS,
    shape=_pool_shape, doc="Average pooling over TF's random fractional pooling regions.")
FractionalMaxPoolGrad = op_def(
    "FractionalMaxPoolGrad",
    inputs=["orig_input: T", "orig_output: T", "out_backprop: T",
            "row_pooling_sequence: int64", "col_pooling_sequence: int64"],
    outputs=["output: T"], attrs=["overlapping: bool = false", _T], shape=_max_grad_shape,
    gradient_undefined=True,
    doc="The gradient of FractionalMaxPool: out_backprop summed into each region's argmax.")
FractionalAvgPoolGrad = op_def(
    "FractionalAvgPoolGrad",
    inputs=["orig_input_tensor_shape: int64", "out_backprop: T",
            "row_pooling_sequence: int64", "col_pooling_sequence: int64"],
    outputs=["output: T"], attrs=["overlapping: bool = false", _T], shape=_avg_grad_shape,
    gradient_undefined=True,
    doc="The gradient of FractionalAvgPool: out_backprop spread evenly over each region.")


# The (output, row_pooling_sequence, col_pooling_sequence) namedtuples TF's wrappers return.
_FIELDS = ["output", "row_pooling_sequence", "col_pooling_sequence"]
FractionalMaxPoolResult = collections.namedtuple("FractionalMaxPool", _FIELDS)
FractionalAvgPoolResult = collections.namedtuple("FractionalAvgPool", _FIELDS)
_RESULTS = {"FractionalMaxPool": FractionalMaxPoolResult,
            "FractionalAvgPool": FractionalAvgPoolResult}


def _gen_pool(op, api: str, value, pooling_ratio, pseudo_random, overlapping, deterministic,
              seed, seed2, name):
    """The generated op function (gen_nn_ops.fractional_*_pool): its list check, then the op."""
    if isinstance(pooling_ratio, np.ndarray) and context.executing_eagerly():
        pooling_ratio = pooling_ratio.tolist()   # TF's eager fast path takes an array
    if not isinstance(pooling_ratio, (list, tuple)):
        raise TypeError(f"Expected list for 'pooling_ratio' argument to '{api}' Op, not "
                        f"{pooling_ratio!r}.")
    attrs = {"pooling_ratio": [float(r) for r in pooling_ratio],
             "pseudo_random": bool(pseudo_random), "overlapping": bool(overlapping),
             "deterministic": bool(deterministic), "seed": int(seed), "seed2": int(seed2)}
    x = convert_to_tensor(value, name="value")
    return _RESULTS[op.name](*apply_op(op, [x], attrs, name=name).outputs)


def _ratio_v2(pooling_ratio) -> list:
    """tf.nn.fractional_max_pool's checks, then TF's `_get_sequence(ratio, 2, 3)`."""
    if isinstance(pooling_ratio, (list, tuple)):
        if pooling_ratio[0] != 1.0 or pooling_ratio[-1] != 1.0:
            raise ValueError("`pooling_ratio` should have first and last elements with value "
                             f"1.0. Received: pooling_ratio={pooling_ratio}")
        for element in pooling_ratio:
            if element < 1.0:
                raise ValueError(f"`pooling_ratio` elements should be >= 1.0. Received: "
                                 f"pooling_ratio={pooling_ratio}")
    elif isinstance(pooling_ratio, (int, float)):
        if pooling_ratio < 1.0:
            raise ValueError(f"`pooling_ratio` should be >= 1.0. Received: "
                             f"pooling_ratio={pooling_ratio}")
    else:
        raise ValueError(f"`pooling_ratio` should be an int or a list of ints. Received: "
                         f"pooling_ratio={pooling_ratio}")
    value = list(pooling_ratio) if isinstance(pooling_ratio, (list, tuple)) else [pooling_ratio]
    if len(value) == 4:
        return value
    if len(value) == 1:
        value = value * 2
    elif len(value) != 2:
        raise ValueError(f"pooling_ratio should be of length 1, 2 or 4. Received: "
                         f"pooling_ratio={value} of length {len(value)}")
    return [1] + value + [1]


def _v2_seeds(api: str, seed) -> tuple:
    """(deterministic, seed, seed2) of the TF2 wrappers: seed 0 draws fresh seeds per call."""
    if seed == 0:
        if api == "tf.nn.fractional_max_pool" and determinism.enabled():
            raise ValueError(f"{api} requires a non-zero seed to be passed in when determinism "
                             f"is enabled, but got seed={seed}. Please pass in a non-zero seed, "
                             f'e.g. by passing "seed=1".')
        return False, 0, 0
    seed1, seed2 = get_seed(seed)
    return True, seed1, seed2


@tf_export("nn.fractional_max_pool", v1=[])
def fractional_max_pool_v2(value, pooling_ratio, pseudo_random: bool = False,
                           overlapping: bool = False, seed: int = 0,
                           name: str | None = None) -> tuple:
    """`tf.nn.fractional_max_pool`: (output, row_pooling_sequence, col_pooling_sequence).

    `pooling_ratio` is a number or a 1-, 2- or 4-list (first and last 1.0), each >= 1.0; a
    non-zero `seed` makes the pooling regions repeat (TF's deterministic op at
    `tf.random.get_seed(seed)`)."""
    ratio = _ratio_v2(pooling_ratio)
    deterministic, seed1, seed2 = _v2_seeds("tf.nn.fractional_max_pool", seed)
    return _gen_pool(FractionalMaxPool, "fractional_max_pool", value, ratio, pseudo_random,
                     overlapping, deterministic, seed1, seed2, name)


@tf_export("nn.fractional_avg_pool", v1=[])
def fractional_avg_pool_v2(value, pooling_ratio, pseudo_random: bool = False,
                           overlapping: bool = False, seed: int = 0,
                           name: str | None = None) -> tuple:
    """`tf.nn.fractional_avg_pool`: (output, row_pooling_sequence, col_pooling_sequence).

    `pooling_ratio` is a 4-list as TF's op takes it ([1.0, rows, cols, 1.0]); a non-zero
    `seed` makes the pooling regions repeat."""
    deterministic, seed1, seed2 = _v2_seeds("tf.nn.fractional_avg_pool", seed)
    return _gen_pool(FractionalAvgPool, "fractional_avg_pool", value, pooling_ratio,
                     pseudo_random, overlapping, deterministic, seed1, seed2, name)


@tf_export(v1=["nn.fractional_max_pool"])
def fractional_max_pool(value, pooling_ratio, pseudo_random: bool = False,
                        overlapping: bool = False, deterministic: bool = False, seed: int = 0,
                        seed2: int = 0, name: str | None = None) -> tuple:
    """`tf.compat.v1.nn.fractional_max_pool`: the op with its `deterministic`, `seed` and
    `seed2` attrs as given (seeds must be 0 unless `deterministic`)."""
    if determinism.enabled() and (not seed or not seed2 or not deterministic):
        raise ValueError(
            'tf.compat.v1.nn.fractional_max_pool requires "seed" and "seed2" to be non-zero and '
            '"deterministic" to be true when op determinism is enabled. Please pass in such '
            'values, e.g. by passing"seed=1, seed2=1, deterministic=True". Got: '
            f"seed={seed}, seed2={seed2}, deterministic={deterministic}")
    return _gen_pool(FractionalMaxPool, "fractional_max_pool", value, pooling_ratio,
                     pseudo_random, overlapping, deterministic, seed, seed2, name)


@tf_export(v1=["nn.fractional_avg_pool"])
def fractional_avg_pool(value, pooling_ratio, pseudo_random: bool = False,
                        overlapping: bool = False, deterministic: bool = False, seed: int = 0,
                        seed2: int = 0, name: str | None = None) -> tuple:
    """`tf.compat.v1.nn.fractional_avg_pool`: the op with its `deterministic`, `seed` and
    `seed2` attrs as given."""
    return _gen_pool(FractionalAvgPool, "fractional_avg_pool", value, pooling_ratio,
                     pseudo_random, overlapping, deterministic, seed, seed2, name)


def fractional_max_pool_grad(orig_input, orig_output, out_backprop, row_pooling_sequence,
                             col_pooling_sequence, overlapping: bool = False,
                             name: str | None = None) -> Tensor:
    """The FractionalMaxPoolGrad op (gen_nn_ops.fractional_max_pool_grad)."""
    inputs = [orig_input, orig_output, out_backprop, row_pooling_sequence, col_pooling_sequence]
    return apply_op(FractionalMaxPoolGrad, inputs, {"overlapping": bool(overlapping)},
                    name=name).outputs[0]


def fractional_avg_pool_grad(orig_input_tensor_shape, out_backprop, row_pooling_sequence,
                             col_pooling_sequence, overlapping: bool = False,
                             name: str | None = None) -> Tensor:
    """The FractionalAvgPoolGrad op (gen_nn_ops.fractional_avg_pool_grad)."""
    shape_t = convert_to_tensor(orig_input_tensor_shape, dtype=dtypes.int64)
    inputs = [shape_t, out_backprop, row_pooling_sequence, col_pooling_sequence]
    return apply_op(FractionalAvgPoolGrad, inputs, {"overlapping": bool(overlapping)},
                    name=name).outputs[0]


# -- gradients (TF's nn_grad.py) ----------------------------------------------------------


@FractionalMaxPool.def_grad
def _fractional_max_pool_grad(op, grad_0, _grad_1, _grad_2):
    """TF's _FractionalMaxPoolGrad: FractionalMaxPoolGrad on the op's input and outputs."""
    if grad_0 is None:
        return [None]
    return [fractional_max_pool_grad(op.inputs[0], op.outputs[0], grad_0, op.outputs[1],
                                     op.outputs[2], op.get_attr("overlapping"))]


@FractionalAvgPool.def_grad
def _fractional_avg_pool_grad(op, grad_0, _grad_1, _grad_2):
    """TF's _FractionalAvgPoolGrad: FractionalAvgPoolGrad on the input's shape (its static
    shape as TF's; the dynamic shape where that is partly unknown, which TF cannot take)."""
    if grad_0 is None:
        return [None]
    x = op.inputs[0]
    static = x.shape
    if static.is_fully_defined():
        orig_shape = constant(static.as_list(), dtype=dtypes.int64)
    else:
        orig_shape = shape_op(x, out_type=dtypes.int64)
    return [fractional_avg_pool_grad(orig_shape, grad_0, op.outputs[1], op.outputs[2],
                                     op.get_attr("overlapping"))]


__all__ = ["FractionalMaxPool", "FractionalAvgPool", "FractionalMaxPoolGrad",
           "FractionalAvgPoolGrad", "fractional_max_pool", "fractional_avg_pool",
           "fractional_max_pool_v2", "fractional_avg_pool_v2", "fractional_max_pool_grad",
           "fractional_avg_pool_grad"]
