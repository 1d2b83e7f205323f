"""`tf.strings` and `tf.io.decode_raw`: TensorFlow's string ops (StringJoin, StringLength,
StringLower/Upper, StringStrip, (Static)RegexFullMatch, (Static)RegexReplace, StringToNumber,
AsString, ReduceJoin, Substr, StringSplitV2, DecodeRaw, DecodePaddedRaw, UnicodeDecode,
UnicodeEncode) on string tensors (host object arrays of bytes; kernels in kernels/string_ops.py).

Ragged results: `tf.strings.split`, `unicode_decode` and `bytes_split` of a scalar give
TensorFlow's dense 1-D result; for higher ranks (and RaggedTensor inputs) they return
RaggedTensors, built in ragged_string_ops.py.
"""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.composite_tensor import CompositeTensor
from ndflow.core.doc_tables import attach
from ndflow.core.errors import InvalidArgumentError
from ndflow.core.scopes import name_scope
from ndflow.core.shapes import TensorShape, broadcast_shapes
from ndflow.ops import composite_dispatch, string_ops_docs
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.array_core import Reshape, reshape, size, stack
from ndflow.ops.array_fill import ones_like
from ndflow.ops.array_range import range as tf_range
from ndflow.ops.op_def import op_def


def _same(ctx):
    return [ctx.shapes[0]]


def _broadcast_all(ctx):
    out = TensorShape([])
    for s in ctx.shapes:
        out = broadcast_shapes(out, s)
    return [out]


def _join_shape(ctx):
    """StringJoin: scalars join with tensors of one common shape (TF does not broadcast)."""
    out = None
    for shape in ctx.shapes:
        if shape.rank == 0:
            continue
        if out is not None and not out.is_compatible_with(shape):
            raise InvalidArgumentError(None, None, "Input shapes do not match: "
                                       f"{out.as_list()} vs. {shape.as_list()}")
        out = shape if out is None else out.merge_with(shape)
    return [out if out is not None else TensorShape([])]


# TensorFlow marks some string ops not differentiable and registers nothing for the others.
_UNDEFINED_GRADIENT = {"StringLength", "StringLower", "StringUpper", "StringStrip",
                       "RegexFullMatch", "StaticRegexFullMatch", "StaticRegexReplace", "Substr",
                       "StringSplitV2", "UnicodeDecode", "UnicodeEncode"}


def _string_op(name, inputs=("input: string",), outputs=("output: string",), attrs=(),
               shape=_same):
    undefined = name in _UNDEFINED_GRADIENT
    return op_def(name, inputs=list(inputs), outputs=list(outputs), attrs=list(attrs),
                  shape=shape, not_differentiable=not undefined, gradient_undefined=undefined)


StringJoin = _string_op("StringJoin", ["inputs: N * string"], attrs=[
    "N: int >= 0", "separator: string = ''"], shape=_join_shape)
StringLength = _string_op("StringLength", outputs=["output: int32"],
                          attrs=["unit: {'BYTE', 'UTF8_CHAR'} = 'BYTE'"])
StringLower = _string_op("StringLower", attrs=["encoding: string = ''"])
StringUpper = _string_op("StringUpper", attrs=["encoding: string = ''"])
StringStrip = _string_op("StringStrip")
RegexFullMatch = _string_op("RegexFullMatch", ["input: string", "pattern: string"],
                            ["output: bool"])
StaticRegexFullMatch = _string_op("StaticRegexFullMatch", outputs=["output: bool"],
                                  attrs=["pattern: string"])
RegexReplace = _string_op("RegexReplace", ["input: string", "pattern: string",
                                           "rewrite: string"],
                          attrs=["replace_global: bool = true"])
StaticRegexReplace = _string_op("StaticRegexReplace", attrs=[
    "pattern: string", "rewrite: string", "replace_global: bool = true"])
StringToNumber = _string_op("StringToNumber", ["string_tensor: string"], ["output: out_type"],
                            ["out_type: {float, double, int32, int64, uint32, uint64} = DT_FLOAT"])
AsString = _string_op("AsString", ["input: T"], attrs=[
    "T: {half, bfloat16, float, double, int8, int16, int32, int64, uint8, uint16, uint32, uint64, "
    "bool, string}",
    "precision: int = -1", "scientific: bool = false", "shortest: bool = false",
    "width: int = -1", "fill: string = ''"])


def _reduce_join_shape(ctx):
    s, axes = ctx.shapes[0], ctx.value(1)
    if s.rank is None or axes is None:
        return [TensorShape(None)]
    axes = {int(a) % max(s.rank, 1) for a in list(axes.reshape(-1))} if s.rank else set()
    keep = ctx.attrs["keep_dims"]
    dims = [1 if i in axes else d for i, d in enumerate(s.as_tuple()) if keep or i not in axes]
    return [TensorShape(dims)]


ReduceJoin = _string_op("ReduceJoin", ["inputs: string", "reduction_indices: int32"],
                        attrs=["keep_dims: bool = false", "separator: string = ''"],
                        shape=_reduce_join_shape)
Substr = _string_op("Substr", ["input: string", "pos: T", "len: T"],
                    attrs=["T: {int32, int64}", "unit: {'BYTE', 'UTF8_CHAR'} = 'BYTE'"],
                    shape=_broadcast_all)
# TF1's op: splits at every byte of `delimiter` (each byte when it is empty)
StringSplit = _string_op("StringSplit", ["input: string", "delimiter: string"],
                         ["indices: int64", "values: string", "shape: int64"],
                         ["skip_empty: bool = true"],
                         shape=lambda ctx: [TensorShape([None, 2]), TensorShape([None]),
                                            TensorShape([2])])
StringSplitV2 = _string_op("StringSplitV2", ["input: string", "sep: string"],
                           ["indices: int64", "values: string", "shape: int64"],
                           ["maxsplit: int = -1"],
                           shape=lambda ctx: [TensorShape([None, 2]), TensorShape([None]),
                                              TensorShape([2])])


def _decode_raw_shape(ctx):
    s = ctx.shapes[0]
    return [TensorShape(None) if s.rank is None else TensorShape(s.as_list() + [None])]


DecodeRaw = _string_op("DecodeRaw", ["bytes: string"], ["output: out_type"], [
    "out_type: {half, float, double, int32, uint8, int16, int8, int64, bool, bfloat16}",
    "little_endian: bool = true"], shape=_decode_raw_shape)


def _decode_padded_raw_shape(ctx):
    s, length = ctx.shapes[0], ctx.value(1)
    size = ctx.attrs["out_type"].size
    width = None if length is None or int(length) <= 0 else int(length) // size
    return [TensorShape(None) if s.rank is None else TensorShape(s.as_list() + [width])]


DecodePaddedRaw = _string_op(
    "DecodePaddedRaw", ["input_bytes: string", "fixed_length: int32"], ["output: out_type"], [
        "out_type: {half, float, double, int32, uint8, int16, int8, int64, bfloat16}",
        "little_endian: bool = true"], shape=_decode_padded_raw_shape)
UnicodeDecode = _string_op(
    "UnicodeDecode", outputs=["row_splits: Tsplits", "char_values: int32"],
    attrs=["input_encoding: string", "errors: {'strict', 'replace', 'ignore'} = 'replace'",
           "replacement_char: int = 65533", "replace_control_characters: bool = false",
           "Tsplits: {int32, int64} = DT_INT64"],
    shape=lambda ctx: [TensorShape([ctx.shapes[0].num_elements() + 1
                                    if ctx.shapes[0].is_fully_defined() else None]),
                       TensorShape([None])])
UnicodeEncode = _string_op(
    "UnicodeEncode", ["input_values: int32", "input_splits: Tsplits"], ["output: string"],
    ["errors: {'ignore', 'replace', 'strict'} = 'replace'",
     "output_encoding: {'UTF-8', 'UTF-16-BE', 'UTF-32-BE'}", "replacement_char: int = 65533",
     "Tsplits: {int32, int64} = DT_INT64"], shape=lambda ctx: [TensorShape([None])])


def _s(x, name="input"):
    return convert_to_tensor(x, dtypes.string, name=name)


def _run(op, inputs, attrs=None, name=None):
    return apply_op(op, inputs, attrs or {}, name=name).outputs


@tf_export("strings.join", v1=["strings.join", "string_join"])
def string_join(inputs, separator="", name=None):
    """Element-wise concatenation of the string tensors in `inputs` (scalars with tensors of
    one shape; no inputs: the empty string)."""
    if not inputs:
        return convert_to_tensor("", dtypes.string, name=name)
    ragged = [x for x in inputs if isinstance(x, CompositeTensor)]
    if ragged:   # RaggedTensors of one row partition (and scalars): join their values, as TF
        parts = [x.flat_values if isinstance(x, CompositeTensor) else x for x in inputs]
        return ragged[0].with_flat_values(string_join(parts, separator, name))
    return _run(StringJoin, [[_s(x) for x in inputs]], {"separator": separator}, name)[0]


@tf_export("strings.length", v1=[])
def string_length(input, unit="BYTE", name=None):  # noqa: A002 - TF's name
    """The length of each string, in bytes or (unit="UTF8_CHAR") Unicode code points."""
    return _run(StringLength, [_s(input)], {"unit": unit}, name)[0]


@tf_export(v1=["strings.length"])
def string_length_v1(input=None, name=None, unit="BYTE"):  # noqa: A002
    """The length of each string, in bytes or in Unicode code points (TF1 argument order).

    Args:
      input: a string tensor.
      name: optional name for the operation.
      unit: "BYTE" (the default) or "UTF8_CHAR" (code points of UTF-8 text).

    Returns:
      An int32 tensor of the input's shape.

    Example:
      >>> tf.compat.v1.strings.length(["ab", "héllo"], unit="UTF8_CHAR").numpy()
      array([2, 5], dtype=int32)
    """
    return string_length(input, unit, name)


@tf_export("strings.lower", v1=["strings.lower"])
def lower(input, encoding="", name=None):  # noqa: A002
    """ASCII lowercase (Unicode with encoding="utf-8")."""
    return _run(StringLower, [_s(input)], {"encoding": encoding}, name)[0]


@tf_export("strings.upper", v1=["strings.upper"])
def upper(input, encoding="", name=None):  # noqa: A002
    """ASCII uppercase (Unicode with encoding="utf-8")."""
    return _run(StringUpper, [_s(input)], {"encoding": encoding}, name)[0]


@tf_export("strings.strip", v1=["strings.strip", "string_strip"])
def strip(input, name=None):  # noqa: A002
    """Leading and trailing ASCII whitespace removed."""
    return _run(StringStrip, [_s(input)], name=name)[0]


@tf_export("strings.regex_full_match", v1=["strings.regex_full_match"])
def regex_full_match(input, pattern, name=None):  # noqa: A002
    """Whether each string matches `pattern` (RE2 syntax) entirely."""
    if isinstance(pattern, (str, bytes)):
        pattern = pattern.decode() if isinstance(pattern, bytes) else pattern
        return _run(StaticRegexFullMatch, [_s(input)], {"pattern": pattern}, name)[0]
    return _run(RegexFullMatch, [_s(input), _s(pattern, "pattern")], name=name)[0]


@tf_export("strings.regex_replace", v1=["strings.regex_replace", "regex_replace"])
def regex_replace(input, pattern, rewrite, replace_global=True, name=None):  # noqa: A002
    """Matches of `pattern` (RE2) replaced by `rewrite` (`\\1` for a group, `\\0` the match)."""
    if isinstance(pattern, (str, bytes)) and isinstance(rewrite, (str, bytes)):
        text = [p.decode() if isinstance(p, bytes) else p for p in (pattern, rewrite)]
        return _run(StaticRegexReplace, [_s(input)], {
            "pattern": text[0], "rewrite": text[1], "replace_global": replace_global}, name)[0]
    return _run(RegexReplace, [_s(input), _s(pattern, "pattern"), _s(rewrite, "rewrite")],
                {"replace_global": replace_global}, name)[0]


@tf_export("strings.to_number", v1=[])
def string_to_number(input, out_type=dtypes.float32, name=None):  # noqa: A002
    """Each string parsed as a number of `out_type`."""
    return _run(StringToNumber, [_s(input)], {"out_type": dtypes.as_dtype(out_type)},
                name)[0]


@tf_export(v1=["strings.to_number", "string_to_number"])
def string_to_number_v1(string_tensor=None, out_type=dtypes.float32, name=None, input=None):  # noqa: A002
    """Parses each string as a number (TF1 signature).

    Args:
      string_tensor: a string tensor.
      out_type: float32 (the default), float64, int32 or int64.
      name: optional name for the operation.
      input: the same as `string_tensor` (its TF2 name); takes precedence when given.

    Returns:
      A tensor of `out_type` and the input's shape.

    Raises:
      InvalidArgumentError: if a string is not a number of that type.

    Example:
      >>> tf.compat.v1.string_to_number(["1.5", "-2"]).numpy()
      array([ 1.5, -2. ], dtype=float32)
    """
    return string_to_number(input if input is not None else string_tensor, out_type, name)


@tf_export("strings.as_string", "as_string", v1=["dtypes.as_string", "strings.as_string",
                                                 "as_string"])
def as_string(input, precision=-1, scientific=False, shortest=False, width=-1, fill="",  # noqa: A002
              name=None):
    """Each element formatted as a string (printf-style: `precision`, `width`, `fill`)."""
    x = convert_to_tensor(input)
    return _run(AsString, [x], {"precision": precision, "scientific": scientific,
                               "shortest": shortest, "width": width, "fill": fill}, name)[0]


@tf_export("strings.reduce_join", v1=[])
def reduce_join(inputs, axis=None, keepdims=False, separator="", name=None):
    """The strings joined along `axis` (all axes when None)."""
    with name_scope(None, "ReduceJoin"):  # TF names the op itself `name` inside the scope
        x = _s(inputs, "inputs")
        if axis is None:
            # All axes, last first: TF joins the last listed axis outermost (row-major order).
            axis = list(range(x.shape.rank - 1, -1, -1)) if x.shape.rank is not None else []
        axes = convert_to_tensor(axis if isinstance(axis, (list, tuple)) else [axis],
                                 dtypes.int32)
        return _run(ReduceJoin, [x, axes], {"keep_dims": bool(keepdims),
                                            "separator": separator}, name)[0]


@tf_export(v1=["strings.reduce_join", "reduce_join"])
def reduce_join_v1(inputs, axis=None, keep_dims=None, separator="", name=None,
                   reduction_indices=None, keepdims=None):
    """Joins the strings along the given axes (TF1 signature).

    Args:
      inputs: a string tensor.
      axis: the axis or axes to join along; None joins every axis.
      keep_dims: deprecated spelling of `keepdims`.
      separator: the string placed between joined elements.
      name: optional name for the operation.
      reduction_indices: deprecated spelling of `axis`.
      keepdims: if True, the joined axes stay as axes of size 1.

    Returns:
      A string tensor of the reduced shape.

    Example:
      >>> tf.compat.v1.reduce_join([["a", "b"], ["c", "d"]], axis=1, separator="-").numpy()
      array([b'a-b', b'c-d'], dtype=object)
    """
    axis = axis if axis is not None else reduction_indices
    keep = keepdims if keepdims is not None else bool(keep_dims)
    return reduce_join(inputs, axis, keep, separator, name)


@tf_export("strings.substr", v1=[])
def substr(input, pos, len, unit="BYTE", name=None):  # noqa: A002 - TF's names
    """The substrings of length `len` starting at `pos` (negative: from the end)."""
    pos = convert_to_tensor(pos, dtype_hint=dtypes.int32, name="pos")
    length = convert_to_tensor(len, pos.dtype, name="len")
    return _run(Substr, [_s(input), pos, length], {"unit": unit}, name)[0]


@tf_export(v1=["strings.substr", "substr"])
def substr_v1(input, pos, len, name=None, unit="BYTE"):  # noqa: A002
    """The substrings of length `len` starting at `pos` (TF1 argument order).

    Args:
      input: a string tensor.
      pos: int tensor of start positions (negative counts from the end), broadcastable
        against `input`.
      len: int tensor of lengths; a substring stops at the end of its string.
      name: optional name for the operation.
      unit: "BYTE" or "UTF8_CHAR": whether positions and lengths count bytes or code points.

    Returns:
      A string tensor of the broadcast shape.

    Raises:
      InvalidArgumentError: if a position is out of range.

    Example:
      >>> tf.compat.v1.strings.substr("hello", 1, 3).numpy()
      b'ell'
    """
    return substr(input, pos, len, unit, name)


def _ragged_result(x) -> bool:
    """Whether the result is a RaggedTensor (a ragged input, or a non-scalar tensor)."""
    return isinstance(x, CompositeTensor) or convert_to_tensor(x, dtypes.string).shape.rank != 0


@tf_export("strings.split", v1=[])
def split(input, sep=None, maxsplit=-1, name=None):  # noqa: A002
    """A scalar string split on `sep` (whitespace runs when None) into a 1-D string tensor, as
    TensorFlow returns for a scalar (higher ranks: RaggedTensor, not yet in ndflow)."""
    with name_scope(name, "StringSplit"):
        if _ragged_result(input):
            return composite_dispatch.call("strings.split", input, sep, maxsplit)
        x = _s(input)
        flat = apply_op(Reshape, [x, convert_to_tensor([1], dtypes.int32)]).outputs[0]
        _, values, _ = _run(StringSplitV2, [flat, _s(sep or "", "sep")],
                            {"maxsplit": int(maxsplit)})
        return values


@tf_export("strings.bytes_split")
def bytes_split(input, name=None):  # noqa: A002
    """A scalar string as a 1-D tensor of its bytes (one-byte strings)."""
    with name_scope(name, "BytesSplit"):
        if _ragged_result(input):
            return composite_dispatch.call("strings.bytes_split", input)
        x = _s(input)
        n = string_length(x)
        pos = tf_range(n)
        return substr(x, pos, ones_like(pos))


@tf_export("strings.unicode_decode")
def unicode_decode(input, input_encoding, errors="replace", replacement_char=65533,  # noqa: A002
                   replace_control_characters=False, name=None):
    """A scalar string's Unicode code points (int32), as TensorFlow gives for a scalar."""
    attrs = {"input_encoding": input_encoding, "errors": errors,
             "replacement_char": replacement_char,
             "replace_control_characters": replace_control_characters}
    with name_scope(name, "UnicodeDecode"):
        if _ragged_result(input):
            return composite_dispatch.call("strings.unicode_decode", input, attrs)
        _, chars = _run(UnicodeDecode, [_s(input)], attrs)
        return chars


@tf_export("strings.unicode_encode")
def unicode_encode(input, output_encoding, errors="replace", replacement_char=65533,  # noqa: A002
                   name=None):
    """Rows of code points encoded as strings: a 1-D tensor gives one string, a 2-D or
    ragged one a string per row (ragged_string_ops.py)."""
    with name_scope(name, "UnicodeEncode"):
        if isinstance(input, CompositeTensor) or \
                convert_to_tensor(input, dtypes.int32).shape.rank != 1:
            return composite_dispatch.call("strings.unicode_encode", input, {
                "errors": errors, "output_encoding": output_encoding,
                "replacement_char": replacement_char})
        codes = convert_to_tensor(input, dtypes.int32)
        splits = stack([convert_to_tensor(0, dtypes.int64), size(codes, out_type=dtypes.int64)])
        out = _run(UnicodeEncode, [codes, splits], {
            "errors": errors, "output_encoding": output_encoding,
            "replacement_char": replacement_char})[0]
        return reshape(out, [])


@tf_export("io.decode_raw", v1=[])
def decode_raw(input_bytes, out_type, little_endian=True, fixed_length=None, name=None):
    """Each string's bytes reinterpreted as a vector of `out_type` (one more dimension);
    with `fixed_length`, each string cut or zero-padded to that many bytes first."""
    if fixed_length is not None:
        return _run(DecodePaddedRaw, [_s(input_bytes, "input_bytes"),
                                      convert_to_tensor(fixed_length, dtypes.int32)],
                    {"out_type": dtypes.as_dtype(out_type), "little_endian": little_endian},
                    name)[0]
    return _run(DecodeRaw, [_s(input_bytes, "input_bytes")],
                {"out_type": dtypes.as_dtype(out_type), "little_endian": little_endian},
                name)[0]


@tf_export(v1=["io.decode_raw", "decode_raw"])
def decode_raw_v1(input_bytes=None, out_type=None, little_endian=True, name=None, bytes=None):  # noqa: A002
    """Reinterprets the bytes of each string as a vector of numbers (TF1 signature).

    Args:
      input_bytes: a string tensor; every string must hold a whole number of elements.
      out_type: the element dtype (e.g. tf.uint8, tf.int32, tf.float32).
      little_endian: whether multi-byte values are stored little-endian.
      name: optional name for the operation.
      bytes: the same as `input_bytes` (deprecated name).

    Returns:
      A tensor of `out_type` with one more axis than the input: the decoded values.

    Raises:
      InvalidArgumentError: if the strings' lengths differ or are not a multiple of the
        element size.

    Example:
      >>> tf.compat.v1.decode_raw(b"\x01\x02", tf.uint8).numpy()
      array([1, 2], dtype=uint8)
    """
    return decode_raw(input_bytes if input_bytes is not None else bytes, out_type,
                      little_endian, None, name)


attach(globals(), string_ops_docs.DOCS)
