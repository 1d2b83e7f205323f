"""`tf.io` / `tf.image` image files: decode_png, encode_png, decode_jpeg, encode_jpeg,
decode_image, decode_gif, decode_bmp, extract_jpeg_shape, is_jpeg (TF's ops of those names;
host kernels on Pillow in ndflow/kernels/image_codec.py).

As in TF 2.21, every decoder reads any of PNG, JPEG, GIF, BMP and WebP (the format is sniffed
from the bytes); `channels` = 0 keeps the file's channels, 1 / 3 / 4 convert. PNGs decode to
uint8, uint16 (16-bit files exactly, 8-bit ones times 257) or, through decode_image, floats in
[0, 1]; encode_png writes uint16 images as 16-bit files.
"""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.doc_tables import attach
from ndflow.core.scopes import name_scope
from ndflow.core.shapes import TensorShape
from ndflow.core.tensor import Tensor
from ndflow.ops import comparison, image_codec_docs, random, stateless_random, string_ops
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.image_adjust import convert_image_dtype
from ndflow.ops.op_def import op_def


def _decoded_shape(ctx):
    ctx.shapes[0].with_rank(0)
    channels = ctx.attrs.get("channels", 0)
    return [TensorShape([None, None, channels or None])]


def _image_shape(ctx):
    ctx.shapes[0].with_rank(0)
    channels = ctx.attrs.get("channels", 0)
    if ctx.attrs.get("expand_animations", True):
        return [TensorShape(None)]  # 3-D, or 4-D for an animated GIF
    return [TensorShape([None, None, channels or None])]


def _encoded_shape(ctx):
    if ctx.shapes[0].ndims is not None and ctx.shapes[0].ndims != 3:
        raise ValueError(f"Shape must be rank 3 but is rank {ctx.shapes[0].ndims}")
    return [TensorShape([])]


_CHANNELS = "channels: int = 0"
DecodePng = op_def("DecodePng", inputs=["contents: string"], outputs=["image: dtype"],
                   attrs=[_CHANNELS, "dtype: {uint8, uint16} = DT_UINT8"], shape=_decoded_shape,
                   gradient_undefined=True)
DecodeJpeg = op_def(
    "DecodeJpeg", inputs=["contents: string"], outputs=["image: uint8"],
    attrs=[_CHANNELS, "ratio: int = 1", "fancy_upscaling: bool = true",
           "try_recover_truncated: bool = false", "acceptable_fraction: float = 1.0",
           "dct_method: string = ''"], shape=_decoded_shape, gradient_undefined=True)
DecodeImage = op_def(
    "DecodeImage", inputs=["contents: string"], outputs=["image: dtype"],
    attrs=[_CHANNELS, "dtype: {uint8, uint16, float} = DT_UINT8", "expand_animations: bool = true"],
    shape=_image_shape, gradient_undefined=True)
DecodeGif = op_def("DecodeGif", inputs=["contents: string"], outputs=["image: uint8"],
                   shape=lambda ctx: [TensorShape([None, None, None, 3])],
                   gradient_undefined=True)
DecodeBmp = op_def("DecodeBmp", inputs=["contents: string"], outputs=["image: uint8"],
                   attrs=[_CHANNELS], shape=_decoded_shape, gradient_undefined=True)
ExtractJpegShape = op_def(
    "ExtractJpegShape", inputs=["contents: string"], outputs=["image_shape: output_type"],
    attrs=["output_type: {int32, int64} = DT_INT32"],
    shape=lambda ctx: [TensorShape([3])], gradient_undefined=True)
EncodeJpegVariableQuality = op_def(
    "EncodeJpegVariableQuality", inputs=["images: uint8", "quality: int32"],
    outputs=["contents: string"], shape=_encoded_shape, gradient_undefined=True)
EncodePng = op_def("EncodePng", inputs=["image: T"], outputs=["contents: string"],
                   attrs=["compression: int = -1", "T: {uint8, uint16} = DT_UINT8"],
                   shape=_encoded_shape, gradient_undefined=True)
EncodeJpeg = op_def(
    "EncodeJpeg", inputs=["image: uint8"], outputs=["contents: string"],
    attrs=["format: {'', 'grayscale', 'rgb'} = ''", "quality: int = 95",
           "progressive: bool = false", "optimize_size: bool = false",
           "chroma_downsampling: bool = true", "density_unit: {'in', 'cm'} = 'in'",
           "x_density: int = 300", "y_density: int = 300", "xmp_metadata: string = ''"],
    shape=_encoded_shape, gradient_undefined=True)


def _contents(contents) -> Tensor:
    return convert_to_tensor(contents, dtypes.string, name="contents")


@tf_export("io.decode_png", "image.decode_png", v1=["io.decode_png", "image.decode_png"])
def decode_png(contents, channels=0, dtype=dtypes.uint8, name=None) -> Tensor:
    """`tf.io.decode_png`: a PNG (or other image) file's bytes -> [height, width, channels]."""
    return apply_op(DecodePng, [_contents(contents)],
                    {"channels": int(channels), "dtype": dtypes.as_dtype(dtype)},
                    name=name).outputs[0]


@tf_export("io.decode_jpeg", "image.decode_jpeg", v1=["io.decode_jpeg", "image.decode_jpeg"])
def decode_jpeg(contents, channels=0, ratio=1, fancy_upscaling=True,
                try_recover_truncated=False, acceptable_fraction=1, dct_method="",
                name=None) -> Tensor:
    """`tf.io.decode_jpeg`: a JPEG (or other image) file's bytes -> uint8 [h, w, channels]."""
    attrs = {"channels": int(channels), "ratio": int(ratio),
             "fancy_upscaling": bool(fancy_upscaling),
             "try_recover_truncated": bool(try_recover_truncated),
             "acceptable_fraction": float(acceptable_fraction), "dct_method": dct_method}
    return apply_op(DecodeJpeg, [_contents(contents)], attrs, name=name).outputs[0]


@tf_export("io.decode_image", "image.decode_image",
           v1=["io.decode_image", "image.decode_image"])
def decode_image(contents, channels=None, dtype=dtypes.uint8, name=None,
                 expand_animations=True) -> Tensor:
    """`tf.io.decode_image`: any supported image file -> [h, w, c] (animated GIFs: [n, h, w,
    3] unless `expand_animations=False`); float dtypes are scaled to [0, 1]."""
    dtype = dtypes.as_dtype(dtype)
    decode_as = dtype if dtype in (dtypes.uint8, dtypes.uint16, dtypes.float32) \
        else dtypes.float32
    image = apply_op(DecodeImage, [_contents(contents)],
                     {"channels": int(channels or 0), "dtype": decode_as,
                      "expand_animations": bool(expand_animations)}, name=name).outputs[0]
    return image if decode_as is dtype else convert_image_dtype(image, dtype)


@tf_export("io.decode_gif", "image.decode_gif", v1=["io.decode_gif", "image.decode_gif"])
def decode_gif(contents, name=None) -> Tensor:
    """`tf.io.decode_gif`: every frame, as uint8 [frames, height, width, 3]."""
    return apply_op(DecodeGif, [_contents(contents)], {}, name=name).outputs[0]


@tf_export("io.decode_bmp", "image.decode_bmp", v1=["io.decode_bmp", "image.decode_bmp"])
def decode_bmp(contents, channels=0, name=None) -> Tensor:
    """`tf.io.decode_bmp`: a BMP file -> uint8 [height, width, channels]."""
    return apply_op(DecodeBmp, [_contents(contents)], {"channels": int(channels)},
                    name=name).outputs[0]


@tf_export("io.extract_jpeg_shape", "image.extract_jpeg_shape",
           v1=["io.extract_jpeg_shape", "image.extract_jpeg_shape"])
def extract_jpeg_shape(contents, output_type=dtypes.int32, name=None) -> Tensor:
    """`tf.io.extract_jpeg_shape`: [height, width, channels] of a JPEG, without decoding."""
    return apply_op(ExtractJpegShape, [_contents(contents)],
                    {"output_type": dtypes.as_dtype(output_type)}, name=name).outputs[0]


@tf_export("io.encode_png", "image.encode_png", v1=["io.encode_png", "image.encode_png"])
def encode_png(image, compression=-1, name=None) -> Tensor:
    """`tf.io.encode_png`: a uint8 or uint16 [height, width, 1-4] image -> PNG bytes of 8 or
    16 bits (compression -1 is zlib's default, 0-9 its levels)."""
    image = convert_to_tensor(image, name="image")
    return apply_op(EncodePng, [image], {"compression": int(compression), "T": image.dtype},
                    name=name).outputs[0]


@tf_export("io.encode_jpeg", "image.encode_jpeg", v1=["io.encode_jpeg", "image.encode_jpeg"])
def encode_jpeg(image, format="", quality=95, progressive=False,  # noqa: A002 - TF's name
                optimize_size=False, chroma_downsampling=True, density_unit="in",
                x_density=300, y_density=300, xmp_metadata="", name=None) -> Tensor:
    """`tf.io.encode_jpeg`: a uint8 [height, width, 1 or 3] image -> JPEG bytes."""
    attrs = {"format": format, "quality": int(quality), "progressive": bool(progressive),
             "optimize_size": bool(optimize_size),
             "chroma_downsampling": bool(chroma_downsampling), "density_unit": density_unit,
             "x_density": int(x_density), "y_density": int(y_density),
             "xmp_metadata": xmp_metadata}
    return apply_op(EncodeJpeg, [convert_to_tensor(image, dtypes.uint8, name="image")], attrs,
                    name=name).outputs[0]


@tf_export("io.is_jpeg", "image.is_jpeg", v1=["io.is_jpeg", "image.is_jpeg"])
def is_jpeg(contents, name=None) -> Tensor:
    """`tf.io.is_jpeg`: whether the bytes start with JPEG's signature (FF D8 FF)."""
    prefix = string_ops.substr(_contents(contents), 0, 3)
    return comparison.equal(prefix, b"\xff\xd8\xff", name=name)


@tf_export("image.adjust_jpeg_quality")
def adjust_jpeg_quality(image, jpeg_quality, dct_method="", name=None) -> Tensor:
    """`tf.image.adjust_jpeg_quality`: the image after a JPEG round trip at `jpeg_quality`
    (the EncodeJpegVariableQuality op, then DecodeJpeg), in its own dtype."""
    with name_scope(name, "adjust_jpeg_quality"):
        image = convert_to_tensor(image, name="image")
        channels = image.shape.as_list()[-1]
        as_uint8 = convert_image_dtype(image, dtypes.uint8, saturate=True)
        quality = jpeg_quality if isinstance(jpeg_quality, Tensor) else \
            convert_to_tensor(jpeg_quality, dtypes.int32)
        data = apply_op(EncodeJpegVariableQuality, [as_uint8, quality], {}).outputs[0]
        decoded = decode_jpeg(data, channels=channels or 0, dct_method=dct_method)
        return convert_image_dtype(decoded, image.dtype, saturate=True)


def _check_quality_range(lo, hi) -> None:
    if lo < 0 or hi < 0 or lo > 100 or hi > 100:
        raise ValueError("jpeg encoding range must be between 0 and 100.")
    if lo >= hi:
        raise ValueError("`min_jpeg_quality` must be less than `max_jpeg_quality`.")


@tf_export("image.random_jpeg_quality")
def random_jpeg_quality(image, min_jpeg_quality, max_jpeg_quality, seed=None) -> Tensor:
    """`tf.image.random_jpeg_quality`: a JPEG round trip at a quality drawn from
    [min_jpeg_quality, max_jpeg_quality)."""
    _check_quality_range(min_jpeg_quality, max_jpeg_quality)
    quality = random.random_uniform([], min_jpeg_quality, max_jpeg_quality, seed=seed,
                                    dtype=dtypes.int32)
    return adjust_jpeg_quality(image, quality)


@tf_export("image.stateless_random_jpeg_quality", v1=[])
def stateless_random_jpeg_quality(image, min_jpeg_quality, max_jpeg_quality, seed) -> Tensor:
    """`tf.image.stateless_random_jpeg_quality`: the quality determined by `seed`."""
    _check_quality_range(min_jpeg_quality, max_jpeg_quality)
    quality = stateless_random.stateless_uniform([], seed, min_jpeg_quality, max_jpeg_quality,
                                                 dtype=dtypes.int32)
    return adjust_jpeg_quality(image, quality)


attach(globals(), image_codec_docs.DOCS)
