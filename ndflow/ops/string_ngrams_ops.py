"""`tf.strings.ngrams` (StringNGrams; kernel in kernels/string_ngrams.py). A 1-D input gives
TensorFlow's 1-D result and a 2-D one its [rows, ngrams] tensor; a RaggedTensor input a
RaggedTensor of each row's n-grams (ragged_string_ops.py); rank > 2 is refused."""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.composite_tensor import CompositeTensor
from ndflow.core.scopes import name_scope
from ndflow.core.shapes import TensorShape
from ndflow.ops import composite_dispatch
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.array_core import reshape, shape, stack
from ndflow.ops.array_range import range as tf_range
from ndflow.ops.op_def import op_def

StringNGrams = op_def(
    "StringNGrams", inputs=["data: string", "data_splits: Tsplits"],
    outputs=["ngrams: string", "ngrams_splits: Tsplits"],
    attrs=["separator: string", "ngram_widths: list(int) >= 0", "left_pad: string",
           "right_pad: string", "pad_width: int", "preserve_short_sequences: bool",
           "Tsplits: {int32, int64} = DT_INT64"],
    shape=lambda ctx: [TensorShape([None]), ctx.shapes[1]], gradient_undefined=True)


@tf_export("strings.ngrams")
def ngrams(data, ngram_width, separator=" ", pad_values=None, padding_width=None,
           preserve_short_sequences=False, name=None):
    """The n-grams of each row of `data` (widths `ngram_width`, an int or a tuple of them),
    joined by `separator`, padded with `pad_values` (one string or a (left, right) pair)."""
    widths = list(ngram_width) if isinstance(ngram_width, (list, tuple)) else [ngram_width]
    if padding_width is not None and padding_width < 1:
        raise ValueError("padding_width must be greater than 0.")
    if padding_width is not None and pad_values is None:
        raise ValueError("pad_values must be provided if padding_width is set.")
    if pad_values is None:
        left = right = ""
    elif isinstance(pad_values, (list, tuple)):
        left, right = pad_values
    else:
        left = right = pad_values
    pad = 0 if pad_values is None else (-1 if padding_width is None else padding_width)
    attrs = {"separator": separator, "ngram_widths": [int(w) for w in widths],
             "left_pad": left, "right_pad": right, "pad_width": int(pad),
             "preserve_short_sequences": bool(preserve_short_sequences)}
    with name_scope(name, "StringNGrams"):
        if isinstance(data, CompositeTensor):
            return composite_dispatch.call("strings.ngrams", data, attrs)
        x = convert_to_tensor(data, dtypes.string, name="data")
        if x.shape.rank not in (1, 2):
            raise NotImplementedError(
                f"tf.strings.ngrams of a tensor of rank {x.shape.rank}: ndflow takes 1-D and "
                "2-D dense tensors and RaggedTensors.")
        rows = shape(x, out_type=dtypes.int64)
        if x.shape.rank == 1:
            splits = stack([convert_to_tensor(0, dtypes.int64), rows[0]])
            flat = x
        else:
            splits = tf_range(rows[0] + 1, dtype=dtypes.int64) * rows[1]
            flat = reshape(x, [-1])
        out, _ = apply_op(StringNGrams, [flat, splits], attrs).outputs
        result = out if x.shape.rank == 1 else reshape(
            out, stack([rows[0], convert_to_tensor(-1, dtypes.int64)]))
        n = x.shape.as_list()[-1]
        if n is not None and hasattr(result, "set_shape"):  # a graph tensor: the static count
            count = sum(max(0, n + 2 * _pad(w, pad) - w + 1) for w in widths)
            count = 1 if preserve_short_sequences and not count and n else count
            result.set_shape(x.shape.as_list()[:-1] + [count])
        return result


def _pad(width: int, pad: int) -> int:
    return min(width - 1 if pad < 0 else pad, width - 1)
