"""GenerateBoundingBoxProposals (ops/image_proposals.py) with the arithmetic of TF's GPU kernel
(core/kernels/image/generate_box_proposals_op.cu.cc; TF registers no CPU kernel).

1. Each image's scores are sorted in descending order as CUB's stable radix sort orders
   float keys (by their bits: +NaN first, then +inf ... +0.0, -0.0 ... -inf; equal keys in
   index order), and the first min(H W A, pre_nms_topn) kept.
2. Their boxes are decoded in float32 as the kernel does, with nvcc's default contraction of
   `ctr + width * d` into one fused multiply-add (computed exactly here: the product in
   float64, then one correct rounding of the sum to float32); dh and dw are capped at
   float(log(1000 / 16)) with fminf (a NaN delta becomes the cap), corners clamped to
   [0, width] / [0, height] with fminf / fmaxf, and boxes with min(w, h) < min_size * scale
   dropped, keeping the score order.
3. Greedy non-max suppression (a numba loop on the host) in that order keeps a box unless a
   kept box overlaps it: intersection > (area_a + area_b - intersection) * nms_threshold, in
   float32, boxes of zero area overlapping nothing (NmsGpu's OverThreshold); the first
   post_nms_topn kept boxes are the output, as (y1, x1, y2, x2), zeros after them.

The scores' sort and the decoding run on the input's device; the suppression on the host.
expf may differ from CUDA's in the last bit (CUDA's expf is within 2 ulp), so may a box.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from ndflow.core.errors import InvalidArgumentError, OutOfRangeError
from ndflow.core.shapes import fmt
from ndflow.kernels.build_once import built_once
from ndflow.kernels.registry import kernel
from ndflow.ops import image_proposals as ops

_F32, _F64 = torch.float32, torch.float64
BBOX_XFORM_CLIP = float(np.float32(math.log(1000.0 / 16.0)))


def _bad(message: str):
    raise InvalidArgumentError(None, None, message)


def radix_order(scores: torch.Tensor) -> torch.Tensor:
    """Indices [N, K] sorting each row of float32 `scores` [N, K] as CUB's
    SortPairsDescending over all 32 bits: stable, by the float's radix key."""
    bits = scores.contiguous().view(torch.int32).to(torch.int64) & 0xFFFFFFFF
    key = torch.where(bits >= 0x80000000, bits ^ 0xFFFFFFFF, bits ^ 0x80000000)
    return torch.sort(key, dim=-1, descending=True, stable=True).indices


def fma32(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
    """float32 a * b + c rounded once (fmaf), from float32 tensors."""
    p = a.to(_F64) * b.to(_F64)                 # exact: 24 + 24 bits
    cd = c.to(_F64)
    s = p + cd
    t = s - p                                   # TwoSum: s + err == p + c exactly
    err = (p - (s - t)) + (cd - t)
    r = s.to(_F32)
    # Double rounding goes wrong only when s lands on a float32 midpoint while the exact
    # sum does not: then the exact sum's side of the midpoint (err's sign) decides.
    toward = torch.where(s > r.to(_F64), torch.full_like(r, math.inf),
                         torch.full_like(r, -math.inf))
    other = torch.nextafter(r, toward)
    midpoint = (r.to(_F64) + other.to(_F64)) * 0.5
    fix = (s == midpoint) & (err != 0) & torch.isfinite(s)
    if bool(fix.any()):
        up = err > 0
        hi = torch.maximum(r, other)
        lo = torch.minimum(r, other)
        r = torch.where(fix, torch.where(up, hi, lo), r)
    return r


def decode_boxes(anchors: torch.Tensor, deltas: torch.Tensor, info: torch.Tensor,
                 min_size: float):
    """(x1, y1, x2, y2, keep) of anchors [N, n, 4] (y1, x1, y2, x2) moved by deltas [N, n, 4]
    (dy, dx, dh, dw), clipped to info [N, 5]; the GPU kernel's float32 arithmetic."""
    y1, x1, y2, x2 = anchors.unbind(-1)
    dy, dx, dh, dw = deltas.unbind(-1)
    clip = torch.tensor(BBOX_XFORM_CLIP, dtype=_F32, device=anchors.device)
    dw, dh = torch.fmin(dw, clip), torch.fmin(dh, clip)
    width = x2 - x1
    ctr_x = x1 + 0.5 * width                    # 0.5 * w exact: a fused add changes nothing
    pred_ctr_x = fma32(width, dx, ctr_x)
    pred_w = width * torch.exp(dw)
    x1, x2 = pred_ctr_x - 0.5 * pred_w, pred_ctr_x + 0.5 * pred_w
    height = y2 - y1
    ctr_y = y1 + 0.5 * height
    pred_ctr_y = fma32(height, dy, ctr_y)
    pred_h = height * torch.exp(dh)
    y1, y2 = pred_ctr_y - 0.5 * pred_h, pred_ctr_y + 0.5 * pred_h
    img_h, img_w = info[:, 0:1], info[:, 1:2]
    min_scaled = torch.tensor(min_size, dtype=_F32, device=info.device) * info[:, 2:3]
    zero = torch.zeros((), dtype=_F32, device=anchors.device)
    x1 = torch.fmax(torch.fmin(x1, img_w), zero)
    y1 = torch.fmax(torch.fmin(y1, img_h), zero)
    x2 = torch.fmax(torch.fmin(x2, img_w), zero)
    y2 = torch.fmax(torch.fmin(y2, img_h), zero)
    keep = torch.fmin(x2 - x1, y2 - y1) >= min_scaled
    return x1, y1, x2, y2, keep


def _box(boxes, img, i):
    """(x1, y1, x2, y2, area) of box i of image img."""
    x1, y1, x2, y2 = boxes[img, i, 0], boxes[img, i, 1], boxes[img, i, 2], boxes[img, i, 3]
    return x1, y1, x2, y2, (x2 - x1) * (y2 - y1)


def _nms_images(boxes, counts, threshold, max_keep, kept, nkept):
    """Greedy NMS of each image i's first counts[i] boxes of `boxes` [N, n, 4] (x1, y1, x2,
    y2, float32, in score order): the indices of the first `max_keep` kept ones go to
    kept[i, :], their number to nkept[i]. NmsGpu's OverThreshold in float32."""
    zero = np.float32(0.0)
    for img in range(boxes.shape[0]):
        n = counts[img]
        removed = np.zeros(n, np.bool_)
        count = 0
        for i in range(n):
            if removed[i]:
                continue
            kept[img, count] = i
            count += 1
            if count >= max_keep:
                break
            ax1, ay1, ax2, ay2, a_area = _box(boxes, img, i)
            if a_area == zero:
                continue
            for j in range(i + 1, n):
                if removed[j]:
                    continue
                bx1, by1, bx2, by2, b_area = _box(boxes, img, j)
                if b_area == zero:
                    continue
                xx1 = ax1 if ax1 > bx1 else bx1         # the boxes hold no NaN (clamped
                yy1 = ay1 if ay1 > by1 else by1         # with fmaxf / fminf)
                xx2 = ax2 if ax2 < bx2 else bx2
                yy2 = ay2 if ay2 < by2 else by2
                w = xx2 - xx1 if xx2 > xx1 else zero    # fdimf
                h = yy2 - yy1 if yy2 > yy1 else zero
                inter = w * h
                if inter > (a_area + b_area - inter) * threshold:
                    removed[j] = True
        nkept[img] = count


def _build():
    """_nms_images compiled by numba (cached on disk; its helper too, as a module global:
    numba's disk cache refuses closures), or the Python function without numba."""
    global _box
    try:
        import numba  # noqa: PLC0415 - compiles (or loads) with the first proposals
    except ImportError:
        return _nms_images
    jit = numba.njit(cache=True, nogil=True, error_model="numpy")
    _box = numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")(_box)
    return jit(_nms_images)


_nms = built_once(_build)


def _scalar(t: torch.Tensor, index: int):
    if t.dim() != 0:
        _bad(f"Expected a scalar in input {index}but got shape {fmt(t.shape)}")
    return t.item()


def _check_shapes(scores, deltas, info, anchors):
    for what, t, rank in (("scores", scores, 4), ("bbox_deltas", deltas, 4),
                          ("image_info", info, 2), ("anchors", anchors, 3)):
        if t.dim() != rank:
            _bad(f"{what} must be {rank}-D, got shape {fmt(t.shape)}")
    n, h, w, a = scores.shape
    if a == 0 or anchors.shape[2] % a or anchors.shape[2] // a != 4:
        raise OutOfRangeError(None, None, "Box dimensions need to be 4")
    # TF reads these without checking (past their ends if they are smaller)
    if tuple(deltas.shape) != (n, h, w, 4 * a):
        _bad(f"bbox_deltas must have shape {fmt([n, h, w, 4 * a])} (scores "
             f"{fmt(scores.shape)}), got {fmt(deltas.shape)}")
    if anchors.numel() < h * w * a * 4:
        _bad(f"anchors must have {h * w * a * 4} values ([height, width, 4 * anchors] of "
             f"scores {fmt(scores.shape)}), got shape {fmt(anchors.shape)}")
    if info.shape[0] < n or info.shape[1] < 3:
        _bad(f"image_info must be [{n}, 5], got shape {fmt(info.shape)}")


@kernel(ops.GenerateBoundingBoxProposals)
def _generate_bounding_box_proposals(node):
    post = int(node.attrs.get("post_nms_topn", 300))
    if post <= 0:
        _bad("post_nms_topn can't be 0 or less")

    def generate(scores, deltas, info, anchors, nms_threshold, pre_nms_topn, min_size):
        _check_shapes(scores, deltas, info, anchors)
        threshold = float(np.float32(_scalar(nms_threshold, 4)))
        if threshold < 0 or threshold > 1.0:
            _bad(f"nms_threshold should be between 0 and 1. Got {np.float32(threshold)}")
        pre = int(_scalar(pre_nms_topn, 5))
        if pre <= 0:
            _bad(f"pre_nms_topn should be greater than 0{pre}")
        min_size = float(np.float32(_scalar(min_size, 6)))
        n, h, w, a = scores.shape
        dev = scores.device
        rois = torch.zeros((n, post, 4), dtype=_F32, device=dev)
        probs = torch.zeros((n, post), dtype=_F32, device=dev)
        k = h * w * a
        count = min(k, pre)
        if n == 0 or count == 0:
            return rois, probs
        flat = scores.reshape(n, k)
        order = radix_order(flat)[:, :count]                               # [n, count]
        top_scores = flat.gather(1, order)
        top_anchors = anchors.reshape(-1)[:k * 4].reshape(k, 4)[order]       # [n, count, 4]
        top_deltas = deltas.reshape(n, k, 4).gather(1, order[..., None].expand(n, count, 4))
        x1, y1, x2, y2, keep = decode_boxes(top_anchors, top_deltas, info[:n].to(_F32),
                                            min_size)
        boxes = torch.stack([x1, y1, x2, y2], -1)
        # keep the kept boxes in score order, first in each row (a stable partition)
        rank = torch.argsort((~keep).to(torch.int8), dim=1, stable=True)
        boxes = boxes.gather(1, rank[..., None].expand(n, count, 4))
        top_scores = top_scores.gather(1, rank)
        host_boxes = np.ascontiguousarray(boxes.cpu().numpy())
        counts = keep.sum(1).cpu().numpy().astype(np.int64)
        kept = np.zeros((n, min(post, count)), np.int64)
        nkept = np.zeros(n, np.int64)
        _nms()(host_boxes, counts, np.float32(threshold), min(post, count), kept, nkept)
        host_scores = top_scores.cpu().numpy()
        out_rois = np.zeros((n, post, 4), np.float32)
        out_probs = np.zeros((n, post), np.float32)
        for i in range(n):
            sel = kept[i, :nkept[i]]
            out_rois[i, :len(sel)] = host_boxes[i, sel][:, [1, 0, 3, 2]]
            out_probs[i, :len(sel)] = host_scores[i, sel]
        return torch.from_numpy(out_rois).to(dev), torch.from_numpy(out_probs).to(dev)
    return generate
