"""`tf.image.extract_glimpse` (TF's ExtractGlimpseV2) and `tf.compat.v1.image.extract_glimpse`
(ExtractGlimpse): a `size` window of each image of a batch, at `offsets`, the parts outside the
image filled with noise (kernel: ndflow/kernels/image_glimpse.py).

Both ops take the window's position (y, x) per image and turn it into the window's top-left
pixel in float32, then truncate it toward zero. ExtractGlimpse (v1) un-normalizes (x W) when
`normalized`, un-centers (/ 2 + W / 2) when `centered`, and always removes half the window;
ExtractGlimpseV2 does so only for normalized and centered offsets: normalized uncentered
offsets are scaled by W only, unnormalized centered ones moved by W / 2 only, and unnormalized
uncentered ones are the top-left pixel itself. The noise is `noise` ('uniform': between the
image's minimum and maximum; 'gaussian': each channel's mean and standard deviation, clipped
to its range; 'zero'); an empty `noise` means uniform if `uniform_noise` else gaussian, and
`uniform_noise` with a `noise` other than 'uniform' is an error.
"""

from __future__ import annotations

from ndflow.core import context, dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.shapes import TensorShape
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.op_def import op_def


def _dims(shape: TensorShape, rank: int) -> list:
    """The dims of `shape` checked to be of rank `rank` (in a graph; eagerly a mismatch is
    left to the kernel, which raises TF's own message)."""
    if context.executing_eagerly() and shape.ndims not in (None, rank):
        return [None] * rank
    shape = shape.with_rank(rank)
    return shape.as_list() if shape.ndims is not None else [None] * rank


def _glimpse_shape(ctx):
    images = _dims(ctx.shapes[0], 4)
    offsets = _dims(ctx.shapes[2], 2)
    eager = context.executing_eagerly()
    batch = images[0] if images[0] is not None else offsets[0]
    if images[0] is not None and offsets[0] is not None and images[0] != offsets[0]:
        if not eager:
            raise ValueError(f"Dimensions must be equal, but are {images[0]} and {offsets[0]}")
        batch = None
    if offsets[1] is not None and offsets[1] != 2 and not eager:
        raise ValueError(f"Dimension must be 2 but is {offsets[1]}")
    noise = ctx.attrs.get("noise", "uniform")
    if ctx.attrs.get("uniform_noise", True) and noise not in ("", "uniform") and not eager:
        raise ValueError("The uniform_noise should not be True when noise is not uniform")
    size = _dims(ctx.shapes[1], 1)
    if size[0] is not None and size[0] != 2 and not eager:
        raise ValueError(f"Dimension must be 2 but is {size[0]}")
    value = ctx.value(1)
    h = w = None
    if value is not None and not eager and len(value) == 2:
        h, w = (int(v) if v >= 0 else None for v in value)  # < 0: the kernel's error
    return [TensorShape([batch, h, w, images[3]])]


_GLIMPSE = dict(inputs=["input: float", "size: int32", "offsets: float"],
                outputs=["glimpse: float"],
                attrs=["centered: bool = true", "normalized: bool = true",
                       "uniform_noise: bool = true", "noise: string = 'uniform'"],
                shape=_glimpse_shape)
# TF: ExtractGlimpse is NotDifferentiable, ExtractGlimpseV2 has no gradient at all.
ExtractGlimpse = op_def("ExtractGlimpse", **_GLIMPSE, not_differentiable=True)
ExtractGlimpseV2 = op_def("ExtractGlimpseV2", **_GLIMPSE, gradient_undefined=True)


def _inputs(input, size, offsets):  # noqa: A002 - TF's name
    return [convert_to_tensor(input, dtypes.float32, name="input"),
            convert_to_tensor(size, dtypes.int32, name="size"),
            convert_to_tensor(offsets, dtypes.float32, name="offsets")]


def _noise_name(noise) -> str:
    return noise.decode() if isinstance(noise, bytes) else str(noise)


@tf_export("image.extract_glimpse", v1=[])
def extract_glimpse_v2(input, size, offsets, centered=True, normalized=True,  # noqa: A002
                       noise="uniform", name=None):
    """`tf.image.extract_glimpse`: windows of `size` (height, width) of each image of the 4-D
    float32 `input`, at `offsets` ([batch, 2] y, x: the window's center for normalized and
    centered offsets, its top-left corner otherwise), float32 [batch, height, width,
    channels]; out-of-image parts filled with `noise` ('uniform', 'gaussian' or 'zero')."""
    attrs = {"centered": bool(centered), "normalized": bool(normalized),
             "uniform_noise": False, "noise": _noise_name(noise)}
    return apply_op(ExtractGlimpseV2, _inputs(input, size, offsets), attrs,
                    name=name).outputs[0]


@tf_export(v1=["image.extract_glimpse"])
def extract_glimpse(input, size, offsets, centered=True, normalized=True,  # noqa: A002
                    uniform_noise=True, name=None):
    """`tf.compat.v1.image.extract_glimpse`: the windows centered at `offsets` (TF's v1
    ExtractGlimpse: half the window is removed from every offset); out-of-image parts filled
    with uniform noise (the op's `noise` attr keeps its default 'uniform', so
    `uniform_noise=False` still gives uniform noise, as in TF)."""
    attrs = {"centered": bool(centered), "normalized": bool(normalized),
             "uniform_noise": bool(uniform_noise), "noise": "uniform"}
    return apply_op(ExtractGlimpse, _inputs(input, size, offsets), attrs, name=name).outputs[0]
