"""ATen kernels for TF's ScaleAndTranslate and ScaleAndTranslateGrad: separable resampling
with a sampling kernel (Lanczos 1/3/5, Gaussian, box, triangle, Keys cubic, Mitchell cubic),
widened by 1/scale when antialiasing a downscale. `tf.image.resize` runs on it for
`antialias=True` and for its lanczos3/lanczos5/gaussian/mitchellcubic methods.

Along each axis output pixel x samples the input at `(x + 0.5) / scale - translation / scale`;
input pixels within the kernel's radius (times the widening) get the kernel's value at their
distance, normalized to sum 1, and a sample outside the input gets no weights (an output of
0). The spans are computed once per (sizes, scale, translation, kernel, antialias) with NumPy
float32 arithmetic in TF's order of operations (its ComputeSpansCore), so the weights are
TF's. Each axis's spans form a sparse [output, input] CSR matrix (cached), and the image is
combined along rows, then columns, as TF's GatherSpans does, by sparse-dense products that
sum each span in order as TF does; the gradient multiplies by the transposed matrices. A
1024x1024 image antialiased to 224x224 takes ~0.8 ms of products this way, 5.5 ms with one
gather per tap.
"""

from __future__ import annotations

import functools
import math
import warnings

import numpy as np
import torch

from ndflow.core.errors import InvalidArgumentError
from ndflow.kernels.registry import kernel
from ndflow.ops import image_resize as ops

_F32 = np.float32
_PI = _F32(3.14159265359)


def _lanczos(radius: float):
    r = _F32(radius)

    def weight(x):
        with np.errstate(divide="ignore", invalid="ignore"):
            y = r * np.sin(_PI * x) * np.sin(_PI * x / r) / (_PI * _PI * x * x)
        near_zero = x.astype(np.float64) <= 1e-3   # (TF compares in double)
        return np.where(x > r, _F32(0), np.where(near_zero, _F32(1), y)).astype(_F32)
    return weight, r


_SIGMA = float(_F32(1.5) / _F32(3))   # TF's Gaussian: radius 1.5, sigma = radius / 3


def _gaussian(x):   # (the divisor in double, as TF's)
    y = np.exp((-x * x).astype(np.float64) / (2.0 * _SIGMA * _SIGMA)).astype(_F32)
    return np.where(x >= _F32(1.5), _F32(0), y)


def _box(x):
    return np.where(x < _F32(0.5), _F32(1), np.where(x == _F32(0.5), _F32(0.5), _F32(0)))


def _triangle(x):
    return np.where(x < _F32(1), _F32(1) - x, _F32(0)).astype(_F32)


def _cubic(inner: tuple, outer: tuple):
    """A piecewise cubic of radius 2: `inner` on [0, 1), `outer` on [1, 2), as TF's
    ((a * x + b) * x + c) * x + d in float32."""
    def horner(x, a, b, c, d):
        return ((_F32(a) * x + _F32(b)) * x + _F32(c)) * x + _F32(d)

    def weight(x):
        return np.where(x >= _F32(2), _F32(0), np.where(
            x >= _F32(1), horner(x, *outer), horner(x, *inner))).astype(_F32)
    return weight


KERNELS = {
    "lanczos1": _lanczos(1.0), "lanczos3": _lanczos(3.0), "lanczos5": _lanczos(5.0),
    "gaussian": (_gaussian, _F32(1.5)), "box": (_box, _F32(1)),
    "triangle": (_triangle, _F32(1)),
    "keyscubic": (_cubic((1.5, -2.5, 0.0, 1.0), (-0.5, 2.5, -4.0, 2.0)), _F32(2)),
    "mitchellcubic": (_cubic((7.0 / 6.0, -2.0, 0.0, 8.0 / 9.0),
                             (-7.0 / 18.0, 2.0, -10.0 / 3.0, 16.0 / 9.0)), _F32(2)),
}


@functools.lru_cache(maxsize=256)
def spans(kernel_type: str, out_size: int, in_size: int, scale: float, translate: float,
          antialias: bool):
    """(input index [out_size, span], weight [out_size, span]) of each output pixel along
    one axis; unused slots have weight 0 (their index clamped into the input)."""
    weight_fn, radius = KERNELS[kernel_type]
    inv_scale = _F32(1.0 / float(_F32(scale)))
    inv_translate = _F32(-inv_scale * _F32(translate))
    kernel_scale = max(inv_scale, _F32(1)) if antialias else _F32(1)
    span = min(2 * math.ceil(float(radius * kernel_scale)) + 1, in_size)
    sample = (np.arange(out_size, dtype=_F32) + _F32(0.5)) * inv_scale + inv_translate
    reach = radius * kernel_scale
    start = np.clip(np.ceil(sample - reach - _F32(0.5)), 0, in_size - 1).astype(np.int64)
    end = np.clip(np.floor(sample + reach - _F32(0.5)), 0, in_size - 1).astype(np.int64) + 1
    inverse_kernel_scale = _F32(1) / kernel_scale
    idx = start[:, None] + np.arange(span)[None, :]
    used = idx < end[:, None]
    distance = np.abs((idx.astype(_F32) + _F32(0.5) - sample[:, None]) * inverse_kernel_scale)
    weights = np.where(used, weight_fn(distance.astype(_F32)), _F32(0)).astype(_F32)
    total = np.zeros(out_size, dtype=_F32)
    for k in range(span):   # TF sums the span's weights in order, in float32
        total = (total + weights[:, k]).astype(_F32)
    usable = np.abs(total) >= _F32(1000) * np.finfo(_F32).tiny
    with np.errstate(divide="ignore"):
        inverse = np.where(usable, _F32(1) / np.where(usable, total, _F32(1)), _F32(0))
    weights = (weights * inverse[:, None].astype(_F32)).astype(_F32)
    inside = (sample >= 0) & (sample <= in_size)   # else an empty span: no weights
    weights[~inside] = 0
    return np.minimum(idx, in_size - 1), weights


@functools.lru_cache(maxsize=256)
def _matrix(kernel_type: str, out_size: int, in_size: int, scale: float, translate: float,
            antialias: bool, transpose: bool) -> torch.Tensor:
    """The spans as a sparse float32 CSR matrix [out_size, in_size] (or its transpose)."""
    idx, weights = spans(kernel_type, out_size, in_size, scale, translate, antialias)
    used = weights != 0   # (unused slots, and only they, repeat a clamped index)
    rows = np.repeat(np.arange(out_size), idx.shape[1]).reshape(idx.shape)[used]
    cols, values = idx[used], torch.from_numpy(weights[used])
    if transpose:
        rows, cols = cols, rows
    shape = (in_size, out_size) if transpose else (out_size, in_size)
    with warnings.catch_warnings():   # ("sparse CSR support is in beta")
        warnings.simplefilter("ignore")
        coo = torch.sparse_coo_tensor(torch.from_numpy(np.stack([rows, cols])), values, shape,
                                      check_invariants=True)
        return coo.coalesce().to_sparse_csr()


def _along(x: torch.Tensor, axis: int, matrix: torch.Tensor) -> torch.Tensor:
    """`matrix` applied to `x`'s `axis` (1: rows, 2: columns of NHWC images)."""
    front = x.movedim(axis, 0)
    out = torch.sparse.mm(matrix.to(x.device), front.reshape(front.shape[0], -1))
    return out.reshape(matrix.shape[0], *front.shape[1:]).movedim(0, axis).contiguous()


def _attrs(node):
    kernel_type = node.attrs.get("kernel_type", "lanczos3")
    if isinstance(kernel_type, bytes):
        kernel_type = kernel_type.decode()
    return kernel_type, bool(node.attrs.get("antialias", True))


def _pair(t: torch.Tensor, what: str) -> tuple:
    if t.dim() != 1:
        raise InvalidArgumentError(None, None, f"t must be 1-dimensional{list(t.shape)}")
    if t.numel() != 2:
        raise InvalidArgumentError(None, None, f"t must have two elements{list(t.shape)}")
    a, b = (float(v) for v in t.tolist())
    if what == "scale" and not (a > 0 and b > 0):
        raise InvalidArgumentError(None, None, "Scale must be greater than zero.")
    return a, b


def _rank4(t: torch.Tensor, what: str) -> None:
    if t.dim() != 4:
        raise InvalidArgumentError(None, None, f"{what} must be 4-dimensional{list(t.shape)}")


def _row_and_column_matrices(node, scale, translation, out_sizes, in_sizes,
                             transpose: bool = False) -> tuple:
    kernel_type, antialias = _attrs(node)
    (row_scale, col_scale), (row_shift, col_shift) = (_pair(scale, "scale"),
                                                      _pair(translation, "translation"))
    return (_matrix(kernel_type, int(out_sizes[0]), int(in_sizes[0]), row_scale, row_shift,
                    antialias, transpose),
            _matrix(kernel_type, int(out_sizes[1]), int(in_sizes[1]), col_scale, col_shift,
                    antialias, transpose))


def _check_kernel(node) -> None:
    kernel_type = _attrs(node)[0]
    if kernel_type not in KERNELS:   # (at run time, so the message names the op, as TF's)
        raise InvalidArgumentError(None, None, f"Unrecognized kernel type: {kernel_type}")


@kernel(ops.ScaleAndTranslate)
def _scale_and_translate(node):
    def scale_and_translate(images, size, scale, translation):
        _check_kernel(node)
        _rank4(images, "input")
        if size.dim() != 1 or size.numel() != 2:
            raise InvalidArgumentError(None, None, "output_shape_t must be 1-dimensional with "
                                                   f"two elements{list(size.shape)}")
        oh, ow = (int(v) for v in size.tolist())
        _, h, w, channels = images.shape
        if oh <= 0 or ow <= 0:
            raise InvalidArgumentError(None, None, "output dimensions must be positive")
        if channels == 0:
            raise InvalidArgumentError(None, None, "image must have at least one channel")
        if h == 0 or w == 0:
            raise InvalidArgumentError(None, None, "input image must be of non-zero size")
        rows, cols = _row_and_column_matrices(node, scale, translation, (oh, ow), (h, w))
        x = images if images.dtype == torch.float32 else images.to(torch.float32)
        return _along(_along(x, 1, rows), 2, cols)   # rows, then columns, as TF
    return scale_and_translate


@kernel(ops.ScaleAndTranslateGrad)
def _scale_and_translate_grad(node):
    def scale_and_translate_grad(grads, original, scale, translation):
        _check_kernel(node)
        _rank4(grads, "input_grad")
        _rank4(original, "original_image")
        _, h, w, _ = original.shape
        rows, cols = _row_and_column_matrices(node, scale, translation, grads.shape[1:3],
                                              (h, w), transpose=True)
        return _along(_along(grads, 1, rows), 2, cols)
    return scale_and_translate_grad
