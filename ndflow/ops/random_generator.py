"""`tf.random.Generator`: a random stream whose state is a variable, so draws are ordered,
reproducible from a seed, saved with checkpoints and usable inside `tf.function`. The state is
TensorFlow's Philox state [counter low, counter high, key]; each draw is one of TensorFlow's
stateful random ops on it (ops/stateful_random.py), so a seed gives TensorFlow's numbers."""

from __future__ import annotations

import enum
import os

import numpy as np

from ndflow.core import determinism, dtypes
from ndflow.core.api_export import tf_export
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.array_core import stack
from ndflow.ops.array_fill import zeros_like
from ndflow.ops.module import Module
from ndflow.ops.random import name_scope, shape_tensor
from ndflow.ops.stateful_random import (
    StatefulRandomBinomial,
    StatefulStandardNormalV2,
    StatefulTruncatedNormal,
    StatefulUniform,
    StatefulUniformFullInt,
    StatefulUniformInt,
)
from ndflow.ops.stateless_random_extra import (
    AUTO_SELECT,
    PHILOX,
    THREEFRY,
    convert_alg_to_int,
    unsupported_alg_message,
)
from ndflow.ops.variables import Variable

_STATE_SIZE = {PHILOX: 3, THREEFRY: 2, AUTO_SELECT: 3}   # TF's, by algorithm id


@tf_export("random.Algorithm", "random.experimental.Algorithm")
class Algorithm(enum.Enum):
    """`tf.random.Algorithm`: the RNG algorithms' ids. On CPUs and GPUs TF (and ndflow) draw
    with Philox, which AUTO_SELECT picks; a ThreeFry generator can be made, and its draws are
    TF's UnimplementedError (XLA devices only)."""
    PHILOX = 1
    THREEFRY = 2
    AUTO_SELECT = 3


def _algorithm(alg) -> int:
    """TF's convert_alg_to_int, limited to the three algorithms (None: Philox, TF's default)."""
    alg_id = PHILOX if alg is None else convert_alg_to_int(alg)
    if isinstance(alg_id, int) and alg_id not in _STATE_SIZE:
        raise ValueError(unsupported_alg_message(alg_id))
    return alg_id


def _rng_state(seed, alg) -> np.ndarray:
    """The int64 state of an integer seed: its two's complement split into the algorithm's
    64-bit words ([counter low, counter high, key] for Philox: TensorFlow's)."""
    size = _STATE_SIZE[int(_algorithm(alg))]
    seed = int(seed)
    words = [(seed >> (64 * i)) & 0xFFFFFFFFFFFFFFFF for i in range(size)]
    return np.array([w - (1 << 64) if w >= 1 << 63 else w for w in words], dtype=np.int64)


def _state_array(state) -> np.ndarray:
    """A state as int64 words: Python ints of up to 64 bits wrap into two's complement, as
    TF's _convert_to_state_tensor takes them (a uint64 state word written as an int)."""
    if isinstance(state, (list, tuple)):
        state = [v - (1 << 64) if isinstance(v, int) and v >= 1 << 63 else v for v in state]
    return np.asarray(state, dtype=np.int64)


@tf_export("random.create_rng_state", "random.experimental.create_rng_state")
def create_rng_state(seed, alg):
    """`tf.random.create_rng_state`: the state tensor a Generator seeded by `seed` starts from."""
    return convert_to_tensor(_rng_state(seed, alg), dtypes.int64)


@tf_export("random.Generator", "random.experimental.Generator")
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
        self._state_var = Variable(_state_array(state), trainable=False,
                                   dtype=dtypes.int64, name="StateVar")

    @classmethod
    def from_seed(cls, seed, alg=None) -> Generator:
        return cls(state=_rng_state(seed, alg), alg=alg)

    @classmethod
    def from_state(cls, state, alg) -> Generator:
        return cls(state=state, alg=alg)

    @classmethod
    def from_non_deterministic_state(cls, alg=None) -> Generator:
        if determinism.enabled():
            raise RuntimeError('"from_non_deterministic_state" cannot be called when '
                               "determinism is enabled.")
        seed = int.from_bytes(os.urandom(8), "little") & 0x7FFFFFFFFFFFFFFF
        return cls.from_seed(seed, alg)

    @property
    def state(self) -> Variable:
        return self._state_var

    @property
    def algorithm(self) -> int:
        return self._alg

    def reset_from_seed(self, seed) -> None:
        self._state_var.assign(_rng_state(seed, self._alg))

    def reset(self, state) -> None:
        self._state_var.assign(_state_array(state))

    def _draw(self, op, shape, dtype, extra=()):
        return apply_op(op, [self._state_var.handle, convert_to_tensor(self._alg, dtypes.int64),
                             shape_tensor(shape), *extra], {"dtype": dtypes.as_dtype(dtype)}
                        ).outputs[0]

    def normal(self, shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, name=None):
        with name_scope(name, "stateful_normal"):
            rnd = self._draw(StatefulStandardNormalV2, shape, dtype)
            return rnd * convert_to_tensor(stddev, rnd.dtype) + convert_to_tensor(mean, rnd.dtype)

    def truncated_normal(self, shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, name=None):
        with name_scope(name, "truncated_normal"):
            rnd = self._draw(StatefulTruncatedNormal, shape, dtype)
            return rnd * convert_to_tensor(stddev, rnd.dtype) + convert_to_tensor(mean, rnd.dtype)

    def uniform(self, shape, minval=0, maxval=None, dtype=dtypes.float32, name=None):
        dtype = dtypes.as_dtype(dtype)
        with name_scope(name, "stateful_uniform"):
            if dtype.is_integer:
                if maxval is None:
                    if minval is None or minval == 0:
                        raise ValueError("Must specify maxval for integer dtype (or give "
                                         "neither minval nor maxval for uniform_full_int)")
                lo, hi = convert_to_tensor(minval, dtype), convert_to_tensor(maxval, dtype)
                return self._draw(StatefulUniformInt, shape, dtype, (lo, hi))
            rnd = self._draw(StatefulUniform, shape, dtype)
            lo = convert_to_tensor(0 if minval is None else minval, dtype)
            hi = convert_to_tensor(1 if maxval is None else maxval, dtype)
            return rnd * (hi - lo) + lo

    def uniform_full_int(self, shape, dtype=dtypes.uint64, name=None):
        """Integers over the whole range of `dtype` (the random bits themselves)."""
        with name_scope(name, "stateful_uniform_full_int"):
            return self._draw(StatefulUniformFullInt, shape, dtype)

    def binomial(self, shape, counts, probs, dtype=dtypes.int32, name=None):
        """Binomial(counts, probs) samples of `shape` (counts and probs broadcast to its
        trailing dimensions), from this stream: TF's StatefulRandomBinomial."""
        with name_scope(name, "binomial"):
            counts = convert_to_tensor(counts, name="counts")
            probs = convert_to_tensor(probs, name="probs")
            return apply_op(StatefulRandomBinomial,
                            [self._state_var.handle, convert_to_tensor(self._alg, dtypes.int64),
                             shape_tensor(shape), counts, probs],
                            {"dtype": dtypes.as_dtype(dtype)}).outputs[0]

    def make_seeds(self, count: int = 1):
        """`count` seeds [2, count] for stateless ops: fresh keys over zeros, as TF's."""
        keys = self.uniform_full_int([count], dtypes.int64)
        return stack([keys, zeros_like(keys)])

    def split(self, count: int = 1) -> list:
        """`count` new generators, each keyed by a fresh key from this stream (counter 0)."""
        keys = self.uniform_full_int([count], dtypes.int64).numpy()
        return [Generator(state=np.array([0, 0, k], dtype=np.int64), alg=self._alg)
                for k in keys]


_global_generator: Generator | None = None


@tf_export("random.get_global_generator", "random.experimental.get_global_generator")
def get_global_generator() -> Generator:
    """`tf.random.get_global_generator`: the process's generator (non-deterministic until
    `set_global_generator` replaces it)."""
    global _global_generator
    if _global_generator is None:
        if determinism.enabled():
            raise RuntimeError('"get_global_generator" cannot be called if determinism is '
                               'enabled, unless "set_global_generator" has already been '
                               'called. Please call "set_global_generator" first.')
        _global_generator = Generator.from_non_deterministic_state()
    return _global_generator


@tf_export("random.set_global_generator", "random.experimental.set_global_generator")
def set_global_generator(generator: Generator) -> None:
    """`tf.random.set_global_generator`."""
    global _global_generator
    _global_generator = generator
