"""Random ops: RandomUniform, RandomStandardNormal, TruncatedNormal, RandomUniformInt, ...

All are stateful and carry TF's `seed`/`seed2` attrs (see `random_seed.get_seed`). The
public wrappers build the same graph as TensorFlow's `random_ops.py`: a `shape` constant,
the raw op, then `* stddev + mean` (or `* (max - min) + min`) in a `random_normal/`
(`random_uniform/` ...) name scope.
"""

from __future__ import annotations

import numpy as np

from ndflow.core import context, dtypes, scopes
from ndflow.core.api_export import tf_export
from ndflow.core.doc_tables import attach
from ndflow.core.shapes import TensorShape
from ndflow.core.tensor import Tensor
from ndflow.ops import arithmetic, random_docs
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.array_core import shape_operand
from ndflow.ops.op_def import op_def
from ndflow.ops.random_seed import op_seed_attrs

_FLOATS = "dtype: {half, bfloat16, float, double}"
_SHAPE_T = "T: {int32, int64}"
_SEEDS = ["seed: int = 0", "seed2: int = 0"]


def shape_from_tensor(ctx, i: int = 0) -> TensorShape:
    """The output shape described by the 1-D shape tensor input `i`: in a graph TF's
    partial shape (-1 an unknown dimension, as TF's shape refiner reads it); eagerly its
    value, every dimension >= 0."""
    s = ctx.shapes[i]
    if s.rank is not None and s.rank != 1:
        raise ValueError(f"Shape must be rank 1 but is rank {s.rank}")
    if context.executing_eagerly():
        v = ctx.value(i)
        dims = [] if v is None else [int(d) for d in np.asarray(v).reshape(-1)]
        if any(d < 0 for d in dims):
            raise ValueError(f"Dimension {min(dims)} must be >= 0")
        return TensorShape(dims if v is not None else None)
    if s.rank == 1 and s[0] is not None or ctx.value(i) is not None:
        return shape_operand(ctx, i)
    return TensorShape(None)


def _random_shape(ctx):
    return [shape_from_tensor(ctx, 0)]


def _uniform_int_shape(ctx):
    for i, what in ((1, "minval"), (2, "maxval")):
        r = ctx.shapes[i].rank
        if r is not None and r != 0:
            raise ValueError(f"Shape must be rank 0 but is rank {r} ({what} must be 0-D)")
    return [shape_from_tensor(ctx, 0)]


RandomUniform = op_def(
    "RandomUniform", inputs=["shape: T"], outputs=["output: dtype"],
    attrs=_SEEDS + [_FLOATS, _SHAPE_T], shape=_random_shape, not_differentiable=True,
    stateful=True, doc="Uniform values in [0, 1).")

RandomStandardNormal = op_def(
    "RandomStandardNormal", inputs=["shape: T"], outputs=["output: dtype"],
    attrs=_SEEDS + [_FLOATS, _SHAPE_T], shape=_random_shape, not_differentiable=True,
    stateful=True, doc="Normal values with mean 0 and standard deviation 1.")

TruncatedNormal = op_def(
    "TruncatedNormal", inputs=["shape: T"], outputs=["output: dtype"],
    attrs=_SEEDS + [_FLOATS, _SHAPE_T], shape=_random_shape, not_differentiable=True,
    stateful=True, doc="Standard normal values; those beyond 2 standard deviations are redrawn.")

RandomUniformInt = op_def(
    "RandomUniformInt", inputs=["shape: T", "minval: Tout", "maxval: Tout"],
    outputs=["output: Tout"], attrs=_SEEDS + ["Tout: {int32, int64}", _SHAPE_T],
    shape=_uniform_int_shape, gradient_undefined=True, stateful=True,
    doc="Integers uniform in [minval, maxval).")

RandomShuffle = op_def(
    "RandomShuffle", inputs=["value: T"], outputs=["output: T"], attrs=_SEEDS + ["T: type"],
    shape=lambda ctx: [ctx.shapes[0]], not_differentiable=True, stateful=True,
    doc="Shuffles a tensor along its first dimension.")


def name_scope(name, default: str):
    """A graph name scope (yields the scope prefix); names mean nothing in eager mode."""
    return scopes.name_scope(name, default)


def shape_tensor(shape) -> Tensor:
    """`shape` (list, tuple, TensorShape or 1-D int tensor) as an int32/int64 shape tensor."""
    if isinstance(shape, Tensor):
        return shape
    if isinstance(shape, TensorShape):
        if not shape.is_fully_defined():
            raise ValueError(f"Cannot convert a partially known TensorShape {shape} to a "
                             "Tensor.")
        shape = shape.as_list()
    if isinstance(shape, (int, np.integer)):
        shape = [shape]
    return convert_to_tensor(shape, dtype_hint=dtypes.int32, name="shape")


def _is_int(v, target: int) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v == target


@tf_export("random.uniform", v1=["random.uniform", "random_uniform"])
def random_uniform(shape, minval=0, maxval=None, dtype=dtypes.float32, seed=None,
                   name=None) -> Tensor:
    """`tf.random.uniform`: floats in [minval, maxval) (default [0, 1)), or ints."""
    dtype = dtypes.as_dtype(dtype)
    accepted = (dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64, dtypes.int32,
                dtypes.int64)
    if dtype not in accepted:
        raise ValueError(f"Argument `dtype` got invalid value {dtype}. Accepted dtypes are "
                         f"{accepted}.")
    if maxval is None:
        if dtype.is_integer:
            raise ValueError(f"Must specify maxval for integer dtype {dtype!r}")
        maxval = 1
    with name_scope(name, "random_uniform") as scope:
        shape_t = shape_tensor(shape)
        minval_is_zero, maxval_is_one = _is_int(minval, 0), _is_int(maxval, 1)
        if not minval_is_zero or not maxval_is_one or dtype.is_integer:
            minval = convert_to_tensor(minval, dtype=dtype, name="min")
            maxval = convert_to_tensor(maxval, dtype=dtype, name="max")
        seeds = op_seed_attrs(seed)
        if dtype.is_integer:
            return apply_op(RandomUniformInt, [shape_t, minval, maxval], seeds,
                            name=scope).outputs[0]
        rnd = apply_op(RandomUniform, [shape_t], dict(seeds, dtype=dtype)).outputs[0]
        if minval_is_zero:
            return rnd if maxval_is_one else rnd * maxval
        return arithmetic.add(rnd * (maxval - minval), minval, name=scope)


@tf_export("random.normal", v1=["random.normal", "random_normal"])
def random_normal(shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, seed=None,
                  name=None) -> Tensor:
    """`tf.random.normal`: values from N(mean, stddev**2)."""
    return _scaled_normal(RandomStandardNormal, shape, mean, stddev, dtype, seed, name,
                          "random_normal")


@tf_export("random.truncated_normal", v1=["random.truncated_normal", "truncated_normal"])
def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, seed=None,
                     name=None) -> Tensor:
    """`tf.random.truncated_normal`: N(mean, stddev**2) redrawn beyond 2 stddev."""
    return _scaled_normal(TruncatedNormal, shape, mean, stddev, dtype, seed, name,
                          "truncated_normal")


def _scaled_normal(op, shape, mean, stddev, dtype, seed, name, default_name: str) -> Tensor:
    """mean + stddev * (a standard normal draw of `op`), under TF's name scope."""
    dtype = dtypes.as_dtype(dtype)
    with name_scope(name, default_name):
        shape_t = shape_tensor(shape)
        mean_t = convert_to_tensor(mean, dtype=dtype, name="mean")
        stddev_t = convert_to_tensor(stddev, dtype=dtype, name="stddev")
        rnd = apply_op(op, [shape_t], dict(op_seed_attrs(seed), dtype=dtype)).outputs[0]
        return arithmetic.add(rnd * stddev_t, mean_t)


@tf_export("random.shuffle", v1=["random.shuffle", "random_shuffle"])
def random_shuffle(value, seed=None, name=None) -> Tensor:
    """`tf.random.shuffle`: a random permutation of `value` along its first dimension."""
    return apply_op(RandomShuffle, [value], op_seed_attrs(seed), name=name).outputs[0]


def _multinomial_shape(ctx):
    logits = ctx.shapes[0]
    if logits.rank not in (None, 2) and not context.executing_eagerly():
        raise ValueError(f"Shape must be rank 2 but is rank {logits.rank}")
    n = None if context.executing_eagerly() else ctx.value(1)
    rows = logits.dims[0] if logits.rank == 2 else None
    return [TensorShape([rows, None if n is None else int(n)])]


Multinomial = op_def(
    "Multinomial", inputs=["logits: T", "num_samples: int32"], outputs=["output: output_dtype"],
    attrs=_SEEDS + ["T: {half, bfloat16, float, double, int8, int16, int32, int64, uint8}",
                    "output_dtype: {int32, int64} = DT_INT64"],
    shape=_multinomial_shape, not_differentiable=True, stateful=True,
    doc="Class indices drawn from the categorical distributions of the rows of logits.")


@tf_export("random.categorical")
def categorical(logits, num_samples, dtype=None, seed=None, name=None) -> Tensor:
    """`tf.random.categorical`: `num_samples` class indices per row of `logits` (unnormalized
    log-probabilities), int64 unless `dtype` says otherwise."""
    with name_scope(name, "categorical"):
        logits = convert_to_tensor(logits, name="logits")
        attrs = dict(op_seed_attrs(seed), output_dtype=dtypes.as_dtype(dtype or dtypes.int64))
        return apply_op(Multinomial, [logits, convert_to_tensor(num_samples, dtypes.int32)],
                        attrs).outputs[0]


@tf_export(v1=["random.multinomial", "multinomial"])
def multinomial(logits, num_samples, seed=None, name=None, output_dtype=None) -> Tensor:
    """`tf.compat.v1.multinomial`: TF 1.x's name of `tf.random.categorical`."""
    return categorical(logits, num_samples, output_dtype, seed, name)


# TF2 names (`tf.random.uniform` ...).
uniform = random_uniform
normal = random_normal
shuffle = random_shuffle


attach(globals(), random_docs.DOCS)
