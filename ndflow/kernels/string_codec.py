"""Kernels of EncodeBase64/DecodeBase64, DecodeCSV and UnsortedSegmentJoin on host object
arrays of bytes, with TensorFlow's error messages."""

from __future__ import annotations

import base64
import binascii

import numpy as np
import torch

from ndflow.core import dtypes
from ndflow.core.errors import InvalidArgumentError
from ndflow.kernels.registry import host_kernel
from ndflow.ops import string_codec_ops as ops


def _map(fn, x) -> np.ndarray:
    x = np.asarray(x, dtype=object)
    out = np.empty(x.shape, dtype=object)
    for idx in np.ndindex(x.shape):
        out[idx] = fn(x[idx])
    return out


@host_kernel(ops.EncodeBase64)
def _encode_base64(node):
    pad = node.attrs["pad"]
    return lambda x: _map(lambda v: base64.urlsafe_b64encode(v) if pad else
                          base64.urlsafe_b64encode(v).rstrip(b"="), x)


def _decode_one(v: bytes) -> bytes:
    body = v.rstrip(b"=")
    if len(body) % 4 == 1:
        raise InvalidArgumentError(None, None, "Base64 string length cannot be 1 modulo 4.")
    try:
        return base64.b64decode(body + b"=" * (-len(body) % 4), altchars=b"-_", validate=True)
    except (binascii.Error, ValueError):
        raise InvalidArgumentError(None, None, "Invalid character found in base64.") from None


@host_kernel(ops.DecodeBase64)
def _decode_base64(node):
    return lambda x: _map(_decode_one, x)


def _fields(record: bytes, delim: bytes, quotes: bool, row: int) -> list:
    """A CSV record's fields, TF's rules: a quoted field may hold delimiters and `""`."""
    if not quotes:
        return record.split(delim)
    out, i, n = [], 0, len(record)
    while True:
        if i < n and record[i:i + 1] == b'"':
            buf, i = bytearray(), i + 1
            while True:
                if i >= n:
                    raise InvalidArgumentError(None, None, "Quoted field has to end with quote "
                                               f"followed by delim or end, in record {row}")
                if record[i:i + 1] == b'"':
                    if record[i + 1:i + 2] == b'"':
                        buf += b'"'
                        i += 2
                        continue
                    i += 1
                    break
                buf += record[i:i + 1]
                i += 1
            if i < n and record[i:i + len(delim)] != delim:
                raise InvalidArgumentError(None, None, "Quoted field has to end with quote "
                                           f"followed by delim or end, in record {row}")
            out.append(bytes(buf))
        else:
            end = record.find(delim, i)
            field = record[i:] if end < 0 else record[i:end]
            if b'"' in field or b"\n" in field or b"\r" in field:
                raise InvalidArgumentError(None, None,
                                           "Unquoted fields cannot have quotes/CRLFs inside")
            out.append(field)
            i = n if end < 0 else end
        if i >= n:
            return out
        i += len(delim)
        if i >= n:
            return out + [b""]


def _parse(text: bytes, dtype, col: int, row: int):
    s = text.decode("utf-8", "replace")
    try:
        if dtype.is_integer:
            value = int(s, 10)
            if not dtype.min <= value <= dtype.max:
                raise ValueError
            return value
        return float(s)
    except ValueError:
        raise InvalidArgumentError(None, None, f"Field {col} in record {row} is not a valid "
                                   f"{dtype.name}: {s}") from None


@host_kernel(ops.DecodeCSV)
def _decode_csv(node):
    a = node.attrs
    delim = a["field_delim"].encode() if isinstance(a["field_delim"], str) else a["field_delim"]
    na = a["na_value"].encode() if isinstance(a["na_value"], str) else a["na_value"]
    select, types = list(a["select_cols"]), list(a["OUT_TYPE"])

    def decode_csv(records, *defaults):
        recs = np.asarray(records, dtype=object)
        flat = recs.reshape(-1)
        cols = [[] for _ in types]
        default_values = [np.asarray(d.cpu().numpy() if isinstance(d, torch.Tensor) else d,
                                     dtype=object).reshape(-1) for d in defaults]
        for row, record in enumerate(flat):
            fields = _fields(record, delim, a["use_quote_delim"], row)
            if select:
                if select[-1] >= len(fields):
                    raise InvalidArgumentError(None, None, f"Expect {len(types)} fields but "
                                               f"have {len(fields)} in record {row}")
                fields = [fields[c] for c in select]
            elif len(fields) != len(types):
                raise InvalidArgumentError(None, None, f"Expect {len(types)} fields but have "
                                           f"{len(fields)} in record {row}")
            for col, (field, dtype) in enumerate(zip(fields, types)):
                if field == b"" or (na and field == na):
                    if default_values[col].size == 0:
                        raise InvalidArgumentError(None, None, f"Field {col} is required but "
                                                   f"missing in record {row}!")
                    cols[col].append(default_values[col][0])
                else:
                    cols[col].append(field if dtype is dtypes.string
                                     else _parse(field, dtype, col, row))
        outs = []
        for values, dtype in zip(cols, types):
            if dtype is dtypes.string:
                arr = np.empty(len(values), dtype=object)
                arr[:] = values
                outs.append(arr.reshape(recs.shape))
            else:
                arr = np.asarray(values, dtype=dtype.np_dtype).reshape(recs.shape)
                outs.append(torch.from_numpy(arr.copy()))
        return outs[0] if len(outs) == 1 else tuple(outs)
    return decode_csv


@host_kernel(ops.UnsortedSegmentJoin)
def _unsorted_segment_join(node):
    sep = node.attrs["separator"]
    sep = sep.encode() if isinstance(sep, str) else sep

    def segment_join(x, ids, num):
        x = np.asarray(x, dtype=object)
        ids, n = ids.cpu().numpy(), int(num.cpu().item())
        if x.shape[:ids.ndim] != ids.shape:
            raise InvalidArgumentError(None, None, "segment_ids.shape = "
                                       f"{list(ids.shape)} does not match inputs.shape = "
                                       f"{list(x.shape)}")
        if ids.size and (ids.min() < 0 or ids.max() >= n):
            raise InvalidArgumentError(None, None, "segment_ids are not allowed to exceed "
                                       "num_segments or to have negative values.")
        inner = x.shape[ids.ndim:]
        rows = x.reshape((-1,) + inner)
        parts: list = [[] for _ in range(n)]
        for i, seg in enumerate(ids.reshape(-1).tolist()):
            parts[seg].append(i)
        out = np.empty((n,) + inner, dtype=object)
        for seg in range(n):
            for idx in np.ndindex(inner):
                out[(seg,) + idx] = sep.join(rows[(i,) + idx] for i in parts[seg])
        return out
    return segment_join
