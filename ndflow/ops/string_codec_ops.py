"""String codecs and joins of TensorFlow: `tf.io.encode_base64`/`decode_base64` (web-safe
base64), `tf.io.decode_csv` (DecodeCSV: RFC 4180 quoting, defaults, na_value, select_cols)
and `tf.strings.unsorted_segment_join`. Kernels in kernels/string_codec.py."""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.shapes import TensorShape
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.op_def import op_def

EncodeBase64 = op_def("EncodeBase64", inputs=["input: string"], outputs=["output: string"],
                      attrs=["pad: bool = false"], shape=lambda ctx: [ctx.shapes[0]],
                      not_differentiable=True)
DecodeBase64 = op_def("DecodeBase64", inputs=["input: string"], outputs=["output: string"],
                      shape=lambda ctx: [ctx.shapes[0]], not_differentiable=True)
DecodeCSV = op_def(
    "DecodeCSV", inputs=["records: string", "record_defaults: OUT_TYPE"],
    outputs=["output: OUT_TYPE"],
    attrs=["OUT_TYPE: list(type)",  # TF: list({float, double, int32, int64, string})
           "field_delim: string = ','", "use_quote_delim: bool = true",
           "na_value: string = ''", "select_cols: list(int) = []"],
    shape=lambda ctx: [ctx.shapes[0]] * (len(ctx.shapes) - 1), gradient_undefined=True)


def _segment_join_shape(ctx):
    data, ids, n = ctx.shapes[0], ctx.shapes[1], ctx.value(2)
    if data.rank is None or ids.rank is None:
        return [TensorShape(None)]
    first = None if n is None else int(n)
    return [TensorShape([first] + data.as_list()[ids.rank:])]


UnsortedSegmentJoin = op_def(
    "UnsortedSegmentJoin", inputs=["inputs: string", "segment_ids: Tindices",
                                   "num_segments: Tnumsegments"],
    outputs=["output: string"],
    attrs=["separator: string = ''", "Tindices: {int32, int64}",
           "Tnumsegments: {int32, int64} = DT_INT32"],
    shape=_segment_join_shape, gradient_undefined=True)


@tf_export("io.encode_base64", v1=["io.encode_base64", "encode_base64"])
def encode_base64(input, pad=False, name=None):  # noqa: A002 - TF's name
    """Web-safe base64 (`-` and `_`) of each string, `=` padding only with pad=True."""
    x = convert_to_tensor(input, dtypes.string, name="input")
    return apply_op(EncodeBase64, [x], {"pad": bool(pad)}, name=name).outputs[0]


@tf_export("io.decode_base64", v1=["io.decode_base64", "decode_base64"])
def decode_base64(input, name=None):  # noqa: A002
    """Each web-safe base64 string decoded (padding optional)."""
    x = convert_to_tensor(input, dtypes.string, name="input")
    return apply_op(DecodeBase64, [x], {}, name=name).outputs[0]


@tf_export("io.decode_csv", v1=[])
def decode_csv_v2(records, record_defaults, field_delim=",", use_quote_delim=True,
                  na_value="", select_cols=None, name=None):
    """One tensor per column of the CSV `records`, typed by `record_defaults` (each a
    one-element default, or empty for a required column)."""
    records = convert_to_tensor(records, dtypes.string, name="records")
    defaults = [convert_to_tensor(d, name="record_defaults") for d in record_defaults]
    if select_cols is not None and any(a >= b for a, b in zip(select_cols, select_cols[1:])):
        raise ValueError("select_cols is not strictly increasing.")
    if select_cols is not None and select_cols and select_cols[0] < 0:
        raise ValueError("select_cols contains negative values.")
    if select_cols is not None and len(select_cols) != len(defaults):
        raise ValueError("Length of select_cols and record_defaults do not match.")
    return apply_op(DecodeCSV, [records, defaults], {
        "field_delim": field_delim, "use_quote_delim": bool(use_quote_delim),
        "na_value": na_value, "select_cols": list(select_cols or [])}, name=name).outputs


@tf_export(v1=["io.decode_csv", "decode_csv"])
def decode_csv(records, record_defaults, field_delim=",", use_quote_delim=True, name=None,
               na_value="", select_cols=None):
    """Parses CSV records into one tensor per column (TF1 argument order).

    Args:
      records: a string tensor; each string is one CSV line.
      record_defaults: one entry per column: a one-element tensor (the default and the dtype:
        float32/64, int32/64 or string) or an empty tensor for a required column.
      field_delim: the one-character field separator.
      use_quote_delim: whether double quotes enclose fields (with "" as an escaped quote).
      name: optional name for the operation.
      na_value: the string that stands for a missing value.
      select_cols: optional sorted list of the column indices to keep.

    Returns:
      A list of tensors of records' shape, one per (selected) column.

    Raises:
      ValueError: if `select_cols` is not strictly increasing, negative or the wrong length.
      InvalidArgumentError: if a record has the wrong number of fields, a field does not
        parse, or a required field is empty.

    Example:
      >>> ints, strs = tf.compat.v1.decode_csv(["1,a", "2,b"], [[0], [""]])
      >>> ints.numpy()
      array([1, 2], dtype=int32)
    """
    return decode_csv_v2(records, record_defaults, field_delim, use_quote_delim, na_value,
                         select_cols, name)


@tf_export("strings.unsorted_segment_join", v1=["strings.unsorted_segment_join"])
def unsorted_segment_join(inputs, segment_ids, num_segments, separator="", name=None):
    """The strings of each segment joined with `separator`, in input order ('' if empty)."""
    x = convert_to_tensor(inputs, dtypes.string, name="inputs")
    ids = convert_to_tensor(segment_ids, dtype_hint=dtypes.int32, name="segment_ids")
    n = convert_to_tensor(num_segments, dtype_hint=dtypes.int32, name="num_segments")
    return apply_op(UnsortedSegmentJoin, [x, ids, n], {"separator": separator},
                    name=name).outputs[0]
