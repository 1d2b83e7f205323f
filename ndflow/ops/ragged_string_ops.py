"""`tf.strings` results that are ragged: `split`, `bytes_split` and `unicode_decode` of a
tensor of rank >= 1 (one row of pieces per string), `unicode_encode` and `ngrams` of ragged
rows, and each of them on a RaggedTensor of strings (applied to its flat values, as
TensorFlow's ragged dispatch does); and a RaggedTensor's text for `tf.print` and
`tf.strings.format` (`[[1, 2], [], [3]]`). The ops are string_ops.py's; the public functions there
hand these cases over through composite_dispatch (string_ops cannot import the ragged
modules built on it).
"""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.ops import arithmetic, composite_dispatch
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.array_core import reshape, stack
from ndflow.ops.array_core import shape as shape_op
from ndflow.ops.array_fill import ones_like
from ndflow.ops.array_gather import gather
from ndflow.ops.array_mask import boolean_mask
from ndflow.ops.array_range import range as range_op
from ndflow.ops.cast import cast
from ndflow.ops.comparison import equal, greater, greater_equal, less, logical_and, logical_or
from ndflow.ops.ragged_factory import ragged_range
from ndflow.ops.ragged_tensor import RaggedTensor, splits_to_segment_ids
from ndflow.ops.string_codec_ops import unsorted_segment_join
from ndflow.ops.string_ngrams_ops import StringNGrams
from ndflow.ops.string_ops import (
    StringSplitV2,
    UnicodeDecode,
    UnicodeEncode,
    as_string,
    regex_replace,
    string_join,
    string_length,
    substr,
)


def _rows_of_strings(x, one_row, what: str):
    """`one_row` (1-D strings -> RaggedTensor of one row per string) applied to `x`: a
    RaggedTensor's flat values, or a dense tensor's strings (outer dims kept as rows)."""
    if isinstance(x, RaggedTensor):
        return x.with_flat_values(_rows_of_strings(x.flat_values, one_row, what))
    x = convert_to_tensor(x, dtypes.string)
    rank = x.shape.rank
    if rank is None:
        raise ValueError(f"{what} needs an input of known rank in ndflow graphs.")
    if rank == 1:
        return one_row(x)
    return RaggedTensor.from_tensor(x, ragged_rank=rank - 1).with_flat_values(
        one_row(reshape(x, [-1])))


@composite_dispatch.register("strings.split")
def split(x, sep, maxsplit):
    def one_row(flat):
        indices, values, shape = apply_op(StringSplitV2, [
            flat, convert_to_tensor(sep or "", dtypes.string, name="sep")],
            {"maxsplit": int(maxsplit)}).outputs
        return RaggedTensor.from_value_rowids(values, indices[:, 0], nrows=shape[0],
                                              validate=False)
    return _rows_of_strings(x, one_row, "tf.strings.split")


@composite_dispatch.register("strings.unicode_decode")
def unicode_decode(x, attrs: dict):
    def one_row(flat):
        splits, chars = apply_op(UnicodeDecode, [flat], attrs).outputs
        return RaggedTensor.from_row_splits(chars, splits, validate=False)
    return _rows_of_strings(x, one_row, "tf.strings.unicode_decode")


@composite_dispatch.register("strings.bytes_split")
def bytes_split(x):
    def one_row(flat):
        positions = ragged_range(string_length(flat))
        pieces = gather(flat, positions.value_rowids())
        return positions.with_values(substr(pieces, positions.values,
                                            ones_like(positions.values)))
    return _rows_of_strings(x, one_row, "tf.strings.bytes_split")


@composite_dispatch.register("strings.unicode_encode")
def unicode_encode(codes, attrs: dict):
    """Each innermost row of code points as one string (one dimension less)."""
    if not isinstance(codes, RaggedTensor):
        codes = convert_to_tensor(codes, dtypes.int32)
        codes = RaggedTensor.from_tensor(codes, ragged_rank=codes.shape.rank - 1)
    if isinstance(codes.values, RaggedTensor):
        return codes.with_values(unicode_encode(codes.values, attrs))
    return apply_op(UnicodeEncode, [codes.values, codes.row_splits], attrs).outputs[0]


@composite_dispatch.register("strings.ngrams")
def ngrams(data: RaggedTensor, attrs: dict):
    if isinstance(data.values, RaggedTensor):
        return data.with_values(ngrams(data.values, attrs))
    out, splits = apply_op(StringNGrams, [data.values, data.row_splits], attrs).outputs
    return RaggedTensor.from_row_splits(out, splits, validate=False)


def ragged_to_string(rt: RaggedTensor, summarize=3):
    """One string for a RaggedTensor, as TensorFlow prints it: `[[1, 2], [], [3]]` (strings
    quoted `'a'`), only the first and last `summarize` items of long rows (`...` between);
    -1 or None: every item."""
    if summarize is not None and summarize != -1 and not (isinstance(summarize, int)
                                                          and summarize > 0):
        raise ValueError(f"Expected summarize to be -1 or a positive int, got {summarize!r}")
    flat = rt.flat_values
    if flat.shape.rank is None:
        raise ValueError("RaggedTensor to_string requires that rt.shape.rank is not None.")
    if flat.dtype is dtypes.string:
        escaped = regex_replace(flat, r"(['\\])", r"\\\1")
        pieces = string_join(["'", escaped, "'"])
    else:
        pieces = as_string(flat)
    if flat.shape.rank > 1:  # dense inner dimensions print as nested lists too
        pieces = RaggedTensor.from_tensor(pieces, ragged_rank=flat.shape.rank - 1)
    rows = rt.with_flat_values(pieces)
    splits = list(rows.nested_row_splits)
    text = rows.flat_values
    for s in reversed(splits):
        text = _join_rows(text, s, summarize)
    n = shape_op(text, out_type=dtypes.int64)[0]
    return _join_rows(text, stack([convert_to_tensor(0, dtypes.int64), n]), summarize)[0]


def _join_rows(pieces, splits, summarize):
    """'[' + the row's pieces joined by ', ' + ']' for each row of `splits`."""
    splits = cast(splits, dtypes.int64)
    rowids = splits_to_segment_ids(splits)
    nrows = arithmetic.subtract(shape_op(splits, out_type=dtypes.int64)[0], 1)
    if summarize is not None and summarize != -1:
        position = arithmetic.subtract(range_op(splits[-1], dtype=dtypes.int64),
                                       gather(splits, rowids))
        length = gather(arithmetic.subtract(splits[1:], splits[:-1]), rowids)
        long_row = greater(length, 2 * summarize)
        ellipsis = logical_and(equal(position, summarize), long_row)
        keep = logical_or(logical_or(less(position, summarize),
                                     greater_equal(position, length - summarize)), ellipsis)
        pieces = arithmetic.where(ellipsis, convert_to_tensor("...", dtypes.string), pieces)
        pieces, rowids = boolean_mask(pieces, keep), boolean_mask(rowids, keep)
    joined = unsorted_segment_join(pieces, rowids, nrows, separator=", ")
    return string_join(["[", joined, "]"])


@composite_dispatch.register("string_format")
def string_format(inputs: list, template: str, placeholder: str, summarize: int, dense_format):
    """`tf.strings.format`/`tf.print` with RaggedTensor inputs: each input formatted on its
    own (ragged ones by `ragged_to_string`) and the pieces joined, as TensorFlow does."""
    parts = template.split(placeholder)
    if len(parts) - 1 != len(inputs):
        raise ValueError("num placeholders in template and num inputs must match: "
                         f"{len(parts) - 1} vs {len(inputs)}")
    pieces = [convert_to_tensor(parts[0], dtypes.string)]
    for x, after in zip(inputs, parts[1:]):
        pieces.append(ragged_to_string(x, summarize) if isinstance(x, RaggedTensor) else
                      dense_format([x], "{}", "{}", summarize))
        pieces.append(convert_to_tensor(after, dtypes.string))
    return string_join(pieces)
