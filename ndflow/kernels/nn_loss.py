"""ATen kernels for the softmax cross-entropy losses and L2Loss (small sparse cross-entropies
in one numba pass: xent_numba.py)."""

from __future__ import annotations

import torch

from ndflow.core.errors import InvalidArgumentError
from ndflow.kernels import sum_squares_numba, xent_numba
from ndflow.kernels.registry import kernel
from ndflow.ops import nn_loss

aten = torch.ops.aten


@kernel(nn_loss.SoftmaxCrossEntropyWithLogits)
def _xent(node):
    def xent(features, labels):
        if features.shape != labels.shape:
            features, labels = torch.broadcast_tensors(features, labels)
        lsm = torch.log_softmax(features, 1)
        loss = torch.sum(labels * lsm, 1).neg_()
        return loss, lsm.exp_().sub_(labels)
    return xent


def _check_labels(labels, classes: int) -> None:
    if labels.numel() == 0:
        return
    lo, hi = torch.aminmax(labels)
    if int(lo) >= 0 and int(hi) < classes:
        return
    values = labels.tolist()
    bad = next(v for v in values if v < 0 or v >= classes)
    raise InvalidArgumentError(
        None, None, f"Received a label value of {bad} which is outside the valid range of "
        f"[0, {classes}).  Label values: {' '.join(str(v) for v in values)}")


def _sparse_xent_aten(features: torch.Tensor, idx: torch.Tensor) -> tuple:
    """(loss, backprop) by ATen's ops for int64 labels `idx` in range."""
    idx = idx.unsqueeze(1)
    lsm = torch.log_softmax(features, 1)
    loss = lsm.gather(1, idx).squeeze(1).neg_()
    backprop = lsm.exp_()
    backprop.scatter_add_(1, idx, torch.full((idx.shape[0], 1), -1.0, dtype=backprop.dtype,
                                             device=backprop.device))
    return loss, backprop


def sparse_xent_nan_rows(features: torch.Tensor, labels: torch.Tensor) -> tuple:
    """(loss, backprop) as TensorFlow's GPU kernel gives them: a label outside [0, classes)
    is no error there but NaN in its row of the loss and of the gradient. Checking on the
    host, as the CPU kernel does, would wait for the device twice a step."""
    classes = features.shape[1]
    idx = labels.long()
    if classes == 0:   # every label is out of range
        return (torch.full(idx.shape, float("nan"), dtype=features.dtype, device=features.device),
                torch.empty_like(features))
    bad = (idx < 0) | (idx >= classes)
    loss, backprop = _sparse_xent_aten(features, idx.clamp(0, classes - 1))
    nan = float("nan")
    return loss.masked_fill_(bad, nan), backprop.masked_fill_(bad.unsqueeze(1), nan)


@kernel(nn_loss.SparseSoftmaxCrossEntropyWithLogits)
def _sparse_xent(node):
    def sparse_xent(features, labels):
        classes = features.shape[1]
        if labels.shape[0] != features.shape[0]:
            raise InvalidArgumentError(
                None, None, f"logits and labels must have the same first dimension, got "
                f"logits shape [{features.shape[0]},{classes}] and labels shape "
                f"[{labels.shape[0]}]")
        if xent_numba.applies(features, labels):
            loss, backprop, bad = xent_numba.sparse_xent(features, labels)
            if bad >= 0:
                _check_labels(labels, classes)   # raises TensorFlow's error
            return loss, backprop
        if features.device.type != "cpu":
            return sparse_xent_nan_rows(features, labels)
        _check_labels(labels, classes)
        return _sparse_xent_aten(features, labels.long())
    return sparse_xent


@kernel(nn_loss.L2Loss)
def _l2_loss(node):
    def l2_loss(t):
        if sum_squares_numba.applies(t):   # (a large weight: summed on every thread)
            return torch.tensor(sum_squares_numba.sum_of_squares(t) * 0.5,
                                dtype=torch.float32)
        if t.dtype in (torch.float32, torch.float64) and t.is_contiguous():
            flat = t.view(-1)
            return torch.dot(flat, flat).mul_(0.5)
        return torch.sum(torch.square(t), dtype=torch.float32 if t.dtype in (
            torch.float16, torch.bfloat16) else None).mul_(0.5).to(t.dtype)
    return l2_loss
