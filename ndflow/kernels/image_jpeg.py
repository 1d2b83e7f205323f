"""JPEG decoding bit for bit as TF 2.21's libjpeg-turbo path (core/lib/jpeg/jpeg_mem.cc), on
Pillow's libjpeg-turbo: `ratio` (IDCT scaling), `dct_method` (INTEGER_FAST, TF's default, or
INTEGER_ACCURATE), `fancy_upscaling`, `channels`, a crop window, `try_recover_truncated` and
`acceptable_fraction`. Used by DecodeAndCropJpeg (and by DecodeWebP given a JPEG).

Pillow runs libjpeg with either (accurate IDCT, fancy upsampling) or, in its draft mode, (fast
IDCT, no fancy upsampling, chroma replicated), and can scale and ask for grayscale (libjpeg's
Y channel) or YCbCr output. A decode depends on the IDCT method only if some component is
decoded with the 8 x 8 IDCT (the scaled IDCTs are the same for both) and on the upsampling
only if some component is upsampled, which libjpeg-turbo's jdmaster.c decides from the
sampling factors and the scale: where one of the two does not matter, one Pillow decode is
TF's. Where both matter (4:2:0, 4:2:2 and 4:4:0 files at ratio 1, TF's default among them),
the decode is put together as libjpeg does it: Y and the chroma planes at their own
resolution (from the draft decode, whose replicated chroma is one sample in 2; for 4:2:0
with the accurate IDCT, from a YCbCr decode at scale 1/2, where libjpeg-turbo decodes chroma
with the 8 x 8 IDCT and does not upsample), then jdsample.c's fancy upsampling (h2v2: 3/4 -
1/4 both ways, biases 8 and 7; h2v1 and h1v2: biases 1 and 2; edges replicated) or
replication, and jdcolor.c's integer YCbCr -> RGB conversion: one numba pass over the window
(cached on disk; NumPy without numba).

A crop window is in output pixels (after `ratio`). TF decodes it with jpeg_crop_scanline,
which widens the window to iMCU columns (16 pixels for 4:2:0 at ratio 1) and upsamples the
chroma of that region alone, its sides taken as image edges (and plain replication where the
region's chroma is 1 sample wide); rows are as in the whole image. Here the same region's
chroma is upsampled the same way, so crops match too.

CMYK files come out of libjpeg as CMYK (Pillow inverts Adobe's, undone here) and TF converts
them: R = K C / 255 (Adobe marker) or (255 - K)(255 - C) / 255, in integers. Approximate
(TF's upsampling, Pillow's other IDCT): 4:2:2 and 4:4:0 files with INTEGER_ACCURATE where
both matter (no fancy upsampling; 4:2:2 crops' edge columns with it), and subsampled RGB or
CMYK files likewise.

Truncated data: without try_recover_truncated, decoding stops at the row where the data ran
out (found from Pillow's decoder on two differently filled canvases), which must be at least
`acceptable_fraction` of the window's rows, the rest black, as TF's. With it, the data is
decoded with an end-of-image marker after it, the recovery TF means; TF's own source manager
re-reads stale buffer bytes on the way, so its pixels for truncated data differ.
"""

from __future__ import annotations

import io

import numpy as np

from ndflow.core.errors import InvalidArgumentError
from ndflow.kernels.build_once import built_once

FAILED = "jpeg::Uncompress failed. Invalid JPEG data or crop window."
_EOI = b"\xff\xd9"
_SCALEBITS, _ONE_HALF = 16, 1 << 15


def _fail():
    raise InvalidArgumentError(None, None, FAILED)


def _fix(x: float) -> int:
    return int(x * (1 << _SCALEBITS) + 0.5)


_X = np.arange(256, dtype=np.int64) - 128
_CR_R = (_fix(1.40200) * _X + _ONE_HALF) >> _SCALEBITS
_CB_B = (_fix(1.77200) * _X + _ONE_HALF) >> _SCALEBITS
_CR_G = -_fix(0.71414) * _X
_CB_G = -_fix(0.34414) * _X + _ONE_HALF


def ycc_to_rgb(y: np.ndarray, cb: np.ndarray, cr: np.ndarray) -> np.ndarray:
    """jdcolor.c's ycc_rgb_convert (and jdmerge.c's, same tables): uint8 [..., 3]."""
    y = y.astype(np.int64)
    r = y + _CR_R[cr]
    g = y + ((_CB_G[cb] + _CR_G[cr]) >> _SCALEBITS)
    b = y + _CB_B[cb]
    return np.clip(np.stack([r, g, b], -1), 0, 255).astype(np.uint8)


def _pil():
    import PIL.Image  # noqa: PLC0415 - Pillow loads with the first image decoded
    return PIL.Image


def _open(data: bytes, mode: str | None = None, scale: int = 1, fast: bool = False):
    """A Pillow JPEG to decode as libjpeg with scale 1/`scale`, the fast IDCT without fancy
    upsampling (`fast`) or the accurate one with it, in `mode` ('L', 'YCbCr' or the file's)."""
    image = _pil()
    im = image.open(io.BytesIO(data), formats=["JPEG"])
    if mode is not None and im.mode == "RGB":
        im.draft(mode, None)
    im.decoderconfig = (scale, int(fast))
    if scale > 1:
        w, h = im.size
        im._size = ((w + scale - 1) // scale, (h + scale - 1) // scale)  # noqa: SLF001
        tile = im.tile[0]
        im.tile = [tile._replace(extents=(0, 0, *im.size))]
    return im


def _load(data: bytes, mode: str | None, scale: int, fast: bool) -> np.ndarray:
    im = _open(data, mode, scale, fast)
    im.load()
    return np.asarray(im)


class Header:
    """What libjpeg reads from a JPEG's header that the decode depends on."""

    def __init__(self, data: bytes):
        try:
            im = _pil().open(io.BytesIO(data), formats=["JPEG"])
        except Exception:  # noqa: BLE001 - any failure to read the header is TF's failure
            _fail()
        self.mode = im.mode                       # 'L', 'RGB' or 'CMYK'
        self.width, self.height = im.size
        layers = getattr(im, "layer", [])
        self.sampling = [(h, v) for _, h, v, _ in layers] or [(1, 1)]
        self.adobe = "adobe" in im.info
        ids = [i for i, *_ in layers]
        if im.mode != "RGB":
            self.ycc = False
        elif "jfif" in im.info:
            self.ycc = True
        elif self.adobe:
            self.ycc = im.info.get("adobe_transform") != 0
        else:
            self.ycc = ids != [82, 71, 66]        # 'R', 'G', 'B' ids: RGB; else YCbCr

    def dct_sizes(self, ratio: int) -> list:
        """Each component's IDCT size at scale 1/`ratio`: libjpeg-turbo's jdmaster.c, which
        scales chroma up by the IDCT rather than upsampling it where it can."""
        low = 8 // ratio
        hmax = max(h for h, _ in self.sampling)
        vmax = max(v for _, v in self.sampling)
        sizes = []
        for h, v in self.sampling:
            size = low
            while size < 8 and (hmax * low) % (h * size * 2) == 0 and \
                    (vmax * low) % (v * size * 2) == 0:
                size *= 2
            sizes.append(size)
        return sizes

    def upsampling(self, ratio: int):
        """(h, v) upsampling factors of the chroma at `ratio`: (1, 1) for none, None where
        they are not one 2 x 2, 2 x 1 or 1 x 2 for both chroma components under an
        unsubsampled Y (the cases emulated here)."""
        low = 8 // ratio
        hmax = max(h for h, _ in self.sampling)
        vmax = max(v for _, v in self.sampling)
        factors = set()
        for (h, v), size in zip(self.sampling, self.dct_sizes(ratio)):
            factors.add((hmax * low / (h * size), vmax * low / (v * size)))
        if len(self.sampling) != 3 or self.sampling[0] != (hmax, vmax) or \
                len(factors - {(1.0, 1.0)}) > 1:
            return None if len(factors) > 1 else (1, 1)
        (fh, fv), = factors - {(1.0, 1.0)} or {(1.0, 1.0)}
        return (int(fh), int(fv)) if {fh, fv} <= {1.0, 2.0} else None


def _upsample(chroma: np.ndarray, rows: np.ndarray, start: int, count: int, width: int,
              factors, fancy: bool) -> np.ndarray:
    """libjpeg's upsampling (jdsample.c) of chroma columns [start, start + count), the
    region's whole row, for output rows `rows`: int64 [len(rows), width]. Fancy: h2v2
    (3/4 - 1/4 each way, biases 8 and 7), h2v1 (biases 1 and 2), h1v2 (biases 1 and 2),
    the region's edges replicated; else replication."""
    fh, fv = factors
    c = chroma[:, start:start + count].astype(np.int64)
    near = c[rows // fv]
    if not fancy:
        return np.repeat(near, fh, axis=1)[:, :width]
    if fv == 2:
        last = c.shape[0] - 1
        even = rows % 2 == 0
        far = c[np.where(even, np.maximum(rows // 2 - 1, 0), np.minimum(rows // 2 + 1, last))]
        if fh == 1:
            return (3 * near + far + np.where(even, 1, 2)[:, None]) >> 2
        near, shift, biases = 3 * near + far, 4, (8, 7)
    else:
        shift, biases = 2, (1, 2)
    left = np.concatenate([near[:, :1], near[:, :-1]], 1)
    right = np.concatenate([near[:, 1:], near[:, -1:]], 1)
    out = np.empty((len(rows), 2 * count), np.int64)
    out[:, 0::2] = (3 * near + left + biases[0]) >> shift
    out[:, 1::2] = (3 * near + right + biases[1]) >> shift
    return out[:, :width]


def _ycc_region(lum, channel, chroma, sy, sx, y0, h, start, fh, fv, smooth, out):
    """out [h, region_w, 3] = RGB of output rows y0.. and the region of output columns
    [start, start + region_w) (one pass, as libjpeg; the region's sides are image edges
    for the upsampling): Y is lum[..., channel]; chroma sample (i, k) of Cb / Cr is
    chroma[i * sy, k * sx, 1 / 2], upsampled fh x fv (fancy where `smooth`).
    jdcolor.c's tables as arithmetic: FIX(1.402) = 91881, FIX(1.772) = 116130,
    FIX(0.71414) = 46802, FIX(0.34414) = 22554."""
    region_w = out.shape[1]
    rows = (chroma.shape[0] + sy - 1) // sy
    count = (region_w + fh - 1) // fh                   # the region's chroma columns
    first = start // fh
    sums = np.empty((2, count + 2), np.int32)           # a row's vertical sums, edges kept
    up = np.empty((2, fh * count), np.int32)            # its upsampled Cb and Cr
    vertical = fv == 2 and smooth
    shift, even_bias, odd_bias = (4, 8, 7) if fv == 2 else (2, 1, 2)
    for r in range(h):
        row = y0 + r
        i = row // fv
        far = i
        if vertical:
            far = max(i - 1, 0) if row % 2 == 0 else min(i + 1, rows - 1)
        bias = 1 if row % 2 == 0 else 2
        for p in range(2):
            for t in range(count):
                col = (first + t) * sx
                near = np.int32(chroma[i * sy, col, p + 1])
                sums[p, t + 1] = 3 * near + np.int32(chroma[far * sy, col, p + 1]) \
                    if vertical else near
            sums[p, 0] = sums[p, 1]
            sums[p, count + 1] = sums[p, count]
            if fh == 1:
                for t in range(count):                  # h1v2 (fancy) or none
                    up[p, t] = (sums[p, t + 1] + bias) >> 2 if vertical else sums[p, t + 1]
            elif smooth:                                # h2v1 / h2v2: 3/4 - 1/4 across
                for t in range(count):
                    up[p, 2 * t] = (3 * sums[p, t + 1] + sums[p, t] + even_bias) >> shift
                    up[p, 2 * t + 1] = (3 * sums[p, t + 1] + sums[p, t + 2] + odd_bias) \
                        >> shift
            else:
                for t in range(count):
                    up[p, 2 * t] = sums[p, t + 1]
                    up[p, 2 * t + 1] = sums[p, t + 1]
        for j in range(region_w):
            y = np.int32(lum[row, start + j, channel])
            cb, cr = up[0, j] - 128, up[1, j] - 128
            red = y + ((91881 * cr + 32768) >> 16)
            green = y + ((-22554 * cb + 32768 - 46802 * cr) >> 16)
            blue = y + ((116130 * cb + 32768) >> 16)
            out[r, j, 0] = min(max(red, 0), 255)
            out[r, j, 1] = min(max(green, 0), 255)
            out[r, j, 2] = min(max(blue, 0), 255)


def _build_ycc():
    try:
        import numba  # noqa: PLC0415 - compiles (or loads) with the first emulated JPEG
    except ImportError:
        return None
    return numba.njit(cache=True, nogil=True, error_model="numpy")(_ycc_region)


_ycc = built_once(_build_ycc)


def _emulate(data: bytes, header: Header, ratio: int, fast: bool, fancy: bool,
             window) -> np.ndarray:
    """A YCbCr file whose chroma is upsampled, RGB, rows and columns of `window`."""
    y0, x0, h, w = window
    factors = header.upsampling(ratio)
    fh, fv = factors
    low = 8 // ratio
    if header.dct_sizes(ratio)[1] == 8 and not fast:    # 4:2:0 at ratio 1, accurate IDCT:
        lum = _load(data, "L", ratio, False)[..., None]  # chroma unscaled at scale 1/2
        chroma, sy, sx = _load(data, "YCbCr", 2, False), 1, 1
    else:                           # fast or scaled IDCTs: libjpeg replicates the chroma
        lum = chroma = _load(data, "YCbCr", ratio, True)
        sy, sx = fv, fh
    full_w = lum.shape[1]
    if fh == 1 or (x0, w) == (0, full_w):
        start, region_w = (x0, w) if fh == 1 else (0, full_w)
    else:                           # jpeg_crop_scanline's iMCU-aligned region
        align = low * max(hh for hh, _ in header.sampling)
        start = (x0 // align) * align
        region_w = x0 + w - start
    count = -(-region_w // fh)
    width = -(-chroma.shape[1] // sx)
    # jinit_upsampler: fancy needs the scale's IDCT above 1 x 1 and, across, a chroma row
    # wider than 2 (a crop narrowing it below 2 re-initializes it with the region's width)
    smooth = fancy and low > 1 and (fh == 1 or (width > 2 and count >= 2))
    kernel_fn = _ycc()
    if kernel_fn is not None:       # the whole region (at most an iMCU wider), then the window
        out = np.empty((h, region_w, 3), np.uint8)
        kernel_fn(np.ascontiguousarray(lum), 0, np.ascontiguousarray(chroma), sy, sx, y0, h,
                  start, fh, fv, smooth, out)
        return out if region_w == w else np.ascontiguousarray(out[:, x0 - start:x0 - start + w])
    native = chroma[::sy, ::sx]
    rows = np.arange(y0, y0 + h)
    planes = [_upsample(native[..., k], rows, start // fh, count, region_w, factors, smooth)
              [:, x0 - start:x0 - start + w] for k in (1, 2)]
    return ycc_to_rgb(lum[y0:y0 + h, x0:x0 + w, 0], planes[0], planes[1])


def _cmyk_to_rgb(cmyk: np.ndarray, adobe: bool) -> np.ndarray:
    raw = 255 - cmyk.astype(np.int64)         # Pillow's CMYK;I reading, undone
    c, m, y, k = (raw[..., i] for i in range(4))
    if adobe:
        rgb = [k * c // 255, k * m // 255, k * y // 255]
    else:
        rgb = [(255 - k) * (255 - c) // 255, (255 - k) * (255 - m) // 255,
               (255 - k) * (255 - y) // 255]
    return np.stack(rgb, -1).astype(np.uint8)


def plan(header: Header, components: int, ratio: int, fancy: bool, fast: bool):
    """How to decode: ("pillow", mode, draft) for one Pillow decode, ("emulate",), or
    ("approximate", draft): one Pillow decode whose upsampling or IDCT is not TF's."""
    if components == 1 or header.mode == "L":
        return "pillow", "L", fast      # Y alone: no upsampling
    sizes = header.dct_sizes(ratio)
    factors = header.upsampling(ratio)
    if factors == (1, 1):
        return "pillow", None, fast
    eight = 8 in sizes
    if not header.ycc or factors is None:   # CMYK, RGB or unusual subsampled files
        if not eight:
            return "pillow", None, not fancy
        return ("pillow", None, fast) if fast != fancy else ("approximate", not fancy)
    fancy = fancy and ratio < 8             # libjpeg: no fancy upsampling of 1 x 1 IDCTs
    chroma_eight = sizes[1] == 8
    native = not chroma_eight or fast or (ratio == 1 and factors == (2, 2))
    if not fancy and (fast or not eight):
        return "pillow", None, True         # fast IDCT (or none at 8 x 8), replication
    if native:
        return ("emulate",)
    return "approximate", not fancy         # the upsampling TF's, the IDCT not


def _decode(data: bytes, header: Header, components: int, ratio: int, fancy: bool,
            fast: bool, window) -> np.ndarray:
    how = plan(header, components, ratio, fancy, fast)
    y0, x0, h, w = window
    if how[0] == "emulate":
        return _emulate(data, header, ratio, fast, fancy, window)
    mode, draft = (how[1], how[2]) if how[0] == "pillow" else (None, how[1])
    arr = _load(data, mode, ratio, draft)
    if arr.ndim == 2:
        arr = arr[..., None]
    arr = arr[y0:y0 + h, x0:x0 + w]
    if header.mode == "CMYK":
        return _cmyk_to_rgb(arr, header.adobe)
    if components == 3 and arr.shape[-1] == 1:
        return np.repeat(arr, 3, axis=-1)       # libjpeg's gray -> RGB
    return np.array(arr)                        # a writable copy of Pillow's pixels


def _rows_decoded(data: bytes, header: Header, components: int, ratio: int,
                  fancy: bool) -> int:
    """The output rows libjpeg produced before truncated `data` ran out: rows Pillow's
    decoder wrote into two canvases filled differently (upsampling decides how far
    libjpeg reads ahead, so Pillow's mode with TF's fancy_upscaling decodes)."""
    image = _pil()
    mode = "L" if components == 1 or header.mode == "L" else None
    found = []
    for fill in (0, 255):
        im = _open(data, mode, ratio, not fancy)
        tile = im.tile[0]
        canvas = image.new(im.mode, im.size, (fill,) * len(im.getbands()))
        decoder = image._getdecoder(im.mode, tile.codec_name, tile.args,  # noqa: SLF001
                                    im.decoderconfig)
        decoder.setimage(canvas.im, tile.extents)
        try:
            decoder.decode(data[tile.offset:])
        finally:
            decoder.cleanup()
        found.append(np.asarray(canvas).reshape(im.size[1], -1))
    differ = (found[0] != found[1]).any(1)
    return int(differ.argmax()) if differ.any() else len(differ)


def flags(attrs) -> tuple:
    """(ratio, fancy, fast IDCT, recover, fraction) of DecodeJpeg-like attrs (TF's defaults
    where absent: DecodeImage and DecodeWebP decode JPEG files so), checked as TF checks them."""
    ratio = int(attrs.get("ratio", 1))
    if ratio not in (1, 2, 4, 8):
        raise InvalidArgumentError(None, None, f"ratio must be 1, 2, 4, or 8, got {ratio}")
    dct = attrs.get("dct_method", "")
    dct = dct.decode() if isinstance(dct, bytes) else str(dct)
    if dct not in ("", "INTEGER_FAST", "INTEGER_ACCURATE"):
        raise InvalidArgumentError(
            None, None, "dct_method must be one of {'', 'INTEGER_FAST', 'INTEGER_ACCURATE'}")
    return (ratio, bool(attrs.get("fancy_upscaling", True)), dct != "INTEGER_ACCURATE",
            bool(attrs.get("try_recover_truncated", False)),
            float(attrs.get("acceptable_fraction", 1.0)))


def _turbo(data: bytes, channels: int, ratio: int, fancy: bool, fast: bool, crop):
    """The whole image from one TurboJPEG decode (libjpeg-turbo, as TF's, with TF's settings),
    or None where that API cannot say what TF asks (a crop window smaller than the image; CMYK
    and RGB files, which TF converts itself) or meets bad data (truncated or corrupt: the
    rules below are TF's)."""
    import simplejpeg  # noqa: PLC0415 - loads with the first JPEG decoded
    try:
        h, w, color, _ = simplejpeg.decode_jpeg_header(data)
        whole = (0, 0, -(-h // ratio), -(-w // ratio))
        if color not in ("YCbCr", "Gray") or \
                crop is not None and tuple(int(v) for v in crop) != whole:
            return None
        gray = channels == 1 or (channels == 0 and color == "Gray")
        image = simplejpeg.decode_jpeg(data, "GRAY" if gray else "RGB", fastdct=fast,
                                       fastupsample=not fancy, min_height=-(-h // ratio),
                                       min_width=-(-w // ratio), min_factor=ratio)
    except ValueError:
        return None
    return image.reshape(*image.shape[:2], -1)


def decode(data: bytes, channels: int = 0, ratio: int = 1, fancy: bool = True,
           fast: bool = True, crop=None, recover: bool = False,
           fraction: float = 1.0) -> np.ndarray:
    """uint8 [h, w, c] as TF's jpeg::Uncompress gives it (`crop`: (y, x, h, w) in output
    pixels), or TF's InvalidArgumentError."""
    if not recover:
        image = _turbo(data, channels, ratio, fancy, fast, crop)
        if image is not None:
            return image
    stream = data + _EOI if recover else data
    header = Header(stream)
    components = channels or min(len(header.sampling), 3)
    if components == 1 and header.mode == "CMYK":
        _fail()                                 # libjpeg: unsupported color conversion
    out_h, out_w = -(-header.height // ratio), -(-header.width // ratio)
    window = (0, 0, out_h, out_w) if crop is None else tuple(int(v) for v in crop)
    y0, x0, h, w = window
    if w <= 0 or h <= 0 or x0 < 0 or y0 < 0 or y0 + h > out_h or x0 + w > out_w:
        _fail()
    try:
        return _decode(stream, header, components, ratio, fancy, fast, window)
    except OSError as e:
        if recover or "truncated" not in str(e):
            _fail()
    except Exception:  # noqa: BLE001 - libjpeg's errors are TF's failure
        _fail()
    # truncated: the rows decoded before the data ran out, the rest black
    try:
        done = _rows_decoded(data, header, components, ratio, fancy) - y0
        image = _decode(data + _EOI, header, components, ratio, fancy, fast, window)
    except Exception:  # noqa: BLE001
        _fail()
    if done < 0 or done / h < min(1.0, fraction):
        _fail()
    image[done:] = 0
    return image
