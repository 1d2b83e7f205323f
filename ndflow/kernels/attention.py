"""Kernels for _ScaledDotProductAttention and its gradient (ops/attention.py).

On CPUs, ATen's flash-attention kernels (`_scaled_dot_product_flash_attention_for_cpu` and
its backward): blocks of the scores live in cache, the (T, S) probabilities are never
written, and the gradient recomputes them from the saved log-sum-exp. Measured on a 2-core
Zen 4, for the Keras Transformer example's attention (32 x 2 heads x 200 x 200, depth 32),
forward and backward 10.6 ms against 13.8 ms for Einsum, Softmax, Einsum and their
gradients as separate kernels. ATen's kernel reads the mask as an additive bias of the query's
dtype, and its backward, which recomputes each probability as exp(score - lse), cannot
recover a row whose scores are all masked (lse is -0.7 x max there, with log(S) rounded
away): such a row's gradient is taken out of its call and added back as what it is, the
row's output gradient averaged into every value row.

Elsewhere (other devices, a value depth unlike the key depth, empty dimensions, which the
flash kernels divide by) the same math runs as matmuls and a softmax (16-bit types in
float32), the probabilities recomputed by the gradient.

Float32 attention with a depth a multiple of 16 has a second candidate,
kernels/attention_numba.py's vector kernels, and the autotuner (kernels/autotune.py) times
the two once per shape, forward and gradient apart (both write ATen's log-sum-exp, so either
gradient takes either forward's outputs).
"""

from __future__ import annotations

import torch

from ndflow.core.errors import InvalidArgumentError
from ndflow.kernels import attention_numba, autotune
from ndflow.kernels.registry import kernel
from ndflow.ops import attention

aten = torch.ops.aten
_HALF = (torch.float16, torch.bfloat16)
FLASH, VECTOR = "flash", "vector"   # the autotuner's candidates: ATen's, attention_numba's


def _views(name: str, q, k, v, masks):
    """(batch, heads, length, depth) views of the BTNH inputs, checked against each other
    (the shape function checks only what the graph knew), and the mask as rank 4."""
    dims = [t.shape for t in (q, k, v)]
    if any(len(d) != 4 for d in dims):
        raise InvalidArgumentError(None, None, f"{name}: query, key and value must be rank 4 "
                                   f"(batch, length, heads, depth); got shapes "
                                   f"{[list(d) for d in dims]}")
    (b, t, n, h), (kb, s, kn, kh), (vb, vs, vn, _) = dims
    if not (b == kb == vb and n == kn == vn and s == vs and h == kh):
        raise InvalidArgumentError(None, None, f"{name}: incompatible shapes query "
                                   f"{list(q.shape)}, key {list(k.shape)}, value "
                                   f"{list(v.shape)}")
    mask = None
    if masks:
        mask = masks[0]
        if mask.dim() > 4:
            raise InvalidArgumentError(None, None, f"{name}: mask must be of rank at most 4, "
                                       f"got shape {list(mask.shape)}")
        mask = mask.reshape((1,) * (4 - mask.dim()) + tuple(mask.shape))
        try:
            torch.broadcast_shapes(mask.shape, (b, n, t, s))
        except RuntimeError:
            raise InvalidArgumentError(None, None, f"{name}: mask of shape {list(masks[0].shape)}"
                                       f" does not broadcast to {[b, n, t, s]}") from None
    return q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), mask


def _flash(q, v) -> bool:
    return (q.device.type == "cpu" and q.numel() > 0 and v.numel() > 0
            and q.shape[-1] == v.shape[-1])


def _masked_score(dtype: torch.dtype) -> float:
    return -0.7 * torch.finfo(dtype).max


def _bias(mask, dtype):
    return torch.zeros(mask.shape, dtype=dtype, device=mask.device).masked_fill_(
        ~mask, _masked_score(dtype))


def _probs(Q, K, mask, scale: float):
    compute = torch.float32 if Q.dtype in _HALF else Q.dtype
    scores = torch.matmul(Q.to(compute), K.to(compute).transpose(-1, -2)).mul_(scale)
    if mask is not None:
        scores.masked_fill_(~mask, _masked_score(compute))
    return scores


@kernel(attention.ScaledDotProductAttention)
def _attention(node):
    name, scale = node.op_def.name, node.attrs["scale"]

    def run(q, k, v, *masks):
        Q, K, V, mask = _views(name, q, k, v, masks)
        if _flash(Q, V):
            def flash(algorithm):
                if algorithm == VECTOR:
                    return attention_numba.forward(q, k, v, scale, mask)
                bias = None if mask is None else _bias(mask, Q.dtype)
                out, lse = aten._scaled_dot_product_flash_attention_for_cpu(
                    Q, K, V, 0.0, False, attn_mask=bias, scale=scale)
                return out.transpose(1, 2), lse
            if attention_numba.applies(q, k, v, mask):
                return autotune.run_tuned(_key("attention", q, k, mask), _flops(q, k), flash,
                                          (FLASH, VECTOR))
            return flash(FLASH)
        scores = _probs(Q, K, mask, scale)
        out = torch.matmul(torch.softmax(scores, -1), V.to(scores.dtype)).to(q.dtype)
        return out.transpose(1, 2), torch.logsumexp(scores, -1)
    return run


@kernel(attention.ScaledDotProductAttentionGrad)
def _attention_grad(node):
    name, scale = node.op_def.name, node.attrs["scale"]

    def run(grad, q, k, v, out, lse, *masks):
        Q, K, V, mask = _views(name, q, k, v, masks)
        G, O = grad.transpose(1, 2), out.transpose(1, 2)
        if _flash(Q, V):
            def flash(algorithm):
                if algorithm == VECTOR:
                    return attention_numba.backward(grad, q, k, v, out, scale, mask)
                return _flash_grad(G, Q, K, V, O, lse, mask, scale)
            if attention_numba.applies(q, k, v, mask) and grad.dtype == torch.float32:
                return autotune.run_tuned(_key("attention_grad", q, k, mask),
                                          2.5 * _flops(q, k), flash, (FLASH, VECTOR))
            return flash(FLASH)
        scores = _probs(Q, K, mask, scale)
        p = torch.softmax(scores, -1)
        g = G.to(p.dtype)
        dp = torch.matmul(g, V.to(p.dtype).transpose(-1, -2))
        ds = p * (dp - (dp * p).sum(-1, keepdim=True))
        if mask is not None:
            ds.masked_fill_(~mask, 0)
        dq = torch.matmul(ds, K.to(p.dtype)).mul_(scale)
        dk = torch.matmul(ds.transpose(-1, -2), Q.to(p.dtype)).mul_(scale)
        dv = torch.matmul(p.transpose(-1, -2), g)
        return tuple(d.to(q.dtype).transpose(1, 2) for d in (dq, dk, dv))
    return run


def _key(kind: str, q, k, mask) -> tuple:
    return kind, tuple(q.shape), tuple(k.shape), None if mask is None else tuple(mask.shape)


def _flops(q, k) -> float:
    """The forward's two products: 4 x batch x heads x queries x keys x depth."""
    b, t, n, d = q.shape
    return 4.0 * b * n * t * k.shape[1] * d


def _flash_grad(G, Q, K, V, O, lse, mask, scale):
    bias = dead = None
    if mask is not None:
        bias = _bias(mask, Q.dtype)
        dead = (~mask).all(-1, keepdim=True)
        if not bool(dead.any()):
            dead = None
    dq, dk, dv = aten._scaled_dot_product_flash_attention_for_cpu_backward(
        G if dead is None else G.masked_fill(dead, 0), Q, K, V, O, lse, 0.0, False,
        attn_mask=bias, scale=scale)
    if dead is not None:   # an all-masked row averages every value: its share of their grads
        dv = dv + (G * dead).sum(2, keepdim=True).div_(K.shape[2]).to(dv.dtype)
    return dq.transpose(1, 2), dk.transpose(1, 2), dv.transpose(1, 2)
