"""DecodeProtoV2 / EncodeProto over a whole batch of messages in numba loops, for requests
whose fields are all scalar numbers (the varint and fixed-size kinds): what a Python loop
per varint (kernels/proto_wire.py, ~1 us a value) costs 80-120x TensorFlow's time for.

Decoding reads the concatenated messages once, storing each field's values in message order
as raw 64-bit words (a varint's value, a fixed field's bits; a message's values of a field
are contiguous); the caller lays them out per message and converts them to the field's type
with NumPy (proto_wire._convert_varints).
Anything out of the ordinary (a malformed message, a group) makes the scan return `BAIL`, and
the caller then runs the reference reader (kernels/proto_codec.py), which gives TF's error or
value. Encoding writes each message's fields from words prepared the same way. `kernels()` is
None without numba: the caller then uses the reference."""

from __future__ import annotations

import numpy as np

from ndflow.kernels.build_once import built_once

OK, BAIL = 0, 1
# How a field's values are written: a varint, or 4 or 8 little-endian bytes.
VARINT_KIND, FIXED4_KIND, FIXED8_KIND = 0, 4, 8

# numba helpers as module globals, not closure cells (numba's disk cache refuses closures)
read_varint = skip = keep = varint_size = write_varint = put = None


def _build():
    try:
        from numba import njit  # noqa: PLC0415 - loads with the first such op, not ndflow
    except ImportError:
        return None
    global read_varint, skip, keep, varint_size, write_varint, put

    @njit(cache=True, inline="always")
    def read_varint(buf, pos, end):
        """(value, new position); position -1 for a truncated or over-long varint."""
        result = np.uint64(0)
        shift = 0
        while True:
            if pos >= end or shift >= 70:
                return np.uint64(0), -1
            b = buf[pos]
            pos += 1
            result |= np.uint64(b & 0x7F) << np.uint64(shift)
            if b < 0x80:
                return result, pos
            shift += 7

    @njit(cache=True)
    def skip(buf, pos, end, wire):
        """The position after a field of wire type `wire`; -1: bail (groups, bad data)."""
        if wire == 0:
            return read_varint(buf, pos, end)[1]
        if wire == 1 or wire == 5:
            pos += 8 if wire == 1 else 4
            return pos if pos <= end else -1
        if wire == 2:
            n, pos = read_varint(buf, pos, end)
            if pos < 0 or n > np.uint64(end - pos):
                return -1
            return pos + np.int64(n)
        return -1

    @njit(cache=True, inline="always")
    def keep(m, u, v, repeated, filled, first, cursor, words):
        """A plain value v of field u in message m: appended (repeated) or its one."""
        if repeated[u] or filled[m, u] == 0:
            words[u, cursor[u]] = v
            cursor[u] += 1
            filled[m, u] += 1
        else:
            words[u, first[m, u]] = v

    @njit(cache=True)
    def decode(buf, starts, lens, numbers, kinds, repeated, counts, filled, first, words):
        """One pass over the messages: of each requested field u, counts[m, u] (TF's
        sizes), filled[m, u] (values kept) and the kept values' words at
        words[u, first[m, u]:][:filled[m, u]] (each field's in message order). kinds[u]:
        VARINT_KIND / FIXED4_KIND / FIXED8_KIND. Returns OK or BAIL."""
        nf = numbers.shape[0]
        cursor = np.zeros(nf, np.int64)
        for m in range(starts.shape[0]):
            pos = starts[m]
            end = pos + lens[m]
            for u in range(nf):
                first[m, u] = cursor[u]
            while pos < end:
                tag, pos = read_varint(buf, pos, end)
                if pos < 0 or tag == 0 or tag > np.uint64(0xFFFFFFFF) or \
                        (tag & np.uint64(7)) == np.uint64(4):
                    return BAIL
                number = np.int64(tag >> np.uint64(3))
                wtype = np.int64(tag & np.uint64(7))
                u = -1
                for j in range(nf):
                    if numbers[j] == number:
                        u = j
                        break
                if u < 0:
                    pos = skip(buf, pos, end, wtype)
                    if pos < 0:
                        return BAIL
                    continue
                kind = kinds[u]
                schema = 0 if kind == VARINT_KIND else (5 if kind == FIXED4_KIND else 1)
                if wtype == 2:  # a packed run
                    n, pos = read_varint(buf, pos, end)
                    if pos < 0 or n > np.uint64(end - pos):
                        return BAIL
                    run_end = pos + np.int64(n)
                    if kind != VARINT_KIND and (run_end - pos) % kind:
                        return BAIL
                    if run_end > pos and kind == VARINT_KIND and buf[run_end - 1] & 0x80:
                        return BAIL
                    got = 0
                    while pos < run_end:
                        if kind == VARINT_KIND:
                            v, pos = read_varint(buf, pos, run_end)
                            if pos < 0:
                                return BAIL
                        else:
                            v = np.uint64(0)
                            for k in range(kind):
                                v |= np.uint64(buf[pos + k]) << np.uint64(8 * k)
                            pos += kind
                        got += 1
                        if repeated[u]:
                            keep(m, u, v, repeated, filled, first, cursor, words)
                        elif filled[m, u]:  # TF keeps a packed value only after a plain one
                            words[u, first[m, u]] = v
                    if repeated[u]:
                        counts[m, u] += got
                    else:
                        counts[m, u] = min(1, counts[m, u] + got)
                    pos = run_end
                elif wtype != schema:
                    pos = skip(buf, pos, end, wtype)
                    if pos < 0:
                        return BAIL
                else:
                    if kind == VARINT_KIND:
                        v, pos = read_varint(buf, pos, end)
                        if pos < 0:
                            return BAIL
                    else:
                        if pos + kind > end:
                            return BAIL
                        v = np.uint64(0)
                        for k in range(kind):
                            v |= np.uint64(buf[pos + k]) << np.uint64(8 * k)
                        pos += kind
                    keep(m, u, v, repeated, filled, first, cursor, words)
                    counts[m, u] = counts[m, u] + 1 if repeated[u] else 1
        return OK

    @njit(cache=True, inline="always")
    def varint_size(v):
        n = 1
        while v >= np.uint64(0x80):
            v >>= np.uint64(7)
            n += 1
        return n

    @njit(cache=True, inline="always")
    def write_varint(buf, pos, v):
        while v >= np.uint64(0x80):
            buf[pos] = np.uint8((v & np.uint64(0x7F)) | np.uint64(0x80))
            v >>= np.uint64(7)
            pos += 1
        buf[pos] = np.uint8(v)
        return pos + 1

    @njit(cache=True, inline="always")
    def put(buf, pos, v, kind, fill):
        """The position after value `v` of `kind` (a varint or `kind` little-endian bytes)
        at `pos`, written into buf with `fill`, else only measured."""
        if kind == VARINT_KIND:
            return write_varint(buf, pos, v) if fill else pos + varint_size(v)
        if fill:
            for b in range(kind):
                buf[pos + b] = np.uint8((v >> np.uint64(8 * b)) & 0xFF)
        return pos + kind

    @njit(cache=True)
    def encode(sizes, words, base, width, numbers, kinds, packed, offsets, buf, fill):
        """Message m's fields (in the order given: by field number) into
        buf[offsets[m]:offsets[m + 1]]; without `fill`, offsets[m + 1] - offsets[m] set to
        its length. Field f's values: words[base[f] + m * width[f]:][:sizes[m, f]]."""
        for m in range(sizes.shape[0]):
            pos = offsets[m]
            for f in range(numbers.shape[0]):
                n = sizes[m, f]
                if n == 0:
                    continue
                kind = kinds[f]
                first = base[f] + m * width[f]
                if packed[f]:  # a negative size: the tag and an empty run, as in TF
                    body = 0
                    for k in range(max(n, 0)):
                        body += kind if kind != VARINT_KIND else varint_size(words[first + k])
                    tag = np.uint64(numbers[f] * 8 + 2)
                    pos = put(buf, pos, tag, VARINT_KIND, fill)
                    pos = put(buf, pos, np.uint64(body), VARINT_KIND, fill)
                    for k in range(max(n, 0)):
                        pos = put(buf, pos, words[first + k], kind, fill)
                    continue
                wire = 0 if kind == VARINT_KIND else (5 if kind == FIXED4_KIND else 1)
                tag = np.uint64(numbers[f] * 8 + wire)
                for k in range(max(n, 0)):
                    pos = put(buf, pos, tag, VARINT_KIND, fill)
                    pos = put(buf, pos, words[first + k], kind, fill)
            if not fill:
                offsets[m + 1] = pos
    return decode, encode


kernels = built_once(_build)
