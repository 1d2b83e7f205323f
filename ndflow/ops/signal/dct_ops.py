"""Discrete cosine transforms along the last axis: `tf.signal.dct` / `idct`, types I-IV,
unnormalized (as scipy.fftpack's) or `norm="ortho"`, computed through the RFFT.

With N the length: type II is y_k = 2 sum_n x_n cos(pi k (2n + 1) / 2N), the real part of
2 exp(-i pi k / 2N) times the RFFT of x zero-padded to 2N; type III (its inverse up to 2N)
is 2N times the IRFFT of length 2N of x_n exp(i pi n / 2N) (which counts x_0 once and the
other terms twice); type I is the
RFFT of the even extension x_0 .. x_{N-1} .. x_1; type IV the odd bins of the type II of
x zero-padded to 2N.
"""

from __future__ import annotations

import math

import numpy as np

from ndflow.core.api_export import tf_export
from ndflow.core.scopes import name_scope
from ndflow.core.tensor import Tensor
from ndflow.ops import array_core, array_fill
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.arithmetic import multiply
from ndflow.ops.array_range import range as range_
from ndflow.ops.array_slicing import concat
from ndflow.ops.cast import cast
from ndflow.ops.complex_ops import complex as complex_
from ndflow.ops.complex_ops import real
from ndflow.ops.math import exp, rsqrt
from ndflow.ops.spectral_ops import irfft, rfft


def _validate(x, dct_type, n, axis, norm):
    if axis != -1:
        raise NotImplementedError(f"axis must be -1. Got: {axis}")
    if n is not None and n < 1:
        raise ValueError("n should be a positive integer or None")
    if dct_type not in (1, 2, 3, 4):
        raise ValueError("Types I, II, III and IV (I)DCT are supported.")
    if dct_type == 1:
        if norm == "ortho":
            raise ValueError("Normalization is not supported for the Type-I DCT.")
        shape = convert_to_tensor(x).shape
        if shape.rank and shape[-1] is not None and shape[-1] < 2:
            raise ValueError("Type-I DCT requires the dimension to be greater than one.")
    if norm not in (None, "ortho"):
        raise ValueError(f"Unknown normalization. Expected None or 'ortho', got: {norm}")


def _last_dim(x):
    d = x.shape[-1] if x.shape.rank else None
    return d if d is not None else array_core.shape(x)[-1]


def _fit(x, n):
    """x cut or zero-padded to n samples along the last axis."""
    have = _last_dim(x)
    if isinstance(have, int) and have >= n:
        return x[..., :n]
    if isinstance(have, int):
        rows = [[0, 0]] * (x.shape.rank - 1) + [[0, n - have]]
        return array_fill.pad(x, np.array(rows, np.int32))
    raise NotImplementedError("dct with n needs a static last dimension")


def _phase(length, sign, dtype):
    """exp(sign * i * pi * k / (2 * length)) for k in [0, length)."""
    k = cast(range_(length), dtype)
    zero = array_fill.zeros_like(k)
    return exp(complex_(zero, multiply(k, sign * math.pi / 2.0) / cast(length, dtype)))


def _edge_weights(length, first, rest, dtype):
    """[first, rest, rest, ...] of the given length (scalar tensors)."""
    ones = array_fill.ones(array_core.stack([length - 1]), dtype)
    return concat([array_core.reshape(first, [1]), ones * rest], 0)


def _dct(x, dct_type, n, norm, name) -> Tensor:
    with name_scope(name, "dct"):
        x = convert_to_tensor(x)
        if n is not None:
            x = _fit(x, n)
        length = _last_dim(x)
        length_f = cast(length, x.dtype)
        if dct_type == 1:
            extended = concat([x, x[..., -2:0:-1]], -1)
            return real(rfft(extended))
        if dct_type == 2:
            spectrum = rfft(x, array_core.reshape(2 * length, [1]))[..., :length]
            out = real(spectrum * multiply(2.0, _phase(length, -1.0, x.dtype)))
            if norm == "ortho":
                n1 = 0.5 * rsqrt(length_f)
                out = out * _edge_weights(length, n1, n1 * math.sqrt(2.0), x.dtype)
            return out
        if dct_type == 3:
            if norm == "ortho":
                root = length_f ** 0.5
                x = x * _edge_weights(length, root, root * math.sqrt(0.5), x.dtype)
            else:
                x = x * length_f
            spectrum = complex_(x, array_fill.zeros_like(x)) * multiply(
                2.0, _phase(length, 1.0, x.dtype))
            return irfft(spectrum, array_core.reshape(2 * length, [1]))[..., :length]
        padded = _fit(x, 2 * length) if isinstance(length, int) else _pad_double(x, length)
        out = _dct(padded, 2, None, None, None)[..., 1::2]
        if norm == "ortho":
            out = out * (math.sqrt(0.5) * rsqrt(length_f))
        return out


def _pad_double(x, length):
    rank = x.shape.rank
    return array_fill.pad(x, concat([np.zeros([rank - 1, 2], np.int32),
                                     array_core.reshape(array_core.stack([0, length]), [1, 2])],
                                    0))


@tf_export("signal.dct")
def dct(input, type=2, n=None, axis=-1, norm=None, name=None) -> Tensor:  # noqa: A002
    """`tf.signal.dct`: the type I-IV DCT of the last axis (after cutting or zero-padding it to
    `n`), unnormalized or orthonormal (`norm="ortho"`, types II-IV)."""
    _validate(input, type, n, axis, norm)
    return _dct(input, type, n, norm, name)


@tf_export("signal.idct")
def idct(input, type=2, n=None, axis=-1, norm=None, name=None) -> Tensor:  # noqa: A002
    """`tf.signal.idct`: the DCT of the inverse type (II <-> III; I and IV are their own);
    exact inverses with `norm="ortho"`, else scaled by 2N (2(N - 1) for type I)."""
    _validate(input, type, n, axis, norm)
    return _dct(input, {1: 1, 2: 3, 3: 2, 4: 4}[type], n, norm, name)
