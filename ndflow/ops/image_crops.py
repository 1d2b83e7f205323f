"""`tf.image.crop_and_resize`, `tf.image.extract_patches` and `tf.image.draw_bounding_boxes`:
TF's CropAndResize (with its gradient ops CropAndResizeGradImage and CropAndResizeGradBoxes),
ExtractImagePatches and DrawBoundingBoxes(V2) (kernels: ndflow/kernels/image_crops.py;
gradients: image_crops_grad.py).

CropAndResize samples each box (normalized y1, x1, y2, x2 of image `box_indices[i]`; y1 > y2
flips the crop) at crop_size points spanning the box corners; points outside the image get
`extrapolation_value`. The crops are float32 whatever the image dtype. ExtractImagePatches
puts each (dilated) ksize window of the image into the depth axis, in (row, col, channel)
order. DrawBoundingBoxes outlines boxes in place of the pixels under them, later boxes over
earlier ones.
"""

from __future__ import annotations

from ndflow.core import context, dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.errors import InvalidArgumentError, UnimplementedError
from ndflow.core.shapes import TensorShape
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.op_def import op_def

_CROP_T = "T: {uint8, int8, int16, int32, int64, half, float, double}"
_METHOD = "method: {'bilinear', 'nearest'} = 'bilinear'"


def _dims(shape: TensorShape, rank: int) -> list:
    """The dims of a shape of rank `rank`. Eagerly a mismatch is left to the kernel, which
    raises TF's own message (TF runs no shape functions for eager ops)."""
    if context.executing_eagerly() and shape.ndims not in (None, rank):
        return [None] * rank
    shape = shape.with_rank(rank)
    return shape.as_list() if shape.ndims is not None else [None] * rank


def _merge(a, b):
    if a is not None and b is not None and a != b:
        if context.executing_eagerly():
            return None
        raise ValueError(f"Dimensions must be equal, but are {a} and {b}")
    return a if a is not None else b


def _num_boxes(ctx, boxes_at: int, ind_at: int):
    boxes = _dims(ctx.shapes[boxes_at], 2)
    _merge(boxes[1], 4)
    return _merge(boxes[0], _dims(ctx.shapes[ind_at], 1)[0])


def _crop_shape(ctx):
    image = _dims(ctx.shapes[0], 4)
    n = _num_boxes(ctx, 1, 2)
    _dims(ctx.shapes[3], 1)
    size = ctx.value(3)
    h = w = None
    if size is not None and not context.executing_eagerly():
        if len(size) != 2:
            raise ValueError(f"Dimension must be 2 but is {len(size)}")
        h, w = int(size[0]), int(size[1])
        if h <= 0 or w <= 0:
            raise ValueError("crop_size must be positive")
    return [TensorShape([n, h, w, image[3]])]


def _grad_image_shape(ctx):
    grads = _dims(ctx.shapes[0], 4)
    n = _num_boxes(ctx, 1, 2)
    _merge(grads[0], n)
    _dims(ctx.shapes[3], 1)
    size = ctx.value(3)
    if size is None or len(size) != 4:
        return [TensorShape([None, None, None, grads[3]])]
    return [TensorShape([int(v) for v in size])]


def _grad_boxes_shape(ctx):
    _dims(ctx.shapes[0], 4)
    _dims(ctx.shapes[1], 4)
    return [TensorShape([_num_boxes(ctx, 2, 3), 4])]


CropAndResize = op_def(
    "CropAndResize",
    inputs=["image: T", "boxes: float", "box_ind: int32", "crop_size: int32"],
    outputs=["crops: float"],
    attrs=[_CROP_T, _METHOD, "extrapolation_value: float = 0"], shape=_crop_shape)
CropAndResizeGradImage = op_def(
    "CropAndResizeGradImage",
    inputs=["grads: float", "boxes: float", "box_ind: int32", "image_size: int32"],
    outputs=["output: T"], attrs=["T: {float, half, double}", _METHOD],
    shape=_grad_image_shape, gradient_undefined=True)
CropAndResizeGradBoxes = op_def(
    "CropAndResizeGradBoxes",
    inputs=["grads: float", "image: T", "boxes: float", "box_ind: int32"],
    outputs=["output: float"], attrs=[_CROP_T, "method: {'bilinear'} = 'bilinear'"],
    shape=_grad_boxes_shape, gradient_undefined=True)


@tf_export("image.crop_and_resize", v1=[])
def crop_and_resize_v2(image, boxes, box_indices, crop_size, method="bilinear",
                       extrapolation_value=0.0, name=None):
    """`tf.image.crop_and_resize`: crops of `image` at `boxes` resized to `crop_size`."""
    image = convert_to_tensor(image, name="image")
    inputs = [image, convert_to_tensor(boxes, dtypes.float32, name="boxes"),
              convert_to_tensor(box_indices, dtypes.int32, name="box_ind"),
              convert_to_tensor(crop_size, dtypes.int32, name="crop_size")]
    if isinstance(method, bytes):
        method = method.decode()
    return apply_op(CropAndResize, inputs,
                    {"T": image.dtype, "method": method,
                     "extrapolation_value": float(extrapolation_value)},
                    name=name).outputs[0]


@tf_export(v1=["image.crop_and_resize"])
def crop_and_resize_v1(image, boxes, box_ind=None, crop_size=None, method="bilinear",
                       extrapolation_value=0, name=None, box_indices=None):
    """`tf.compat.v1.image.crop_and_resize`: `box_ind` is the deprecated `box_indices`."""
    if box_ind is not None and box_indices is not None:
        raise ValueError("Cannot specify both 'box_indices' and 'box_ind'")
    box_ind = box_indices if box_indices is not None else box_ind
    return crop_and_resize_v2(image, boxes, box_ind, crop_size, method, extrapolation_value,
                              name)


# ExtractImagePatches ---------------------------------------------------------------------

_PATCH_T = ("T: {bfloat16, half, float, double, int8, int16, int32, int64, uint8, complex64, "
            "complex128, bool}")


def patch_geometry(in_size: int, ksize: int, stride: int, rate: int, padding: str):
    """(output size, padding before) of one spatial axis, as TF's GetWindowedOutputSize."""
    eff = (ksize - 1) * rate + 1
    if padding == "VALID":
        n = in_size - eff + stride
        out = n // stride if n >= 0 else -((-n) // stride)  # C++ truncation
        if out < 0:
            raise InvalidArgumentError(
                None, None, f"Computed output size would be negative: {out} [input_size: "
                            f"{in_size}, effective_filter_size: {eff}, stride: {stride}]")
        return out, 0
    out = (in_size + stride - 1) // stride
    return out, max(0, (out - 1) * stride + eff - in_size) // 2


def check_patch_attrs(attrs) -> None:
    for key in ("ksizes", "strides", "rates"):
        v = list(attrs[key])
        if len(v) < 4:
            raise InvalidArgumentError(None, None, f"Length for attr '{key}' of {len(v)} must "
                                                   f"be at least minimum 4")
    for key in ("ksizes", "strides", "rates"):
        v = list(attrs[key])
        if v[0] != 1 or v[3] != 1:
            raise UnimplementedError(None, None, f"Only support {key} across space.")


def _patches_shape(ctx):
    check_patch_attrs(ctx.attrs)
    b, h, w, c = _dims(ctx.shapes[0], 4)
    k, s, r, pad = (ctx.attrs["ksizes"], ctx.attrs["strides"], ctx.attrs["rates"],
                    ctx.attrs["padding"])
    oh = None if h is None else patch_geometry(h, k[1], s[1], r[1], pad)[0]
    ow = None if w is None else patch_geometry(w, k[2], s[2], r[2], pad)[0]
    return [TensorShape([b, oh, ow, None if c is None else k[1] * k[2] * c])]


ExtractImagePatches = op_def(
    "ExtractImagePatches", inputs=["images: T"], outputs=["patches: T"],
    attrs=["ksizes: list(int)", "strides: list(int)", "rates: list(int)", _PATCH_T,
           "padding: {'SAME', 'VALID'}"], shape=_patches_shape)


@tf_export("image.extract_patches")
def extract_patches(images, sizes, strides, rates, padding, name=None):
    """`tf.image.extract_patches`: the sizes[1] x sizes[2] windows (every strides, dilated
    by rates) of each image, flattened into the depth axis."""
    images = convert_to_tensor(images, name="images")
    if isinstance(padding, bytes):
        padding = padding.decode()
    attrs = {"ksizes": [int(v) for v in sizes], "strides": [int(v) for v in strides],
             "rates": [int(v) for v in rates], "T": images.dtype, "padding": padding}
    check_patch_attrs(attrs)
    return apply_op(ExtractImagePatches, [images], attrs, name=name).outputs[0]


@tf_export(v1=["image.extract_image_patches", "extract_image_patches"])
def extract_image_patches(images, ksizes=None, strides=None, rates=None, padding=None,
                          name=None, sizes=None):
    """`tf.compat.v1.image.extract_image_patches`: `ksizes` is the deprecated `sizes`."""
    if ksizes is not None and sizes is not None:
        raise ValueError("Cannot specify both 'sizes' and 'ksizes'")
    return extract_patches(images, sizes if sizes is not None else ksizes, strides, rates,
                           padding, name)


# DrawBoundingBoxes -----------------------------------------------------------------------

def _draw_shape(ctx):
    images = _dims(ctx.shapes[0], 4)
    _dims(ctx.shapes[1], 3)
    return [TensorShape(images)]


DrawBoundingBoxes = op_def(
    "DrawBoundingBoxes", inputs=["images: T", "boxes: float"], outputs=["output: T"],
    attrs=["T: {float, half} = DT_FLOAT"], shape=_draw_shape, not_differentiable=True)
DrawBoundingBoxesV2 = op_def(
    "DrawBoundingBoxesV2", inputs=["images: T", "boxes: float", "colors: float"],
    outputs=["output: T"], attrs=["T: {float, half} = DT_FLOAT"], shape=_draw_shape,
    gradient_undefined=True)


@tf_export("image.draw_bounding_boxes", v1=[])
def draw_bounding_boxes_v2(images, boxes, colors, name=None):
    """`tf.image.draw_bounding_boxes`: each image with the outlines of its boxes
    ([batch, boxes, 4] normalized y1, x1, y2, x2) drawn over it, box i in colors[i % len]
    (TF's ten default colors where `colors` is None or empty)."""
    images = convert_to_tensor(images, name="images")
    inputs = [images, convert_to_tensor(boxes, dtypes.float32, name="boxes")]
    if colors is None:
        return apply_op(DrawBoundingBoxes, inputs, {"T": images.dtype}, name=name).outputs[0]
    inputs.append(convert_to_tensor(colors, dtypes.float32, name="colors"))
    return apply_op(DrawBoundingBoxesV2, inputs, {"T": images.dtype}, name=name).outputs[0]


@tf_export(v1=["image.draw_bounding_boxes"])
def draw_bounding_boxes(images, boxes, name=None, colors=None):
    """`tf.compat.v1.image.draw_bounding_boxes`: `colors` optional."""
    return draw_bounding_boxes_v2(images, boxes, colors, name)
