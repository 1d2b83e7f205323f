"""DecodeJxl's kernel: TF 2.21's DecodeImageV2Op for op type DecodeJxl
(core/kernels/image/decode_image_op.cc over core/lib/jxl/jxl_io.cc). A JPEG XL file is
decoded by libjxl through the `imagecodecs` package (imported on first use; libjxl 0.11, as
TF's), to uint8 samples of the file's channels (color, plus alpha); an animation gives its
first frame. Other formats take the DecodePng path, as TF's kernel dispatches on the file's
signature whatever the op.

Differences from TF: files of more than 8 bits per sample are refused (TF's libjxl dithers
them to 8 bits, which the 16-bit samples imagecodecs returns cannot reproduce), and a file
libjxl cannot decode is always "Failed to decode JXL image" (TF says "... header" when even
its basic info is unreadable; imagecodecs does not report that stage).
"""

from __future__ import annotations

import numpy as np
import torch

from ndflow.core.errors import InvalidArgumentError, UnimplementedError
from ndflow.kernels import image_codec
from ndflow.kernels.registry import host_kernel
from ndflow.ops import image_jxl_ops

_JXL = (b"\xff\x0a", b"\x00\x00\x00\x0cJXL \x0d\x0a\x87\x0a")  # codestream, container
_OTHER = (b"\xff\xd8\xff", b"\x89PNG\r\n\x1a\n", b"GIF8", b"BM")
_UNKNOWN = "Unknown image file format. One of JPEG, JPEG XL, PNG, GIF, BMP, WebP required."


def _invalid(message: str) -> InvalidArgumentError:
    return InvalidArgumentError(None, None, message)


def _codecs():
    try:
        import imagecodecs
    except ImportError:
        raise UnimplementedError(None, None, "tf.image.decode_jxl needs the imagecodecs "
                                 "package (pip install imagecodecs) for libjxl") from None
    return imagecodecs


def decode(data: bytes, channels: int) -> np.ndarray:
    """A JPEG XL file's uint8 [height, width, channels] pixels, TF's checks included."""
    codecs = _codecs()
    try:
        image = codecs.jpegxl_decode(data, index=0)
    except Exception:  # noqa: BLE001 - imagecodecs' JpegxlError and friends
        raise _invalid("Failed to decode JXL image") from None
    if image.ndim == 2:
        image = image[..., None]
    if image.dtype != np.uint8:
        raise UnimplementedError(None, None, "decode_jxl: JPEG XL files of more than 8 bits "
                                 "per sample are not supported (TensorFlow dithers them to "
                                 "8 bits)")
    if channels not in (0, image.shape[-1]):
        raise _invalid("Number of channels requested does not match input")
    return np.ascontiguousarray(image)


def _is_known_other(data: bytes) -> bool:
    return data.startswith(_OTHER) or (data[:4] == b"RIFF" and len(data) > 12
                                       and data[8:12] == b"WEBP")


@host_kernel(image_jxl_ops.DecodeJxl)
def _decode_jxl(node):
    channels = int(node.attrs["channels"])
    if channels not in (0, 1, 3, 4):
        raise _invalid(f"`channels` must be 0, 1, 3 or 4 but got {channels}")
    other = image_codec._decoder(node, False)  # noqa: SLF001 - DecodePng's own path

    def decode_jxl(contents):
        arr = np.asarray(contents, dtype=object)
        if arr.ndim != 0:
            raise _invalid("`contents` must be scalar but got shape"
                           f"[{','.join(str(d) for d in arr.shape)}]")
        data = arr.item()
        data = data.encode() if isinstance(data, str) else bytes(data)
        if not data:
            raise _invalid("Input is empty.")
        if data.startswith(_JXL):
            return torch.from_numpy(decode(data, channels))
        if _is_known_other(data):
            return other(contents)
        raise _invalid(_UNKNOWN)
    return decode_jxl
