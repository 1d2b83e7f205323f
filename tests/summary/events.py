"""Helpers reading event files the way TensorBoard does (its own loaders), for the tests."""

from __future__ import annotations

import glob
import os
import struct
import zlib

import numpy as np
from tensorboard.backend.event_processing import event_accumulator
from tensorboard.backend.event_processing.event_file_loader import RawEventFileLoader
from tensorboard.compat.proto import event_pb2
from tensorboard.util import tensor_util

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(__file__)), "fixtures", "tensorboard")


def event_files(logdir: str) -> list[str]:
    return sorted(glob.glob(os.path.join(logdir, "events.out.tfevents.*")))


def raw_events(path: str) -> list[event_pb2.Event]:
    """Every Event of one file, as written (no TensorBoard data migration)."""
    return [event_pb2.Event.FromString(r) for r in RawEventFileLoader(path).Load()]


def accumulate(logdir: str) -> event_accumulator.EventAccumulator:
    """TensorBoard's EventAccumulator over `logdir`, loaded (keeps every event)."""
    acc = event_accumulator.EventAccumulator(logdir, size_guidance={
        event_accumulator.TENSORS: 0, event_accumulator.GRAPH: 1,
        event_accumulator.HISTOGRAMS: 0, event_accumulator.IMAGES: 0,
        event_accumulator.SCALARS: 0, event_accumulator.AUDIO: 0})
    acc.Reload()
    return acc


def summary_structure(path: str) -> dict:
    """tag -> (plugin name, dtype, shape) of the tensor summaries in one event file."""
    out = {}
    for e in raw_events(path):
        for v in e.summary.value:
            if v.HasField("tensor") and v.tag not in out:  # plugin metadata: first value
                a = tensor_util.make_ndarray(v.tensor)
                out[v.tag] = (v.metadata.plugin_data.plugin_name, a.dtype.kind, a.shape)
    return out


def decode_png(data: bytes) -> np.ndarray:
    """A small PNG reader (8-bit, non-interlaced, any row filter) for checking pixels."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, header = 8, b"", None
    while pos < len(data):
        (length,), kind = struct.unpack(">I", data[pos:pos + 4]), data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, color, _, _, interlace = header
    assert depth == 8 and interlace == 0
    channels = {0: 1, 4: 2, 2: 3, 6: 4}[color]
    raw = zlib.decompress(idat)
    stride = width * channels
    out = np.zeros((height, stride), np.int32)
    prev = np.zeros(stride, np.int32)
    for y in range(height):
        f = raw[y * (stride + 1)]
        row = np.frombuffer(raw, np.uint8, stride, y * (stride + 1) + 1).astype(np.int32)
        cur = np.zeros(stride, np.int32)
        for x in range(stride):
            a = cur[x - channels] if x >= channels else 0
            b = prev[x]
            c = prev[x - channels] if x >= channels else 0
            pred = {0: 0, 1: a, 2: b, 3: (a + b) // 2}.get(f)
            if f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
            cur[x] = (row[x] + pred) & 0xFF
        out[y], prev = cur, cur
    return out.reshape(height, width, channels).astype(np.uint8)
