"""CPU kernels of TensorFlow's TF1 summary ops (ops/summary_v1_ops.py): each returns the
serialized `Summary` TF's kernel (core/kernels/summary_*op.cc) makes, byte for byte, with TF's
errors. Histograms use TF's default exponential buckets; images are normalized as TF's
ImageSummary and PNG-encoded; audio is 16-bit PCM WAV."""

from __future__ import annotations

import struct
import sys
import zlib

import numpy as np
import torch
from google.protobuf.message import DecodeError
from tensorboard.compat.proto import summary_pb2

from ndflow.core.errors import InvalidArgumentError
from ndflow.core.graph_def import ndarray_to_tensor_proto
from ndflow.kernels.audio_ops import encode_wav_bytes
from ndflow.kernels.registry import host_kernel
from ndflow.ops import summary_v1_ops as ops


def _invalid(message: str) -> InvalidArgumentError:
    return InvalidArgumentError(None, None, message)


def _array(x) -> np.ndarray:
    if isinstance(x, torch.Tensor):
        x = x.detach().cpu()
        return x.float().numpy() if x.dtype == torch.bfloat16 else x.numpy()
    return np.asarray(x)


def _dims(shape) -> str:
    """A shape as TF's TensorShape::DebugString: [2,3]."""
    return "[" + ",".join(map(str, shape)) + "]"


def _text(x) -> str:
    return x.decode("utf-8", "replace") if isinstance(x, bytes) else str(x)


def _scalar_tag(tags, what: str = "Tags") -> str:
    a = np.asarray(tags, dtype=object)
    if a.ndim != 0:
        raise _invalid(f"{what} must be a scalar")
    return _text(a.item())


def _filtered_rows(image: np.ndarray) -> bytes:
    """libpng's adaptive filtering of 8-bit rows: per row the filter (None, Sub, Up, Average,
    Paeth; the first on ties) whose bytes, read as signed, have the smallest absolute sum;
    the row above the first is zeros. Filters read the unfiltered rows, so all rows and
    filters are computed at once."""
    h, w, bpp = image.shape
    rows = image.reshape(h, w * bpp).astype(np.int16)
    prev = np.concatenate([np.zeros((1, w * bpp), np.int16), rows[:-1]])
    left = np.concatenate([np.zeros((h, bpp), np.int16), rows[:, :-bpp]], axis=1)
    upleft = np.concatenate([np.zeros((h, bpp), np.int16), prev[:, :-bpp]], axis=1)
    p = left + prev - upleft
    pa, pb, pc = np.abs(p - left), np.abs(p - prev), np.abs(p - upleft)
    paeth = np.where((pa <= pb) & (pa <= pc), left, np.where(pb <= pc, prev, upleft))
    filtered = (np.stack([rows, rows - left, rows - prev, rows - (left + prev) // 2,
                          rows - paeth]) & 0xFF).astype(np.uint8)
    signed = filtered.view(np.int8).astype(np.int16)
    best = np.abs(signed).sum(axis=2, dtype=np.int64).argmin(axis=0)   # first on ties
    chosen = filtered[best, np.arange(h)]
    return np.concatenate([best.astype(np.uint8)[:, None], chosen], axis=1).tobytes()


def _png(image: np.ndarray) -> bytes:
    """A [h, w, depth] uint8 image as the PNG TF's encoder (libpng) writes: adaptive filters,
    zlib level 6, memLevel 9, the filtered strategy, the zlib header's window size shrunk to the
    image's (libpng's optimize_cmf) and IDAT chunks of at most 8 KiB."""
    h, w, depth = image.shape
    raw = _filtered_rows(image)
    z = zlib.compressobj(6, zlib.DEFLATED, 15, 9, zlib.Z_FILTERED)
    data = bytearray(z.compress(raw) + z.flush())
    cinfo, half = 7, 1 << 14
    if len(raw) <= half:
        while cinfo > 0 and len(raw) <= half:
            half >>= 1
            cinfo -= 1
        data[0] = 0x08 | (cinfo << 4)
        flg = data[1] & 0xE0
        data[1] = flg + 0x1F - ((data[0] << 8) + flg) % 0x1F
    header = struct.pack(">IIBBBBB", w, h, 8, _PNG_COLOR_TYPES[depth], 0, 0, 0)
    idat = b"".join(_png_chunk(b"IDAT", bytes(data[i:i + 8192]))
                    for i in range(0, max(len(data), 1), 8192))
    return b"\x89PNG\r\n\x1a\n" + _png_chunk(b"IHDR", header) + idat + _png_chunk(b"IEND", b"")


_PNG_COLOR_TYPES = {1: 0, 3: 2, 4: 6}


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    return (struct.pack(">I", len(data)) + kind + data
            + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))


def _wav(clip: np.ndarray, rate: int) -> bytes:
    """[frames, channels] float32 audio as TF's 16-bit PCM WAV (clipped to [-1, 1], x * 32768
    rounded half away from zero)."""
    scaled = np.clip(clip, -1.0, 1.0) * np.float32(32768.0)
    rounded = np.sign(scaled) * np.floor(np.abs(scaled) + np.float32(0.5))
    return encode_wav_bytes(np.clip(rounded, -32768, 32767).astype(np.int16), rate)


def _serialized(summary: summary_pb2.Summary) -> np.ndarray:
    return np.array(summary.SerializeToString(), dtype=object)


def _default_bucket_limits() -> np.ndarray:
    """TF's histogram bucket limits: +-1e-12 * 1.1**k below 1e20, then +-DBL_MAX, and 0."""
    pos, v = [], 1.0e-12
    while v < 1.0e20:
        pos.append(v)
        v *= 1.1
    pos.append(sys.float_info.max)
    return np.array([-x for x in reversed(pos)] + [0.0] + pos)


BUCKET_LIMITS = _default_bucket_limits()


def histogram_proto(values) -> summary_pb2.HistogramProto:
    """TF's Histogram::EncodeToProto of finite `values` (runs of empty buckets collapse into
    their last one); sums accumulate in order, in double, as TF's Add."""
    v = np.asarray(values, np.float64).reshape(-1)
    hist = summary_pb2.HistogramProto()
    counts = np.bincount(np.searchsorted(BUCKET_LIMITS, v, side="right"),
                         minlength=len(BUCKET_LIMITS))[:len(BUCKET_LIMITS)]
    hist.min = float(v.min()) if v.size else BUCKET_LIMITS[-1]
    hist.max = float(v.max()) if v.size else -sys.float_info.max
    hist.num = float(v.size)
    hist.sum = float(np.cumsum(v)[-1]) if v.size else 0.0
    hist.sum_squares = float(np.cumsum(v * v)[-1]) if v.size else 0.0
    i, n = 0, len(counts)
    while i < n:
        end, count = BUCKET_LIMITS[i], counts[i]
        i += 1
        if count <= 0:
            while i < n and counts[i] <= 0:
                end, count = BUCKET_LIMITS[i], counts[i]
                i += 1
        hist.bucket_limit.append(float(end))
        hist.bucket.append(float(count))
    return hist


@host_kernel(ops.ScalarSummary)
def _scalar_summary(node):
    def run(tags, values):
        tags = np.asarray(tags, dtype=object)
        values = _array(values).astype(np.float32)
        if tags.shape != values.shape:
            single = f" (tag '{_text(tags.item())}')" if tags.ndim == 0 else ""
            raise _invalid(f"tags and values are not the same shape: {_dims(tags.shape)} != "
                           f"{_dims(values.shape)}{single}")
        return _serialized(summary_pb2.Summary(value=[
            summary_pb2.Summary.Value(tag=_text(t), simple_value=float(v))
            for t, v in zip(tags.reshape(-1), values.reshape(-1))]))
    return run


@host_kernel(ops.HistogramSummary)
def _histogram_summary(node):
    def run(tag, values):
        v = _array(values).astype(np.float64)
        if np.isnan(v).any():
            raise _invalid(f"Nan in summary histogram for: {node.name}")
        if np.isinf(v).any():
            raise _invalid(f"Infinity in Histogram for: {node.name}")
        return _serialized(summary_pb2.Summary(value=[summary_pb2.Summary.Value(
            tag=_text(np.asarray(tag, dtype=object).reshape(-1)[0]),
            histo=histogram_proto(v))]))
    return run


def _normalize(image: np.ndarray, bad_color: np.ndarray) -> np.ndarray:
    """TF's NormalizeFloatImage of one [hw, depth] image: the affine map, in the image's own
    float type, of its finite pixels to uint8 (all >= 0: the largest to 255; else 0 to 128
    and the largest magnitude to 1 or 255); pixels with a non-finite channel get
    `bad_color`."""
    if image.shape[0] == 0:
        return np.empty(image.shape, np.uint8)
    finite = np.isfinite(image).all(axis=1)
    every = bool(finite.all())
    good = image if every else image[finite]
    lo = float(good.min()) if good.size else float("inf")
    hi = float(good.max()) if good.size else float("-inf")
    dt = image.dtype.type
    if lo < 0:
        top = max(abs(lo), abs(hi))
        scale, offset = dt(0.0 if top < 1e-6 else np.float32(127.0) / np.float32(top)), dt(128)
    else:
        scale, offset = dt(0.0 if hi < 1e-6 else np.float32(255.0) / np.float32(hi)), dt(0)
    mapped = good * scale + offset
    np.clip(mapped, 0, 255, out=mapped)   # in range already; guards the uint8 cast
    if every:
        return mapped.astype(np.uint8)
    out = np.empty(image.shape, np.uint8)
    out[finite] = mapped.astype(np.uint8)
    out[~finite] = bad_color
    return out


@host_kernel(ops.ImageSummary)
def _image_summary(node):
    max_images = int(node.attrs["max_images"])
    bad_color = np.asarray(node.attrs.get("bad_color", ops.ImageSummary.attrs["bad_color"]
                                          .default), np.uint8).reshape(-1)

    def run(tag, tensor):
        base = _scalar_tag(tag, "Tags")
        images = _array(tensor)
        if images.ndim != 4 or images.shape[-1] not in (1, 3, 4):
            raise _invalid("Tensor must be 4-D with last dim 1, 3, or 4, not "
                           + _dims(images.shape))
        batch, h, w, depth = images.shape
        if images.dtype != np.uint8 and bad_color.size < depth:
            raise _invalid(f"expected depth <= bad_color.size, got depth = {depth}, "
                           f"bad_color.size = {bad_color.size}")
        summary = summary_pb2.Summary()
        for i in range(min(max_images, batch)):
            img = images[i].reshape(h * w, depth)
            if images.dtype != np.uint8:
                img = _normalize(img, bad_color[:depth])
            summary.value.append(summary_pb2.Summary.Value(
                tag=f"{base}/image" if max_images == 1 else f"{base}/image/{i}",
                image=summary_pb2.Summary.Image(
                    height=h, width=w, colorspace=depth,
                    encoded_image_string=_png(img.reshape(h, w, depth)))))
        return _serialized(summary)
    return run


def _audio(node, tag, tensor, sample_rate: float, max_outputs: int):
    base = _scalar_tag(tag, "Tag")
    audio = _array(tensor).astype(np.float32)
    if audio.ndim not in (2, 3):
        raise _invalid(f"Tensor must be 3-D or 2-D, got: {_dims(audio.shape)}")
    if not sample_rate > 0.0:
        raise _invalid("sample_rate must be > 0")
    batch, frames = audio.shape[:2]
    channels = 1 if audio.ndim == 2 else audio.shape[2]
    audio = audio.reshape(batch, frames, channels)
    rate = max(int(np.rint(np.float32(sample_rate))), 1)   # lrintf; 0 becomes 1
    summary = summary_pb2.Summary()
    for i in range(min(max_outputs, batch)):
        summary.value.append(summary_pb2.Summary.Value(
            tag=f"{base}/audio/{i}" if max_outputs > 1 else f"{base}/audio",
            audio=summary_pb2.Summary.Audio(
                sample_rate=sample_rate, num_channels=channels, length_frames=frames,
                content_type="audio/wav",
                encoded_audio_string=_wav(audio[i], rate))))
    return _serialized(summary)


@host_kernel(ops.AudioSummaryV2)
def _audio_summary_v2(node):
    max_outputs = int(node.attrs["max_outputs"])

    def run(tag, tensor, sample_rate):
        rate = _array(sample_rate)
        if rate.size != 1:
            raise _invalid("sample_rate must be rank-0 or contain a single value")
        return _audio(node, tag, tensor, float(np.float32(rate.reshape(-1)[0])), max_outputs)
    return run


@host_kernel(ops.AudioSummary)
def _audio_summary(node):
    max_outputs, rate = int(node.attrs["max_outputs"]), float(node.attrs["sample_rate"])
    return lambda tag, tensor: _audio(node, tag, tensor, rate, max_outputs)


@host_kernel(ops.TensorSummaryV2)
def _tensor_summary_v2(node):
    dtype = node.input_dtypes[1] if node.input_dtypes else None

    def run(tag, tensor, serialized_summary_metadata):
        base = _scalar_tag(tag, "tag")
        md = np.asarray(serialized_summary_metadata, dtype=object)
        if md.ndim != 0:
            raise _invalid("serialized_summary_metadata must be a scalar")
        value = summary_pb2.Summary.Value(tag=base)
        # strings as string_val, the rest as tensor_content (TF's AsProtoField/Content)
        value.tensor.CopyFrom(ndarray_to_tensor_proto(_array(tensor), dtype))
        value.metadata.SetInParent()
        value.metadata.ParseFromString(md.item())
        return _serialized(summary_pb2.Summary(value=[value]))
    return run


@host_kernel(ops.MergeSummary)
def _merge_summary(node):
    def run(*inputs):
        merged, seen = summary_pb2.Summary(), set()
        for blobs in inputs:
            for blob in np.asarray(blobs, dtype=object).reshape(-1):
                try:
                    summary = summary_pb2.Summary.FromString(blob)
                except DecodeError:
                    raise _invalid("Could not parse one of the summary inputs") from None
                for v in summary.value:
                    # TensorSummary values may have no tag: never duplicates
                    if v.tag and v.tag in seen:
                        raise _invalid(f"Duplicate tag {v.tag} found in summary inputs ")
                    seen.add(v.tag)
                    merged.value.append(v)
        return _serialized(merged)
    return run
