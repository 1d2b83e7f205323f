"""Gradients of the image ops TensorFlow differentiates: RGBToHSV, ResizeBilinear,
ResizeBicubic and ResizeNearestNeighbor (the resize ones through TF's gradient ops).

RGBToHSV's is the exact derivative of the op's piecewise formulas, with TF's tie rules for
which channel is the largest / smallest (red wins ties for largest, blue for smallest). (TF's
own _RGBToHSVGrad approximates the hue term: it differs from finite differences by ~2%.)
"""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.ops import arithmetic, array_core, array_fill, cast, comparison, reduction
from ndflow.ops import image_resize as resize
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.image_color import RGBToHSV


def _mask(cond, dtype):
    return cast.cast(cond, dtype)


@RGBToHSV.def_grad
def _rgb_to_hsv_grad(op, grad):
    x = op.inputs[0]
    dt = x.dtype
    r, g, b = array_core.unstack(x, axis=-1)
    gh, gs, gv = array_core.unstack(grad, axis=-1)
    ge, gt, le, lt = (comparison.greater_equal, comparison.greater, comparison.less_equal,
                      comparison.less)
    both = comparison.logical_and
    r_big = _mask(both(ge(r, b), ge(r, g)), dt)
    g_big = _mask(both(gt(g, r), ge(g, b)), dt)
    b_big = _mask(both(gt(b, r), gt(b, g)), dt)
    r_small = _mask(both(lt(r, b), lt(r, g)), dt)
    g_small = _mask(both(le(g, r), lt(g, b)), dt)
    b_small = _mask(both(le(b, r), le(b, g)), dt)
    is_max = array_core.stack([r_big, g_big, b_big], axis=-1)
    is_min = array_core.stack([r_small, g_small, b_small], axis=-1)
    v = reduction.reduce_max(x, axis=-1)
    lo = reduction.reduce_min(x, axis=-1)
    span = v - lo
    one = array_fill.ones_like(v)
    # s = 1 - min / max (0 for black pixels).
    v_pos = _mask(gt(v, 0), dt)
    safe_v = arithmetic.where(gt(v, 0), v, one)
    ds = array_core.expand_dims(gs * v_pos, -1) * (
        is_max * array_core.expand_dims(lo / (safe_v * safe_v), -1)
        - is_min * array_core.expand_dims(1 / safe_v, -1))
    # 6 h = offset + N / span, N = x[k+1] - x[k+2] for the largest channel k.
    plus1 = array_core.stack([b_big, r_big, g_big], axis=-1)
    plus2 = array_core.stack([g_big, b_big, r_big], axis=-1)
    d_num = plus1 - plus2
    num = reduction.reduce_sum(x * d_num, axis=-1)
    span_pos = _mask(gt(span, 0), dt)
    safe_span = arithmetic.where(gt(span, 0), span, one)
    coef = array_core.expand_dims(gh * span_pos / 6, -1)
    dh = coef * (d_num / array_core.expand_dims(safe_span, -1)
                 - array_core.expand_dims(num / (safe_span * safe_span), -1) * (is_max - is_min))
    return [array_core.expand_dims(gv, -1) * is_max + ds + dh]


def _corner_attrs(op) -> dict:
    return {"align_corners": op.get_attr("align_corners"),
            "half_pixel_centers": op.get_attr("half_pixel_centers")}


@resize.ResizeBilinear.def_grad
def _resize_bilinear_grad(op, grad):
    x = op.inputs[0]
    return [apply_op(resize.ResizeBilinearGrad, [grad, x], dict(_corner_attrs(op), T=x.dtype))
            .outputs[0], None]


@resize.ResizeBicubic.def_grad
def _resize_bicubic_grad(op, grad):
    x = op.inputs[0]
    if x.dtype not in (dtypes.float32, dtypes.float64):
        return [None, None]  # TF: no gradient for integer images
    return [apply_op(resize.ResizeBicubicGrad, [grad, x], dict(_corner_attrs(op), T=x.dtype))
            .outputs[0], None]


@resize.ScaleAndTranslate.def_grad
def _scale_and_translate_grad(op, grad):
    x = op.inputs[0]
    if x.dtype is not dtypes.float32:
        return [None] * 4   # TF: ScaleAndTranslateGrad takes float images only
    attrs = {k: op.attrs[k] for k in ("kernel_type", "antialias")}
    return [apply_op(resize.ScaleAndTranslateGrad, [grad, x, op.inputs[2], op.inputs[3]],
                     dict(attrs, T=x.dtype)).outputs[0], None, None, None]


@resize.ResizeNearestNeighbor.def_grad
def _resize_nearest_grad(op, grad):
    x = op.inputs[0]
    size = x.shape[1:3] if x.shape[1:3].is_fully_defined() else None
    size = size.as_list() if size is not None else array_core.shape(x)[1:3]
    return [apply_op(resize.ResizeNearestNeighborGrad, [grad, convert_to_tensor(
        size, dtypes.int32)], dict(_corner_attrs(op), T=grad.dtype)).outputs[0], None]
