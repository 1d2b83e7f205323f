"""Host kernels for the image file ops, on Pillow: DecodePng / DecodeJpeg / DecodeImage (any
of PNG, JPEG, GIF, BMP, WebP, sniffed from the bytes, as TF 2.21's decoders) and EncodePng /
EncodeJpeg.

Channel conversions follow TF's decoders: RGB -> gray is libpng's fixed-point luma
(9798 R + 19235 G + 3735 B) >> 15, gray -> RGB repeats, a missing alpha is the maximum.
16-bit PNG files are read and written by kernels/png16.py (Pillow keeps 8 bits of their
color): uint16 keeps their samples, uint8 their high byte, floats scale them by 1/65535;
8-bit files give uint16 samples times 257, as TF's. (At 16 bits libpng's gray conversion goes
through its gamma tables: its values can differ from the formula's by a few units in 65535.)
JPEG files decode through kernels/image_jpeg.py, TF's libjpeg-turbo decode bit for bit with the
op's `ratio`, `fancy_upscaling`, `dct_method` and truncation attrs (DecodePng and DecodeImage:
TF's defaults).
"""

from __future__ import annotations

import io

import numpy as np
import torch

from ndflow.core.errors import InvalidArgumentError
from ndflow.kernels import image_jpeg, image_webp, png16
from ndflow.kernels.registry import host_kernel
from ndflow.ops import image_codec as ops

_UNKNOWN = "Unknown image file format. One of JPEG, JPEG XL, PNG, GIF, BMP, WebP required."
_SIGNATURES = (b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff", b"GIF87a", b"GIF89a", b"BM")


def _pil():
    # Pillow is imported on first use: `import ndflow` must not pay for it.
    import PIL.Image  # noqa: PLC0415
    return PIL.Image


def _known_format(data: bytes) -> bool:
    return data.startswith(_SIGNATURES) or (data[:4] == b"RIFF" and data[8:12] == b"WEBP")


def _scalar_bytes(x) -> bytes:
    arr = np.asarray(x, dtype=object)
    if arr.ndim != 0:
        raise InvalidArgumentError(None, None, f"contents must be scalar, got shape "
                                               f"{list(arr.shape)}".replace(" ", ""))
    return arr.item()


def _to_array(frame) -> np.ndarray:
    """A Pillow frame as uint8 [h, w, c] with the file's own channels."""
    mode = frame.mode
    if mode == "P":
        frame = frame.convert("RGBA" if "transparency" in frame.info else "RGB")
    elif mode == "PA":
        frame = frame.convert("RGBA")
    elif mode in ("1",):
        frame = frame.convert("L")
    elif mode in ("CMYK", "YCbCr", "LAB", "HSV"):
        frame = frame.convert("RGB")
    arr = np.asarray(frame)
    if arr.dtype != np.uint8:  # 16-bit samples (I;16, I): their high byte
        arr = (arr.astype(np.uint32) >> 8).clip(0, 255).astype(np.uint8)
    return arr if arr.ndim == 3 else arr[:, :, None]


def _convert_channels(arr: np.ndarray, channels: int) -> np.ndarray:
    have = arr.shape[-1]
    if channels == 0 or channels == have:
        return arr
    color = arr[..., :3] if have >= 3 else np.repeat(arr[..., :1], 3, axis=-1)
    if channels == 1:
        if have < 3:
            return arr[..., :1]
        c = color.astype(np.uint32)
        gray = (9798 * c[..., 0] + 19235 * c[..., 1] + 3735 * c[..., 2]) >> 15
        return gray.astype(arr.dtype)[..., None]
    if channels == 3:
        return np.ascontiguousarray(color)
    alpha = arr[..., 3:4] if have == 4 else arr[..., 1:2] if have == 2 else \
        np.full(arr.shape[:-1] + (1,), np.iinfo(arr.dtype).max, arr.dtype)
    return np.concatenate([color, alpha], axis=-1)


def _check_channels(channels: int) -> None:
    if channels not in (0, 1, 3, 4):
        raise InvalidArgumentError(None, None, f"`channels` must be 0, 1, 3 or 4 but got "
                                               f"{channels}")


def _decode(data: bytes, channels: int, animated: bool) -> np.ndarray:
    _check_channels(channels)
    if not _known_format(data):
        raise InvalidArgumentError(None, None, _UNKNOWN)
    if channels == 4 and data.startswith(_SIGNATURES[1]):
        raise InvalidArgumentError(None, None, "JPEG does not support 4 channels")
    Image = _pil()
    try:
        im = Image.open(io.BytesIO(data))
        frames = []
        for i in range(getattr(im, "n_frames", 1) if animated else 1):
            im.seek(i)
            frames.append(_convert_channels(_to_array(im), channels))
    except (OSError, ValueError, SyntaxError, EOFError) as e:
        kind = "PNG" if data.startswith(_SIGNATURES[0]) else "JPEG" if data.startswith(
            _SIGNATURES[1]) else "image"
        raise InvalidArgumentError(None, None, f"Invalid {kind}. Failed to decode: {e}".replace(
            "<_io.BytesIO object", "<bytes").split(" at 0x")[0]) \
            from None
    is_gif = data.startswith((b"GIF87a", b"GIF89a"))
    if is_gif and animated:
        return np.stack([_convert_channels(f, 3) if channels == 0 else f for f in frames])
    return _convert_channels(frames[0], 3) if is_gif and channels == 0 else frames[0]


def _jpeg(data: bytes, channels: int, flags: tuple) -> np.ndarray:
    """A JPEG file as TF's libjpeg-turbo decode gives it (kernels/image_jpeg.py)."""
    _check_channels(channels)
    if channels == 4:
        raise InvalidArgumentError(None, None, "JPEG does not support 4 channels")
    ratio, fancy, fast, recover, fraction = flags
    return image_jpeg.decode(data, channels, ratio, fancy, fast, None, recover, fraction)


def _decoder(node, animated_attr: bool):
    channels = int(node.attrs.get("channels", 0))
    dtype = node.attrs["dtype"].name if node.attrs.get("dtype") is not None else "uint8"
    animated = bool(node.attrs.get("expand_animations", True)) if animated_attr else False
    jpeg = image_jpeg.flags(node.attrs)

    def decode(contents):
        data = _scalar_bytes(contents)
        if image_webp.is_webp(data):    # TF: [frames, h, w, c] (DecodeImage: maybe frame 0)
            _check_channels(channels)
            return torch.from_numpy(image_webp.decode(data, channels, dtype,
                                                      animated or not animated_attr))
        if png16.is_16bit(data):
            _check_channels(channels)
            arr, top = _convert_channels(png16.decode(data), channels), 65535
            if dtype == "uint8":
                arr, top = (arr >> 8).astype(np.uint8), 255
        elif data.startswith(_SIGNATURES[0]):
            arr, top = _decode(data, channels, animated), 255
            if dtype == "uint16":           # libpng's expansion to 16 bits
                arr, top = arr.astype(np.uint16) * np.uint16(257), 65535
        else:                               # JPEG, GIF, BMP: 8-bit samples, TF's scaling
            arr = _jpeg(data, channels, jpeg) if data.startswith(_SIGNATURES[1]) else \
                _decode(data, channels, animated)
            if dtype == "uint16":           # TF's scale (65535 + 1) / (255 + 1)
                return torch.from_numpy(arr.astype(np.uint16) << np.uint16(8))
            if dtype == "float32":          # times float(1 / 255)
                return torch.from_numpy(arr.astype(np.float32) * np.float32(1 / 255))
            top = 255
        t = torch.from_numpy(arr if arr.flags.writeable and arr.flags.c_contiguous else
                             np.array(arr))         # Pillow's pixels are read-only
        if dtype != "float32":
            return t
        # PNG: TF divides 8-bit samples by 255 and multiplies 16-bit ones by float(1 / 65535)
        return t.to(torch.float32).div_(255.0) if top == 255 else \
            t.to(torch.float32).mul_(float(np.float32(1 / 65535)))
    return decode


@host_kernel(ops.DecodePng)
def _decode_png(node):
    return _decoder(node, False)


@host_kernel(ops.DecodeJpeg)
def _decode_jpeg(node):
    return _decoder(node, False)


@host_kernel(ops.DecodeImage)
def _decode_image(node):
    return _decoder(node, True)


@host_kernel(ops.DecodeGif)
def _decode_gif(node):
    def decode_gif(contents):
        data = _scalar_bytes(contents)
        if image_webp.is_webp(data):
            return torch.from_numpy(image_webp.decode(data, 3))
        arr = _decode(data, 3, True)
        return torch.from_numpy(np.array(arr if arr.ndim == 4 else arr[None], copy=True))
    return decode_gif


_FORMAT_NAMES = {_SIGNATURES[0]: ("PNG", "png"), _SIGNATURES[1]: ("JPEG", "jpeg"),
                 _SIGNATURES[2]: ("GIF", "gif"), _SIGNATURES[3]: ("GIF", "gif")}


@host_kernel(ops.DecodeBmp)
def _decode_bmp(node):
    channels = int(node.attrs["channels"])

    def decode_bmp(contents):
        data = _scalar_bytes(contents)
        for signature, (kind, fn) in _FORMAT_NAMES.items():
            if data.startswith(signature):
                raise InvalidArgumentError(None, None, f"Trying to decode {kind} format using "
                                                       f"DecodeBmp op. Use `decode_{fn}` or "
                                                       "`decode_image` instead.")
        if image_webp.is_webp(data):
            _check_channels(channels)
            return torch.from_numpy(image_webp.decode(data, channels))
        return torch.from_numpy(np.array(_decode(data, channels, False), copy=True))
    return decode_bmp


_JPEG_CHANNELS = {"L": 1, "RGB": 3, "YCbCr": 3, "CMYK": 4}


@host_kernel(ops.ExtractJpegShape)
def _extract_jpeg_shape(node):
    dtype = torch.int64 if node.attrs["output_type"].name == "int64" else torch.int32

    def extract_jpeg_shape(contents):
        data = _scalar_bytes(contents)
        try:
            if not data.startswith(_SIGNATURES[1]):
                raise ValueError("not a JPEG")
            im = _pil().open(io.BytesIO(data))  # reads the header only
            shape = [im.size[1], im.size[0], _JPEG_CHANNELS.get(im.mode, 3)]
        except (OSError, ValueError, SyntaxError):
            raise InvalidArgumentError(None, None, f"Invalid JPEG data, size {len(data)}") \
                from None
        return torch.tensor(shape, dtype=dtype)
    return extract_jpeg_shape


def _image_array(image, op: str, allowed: tuple) -> np.ndarray:
    arr = image.cpu().numpy() if isinstance(image, torch.Tensor) else np.asarray(image)
    if arr.ndim != 3:
        raise InvalidArgumentError(None, None, f"image must be 3-dimensional"
                                               f"{list(arr.shape)}".replace(" ", ""))
    if arr.shape[-1] not in allowed:
        raise InvalidArgumentError(None, None, f"image must have {' or '.join(map(str, allowed))}"
                                               f" channels, got {arr.shape[-1]}")
    if arr.size == 0 and op == "EncodeJpeg":
        raise InvalidArgumentError(None, None, "image must have non-zero size")
    return np.ascontiguousarray(arr)


def _bytes_scalar(data: bytes) -> np.ndarray:
    out = np.empty((), dtype=object)
    out[()] = data
    return out


_MODES = {1: "L", 2: "LA", 3: "RGB", 4: "RGBA"}


@host_kernel(ops.EncodePng)
def _encode_png(node):
    level = int(node.attrs["compression"])

    def encode_png(image):
        arr = _image_array(image, "EncodePng", (1, 2, 3, 4))
        if arr.dtype == np.uint16:
            return _bytes_scalar(png16.encode(arr, level))
        im = _pil().fromarray(arr[..., 0] if arr.shape[-1] == 1 else arr,
                              _MODES[arr.shape[-1]])
        buf = io.BytesIO()
        im.save(buf, format="PNG", compress_level=6 if level < 0 else min(level, 9))
        return _bytes_scalar(buf.getvalue())
    return encode_png


@host_kernel(ops.EncodeJpegVariableQuality)
def _encode_jpeg_variable_quality(node):
    def encode(image, quality):
        arr = _image_array(image, "EncodeJpeg", (1, 3))
        q = int(quality)
        if not 0 <= q <= 100:
            raise InvalidArgumentError(None, None, f"quality must be in [0,100], got {q}")
        im = _pil().fromarray(arr[..., 0] if arr.shape[-1] == 1 else arr,
                              "L" if arr.shape[-1] == 1 else "RGB")
        buf = io.BytesIO()
        im.save(buf, format="JPEG", quality=q)
        return _bytes_scalar(buf.getvalue())
    return encode


@host_kernel(ops.EncodeJpeg)
def _encode_jpeg(node):
    a = node.attrs
    fmt = a["format"]

    def encode_jpeg(image):
        arr = _image_array(image, "EncodeJpeg", (1, 3))
        if fmt == "grayscale" and arr.shape[-1] != 1 or fmt == "rgb" and arr.shape[-1] != 3:
            raise InvalidArgumentError(None, None, f"format {fmt!r} does not match "
                                                   f"{arr.shape[-1]} channels")
        im = _pil().fromarray(arr[..., 0] if arr.shape[-1] == 1 else arr,
                              "L" if arr.shape[-1] == 1 else "RGB")
        dpi = (a["x_density"], a["y_density"])
        if a["density_unit"] == "cm":  # Pillow takes dots per inch
            dpi = (dpi[0] * 2.54, dpi[1] * 2.54)
        buf = io.BytesIO()
        im.save(buf, format="JPEG", quality=int(a["quality"]),
                progressive=bool(a["progressive"]), optimize=bool(a["optimize_size"]),
                subsampling=2 if a["chroma_downsampling"] else 0, dpi=dpi)
        return _bytes_scalar(buf.getvalue())
    return encode_jpeg
