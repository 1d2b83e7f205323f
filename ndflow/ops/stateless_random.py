"""Stateless random ops (`tf.random.stateless_*`): the values are a function of the shape and
a `seed` of two integers only, so the same seed gives the same values in every run, eagerly
and in graphs — TensorFlow's Philox streams (kernels/philox.py): the same numbers as
TensorFlow for uniform, normal and integer draws (the truncated normal's are ndflow's)."""

from __future__ import annotations

from ndflow.core import dtypes, scopes
from ndflow.core.api_export import tf_export
from ndflow.core.doc_tables import attach
from ndflow.core.shapes import TensorShape
from ndflow.core.tensor import Tensor
from ndflow.ops import arithmetic, array_core, stateless_random_docs
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.op_def import op_def
from ndflow.ops.random import shape_from_tensor, shape_tensor

_FLOATS = "dtype: {half, bfloat16, float, double} = DT_FLOAT"
_STATELESS = ["T: {int32, int64} = DT_INT32", "Tseed: {int32, int64} = DT_INT64"]


def _shape(ctx):
    seed = ctx.shapes[1]
    if seed.rank is not None and seed.as_list() not in ([2], [None]):
        raise ValueError(f"Shape must be [2] but is {seed}")
    return [shape_from_tensor(ctx, 0)]


def _stateless(name: str, extra_inputs=(), dtype_attr=_FLOATS):
    return op_def(name, inputs=["shape: T", "seed: Tseed", *extra_inputs],
                  outputs=["output: dtype"], attrs=[dtype_attr, *_STATELESS], shape=_shape,
                  not_differentiable=True)


StatelessRandomUniform = _stateless("StatelessRandomUniform")
StatelessRandomNormal = _stateless("StatelessRandomNormal")
StatelessTruncatedNormal = _stateless("StatelessTruncatedNormal")
StatelessRandomUniformInt = _stateless("StatelessRandomUniformInt",
                                       ["minval: dtype", "maxval: dtype"],
                                       "dtype: {int32, int64}")

StatelessRandomUniformFullInt = _stateless(
    "StatelessRandomUniformFullInt", dtype_attr="dtype: {int32, int64, uint32, uint64} = DT_UINT64")


def stateless_seed(seed) -> Tensor:
    seed = convert_to_tensor(seed, dtype_hint=dtypes.int64, name="seed")
    if seed.dtype not in (dtypes.int32, dtypes.int64):
        raise TypeError(f"`seed` must be an int32 or int64 tensor, got {seed.dtype.name}")
    return seed


@tf_export("random.stateless_uniform")
def stateless_uniform(shape, seed, minval=0, maxval=None, dtype=dtypes.float32, name=None,
                      alg="auto_select") -> Tensor:
    """`tf.random.stateless_uniform`: values in [minval, maxval) determined by `seed`."""
    dtype = dtypes.as_dtype(dtype)
    with scopes.name_scope(name, "stateless_random_uniform"):
        shape_t, seed = shape_tensor(shape), stateless_seed(seed)
        if dtype.is_integer:
            if minval is None and maxval is None:   # every value of the dtype (TF's rule)
                return apply_op(StatelessRandomUniformFullInt, [shape_t, seed],
                                {"dtype": dtype}).outputs[0]
            if maxval is None:
                raise ValueError("Must specify maxval for integer dtype")
            return apply_op(StatelessRandomUniformInt,
                            [shape_t, seed, convert_to_tensor(minval, dtype=dtype),
                             convert_to_tensor(maxval, dtype=dtype)], {"dtype": dtype}
                            ).outputs[0]
        maxval = 1 if maxval is None else maxval
        rnd = apply_op(StatelessRandomUniform, [shape_t, seed], {"dtype": dtype}).outputs[0]
        lo = convert_to_tensor(minval, dtype=dtype, name="min")
        hi = convert_to_tensor(maxval, dtype=dtype, name="max")
        return arithmetic.add(rnd * (hi - lo), lo)


def _scaled(op, shape, seed, mean, stddev, dtype, name, default):
    dtype = dtypes.as_dtype(dtype)
    with scopes.name_scope(name, default):
        rnd = apply_op(op, [shape_tensor(shape), stateless_seed(seed)], {"dtype": dtype}).outputs[0]
        return arithmetic.add(rnd * convert_to_tensor(stddev, dtype=dtype, name="stddev"),
                              convert_to_tensor(mean, dtype=dtype, name="mean"))


@tf_export("random.stateless_normal")
def stateless_normal(shape, seed, mean=0.0, stddev=1.0, dtype=dtypes.float32, name=None,
                     alg="auto_select") -> Tensor:
    """`tf.random.stateless_normal`: N(mean, stddev**2) values determined by `seed`."""
    return _scaled(StatelessRandomNormal, shape, seed, mean, stddev, dtype, name,
                   "stateless_random_normal")


@tf_export("random.stateless_truncated_normal")
def stateless_truncated_normal(shape, seed, mean=0.0, stddev=1.0, dtype=dtypes.float32,
                               name=None, alg="auto_select") -> Tensor:
    """`tf.random.stateless_truncated_normal`: normal values within 2 stddev, by `seed`."""
    return _scaled(StatelessTruncatedNormal, shape, seed, mean, stddev, dtype, name,
                   "stateless_truncated_normal")


@tf_export("random.split", "random.experimental.stateless_split")
def split(seed, num=2, alg="auto_select") -> Tensor:
    """`tf.random.split`: `num` new seeds (a [num, 2] tensor of `seed`'s dtype) drawn from
    `seed`, as TF computes them (full-range integers of its stateless stream)."""
    seed = stateless_seed(convert_to_tensor(seed, name="seed"))   # Python ints: int32, as TF
    return stateless_uniform([num, 2], seed, minval=None, maxval=None, dtype=seed.dtype,
                             alg=alg)


@tf_export("random.fold_in", "random.experimental.stateless_fold_in")
def fold_in(seed, data, alg="auto_select") -> Tensor:
    """`tf.random.fold_in`: a new seed `[draw from seed, data]` (TF's construction)."""
    data = convert_to_tensor(data, name="data")
    first = stateless_uniform([], stateless_seed(convert_to_tensor(seed, name="seed")),
                              minval=None, maxval=None,
                              dtype=data.dtype, alg=alg)
    return array_core.stack([first, data])


def _stateless_multinomial_shape(ctx):
    logits, seed = ctx.shapes[0], ctx.shapes[2]
    if seed.rank is not None and seed.as_list() not in ([2], [None]):
        raise ValueError(f"Shape must be [2] but is {seed}")
    if logits.rank not in (None, 2):
        raise ValueError(f"Shape must be rank 2 but is rank {logits.rank}")
    n = ctx.value(1)
    rows = logits.dims[0] if logits.rank == 2 else None
    return [TensorShape([rows, None if n is None else int(n)])]


StatelessMultinomial = op_def(
    "StatelessMultinomial", inputs=["logits: T", "num_samples: int32", "seed: Tseed"],
    outputs=["output: output_dtype"],
    attrs=["T: {half, bfloat16, float, double, int8, int16, int32, int64, uint8}",
           "Tseed: {int32, int64} = DT_INT64", "output_dtype: {int32, int64} = DT_INT64"],
    shape=_stateless_multinomial_shape, not_differentiable=True,
    doc="Class indices drawn from the rows of logits, a function of `seed` alone.")


def _stateless_categorical(logits, num_samples, seed, dtype) -> Tensor:
    logits = convert_to_tensor(logits, name="logits")
    dtype = dtypes.as_dtype(dtype) if dtype else dtypes.int64
    if dtype not in (dtypes.int32, dtypes.int64):
        raise ValueError(f"Argument `dtype` got invalid value {dtype}. Accepted dtypes are "
                         f"({dtypes.int32}, {dtypes.int64}).")
    return apply_op(StatelessMultinomial,
                    [logits, convert_to_tensor(num_samples, dtypes.int32), stateless_seed(seed)],
                    {"output_dtype": dtype}).outputs[0]


@tf_export("random.stateless_categorical")
def stateless_categorical(logits, num_samples, seed, dtype=dtypes.int64, name=None) -> Tensor:
    """`tf.random.stateless_categorical`: `tf.random.categorical`'s draws as a function of
    `seed` (two integers) only: TensorFlow's values for the same seed."""
    with scopes.name_scope(name, "stateless_categorical"):
        return _stateless_categorical(logits, num_samples, seed, dtype)


@tf_export(v1=["random.stateless_multinomial"])
def stateless_multinomial(logits, num_samples, seed, output_dtype=dtypes.int64,
                          name=None) -> Tensor:
    """TF 1.x's name of `tf.random.stateless_categorical`."""
    with scopes.name_scope(name, "stateless_multinomial"):
        return _stateless_categorical(logits, num_samples, seed, output_dtype)


attach(globals(), stateless_random_docs.DOCS)
