"""Kernels of the random ops, drawing from the runtime context's generators.

Each node draws from `ctx.generator(key, seed, seed2, device)`, keyed by the node name and
its seeds: a graph node keeps its stream across `Session.run` calls, eager ops with the same
seeds continue one stream (TF's eager kernel cache), and an eager `set_seed` starts a new
generation of streams (`random_seed.generation()`), so seeded sequences replay.
"""

from __future__ import annotations

import numpy as np
import torch

from ndflow.core.errors import InvalidArgumentError
from ndflow.kernels.registry import kernel
from ndflow.ops import random, random_seed, stateless_random

_MAXINT32 = 2**31 - 1


def _generator_fn(node):
    ctx, device = node.ctx, node.device
    seed, seed2 = int(node.attrs["seed"]), int(node.attrs["seed2"])
    name = node.name
    if node.attrs.get(random_seed.GLOBAL_STREAM_ATTR, False):
        # Eager ops seeded only by the global seed share one stream per (seed, generation).
        def get() -> torch.Generator:
            key = ("random-global", seed, random_seed.generation())
            return ctx.generator(key, seed, _MAXINT32, device)

        return get

    def get() -> torch.Generator:
        key = ("random", name, seed, seed2, random_seed.generation())
        return ctx.generator(key, seed, seed2, device)

    return get


def _dims(shape: torch.Tensor) -> list:
    dims = [int(d) for d in shape.reshape(-1).tolist()]
    if any(d < 0 for d in dims):
        raise InvalidArgumentError(None, None, f"Dimension {min(dims)} must be >= 0")
    return dims


@kernel(random.RandomUniform)
def _random_uniform(node):
    gen, device = _generator_fn(node), node.device
    dtype = node.attrs["dtype"].torch_dtype
    return lambda shape: torch.rand(_dims(shape), generator=gen(), dtype=dtype, device=device)


@kernel(random.RandomStandardNormal)
def _random_normal(node):
    gen, device = _generator_fn(node), node.device
    dtype = node.attrs["dtype"].torch_dtype
    return lambda shape: torch.randn(_dims(shape), generator=gen(), dtype=dtype, device=device)


@kernel(random.TruncatedNormal)
def _truncated_normal(node):
    gen, device = _generator_fn(node), node.device
    dtype = node.attrs["dtype"].torch_dtype
    work = torch.float64 if dtype == torch.float64 else torch.float32

    def run(shape):
        return _truncated(_dims(shape), gen(), work, device).to(dtype)

    return run


def _truncated(dims: list, g: torch.Generator, work, device) -> torch.Tensor:
    """Standard normal values, those beyond 2 stddev redrawn (our fresh buffer, in place)."""
    x = torch.randn(dims, generator=g, dtype=work, device=device)
    bad = x.abs() > 2.0
    n = int(bad.sum())
    while n:
        x[bad] = torch.randn(n, generator=g, dtype=work, device=device)
        bad = x.abs() > 2.0
        n = int(bad.sum())
    return x


@kernel(random.RandomUniformInt)
def _random_uniform_int(node):
    gen, device = _generator_fn(node), node.device
    dtype = node.attrs["Tout"].torch_dtype

    def run(shape, minval, maxval):
        lo, hi = int(minval), int(maxval)
        if lo >= hi:
            raise InvalidArgumentError(None, None, f"Need minval < maxval: {lo} >= {hi}")
        return torch.randint(lo, hi, _dims(shape), generator=gen(), dtype=dtype, device=device)

    return run


@kernel(random.RandomShuffle)
def _random_shuffle(node):
    gen = _generator_fn(node)

    def run(x):
        if x.dim() == 0 or x.shape[0] <= 1:
            return x
        perm = torch.randperm(x.shape[0], generator=gen(), device=x.device)
        return x.index_select(0, perm)

    return run


@kernel(random.Multinomial)
def _multinomial(node):
    gen = _generator_fn(node)
    out_dtype = node.attrs["output_dtype"].torch_dtype

    def run(logits, num_samples):
        if logits.dim() != 2:
            raise InvalidArgumentError(None, None, f"logits should be a matrix, got shape "
                                       f"{list(logits.shape)}")
        n = int(num_samples)
        if n < 0:
            raise InvalidArgumentError(None, None, f"num_samples should be nonnegative, got {n}")
        batch, classes = logits.shape
        if n == 0 or batch == 0:
            return torch.zeros((batch, n), dtype=out_dtype, device=logits.device)
        if classes == 0:
            raise InvalidArgumentError(None, None, "num_classes should be positive, got 0")
        # Softmax in float64: TF samples from exp(logits - max); -inf logits never come up.
        probs = torch.softmax(logits.double(), dim=1)
        return torch.multinomial(probs, n, replacement=True, generator=gen()).to(out_dtype)
    return run


# -- stateless ops: a fresh generator seeded by the (two-integer) seed on every call --------

def _seeded(seed: torch.Tensor, device) -> torch.Generator:
    if seed.numel() != 2:
        raise InvalidArgumentError(None, None, f"seed must have shape [2], not "
                                   f"{list(seed.shape)}")
    # ATen's CPU generator (mt19937) keeps 32 bits of a seed: mix all 128 bits into them.
    words = [int(v) & 0xFFFFFFFFFFFFFFFF for v in seed.reshape(-1).tolist()]
    mixed = int(np.random.SeedSequence(words).generate_state(1)[0])
    return torch.Generator(device=device).manual_seed(mixed)


@kernel(stateless_random.StatelessRandomUniform)
def _stateless_uniform(node):
    dtype, device = node.attrs["dtype"].torch_dtype, node.device
    return lambda shape, seed: torch.rand(_dims(shape), generator=_seeded(seed, device),
                                          dtype=dtype, device=device)


@kernel(stateless_random.StatelessRandomNormal)
def _stateless_normal(node):
    dtype, device = node.attrs["dtype"].torch_dtype, node.device
    return lambda shape, seed: torch.randn(_dims(shape), generator=_seeded(seed, device),
                                           dtype=dtype, device=device)


@kernel(stateless_random.StatelessTruncatedNormal)
def _stateless_truncated_normal(node):
    dtype, device = node.attrs["dtype"].torch_dtype, node.device
    work = torch.float64 if dtype == torch.float64 else torch.float32

    def run(shape, seed):
        return _truncated(_dims(shape), _seeded(seed, device), work, device).to(dtype)
    return run


@kernel(stateless_random.StatelessRandomUniformInt)
def _stateless_uniform_int(node):
    dtype, device = node.attrs["dtype"].torch_dtype, node.device

    def run(shape, seed, minval, maxval):
        lo, hi = int(minval), int(maxval)
        if lo >= hi:
            raise InvalidArgumentError(None, None, f"Need minval < maxval: {lo} >= {hi}")
        return torch.randint(lo, hi, _dims(shape), generator=_seeded(seed, device),
                             dtype=dtype, device=device)
    return run
