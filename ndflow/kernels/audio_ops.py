"""Host kernels of the WAV ops (ndflow/ops/audio_ops.py), with TensorFlow's header checks and
messages (RIFF/WAVE/fmt/data chunks, PCM format 1, 16 bits per sample)."""

from __future__ import annotations

import struct

import numpy as np
import torch

from ndflow.core.errors import InvalidArgumentError
from ndflow.kernels.registry import host_kernel
from ndflow.ops import audio_ops


def _bad(message: str) -> InvalidArgumentError:
    return InvalidArgumentError(None, None, message)


class _Reader:
    def __init__(self, data: bytes):
        self.data, self.pos = data, 0

    def take(self, n: int) -> bytes:
        if self.pos + n > len(self.data):
            raise _bad("Data too short when trying to read string")
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out

    def expect(self, tag: bytes) -> None:
        got = self.take(4)
        if got != tag:
            raise _bad(f"Header mismatch: Expected {tag.decode()} but found "
                       f"{got.decode('latin-1')}")

    def u32(self) -> int:
        return struct.unpack("<I", self.take(4))[0]

    def u16(self) -> int:
        return struct.unpack("<H", self.take(2))[0]


def decode_wav_bytes(data: bytes) -> tuple[np.ndarray, int]:
    """(int16 samples [n, channels], sample rate) of a 16-bit PCM WAV file."""
    r = _Reader(data)
    r.expect(b"RIFF")
    r.u32()
    r.expect(b"WAVE")
    r.expect(b"fmt ")
    fmt_size = r.u32()
    if fmt_size != 16 and fmt_size != 18:
        raise _bad(f"Bad fmt chunk size for WAV: Expected 16 or 18, but got{fmt_size}")
    fmt = r.u16()
    if fmt != 1:
        raise _bad(f"Bad audio format for WAV: Expected 1 (PCM), but got{fmt}")
    channels, rate = r.u16(), r.u32()
    r.u32()            # byte rate
    r.u16()            # block align
    bits = r.u16()
    if bits != 16:
        raise _bad(f"Can only read 16-bit WAV files, but received {bits}")
    if fmt_size == 18:
        r.take(2)
    if channels == 0:
        raise _bad("Bad number of channels for WAV file: 0")
    while True:        # skip chunks up to "data"
        tag, size = r.take(4), r.u32()
        if tag == b"data":
            raw = r.take(size)
            break
        r.take(size + (size & 1))
    samples = np.frombuffer(raw[:len(raw) // (2 * channels) * 2 * channels], dtype="<i2")
    return samples.reshape(-1, channels), rate


def encode_wav_bytes(samples: np.ndarray, rate: int) -> bytes:
    n, channels = samples.shape
    data = samples.astype("<i2").tobytes()
    return (b"RIFF" + struct.pack("<I", 36 + len(data)) + b"WAVE" + b"fmt " +
            struct.pack("<IHHIIHH", 16, 1, channels, rate, rate * channels * 2, channels * 2,
                        16) + b"data" + struct.pack("<I", len(data)) + data)


@host_kernel(audio_ops.DecodeWav)
def _decode_wav(node):
    want_channels = int(node.attrs["desired_channels"])
    want_samples = int(node.attrs["desired_samples"])

    def decode(contents):
        arr = np.asarray(contents, dtype=object)
        if arr.ndim != 0:
            raise _bad(f"contents must be scalar, got shape {list(arr.shape)}")
        samples, rate = decode_wav_bytes(arr.item())
        audio = samples.astype(np.float32) / 32768.0
        n, c = audio.shape
        out_c = c if want_channels < 0 else want_channels
        out_n = n if want_samples < 0 else want_samples
        # the file's first channels; past them its last channel again (TF's rule)
        audio = audio[:, np.minimum(np.arange(out_c), c - 1)] if out_c else audio[:, :0]
        out = np.zeros((out_n, out_c), np.float32)
        out[:min(n, out_n)] = audio[:out_n]
        return torch.from_numpy(out), torch.tensor(rate, dtype=torch.int32)
    return decode


@host_kernel(audio_ops.EncodeWav)
def _encode_wav(node):  # noqa: ARG001
    def encode(audio, sample_rate):
        a = np.asarray(audio.numpy() if hasattr(audio, "numpy") else audio, np.float32)
        if a.ndim != 2:
            raise _bad(f"audio must be 2-dimensional{list(a.shape)}".replace(" ", ""))
        if not 0 < a.shape[1] < 1 << 16:
            raise _bad(f"num_channels must be in (0, 2^16), got: {a.shape[1]}")
        rate = int(np.asarray(sample_rate.numpy() if hasattr(sample_rate, "numpy")
                              else sample_rate))
        scaled = np.clip(a, -1.0, 1.0) * np.float32(32768.0)
        rounded = np.sign(scaled) * np.floor(np.abs(scaled) + np.float32(0.5))  # roundf
        out = np.empty((), dtype=object)
        out[()] = encode_wav_bytes(np.clip(rounded, -32768, 32767).astype(np.int16), rate)
        return out
    return encode
