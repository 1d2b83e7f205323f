"""Kernels of the non-max-suppression ops, on the host in NumPy (a greedy loop, data
dependent; the inputs are small): TF's DoNonMaxSuppressionOp semantics.

Candidates are the boxes scoring strictly above score_threshold, taken highest score first,
ties lowest index first. The IoU of two boxes is computed in float32 from their corners in
either order (a box of zero or negative area overlaps nothing), then cast to the score type
T (float or half) to be compared with the threshold, also cast to T. Hard NMS drops a
candidate whose IoU with any selected box is above the threshold. Soft-NMS (sigma > 0)
multiplies its score, in T, by exp(-0.5 / sigma * iou**2) for each selected box not seen
yet (newest first, stopping once the score is no longer above score_threshold); an
unchanged score selects it, a lowered one still above score_threshold puts it back in the
queue. CombinedNonMaxSuppression runs hard NMS per batch element and class and merges the
classes' selections by score."""

from __future__ import annotations

import heapq
import math

import numpy as np
import torch

from ndflow.core.errors import InvalidArgumentError
from ndflow.core.shapes import fmt
from ndflow.kernels.registry import kernel
from ndflow.ops import image_nms as ops

_F32 = np.float32


def _err(message: str):
    return InvalidArgumentError(None, None, message)


def _host(t: torch.Tensor) -> np.ndarray:
    return t.detach().cpu().numpy()


def _scalar(a: np.ndarray, what: str, suffix: bool = False):
    if a.ndim != 0:
        tail = f" (Shape must be rank 0 but is rank {a.ndim})" if suffix else ""
        raise _err(f"{what} must be 0-D, got shape {fmt(a.shape)}{tail}")
    return a[()]


def _check_boxes(boxes: np.ndarray, scores: np.ndarray) -> int:
    if boxes.ndim != 2:
        raise _err(f"boxes must be 2-D{fmt(boxes.shape)} (Shape must be rank 2 but is rank "
                   f"{boxes.ndim})")
    if boxes.shape[1] != 4:
        raise _err(f"boxes must have 4 columns (Dimension must be 4 but is "
                   f"{boxes.shape[1]})")
    _check_scores(scores, boxes.shape[0])
    return boxes.shape[0]


def _check_scores(scores: np.ndarray, n: int) -> None:
    if scores.ndim != 1:
        raise _err(f"scores must be 1-D{fmt(scores.shape)} (Shape must be rank 1 but is rank "
                   f"{scores.ndim})")
    if scores.shape[0] != n:
        raise _err(f"scores has incompatible shape (Dimensions must be equal, but are {n} "
                   f"and {scores.shape[0]})")


class _Corners:
    """Boxes as float32 (ymin, xmin, ymax, xmax, area) columns, corners in any order."""

    def __init__(self, boxes: np.ndarray):
        b = boxes.astype(_F32).reshape(-1, 4)
        self.ymin, self.ymax = np.minimum(b[:, 0], b[:, 2]), np.maximum(b[:, 0], b[:, 2])
        self.xmin, self.xmax = np.minimum(b[:, 1], b[:, 3]), np.maximum(b[:, 1], b[:, 3])
        self.area = (self.ymax - self.ymin) * (self.xmax - self.xmin)

    def iou(self, i: int, others: np.ndarray) -> np.ndarray:
        """float32 IoU of box i with each box in `others` (indices), TF's arithmetic."""
        with np.errstate(invalid="ignore", divide="ignore"):
            h = np.maximum(np.minimum(self.ymax[i], self.ymax[others]) -
                           np.maximum(self.ymin[i], self.ymin[others]), _F32(0))
            w = np.maximum(np.minimum(self.xmax[i], self.xmax[others]) -
                           np.maximum(self.xmin[i], self.xmin[others]), _F32(0))
            inter = h * w
            iou = inter / (self.area[i] + self.area[others] - inter)
        return np.where((self.area[i] <= 0) | (self.area[others] <= 0), _F32(0),
                        iou).astype(_F32)


def _exp(x, dtype):
    """Eigen's exp of a float or half scalar: the C library's expf, rounded to the type."""
    return dtype(math.exp(float(x)))


def _suppress(similarity, scores: np.ndarray, max_output_size: int, threshold,
              score_threshold, sigma=None):
    """TF's greedy (soft) NMS. `similarity(i, js)` gives the float32 similarities of
    candidate i with selected boxes js; scores, thresholds and sigma are of the score type.
    Returns (selected indices, their scores) as lists."""
    if max_output_size < 0:
        raise _err("output size must be non-negative")
    dtype = scores.dtype.type
    threshold, score_threshold = dtype(threshold), dtype(score_threshold)
    idx = np.flatnonzero(scores > score_threshold)
    order = idx[np.lexsort((idx, -scores[idx].astype(np.float64)))]
    selected, kept = [], []
    soft = sigma is not None and sigma > 0
    if not soft:
        for i in order:
            if len(selected) >= max_output_size:
                break
            if selected:
                sims = similarity(i, np.asarray(selected)).astype(dtype)
                if (sims > threshold).any():
                    continue
            selected.append(int(i))
            kept.append(scores[i])
        return selected, kept
    scale = dtype(dtype(-0.5) / sigma)
    heap = [(-float(scores[i]), int(i), scores[i], 0) for i in order]  # already a heap
    while len(selected) < max_output_size and heap:
        _, i, score, begin = heapq.heappop(heap)
        original = score
        if begin < len(selected):
            sims = similarity(i, np.asarray(selected[begin:])).astype(dtype)
            for sim in sims[::-1]:
                score = dtype(score * _exp(dtype(dtype(scale * sim) * sim), dtype))
                if score <= score_threshold:
                    break
        begin = len(selected)
        if score == original:
            selected.append(i)
            kept.append(score)
        elif score > score_threshold:
            heapq.heappush(heap, (-float(score), i, score, begin))
    return selected, kept


def _outputs(selected, kept, size, pad, dtype, device):
    valid = len(selected)
    if pad:
        selected = selected + [0] * (size - valid)
        kept = list(kept) + [0] * (size - valid)
    idx = torch.tensor(np.asarray(selected, np.int32).reshape(-1), device=device)
    sc = torch.from_numpy(np.asarray(kept, dtype).reshape(-1)).to(device)
    return idx, sc, torch.tensor(valid, dtype=torch.int32, device=device)


def _nms_kernel(version: int):
    def factory(node):
        pad = bool(node.attrs.get("pad_to_max_output_size", False))

        def nms(boxes, scores, max_output_size, iou_threshold, score_threshold,
                sigma=None):
            b, s = _host(boxes), _host(scores)
            dtype = s.dtype.type
            size = int(_scalar(_host(max_output_size), "max_output_size", version == 3))
            iou_t = _host(iou_threshold)
            if iou_t.ndim != 0:
                tail = (f" (Shape must be rank 0 but is rank {iou_t.ndim})"
                        if version == 3 else "")
                raise _err(f"iou_threshold must be 0-D, got shape {fmt(iou_t.shape)}{tail}")
            iou_t = dtype(iou_t[()])
            if not (iou_t >= 0 and iou_t <= 1):
                raise _err("iou_threshold must be in [0, 1]")
            score_t = dtype(_scalar(_host(score_threshold), "score_threshold"))
            sigma_v = None
            if sigma is not None:
                sigma_v = dtype(_scalar(_host(sigma), "soft_nms_sigma"))
                if not sigma_v >= 0:
                    raise _err("soft_nms_sigma_val must be >= 0")
            _check_boxes(b, s)
            corners = _Corners(b)
            selected, kept = _suppress(corners.iou, s, size, iou_t, score_t, sigma_v)
            idx, sc, valid = _outputs(selected, kept, size, pad, dtype, boxes.device)
            if version == 3:
                return idx
            if version == 4:
                return idx, valid
            return idx, sc, valid
        return nms
    return factory


kernel(ops.NonMaxSuppressionV3)(_nms_kernel(3))
kernel(ops.NonMaxSuppressionV4)(_nms_kernel(4))
kernel(ops.NonMaxSuppressionV5)(_nms_kernel(5))


@kernel(ops.NonMaxSuppressionWithOverlaps)
def _overlaps_kernel(node):
    def nms(overlaps, scores, max_output_size, overlap_threshold, score_threshold):
        o, s = _host(overlaps), _host(scores)
        size = int(_scalar(_host(max_output_size), "max_output_size"))
        threshold = _F32(_scalar(_host(overlap_threshold), "overlap_threshold"))
        score_t = _F32(_scalar(_host(score_threshold), "score_threshold"))
        if o.ndim != 2:
            raise _err(f"overlaps must be 2-D{fmt(o.shape)}")
        if o.shape[1] != o.shape[0]:
            raise _err(f"overlaps must be square{fmt(o.shape)}")
        _check_scores(s, o.shape[0])
        selected, _ = _suppress(lambda i, js: o[i, js], s, size, threshold, score_t)
        return torch.tensor(np.asarray(selected, np.int32).reshape(-1), device=overlaps.device)
    return nms


def _combined(boxes: np.ndarray, scores: np.ndarray, per_class: int, total: int,
              iou_t, score_t, pad_per_class: bool, clip: bool):
    batch, n, q = boxes.shape[:3]
    classes = scores.shape[2]
    size_per_class = min(per_class, n)
    max_total = min(2 ** 31 - 1, per_class * classes)
    per_batch = min(total, max_total) if pad_per_class else total
    out_boxes = np.zeros((batch, per_batch, 4), _F32)
    out_scores = np.zeros((batch, per_batch), _F32)
    out_classes = np.zeros((batch, per_batch), _F32)
    valid = np.zeros(batch, np.int32)
    for b in range(batch):
        found = []  # (score, slot, index, class): slot orders the classes' selections
        for c in range(classes):
            corners = _Corners(boxes[b, :, c if q > 1 else 0])
            sel, kept = _suppress(corners.iou, scores[b, :, c], size_per_class, iou_t,
                                  score_t)
            found += [(k, c * size_per_class + j, i, c)
                      for j, (i, k) in enumerate(zip(sel, kept))]
        found.sort(key=lambda f: (-float(f[0]), f[1]))
        count = min(len(found), per_batch if pad_per_class else total)
        valid[b] = count
        for r, (score, _, i, c) in enumerate(found[:count]):
            coords = boxes[b, i, c if q > 1 else 0]
            out_boxes[b, r] = np.clip(coords, 0, 1) if clip else coords
            out_scores[b, r], out_classes[b, r] = score, c
    return out_boxes, out_scores, out_classes, valid


@kernel(ops.CombinedNonMaxSuppression)
def _combined_kernel(node):
    pad_per_class, clip = bool(node.attrs["pad_per_class"]), bool(node.attrs["clip_boxes"])

    def nms(boxes, scores, max_per_class, max_total, iou_threshold, score_threshold):
        b, s = _host(boxes), _host(scores)
        if b.ndim != 4:
            raise _err(f"boxes must be 4-D [batch, num_boxes, q, 4], got shape {fmt(b.shape)}")
        if s.ndim != 3:
            raise _err(f"scores must be 3-D [batch, num_boxes, num_classes], got shape "
                       f"{fmt(s.shape)}")
        if b.shape[2] not in (1, s.shape[2]):
            raise _err("third dimension of boxes must be either 1 or num classes")
        if b.shape[3] != 4:
            raise _err("boxes must have 4 columns")
        if s.shape[1] != b.shape[1]:
            raise _err("scores has incompatible shape")
        if b.shape[0] != s.shape[0]:
            raise _err("boxes and scores must have same batch size")
        per_class = int(_scalar(_host(max_per_class), "max_size_per_class"))
        if per_class <= 0:
            raise _err("max_size_per_class must be positive")
        total = int(_scalar(_host(max_total), "max_total_size"))
        if total <= 0:
            raise _err("max_total_size must be > 0")
        iou_t = _F32(_scalar(_host(iou_threshold), "iou_threshold"))
        score_t = _F32(_scalar(_host(score_threshold), "score_threshold"))
        if not (iou_t >= 0 and iou_t <= 1):
            raise _err("iou_threshold must be in [0, 1]")
        out = _combined(b, s, per_class, total, iou_t, score_t, pad_per_class, clip)
        return tuple(torch.from_numpy(a).to(boxes.device) for a in out)
    return nms
