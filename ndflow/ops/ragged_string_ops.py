"""`tf.strings` results that are ragged: `split`, `bytes_split` and `unicode_decode` of a
tensor of rank >= 1 (one row of pieces per string), `unicode_encode` and `ngrams` of ragged
rows, and each of them on a RaggedTensor of strings (applied to its flat values, as
TensorFlow's ragged dispatch does). The ops are string_ops.py's; the public functions there
hand these cases over through composite_dispatch (string_ops cannot import the ragged
modules built on it).
"""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.ops import composite_dispatch
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.array_core import reshape
from ndflow.ops.array_fill import ones_like
from ndflow.ops.array_gather import gather
from ndflow.ops.ragged_factory import ragged_range
from ndflow.ops.ragged_tensor import RaggedTensor
from ndflow.ops.string_ngrams_ops import StringNGrams
from ndflow.ops.string_ops import StringSplitV2, UnicodeDecode, UnicodeEncode, string_length, substr


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
