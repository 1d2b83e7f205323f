"""`tf.strings` unicode functions beyond decode/encode (string_ops.py):
unicode_decode_with_offsets (UnicodeDecodeWithOffsets: each character's code point and byte
offset), unicode_split / unicode_split_with_offsets (each character as a string of the input
encoding), unicode_transcode (UnicodeTranscode, elementwise) and unicode_script
(UnicodeScript: ICU script codes). A scalar input gives 1-D results; a tensor of rank >= 1 or
a RaggedTensor gives RaggedTensors with one row per string. Host kernels:
kernels/string_unicode.py."""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.scopes import name_scope
from ndflow.core.shapes import TensorShape
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.array_core import expand_dims
from ndflow.ops.op_def import op_def
from ndflow.ops.ragged_string_ops import _rows_of_strings
from ndflow.ops.ragged_tensor import RaggedTensor
from ndflow.ops.string_ops import unicode_decode, unicode_encode

_DECODE_ATTRS = ["input_encoding: string",
                 "errors: {'strict', 'replace', 'ignore'} = 'replace'",
                 "replacement_char: int = 65533", "replace_control_characters: bool = false"]

UnicodeDecodeWithOffsets = op_def(
    "UnicodeDecodeWithOffsets", inputs=["input: string"],
    outputs=["row_splits: Tsplits", "char_values: int32", "char_to_byte_starts: int64"],
    attrs=_DECODE_ATTRS + ["Tsplits: {int32, int64} = DT_INT64"],
    shape=lambda ctx: [TensorShape([None])] * 3, gradient_undefined=True)

UnicodeTranscode = op_def(
    "UnicodeTranscode", inputs=["input: string"], outputs=["output: string"],
    attrs=["input_encoding: string",
           "output_encoding: {'UTF-8', 'UTF-16-BE', 'UTF-32-BE'}"] + _DECODE_ATTRS[1:],
    shape=lambda ctx: [ctx.shapes[0]], gradient_undefined=True)

UnicodeScript = op_def(
    "UnicodeScript", inputs=["input: int32"], outputs=["output: int32"],
    shape=lambda ctx: [ctx.shapes[0]], gradient_undefined=True)


def _decode_attrs(input_encoding, errors, replacement_char, replace_control_characters):
    return {"input_encoding": input_encoding, "errors": errors,
            "replacement_char": int(replacement_char),
            "replace_control_characters": bool(replace_control_characters)}


def _is_scalar(x) -> bool:
    return not isinstance(x, RaggedTensor) and convert_to_tensor(x, dtypes.string).shape.rank == 0


@tf_export("strings.unicode_decode_with_offsets")
def unicode_decode_with_offsets(input, input_encoding, errors="replace",  # noqa: A002
                                replacement_char=65533, replace_control_characters=False,
                                name=None):
    """(code points, byte offset of each character's start) of each string."""
    attrs = _decode_attrs(input_encoding, errors, replacement_char, replace_control_characters)
    with name_scope(name, "UnicodeDecodeWithOffsets"):
        if _is_scalar(input):
            _, chars, offsets = apply_op(UnicodeDecodeWithOffsets,
                                         [convert_to_tensor(input, dtypes.string)],
                                         attrs).outputs
            return chars, offsets
        parts = {}

        def one_row(flat, key):
            if "out" not in parts:
                parts["out"] = apply_op(UnicodeDecodeWithOffsets, [flat], attrs).outputs
            splits, chars, offsets = parts["out"]
            return RaggedTensor.from_row_splits(chars if key == "chars" else offsets, splits,
                                                validate=False)
        chars = _rows_of_strings(input, lambda f: one_row(f, "chars"),
                                 "tf.strings.unicode_decode_with_offsets")
        offsets = _rows_of_strings(input, lambda f: one_row(f, "offsets"),
                                   "tf.strings.unicode_decode_with_offsets")
        return chars, offsets


def _chars_as_strings(codepoints, input_encoding, replacement_char):
    """Each code point as a one-character string of `input_encoding` (TF's unicode_split)."""
    if isinstance(codepoints, RaggedTensor):
        return codepoints.with_flat_values(
            _chars_as_strings(codepoints.flat_values, input_encoding, replacement_char))
    return unicode_encode(expand_dims(codepoints, -1), input_encoding, "replace",
                          replacement_char)


@tf_export("strings.unicode_split")
def unicode_split(input, input_encoding, errors="replace", replacement_char=65533,  # noqa: A002
                  name=None):
    """Each string's characters, each a string in `input_encoding`."""
    with name_scope(name, "UnicodeSplit"):
        codes = unicode_decode(input, input_encoding, errors, replacement_char)
        return _chars_as_strings(codes, input_encoding, replacement_char)


@tf_export("strings.unicode_split_with_offsets")
def unicode_split_with_offsets(input, input_encoding, errors="replace",  # noqa: A002
                               replacement_char=65533, name=None):
    """(each string's characters as strings, the byte offset where each starts)."""
    with name_scope(name, "UnicodeSplitWithOffsets"):
        codes, offsets = unicode_decode_with_offsets(input, input_encoding, errors,
                                                     replacement_char)
        return _chars_as_strings(codes, input_encoding, replacement_char), offsets


@tf_export("strings.unicode_transcode")
def unicode_transcode(input, input_encoding, output_encoding, errors="replace",  # noqa: A002
                      replacement_char=65533, replace_control_characters=False, name=None):
    """Each string re-encoded from `input_encoding` to `output_encoding`."""
    attrs = _decode_attrs(input_encoding, errors, replacement_char, replace_control_characters)
    attrs["output_encoding"] = output_encoding
    if isinstance(input, RaggedTensor):
        return input.with_flat_values(unicode_transcode(
            input.flat_values, input_encoding, output_encoding, errors, replacement_char,
            replace_control_characters, name))
    return apply_op(UnicodeTranscode, [convert_to_tensor(input, dtypes.string)], attrs,
                    name=name or "UnicodeTranscode").outputs[0]


@tf_export("strings.unicode_script")
def unicode_script(input, name=None):  # noqa: A002
    """The ICU script code (UScriptCode) of each int32 code point; -1 for invalid ones."""
    if isinstance(input, RaggedTensor):
        return input.with_flat_values(unicode_script(input.flat_values, name))
    return apply_op(UnicodeScript, [convert_to_tensor(input, dtypes.int32)],
                    name=name or "UnicodeScript").outputs[0]
