"""Kernels of the key-and-counter random ops (ops/stateless_random_v2.py): the V2 stateless
draws from an explicit Philox key and counter (the same streams as the seeded ops, from the
words TF's kernels read: key = the uint64 key, counter = the two uint64 counter words), the
seed-to-key scrambling, and RngReadAndSkip / RngSkip on a Generator's state, with TF's checks
and messages. On CPUs and GPUs TF draws with Philox; auto-select picks it, ThreeFry is
refused."""

from __future__ import annotations

import torch

from ndflow.core.errors import InvalidArgumentError
from ndflow.kernels import philox
from ndflow.kernels import random as random_kernels
from ndflow.kernels.registry import kernel
from ndflow.ops import stateless_random_v2 as ops

_PHILOX, _AUTO_SELECT = 1, 3
_MASK = 0xFFFFFFFFFFFFFFFF


def _shape_str(t: torch.Tensor) -> str:
    return "[" + ",".join(str(d) for d in t.shape) + "]"


def key_counter_words(key: torch.Tensor, counter: torch.Tensor, alg) -> tuple:
    """(key words, counter words) of the V2 ops' inputs, checked as TF's kernels check them."""
    if int(alg) not in (_PHILOX, _AUTO_SELECT):
        raise InvalidArgumentError(None, None, f"Unsupported algorithm id: {int(alg)}")
    if key.dim() != 1 or key.shape[0] != 1:
        raise InvalidArgumentError(None, None, f"key must have shape [1], not "
                                   f"{_shape_str(key)}. (Note that batched keys are not "
                                   "supported yet.)")
    if counter.dim() != 1 or counter.shape[0] < 1:   # (TF checks for one word only)
        raise InvalidArgumentError(None, None, "counter must be a vector with length at least "
                                   f"1; got shape: {_shape_str(counter)}. (Note that batched "
                                   "counters are not supported yet.)")
    k = int(key.reshape(-1)[0]) & _MASK
    c0, c1 = ([int(v) & _MASK for v in counter.reshape(-1)[:2].tolist()] + [0])[:2]
    return (k & 0xFFFFFFFF, k >> 32), [c0 & 0xFFFFFFFF, c0 >> 32, c1 & 0xFFFFFFFF, c1 >> 32]


def _v2(node, kind: str):
    draw = random_kernels.philox_draw(node, kind)
    dtype, device = node.attrs["dtype"].torch_dtype, node.device

    def run(shape, key, counter, alg, *bounds):
        k, c = key_counter_words(key.cpu(), counter.cpu(), alg)
        if bounds and int(bounds[0]) >= int(bounds[1]):
            raise InvalidArgumentError(None, None, f"Need minval < maxval, got "
                                       f"{int(bounds[0])} >= {int(bounds[1])}")
        return random_kernels.drawn(draw, shape.cpu(), k, c, bounds, dtype, device)[0]
    return run


for _op, _kind in ((ops.StatelessRandomUniformV2, "uniform"),
                   (ops.StatelessRandomNormalV2, "normal"),
                   (ops.StatelessTruncatedNormalV2, "truncated_normal"),
                   (ops.StatelessRandomUniformIntV2, "uniform_int"),
                   (ops.StatelessRandomUniformFullIntV2, "full_int")):
    kernel(_op)(lambda node, kind=_kind: _v2(node, kind))


@kernel(ops.StatelessRandomGetKeyCounterAlg)
def _get_key_counter_alg(node):
    device = node.device

    def run(seed):
        if seed.numel() != 2:
            raise InvalidArgumentError(None, None, f"seed must have shape [2], not "
                                       f"{_shape_str(seed)}")
        key, counter = philox.key_counter_words(*(int(v) for v in seed.reshape(-1)))
        return (torch.from_numpy(key).to(device), torch.from_numpy(counter).to(device),
                torch.tensor(_PHILOX, dtype=torch.int32))
    return run


@kernel(ops.StatelessRandomGetAlg)
def _get_alg(node):
    return lambda: torch.tensor(_PHILOX, dtype=torch.int32)


def _skip(res, alg, delta: int) -> torch.Tensor:
    """The state before the skip (TF's RngReadAndSkip); the counter advanced 256 per delta."""
    state, lo, hi, _ = random_kernels.read_philox_state(res, alg)
    random_kernels.advance_philox_state(res, state, lo, hi, (delta & _MASK) * 256)
    return state.reshape(-1)[:3].clone()


@kernel(ops.RngReadAndSkip)
def _rng_read_and_skip(node):
    return lambda res, alg, delta: _skip(res, alg, int(delta))


@kernel(ops.RngSkip)
def _rng_skip(node):
    def run(res, alg, delta):
        _skip(res, alg, int(delta))
    return run
