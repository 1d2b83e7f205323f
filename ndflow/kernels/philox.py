"""TensorFlow's Philox4x32-10 counter-based generator and its distributions, in NumPy, so that
seeded stateless random ops give TensorFlow's exact streams
(tensorflow/core/lib/random/philox_random.h, random_distributions.h; the seed scrambling of
stateless_random_ops.cc).

Output element i of an op comes from Philox call i // k (k = the values one call yields: 4
float32/int32, 2 float64/int64) made with the op's counter advanced by that call index, so a
value depends only on (key, counter, index) — the same on any thread count or device.
"""

from __future__ import annotations

import secrets
import threading

import numpy as np

_M0, _M1 = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)
_W0, _W1 = 0x9E3779B9, 0xBB67AE85
_MASK32 = np.uint64(0xFFFFFFFF)
_SEED_KEY = (0x3EC8F720, 0x02461E29)
_MASK128 = (1 << 128) - 1


def _rounds(counters: np.ndarray, key: tuple[int, int]) -> np.ndarray:
    """Ten Philox rounds on uint32 counters [n, 4] under a 64-bit key -> uint32 [n, 4]."""
    c = [counters[:, i].astype(np.uint64) for i in range(4)]
    k0, k1 = key
    for r in range(10):
        p0, p1 = _M0 * c[0], _M1 * c[2]
        hi0, lo0 = p0 >> np.uint64(32), p0 & _MASK32
        hi1, lo1 = p1 >> np.uint64(32), p1 & _MASK32
        c = [hi1 ^ c[1] ^ np.uint64(k0), lo1, hi0 ^ c[3] ^ np.uint64(k1), lo0]
        if r < 9:
            k0, k1 = (k0 + _W0) & 0xFFFFFFFF, (k1 + _W1) & 0xFFFFFFFF
    return np.stack(c, axis=1).astype(np.uint32)


def _rounds_of_one(c0: int, c1: int, c2: int, c3: int, k0: int, k1: int) -> tuple:
    """`_rounds` of one counter in Python ints: every stateless random op scrambles its seed
    this way on each call, where ten rounds of NumPy calls on length-1 arrays cost ~60 us."""
    m0, m1 = int(_M0), int(_M1)
    for r in range(10):
        p0, p1 = m0 * c0, m1 * c2
        c0, c1, c2, c3 = ((p1 >> 32) ^ c1 ^ k0, p1 & 0xFFFFFFFF,
                          (p0 >> 32) ^ c3 ^ k1, p0 & 0xFFFFFFFF)
        if r < 9:
            k0, k1 = (k0 + _W0) & 0xFFFFFFFF, (k1 + _W1) & 0xFFFFFFFF
    return c0, c1, c2, c3


def key_counter_from_seed(seed0: int, seed1: int) -> tuple[tuple[int, int], list[int]]:
    """TF's GenerateKey: the two seed words (sign-extended to 64 bits) scrambled by one Philox
    call into the key and the high counter words."""
    s0, s1 = int(seed0) & 0xFFFFFFFFFFFFFFFF, int(seed1) & 0xFFFFFFFFFFFFFFFF
    mix = _rounds_of_one(s0 & 0xFFFFFFFF, s0 >> 32, s1 & 0xFFFFFFFF, s1 >> 32, *_SEED_KEY)
    return (mix[0], mix[1]), [0, 0, mix[2], mix[3]]


def key_counter_words(seed0: int, seed1: int) -> tuple[np.ndarray, np.ndarray]:
    """TF's StatelessRandomGetKeyCounter of a seed: the Philox key [1] and counter [2] as
    int64 arrays holding the uint64 words' bits."""
    (k0, k1), c = key_counter_from_seed(seed0, seed1)
    return (np.array([k0 | k1 << 32], np.uint64).view(np.int64),
            np.array([c[0] | c[1] << 32, c[2] | c[3] << 32], np.uint64).view(np.int64))


def first_doubles_of_seeds(seed0: np.ndarray, seed1: np.ndarray) -> np.ndarray:
    """float64 [n]: for each seed pair (words under 2**32), the first double in [0, 1) that a
    stateless op seeded with it draws (Uint64ToDouble of its first call's words 0 and 1;
    `key_counter_from_seed` then one Philox call, for all pairs at once)."""
    s0, s1 = np.asarray(seed0, np.uint64), np.asarray(seed1, np.uint64)
    zero = np.zeros_like(s0)
    mix = _rounds(np.stack([s0, zero, s1, zero], axis=1), _SEED_KEY).astype(np.uint64)
    key = (mix[:, 0], mix[:, 1])
    bits = _rounds(np.stack([zero, zero, mix[:, 2], mix[:, 3]], axis=1), key)
    return uniform_double_from_words(bits[:, 0], bits[:, 1])


def key_counter_from_state(counter_lo: int, counter_hi: int, key: int):
    """A Philox state [counter low, counter high, key] (tf.random.Generator's) as words."""
    lo, hi, k = (int(v) & 0xFFFFFFFFFFFFFFFF for v in (counter_lo, counter_hi, key))
    return (k & 0xFFFFFFFF, k >> 32), [lo & 0xFFFFFFFF, lo >> 32, hi & 0xFFFFFFFF, hi >> 32]


def random_bits(n_calls: int, key, counter: list[int]) -> np.ndarray:
    """uint32 [n_calls, 4]: Philox of counter, counter + 1, ... (128-bit increments)."""
    lo = (counter[0] | counter[1] << 32)
    hi = (counter[2] | counter[3] << 32)
    idx = np.arange(n_calls, dtype=np.uint64)
    new_lo = np.uint64(lo) + idx                     # wraps modulo 2**64
    carry = (new_lo < np.uint64(lo)).astype(np.uint64)
    new_hi = np.uint64(hi) + carry
    counters = np.stack([new_lo & _MASK32, new_lo >> np.uint64(32),
                         new_hi & _MASK32, new_hi >> np.uint64(32)], axis=1)
    return _rounds(counters, key)


def _calls(n: int, per_call: int) -> int:
    return -(-n // per_call)


def _uint32_to_float(x: np.ndarray) -> np.ndarray:
    bits = (np.uint32(127) << np.uint32(23)) | (x & np.uint32(0x7FFFFF))
    return bits.view(np.float32) - np.float32(1.0)


def uniform_double_from_words(x0: np.ndarray, x1: np.ndarray) -> np.ndarray:
    """TF's Uint64ToDouble: a double in [0, 1) from two 32-bit words (52 mantissa bits)."""
    return _uint64_to_double(x0, x1)


def _uint64_to_double(x0: np.ndarray, x1: np.ndarray) -> np.ndarray:
    man = ((x0 & np.uint32(0xFFFFF)).astype(np.uint64) << np.uint64(32)) | x1.astype(np.uint64)
    bits = (np.uint64(1023) << np.uint64(52)) | man
    return bits.view(np.float64) - 1.0


def _uint16_to_half(x: np.ndarray) -> np.ndarray:
    bits = (np.uint16(15) << np.uint16(10)) | (x.astype(np.uint16) & np.uint16(0x3FF))
    return bits.view(np.float16) - np.float16(1.0)


def _uint16_to_bfloat16_as_float(x: np.ndarray) -> np.ndarray:
    """bfloat16 uniform as float32 values (exact: 7 mantissa bits)."""
    bits = ((np.uint32(127) << np.uint32(7)) | (x & np.uint32(0x7F))) << np.uint32(16)
    return bits.view(np.float32) - np.float32(1.0)


def uniform(n: int, kind: str, key, counter) -> np.ndarray:
    """n uniform values in [0, 1): kind 'half', 'bfloat16', 'float' or 'double'."""
    if kind == "double":
        bits = random_bits(_calls(n, 2), key, counter).reshape(-1, 2)
        return _uint64_to_double(bits[:, 0], bits[:, 1])[:n]
    bits = random_bits(_calls(n, 4), key, counter).reshape(-1)[:n]
    if kind == "half":
        return _uint16_to_half(bits)
    if kind == "bfloat16":
        return _uint16_to_bfloat16_as_float(bits)
    return _uint32_to_float(bits)


def normal(n: int, kind: str, key, counter) -> np.ndarray:
    """n standard normal values by TF's Box-Muller (float math for half/bfloat16/float)."""
    double = kind == "double"
    bits = random_bits(_calls(n, 2 if double else 4), key, counter)
    return box_muller(bits, double)[:n]


def box_muller(bits: np.ndarray, double: bool) -> np.ndarray:
    """Philox outputs uint32 [m, 4] -> 2m float64 or 4m float32 normals (TF's BoxMuller).
    Float32 here is each C float function correctly rounded; the C library's logf/sinf/cosf
    (kernels/philox_numba.py) differ in the last bit for ~1.5% of values."""
    if double:
        u1 = np.maximum(_uint64_to_double(bits[:, 0], bits[:, 1]), 1e-7)
        v1 = 2.0 * np.pi * _uint64_to_double(bits[:, 2], bits[:, 3])
        u2 = np.sqrt(-2.0 * np.log(u1))
        return np.stack([np.sin(v1) * u2, np.cos(v1) * u2], axis=1).reshape(-1)
    bits = bits.reshape(-1, 2)
    u1 = np.maximum(_uint32_to_float(bits[:, 0]), np.float32(1e-7))
    v1 = _f32(2.0 * np.pi * _uint32_to_float(bits[:, 1]).astype(np.float64))  # M_PI: double
    u2 = _f32(np.sqrt(_f32(np.float32(-2.0) * _f32(np.log(u1.astype(np.float64))))))
    sin, cos = _f32(np.sin(v1.astype(np.float64))), _f32(np.cos(v1.astype(np.float64)))
    return np.stack([sin * u2, cos * u2], axis=1).reshape(-1)


def _f32(x: np.ndarray) -> np.ndarray:
    return np.asarray(x).astype(np.float32)


def uniform_int(n: int, wide: bool, lo: int, hi: int, key, counter) -> np.ndarray:
    """n integers in [lo, hi): TF's `lo + bits % (hi - lo)` on 32 (or 64) random bits."""
    span = (hi - lo) & (0xFFFFFFFFFFFFFFFF if wide else 0xFFFFFFFF)
    if wide:
        bits = random_bits(_calls(n, 2), key, counter).reshape(-1, 2)
        words = bits[:, 0].astype(np.uint64) | (bits[:, 1].astype(np.uint64) << np.uint64(32))
        out = (words % np.uint64(span)).astype(np.int64) + np.int64(lo)
        return out[:n]
    bits = random_bits(_calls(n, 4), key, counter).reshape(-1)[:n]
    return ((bits % np.uint32(span)).astype(np.int64) + lo).astype(np.int32)


def full_int(n: int, wide: bool, key, counter) -> np.ndarray:
    """n integers over the dtype's whole range: the random bits themselves (64 = low word |
    high word << 32), read as signed."""
    if wide:
        bits = random_bits(_calls(n, 2), key, counter).reshape(-1, 2)
        words = bits[:, 0].astype(np.uint64) | (bits[:, 1].astype(np.uint64) << np.uint64(32))
        return words.view(np.int64)[:n]
    return random_bits(_calls(n, 4), key, counter).reshape(-1)[:n].view(np.int32)


def truncated_normal(n: int, double: bool, key, counter) -> np.ndarray:
    """TF's TruncatedNormalDistribution: group g of k values (4 float32, 2 float64) draws from
    the sub-stream at counter + g * 256 (float64: g * 128), taking Box-Muller pairs until k of
    them lie strictly within 2 stddev. Rounds of one Philox call per unfinished group."""
    k = 2 if double else 4
    groups = _calls(n, k)
    out = np.zeros((groups, k), np.float64 if double else np.float32)
    got = np.zeros(groups, np.int64)
    base = (counter[0] | counter[1] << 32) | (counter[2] | counter[3] << 32) << 64
    step = 128 if double else 256
    call = 0
    while groups and got.min() < k:
        todo = np.flatnonzero(got < k)
        starts = [(base + int(g) * step + call) % (1 << 128) for g in todo]
        words = np.array([[s >> (32 * i) & 0xFFFFFFFF for i in range(4)] for s in starts],
                         np.uint32)
        cand = box_muller(_rounds(words, key), double).reshape(len(todo), -1)
        for row, g in enumerate(todo):
            for v in cand[row]:
                if abs(v) < 2.0 and got[g] < k:
                    out[g, got[g]] = v
                    got[g] += 1
        call += 1
    return out.reshape(-1)[:n]


class GuardedPhilox:
    """TF's GuardedPhiloxRandom, the state of one stateful random kernel: the key is `seed`, the
    counter starts at [0, 0, seed2 low, seed2 high] (both 0: random seeds), and
    `reserve(samples)` hands out the counter and skips it `samples` Philox calls ahead."""

    __slots__ = ("key", "_counter", "_lock")

    def __init__(self, seed: int, seed2: int):
        if seed == 0 and seed2 == 0:
            seed, seed2 = (secrets.randbits(64) for _ in range(2))
        s, s2 = int(seed) & 0xFFFFFFFFFFFFFFFF, int(seed2) & 0xFFFFFFFFFFFFFFFF
        self.key = (s & 0xFFFFFFFF, s >> 32)
        self._counter = s2 << 64
        self._lock = threading.Lock()

    def reserve(self, samples: int) -> list[int]:
        """The counter's four words before skipping `samples` calls (modulo 2**128)."""
        with self._lock:
            c = self._counter
            self._counter = (c + samples) & _MASK128
        return [c & 0xFFFFFFFF, c >> 32 & 0xFFFFFFFF, c >> 64 & 0xFFFFFFFF, c >> 96]
