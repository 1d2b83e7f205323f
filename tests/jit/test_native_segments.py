"""Native segments (ndflow/jit/native_segments.py): runs of small products and generated
kernels compiled into one function, against NumPy in float64 and the uncompiled cluster."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ndflow as tf
from ndflow.jit import executable, native_segments
from ndflow.jit.executable import compile_cluster
from ndflow.kernels import small_gemm_numba
from ndflow.ops import nn_fused
from ndflow.ops.apply import apply_op
from tests.jit.cluster_graphs import CountingFallback, build, randn

CPU = torch.device("cpu")
pytestmark = pytest.mark.skipif(
    executable._codegen is None or executable._fusion is None
    or small_gemm_numba._kernel() is None, reason="needs the fusion planner and numba")


def _fused(x, w, b, ops, ta=False, tb=False):
    return apply_op(nn_fused.FusedMatMul, [x, w, [b]], {"fused_ops": ops, "transpose_a": ta,
                                                       "transpose_b": tb},
                    name="fused_matmul").outputs[0]


def _step(ta, tb):
    """A relu layer, a 10-logit head (not whole 16-lane vectors) and the products of their
    gradient (each layout of transposes), as a training step's cluster has them."""
    def fn(x, w1, b1, w2, b2):
        h = _fused(x, w1, b1, ["BiasAdd", "Relu"], ta, tb)   # (x, w1 given transposed)
        y = _fused(h, w2, b2, ["BiasAdd"])
        g = tf.tanh(y)
        dh = tf.matmul(g, w2, transpose_b=True) * tf.cast(h > 0, tf.float32)
        dw = tf.matmul(h, g, transpose_a=True)
        return [y, dh, dw, tf.reduce_sum(dh, axis=0)]
    return fn


def _reference(x, w1, b1, w2, b2):
    x, w1, b1, w2, b2 = (t.numpy().astype(np.float64) for t in (x, w1, b1, w2, b2))
    h = np.maximum(x @ w1 + b1, 0)
    y = h @ w2 + b2
    g = np.tanh(y)
    dh = (g @ w2.T) * (h > 0)
    return [y, dh, h.T @ g, dh.sum(0)]


def _args(ta, tb, m=24, k=20, n=48):
    x, w1 = randn(m, k, seed=1), randn(k, n, seed=2)
    args = [x.t().contiguous() if ta else x, w1.t().contiguous() if tb else w1,
            randn(n, seed=3), randn(n, 10, seed=4), randn(10, seed=5)]
    return args, [x, w1, *args[2:]]


def _compiled(fn, args):
    specs = [(tf.as_dtype(a.dtype), tuple(a.shape)) for a in args]
    return compile_cluster(build(fn, [(dt, list(s)) for dt, s in specs]), specs, CPU)


def _check(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.numpy(), w, rtol=2e-5,
                                   atol=2e-5 * max(1.0, float(np.abs(w).max())))


@pytest.mark.parametrize("ta", [False, True])
@pytest.mark.parametrize("tb", [False, True])
def test_a_training_steps_products_and_kernels_in_one_function(ta, tb):
    args, plain = _args(ta, tb)
    exe = _compiled(_step(ta, tb), args)
    # the two products of the forward pass; the gradient's products and kernel
    assert exe.stats["native_segments"] == 2 and exe.stats["native_segment_ops"] >= 8
    steps = [what for _, what, _ in exe.profile(args, steps=1)]
    assert not any(what in ("MatMul", "_FusedMatMul") for what in steps)   # all inside
    assert any("MatMul" in what and "Sum" in what for what in steps)
    _check(exe(args), _reference(*plain))
    _check(exe(args), _reference(*plain))       # a second call: scratch and outputs anew
    # a transposed view where a contiguous input was compiled for: made contiguous
    x = args[0].t().contiguous().t()
    _check(exe([x, *args[1:]]), _reference(*plain))


def test_switched_off_and_large_products_keep_their_calls(monkeypatch):
    args, plain = _args(False, False)
    monkeypatch.setenv("NDFLOW_JIT_NATIVE_SEGMENTS", "0")
    exe = _compiled(_step(False, False), args)
    assert exe.stats["native_segments"] == 0
    _check(exe(args), _reference(*plain))
    monkeypatch.delenv("NDFLOW_JIT_NATIVE_SEGMENTS")
    # a product a GEMM library runs on both cores stays a library call between segments
    args, plain = _args(False, False, m=160, k=160, n=160)
    exe = _compiled(_step(False, False), args)
    steps = [what for _, what, _ in exe.profile(args, steps=1)]
    assert "_FusedMatMul" in steps and exe.stats["native_segments"] >= 1
    _check(exe(args), _reference(*plain))


def test_a_segment_is_cut_at_its_scratch_limit(monkeypatch):
    args, plain = _args(False, False)
    whole = _compiled(_step(False, False), args).stats["native_segments"]
    # the first two products' outputs ([24, 48] and [24, 10] float32) fit, no more
    monkeypatch.setattr(native_segments, "SCRATCH_BYTES", (24 * 48 + 24 * 10) * 4)
    cut = _compiled(_step(False, False), args)
    assert 0 < cut.stats["native_segments"] < whole
    _check(cut(args), _reference(*plain))


def test_the_uncompiled_cluster_agrees():
    """Against the cluster's own plan (registry kernels, no fusion)."""
    args, _ = _args(True, False)
    fg = build(_step(True, False), [(tf.float32, list(a.shape)) for a in args])
    exe = compile_cluster(fg, [(tf.float32, tuple(a.shape)) for a in args], CPU)
    for got, want in zip(exe(args), CountingFallback(fg)(args)):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-5)
