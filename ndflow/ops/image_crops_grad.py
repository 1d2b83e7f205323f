"""Gradients of CropAndResize (TF's gradient ops: d image for float images, d boxes always,
from the bilinear derivative even for 'nearest') and ExtractImagePatches (as TF: the patches
of an image of pixel numbers say where each patch entry came from; a segment sum adds the
gradient back there)."""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.ops import array_core, array_gather, array_range, array_transpose, cast
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.image_crops import (
    CropAndResize,
    CropAndResizeGradBoxes,
    CropAndResizeGradImage,
    ExtractImagePatches,
)


@CropAndResize.def_grad
def _crop_and_resize_grad(op, grad):
    image, boxes, ind = op.inputs[0], op.inputs[1], op.inputs[2]
    method = op.get_attr("method")
    d_image = None
    if image.dtype in (dtypes.float16, dtypes.float32, dtypes.float64):
        size = (image.shape.as_list() if image.shape.is_fully_defined()
                else array_core.shape(image))
        d_image = apply_op(CropAndResizeGradImage,
                           [grad, boxes, ind, convert_to_tensor(size, dtypes.int32)],
                           {"T": image.dtype, "method": method}).outputs[0]
    d_boxes = apply_op(CropAndResizeGradBoxes, [grad, image, boxes, ind],
                       {"T": image.dtype, "method": "bilinear"}).outputs[0]
    return [d_image, d_boxes, None, None]


@ExtractImagePatches.def_grad
def _extract_image_patches_grad(op, grad):
    images = op.inputs[0]
    in_shape = array_core.shape(images, out_type=dtypes.int64)
    batch, rows, cols, channels = array_core.unstack(in_shape)
    out_shape = array_core.shape(op.outputs[0], out_type=dtypes.int64)
    rows_out, cols_out = out_shape[1], out_shape[2]
    _, k_rows, k_cols, _ = op.get_attr("ksizes")
    # Pixel numbers from 1 (0 marks the padding), patched as the images were.
    numbers = array_core.reshape(
        array_range.range(1, rows * cols + 1, dtype=dtypes.float32), [1, rows, cols, 1])
    where = apply_op(ExtractImagePatches, [numbers],
                     {"ksizes": op.get_attr("ksizes"), "strides": op.get_attr("strides"),
                      "rates": op.get_attr("rates"), "padding": op.get_attr("padding"),
                      "T": dtypes.float32}).outputs[0]
    where = array_core.reshape(cast.cast(where, dtypes.int64), [-1])
    g = array_transpose.transpose(
        array_core.reshape(grad, array_core.stack(
            [batch, rows_out, cols_out, k_rows, k_cols, channels])), [1, 2, 3, 4, 0, 5])
    g = array_core.reshape(g, array_core.stack([-1, batch * channels]))
    summed = array_gather.unsorted_segment_sum(g, where, rows * cols + 1)[1:]
    summed = array_core.reshape(summed, array_core.stack([rows, cols, batch, channels]))
    return [array_transpose.transpose(summed, [2, 0, 1, 3])]
