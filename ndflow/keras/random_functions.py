"""`tf.keras.random` (Keras 3): seeded draws and `SeedGenerator`. As Keras on the TensorFlow
backend, every draw is a stateless op keyed by a seed pair: an int seed s gives [s, 0] (the
same values on every call, and the same values as Keras/TF for normal, uniform, randint,
dropout and shuffle, whose Philox streams ndflow reproduces); a SeedGenerator gives its state
and advances it; None uses a global SeedGenerator. (Not named random.py: a module named like
a public namespace becomes that namespace.)"""

from __future__ import annotations

import random as python_random

import numpy as np

from ndflow.core import scopes
from ndflow.core.api_export import keras_export
from ndflow.core.doc_tables import attach
from ndflow.core.tensor import Tensor
from ndflow.keras import global_config, random_docs
from ndflow.keras.ops import dtype_rules as rules
from ndflow.ops import (
    apply,
    arithmetic,
    array_core,
    array_fill,
    comparison,
    gather_batch,
    math_cumulative,
    nn_dropout,
    random_gamma_poisson,
    reduction,
    sort,
    stateless_random,
    variables,
)
from ndflow.ops.cast import cast

_GLOBAL = {"generator": None}
_NAMES: dict = {}


@keras_export("keras.random.SeedGenerator")
class SeedGenerator:
    """A random state for reproducible draws: each `keras.random` call seeded with it gets
    a new seed pair and advances the state, so repeated calls differ while a run started
    from the same seed repeats them all.

    The state is a non-trainable int64 variable `[seed, counter]` (saved with the layer
    or model that owns the generator).

    Args:
      seed: the initial seed (an int); None picks a random one.
      name: the generator's name.
      **kwargs: `backend` is accepted and ignored.

    Raises:
      ValueError: a non-int `seed`, or other keyword arguments.

    Example:

    >>> gen = tf.keras.random.SeedGenerator(42)
    >>> a = tf.keras.random.uniform((2,), seed=gen)
    >>> b = tf.keras.random.uniform((2,), seed=gen)
    >>> bool(tf.reduce_all(a == b))
    False
    """

    def __init__(self, seed=None, name=None, **kwargs):
        kwargs.pop("backend", None)
        if kwargs:
            raise ValueError(f"Unrecognized keyword arguments: {kwargs}")
        if name is None:
            n = _NAMES.get("seed_generator", 0)
            _NAMES["seed_generator"] = n + 1
            name = "seed_generator" if n == 0 else f"seed_generator_{n}"
        self.name = name
        self._initial_seed = seed
        if seed is None:
            seed = python_random.randint(1, int(1e9))
        if not isinstance(seed, int):
            raise ValueError(f"Argument `seed` must be an integer. Received: seed={seed}")
        with scopes.init_scope():   # created in a tf.function: still a program-wide state
            self.state = variables.Variable(np.array([seed, 0], np.int64), trainable=False,
                                            name="seed_generator_state")

    def next(self, ordered=True):
        value = self.state.read_value() * 1
        if ordered:
            self.state.assign_add(rules.to_tensor([0, 1], "int64"))
        else:
            self.state.assign(arithmetic.floormod((self.state.read_value() + 1) * 5387,
                                                  933199))
        return value

    def get_config(self):
        return {"seed": self._initial_seed, "name": self.name}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


def global_seed_generator() -> SeedGenerator:
    if _GLOBAL["generator"] is None:
        with scopes.init_scope():
            _GLOBAL["generator"] = SeedGenerator()
    return _GLOBAL["generator"]


def draw_seed(seed):
    """The int32 seed pair of a draw (Keras' draw_seed, then its int32 cast)."""
    if isinstance(seed, SeedGenerator):
        pair = seed.next()
    elif isinstance(seed, int) and not isinstance(seed, bool):
        pair = rules.to_tensor([seed, 0], "int64")
    elif seed is None:
        pair = global_seed_generator().next(ordered=False)
    else:
        raise ValueError("Argument `seed` must be either an integer or an instance of "
                         f"`SeedGenerator`. Received: seed={seed} (of type {type(seed)})")
    return cast(arithmetic.floormod(pair, 2 ** 31 - 2), "int32")


def _float_dtype(dtype, name):
    dtype = rules.standardize(dtype or global_config.floatx())
    if dtype not in rules.FLOAT_TYPES:
        raise ValueError(f"`keras.random.{name}` requires a floating point `dtype`. "
                         f"Received: dtype={dtype} ")
    return dtype


def _shape(shape):
    return [shape] if isinstance(shape, int) else shape


@keras_export("keras.random.normal")
def normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    dtype = _float_dtype(dtype, "normal")
    return stateless_random.stateless_normal(_shape(shape), draw_seed(seed), mean=mean,
                                             stddev=stddev, dtype=dtype)


@keras_export("keras.random.uniform")
def uniform(shape, minval=0.0, maxval=1.0, dtype=None, seed=None):
    dtype = _float_dtype(dtype, "uniform")
    return stateless_random.stateless_uniform(_shape(shape), draw_seed(seed),
                                              minval=cast(minval, dtype),
                                              maxval=cast(maxval, dtype), dtype=dtype)


@keras_export("keras.random.randint")
def randint(shape, minval, maxval, dtype="int32", seed=None):
    dtype = rules.standardize(dtype)
    if dtype not in rules.INT_TYPES:
        raise ValueError("`keras.random.randint` requires an integer `dtype`. "
                         f"Received: dtype={dtype} ")
    middle = dtype if dtype in ("int32", "int64") else "int64"
    out = stateless_random.stateless_uniform(_shape(shape), draw_seed(seed), minval=minval,
                                             maxval=maxval, dtype=middle)
    return cast(out, dtype)


@keras_export("keras.random.truncated_normal")
def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    dtype = _float_dtype(dtype, "truncated_normal")
    return stateless_random.stateless_truncated_normal(_shape(shape), draw_seed(seed),
                                                       mean=mean, stddev=stddev, dtype=dtype)


@keras_export("keras.random.dropout")
def dropout(inputs, rate, noise_shape=None, seed=None):
    inputs = rules.to_tensor(inputs)
    if rate == 1.0:
        return array_fill.zeros_like(inputs)
    if rate == 0.0:
        return inputs
    seed = draw_seed(seed)
    shape = array_core.shape(inputs)   # Keras' concrete noise shape
    if noise_shape is not None:
        shape = array_core.stack([shape[i] if v is None else cast(v, "int32")
                                  for i, v in enumerate(noise_shape)])
    return nn_dropout.stateless_dropout(inputs, rate=rate, noise_shape=shape, seed=seed)


@keras_export("keras.random.shuffle")
def shuffle(x, axis=0, seed=None):
    x = rules.to_tensor(x)
    keys = stateless_random.stateless_uniform(array_core.stack([array_core.shape(x)[axis]]),
                                              draw_seed(seed))
    return gather_batch.gather(x, sort.argsort(keys), axis=axis)


def _dtype_for_draws(dtype):
    dtype = rules.standardize(dtype or global_config.floatx())
    return dtype, ("float32" if dtype == "bfloat16" else dtype)


@keras_export("keras.random.gamma")
def gamma(shape, alpha, dtype=None, seed=None):
    dtype, middle = _dtype_for_draws(dtype)
    out = random_gamma_poisson.stateless_gamma(_shape(shape), draw_seed(seed), alpha=alpha,
                                               dtype=middle)
    return cast(out, dtype)


@keras_export("keras.random.beta")
def beta(shape, alpha, beta, dtype=None, seed=None):
    dtype, middle = _dtype_for_draws(dtype)
    seed_1 = draw_seed(seed)
    seed_2 = seed_1 + 12
    shape = _shape(shape)
    alpha = array_fill.broadcast_to(rules.to_tensor(alpha, middle), shape)
    beta = array_fill.broadcast_to(rules.to_tensor(beta, middle), shape)
    gamma_a = cast(random_gamma_poisson.stateless_gamma(shape, seed_1, alpha=alpha,
                                                        dtype=middle), dtype)
    gamma_b = cast(random_gamma_poisson.stateless_gamma(shape, seed_2, alpha=beta,
                                                        dtype=middle), dtype)
    return gamma_a / (gamma_a + gamma_b)


@keras_export("keras.random.binomial")
def binomial(shape, counts, probabilities, dtype=None, seed=None):
    dtype, middle = _dtype_for_draws(dtype)
    shape = _shape(shape)
    known = apply.constant_value(counts) if isinstance(counts, Tensor) else counts
    if known is None:
        raise ValueError("keras.random.binomial needs `counts` known when it is traced "
                         "(ndflow draws up to the largest count of trials)")
    most = int(np.max(known)) if np.size(known) else 0
    counts = array_fill.broadcast_to(rules.to_tensor(counts, "float32"), shape)
    probs = array_fill.broadcast_to(rules.to_tensor(probabilities, "float32"), shape)
    if most <= 0:
        return cast(array_fill.zeros(shape, dtype=middle), dtype)
    draws = stateless_random.stateless_uniform(list(shape) + [most], draw_seed(seed))
    trial = math_cumulative.cumsum(array_fill.ones_like(draws), axis=-1)
    hits = comparison.logical_and(comparison.less(draws, array_core.expand_dims(probs, -1)),
                                  comparison.less_equal(trial, array_core.expand_dims(counts,
                                                                                      -1)))
    return cast(reduction.reduce_sum(cast(hits, "float32"), axis=-1), dtype)


@keras_export("keras.random.categorical")
def categorical(logits, num_samples, dtype="int32", seed=None):
    logits = rules.to_tensor(logits)
    if logits.shape.rank != 2:
        raise ValueError("`logits` should be a 2-dimensional tensor with shape "
                         f"[batch_size, num_classes]. Received: logits={logits}")
    shape = array_core.shape(logits)
    noise_shape = array_core.stack([shape[0], cast(num_samples, "int32"), shape[1]])
    u = stateless_random.stateless_uniform(noise_shape, draw_seed(seed), minval=1e-20,
                                           maxval=1.0, dtype="float32")
    gumbel = -arithmetic.log(-arithmetic.log(u))
    scores = array_core.expand_dims(cast(logits, "float32"), 1) + gumbel
    return cast(reduction.argmax(scores, axis=-1), rules.standardize(dtype))


attach(globals(), random_docs.DOCS)
