"""Kernels of the distorted-bounding-box samplers (TF's sample_distorted_bounding_box_op):
up to `max_attempts` crops drawn from TF's `SimplePhilox` words (kernels/range_samplers.py),
in float32 and with lrintf's round-half-to-even as TF computes them; the first crop
covering at least `min_object_covered` of one box is returned, else the whole image. The
stateful ops reserve `4 * max_attempts` words of the kernel's Philox state per execution;
the stateless one starts at its seed's key and counter."""

from __future__ import annotations

import numpy as np
import torch

from ndflow.core.errors import FailedPreconditionError, InvalidArgumentError
from ndflow.kernels import philox
from ndflow.kernels.random import _check_seed, _state_fn
from ndflow.kernels.range_samplers import Words, exact_uniform
from ndflow.kernels.registry import kernel
from ndflow.ops import image_bbox_sampling as ops

_F = np.float32


def _bad(message: str):
    return InvalidArgumentError(None, None, message)


def _rint(x) -> int:
    """lrintf: float32 rounded half to even."""
    return int(np.rint(_F(x)))


def _area(r) -> float:
    return float(_F((r[2] - r[0]) * (r[3] - r[1])))


def _random_crop(width: int, height: int, min_area_frac, max_area_frac, aspect,
                 words: Words):
    """TF's GenerateRandomCrop: (xmin, ymin, xmax, ymax) or None."""
    if max_area_frac <= 0 or aspect <= 0 or width <= 0 or height <= 0 or \
            min_area_frac > max_area_frac:
        return None
    min_area = _F(_F(min_area_frac * _F(width)) * _F(height))
    max_area = _F(_F(max_area_frac * _F(width)) * _F(height))
    h = _rint(np.sqrt(_F(min_area / aspect)))
    max_h = _rint(np.sqrt(_F(max_area / aspect)))
    if _rint(_F(max_h) * aspect) > width:
        max_h = int((width + 0.5 - float(_F(1e-7))) / float(aspect))
        if _rint(_F(max_h) * aspect) > width:
            max_h -= 1
    max_h = min(max_h, height)
    h = min(h, max_h)
    if h < max_h:
        h += int(exact_uniform(words, max_h - h + 1, 1, wide=False)[0])
    w = _rint(_F(h) * aspect)
    area = _F(w * h)
    if area < min_area:
        h += 1
        w = _rint(_F(h) * aspect)
        area = _F(w * h)
    if area > max_area:
        h -= 1
        w = _rint(_F(h) * aspect)
        area = _F(w * h)
    if area < min_area or area > max_area or w > width or h > height or w <= 0 or h <= 0:
        return None
    y = int(exact_uniform(words, height - h, 1, wide=False)[0]) if h < height else 0
    x = int(exact_uniform(words, width - w, 1, wide=False)[0]) if w < width else 0
    return (x, y, x + w, y + h)


def _covers(crop, min_covered: float, boxes: list) -> bool:
    if _area(crop) < 1.0:
        return False
    for b in boxes:
        object_area = _area(b)
        if object_area < 1.0:
            continue
        ix0, iy0 = max(crop[0], b[0]), max(crop[1], b[1])
        ix1, iy1 = min(crop[2], b[2]), min(crop[3], b[3])
        inter = (ix0, iy0, ix1, iy1) if ix0 <= ix1 and iy0 <= iy1 else (0, 0, 0, 0)
        if _F(_area(inter) / _F(object_area)) >= min_covered:
            return True
    return False


def _checked_attrs(node, min_covered_attr: bool):
    a = node.attrs
    aspect, area = [float(v) for v in a["aspect_ratio_range"]], [float(v) for v in
                                                                  a["area_range"]]
    if len(aspect) != 2:
        raise _bad("Aspect ratio range field must specify 2 dimensions")
    if not (aspect[0] > 0 and aspect[1] > 0):
        raise _bad(f"Aspect ratio range must be non-negative: [{aspect[0]:g}, {aspect[1]:g}]")
    if len(area) != 2:
        raise _bad("Area range field must specify 2 dimensions")
    if not (area[0] > 0 and area[1] > 0):
        raise _bad(f"Area range must be non-negative: [{area[0]:g}, {area[1]:g}]")
    if not (area[0] <= 1 and area[1] <= 1):
        raise _bad(f"Area range must be less then or equal to 1.0: [{area[0]:g}, "
                   f"{area[1]:g}]")
    if a["max_attempts"] <= 0:
        raise _bad(f"Max attempts must be non-negative: {a['max_attempts']}")
    if min_covered_attr and a["min_object_covered"] < 0:
        raise _bad(f"Min object covered must be non-negative: {a['min_object_covered']:g}")
    return aspect, area, int(a["max_attempts"]), bool(a["use_image_if_no_bounding_boxes"])


def _sample(image_size, boxes, min_covered, words_fn, attrs):
    aspect, area, attempts, use_image = attrs
    size = image_size.detach().cpu().numpy()
    if size.ndim != 1:
        raise _bad(f"image_size must be 1-dimensional{list(size.shape)}")
    if size.shape[0] != 3:
        raise _bad(f"image_size must contain 3 elements{list(size.shape)}")
    height, width = int(size[0]), int(size[1])
    b = boxes.detach().cpu().numpy().astype(_F)
    if b.ndim != 3:
        raise _bad(f"input boxes must be 3-dimensional [batch, num_boxes, coords]: "
                   f"{list(b.shape)}")
    if b.shape[-1] != 4:
        raise _bad(f"bounding boxes must have shape [4] or [*, 4], got {list(b.shape)}")
    if min_covered < 0:
        raise _bad(f"Min object covered must be non-negative: {min_covered:g}")
    rects = []
    for row in b.reshape(-1, 4):
        bad = [v for v in row if not (0.0 <= v <= 1.0)]
        if bad:
            raise _bad(f"All bounding box coordinates must be in [0.0, 1.0]: {bad[0]:g}")
        rects.append((int(_F(row[1] * _F(width))), int(_F(row[0] * _F(height))),
                      int(_F(row[3] * _F(width))), int(_F(row[2] * _F(height)))))
    image = (0, 0, width, height)
    if not rects:
        if not use_image:
            raise _bad("No bounding boxes provided as input. One must enable "
                       "use_image_if_no_bounding_boxes if you wish to not provide any "
                       "bounding boxes.")
        rects.append(image)
    words = words_fn()
    crop = None
    for _ in range(attempts):
        ratio = _F(_F(philox._uint32_to_float(words.take(1))[0] * _F(aspect[1] - aspect[0]))
                   + _F(aspect[0]))
        candidate = _random_crop(width, height, _F(area[0]), _F(area[1]), ratio, words)
        if candidate is not None and _covers(candidate, _F(min_covered), rects):
            crop = candidate
            break
    x0, y0, x1, y1 = crop or image
    if width < x1 or height < y1:
        raise FailedPreconditionError(None, None, "the crop does not fit the image")
    dtype = image_size.dtype
    begin = torch.tensor([y0, x0, 0], dtype=dtype)
    extent = torch.tensor([y1 - y0, x1 - x0, -1], dtype=dtype)
    bbox = torch.tensor([[[_F(y0) / _F(height), _F(x0) / _F(width), _F(y1) / _F(height),
                           _F(x1) / _F(width)]]], dtype=torch.float32)
    return begin, extent, bbox


def _stateful(min_covered_attr: bool):
    def factory(node):
        attrs = _checked_attrs(node, min_covered_attr)
        state_fn = _state_fn(node)

        def words():
            state = state_fn()
            return Words(state.key, state.reserve(attrs[2]))   # ReserveSamples32(4 * m)

        if min_covered_attr:
            return lambda size, boxes: _sample(size, boxes,
                                               float(node.attrs["min_object_covered"]),
                                               words, attrs)
        return lambda size, boxes, covered: _sample(size, boxes,
                                                    _scalar(covered), words, attrs)
    return factory


def _scalar(t: torch.Tensor) -> float:
    if t.dim() != 0:
        raise _bad(f"min_object_covered must be 0-D, got shape {list(t.shape)}")
    return float(t)


kernel(ops.SampleDistortedBoundingBox)(_stateful(True))
kernel(ops.SampleDistortedBoundingBoxV2)(_stateful(False))


@kernel(ops.StatelessSampleDistortedBoundingBox)
def _stateless(node):
    attrs = _checked_attrs(node, False)

    def run(size, boxes, covered, seed):
        if seed.dim() != 1 or seed.shape[0] != 2:
            raise _bad(f"seed must have shape [2], not {list(seed.shape)}")
        key, counter = philox.key_counter_from_seed(*_check_seed(seed))
        return _sample(size, boxes, _scalar(covered), lambda: Words(key, counter),
                       attrs)
    return run
