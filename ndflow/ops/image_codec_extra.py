"""`tf.io.decode_webp` / `tf.image.decode_webp` (TF's DecodeWebP) and
`tf.io.decode_and_crop_jpeg` / `tf.image.decode_and_crop_jpeg` (DecodeAndCropJpeg); host
kernels in ndflow/kernels/image_codec_extra.py.

decode_webp gives a WebP file's frames, uint8 [frames, height, width, 3 or 4] (a still image
is one frame; `channels` 0 or the file's own). As TF's, it decodes PNG, JPEG and BMP files
too ([height, width, channels]), and the other decoders read WebP files (as 4-D frames).
decode_and_crop_jpeg decodes the window `crop_window` = [y, x, height, width] of a JPEG (in
the pixels of the image scaled down by `ratio`) exactly as TF's libjpeg-turbo path does;
a window not inside the image is an InvalidArgumentError.
"""

from __future__ import annotations

from ndflow.core import context, dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.shapes import TensorShape
from ndflow.core.tensor import Tensor
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.op_def import op_def


def _channels(ctx):
    channels = int(ctx.attrs.get("channels", 0))
    if channels < 0 and not context.executing_eagerly():
        raise ValueError(f"channels must be non-negative, got {channels}")
    return channels if channels > 0 else None


def _scalar_contents(ctx):
    if not context.executing_eagerly():
        ctx.shapes[0].with_rank(0)


def _webp_shape(ctx):
    _scalar_contents(ctx)
    return [TensorShape([None, None, None, _channels(ctx)])]


def _crop_shape(ctx):
    _scalar_contents(ctx)
    channels = _channels(ctx)
    h = w = None
    if not context.executing_eagerly():
        window = ctx.shapes[1].with_rank(1)
        if window.dims[0] is not None and window.dims[0] != 4:
            raise ValueError(f"Dimension must be 4 but is {window.dims[0]}")
        value = ctx.value(1)
        if value is not None and len(value) == 4:
            h, w = (int(v) if v >= 0 else None for v in value[2:])
    return [TensorShape([h, w, channels])]


DecodeWebP = op_def(
    "DecodeWebP", inputs=["contents: string"], outputs=["image: dtype"],
    attrs=["channels: int = 0", "dtype: {uint8} = DT_UINT8"], shape=_webp_shape,
    gradient_undefined=True)
DecodeAndCropJpeg = op_def(
    "DecodeAndCropJpeg", inputs=["contents: string", "crop_window: int32"],
    outputs=["image: uint8"],
    attrs=["channels: int = 0", "ratio: int = 1", "fancy_upscaling: bool = true",
           "try_recover_truncated: bool = false", "acceptable_fraction: float = 1.0",
           "dct_method: string = ''"], shape=_crop_shape, gradient_undefined=True)


def _contents(contents) -> Tensor:
    return convert_to_tensor(contents, dtypes.string, name="contents")


@tf_export("io.decode_webp", "image.decode_webp", v1=["io.decode_webp", "image.decode_webp"])
def decode_webp(contents, channels=0, dtype=dtypes.uint8, name=None) -> Tensor:
    """`tf.io.decode_webp`: a WebP file's bytes -> uint8 [frames, height, width, channels]
    (`channels` 0, or 3 / 4 matching the file)."""
    return apply_op(DecodeWebP, [_contents(contents)],
                    {"channels": int(0 if channels is None else channels),
                     "dtype": dtypes.as_dtype(dtype if dtype is not None else dtypes.uint8)},
                    name=name).outputs[0]


@tf_export("io.decode_and_crop_jpeg", "image.decode_and_crop_jpeg",
           v1=["io.decode_and_crop_jpeg", "image.decode_and_crop_jpeg"])
def decode_and_crop_jpeg(contents, crop_window, channels=0, ratio=1, fancy_upscaling=True,
                         try_recover_truncated=False, acceptable_fraction=1,
                         dct_method="", name=None) -> Tensor:
    """`tf.io.decode_and_crop_jpeg`: the `crop_window` [y, x, height, width] of a JPEG,
    uint8 [height, width, channels], decoded as TF's decode_jpeg with the same attrs."""
    attrs = {"channels": int(channels), "ratio": int(ratio),
             "fancy_upscaling": bool(fancy_upscaling),
             "try_recover_truncated": bool(try_recover_truncated),
             "acceptable_fraction": float(acceptable_fraction),
             "dct_method": dct_method.decode() if isinstance(dct_method, bytes) else
             str(dct_method)}
    window = convert_to_tensor(crop_window, dtypes.int32, name="crop_window")
    return apply_op(DecodeAndCropJpeg, [_contents(contents), window], attrs,
                    name=name).outputs[0]
