"""`tf.random.Generator`: a random stream whose state is a variable, so draws are ordered,
reproducible from a seed, saved with checkpoints and usable inside `tf.function`. Each draw
advances the state's counter and feeds (key, counter) as the seed of a stateless op."""

from __future__ import annotations

import os

import numpy as np

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.ops import stateless_random as sr
from ndflow.ops.array_core import stack
from ndflow.ops.module import Module
from ndflow.ops.variables import Variable

PHILOX = 1  # TF's RNG_ALG_PHILOX: the algorithm a state is declared for
_STATE_SIZE = 3
_INT64 = np.iinfo(np.int64)


def _algorithm(alg) -> int:
    if alg in (None, "philox", "auto_select", PHILOX) or str(alg).lower().endswith("philox"):
        return PHILOX
    raise ValueError(f"Unsupported algorithm id: {alg}")


@tf_export("random.create_rng_state")
def create_rng_state(seed, alg) -> np.ndarray:
    """`tf.random.create_rng_state`: the int64 state [counter, counter high, key] of a seed."""
    _algorithm(alg)
    return np.array([0, 0, int(seed) & 0x7FFFFFFFFFFFFFFF], dtype=np.int64)


@tf_export("random.Generator")
class Generator(Module):
    """`tf.random.Generator`: `from_seed(seed)`, `from_state(state, alg)`,
    `from_non_deterministic_state()`; `normal`, `uniform`, `truncated_normal`,
    `make_seeds`, `split`, `reset_from_seed`; `state` is its variable."""

    def __init__(self, copy_from=None, state=None, alg=None):
        super().__init__(name="generator")
        if copy_from is not None:
            if state is not None or alg is not None:
                raise ValueError("When `copy_from` is not None, neither `state` nor `alg` "
                                 "may be given.")
            state, alg = copy_from.state.numpy(), copy_from.algorithm
        elif state is None:
            raise ValueError("Either `copy_from` or `state` must be given.")
        self._alg = _algorithm(alg)
        self._state_var = Variable(np.asarray(state, dtype=np.int64), trainable=False,
                                   dtype=dtypes.int64, name="StateVar")

    @classmethod
    def from_seed(cls, seed, alg=None) -> Generator:
        return cls(state=create_rng_state(seed, alg), alg=alg)

    @classmethod
    def from_state(cls, state, alg) -> Generator:
        return cls(state=state, alg=alg)

    @classmethod
    def from_non_deterministic_state(cls, alg=None) -> Generator:
        seed = int.from_bytes(os.urandom(8), "little") & 0x7FFFFFFFFFFFFFFF
        return cls.from_seed(seed, alg)

    @property
    def state(self) -> Variable:
        return self._state_var

    @property
    def algorithm(self) -> int:
        return self._alg

    def reset_from_seed(self, seed) -> None:
        self._state_var.assign(create_rng_state(seed, self._alg))

    def reset(self, state) -> None:
        self._state_var.assign(np.asarray(state, dtype=np.int64))

    def _next_seed(self):
        """(key, counter) of this draw; the counter advances, so the next draw differs."""
        state = self._state_var.assign_add(np.array([1, 0, 0], dtype=np.int64))
        return stack([state[2], state[0]])

    def normal(self, shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, name=None):
        return sr.stateless_normal(shape, self._next_seed(), mean, stddev, dtype, name)

    def truncated_normal(self, shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, name=None):
        return sr.stateless_truncated_normal(shape, self._next_seed(), mean, stddev, dtype, name)

    def uniform(self, shape, minval=0, maxval=None, dtype=dtypes.float32, name=None):
        dtype = dtypes.as_dtype(dtype)
        if dtype.is_integer and maxval is None:
            raise ValueError("Must specify maxval for integer dtype (or give neither minval "
                             "nor maxval for uniform_full_int)")
        return sr.stateless_uniform(shape, self._next_seed(), minval, maxval, dtype, name)

    def make_seeds(self, count: int = 1):
        """`count` seeds [2, count] for stateless ops, drawn from this stream."""
        return sr.stateless_uniform([2, count], self._next_seed(), int(_INT64.min),
                                    int(_INT64.max), dtypes.int64)

    def split(self, count: int = 1) -> list:
        """`count` new generators with independent streams seeded from this one."""
        seeds = self.make_seeds(count).numpy()
        return [Generator(state=np.array([0, 0, seeds[0, i] ^ (seeds[1, i] << 1)],
                                         dtype=np.int64), alg=self._alg)
                for i in range(count)]


_global_generator: Generator | None = None


@tf_export("random.get_global_generator")
def get_global_generator() -> Generator:
    """`tf.random.get_global_generator`: the process's generator (non-deterministic until
    `set_global_generator` replaces it)."""
    global _global_generator
    if _global_generator is None:
        _global_generator = Generator.from_non_deterministic_state()
    return _global_generator


@tf_export("random.set_global_generator")
def set_global_generator(generator: Generator) -> None:
    """`tf.random.set_global_generator`."""
    global _global_generator
    _global_generator = generator
