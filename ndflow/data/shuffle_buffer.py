"""TensorFlow's shuffle buffer (ShuffleDatasetOp's iterator) on its Philox streams, so that
seeded `Dataset.shuffle` gives TensorFlow's exact order.

Seeds. A shuffle dataset owns a *seed generator* made from its two seeds (tf.data's
`get_seed`; both 0: two random 64-bit seeds). Each iterator over the dataset (each epoch of
a `repeat` after it) takes the generator's next seed pair when it starts: with
`reshuffle_each_iteration=True` (TF's RandomSeedGenerator) draw k is the 32-bit words 2k and
2k + 1 of PhiloxRandom(seed, seed2); with False (FixedSeedGenerator) every draw is the
dataset's own (seed, seed2).

Order. An iterator with seeds (s, s2) reads 32-bit words one at a time from
PhiloxRandom(s, s2) (key s, counter [0, 0, s2 low, s2 high]; the four words of each call in
order: TF's SingleSampleAdapter). Its buffer is a ring of `buffer_size` slots holding a
window of consecutive positions [start, end): before each output it refills up to
`buffer_size` elements from the input (at position end), then outputs the element at
position start + word % (end - start), moves the element at `start` into that slot and
advances `start`. When the input ends the buffer drains the same way.

`order(n, buffer_size, stream)` is that order on input indices, for inputs whose elements
are rows that can be gathered in bulk: a numba kernel (`cache=True`) for long inputs, else
a Python loop (numba's start costs more than the loop saves on shorter inputs).
`shuffled(make_source, buffer_size, stream)` runs it on any elements. The words come from
NumPy's Philox (kernels/philox.py), one vectorized call per take.
"""

from __future__ import annotations

import secrets
import threading

import numpy as np

from ndflow.kernels import philox
from ndflow.kernels.build_once import built_once

_MASK64 = (1 << 64) - 1
_MASK128 = (1 << 128) - 1
_CHUNK = 4096  # words generated at once for an element-by-element shuffle (1024 calls)
# From this many elements the order is computed by a numba kernel: numba's first use in a
# process costs ~0.4 s, the Python loop ~0.4 us per element (the kernel's ~0.06 us).
_KERNEL_FROM = 250_000



def _words_of(counter: int) -> list[int]:
    return [counter & 0xFFFFFFFF, counter >> 32 & 0xFFFFFFFF, counter >> 64 & 0xFFFFFFFF,
            counter >> 96]


class WordStream:
    """The 32-bit words of TF's PhiloxRandom(seed, seed2), in order."""

    __slots__ = ("_key", "_counter")

    def __init__(self, seed: int, seed2: int):
        s, s2 = int(seed) & _MASK64, int(seed2) & _MASK64
        self._key = (s & 0xFFFFFFFF, s >> 32)
        self._counter = s2 << 64

    def take(self, n: int) -> np.ndarray:
        """The next n words (uint32 [n]); n must be a multiple of 4 unless it is the last
        take (a call's unused words are skipped)."""
        calls = -(-n // 4)
        out = philox.random_bits(calls, self._key, _words_of(self._counter)).reshape(-1)[:n]
        self._counter = (self._counter + calls) & _MASK128
        return out

    def words(self):
        """An endless iterator of the words as Python ints."""
        while True:
            yield from self.take(_CHUNK).tolist()


class SeedGenerator:
    """One shuffle dataset's seed generator (TF's RandomSeedGenerator, or FixedSeedGenerator
    when the order does not change between iterations). `draws` counts the pairs handed out
    (an iterator checkpoint records it); draw k depends on k alone."""

    __slots__ = ("_given", "seed", "seed2", "reshuffle", "draws", "_lock")

    def __init__(self, seed: int, seed2: int, reshuffle: bool):
        self._given = (int(seed), int(seed2))
        if seed == 0 and seed2 == 0:  # TF: nondeterministic seeds
            seed, seed2 = secrets.randbits(64), secrets.randbits(64)
        self.seed, self.seed2 = int(seed), int(seed2)
        self.reshuffle = bool(reshuffle)
        self.draws = 0
        self._lock = threading.Lock()

    def fresh(self) -> SeedGenerator:
        """A new generator from the same seeds (the dataset made anew: unseeded, new random
        seeds)."""
        return SeedGenerator(*self._given, self.reshuffle)

    def next_seeds(self) -> tuple[int, int]:
        """The seeds of the next iterator (or epoch of a repeat)."""
        with self._lock:
            k = self.draws
            self.draws = k + 1
        if not self.reshuffle:
            return self.seed, self.seed2
        s, s2 = self.seed & _MASK64, self.seed2 & _MASK64
        call = philox.random_bits(1, (s & 0xFFFFFFFF, s >> 32),
                                  _words_of(((s2 << 64) + k // 2) & _MASK128))[0]
        first = 2 * (k % 2)  # pair k: words 2k, 2k + 1 of the stream, four per call
        return int(call[first]), int(call[first + 1])


def _build():
    try:
        import numba  # noqa: PLC0415 - loads on the first bulk shuffle, not with `import ndflow`
    except ImportError:
        return None

    @numba.njit(cache=True, nogil=True)
    def fill_order(out, words, buffer_size):
        n = out.shape[0]
        cap = min(buffer_size, n)  # the window never holds more: positions mod cap suffice
        ring = np.empty(cap, np.int64)
        start = 0
        end = 0
        for t in range(n):
            while end < n and end - start < buffer_size:
                ring[end % cap] = end
                end += 1
            i = (start + np.int64(np.uint64(words[t]) % np.uint64(end - start))) % cap
            out[t] = ring[i]
            ring[i] = ring[start % cap]
            start += 1
    return fill_order


# the numba kernel, built on first use (None without numba)
_kernel = built_once(lambda: _build())


def fill_order_loop(out: np.ndarray, words: np.ndarray, buffer_size: int) -> None:
    """The numba kernel's loop in Python: `out[t]` = the input index of output t."""
    n = out.shape[0]
    cap = min(buffer_size, n)
    ring = [0] * cap
    start = end = 0
    for t, w in enumerate(words.tolist()):
        while end < n and end - start < buffer_size:
            ring[end % cap] = end
            end += 1
        i = (start + w % (end - start)) % cap
        out[t] = ring[i]
        ring[i] = ring[start % cap]
        start += 1


def order(n: int, buffer_size: int, stream: WordStream) -> np.ndarray:
    """int64 [n]: the input index of each output of a shuffle of n elements."""
    out = np.empty(n, np.int64)
    if n:
        fill = _kernel() if n >= _KERNEL_FROM else None
        (fill or fill_order_loop)(out, stream.take(n), buffer_size)
    return out


def shuffled(make_source, buffer_size: int, stream: WordStream):
    """The elements of the iterator `make_source()` (called on the first pull) in the order
    of TF's shuffle buffer."""
    source = make_source()
    words = stream.words()
    buf: list = []
    start = end = 0
    more = True
    while True:
        while more and end - start < buffer_size:
            item = next(source, _END)
            if item is _END:
                more = False
                break
            if end < buffer_size:  # the ring's first pass: slot `end` is the next new one
                buf.append(item)
            else:
                buf[end % buffer_size] = item
            end += 1
        if end == start:
            return
        i = (start + next(words) % (end - start)) % buffer_size
        item = buf[i]
        s = start % buffer_size
        buf[i] = buf[s]
        buf[s] = None  # TF moves the element out: the buffer keeps no reference to it
        start += 1
        yield item


_OUT_CHUNK = 256  # values per list out of `shuffled_chunks`


def shuffled_chunks(make_chunks, buffer_size: int, stream: WordStream):
    """`shuffled` on lists of values: `make_chunks()` (called on the first pull) gives lists
    of input values, the result lists of outputs, in `shuffled`'s order. Once the ring is
    full, each output takes one input into the slot the last one left and one word: that
    steady state runs as one tight loop over an input list (no generator per value). The
    values produced before an input error come out before it."""
    chunks = make_chunks()
    size = buffer_size
    buf: list = []
    start = end = 0
    items: list = []
    k = 0  # the next input value: items[k]
    words: list = []
    w = 0  # the next word: words[w]
    out: list = []
    more = True
    while True:
        while more and end - start < size:   # fill (and refill while the input lasts)
            if k == len(items):
                try:
                    nxt = next(chunks, None)
                except BaseException:
                    if out:
                        yield out  # the outputs before the error, then the error
                        out = []
                    raise
                if nxt is None:
                    more = False
                    break
                items, k = nxt, 0
                continue
            if end < size:  # the ring's first pass: append as many as it takes at once
                take = min(size - end, len(items) - k)
                buf.extend(items[k:k + take])
                k += take
                end += take
                continue
            buf[end % size] = items[k]
            k += 1
            end += 1
        if end == start:
            if out:
                yield out
            return
        if w == len(words):   # one draw (once the input is over, the ring drains this way)
            words, w = stream.take(_CHUNK).tolist(), 0
        i = (start + words[w] % (end - start)) % size
        w += 1
        s = start % size
        out.append(buf[i])
        buf[i] = buf[s]
        buf[s] = None
        start += 1
        m = min(len(items) - k, len(words) - w)
        if more and m > 0 and end >= size and end - start == size - 1:
            # steady state: the free slot is the one just left (end % size == s)
            append = out.append
            p, s = s, start % size
            for item, word in zip(items[k:k + m], words[w:w + m]):
                buf[p] = item
                i = (s + word % size) % size
                append(buf[i])
                buf[i] = buf[s]
                p = s
                s += 1
                if s == size:
                    s = 0
            buf[p] = None  # the last slot left keeps no reference
            k += m
            w += m
            start += m
            end += m
        if len(out) >= _OUT_CHUNK:
            yield out
            out = []


_END = object()
