"""TensorFlow's range samplers (tensorflow/core/kernels/range_sampler.cc) on TensorFlow's
random words, so that a seed gives TensorFlow's candidates and expected counts.

A candidate sampler's execution reserves `2048 * num_sampled` 32-bit words of its kernel's
Philox state (TF's `ReserveSamples32`) and reads them one after another (`SimplePhilox`):
- log-uniform: `exp(RandDouble() * log(range + 1)) - 1` truncated, modulo range (two words);
- uniform: `Uniform64(range)`, 64-bit rejection sampling (two words a try);
- learned unigram: a class with probability count / total (counts start at 1 and grow by the
  true classes after each execution), `UnbiasedUniform(total)` (32-bit rejection sampling)
  located in the running sum of the counts;
- fixed unigram: Walker's alias table of the weights (`RandFloat()`, then `Uniform(n)`).
With `unique`, draws repeat until `num_sampled` distinct classes are found, and the expected
counts are `1 - (1 - p) ** tries` (float32's expm1/log1p, as TF); else `p * num_sampled`.
"""

from __future__ import annotations

import math

import numpy as np

from ndflow.kernels import philox

_MASK128 = (1 << 128) - 1
_CHUNK_CALLS = 256    # Philox calls generated at a time (1024 words)


class Words:
    """TF's SimplePhilox over a reserved generator: its 32-bit words in order."""

    def __init__(self, key, counter: list):
        self._key = key
        self._next = (counter[0] | counter[1] << 32 | counter[2] << 64 | counter[3] << 96)
        self._buf = np.empty(0, np.uint32)
        self._pos = 0

    def take(self, n: int) -> np.ndarray:
        """The next `n` words (uint32)."""
        while len(self._buf) - self._pos < n:
            calls = max(_CHUNK_CALLS, -(-(n - (len(self._buf) - self._pos)) // 4))
            c = self._next
            fresh = philox.random_bits(calls, self._key, [c & 0xFFFFFFFF, c >> 32 & 0xFFFFFFFF,
                                                          c >> 64 & 0xFFFFFFFF, c >> 96])
            self._next = (c + calls) & _MASK128
            self._buf = np.concatenate([self._buf[self._pos:], fresh.reshape(-1)])
            self._pos = 0
        out = self._buf[self._pos:self._pos + n]
        self._pos += n
        return out

    def pairs(self, n: int) -> tuple:
        """`n` consecutive (first, second) word pairs."""
        w = self.take(2 * n)
        return w[0::2], w[1::2]


def exact_uniform(words: Words, n: int, count: int, wide: bool) -> np.ndarray:
    """`count` draws of TF's ExactUniformInt over [0, n) (uint32, or uint64 from two words
    low-first when `wide`): a power of two masks, else values below
    `(2**bits - 1) % n + 1` are rejected and the next value is read."""
    bits = 64 if wide else 32
    out = np.empty(0, np.uint64)
    while len(out) < count:
        need = count - len(out)
        if wide:
            lo, hi = words.pairs(need)
            vals = lo.astype(np.uint64) | hi.astype(np.uint64) << np.uint64(32)
        else:
            vals = words.take(need).astype(np.uint64)
        if n & (n - 1) == 0:
            vals = vals & np.uint64(n - 1)
        else:
            vals = vals[vals >= np.uint64(((1 << bits) - 1) % n + 1)] % np.uint64(n)
        out = np.concatenate([out, vals])
    return out.astype(np.int64)


class LogUniform:
    def __init__(self, range_max: int):
        self.range = range_max
        self._log_range = math.log1p(range_max)

    def draw(self, words: Words, count: int) -> np.ndarray:
        x0, x1 = words.pairs(count)
        v = np.exp(philox.uniform_double_from_words(x0, x1) * self._log_range)
        return (v.astype(np.int64) - 1) % self.range

    def probability(self, classes: np.ndarray) -> np.ndarray:
        c = classes.astype(np.float64)
        return (np.log((c + 2.0) / (c + 1.0)) / self._log_range).astype(np.float32)


class Uniform:
    def __init__(self, range_max: int):
        self.range = range_max

    def draw(self, words: Words, count: int) -> np.ndarray:
        return exact_uniform(words, self.range, count, wide=True)

    def probability(self, classes: np.ndarray) -> np.ndarray:
        return np.full(classes.shape, np.float32(1.0 / self.range), np.float32)


class LearnedUnigram:
    """Counts start at 1 per class; `update` adds the true classes of an execution."""

    def __init__(self, range_max: int):
        self.range = range_max
        self.counts = np.ones(range_max, np.int64)
        self._cumulative = None

    def draw(self, words: Words, count: int) -> np.ndarray:
        if self._cumulative is None:
            self._cumulative = np.cumsum(self.counts)
        total = int(self._cumulative[-1])
        # WeightedPicker::PickAt descends its tree of sums: the first class whose running
        # sum exceeds the position
        at = exact_uniform(words, total, count, wide=False)
        return np.searchsorted(self._cumulative, at, side="right").astype(np.int64)

    def probability(self, classes: np.ndarray) -> np.ndarray:
        total = np.float32(self.counts.sum())
        return self.counts[classes].astype(np.float32) / total

    def update(self, true_classes: np.ndarray) -> None:
        room = max(0, (1 << 31) - 1 - int(self.counts.sum()))   # TF keeps the total an int32
        np.add.at(self.counts, true_classes.reshape(-1)[:room], 1)
        self._cumulative = None


class FixedUnigram:
    """Weights `w ** distortion` (float32) after `num_reserved_ids` zero weights, the ids of
    this shard only (id % num_shards == shard); Walker's alias table of them."""

    def __init__(self, weights: np.ndarray):
        self.weights = weights.astype(np.float32)
        self.range = len(self.weights)
        total = np.float32(0.0)
        for w in self.weights:         # float32, in order (TF's running float sum)
            total = np.float32(total + w)
        self.total = total
        self._prob, self._alt = _alias_table(self.weights)

    @classmethod
    def build(cls, unigrams, distortion: float, reserved: int, shards: int, shard: int):
        weights = [0.0 for i in range(reserved) if i % shards == shard]
        power = np.float32(distortion)
        # TF numbers the unigrams from the count of reserved weights kept, not from
        # num_reserved_ids (FixedUnigramSampler::LoadFromUnigrams / LoadFromFile)
        for word_id, w in enumerate(unigrams, start=len(weights)):
            if word_id % shards == shard:
                weights.append(np.power(np.float32(w), power))
        return cls(np.array(weights, np.float32))

    def draw(self, words: Words, count: int) -> np.ndarray:
        out = np.empty(count, np.int64)
        n = self.range
        for i in range(count):
            r = philox._uint32_to_float(words.take(1))[0]
            idx = int(exact_uniform(words, n, 1, wide=False)[0])
            out[i] = idx if r < self._prob[idx] else self._alt[idx]
        return out

    def probability(self, classes: np.ndarray) -> np.ndarray:
        inside = (classes >= 0) & (classes < self.range)
        p = np.zeros(classes.shape, np.float32)
        p[inside] = self.weights[classes[inside]] / self.total
        return p


def _alias_table(weights: np.ndarray) -> tuple:
    """TF's DistributionSampler: Walker's alias method, the pairing in its stack order."""
    n = len(weights)
    total = 0.0
    for w in weights:      # a double running sum, in order
        total += float(w)
    pr = [float(np.float32(w * np.float32(n))) / total for w in weights]   # float product
    alt = [-1] * n
    low = [i for i in range(n) if pr[i] < 1.0]
    high = [i for i in range(n) if pr[i] >= 1.0]
    while high and low:
        small, big = low.pop(), high.pop()
        alt[small] = big
        pr[big] = pr[big] - (1.0 - pr[small])
        (low if pr[big] < 1.0 else high).append(big)
    prob = np.array(pr, np.float32)
    for i in high + low:     # rounding leftovers: always themselves
        prob[i], alt[i] = 1.0, i
    return prob, np.array(alt, np.int64)


def sample(sampler, words: Words, num_sampled: int, unique: bool) -> tuple:
    """(candidates, tries) of RangeSampler::SampleBatchGetExpectedCountAvoid."""
    if not unique:
        return sampler.draw(words, num_sampled), num_sampled
    seen: set = set()
    picked: list = []
    tries = 0
    while len(picked) < num_sampled:
        for c in sampler.draw(words, max(num_sampled - len(picked), 16)).tolist():
            tries += 1
            if c not in seen:
                seen.add(c)
                picked.append(c)
                if len(picked) == num_sampled:
                    break
    return np.array(picked, np.int64), tries


def expected_counts(p: np.ndarray, num_sampled: int, tries: int) -> np.ndarray:
    """TF's ExpectedCountHelper in float32."""
    if tries == num_sampled:
        return (p * np.float32(num_sampled)).astype(np.float32)
    with np.errstate(divide="ignore"):
        return -np.expm1(np.float32(tries) * np.log1p(-p))
