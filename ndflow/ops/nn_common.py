"""Shared helpers of the NN op families: data formats, window attrs, TF's padding arithmetic.

Used by the OpDefs' shape functions, the public wrappers and the ATen kernel factories, so the
output size and padding of a window op are computed by one piece of code everywhere.
"""

from __future__ import annotations

import numpy as np

from ndflow.core import context
from ndflow.core.api_export import tf_export
from ndflow.core.deprecation import deprecated_argument_lookup
from ndflow.core.shapes import TensorShape

FLOAT_T = "T: {half, bfloat16, float, double}"
REAL_T = "T: {half, bfloat16, float, double, int8, int16, int32, int64, uint8}"
DATA_FORMAT = "data_format: {'NHWC', 'NCHW'} = 'NHWC'"
PADDING = "padding: {'SAME', 'VALID', 'EXPLICIT'}"
PADDING_NO_EXPLICIT = "padding: {'SAME', 'VALID'}"
EXPLICIT_PADDINGS = "explicit_paddings: list(int) = []"
DILATIONS = "dilations: list(int) = [1, 1, 1, 1]"


def spatial_dims(data_format: str) -> tuple[int, int, int]:
    """(H index, W index, C index) of a 4-D tensor in `data_format`."""
    return (1, 2, 3) if data_format in ("NHWC", b"NHWC") else (2, 3, 1)


def channel_index(data_format: str | None) -> int:
    return 1 if data_format is not None and str(data_format).startswith("NC") else 3


def hw(values, data_format: str) -> tuple[int, int]:
    """The (H, W) entries of a 4-list attr (strides, dilations, ksize) in `data_format`."""
    h, w, _ = spatial_dims(data_format)
    return int(values[h]), int(values[w])


def windowed_output_size(size: int | None, k: int, stride: int, dilation: int, padding: str,
                         pad_before: int = 0, pad_after: int = 0):
    """TF's GetWindowedOutputSizeVerbose: (output size, pad_before, pad_after).

    Unknown `size` gives (None, None, None). Raises ValueError (TF's shape-fn wording) when
    the window does not fit.
    """
    if stride <= 0:  # TF checks it first, whatever else is known
        raise ValueError(f"Stride must be > 0, but got {stride}")
    if size is None or k is None:
        return None, None, None
    eff = (k - 1) * dilation + 1
    if padding == "VALID":
        out = (size - eff + stride) // stride
        if out < 0 or size < eff:
            raise ValueError(f"Negative dimension size caused by subtracting {eff} from {size}")
        return out, 0, 0
    if padding == "SAME":
        out = (size + stride - 1) // stride
        needed = max(0, (out - 1) * stride + eff - size)
        return out, needed // 2, needed - needed // 2
    out = (size + pad_before + pad_after - eff + stride) // stride
    if out < 0:
        raise ValueError(f"Computed output size would be negative: {out} [input_size: {size}, "
                         f"effective_filter_size: {eff}, stride: {stride}]")
    return out, pad_before, pad_after


def scoped_op_name(name: str | None, default: str) -> str | None:
    """The op name of a wrapper TF runs inside `name_scope(name, default)`: the scope's name
    in a graph; none eagerly, where TF's errors then name no op (`[Op:Conv2DBackpropInput]`
    without a ` name: ...` suffix)."""
    return None if context.executing_eagerly() else (name or default)


def explicit_hw(explicit: list, data_format: str) -> tuple[int, int, int, int]:
    """(top, bottom, left, right) from a flat 8-list of explicit paddings."""
    h, w, _ = spatial_dims(data_format)
    if not explicit:
        return 0, 0, 0, 0
    return explicit[2 * h], explicit[2 * h + 1], explicit[2 * w], explicit[2 * w + 1]


def window_geometry(in_h, in_w, kh, kw, strides, dilations, padding, explicit=()):
    """((out_h, out_w), (top, bottom, left, right)) for 2-D windows; entries may be None."""
    sh, sw = strides
    dh, dw = dilations
    t, b, left, r = explicit if explicit else (0, 0, 0, 0)
    oh, pt, pb = windowed_output_size(in_h, kh, sh, dh, padding, t, b)
    ow, pl, pr = windowed_output_size(in_w, kw, sw, dw, padding, left, r)
    return (oh, ow), (pt, pb, pl, pr)


def check_rank(shape: TensorShape, rank: int) -> TensorShape:
    """`shape` with rank `rank` (unknown rank becomes all-unknown dims); TF's error otherwise."""
    if shape.rank is None:
        return TensorShape([None] * rank)
    if shape.rank != rank:
        raise ValueError(f"Shape must be rank {rank} but is rank {shape.rank}")
    return shape


def check_window_attr(op: str, name: str, values, data_format: str, what: str) -> None:
    """TF's checks on 4-element strides/ksize/dilations attrs."""
    if len(values) != 4:
        if op in ("MaxPool", "AvgPool", "MaxPoolGrad", "AvgPoolGrad"):
            raise ValueError(f"Sliding window {name} field must specify 4 dimensions")
        raise ValueError(f"{op} requires the {what} attribute to contain 4 values, but got: "
                         f"{len(values)}")
    n = 0
    c = channel_index(data_format)
    if values[n] != 1 or values[c] != 1:
        if name == "ksize" or (name == "strides" and op in ("MaxPool", "AvgPool")):
            raise ValueError("Pooling is not yet supported on the batch dimension.")
        if name == "dilations":
            raise ValueError("Current implementation does not yet support dilations in the "
                             "batch and depth dimensions.")
        raise ValueError("Current implementation does not yet support strides in the batch "
                         "and depth dimensions.")


def get_sequence(value, n: int, channel_idx: int, name: str) -> list:
    """TF's `_get_sequence`: int or 1/n/n+2-list -> the full (n+2)-list of a window attr."""
    if value is None:
        return [1] * (n + 2)
    if isinstance(value, int):
        value = [value]
    elif hasattr(value, "tolist"):
        value = list(value.tolist()) if hasattr(value.tolist(), "__len__") else [value.tolist()]
    value = [int(v) for v in value]
    if len(value) == n + 2:
        return value
    if len(value) == 1:
        value = value * n
    elif len(value) != n:
        raise ValueError(f"{name} should be of length 1, {n} or {n + 2} but was {len(value)}")
    if channel_idx == 1:
        return [1, 1] + value
    return [1] + value + [1]


def seq_attr(value, n: int, channel_index: int, name: str) -> list:
    """TF's `_get_sequence` (its messages): int or 1/n/n+2-list -> the (n+2)-list."""
    if value is None:
        return [1] * (n + 2)
    seq = [int(value)] if isinstance(value, (int, np.integer)) else [int(v) for v in value]
    if len(seq) == n + 2:
        return seq
    if len(seq) == 1:
        seq = seq * n
    elif len(seq) != n:
        raise ValueError(f"{name} should be of length 1, {n} or {n + 2}. Received: "
                         f"{name}={value} of length {len(seq)}")
    return [1, 1] + seq if channel_index == 1 else [1] + seq + [1]


def to_nhwc_list(values, data_format: str) -> list:
    """A 4-list in `data_format` order reordered to NHWC order."""
    if data_format == "NCHW":
        return [values[0], values[2], values[3], values[1]]
    return list(values)


def format_shape(dims) -> TensorShape:
    return TensorShape(dims)


def padding_attrs(padding) -> tuple[str, list]:
    """A wrapper's `padding` argument -> (padding attr, explicit_paddings attr)."""
    if isinstance(padding, (list, tuple)):
        flat = []
        for pair in padding:
            if not isinstance(pair, (list, tuple)) or len(pair) != 2:
                raise ValueError(f"When padding is a list, each element of padding must be a "
                                 f"list/tuple of size 2. Received: padding={padding}")
            flat.extend(int(p) for p in pair)
        if len(flat) != 8:
            raise ValueError(f"When padding is a list, it must be of size 4. Received: "
                             f"padding={padding}")
        return "EXPLICIT", flat
    if isinstance(padding, bytes):
        padding = padding.decode()
    if padding == "EXPLICIT":
        raise ValueError('"EXPLICIT" is not a valid value for `padding`. To use explicit '
                         'padding, `padding` must be a list.')
    return padding, []


def sizes_input_shape(ctx, index: int) -> list:
    """The output shape of a gradient op whose input `index` holds the 4 output sizes (a
    conv's or avg-pool's backprop input): those sizes where the value is known."""
    v = ctx.value(index)
    if v is not None:
        v = np.asarray(v).reshape(-1)
        if v.size != 4:
            raise ValueError(f"Shape must be rank 4 but is rank {v.size}")
        return [TensorShape([int(d) for d in v])]
    return [TensorShape([None] * 4)]


def conv_transpose_v1(transpose, public: str, default_format: str):
    """tf.compat.v1.nn.<public> (conv2d_transpose, conv3d_transpose): `transpose` under TF1's
    argument names `value` and `filter` (the v2 names `input` and `filters` also accepted)."""
    def transpose_v1(value=None, filter=None, output_shape=None,  # noqa: A002
                     strides=None, padding="SAME", data_format: str = default_format,
                     name: str | None = None, input=None, filters=None,  # noqa: A002
                     dilations=None):
        value = deprecated_argument_lookup("input", input, "value", value)
        filter = deprecated_argument_lookup("filters", filters, "filter", filter)  # noqa: A001
        return transpose(value, filter, output_shape, strides, padding, data_format,
                         dilations, name)
    transpose_v1.__name__ = transpose_v1.__qualname__ = f"{public}_v1"
    transpose_v1.__doc__ = f"`tf.compat.v1.nn.{public}` (TF1 names: `value`, `filter`)."
    return tf_export(v1=[f"nn.{public}"])(transpose_v1)


def keras_transpose_size(n, k: int, s: int, padding: str, output_padding, d: int):
    """One spatial size of a transposed convolution's output (Keras' arithmetic for TF's
    paddings); `n` may be an int, a scalar tensor or None."""
    if n is None:
        return None
    k = (k - 1) * d + 1
    if padding == "valid":
        extra = max(k, s) - k if output_padding is None else output_padding
        return (n - 1) * s + k + extra
    if output_padding is None:
        return n * s
    return (n - 1) * s + k % 2 + output_padding
