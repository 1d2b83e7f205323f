"""The docstrings of image_codec.py's public functions (attached at its end; see
core/doc_tables.py). Generated from a spec with the example outputs computed."""

from __future__ import annotations

_CHANNELS = ("channels: 0 keeps the file's channels; 1 gives grayscale, 3 RGB (and 4 RGBA where "
             "the\n        format has it).")


def _decode(title: str, args: list[str], returns: str, example: str = "") -> str:
    """The docstring of a decoder of `contents` with the further Args lines `args`."""
    lines = "".join(f"\n      {line}" for line in args)
    example = f"\n    Example:\n      >>> {example}\n" if example else ""
    return f"""{title}

    Args:
      contents: a scalar string tensor: the file's bytes.{lines}
      name: optional name for the operation.

    Returns:
      {returns}

    Raises:
      InvalidArgumentError: if `contents` is not a valid file of the format.
{example}    """

DOCS = {
    "decode_png": _decode(
        "Decodes a PNG file (other formats too) into an image tensor.",
        [_CHANNELS, "dtype: uint8 or uint16 (16-bit PNGs keep their precision with uint16)."],
        "A tensor [height, width, channels] of `dtype`.",
        "png = tf.io.encode_png(tf.zeros([2, 3, 1], tf.uint8))\n      >>> "
        "tf.io.decode_png(png).shape\n      TensorShape([2, 3, 1])"),
    "decode_jpeg": _decode(
        "Decodes a JPEG file (other formats too) into a uint8 image tensor.",
        [_CHANNELS, "ratio: a downscaling factor: 1, 2, 4 or 8.",
         "fancy_upscaling: whether to upsample chroma smoothly.",
         "try_recover_truncated: whether to decode a truncated file as far as possible.",
         "acceptable_fraction: the fraction of lines needed to accept a truncated file.",
         "dct_method: a hint for the DCT algorithm; accepted for compatibility."],
        "A uint8 tensor [height / ratio, width / ratio, channels].",
        "jpg = tf.io.encode_jpeg(tf.zeros([2, 3, 3], tf.uint8))\n      >>> "
        "tf.io.decode_jpeg(jpg).shape\n      TensorShape([2, 3, 3])"),
    "decode_bmp": _decode("Decodes a BMP file into a uint8 image tensor.",
                          ["channels: 0 keeps the file's channels, or 3 or 4."],
                          "A uint8 tensor [height, width, channels]."),
    "decode_gif": _decode("Decodes every frame of a GIF file.", [],
                          "A uint8 tensor [frames, height, width, 3]."),
    "decode_image": """Decodes a BMP, GIF, JPEG or PNG file, detecting the format from its bytes.

    Args:
      contents: a scalar string tensor: the file's bytes.
      channels: None or 0 keeps the file's channels; otherwise 1, 3 or 4.
      dtype: the output dtype; float types are scaled to [0, 1].
      name: optional name for the operation.
      expand_animations: if False, only the first frame of a GIF is returned (3-D).

    Returns:
      A tensor [height, width, channels] ([frames, height, width, 3] for an animated GIF).

    Raises:
      InvalidArgumentError: if `contents` is not a valid file of the format.

    Example:
      >>> png = tf.io.encode_png(tf.zeros([2, 3, 1], tf.uint8))
      >>> tf.io.decode_image(png).shape
      TensorShape([2, 3, 1])
    """,
    "encode_png": """Encodes an image tensor as a PNG file.

    Args:
      image: a uint8 or uint16 tensor [height, width, channels] with 1 to 4 channels.
      compression: the zlib level, -1 (default) to 9.
      name: optional name for the operation.

    Returns:
      A scalar string tensor: the PNG bytes (8- or 16-bit by the dtype).

    Example:
      >>> tf.io.decode_png(tf.io.encode_png(tf.ones([2, 2, 1], tf.uint8))).shape
      TensorShape([2, 2, 1])
    """,
    "encode_jpeg": """Encodes an image tensor as a JPEG file.

    Args:
      image: a uint8 tensor [height, width, channels] with 1 or 3 channels.
      format: "" (by the channels), "grayscale" or "rgb".
      quality: the quality, 0 to 100.
      progressive: whether to write a progressive JPEG.
      optimize_size: whether to spend effort on a smaller file.
      chroma_downsampling: whether to subsample chroma.
      density_unit: "in" or "cm", the unit of the densities.
      x_density: horizontal pixels per density unit.
      y_density: vertical pixels per density unit.
      xmp_metadata: optional XMP metadata to embed.
      name: optional name for the operation.

    Returns:
      A scalar string tensor: the JPEG bytes.

    Example:
      >>> bool(tf.io.is_jpeg(tf.io.encode_jpeg(tf.zeros([2, 2, 3], tf.uint8))))
      True
    """,
    "extract_jpeg_shape": """The shape of a JPEG image, read from its header without decoding.

    Args:
      contents: a scalar string tensor: the file's bytes.
      output_type: int32 or int64.
      name: optional name for the operation.

    Returns:
      A vector [height, width, channels].

    Raises:
      InvalidArgumentError: if `contents` is not a valid file of the format.

    Example:
      >>> jpg = tf.io.encode_jpeg(tf.zeros([2, 3, 3], tf.uint8))
      >>> tf.io.extract_jpeg_shape(jpg).numpy()
      array([2, 3, 3], dtype=int32)
    """,
    "is_jpeg": """Whether the bytes start with the JPEG signature (FF D8 FF).

    Args:
      contents: a scalar string tensor: the file's bytes.
      name: optional name for the operation.

    Returns:
      A scalar bool tensor.

    Example:
      >>> bool(tf.io.is_jpeg(b'not a jpeg'))
      False
    """,
    "adjust_jpeg_quality": """The image after a JPEG encode-decode round trip at the given quality.

    Args:
      image: a 3-D image [height, width, channels] or 4-D batch; uint8 or float in [0, 1].
      jpeg_quality: the quality, 0 to 100.
      dct_method: accepted for compatibility.
      name: optional name for the operation.

    Returns:
      A tensor of image's shape and dtype.

    Example:
      >>> tf.image.adjust_jpeg_quality(tf.zeros([2, 2, 3]), 50).shape
      TensorShape([2, 2, 3])
    """,
    "random_jpeg_quality": """The image after a JPEG round trip at a random quality in [min, max).

    Args:
      image: a 3-D image [height, width, channels] or 4-D batch; uint8 or float in [0, 1].
      min_jpeg_quality: the lowest quality (0 to 100).
      max_jpeg_quality: the bound above the highest quality.
      seed: optional int seed.

    Returns:
      A tensor of image's shape and dtype.

    Raises:
      ValueError: if the bounds are not 0 <= min < max <= 100.

    Example:
      >>> tf.image.random_jpeg_quality(tf.zeros([2, 2, 3]), 50, 90, seed=1).shape
      TensorShape([2, 2, 3])
    """,
    "stateless_random_jpeg_quality": """The image after a JPEG round trip at a seeded quality.

    The quality is drawn from [min, max) as `seed` determines.

    Args:
      image: a 3-D image [height, width, channels] or 4-D batch; uint8 or float in [0, 1].
      min_jpeg_quality: the lowest quality (0 to 100).
      max_jpeg_quality: the bound above the highest quality.
      seed: a shape-[2] int tensor.

    Returns:
      A tensor of image's shape and dtype.

    Raises:
      ValueError: if the bounds are not 0 <= min < max <= 100.

    Example:
      >>> tf.image.stateless_random_jpeg_quality(tf.zeros([2, 2, 3]), 50, 90, [1, 2]).shape
      TensorShape([2, 2, 3])
    """,
}
