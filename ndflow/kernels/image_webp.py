"""WebP files as TF 2.21's image decoders read them (core/kernels/image/decode_image_op.cc over
core/lib/webp/webp_io.cc), decoded by Pillow's libwebp: used by DecodeWebP and by every
decoder that meets a WebP file (DecodeImage, DecodePng, DecodeJpeg, DecodeBmp, DecodeGif,
DecodeAndCropJpeg all read one, as TF's).

A WebP file decodes to uint8 [frames, height, width, channels] (a still image is one frame;
DecodeImage with expand_animations=False gives the first frame, 3-D). Its channels are 4 if
the file has alpha (WebPGetFeatures' has_alpha: the VP8X alpha flag, the VP8L alpha bit or an
ALPH chunk), else 3; `channels` must be 0 or that number, and 1 is refused. Only uint8 comes
out. An animation's frames are libwebp's WebPAnimDecoder canvases (each frame composed over
the previous ones). TF decodes an animation without alpha into a 3-channel buffer with the
4-channel frames (overrunning it); here its frames come out with their 3 channels.
"""

from __future__ import annotations

import io
import struct

import numpy as np

from ndflow.core.errors import InvalidArgumentError

_ALPHA_FLAG, _ANIMATION_FLAG = 0x10, 0x02


def _bad(message: str):
    raise InvalidArgumentError(None, None, message)


def is_webp(data: bytes) -> bool:
    return data[:4] == b"RIFF" and data[8:12] == b"WEBP"


def _vp8_ok(payload: bytes) -> bool:
    """VP8GetInfo's check of a key frame's header (10 bytes)."""
    if len(payload) < 10 or payload[3:6] != b"\x9d\x01\x2a":
        return False
    bits = payload[0] | (payload[1] << 8) | (payload[2] << 16)
    width, height = struct.unpack_from("<HH", payload, 6)
    return not (bits & 1) and ((bits >> 1) & 7) <= 3 and (bits >> 4) & 1 and \
        (width & 0x3FFF) > 0 and (height & 0x3FFF) > 0


def features(data: bytes):
    """(has_alpha, has_animation) as libwebp's WebPGetFeatures finds them, or None where it
    fails (a bad or too short header)."""
    riff_size = struct.unpack_from("<I", data, 4)[0] if len(data) >= 12 else 0
    if len(data) < 12 or riff_size < 12 or riff_size > 0xFFFFFFF6:
        return None
    pos = 12
    if data[pos:pos + 4] == b"VP8X":
        if len(data) < pos + 18:
            return None
        flags = struct.unpack_from("<I", data, pos + 8)[0]
        if flags & _ANIMATION_FLAG:
            return bool(flags & _ALPHA_FLAG), True
        alpha = bool(flags & _ALPHA_FLAG)
        pos += 8 + struct.unpack_from("<I", data, pos + 4)[0]
        while len(data) >= pos + 8 and data[pos:pos + 4] not in (b"VP8 ", b"VP8L"):
            size = struct.unpack_from("<I", data, pos + 4)[0]
            pos += 8 + size + (size & 1)
        if len(data) < pos + 8:
            return alpha, False     # short after VP8X: the canvas's features
    else:
        alpha = False
    tag = data[pos:pos + 4]
    payload = data[pos + 8:pos + 18]
    if tag == b"VP8 ":
        return (alpha, False) if _vp8_ok(payload) else None
    if tag == b"VP8L":
        if len(payload) < 5 or payload[0] != 0x2F or payload[4] >> 5:
            return None
        return alpha or bool((payload[4] >> 4) & 1), False
    return None


def decode(data: bytes, channels: int, dtype: str = "uint8", frames: bool = True):
    """The WebP file `data` as uint8 [frames, h, w, c], or its first frame [h, w, c] where
    `frames` is False. TF's errors, in TF's order."""
    if channels not in (0, 3, 4):
        _bad("WebP only supports 3 or 4 channels")
    if dtype != "uint8":
        _bad("WebP only supports uint8 for dtype")
    found = features(data)
    if found is None:
        _bad("Failed to decode WebP header.")
    has_alpha, animated = found
    have = 4 if has_alpha else 3
    if channels not in (0, have):
        _bad("Number of channels requested does not match input")
    import PIL.Image  # noqa: PLC0415 - Pillow loads with the first image decoded
    try:
        im = PIL.Image.open(io.BytesIO(data), formats=["WEBP"])
        count = getattr(im, "n_frames", 1) if animated and frames else 1
        out = []
        for i in range(count):
            im.seek(i)
            out.append(np.asarray(im.convert("RGBA" if have == 4 else "RGB")))
    except (OSError, ValueError, SyntaxError, EOFError):
        _bad("Failed to decode WebP image.")
    return np.stack(out) if frames else np.array(out[0])   # writable copies
