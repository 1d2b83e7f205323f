"""Host kernels of UnicodeDecodeWithOffsets, UnicodeTranscode (per-string Python codecs, as
the other string kernels) and UnicodeScript (a vectorised search in the ICU script runs of
unicode_script_table.py)."""

from __future__ import annotations

import codecs

import numpy as np
import torch

from ndflow.core.errors import InvalidArgumentError
from ndflow.kernels.registry import host_kernel, kernel
from ndflow.kernels.unicode_script_table import RUNS
from ndflow.ops import string_unicode_ops as ops

_PY_CODEC = {"UTF-8": "utf-8", "UTF-16-BE": "utf-16-be", "UTF-32-BE": "utf-32-be"}


def _codec(name: str) -> str:
    try:
        return codecs.lookup(_PY_CODEC.get(name, name)).name
    except LookupError:
        raise InvalidArgumentError(None, None, f"Could not create converter for input "
                                   f"encoding: {name}") from None


def decode_with_offsets(data: bytes, codec: str, errors: str, repl: int, control: bool):
    """(code points, byte start of each) of one string, bad sequences as `repl` (replace),
    dropped (ignore) or an error (strict); control characters as `repl` when asked."""
    mode = "strict" if errors == "strict" else "replace"
    decoder = codecs.getincrementaldecoder(codec)(mode)
    chars, starts, start = [], [], 0
    try:
        for i in range(len(data)):
            out = decoder.decode(data[i:i + 1], final=i == len(data) - 1)
            for k, c in enumerate(out):
                chars.append(c)
                starts.append(start if k == 0 else i)
            if out or not decoder.getstate()[0]:
                start = i + 1 if not decoder.getstate()[0] else i
        if not data:
            decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        raise InvalidArgumentError(None, None, "Invalid formatting on input string") from None
    codes, offsets = [], []
    for c, s in zip(chars, starts):
        if c == "\ufffd" and errors != "strict":
            if errors == "ignore":
                continue
            codes.append(repl)
        elif control and ord(c) < 0x20:
            codes.append(repl)
        else:
            codes.append(ord(c))
        offsets.append(s)
    return codes, offsets


@host_kernel(ops.UnicodeDecodeWithOffsets)
def _decode_with_offsets(node):
    codec, errors = _codec(node.attrs["input_encoding"]), node.attrs["errors"]
    repl, control = node.attrs["replacement_char"], node.attrs["replace_control_characters"]
    splits_dt = node.attrs["Tsplits"].torch_dtype

    def run(x):
        splits, chars, offsets = [0], [], []
        for v in np.asarray(x, dtype=object).reshape(-1):
            codes, starts = decode_with_offsets(bytes(v), codec, errors, repl, control)
            chars += codes
            offsets += starts
            splits.append(len(chars))
        return (torch.tensor(splits, dtype=splits_dt), torch.tensor(chars, dtype=torch.int32),
                torch.tensor(offsets, dtype=torch.int64))
    return run


@host_kernel(ops.UnicodeTranscode)
def _transcode(node):
    codec, errors = _codec(node.attrs["input_encoding"]), node.attrs["errors"]
    out_codec = _PY_CODEC[node.attrs["output_encoding"]]
    repl, control = node.attrs["replacement_char"], node.attrs["replace_control_characters"]
    repl_char = chr(repl) if 0 <= repl <= 0x10FFFF and not 0xD800 <= repl <= 0xDFFF else ""

    def one(v) -> bytes:
        codes, _ = decode_with_offsets(bytes(v), codec, errors, repl, control)
        return "".join(chr(c) if c != repl else repl_char for c in codes).encode(out_codec)

    def run(x):
        arr = np.asarray(x, dtype=object)
        out = np.empty(arr.shape, dtype=object)
        flat_in, flat_out = arr.reshape(-1), out.reshape(-1)
        for i, v in enumerate(flat_in):
            flat_out[i] = one(v)
        return out
    return run


def _script_runs():
    pairs = [r.split(":") for r in RUNS.split()]
    starts = np.array([int(s, 16) for s, _ in pairs], dtype=np.int64)
    codes = np.array([int(c, 16) for _, c in pairs], dtype=np.int32)
    return torch.from_numpy(starts), torch.from_numpy(codes)


_STARTS, _CODES = _script_runs()


@kernel(ops.UnicodeScript)
def _script(node):
    def run(x):
        cp = x.long().cpu()
        pos = torch.searchsorted(_STARTS, cp, right=True) - 1
        out = _CODES[pos.clamp(min=0)]
        out = torch.where((cp < 0) | (cp > 0x10FFFF), torch.full_like(out, -1), out)
        return out.to(x.device)
    return run
