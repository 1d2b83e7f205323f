"""Generated kernels split into chunks run by ATen's OpenMP threads (kernels/omp_pool.py).

The default suite runs one intra-op thread per xdist worker, so the chunked path is forced
here: two threads, every size chunked, chunks of a few rows (many chunks per thread, so the
atomic chunk counter is exercised). Each kernel must be chunked (its source has the C
callback), equal to the op-by-op reference, and bit-equal to the same kernel run serially:
a chunk holds whole reductions, so the accumulation order does not change.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ndflow as tf
from ndflow.core import dtypes
from ndflow.jit.codegen import compile_fusion, numba_backend
from ndflow.kernels import omp_pool
from tests.jit.jit_graphs import (
    CPU,
    assert_same,
    build,
    group_of,
    random_tensor,
    raw,
    run_reference,
)

pytestmark = pytest.mark.skipif(omp_pool.launcher() is None,
                                reason="ATen's parallel backend here is not OpenMP")
F32, BF16 = dtypes.float32, dtypes.bfloat16


@pytest.fixture
def two_threads(monkeypatch):
    threads = torch.get_num_threads()
    torch.set_num_threads(2)
    monkeypatch.setattr(numba_backend, "PARALLEL_MIN_ELEMENTS", 0)
    monkeypatch.setattr(numba_backend, "MIN_CHUNK_ELEMENTS", 1)
    yield
    torch.set_num_threads(threads)


def _compile(fn, specs, chunked: bool):
    g, phs, outs = build(fn, specs)
    kernel = compile_fusion(group_of(g, phs, outs), [(dt, tuple(s)) for dt, s in specs], CPU,
                            None)
    assert ("def tramp(" in kernel.source) == chunked, kernel.source
    return g, phs, outs, kernel


def _check(fn, specs, chunked=True, seed=0, specials=True):
    g, phs, outs, kernel = _compile(fn, specs, chunked)
    rng = np.random.default_rng(seed)
    feeds = {p: random_tensor(dt, shape, rng, specials) for p, (dt, shape) in zip(phs, specs)}
    want = run_reference(g.get_operations(), feeds)
    got = kernel(*[feeds[p] for p in phs])
    for t, v in zip(outs, got):
        assert_same(v, want[t], t.dtype, f"{t.op.type} ({t.dtype.name})")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)     # the same kernel with a team of one: serial order
    try:
        serial = kernel(*[feeds[p] for p in phs])
    finally:
        torch.set_num_threads(threads)
    for a, b in zip(got, serial):
        assert torch.equal(_bits(a), _bits(b))


_INT_OF_SIZE = {2: torch.int16, 4: torch.int32, 8: torch.int64}


def _bits(t):
    """The values' bit patterns (NaN equals NaN)."""
    return t.view(_INT_OF_SIZE[t.element_size()]) if t.is_floating_point() else t


def _gelu(h):
    def c(v):
        return tf.constant(v, h.dtype)
    cube = raw("Mul", raw("Mul", h, h), h)
    inner = raw("Mul", c(0.7978845608), raw("AddV2", h, raw("Mul", c(0.044715), cube)))
    return raw("Mul", raw("Mul", c(0.5), h), raw("AddV2", c(1.0), raw("Tanh", inner)))


@pytest.mark.parametrize("dt", [F32, BF16], ids=lambda d: d.name)
def test_elementwise_with_broadcast_operands(two_threads, dt):
    _check(lambda x, b: [_gelu(raw("BiasAdd", x, b)), raw("Mul", x, tf.constant(2.0, dt))],
           [(dt, [37, 45]), (dt, [45])])


def test_row_and_column_reductions(two_threads):
    ax0, ax1 = tf.constant([0]), tf.constant([1])
    # rows: a layer norm's statistics; columns: bias and gamma gradients beside dx
    _check(lambda x: [raw("Mean", raw("Square", x), ax1, keep_dims=True), _gelu(x)],
           [(F32, [40, 33])])
    _check(lambda x, y: [raw("Sum", raw("Mul", x, y), ax0, keep_dims=False),
                         raw("Sum", y, ax0, keep_dims=False), raw("Mul", x, y)],
           [(F32, [40, 33]), (F32, [40, 33])])


def test_reductions_with_kept_dimensions_around_them(two_threads):
    # [kept, reduced, kept]: accumulator arrays, split along the first dimension
    _check(lambda x: [raw("Sum", raw("Exp", raw("Mul", x, tf.constant(0.1))), tf.constant([1]),
                          keep_dims=False)], [(F32, [6, 7, 9])])
    # [reduced, kept, kept]: split along the second
    _check(lambda x: [raw("Max", raw("Abs", x), tf.constant([0]), keep_dims=True)],
           [(F32, [5, 6, 7])])


def test_a_transposed_operand(two_threads):
    _check(lambda x, y: [raw("AddV2", raw("Transpose", x, tf.constant([1, 0])), y)],
           [(F32, [12, 8]), (F32, [8, 12])])


def test_integer_means_and_booleans_stay_serial(two_threads):
    i32 = dtypes.int32
    _check(lambda x: [raw("Mean", raw("Square", x), tf.constant([0, 1]), keep_dims=False)],
           [(i32, [16, 8])], chunked=False)
    _check(lambda x, y: [raw("Greater", x, y)], [(F32, [16, 8]), (F32, [16, 8])],
           chunked=False)


def test_one_thread_compiles_the_plain_kernel(monkeypatch):
    monkeypatch.setattr(numba_backend, "PARALLEL_MIN_ELEMENTS", 0)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        _compile(lambda x: [raw("Tanh", x)], [(F32, [16, 8])], chunked=False)
    finally:
        torch.set_num_threads(threads)


@pytest.mark.parametrize("dt", [F32, BF16], ids=lambda d: d.name)
def test_full_reductions_combine_the_chunks_partials(two_threads, dt):
    """A reduction to a scalar (the loss's mean of a GELU, beside its elementwise output):
    each chunk leaves partials, combined by the thread that finishes the last chunk (finite
    values: an inf or NaN would hide a partial left out)."""
    axes = tf.constant([0, 1])
    _check(lambda x: [raw("Mean", raw("Square", _gelu(x)), axes, keep_dims=False), _gelu(x),
                      raw("Sum", x, axes, keep_dims=False), raw("Max", x, axes, keep_dims=False),
                      raw("Min", x, axes, keep_dims=False)],
           [(dt, [40, 33])], specials=False)
