"""Host kernels of the tf.strings ops: NumPy object arrays of bytes in and out (numbers and
booleans as ATen tensors), with TensorFlow's semantics and error messages. Regular
expressions are RE2's in TensorFlow; Python's `re` accepts the same everyday syntax (RE2's
`\\0` rewrite, the whole match, becomes `\\g<0>`)."""

from __future__ import annotations

import re

import numpy as np
import torch

from ndflow.core import dtypes
from ndflow.core.errors import InvalidArgumentError, OutOfRangeError
from ndflow.kernels.registry import host_kernel
from ndflow.ops import arithmetic, string_ops

_WHITESPACE = b" \t\n\v\f\r"


def _map(fn, x: np.ndarray, out_dtype=object) -> np.ndarray:
    out = np.empty(x.shape, dtype=out_dtype)
    flat_in, flat_out = np.asarray(x, dtype=object).reshape(-1), out.reshape(-1)
    for i, v in enumerate(flat_in):
        flat_out[i] = fn(v)
    return out


def _host(x) -> np.ndarray:
    """A string input (object array) or a numeric one (ATen tensor) as a NumPy array."""
    if isinstance(x, torch.Tensor):
        x = x.detach().cpu()
        return (x.float() if x.dtype == torch.bfloat16 else x).numpy()
    return np.asarray(x, dtype=object)


def _tensor(arr: np.ndarray, dtype) -> torch.Tensor:
    with np.errstate(over="ignore"):  # '1e39' to float32 is inf, as strtof gives
        out = np.array(arr, dtype=dtype.np_dtype if dtype is not dtypes.bfloat16
                       else np.float32)
    return torch.from_numpy(out).to(dtype.torch_dtype)


@host_kernel(string_ops.StringJoin)
def _string_join(node):
    sep = node.attrs["separator"].encode() if isinstance(node.attrs["separator"], str) \
        else node.attrs["separator"]

    def string_join(*xs):
        shapes = [list(np.shape(x)) for x in xs if np.ndim(x)]
        for other in shapes[1:]:  # TF joins scalars with tensors of one shape, no broadcast
            if other != shapes[0]:
                raise InvalidArgumentError(None, None, f"Input shapes do not match: "
                                           f"{shapes[0]} vs. {other}")
        arrays = np.broadcast_arrays(*[np.asarray(x, dtype=object) for x in xs])
        out = np.empty(arrays[0].shape, dtype=object)
        for idx in np.ndindex(out.shape):
            out[idx] = sep.join(a[idx] for a in arrays)
        return out
    return string_join


@host_kernel(string_ops.StringLength)
def _string_length(node):
    utf8 = node.attrs["unit"] == "UTF8_CHAR"

    def length(x):
        return torch.from_numpy(_map(lambda v: len(v.decode("utf-8", "replace")) if utf8
                                     else len(v), x, np.int32))
    return length


def _case(upper: bool):
    def factory(node):
        unicode = node.attrs["encoding"].lower().replace("-", "") == "utf8"

        def convert(v: bytes) -> bytes:
            if unicode:
                text = v.decode("utf-8")
                return (text.upper() if upper else text.lower()).encode("utf-8")
            return v.upper() if upper else v.lower()  # bytes: ASCII letters only, as TF
        return lambda x: _map(convert, x)
    return factory


host_kernel(string_ops.StringLower)(_case(False))
host_kernel(string_ops.StringUpper)(_case(True))


@host_kernel(string_ops.StringStrip)
def _string_strip(node):
    return lambda x: _map(lambda v: v.strip(_WHITESPACE), x)


class _Regex:
    """A pattern as RE2 runs it on TF's strings: on UTF-8 text, characters (code points) are
    what `.` and classes such as `[^a-z¿]` match; a string that is not valid UTF-8 is matched
    byte by byte."""

    __slots__ = ("text", "raw", "groups")

    def __init__(self, text: str):
        self.text, self.raw = re.compile(text), re.compile(text.encode("utf-8"))
        self.groups = self.text.groups

    def on(self, v: bytes):
        """(compiled pattern, the value as it is matched, decoded?) for `v`."""
        try:
            return self.text, v.decode("utf-8"), True
        except UnicodeDecodeError:
            return self.raw, v, False


def _compile(pattern, op: str) -> _Regex:
    text = pattern.decode() if isinstance(pattern, bytes) else str(pattern)
    try:
        return _Regex(text)
    except re.error as e:
        raise InvalidArgumentError(None, None, f"Invalid pattern: {text}, error: {e}") from None


def _full_match(rx: _Regex):
    def full_match(v: bytes) -> bool:
        compiled, value, _ = rx.on(v)
        return compiled.fullmatch(value) is not None
    return lambda x: torch.from_numpy(_map(full_match, x, bool))


@host_kernel(string_ops.StaticRegexFullMatch)
def _static_full_match(node):
    return _full_match(_compile(node.attrs["pattern"], "StaticRegexFullMatch"))


@host_kernel(string_ops.RegexFullMatch)
def _regex_full_match(node):
    return lambda x, pattern: _full_match(_compile(np.asarray(pattern).item(),
                                                   "RegexFullMatch"))(x)


def _rewrite(rewrite) -> list | None:
    """RE2's rewrite string as pieces: bytes literals and ints (group numbers); `\\0`..`\\9`
    name groups, `\\\\` is a backslash, any other escape is an error (as RE2)."""
    text = rewrite if isinstance(rewrite, bytes) else str(rewrite).encode("utf-8")
    pieces, lit, i = [], bytearray(), 0
    while i < len(text):
        c = text[i:i + 1]
        if c == b"\\":
            nxt = text[i + 1:i + 2]
            if nxt.isdigit():
                pieces += [bytes(lit), int(nxt)]
                lit = bytearray()
            elif nxt == b"\\":
                lit += b"\\"
            else:  # RE2 logs "invalid rewrite pattern" and the op outputs ''
                return None
            i += 2
            continue
        lit += c
        i += 1
    return pieces + [bytes(lit)]


def _sub(regex: _Regex, pieces: list, v: bytes, replace_global: bool) -> bytes:
    """RE2's GlobalReplace/Replace: unlike Python's re.sub, an empty match right where the
    previous match ended is skipped (`'aaa'` with `a*` -> one replacement)."""
    rx, value, decoded = regex.on(v)
    if pieces is None:  # an invalid rewrite: RE2's Replace gives '' where anything matched
        return v if rx.search(value) is None else b""
    if decoded:
        pieces = [q.decode("utf-8", "surrogateescape") if isinstance(q, bytes) else q
                  for q in pieces]
        out = _sub_in(rx, pieces, value, replace_global, "", lambda text, b: 1)
        return out.encode("utf-8", "surrogateescape")
    return _sub_in(rx, pieces, value, replace_global, b"", _utf8_step)


def _utf8_step(v: bytes, b: int) -> int:
    """Bytes of the (possibly broken) UTF-8 character at `b`."""
    step = 1
    while b + step < len(v) and (v[b + step] & 0xC0) == 0x80:
        step += 1
    return step


def _sub_in(rx, pieces: list, v, replace_global: bool, empty, char_len):
    out, p, last, n = [], 0, -1, len(v)
    while p <= n:
        m = rx.search(v, p)
        if m is None:
            break
        b, e = m.span()
        out.append(v[p:b])
        if b == e == last:  # copy one character and search again after it
            step = char_len(v, b)
            out.append(v[b:b + step])
            p = b + step
            continue
        out += [piece if isinstance(piece, (bytes, str)) else (m.group(piece) or empty)
                for piece in pieces]
        p = last = e
        if not replace_global:
            break
    out.append(v[p:])
    return empty.join(out)


def _replace(rx, pieces: list | None, replace_global: bool):
    if max([q for q in pieces or () if isinstance(q, int)], default=0) > rx.groups:
        return lambda x: x  # RE2 refuses a rewrite naming a missing group: input unchanged
    return lambda x: _map(lambda v: _sub(rx, pieces, v, replace_global), x)


@host_kernel(string_ops.StaticRegexReplace)
def _static_regex_replace(node):
    return _replace(_compile(node.attrs["pattern"], "StaticRegexReplace"),
                    _rewrite(node.attrs["rewrite"]), node.attrs["replace_global"])


@host_kernel(string_ops.RegexReplace)
def _regex_replace(node):
    g = node.attrs["replace_global"]
    return lambda x, pattern, rewrite: _replace(
        _compile(np.asarray(pattern).item(), "RegexReplace"),
        _rewrite(np.asarray(rewrite).item()), g)(x)


@host_kernel(string_ops.StringToNumber)
def _string_to_number(node):
    out = node.attrs["out_type"]

    def parse(v: bytes):
        text = v.decode("utf-8", "replace")
        try:
            if out.is_integer:
                value = int(text.strip(), 10)
                if not out.min <= value <= out.max:
                    raise ValueError
                return value
            try:
                return float(text)
            except ValueError:  # strtod's hexadecimal floats ('0x1p3')
                return float.fromhex(text)
        except ValueError:
            raise InvalidArgumentError(None, None, "StringToNumberOp could not correctly "
                                       f"convert string: {text}") from None
    return lambda x: _tensor(_map(parse, x), out)


@host_kernel(string_ops.AsString)
def _as_string(node):
    a = node.attrs
    precision, width, fill = a["precision"], a["width"], a["fill"]
    dt = node.input_dtypes[0]
    problem = ("Fill string must be one or fewer characters" if fill and len(fill) > 1 else
               "Cannot select both scientific and shortest notation"
               if a["scientific"] and a["shortest"] else
               f"precision not supported for datatype {dt.name}"
               if precision > -1 and not dt.is_floating else None)
    if problem:  # raised when run, as TF's kernel does
        def fail(x):
            raise InvalidArgumentError(None, None, problem)
        return fail
    pad = "0" if fill == "0" else ""
    if dt.is_floating:
        kind = "e" if a["scientific"] else ("g" if a["shortest"] else "f")
        spec = f"%{pad}{width if width > -1 else ''}" + \
            (f".{precision}" if precision > -1 else "") + kind
    elif dt is dtypes.bool:
        spec = None
    elif dt is dtypes.string:
        spec = f"%{width if width > -1 else ''}s"
    else:
        spec = f"%{pad}{width if width > -1 else ''}d"

    def fmt(v):
        if spec is None:
            text = "true" if v else "false"
        elif dt is dtypes.string:
            text = spec % v.decode("utf-8", "replace")
        else:
            text = spec % (float(v) if dt.is_floating else int(v))
        if fill and fill != "0" and width > len(text):
            text = fill * (width - len(text)) + text
        return text.encode()
    return lambda x: _map(fmt, _host(x))


@host_kernel(string_ops.ReduceJoin)
def _reduce_join(node):
    keep, sep = node.attrs["keep_dims"], node.attrs["separator"]
    sep = sep.encode() if isinstance(sep, str) else sep

    def reduce_join(x, axes):
        x = np.asarray(x, dtype=object)
        rank = x.ndim
        dims = []
        for a in axes.reshape(-1).tolist() if rank else []:
            if not -rank <= int(a) < rank:
                raise OutOfRangeError(None, None, f"Invalid reduction dimension {a} for "
                                      f"input with {rank} dimension(s)")
            if int(a) % rank not in dims:
                dims.append(int(a) % rank)
        # TF joins with the last listed axis outermost and the first innermost.
        dims = dims[::-1]
        moved = np.moveaxis(x, dims, list(range(rank - len(dims), rank))) if dims else x
        lead = moved.shape[:rank - len(dims)]
        flat = moved.reshape(lead + (-1,))
        out = np.empty(lead, dtype=object)
        for idx in np.ndindex(lead):
            out[idx] = sep.join(flat[idx])
        if keep:
            out = out.reshape([1 if i in dims else d for i, d in enumerate(x.shape)])
        return out
    return reduce_join


@host_kernel(string_ops.Substr)
def _substr(node):
    utf8 = node.attrs["unit"] == "UTF8_CHAR"

    def substr(x, pos, length):
        x = np.asarray(x, dtype=object)
        p, n = _host(pos), _host(length)
        if p.shape != n.shape:
            raise InvalidArgumentError(None, None, "pos and len should have the same shape, "
                                       f"got: {list(p.shape)} vs. {list(n.shape)}")
        xs, ps, ns = np.broadcast_arrays(x, p, n)
        out = np.empty(xs.shape, dtype=object)
        for i, idx in enumerate(np.ndindex(xs.shape)):
            v = xs[idx]
            seq = v.decode("utf-8") if utf8 else v
            start, count = int(ps[idx]), int(ns[idx])
            if not -len(seq) <= start <= len(seq):
                raise InvalidArgumentError(None, None, f"pos {start} out of range for string "
                                           f"{v!r} at index {i}")
            start = start + len(seq) if start < 0 else start
            piece = seq[start:] if count < 0 else seq[start:start + count]  # < 0: the rest
            out[idx] = piece.encode("utf-8") if utf8 else piece
        return out
    return substr


def _sparse_pieces(pieces: list) -> tuple:
    """(indices, values, shape) of a SparseTensor holding each row's list of pieces."""
    counts = np.fromiter(map(len, pieces), dtype=np.int64, count=len(pieces))
    total = int(counts.sum())
    vals = np.empty(total, dtype=object)
    vals[:] = [p for parts in pieces for p in parts]
    # (row, position in row) of each piece, built in NumPy (a list per piece was slow)
    row_ids = np.repeat(np.arange(len(pieces), dtype=np.int64), counts)
    starts = np.cumsum(counts) - counts
    indices = np.stack([row_ids, np.arange(total, dtype=np.int64) - starts[row_ids]], 1)
    width = int(counts.max()) if len(counts) else 0
    return (torch.from_numpy(indices.reshape(-1, 2)), vals,
            torch.tensor([len(pieces), width], dtype=torch.int64))


@host_kernel(string_ops.StringSplitV2)
def _string_split(node):
    maxsplit = node.attrs["maxsplit"]

    def split(x, sep):
        sep = np.asarray(sep, dtype=object).item()
        rows = np.asarray(x, dtype=object).reshape(-1)
        return _sparse_pieces([v.split(None, maxsplit) if not sep else v.split(sep, maxsplit)
                               for v in rows])
    return split


@host_kernel(string_ops.StringSplit)
def _string_split_v1(node):
    skip_empty = node.attrs["skip_empty"]

    def split(x, delimiter):
        x = np.asarray(x, dtype=object)
        if x.ndim != 1:
            raise InvalidArgumentError(None, None, f"input must be a vector, got shape: "
                                       f"{list(x.shape)}")
        delimiter = np.asarray(delimiter, dtype=object)
        if delimiter.ndim != 0:
            raise InvalidArgumentError(None, None, f"delimiter must be a scalar, got shape: "
                                       f"{list(delimiter.shape)}")
        chars = delimiter.item()
        if not chars:   # every byte on its own
            pieces = [[v[i:i + 1] for i in range(len(v))] for v in x]
        else:
            pattern = re.compile(b"[" + re.escape(chars) + b"]")
            pieces = [pattern.split(v) if v else [] for v in x]   # "" has no pieces
            if skip_empty:
                pieces = [[p for p in parts if p] for parts in pieces]
        return _sparse_pieces(pieces)
    return split


def _raw_dtype(node) -> np.dtype:
    """The element type DecodeRaw/DecodePaddedRaw read (bfloat16 as its uint16 bits), in
    the byte order asked for."""
    out = node.attrs["out_type"]
    np_dt = np.dtype(np.uint16 if out is dtypes.bfloat16 else out.np_dtype)
    return np_dt.newbyteorder("<" if node.attrs["little_endian"] else ">")


def _raw_values(joined: bytearray, shape: tuple, np_dt: np.dtype, out, n: int):
    """The joined bytes as `shape + (n,)` values of `out`."""
    data = np.frombuffer(joined, dtype=np_dt)   # a writable buffer: no second copy
    if not np_dt.isnative:
        data = data.astype(np_dt.newbyteorder("="))
    data = data.reshape(shape + (n,))
    if out is dtypes.bfloat16:
        return torch.from_numpy(data.astype(np.int16)).view(torch.bfloat16)
    return torch.from_numpy(np.ascontiguousarray(data))


@host_kernel(string_ops.DecodeRaw)
def _decode_raw(node):
    out, np_dt = node.attrs["out_type"], _raw_dtype(node)

    def decode_raw(x):
        flat = np.asarray(x, dtype=object).reshape(-1)
        size = len(flat[0]) if flat.size else 0
        lengths = list(map(len, flat))
        if lengths.count(size) != len(lengths):
            i = next(i for i, v in enumerate(lengths) if v != size)
            raise InvalidArgumentError(None, None, "DecodeRaw requires input strings to all "
                                       f"be the same size, but element {i} has size "
                                       f"{size} != {lengths[i]}")
        if size % np_dt.itemsize:
            raise InvalidArgumentError(None, None, "Input to DecodeRaw has length "
                                       f"{size} that is not a multiple of {np_dt.itemsize}, "
                                       f"the size of {out.name}")
        return _raw_values(bytearray().join(flat), np.asarray(x).shape, np_dt, out,
                           size // np_dt.itemsize)
    return decode_raw


@host_kernel(string_ops.DecodePaddedRaw)
def _decode_padded_raw(node):
    """Each string cut or zero-padded to `fixed_length` bytes, then DecodeRaw."""
    out, np_dt = node.attrs["out_type"], _raw_dtype(node)

    def decode_padded_raw(x, fixed_length):
        length = int(fixed_length)
        if length % np_dt.itemsize:
            raise InvalidArgumentError(None, None, f"fixed_length ({length}) must be a "
                                       f"multiple of the size of out_type ({np_dt.itemsize})")
        if length <= 0:
            raise InvalidArgumentError(None, None, f"fixed_length ({length}) must be greater "
                                       "than zero.")
        flat = np.asarray(x, dtype=object).reshape(-1)
        joined = bytearray().join(v[:length].ljust(length, b"\0") for v in flat)
        return _raw_values(joined, np.asarray(x).shape, np_dt, out, length // np_dt.itemsize)
    return decode_padded_raw


@host_kernel(string_ops.UnicodeDecode)
def _unicode_decode(node):
    enc, errors = node.attrs["input_encoding"], node.attrs["errors"]
    repl, control = node.attrs["replacement_char"], node.attrs["replace_control_characters"]
    splits_dt = node.attrs["Tsplits"].torch_dtype

    def decode(x):
        rows = np.asarray(x, dtype=object).reshape(-1)
        splits, chars = [0], []
        for v in rows:
            try:
                text = v.decode(enc, "strict" if errors == "strict" else errors)
            except UnicodeDecodeError:
                raise InvalidArgumentError(None, None, "Invalid formatting on input string") \
                    from None
            codes = [repl if c == "\ufffd" and errors == "replace" or
                     control and ord(c) < 0x20 else ord(c) for c in text]
            chars += codes
            splits.append(len(chars))
        return (torch.tensor(splits, dtype=splits_dt), torch.tensor(chars, dtype=torch.int32))
    return decode


@host_kernel(string_ops.UnicodeEncode)
def _unicode_encode(node):
    enc, errors = node.attrs["output_encoding"], node.attrs["errors"]
    repl = node.attrs["replacement_char"]

    def char(c: int) -> str:
        if 0 <= c <= 0x10FFFF and not 0xD800 <= c <= 0xDFFF:
            return chr(c)
        if errors == "strict":
            raise InvalidArgumentError(None, None, f"Invalid code point {c} (not a valid "
                                       "Unicode scalar value)")
        return "" if errors == "ignore" else chr(repl)

    def encode(values, splits):
        codes, bounds = values.tolist(), splits.tolist()
        out = np.empty(len(bounds) - 1, dtype=object)
        for i in range(len(bounds) - 1):
            text = "".join(char(c) for c in codes[bounds[i]:bounds[i + 1]])
            out[i] = text.encode(enc)
        return out
    return encode


@host_kernel(arithmetic.Add)
def _string_add(node):
    return lambda x, y: np.add(np.asarray(x, dtype=object), np.asarray(y, dtype=object))
