"""ATen kernels for CropAndResize, its gradient ops, ExtractImagePatches and DrawBoundingBoxes.

CropAndResize is vectorized over boxes: the sample positions of every box come out as
[boxes, crop_height] and [boxes, crop_width] float32 tensors, computed with TF's float32
arithmetic (y1 * (h - 1) + y * scale, the box center in double for a crop size of 1), so the
neighbours (floor / ceil, or round-half-away for nearest) are TF's. The four neighbours are
gathered from the image flattened to [batch * h * w, depth]; the gradient w.r.t. the image
scatters the same weights back with index_add_, the one w.r.t. the boxes is the derivative
of the bilinear sample along y and x times d position / d corner, summed per box.
ExtractImagePatches is one strided view of the (zero-padded) image; DrawBoundingBoxes assigns
the four lines of each box in turn (later boxes over earlier ones, as TF).
"""

from __future__ import annotations

import numpy as np
import torch

from ndflow.core.errors import InvalidArgumentError, OutOfRangeError
from ndflow.core.shapes import fmt
from ndflow.kernels.registry import kernel
from ndflow.ops import image_crops as ops


def _bad(message: str):
    raise InvalidArgumentError(None, None, message)


def _check_boxes(boxes: torch.Tensor, ind: torch.Tensor) -> int:
    """TF's ParseAndCheckBoxSizes: the number of boxes."""
    if boxes.numel() == 0 and ind.numel() == 0:
        return 0
    if boxes.dim() != 2:
        _bad(f"boxes must be 2-D{fmt(boxes.shape)}")
    if boxes.shape[1] != 4:
        _bad("boxes must have 4 columns")
    if ind.dim() != 1:
        _bad(f"box_index must be 1-D{fmt(ind.shape)}")
    if ind.shape[0] != boxes.shape[0]:
        _bad("box_index has incompatible shape")
    return boxes.shape[0]


def _check_index(ind: torch.Tensor, batch: int) -> None:
    if ind.numel() and bool(((ind < 0) | (ind >= batch)).any()):
        raise OutOfRangeError(None, None, "box_index has values outside [0, batch_size)")


def _positions(lo: torch.Tensor, hi: torch.Tensor, size: int, crop: int, grad_boxes: bool):
    """Sample positions [boxes, crop] along one axis of an image of `size` pixels."""
    n = lo.shape[0]
    if crop > 1:
        steps = torch.arange(crop, device=lo.device, dtype=torch.float32)
        if grad_boxes:  # CropAndResizeGradBoxes: (hi - lo) * ((size - 1) / (crop - 1))
            ratio = torch.tensor(size - 1, dtype=torch.float32) / float(crop - 1)
            scale = (hi - lo) * ratio.to(lo.device)
        else:
            scale = (hi - lo) * float(size - 1) / float(crop - 1)
        return (lo * float(size - 1))[:, None] + steps[None, :] * scale[:, None]
    center = (lo + hi).to(torch.float64) * 0.5 * (size - 1)
    return center.to(torch.float32).view(n, 1)


class _Samples:
    """The neighbours and weights of every sample point of every box."""

    def __init__(self, boxes, ind, image_shape, crop_h, crop_w, grad_boxes=False):
        _, h, w, _ = image_shape
        self.h, self.w = h, w
        self.in_y = _positions(boxes[:, 0], boxes[:, 2], h, crop_h, grad_boxes)
        self.in_x = _positions(boxes[:, 1], boxes[:, 3], w, crop_w, grad_boxes)
        self.valid_y = (self.in_y >= 0) & (self.in_y <= h - 1)
        self.valid_x = (self.in_x >= 0) & (self.in_x <= w - 1)
        fy, fx = torch.floor(self.in_y), torch.floor(self.in_x)
        self.y_lerp, self.x_lerp = self.in_y - fy, self.in_x - fx
        self.top = fy.clamp(0, h - 1).long()
        self.bottom = torch.ceil(self.in_y).clamp(0, h - 1).long()
        self.left = fx.clamp(0, w - 1).long()
        self.right = torch.ceil(self.in_x).clamp(0, w - 1).long()
        # roundf: halves away from zero (the positions kept are >= 0)
        self.near_y = (fy + (self.y_lerp >= 0.5)).clamp(0, h - 1).long()
        self.near_x = (fx + (self.x_lerp >= 0.5)).clamp(0, w - 1).long()
        self.base = ind.long()[:, None, None] * h

    def index(self, ys: torch.Tensor, xs: torch.Tensor) -> torch.Tensor:
        """Flat [boxes * crop_h * crop_w] row indices into the [batch * h * w, depth] image."""
        return ((self.base + ys[:, :, None]) * self.w + xs[:, None, :]).reshape(-1)

    def mask(self) -> torch.Tensor:
        """[boxes, crop_h, crop_w, 1]: the points inside the image."""
        return (self.valid_y[:, :, None] & self.valid_x[:, None, :])[..., None]

    def lerps(self):
        return self.y_lerp[:, :, None, None], self.x_lerp[:, None, :, None]


def _crop_size(crop_size: torch.Tensor):
    if crop_size.dim() != 1:
        _bad(f"crop_size must be 1-D{fmt(crop_size.shape)}")
    if crop_size.shape[0] != 2:
        _bad(f"crop_size must have two elements{fmt(crop_size.shape)}")
    ch, cw = (int(v) for v in crop_size.tolist())
    if ch <= 0 or cw <= 0:
        _bad("crop dimensions must be positive")
    return ch, cw


def _gather(flat: torch.Tensor, idx: torch.Tensor, shape) -> torch.Tensor:
    return flat.index_select(0, idx).to(torch.float32).view(shape)


@kernel(ops.CropAndResize)
def _crop_and_resize(node):
    method = node.attrs.get("method", "bilinear")
    if isinstance(method, bytes):
        method = method.decode()
    extrapolation = float(node.attrs.get("extrapolation_value", 0.0))

    def crop_and_resize(image, boxes, ind, crop_size):
        if image.dim() != 4:
            _bad(f"input image must be 4-D{fmt(image.shape)}")
        b, h, w, c = image.shape
        if h <= 0 or w <= 0:
            _bad("image dimensions must be positive")
        if boxes.dim() != 2:
            _bad(f"boxes must be 2-D, got: {fmt(boxes.shape)}")
        if ind.dim() != 1:
            _bad(f"box_indices must be rank 1 but is shape {fmt(ind.shape)}")
        n = _check_boxes(boxes, ind)
        ch, cw = _crop_size(crop_size)
        _check_index(ind, b)
        if n == 0:
            return torch.zeros((0, ch, cw, c), dtype=torch.float32, device=image.device)
        if not bool(torch.isfinite(boxes).all()):
            _bad("Boxes contains at least one element that is not finite")
        s = _Samples(boxes.to(torch.float32), ind, image.shape, ch, cw)
        flat = image.reshape(b * h * w, c)
        shape = (n, ch, cw, c)
        if method == "nearest":
            out = _gather(flat, s.index(s.near_y, s.near_x), shape)
        else:
            yl, xl = s.lerps()
            tl = _gather(flat, s.index(s.top, s.left), shape)
            tr = _gather(flat, s.index(s.top, s.right), shape)
            bl = _gather(flat, s.index(s.bottom, s.left), shape)
            br = _gather(flat, s.index(s.bottom, s.right), shape)
            top = tl + (tr - tl) * xl
            bottom = bl + (br - bl) * xl
            out = top + (bottom - top) * yl
        return torch.where(s.mask(), out, torch.tensor(extrapolation, dtype=torch.float32,
                                                       device=out.device))
    return crop_and_resize


def _check_grads(grads: torch.Tensor):
    if grads.dim() != 4:
        _bad(f"grads image must be 4-D{fmt(grads.shape)}")
    if grads.shape[1] <= 0 or grads.shape[2] <= 0:
        _bad("grads dimensions must be positive")


@kernel(ops.CropAndResizeGradImage)
def _crop_and_resize_grad_image(node):
    method = node.attrs.get("method", "bilinear")
    if isinstance(method, bytes):
        method = method.decode()
    dtype = node.attrs["T"].torch_dtype

    def crop_and_resize_grad_image(grads, boxes, ind, image_size):
        _check_grads(grads)
        n = _check_boxes(boxes, ind)
        if grads.shape[0] != n:
            _bad("boxes and grads have incompatible shape")
        if image_size.dim() != 1:
            _bad(f"image_size must be 1-D{fmt(image_size.shape)}")
        if image_size.shape[0] != 4:
            _bad(f"image_size must have 4 elements{fmt(image_size.shape)}")
        b, h, w, c = (int(v) for v in image_size.tolist())
        if h <= 0 or w <= 0:
            _bad("image dimensions must be positive")
        if grads.shape[3] != c:
            _bad("image_size and grads are incompatible")
        _check_index(ind, b)
        out = torch.zeros((b * h * w, c), dtype=dtype, device=grads.device)
        if n == 0:
            return out.view(b, h, w, c)
        _, ch, cw, _ = grads.shape
        s = _Samples(boxes.to(torch.float32), ind, (b, h, w, c), ch, cw)
        g = torch.where(s.mask(), grads.to(torch.float32), 0.0)
        if method == "nearest":
            out.index_add_(0, s.index(s.near_y, s.near_x), g.reshape(-1, c).to(dtype))
        else:
            yl, xl = s.lerps()
            dtop, dbottom = (1 - yl) * g, yl * g
            for ys, d in ((s.top, dtop), (s.bottom, dbottom)):
                out.index_add_(0, s.index(ys, s.left), ((1 - xl) * d).reshape(-1, c).to(dtype))
                out.index_add_(0, s.index(ys, s.right), (xl * d).reshape(-1, c).to(dtype))
        return out.view(b, h, w, c)
    return crop_and_resize_grad_image


@kernel(ops.CropAndResizeGradBoxes)
def _crop_and_resize_grad_boxes(node):
    def crop_and_resize_grad_boxes(grads, image, boxes, ind):
        _check_grads(grads)
        _, ch, cw, c = grads.shape
        if image.dim() != 4:
            _bad(f"input image must be 4-D{fmt(image.shape)}")
        b, h, w, _ = image.shape
        if h <= 0 or w <= 0:
            _bad("image dimensions must be positive")
        if image.shape[3] != c:
            _bad("image, grads depth differ")
        n = _check_boxes(boxes, ind)
        if grads.shape[0] != n:
            _bad("boxes and grads have incompatible shape")
        _check_index(ind, b)
        if n == 0:
            return torch.zeros((0, 4), dtype=torch.float32, device=grads.device)
        s = _Samples(boxes.to(torch.float32), ind, image.shape, ch, cw, grad_boxes=True)
        flat = image.reshape(b * h * w, c)
        shape = (n, ch, cw, c)
        tl = _gather(flat, s.index(s.top, s.left), shape)
        tr = _gather(flat, s.index(s.top, s.right), shape)
        bl = _gather(flat, s.index(s.bottom, s.left), shape)
        br = _gather(flat, s.index(s.bottom, s.right), shape)
        yl, xl = s.lerps()
        g = torch.where(s.mask(), grads.to(torch.float32), 0.0)
        # d sample / d y and d x, times the incoming gradient, summed over depth
        gy = (((1 - xl) * (bl - tl) + xl * (br - tr)) * g).sum(3, dtype=torch.float64)
        gx = (((1 - yl) * (tr - tl) + yl * (br - bl)) * g).sum(3, dtype=torch.float64)
        cols = []
        for grad, crop, size, axis in ((gy, ch, h, 1), (gx, cw, w, 2)):
            per_point = grad.sum(3 - axis)  # [boxes, crop] along this axis
            if crop > 1:
                ratio = float(torch.tensor(size - 1, dtype=torch.float32) / float(crop - 1))
                steps = torch.arange(crop, dtype=torch.float64, device=grads.device) * ratio
                cols.append(((per_point * (size - 1 - steps)).sum(1),
                             (per_point * steps).sum(1)))
            else:
                half = per_point.sum(1) * 0.5 * (size - 1)
                cols.append((half, half))
        (dy1, dy2), (dx1, dx2) = cols
        return torch.stack([dy1, dx1, dy2, dx2], 1).to(torch.float32)
    return crop_and_resize_grad_boxes


@kernel(ops.ExtractImagePatches)
def _extract_image_patches(node):
    attrs = node.attrs
    ops.check_patch_attrs(attrs)
    k, st, r, padding = attrs["ksizes"], attrs["strides"], attrs["rates"], attrs["padding"]
    if isinstance(padding, bytes):
        padding = padding.decode()

    def extract_image_patches(images):
        if images.dim() != 4:
            _bad(f"input must be 4-dimensional{fmt(images.shape)}")
        b, h, w, c = images.shape
        oh, top = ops.patch_geometry(h, k[1], st[1], r[1], padding)
        ow, left = ops.patch_geometry(w, k[2], st[2], r[2], padding)
        # Pad so every window lies inside: the rows / cols the last window reaches.
        ph = max(h + top, (oh - 1) * st[1] + (k[1] - 1) * r[1] + 1 if oh else 0)
        pw = max(w + left, (ow - 1) * st[2] + (k[2] - 1) * r[2] + 1 if ow else 0)
        x = images
        if (ph, pw) != (h, w) or top or left:
            x = images.new_zeros((b, ph, pw, c))
            x[:, top:top + h, left:left + w] = images
        x = x.contiguous()
        sb, sh, sw, sc = x.stride()
        view = x.as_strided((b, oh, ow, k[1], k[2], c),
                            (sb, st[1] * sh, st[2] * sw, r[1] * sh, r[2] * sw, sc))
        return view.reshape(b, oh, ow, k[1] * k[2] * c)
    return extract_image_patches


_DEFAULT_COLORS = np.array([
    [1, 1, 0, 1], [0, 0, 1, 1], [1, 0, 0, 1], [0, 1, 0, 1], [0.5, 0, 0.5, 1],
    [0.5, 0.5, 0, 1], [0.5, 0, 0, 1], [0, 0, 0.5, 1], [0, 1, 1, 1], [1, 0, 1, 1]],
    np.float32)  # yellow, blue, red, lime, purple, olive, maroon, navy, aqua, fuchsia


def _box_lines(box: np.ndarray, h: int, w: int):
    """TF's rows / cols of one box: position * (size - 1) in float32, truncated to int."""
    y1, x1, y2, x2 = (int(np.trunc(np.float32(v) * np.float32(n - 1)))
                      for v, n in zip(box, (h, w, h, w)))
    return y1, x1, y2, x2


def _draw(images, boxes, colors=None):
    if images.dim() != 4:
        _bad("The rank of the images should be 4")
    if boxes.dim() != 3:
        _bad("The rank of the boxes tensor should be 3")
    if images.shape[0] != boxes.shape[0]:
        _bad("The batch sizes should be the same")
    b, h, w, depth = images.shape
    if depth not in (1, 3, 4):
        _bad("Channel depth should be either 1 (GRY), 3 (RGB), or 4 (RGBA)")
    if boxes.shape[2] != 4:
        _bad(f"The size of the third dimension of the box must be 4. Received: "
             f"{boxes.shape[2]}")
    table = None
    if colors is not None:
        if colors.dim() != 2:
            _bad(f"colors must be a 2-D matrix{fmt(colors.shape)}")
        if colors.shape[1] < depth:
            _bad(f"colors must have equal or more channels than the image provided: "
                 f"{fmt(colors.shape)}")
        if colors.numel():
            table = colors.detach().cpu().to(torch.float32).numpy()[:, :depth]
    if table is None:
        table = _DEFAULT_COLORS[:, :depth].copy()
        if depth == 1:
            table[:, 0] = 1
    table = torch.from_numpy(np.ascontiguousarray(table)).to(images.device, images.dtype)
    out = images.clone()
    all_boxes = boxes.detach().cpu().to(torch.float32).numpy()
    for i in range(b):
        for k, box in enumerate(all_boxes[i]):
            y1, x1, y2, x2 = _box_lines(box, h, w)
            # inverted, or wholly outside: not drawn (TF logs a warning)
            if y1 > y2 or x1 > x2 or y1 >= h or y2 < 0 or x1 >= w or x2 < 0:
                continue
            color = table[k % table.shape[0]]
            r0, r1, c0, c1 = max(y1, 0), min(y2, h - 1), max(x1, 0), min(x2, w - 1)
            if y1 >= 0:
                out[i, y1, c0:c1 + 1] = color
            if y2 < h:
                out[i, y2, c0:c1 + 1] = color
            if x1 >= 0:
                out[i, r0:r1 + 1, x1] = color
            if x2 < w:
                out[i, r0:r1 + 1, x2] = color
    return out


@kernel(ops.DrawBoundingBoxes)
def _draw_bounding_boxes(node):
    return lambda images, boxes: _draw(images, boxes)


@kernel(ops.DrawBoundingBoxesV2)
def _draw_bounding_boxes_v2(node):
    return _draw
