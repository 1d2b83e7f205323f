"""`keras.ops` (ops.numpy) searching, counting, complex parts and window functions:
searchsorted, digitize, bincount, histogram, unique, isin, nan_to_num, allclose, real/imag/
conj/angle/isreal, view, view_as_complex/real, bartlett/blackman/hamming/hanning/kaiser,
slogdet, vectorize, as Keras 3 computes them on the TensorFlow backend."""

from __future__ import annotations

import numpy as np

from ndflow.keras import docstrings, global_config
from ndflow.keras.ops import dtype_rules as rules
from ndflow.keras.ops import numpy_array as arr
from ndflow.keras.ops import numpy_misc_docs
from ndflow.keras.ops.symbolic import keras_op
from ndflow.ops import (
    arithmetic,
    array_core,
    array_fill,
    array_nd,
    array_range,
    array_search,
    array_transpose,
    cast_bits,
    comparison,
    complex_ops,
    gather_batch,
    linalg_decomp,
    math,
    math_trig,
    reduction,
    segment,
    sort,
)
from ndflow.ops.cast import cast
from ndflow.ops.signal import window_ops
from ndflow.runtime import functional_ops


def _np(name, **kwargs):
    return keras_op(name, "numpy", **kwargs)


@_np("searchsorted")
def searchsorted(sorted_sequence, values, side="left"):
    sorted_sequence, values = rules.promote(rules.to_tensor(sorted_sequence),
                                            rules.to_tensor(values))
    if sorted_sequence.shape.rank != 1:
        raise ValueError("`searchsorted` only supports 1-D sorted sequences. You can use "
                         "`keras.ops.vectorized_map` to extend it to N-D sequences. Received: "
                         f"sorted_sequence.shape={sorted_sequence.shape}")
    if side not in ("left", "right"):
        raise ValueError(f"Invalid value for argument `side`: {side}")
    flat = array_core.reshape(values, [1, -1])
    out = array_search.searchsorted(array_core.reshape(sorted_sequence, [1, -1]), flat,
                                    side=side, out_type="int32")
    return array_core.reshape(out, array_core.shape(values))


@_np("digitize")
def digitize(x, bins):
    x = rules.to_tensor(x)
    bins = [float(b) for b in (bins.numpy() if hasattr(bins, "numpy") else bins)]
    edges = rules.to_tensor(bins, "float64" if x.dtype.name == "float64" else "float32")
    flat = cast(array_core.reshape(x, [1, -1]), edges.dtype)
    out = array_search.searchsorted(array_core.reshape(edges, [1, -1]), flat, side="right",
                                    out_type="int32")
    return array_core.reshape(out, array_core.shape(x))


@_np("bincount")
def bincount(x, weights=None, minlength=0, sparse=False):
    if sparse:
        raise NotImplementedError("ndflow's keras.ops.bincount returns dense tensors only.")
    x = rules.to_tensor(x)
    if x.dtype.name not in ("int32", "int64"):
        x = cast(x, "int32")
    if weights is None:
        dtype, weights_t = "int32", array_fill.ones_like(x, dtype="int32")
    else:
        weights_t = rules.to_tensor(weights)
        dtype = rules.result_type(x.dtype.name, weights_t.dtype.name)
        weights_t = cast(weights_t, dtype)
    length = arithmetic.maximum(cast(reduction.reduce_max(x) + 1, "int32"),
                                cast(minlength, "int32")) if x.shape.num_elements() != 0 \
        else cast(minlength, "int32")
    if x.shape.rank == 1:
        out = array_nd.scatter_nd(array_core.expand_dims(cast(x, "int32"), -1), weights_t,
                                  array_core.stack([length]))
        return out
    # batched: one count per row
    rows = array_core.shape(x)[0]
    row_ids = array_fill.broadcast_to(array_range.range(0, rows)[:, None],
                                      array_core.shape(x))
    idx = array_core.stack([row_ids, cast(x, "int32")], axis=-1)
    return array_nd.scatter_nd(idx, weights_t, array_core.stack([rows, length]))


@_np("histogram")
def histogram(x, bins=10, range=None):  # noqa: A002 - Keras' name
    x = rules.to_tensor(x)
    if x.shape.rank != 1:
        raise ValueError(f"Input tensor must be 1-dimensional. Received: input.shape={x.shape}")
    if range is None:
        lo, hi = reduction.reduce_min(x), reduction.reduce_max(x)
    else:
        lo, hi = cast(range[0], x.dtype), cast(range[1], x.dtype)
    inside = comparison.logical_and(comparison.greater_equal(x, lo),
                                    comparison.less_equal(x, hi))
    compute = x.dtype.name if x.dtype.is_floating else "float32"
    edges = cast(arr.linspace(cast(lo, compute), cast(hi, compute), bins + 1, dtype=compute),
                 x.dtype)
    idx = array_search.searchsorted(array_core.reshape(edges[1:-1], [1, -1]),
                                    array_core.reshape(x, [1, -1]), side="right",
                                    out_type="int32")
    counts = array_nd.scatter_nd(array_core.reshape(idx, [-1, 1]),
                                 cast(inside, x.dtype), [bins])
    return counts, edges


@_np("unique", symbolic=False)
def unique(x, sorted=True, return_index=False, return_inverse=False,  # noqa: A002
           return_counts=False, axis=None, size=None, fill_value=None):
    x = rules.to_tensor(x)
    if axis is not None:
        raise NotImplementedError("ndflow's keras.ops.unique supports axis=None only.")
    flat = array_core.reshape(x, [-1])
    values, inverse, counts = array_search.unique_with_counts(flat, out_idx="int32")
    n = array_core.shape(values)[0]
    # each value's first position
    first = segment.unsorted_segment_min(array_range.range(0, array_core.shape(flat)[0]),
                                         inverse, n)
    if sorted:
        order = sort.argsort(values, stable=True)
        values, counts, first = (gather_batch.gather(v, order) for v in (values, counts,
                                                                          first))
        inverse = gather_batch.gather(array_transpose.invert_permutation(order), inverse)
    if size is not None:
        pad = arithmetic.maximum(0, size - n)
        fill = cast(0 if fill_value is None else fill_value, values.dtype)
        values = array_fill.pad(values[:size], array_core.stack([array_core.stack([0, pad])]),
                                constant_values=fill)
        first = array_fill.pad(first[:size], array_core.stack([array_core.stack([0, pad])]),
                               constant_values=1)
        counts = array_fill.pad(counts[:size], array_core.stack([array_core.stack([0, pad])]))
    results = [values]
    if return_index:
        results.append(first)
    if return_inverse:
        results.append(array_core.reshape(inverse, array_core.shape(x)))
    if return_counts:
        results.append(counts)
    return tuple(results) if len(results) > 1 else results[0]


@_np("isin")
def isin(x1, x2, assume_unique=False, invert=False):
    x1, x2 = rules.promote(rules.to_tensor(x1), rules.to_tensor(x2))
    flat1, flat2 = array_core.reshape(x1, [-1, 1]), array_core.reshape(x2, [1, -1])
    found = reduction.reduce_any(comparison.equal(flat1, flat2), axis=1)
    if invert:
        found = comparison.logical_not(found)
    return array_core.reshape(found, array_core.shape(x1))


@_np("nan_to_num")
def nan_to_num(x, nan=0.0, posinf=None, neginf=None):
    x = rules.to_tensor(x)
    if not x.dtype.is_floating:
        return x
    info = np.finfo(x.dtype.as_numpy_dtype if x.dtype.name != "bfloat16" else np.float32)
    big = float(info.max) if posinf is None else posinf
    small = float(info.min) if neginf is None else neginf
    x = arithmetic.where(comparison.is_nan(x), cast(nan, x.dtype), x)
    x = arithmetic.where(comparison.equal(x, cast(np.inf, x.dtype)), cast(big, x.dtype), x)
    return arithmetic.where(comparison.equal(x, cast(-np.inf, x.dtype)), cast(small, x.dtype),
                            x)


@_np("allclose")
def allclose(x1, x2, rtol=1e-5, atol=1e-8, equal_nan=False):
    x1, x2 = rules.promote(rules.to_tensor(x1), rules.to_tensor(x2))
    if not x1.dtype.is_floating:
        return reduction.reduce_all(comparison.equal(x1, x2))
    finite = comparison.logical_and(comparison.is_finite(x1), comparison.is_finite(x2))
    close = comparison.less_equal(math.abs(x1 - x2),
                                  cast(atol, x1.dtype) + cast(rtol, x1.dtype) * math.abs(x2))
    out = comparison.logical_or(comparison.logical_and(finite, close),
                                comparison.equal(x1, x2))
    if equal_nan:
        out = comparison.logical_or(out, comparison.logical_and(comparison.is_nan(x1),
                                                                comparison.is_nan(x2)))
    return reduction.reduce_all(out)


# -- complex parts ---------------------------------------------------------------------------
def _complex_part(name, part):
    """`part` of a complex tensor; a real one as it is (booleans refused, as Keras)."""
    def f(x):
        x = rules.to_tensor(x)
        if x.dtype.name == "bool":
            raise TypeError(f"{name} does not take bool tensors")
        return part(x) if x.dtype.is_complex else x
    f.__name__ = f.__qualname__ = name
    return _np(name)(f)


real = _complex_part("real", complex_ops.real)


@_np("imag")
def imag(x):
    x = rules.to_tensor(x)
    return complex_ops.imag(x) if x.dtype.is_complex else array_fill.zeros_like(x)


conj = _complex_part("conj", complex_ops.conj)


@_np("conjugate")
def conjugate(x):
    return conj(x)


@_np("angle")
def angle(x):
    x = rules.to_tensor(x)
    if x.dtype.is_complex:
        return complex_ops.angle(x)
    x = rules.to_float(x)
    return math_trig.atan2(array_fill.zeros_like(x), x)


@_np("isreal")
def isreal(x):
    x = rules.to_tensor(x)
    if x.dtype.is_complex:
        return comparison.equal(complex_ops.imag(x), 0)
    return array_fill.ones_like(x, dtype="bool")


@keras_op("view_as_complex")
def view_as_complex(x):
    x = rules.to_tensor(x)
    if x.shape[-1] != 2:
        raise ValueError("Last dimension of input must be size 2 (real and imaginary). "
                         f"Received shape: {x.shape}")
    return complex_ops.complex(x[..., 0], x[..., 1])


@keras_op("view_as_real")
def view_as_real(x):
    x = rules.to_tensor(x)
    if not x.dtype.is_complex:
        raise ValueError(f"Input must be a complex tensor. Received: {x.dtype.name}")
    return array_core.stack([complex_ops.real(x), complex_ops.imag(x)], axis=-1)


@_np("view")
def view(x, dtype=None):
    x = rules.to_tensor(x)
    dtype = rules.standardize(dtype or x.dtype)
    old, new = x.dtype.size, np.dtype(dtype if dtype != "bfloat16" else "float16").itemsize
    if old == new:
        return cast_bits.bitcast(x, dtype)
    if old > new:   # each element splits into old/new pieces along a new axis
        out = cast_bits.bitcast(x, dtype)
        shape = x.shape.as_list()
        return array_core.reshape(out, shape[:-1] + [shape[-1] * (old // new)])
    shape = x.shape.as_list()
    if shape[-1] % (new // old):
        raise ValueError("The last axis of `x` must be divisible by the dtype size ratio")
    grouped = array_core.reshape(x, shape[:-1] + [shape[-1] // (new // old), new // old])
    return cast_bits.bitcast(grouped, dtype)


# -- window functions ------------------------------------------------------------------------
@_np("bartlett")
def bartlett(x):
    n = int(x)
    if n <= 1:
        return array_fill.ones([n], dtype=global_config.floatx())
    i = cast(array_range.range(0, n), global_config.floatx())
    m = cast(n - 1, i.dtype)
    return arithmetic.where(comparison.less_equal(i, m / 2.0), 2.0 * i / m, 2.0 - 2.0 * i / m)


@_np("blackman")
def blackman(x):
    n = int(x)
    if n <= 1:
        return array_fill.ones([n], dtype=global_config.floatx())
    i = cast(array_range.range(0, n), global_config.floatx())
    m = cast(n - 1, i.dtype)
    two_pi = cast(2.0 * np.pi, i.dtype)
    return 0.42 - 0.5 * math_trig.cos(two_pi * i / m) + \
        0.08 * math_trig.cos(2.0 * two_pi * i / m)


@_np("hamming")
def hamming(x):
    return window_ops.hamming_window(int(x), periodic=False)


@_np("hanning")
def hanning(x):
    return window_ops.hann_window(int(x), periodic=False)


@_np("kaiser")
def kaiser(x, beta):
    return window_ops.kaiser_window(int(x), beta=beta)


@_np("slogdet")
def slogdet(x):
    x = rules.to_tensor(x)
    sign, logabs = linalg_decomp.log_matrix_determinant(x)
    return sign, logabs


@_np("vectorize", symbolic=False)
def vectorize(pyfunc, *, excluded=None, signature=None):
    excluded = set(excluded or ())

    def run(*args, **kwargs):
        positions = [i for i in range(len(args)) if i not in excluded]
        tensors = [rules.to_tensor(args[i]) for i in positions]
        core = _core_ranks(signature, len(tensors))
        leads = [t.shape.as_list()[:t.shape.rank - c] for t, c in zip(tensors, core)]
        lead = list(np.broadcast_shapes(*[tuple(s) for s in leads]))
        flat = [array_core.reshape(arr.broadcast_to(t, lead + t.shape.as_list()[
            t.shape.rank - c:]), [-1] + t.shape.as_list()[t.shape.rank - c:])
            for t, c in zip(tensors, core)]

        def one(elems):
            call = list(args)
            for i, e in zip(positions, elems):
                call[i] = e
            return pyfunc(*call, **kwargs)
        out = functional_ops.vectorized_map(one, tuple(flat))
        return array_core.reshape(out, lead + out.shape.as_list()[1:])
    return run


def _core_ranks(signature, n):
    if signature is None:
        return [0] * n
    inputs = signature.split("->")[0]
    groups = [g.strip("() ") for g in inputs.split("),")]
    return [0 if not g else len(g.split(",")) for g in groups]


docstrings.attach(globals(), numpy_misc_docs.DOCS)
