"""Host kernels of DecodeWebP and DecodeAndCropJpeg (ops/image_codec_extra.py), with TF 2.21's
dispatch on the file's format (core/kernels/image/decode_image_op.cc): WebP files through
kernels/image_webp.py, JPEG files through kernels/image_jpeg.py (libjpeg-turbo's decode, bit
for bit), PNG and BMP files (DecodeWebP only) through kernels/image_codec.py's decoder.

As TF's: DecodeWebP decodes a JPEG with TF's default JPEG settings and refuses a GIF ("Bad op
type DecodeWebP"); DecodeAndCropJpeg refuses PNG, GIF and BMP files and gives a WebP file's
frames uncropped.
"""

from __future__ import annotations

import numpy as np
import torch

from ndflow.core.errors import InvalidArgumentError
from ndflow.core.shapes import fmt
from ndflow.kernels import image_codec, image_jpeg, image_webp
from ndflow.kernels.registry import host_kernel
from ndflow.ops import image_codec_extra as ops

_JPEG, _PNG, _GIF, _BMP = b"\xff\xd8\xff", b"\x89PNG\r\n\x1a\n", b"GIF8", b"BM"
_UNKNOWN = "Unknown image file format. One of JPEG, JPEG XL, PNG, GIF, BMP, WebP required."


def _bad(message: str):
    raise InvalidArgumentError(None, None, message)


def _contents(contents) -> bytes:
    arr = np.asarray(contents, dtype=object)
    if arr.ndim != 0:
        _bad(f"`contents` must be scalar but got shape{fmt(arr.shape)}")
    data = arr.item()
    data = data.encode() if isinstance(data, str) else bytes(data)
    if not data:
        _bad("Input is empty.")
    return data


def _channels(node) -> int:
    channels = int(node.attrs.get("channels", 0))
    if channels not in (0, 1, 3, 4):
        _bad(f"`channels` must be 0, 1, 3 or 4 but got {channels}")
    return channels


def _jpeg(data: bytes, channels: int, flags, crop=None) -> torch.Tensor:
    if channels == 4:
        _bad("JPEG does not support 4 channels")
    ratio, fancy, fast, recover, fraction = flags
    return torch.from_numpy(image_jpeg.decode(data, channels, ratio, fancy, fast, crop,
                                              recover, fraction))


@host_kernel(ops.DecodeAndCropJpeg)
def _decode_and_crop_jpeg(node):
    flags = image_jpeg.flags(node.attrs)
    channels = _channels(node)

    def decode_and_crop_jpeg(contents, crop_window):
        data = _contents(contents)
        if data.startswith(_JPEG):
            if channels == 4:
                _bad("JPEG does not support 4 channels")
            window = np.asarray(crop_window.cpu() if isinstance(crop_window, torch.Tensor)
                                else crop_window)
            if window.ndim != 1:
                _bad(f"crop_window must be 1-D, got shape {fmt(window.shape)}")
            if window.shape[0] != 4:
                _bad(f"crop_size must have four elements {fmt(window.shape)}")
            return _jpeg(data, channels, flags, [int(v) for v in window])
        for magic, kind in ((_PNG, "PNG"), (_GIF, "GIF"), (_BMP, "BMP")):
            if data.startswith(magic):
                _bad(f"DecodeAndCropJpeg operation can run on JPEG only, but detected {kind}.")
        if image_webp.is_webp(data):
            return torch.from_numpy(image_webp.decode(data, channels))
        _bad(_UNKNOWN)
    return decode_and_crop_jpeg


@host_kernel(ops.DecodeWebP)
def _decode_webp(node):
    channels = _channels(node)
    dtype = node.attrs["dtype"].name if node.attrs.get("dtype") is not None else "uint8"
    other = image_codec._decoder(node, False)  # noqa: SLF001 - PNG / BMP as DecodePng

    def decode_webp(contents):
        data = _contents(contents)
        if image_webp.is_webp(data):
            return torch.from_numpy(image_webp.decode(data, channels, dtype))
        if data.startswith(_JPEG):
            return _jpeg(data, channels, image_jpeg.flags({}))
        if data.startswith(_GIF):
            _bad("Bad op type DecodeWebP")
        if data.startswith((_PNG, _BMP)):
            return other(contents)
        _bad(_UNKNOWN)
    return decode_webp
