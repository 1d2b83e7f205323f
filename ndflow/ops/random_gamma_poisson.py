"""`tf.random.gamma` and `tf.random.poisson` (seeded by the graph/op seeds) and their stateless
forms: TensorFlow's ops RandomGamma (differentiable in alpha through RandomGammaGrad, the
implicit reparameterization gradient), RandomPoissonV2, StatelessRandomGammaV2 and
StatelessRandomPoisson. The samplers are ATen's (the values are ndflow's, not TensorFlow's
streams)."""

from __future__ import annotations

import numpy as np

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.shapes import TensorShape, broadcast_shapes
from ndflow.core.tensor import Tensor
from ndflow.ops import arithmetic
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.array_core import shape as shape_of
from ndflow.ops.array_fill import broadcast_to
from ndflow.ops.op_def import op_def
from ndflow.ops.random import name_scope, shape_from_tensor, shape_tensor
from ndflow.ops.random_seed import op_seed_attrs
from ndflow.ops.stateless_random import stateless_seed

_SEEDS = ["seed: int = 0", "seed2: int = 0"]


def _sample_then_param_shape(ctx):
    """shape ++ the parameter's shape (RandomGamma, RandomPoissonV2)."""
    sample, param = shape_from_tensor(ctx, 0), ctx.shapes[1]
    if sample.rank is None or param.rank is None:
        return [TensorShape(None)]
    return [TensorShape(sample.as_list() + param.as_list())]


def _stateless_shape(ctx):
    seed = ctx.shapes[1]
    if seed.rank is not None and seed.as_list() not in ([2], [None]):
        raise ValueError(f"Shape must be [2] but is {seed}")
    return [shape_from_tensor(ctx, 0)]


RandomGamma = op_def(
    "RandomGamma", inputs=["shape: S", "alpha: T"], outputs=["output: T"],
    attrs=_SEEDS + ["S: {int32, int64}", "T: {half, float, double}"],
    shape=_sample_then_param_shape, stateful=True,
    doc="Gamma(alpha, 1) samples of shape `shape ++ alpha.shape`.")

RandomGammaGrad = op_def(
    "RandomGammaGrad", inputs=["alpha: T", "sample: T"], outputs=["output: T"],
    attrs=["T: {float, double}"],
    shape=lambda ctx: [broadcast_shapes(ctx.shapes[0], ctx.shapes[1])],
    gradient_undefined=True, doc="d sample / d alpha of Gamma(alpha, 1) samples.")

RandomPoissonV2 = op_def(
    "RandomPoissonV2", inputs=["shape: S", "rate: R"], outputs=["output: dtype"],
    attrs=_SEEDS + ["S: {int32, int64}", "R: {half, float, double, int32, int64} = DT_DOUBLE",
                    "dtype: {half, float, double, int32, int64} = DT_INT64"],
    shape=_sample_then_param_shape, stateful=True, gradient_undefined=True,
    doc="Poisson(rate) samples of shape `shape ++ rate.shape`.")

StatelessRandomGammaV2 = op_def(
    "StatelessRandomGammaV2", inputs=["shape: T", "seed: Tseed", "alpha: dtype"],
    outputs=["output: dtype"],
    attrs=["dtype: {half, float, double}", "T: {int32, int64}",
           "Tseed: {int32, int64} = DT_INT64"], shape=_stateless_shape,
    doc="Gamma(alpha, 1) samples of shape `shape` (alpha broadcast to it).")

StatelessRandomPoisson = op_def(
    "StatelessRandomPoisson", inputs=["shape: T", "seed: Tseed", "lam: Rtype"],
    outputs=["output: dtype"],
    attrs=["Rtype: {half, float, double, int32, int64}",
           "dtype: {half, float, double, int32, int64}", "T: {int32, int64}",
           "Tseed: {int32, int64} = DT_INT64"], shape=_stateless_shape,
    not_differentiable=True, doc="Poisson(lam) samples of shape `shape`.")


def _tiny_floor(x: Tensor) -> Tensor:
    """TF keeps gamma samples at least the dtype's smallest normal number."""
    return arithmetic.maximum(convert_to_tensor(np.finfo(x.dtype.np_dtype).tiny, x.dtype), x)


@tf_export("random.gamma", v1=["random.gamma", "random_gamma"])
def random_gamma(shape, alpha, beta=None, dtype=dtypes.float32, seed=None, name=None):
    """`tf.random.gamma`: samples of Gamma(alpha, beta) (rate `beta`), shaped
    `shape ++ broadcast(alpha, beta).shape`; differentiable in alpha and beta."""
    dtype = dtypes.as_dtype(dtype)
    with name_scope(name, "random_gamma"):
        shape_t = convert_to_tensor(shape, dtypes.int32, name="shape")
        alpha = convert_to_tensor(alpha, dtype, name="alpha")
        beta = convert_to_tensor(1 if beta is None else beta, dtype, name="beta")
        params = broadcast_shapes(alpha.shape, beta.shape)
        target = params.as_list() if params.is_fully_defined() else \
            _dynamic_broadcast(alpha, beta)
        alpha_b = broadcast_to(alpha, target)
        sample = apply_op(RandomGamma, [shape_t, alpha_b], op_seed_attrs(seed)).outputs[0]
        return _tiny_floor(sample / beta)


def _dynamic_broadcast(a: Tensor, b: Tensor) -> Tensor:
    return shape_of(arithmetic.add(arithmetic.multiply(a, 0), arithmetic.multiply(b, 0)))


def _poisson(shape, lam, dtype, seed, name):
    dtype = dtypes.as_dtype(dtype)
    with name_scope(name, "random_poisson"):
        shape_t = convert_to_tensor(shape, dtypes.int32, name="shape")
        rate = convert_to_tensor(lam, dtype_hint=dtypes.float32, name="lam")
        return apply_op(RandomPoissonV2, [shape_t, rate],
                        dict(op_seed_attrs(seed), dtype=dtype)).outputs[0]


@tf_export("random.poisson", v1=[])
def random_poisson_v2(shape, lam, dtype=dtypes.float32, seed=None, name=None):
    """`tf.random.poisson`: Poisson(lam) samples shaped `shape ++ lam.shape`."""
    return _poisson(shape, lam, dtype, seed, name)


@tf_export(v1=["random.poisson", "random_poisson"])
def random_poisson(lam, shape, dtype=dtypes.float32, seed=None, name=None):
    """TF1's `tf.random.poisson(lam, shape, ...)` (the arguments in TF1's order)."""
    return _poisson(shape, lam, dtype, seed, name)


@tf_export("random.stateless_gamma")
def stateless_gamma(shape, seed, alpha, beta=None, dtype=dtypes.float32, name=None):
    """`tf.random.stateless_gamma`: Gamma(alpha, beta) samples of exactly `shape` (alpha and
    beta broadcast to it), a function of `seed` only."""
    dtype = dtypes.as_dtype(dtype)
    with name_scope(name, "stateless_random_gamma"):
        shape_t = shape_tensor(shape)
        alpha = convert_to_tensor(alpha, dtype, name="alpha")
        beta = convert_to_tensor(1 if beta is None else beta, dtype, name="beta")
        alpha_b = broadcast_to(alpha, shape_t)
        sample = apply_op(StatelessRandomGammaV2, [shape_t, stateless_seed(seed), alpha_b],
                          {"dtype": dtype}).outputs[0]
        return _tiny_floor(sample / beta)


@tf_export("random.stateless_poisson")
def stateless_poisson(shape, seed, lam, dtype=dtypes.int32, name=None):
    """`tf.random.stateless_poisson`: Poisson(lam) samples of exactly `shape`."""
    with name_scope(name, "stateless_random_poisson"):
        shape_t = shape_tensor(shape)
        lam = convert_to_tensor(lam, dtype_hint=dtypes.float32, name="lam")
        return apply_op(StatelessRandomPoisson, [shape_t, stateless_seed(seed), lam],
                        {"dtype": dtypes.as_dtype(dtype)}).outputs[0]
