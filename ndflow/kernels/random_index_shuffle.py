"""The kernel of RandomIndexShuffle (`tf.random.experimental.index_shuffle`), TF's
algorithm (core/kernels/random_index_shuffle.cc):

The block size B is ceil(log2(max_index)) rounded up to even, at least 16; a B-bit value is
enciphered with a Simon cipher on two W = B/2-bit words, `rounds` round keys scheduled from
the seed's three words (each cut to W bits), and re-enciphered until it is <= max_index
(cycle walking keeps it a permutation of [0, max_index]). Each element has its own index,
max_index and seed row. A small max_index walks ~2^16 / (max_index + 1) steps, so the loop
is a numba kernel (a plain Python loop without numba gives the same numbers, slowly).
"""

from __future__ import annotations

import numpy as np
import torch

from ndflow.core.errors import InvalidArgumentError
from ndflow.core.shapes import fmt
from ndflow.kernels.build_once import built_once
from ndflow.kernels.registry import kernel
from ndflow.ops import random_index_shuffle as ris

# the numba form of one element, a module global rather than a closure cell (numba's disk
# cache keys a closure's captured dispatcher per process and compiles again)
_one = None
_C = 0xFFFFFFFC
_Z = 0x7369F885192C0EF5


def _build():
    try:
        import numba  # noqa: PLC0415 - loads with the first shuffle, not with ndflow
    except ImportError:
        return None
    global _one
    _one = numba.njit(cache=True)(_shuffle_one)

    @numba.njit(cache=True, nogil=True)
    def many(index, seeds, max_index, rounds, out):
        for i in range(out.shape[0]):
            s = seeds[i if seeds.shape[0] > 1 else 0]
            out[i] = _one(index[i], s[0], s[1], s[2], max_index[i], rounds)
    return many


def _shuffle_one(index, k0, k1, k2, max_index, rounds):
    """One element on np.uint64 words (index, key words, max_index; rounds an int): plain
    Python without numba, the body of the numba kernel with it. The block size is TF's
    ceil(log2) of max_index as a double, roundings included, made even, at least 16."""
    u = np.uint64
    if max_index == 0:
        return u(0)
    b = np.int64(np.ceil(np.log2(np.float64(max_index))))
    b = max(b + b % 2, 16)
    w = u(b // 2)
    mask = (u(1) << w) - u(1)
    keys = np.empty(max(rounds, 3), dtype=np.uint64)
    keys[0], keys[1], keys[2] = k0 & mask, k1 & mask, k2 & mask
    z = u(_Z) & mask
    c = u(_C) & mask
    for i in range(3, rounds):
        prev = keys[i - 1]
        r3 = ((prev >> u(3)) | (prev << (w - u(3)))) & mask
        r4 = ((prev >> u(4)) | (prev << (w - u(4)))) & mask
        keys[i] = c ^ (z & u(1)) ^ keys[i - 3] ^ r3 ^ r4
        z >>= u(1)
    value = index
    while True:
        left = (value >> w) & mask
        right = value & mask
        for i in range(0, rounds - 1, 2):
            f = ((((right << u(1)) | (right >> (w - u(1)))) & mask)
                 & (((right << u(8)) | (right >> (w - u(8)))) & mask)) \
                ^ (((right << u(2)) | (right >> (w - u(2)))) & mask)
            left = left ^ f ^ keys[i]
            f = ((((left << u(1)) | (left >> (w - u(1)))) & mask)
                 & (((left << u(8)) | (left >> (w - u(8)))) & mask)) \
                ^ (((left << u(2)) | (left >> (w - u(2)))) & mask)
            right = right ^ f ^ keys[i + 1]
        value = (left << w) | right
        if value <= max_index:
            return value


_numba_kernel = built_once(_build)


def _bad(msg: str) -> InvalidArgumentError:
    return InvalidArgumentError(None, None, msg)


@kernel(ris.RandomIndexShuffle)
def _random_index_shuffle(node):
    rounds = int(node.attrs.get("rounds", 4))

    def run(index, seed, max_index):
        scalar = index.dim() == 0 and seed.dim() == 1 and max_index.dim() == 0
        n = max(index.numel(), max_index.numel(), seed.numel() // 3)
        if not (index.dim() == 0 or (index.dim() == 1 and index.shape[0] == n)):
            raise _bad("Index bust be a scalar or vector.")
        if not ((seed.dim() == 1 and seed.shape[0] == 3)
                or (seed.dim() == 2 and seed.shape[0] == n and seed.shape[1] == 3)):
            raise _bad(f"Seed must be a vector of size [3] or a matrix of size [{n}, 3] but "
                       f"got {fmt(tuple(seed.shape))}.")
        if not (max_index.dim() == 0 or (max_index.dim() == 1 and max_index.shape[0] == n)):
            raise _bad("Maxval must be a scalar or a vector of the same size as index but got "
                       f"{fmt(tuple(max_index.shape))}")
        idx = np.broadcast_to(index.reshape(-1).numpy().astype(np.int64), (n,))
        top = np.broadcast_to(max_index.reshape(-1).numpy().astype(np.int64), (n,))
        for i in range(n):   # TF's checks, element by element
            if idx[i] < 0:
                raise _bad(f"index must be >= 0 but was {idx[i]}")
            if top[i] < 0:
                raise _bad(f"max_index must be >= 0 but was {top[i]}")
            if top[i] < idx[i]:
                raise _bad(f"max_index must be >= index, but {top[i]} < {idx[i]}")
        # each seed word as TF's static_cast<uint32_t>: its low 32 bits
        seeds = (seed.reshape(-1, 3).numpy().astype(np.int64) & 0xFFFFFFFF).astype(np.uint64)
        out = np.empty(n, dtype=np.uint64)
        many = _numba_kernel()
        if many is not None and n:
            many(idx.astype(np.uint64), seeds, top.astype(np.uint64), rounds, out)
        else:
            u = np.uint64
            for i in range(n):
                s = seeds[i if len(seeds) > 1 else 0]
                out[i] = _shuffle_one(u(idx[i]), s[0], s[1], s[2], u(top[i]), rounds)
        result = torch.from_numpy(out.astype(np.int64)).to(index.dtype)
        return result.reshape(()) if scalar else result

    return run
