"""`philox_numba.generate_elements`: `count` executions drawn at once (a vectorized tf.data
map's random op) equal `count` separate draws, each at its own reserve (counter + k * n * 256),
for every distribution and float kind, across a 64-bit carry of the counter; a large uniform
drawn on several threads equals the one-thread draw."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from ndflow.kernels import philox, philox_numba

KEY = [0x12345678, 0x9ABCDEF0]
COUNTERS = [[5, 0, 0, 0], [0xFFFFFF00, 0xFFFFFFFF, 7, 0]]   # the second carries into word 2


def _separate(kind, float_kind, count, n, counter, lo, hi):
    start = sum(w << (32 * i) for i, w in enumerate(counter))
    parts = [philox_numba.generate(kind, float_kind, n, KEY,
                                   [(start + k * n * 256) >> (32 * i) & 0xFFFFFFFF
                                    for i in range(4)], lo, hi) for k in range(count)]
    return np.concatenate(parts) if parts else np.zeros(0)


@pytest.mark.parametrize("counter", COUNTERS, ids=["small", "carry"])
@pytest.mark.parametrize("count,n", [(0, 3), (1, 1), (3, 1), (3, 5), (2, 8), (4, 0)])
@pytest.mark.parametrize("kind,float_kind,lo,hi", [
    ("uniform", "float", 0, 0), ("uniform", "bfloat16", 0, 0), ("uniform", "half", 0, 0),
    ("uniform", "double", 0, 0), ("normal", "float", 0, 0),
    ("truncated_normal", "float", 0, 0), ("uniform_int", "int32", -5, 9)])
def test_equals_separate_draws(kind, float_kind, lo, hi, count, n, counter):
    got = philox_numba.generate_elements(kind, float_kind, count, n, KEY, counter, lo, hi)
    want = _separate(kind, float_kind, count, n, counter, lo, hi)
    assert got.shape == (count * n,)
    np.testing.assert_array_equal(got, want.astype(got.dtype))


@pytest.mark.parametrize("counter", COUNTERS, ids=["small", "carry"])
@pytest.mark.parametrize("n", [philox_numba.PARALLEL_VALUES, philox_numba.PARALLEL_VALUES + 3,
                               802_816])
@pytest.mark.parametrize("float_kind", ["float", "bfloat16"])
def test_a_large_uniform_draws_the_same_on_every_thread_count(float_kind, n, counter):
    """From PARALLEL_VALUES on, a float32/16-bit uniform is drawn in chunks on ATen's OpenMP
    team: the values of the one-thread kernel, and of the NumPy reference at the threshold."""
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        parallel = philox_numba.generate("uniform", float_kind, n, KEY, counter)
        torch.set_num_threads(1)
        single = philox_numba.generate("uniform", float_kind, n, KEY, counter)
    finally:
        torch.set_num_threads(threads)
    np.testing.assert_array_equal(parallel, single)
    if n == philox_numba.PARALLEL_VALUES:
        np.testing.assert_array_equal(parallel, philox.uniform(n, float_kind, KEY, counter))
