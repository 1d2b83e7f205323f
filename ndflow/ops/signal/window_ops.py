"""Window functions of tf.signal: `hann_window`, `hamming_window` (raised cosines),
`vorbis_window`, `kaiser_window` and `kaiser_bessel_derived_window`.

TensorFlow's `periodic` windows divide by `window_length` only for even lengths (an odd
length gives the symmetric window either way); ndflow does the same.
"""

from __future__ import annotations

import numpy as np

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.scopes import name_scope
from ndflow.core.tensor import Tensor
from ndflow.ops import array_fill
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.arithmetic import (
    floor_div,
    floormod,
    maximum,
    multiply,
    subtract,
    truediv,
    where,
)
from ndflow.ops.array_range import range as range_
from ndflow.ops.array_reorder import reverse
from ndflow.ops.array_slicing import concat
from ndflow.ops.cast import cast
from ndflow.ops.comparison import equal
from ndflow.ops.math import exp, sqrt
from ndflow.ops.math_cumulative import cumsum
from ndflow.ops.math_special import bessel_i0e
from ndflow.ops.math_trig import cos, sin
from ndflow.ops.nn_activation import relu
from ndflow.ops.signal.shape_ops import static_int


def _window_length(window_length, dtype):
    if not dtype.is_floating:
        raise ValueError(f"dtype must be a floating point type. Found {dtype!r}")
    t = convert_to_tensor(window_length, dtypes.int32, name="window_length")
    if t.shape.rank not in (None, 0):
        raise ValueError(f"Shape {t.shape} must have rank 0")
    return t


def _raised_cosine(name, default_name, window_length, periodic, dtype, a, b) -> Tensor:
    dtype = dtypes.as_dtype(dtype)
    if not dtype.is_floating:
        raise ValueError(f"dtype must be a floating point type. Found {dtype!r}")
    with name_scope(name, default_name):
        length = _window_length(window_length, dtype)
        static = static_int(length)
        periodic_t = convert_to_tensor(periodic, dtypes.bool, name="periodic")
        if static is not None and isinstance(periodic, bool):
            if static == 1:
                return array_fill.ones([1], dtype)
            n = static - 1 + (1 if periodic and static % 2 == 0 else 0)
            k = np.arange(static, dtype=np.float64)
            return convert_to_tensor((a - b * np.cos(2 * np.pi * k / max(n, 1)))
                                     .astype(np.float32 if dtype is dtypes.bfloat16
                                             else dtype.np_dtype), dtype)
        even = 1 - floormod(length, 2)
        n = cast(length + cast(periodic_t, dtypes.int32) * even - 1, dtype)
        count = cast(range_(length), dtype)
        window = subtract(a, multiply(b, cos(truediv(multiply(2 * np.pi, count),
                                                     maximum(n, 1.0)))))
        return where(equal(length, 1), array_fill.ones_like(window), window)


@tf_export("signal.hann_window")
def hann_window(window_length, periodic=True, dtype=dtypes.float32, name=None) -> Tensor:
    """`tf.signal.hann_window`: 0.5 - 0.5 cos(2 pi n / N)."""
    return _raised_cosine(name, "hann_window", window_length, periodic, dtype, 0.5, 0.5)


@tf_export("signal.hamming_window")
def hamming_window(window_length, periodic=True, dtype=dtypes.float32, name=None) -> Tensor:
    """`tf.signal.hamming_window`: 0.54 - 0.46 cos(2 pi n / N)."""
    return _raised_cosine(name, "hamming_window", window_length, periodic, dtype, 0.54, 0.46)


@tf_export("signal.vorbis_window")
def vorbis_window(window_length, dtype=dtypes.float32, name=None) -> Tensor:
    """`tf.signal.vorbis_window`: sin(pi / 2 sin^2(pi (n + 0.5) / N)), the window of the
    Vorbis codec (power complementary)."""
    dtype = dtypes.as_dtype(dtype)
    with name_scope(name, "vorbis_window"):
        length = _window_length(window_length, dtype)
        arg = truediv(cast(range_(length), dtype) + 0.5, cast(length, dtype)) * np.pi
        return sin(multiply(np.pi / 2.0, multiply(sin(arg), sin(arg))))


@tf_export("signal.kaiser_window")
def kaiser_window(window_length, beta=12.0, dtype=dtypes.float32, name=None) -> Tensor:
    """`tf.signal.kaiser_window`: I0(beta sqrt(1 - t^2)) / I0(beta) for t evenly spaced in
    [-1, 1] (through exp(x - beta) i0e(x) / i0e(beta), which stays finite for large beta)."""
    dtype = dtypes.as_dtype(dtype)
    with name_scope(name, "kaiser_window"):
        length = _window_length(window_length, dtype)
        if static_int(length) == 1:
            return array_fill.ones([1], dtype)
        half = (cast(length, dtypes.float32) - 1.0) / 2.0
        t = cast(truediv(cast(range_(length), dtypes.float32) - half, half), dtype)
        beta = cast(beta, dtype)
        x = beta * sqrt(relu(1.0 - t * t))
        return exp(x - beta) * truediv(bessel_i0e(x), bessel_i0e(beta))


@tf_export("signal.kaiser_bessel_derived_window")
def kaiser_bessel_derived_window(window_length, beta=12.0, dtype=dtypes.float32,
                                 name=None) -> Tensor:
    """`tf.signal.kaiser_bessel_derived_window`: the square roots of the normalized running
    sums of a Kaiser window of length window_length // 2 + 1, mirrored (power
    complementary, for MDCTs)."""
    dtype = dtypes.as_dtype(dtype)
    with name_scope(name, "kaiser_bessel_derived_window"):
        length = _window_length(window_length, dtype)
        sums = cumsum(kaiser_window(floor_div(length, 2) + 1, beta, dtype=dtype))
        half = sqrt(truediv(sums[:-1], sums[-1]))
        return concat([half, reverse(half, [0])], 0)
