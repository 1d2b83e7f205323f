"""`tf.nn.dropout` (TF2, `rate`), `tf.compat.v1.nn.dropout` (`keep_prob`) and
`tf.nn.experimental.stateless_dropout` / `general_dropout`, composed as TF's `_dropout`:
x * 1/(1-rate), a uniform noise tensor (RandomUniform, StatelessRandomUniform or the caller's
sampler), keep where noise >= rate (SelectV2 against zero: a dropped inf or NaN is 0, as in
TF). The remapper fuses this form and its gradient into one pass each
(passes/dropout_fusion.py)."""

from __future__ import annotations

import numbers

from ndflow.core import context, dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.scopes import name_scope
from ndflow.core.shapes import TensorShape
from ndflow.core.tensor import Tensor
from ndflow.ops import arithmetic, array_core, comparison, stateless_random
from ndflow.ops import random as random_ops
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.cast import cast


def _noise_shape(x, noise_shape):
    if noise_shape is None:
        if x.shape.is_fully_defined():
            return x.shape.as_list()
        return array_core.shape(x)
    if isinstance(noise_shape, Tensor):
        return noise_shape
    try:
        ns = TensorShape(noise_shape)
    except (TypeError, ValueError):
        return noise_shape
    if x.shape.rank is not None and ns.rank == x.shape.rank:
        dims = [xd if nd is None and xd is not None else nd for xd, nd in
                zip(x.shape.as_list(), ns.as_list())]
        if all(d is not None for d in dims):
            return dims
    return noise_shape


def _dropout(x, rate, noise_shape, uniform_sampler, name, default_name) -> Tensor:
    """TF's `_dropout`, shared by the dropout functions: x * 1/(1-rate) where a uniform draw
    of `uniform_sampler(shape, dtype)` is >= rate, else 0 (SelectV2 against zero)."""
    with name_scope(name, default_name):
        is_number = isinstance(rate, numbers.Real)
        if is_number and (rate < 0 or rate >= 1):
            raise ValueError(f"`rate` must be a scalar tensor or a float in the range [0, 1). "
                             f"Received: rate={rate}")
        x = convert_to_tensor(x, name="x")
        if not x.dtype.is_floating:
            raise ValueError(f"`x.dtype` must be a floating point tensor as `x` will be "
                             f"scaled. Received: x_dtype={x.dtype.name}")
        if is_number and rate == 0:
            return x
        if is_number:
            scale = convert_to_tensor(1 / (1 - rate), dtype=x.dtype)
            ret = arithmetic.multiply(x, scale)
            rate_t = convert_to_tensor(rate, dtype=x.dtype)
        else:
            rate_t = convert_to_tensor(rate)
            if rate_t.shape.rank not in (None, 0):
                raise ValueError(f"Shape must be rank 0 but is rank {rate_t.shape.rank}")
            if rate_t.dtype is not x.dtype:
                rate_t = cast(rate_t, x.dtype, name="rate")
            one = convert_to_tensor(1, dtype=x.dtype)
            ret = arithmetic.real_div(x, arithmetic.subtract(one, rate_t))
        noise = uniform_sampler(shape=_noise_shape(x, noise_shape), dtype=x.dtype)
        keep_mask = comparison.greater_equal(noise, rate_t)
        zero = convert_to_tensor(0, dtype=x.dtype)
        out = arithmetic.select_v2(keep_mask, ret, zero)
        if not context.executing_eagerly() and hasattr(out, "set_shape"):
            out.set_shape(x.shape)
        return out


@tf_export("nn.dropout", v1=[])
def dropout(x, rate, noise_shape=None, seed: int | None = None, name: str | None = None) -> Tensor:
    """`tf.nn.dropout`: zeroes elements with probability `rate`, scales the rest by
    1 / (1 - rate)."""
    def sampler(shape, dtype):
        return random_ops.random_uniform(shape, seed=seed, dtype=dtype)
    return _dropout(x, rate, noise_shape, sampler, name, "dropout")


@tf_export("nn.experimental.stateless_dropout")
def stateless_dropout(x, rate, seed, rng_alg=None, noise_shape=None, name=None) -> Tensor:
    """`tf.nn.experimental.stateless_dropout`: `tf.nn.dropout` with the mask drawn by
    `tf.random.stateless_uniform` from `seed` (a shape-[2] integer tensor): the same seed
    gives the same mask (Keras 3's Dropout on TensorFlow)."""
    def sampler(shape, dtype):
        return stateless_random.stateless_uniform(shape, seed, dtype=dtype,
                                                  alg="auto_select" if rng_alg is None
                                                  else rng_alg)
    return _dropout(x, rate, noise_shape, sampler, name, "stateless_dropout")


@tf_export("nn.experimental.general_dropout")
def general_dropout(x, rate, uniform_sampler, noise_shape=None, name=None) -> Tensor:
    """`tf.nn.experimental.general_dropout`: dropout whose mask is drawn by
    `uniform_sampler(shape=..., dtype=...)`, a callable returning uniform values in [0, 1)."""
    return _dropout(x, rate, noise_shape, uniform_sampler, name, "dropout")


@tf_export(v1=["nn.dropout"])
def dropout_v1(x, keep_prob=None, noise_shape=None, seed: int | None = None,
               name: str | None = None, rate=None) -> Tensor:
    """`tf.compat.v1.nn.dropout`: `keep_prob` (deprecated) or `rate`."""
    if keep_prob is not None and rate is not None:
        raise ValueError("You cannot specify both 'rate' and 'keep_prob'.")
    if keep_prob is not None:
        if isinstance(keep_prob, numbers.Real) and not 0 < keep_prob <= 1:
            raise ValueError(f"`keep_prob` must be a floating point number in the range "
                             f"(0, 1]. Received: keep_prob={keep_prob}")
        rate = 1 - keep_prob if isinstance(keep_prob, numbers.Real) else \
            arithmetic.subtract(convert_to_tensor(1, dtype=dtypes.as_dtype(keep_prob.dtype)),
                              keep_prob)
    if rate is None:
        raise ValueError("You must provide a rate to dropout.")
    return dropout(x, rate, noise_shape=noise_shape, seed=seed, name=name)
