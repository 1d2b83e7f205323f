"""`keras.ops.nn` activations, losses, normalizations and attention, as Keras 3 computes them
(TensorFlow backend): activations take float tensors; the cross-entropies are per sample
(no reduction) and clip probabilities to [epsilon, 1 - epsilon]; layer/rms normalization
compute in float32 at least; dot_product_attention takes (batch, seq, heads, dim)."""

from __future__ import annotations

import numpy as np

from ndflow.core import save_context
from ndflow.keras import backend_functions, docstrings, global_config
from ndflow.keras.ops import dtype_rules as rules
from ndflow.keras.ops import nn_activation_docs, nn_docs
from ndflow.keras.ops import numpy_array as arr
from ndflow.keras.ops.symbolic import keras_op
from ndflow.ops import (
    arithmetic,
    array_builders,
    array_core,
    array_fill,
    array_gather,
    array_range,
    array_slicing,
    array_split,
    attention,
    comparison,
    complex_ops,
    einsum,
    linalg_diag,
    math,
    math_cumulative,
    math_trig,
    nn_activation,
    nn_activation_composite,
    nn_loss,
    reduction,
    sort,
)
from ndflow.ops.cast import cast


def _nn(name):
    return keras_op(name, "nn")


def _float(x):
    """Activations' input: a tensor (ints are refused by the kernels, as Keras' are)."""
    return rules.to_tensor(x)


def _float_only(name, x, error=TypeError):
    """`_float(x)`, refusing a non-float tensor with Keras' error for the activation `name`."""
    x = _float(x)
    if not x.dtype.is_floating:
        raise error(f"{name} takes a float tensor; received {x.dtype.name}")
    return x


def _const(value, x):
    return cast(value, x.dtype)


def _declare_simple():
    table = {
        "relu": nn_activation.relu, "relu6": nn_activation.relu6,
        "sigmoid": math.sigmoid, "softplus": nn_activation.softplus,
        "softsign": math.softsign, "selu": nn_activation.selu, "tanh_shrink":
        lambda x: x - math.tanh(x),
        "silu": lambda x: x * math.sigmoid(x),
        "log_sigmoid": lambda x: -nn_activation.softplus(-x),
        "hard_sigmoid": lambda x: nn_activation.relu6(x + _const(3.0, x)) / _const(6.0, x),
        "hard_silu": lambda x: x * nn_activation.relu6(x + _const(3.0, x)) / _const(6.0, x),
        "hard_tanh": lambda x: math.clip_by_value(x, _const(-1.0, x), _const(1.0, x)),
        "sparse_sigmoid": lambda x: math.clip_by_value(
            (x + _const(1.0, x)) / _const(2.0, x), _const(0.0, x), _const(1.0, x)),
        "sparse_plus": lambda x: arithmetic.where(
            comparison.less_equal(x, _const(-1.0, x)), array_fill.zeros_like(x),
            arithmetic.where(comparison.greater_equal(x, _const(1.0, x)), x,
                             math.square(x + _const(1.0, x)) / _const(4.0, x))),
    }
    out = {}

    def make(name, fn):
        def op(x):
            if name in ("hard_sigmoid", "hard_silu", "hard_tanh", "sparse_sigmoid",
                        "sparse_plus"):
                return fn(_float_only(name, x))
            return fn(_float(x))
        op.__name__ = op.__qualname__ = name
        return op

    for name, fn in table.items():
        out[name] = keras_op(name, "nn")(make(name, fn))
    out["swish"] = keras_op("swish", "nn")(make("swish", table["silu"]))
    out["hard_swish"] = keras_op("hard_swish", "nn")(make("hard_swish", table["hard_silu"]))
    return out


globals().update(_declare_simple())


@_nn("leaky_relu")
def leaky_relu(x, negative_slope=0.2):
    x = rules.to_tensor(x)
    if not x.dtype.is_floating and x.dtype.name != "bool":
        x = cast(x, global_config.floatx())
    return nn_activation.leaky_relu(x, alpha=negative_slope)


@_nn("elu")
def elu(x, alpha=1.0):
    x = _float(x)
    out = nn_activation.elu(x)
    return out if alpha == 1.0 else arithmetic.where(comparison.greater(x, _const(0, x)), out,
                                                     _const(alpha, x) * out)


@_nn("celu")
def celu(x, alpha=1.0):
    x = _float_only("celu", x)
    a = _const(alpha, x)
    return nn_activation.relu(x) + a * math.expm1(arithmetic.minimum(x, _const(0, x)) / a)


@_nn("gelu")
def gelu(x, approximate=True):
    x = _float_only("gelu", x, ValueError)
    return nn_activation_composite.gelu(x, approximate=approximate)


@_nn("glu")
def glu(x, axis=-1):
    x = _float(x)
    if x.shape[axis] is not None and x.shape[axis] % 2:
        raise ValueError("axis size must be divisible by 2. Received: "
                         f"x.shape={tuple(x.shape.as_list())} with axis={axis}")
    a, b = array_split.split(x, 2, axis=axis)
    return a * math.sigmoid(b)


@_nn("hard_shrink")
def hard_shrink(x, threshold=0.5):
    x = _float_only("hard_shrink", x)
    return arithmetic.where(comparison.greater(math.abs(x), _const(threshold, x)), x,
                            array_fill.zeros_like(x))


@_nn("soft_shrink")
def soft_shrink(x, threshold=0.5):
    x = _float_only("soft_shrink", x)
    t = _const(threshold, x)
    return arithmetic.where(comparison.greater(x, t), x - t, arithmetic.where(
        comparison.less(x, -t), x + t, array_fill.zeros_like(x)))


@_nn("threshold")
def threshold(x, threshold, default_value):  # noqa: A002 - Keras' name
    x = _float(x)
    return arithmetic.where(comparison.greater(x, _const(threshold, x)), x,
                            _const(default_value, x))


@_nn("squareplus")
def squareplus(x, b=4):
    x = _float_only("squareplus", x)
    return (x + math.sqrt(math.square(x) + _const(b, x))) / _const(2.0, x)


def _softmax_like(fn, x, axis):
    x = rules.to_tensor(x)
    if axis is None or isinstance(axis, (tuple, list)):
        # over several axes: move them last, merge them, normalize, restore
        rank = x.shape.rank
        axes = list(range(rank)) if axis is None else sorted(a % rank for a in axis)
        kept = [i for i in range(rank) if i not in axes]
        moved = arr.transpose(x, kept + axes)
        shape = array_core.shape(moved)
        merged = array_core.reshape(moved, array_slicing.concat([shape[:len(kept)], [-1]], 0))
        out = array_core.reshape(fn(merged, axis=-1), shape)
        return arr.transpose(out, [int(i) for i in np.argsort(kept + axes)])
    return fn(x, axis=axis)


@_nn("softmax")
def softmax(x, axis=-1):
    out = _softmax_like(nn_activation.softmax, x, axis)
    try:   # Keras' TF backend keeps the logits for the crossentropies (activations.py)
        out._keras_logits = x
    except AttributeError:
        pass
    return out


@_nn("log_softmax")
def log_softmax(x, axis=-1):
    return _softmax_like(nn_activation.log_softmax, x, axis)


@_nn("sparsemax")
def sparsemax(x, axis=-1):
    x = _float_only("sparsemax", x)
    moved = arr.moveaxis(x, axis, -1)
    z = sort.sort(moved, axis=-1, direction="DESCENDING")
    k = cast(array_range.range(0, array_core.shape(z)[-1]), x.dtype) + _const(1, x)
    cum = math_cumulative.cumsum(z, axis=-1)
    support = comparison.greater(_const(1, x) + k * z, cum)
    k_z = reduction.reduce_sum(cast(support, x.dtype), axis=-1, keepdims=True)
    tau = (reduction.reduce_sum(arithmetic.where(support, z, array_fill.zeros_like(z)),
                                axis=-1, keepdims=True) - _const(1, x)) / k_z
    out = nn_activation.relu(moved - tau)
    return arr.moveaxis(out, -1, axis)


# -- one-hot encodings -----------------------------------------------------------------------
@_nn("one_hot")
def one_hot(x, num_classes, axis=-1, dtype=None, sparse=False):
    if sparse:
        raise NotImplementedError("ndflow's keras.ops.one_hot returns dense tensors only "
                                  "(sparse=False).")
    x = rules.to_tensor(x, "int64")
    return array_gather.one_hot(x, num_classes, axis=axis,
                                dtype=rules.standardize(dtype))


@_nn("multi_hot")
def multi_hot(inputs, num_classes, axis=-1, dtype=None, sparse=False):
    inputs = rules.to_tensor(inputs, "int32")
    reduction_axis = 1 if inputs.shape.rank > 1 else 0
    encoded = one_hot(inputs, num_classes, axis=axis, dtype=dtype, sparse=sparse)
    return reduction.reduce_max(encoded, axis=reduction_axis)


# -- losses ----------------------------------------------------------------------------------
def _same_shape(target, output):
    if target.shape.rank != output.shape.rank or any(
            a is not None and b is not None and a != b
            for a, b in zip(target.shape.as_list(), output.shape.as_list())):
        raise ValueError("Arguments `target` and `output` must have the same shape. "
                         f"Received: target.shape={tuple(target.shape.as_list())}, "
                         f"output.shape={tuple(output.shape.as_list())}")


def _clip_probabilities(output):
    eps = _const(backend_functions.epsilon(), output)
    return math.clip_by_value(output, eps, _const(1.0, output) - eps)


@_nn("binary_crossentropy")
def binary_crossentropy(target, output, from_logits=False):
    target, output = rules.to_tensor(target), rules.to_tensor(output)
    _same_shape(target, output)
    target = cast(target, output.dtype)
    if from_logits:
        return nn_loss.sigmoid_cross_entropy_with_logits(labels=target, logits=output)
    output = _clip_probabilities(output)
    one = _const(1.0, output)
    return -(target * arithmetic.log(output) + (one - target) * arithmetic.log(one - output))


@_nn("categorical_crossentropy")
def categorical_crossentropy(target, output, from_logits=False, axis=-1):
    target, output = rules.to_tensor(target), rules.to_tensor(output)
    _same_shape(target, output)
    if target.shape.rank < 1:
        raise ValueError("Arguments `target` and `output` must be at least rank 1. "
                         f"Received: target.shape={target.shape}, output.shape={output.shape}")
    target = cast(target, output.dtype)
    if from_logits:
        return nn_loss.softmax_cross_entropy_with_logits(labels=target, logits=output,
                                                         axis=axis)
    output = output / reduction.reduce_sum(output, axis=axis, keepdims=True)
    output = _clip_probabilities(output)
    return -reduction.reduce_sum(target * arithmetic.log(output), axis=axis)


@_nn("sparse_categorical_crossentropy")
def sparse_categorical_crossentropy(target, output, from_logits=False, axis=-1):
    if axis != -1 and axis != len(getattr(output, "shape", ())) - 1:
        raise ValueError(f"Only axis=-1 is currently supported. Received: axis={axis}")
    target, output = rules.to_tensor(target), rules.to_tensor(output)
    if target.shape.rank == output.shape.rank and target.shape[-1] == 1:
        target = array_core.squeeze(target, axis=[-1])
    if target.shape.rank != output.shape.rank - 1:
        raise ValueError("Argument `output` must have rank (ndim) `target.ndim - 1`. "
                         f"Received: target.shape={tuple(target.shape.as_list())}, "
                         f"output.shape={tuple(output.shape.as_list())}")
    target = cast(target, "int64") if target.dtype.name != "int32" else target
    if not from_logits:
        output = output / reduction.reduce_sum(output, axis=-1, keepdims=True)
        output = arithmetic.log(_clip_probabilities(output))
    return nn_loss.sparse_softmax_cross_entropy_with_logits(labels=target, logits=output)


# -- normalization ---------------------------------------------------------------------------
@_nn("moments")
def moments(x, axes, keepdims=False, synchronized=False):
    x = rules.to_tensor(x)
    dtype = x.dtype.name
    compute = "float32" if dtype in ("float16", "bfloat16") else dtype
    xc = cast(x, compute)
    mean = reduction.reduce_mean(xc, axis=axes, keepdims=True)
    variance = reduction.reduce_mean(math.square(xc - array_core.stop_gradient(mean)),
                                     axis=axes, keepdims=True)
    if not keepdims:
        mean = array_core.squeeze(mean, axis=axes)
        variance = array_core.squeeze(variance, axis=axes)
    if compute != dtype:
        limit = float(np.finfo(np.float16).max)
        mean = cast(math.clip_by_value(mean, -limit, limit), dtype)
        variance = cast(math.clip_by_value(variance, -limit, limit), dtype)
    return mean, variance


@_nn("batch_normalization")
def batch_normalization(x, mean, variance, axis, offset=None, scale=None, epsilon=1e-3):
    x = rules.to_tensor(x)
    rank = x.shape.rank
    shape = None
    if axis != -1 and axis % rank != rank - 1:
        shape = [1] * rank
        shape[axis] = -1

    def prep(v):
        if v is None:
            return None
        v = rules.to_tensor(v, x.dtype.name)
        return array_core.reshape(v, shape) if shape is not None else v
    mean, variance, offset, scale = prep(mean), prep(variance), prep(offset), prep(scale)
    inv = math.rsqrt(variance + _const(epsilon, x))
    if scale is not None:
        inv = inv * scale
    out = x * inv + ((offset - mean * inv) if offset is not None else -mean * inv)
    return out


@_nn("normalize")
def normalize(x, axis=-1, order=2, epsilon=None):
    if not isinstance(order, int) or order < 1:
        raise ValueError(f"Argument `order` must be an int >= 1. Received: order={order}")
    x = rules.to_tensor(x)
    if x.shape.rank == 0:
        x = array_core.expand_dims(x, 0)
    eps = backend_functions.epsilon() if epsilon is None else epsilon
    if order == 2:
        square_sum = reduction.reduce_sum(math.square(x), axis=axis, keepdims=True)
        return x * arithmetic.minimum(math.rsqrt(square_sum), _const(1.0 / eps, x))
    norm = arithmetic.pow(reduction.reduce_sum(arithmetic.pow(math.abs(x), _const(order, x)),
                                               axis=axis, keepdims=True),
                          _const(1.0 / order, x))
    return x / arithmetic.maximum(norm, _const(eps, x))


@_nn("layer_normalization")
def layer_normalization(x, gamma=None, beta=None, axis=-1, epsilon=None):
    x = rules.to_tensor(x)
    original = x.dtype.name
    x = cast(x, rules.result_type(original, "float32"))
    eps = backend_functions.epsilon() if epsilon is None else epsilon
    rank = x.shape.rank
    axes = sorted(a % rank for a in ([axis] if isinstance(axis, int) else axis))
    shape = [1] * rank
    for a in axes:
        shape[a] = x.shape[a] if x.shape[a] is not None else -1

    def prep(v):
        if v is None:
            return None
        v = rules.to_tensor(v, x.dtype.name)
        return array_core.reshape(v, shape) if v.shape.rank != rank and axes != [rank - 1] \
            else v
    mean, variance = moments(x, axes, keepdims=True)
    inv = math.rsqrt(variance + _const(eps, x))
    gamma, beta = prep(gamma), prep(beta)
    if gamma is not None:
        inv = inv * gamma
    res = -mean * inv
    if beta is not None:
        res = res + beta
    return cast(x * inv + res, original)


@_nn("rms_normalization")
def rms_normalization(x, scale=None, axis=-1, epsilon=None):
    x = rules.to_tensor(x)
    original = x.dtype.name
    x = cast(x, rules.result_type(original, "float32"))
    eps = backend_functions.epsilon() if epsilon is None else epsilon
    if x.shape.rank == 0:
        x = array_core.expand_dims(x, 0)
    axis = sorted(axis) if isinstance(axis, (list, tuple)) else axis
    out = x * math.rsqrt(reduction.reduce_mean(math.square(x), axis=axis, keepdims=True)
                         + _const(eps, x))
    if scale is not None:
        out = out * rules.to_tensor(scale, x.dtype.name)
    return cast(out, original)


@_nn("psnr")
def psnr(x1, x2, max_val):
    x1, x2 = rules.to_tensor(x1), rules.to_tensor(x2)
    if x1.shape.as_list() != x2.shape.as_list():
        raise ValueError(f"Input shapes {tuple(x1.shape.as_list())} and "
                         f"{tuple(x2.shape.as_list())} must match for PSNR calculation.")
    x1, x2 = rules.promote(x1, x2)
    mse = reduction.reduce_mean(math.square(x1 - x2))
    ln10 = _const(np.log(10.0), mse)
    return _const(20.0, mse) * arithmetic.log(_const(max_val, mse)) / ln10 - \
        _const(10.0, mse) * arithmetic.log(mse) / ln10


@_nn("polar")
def polar(abs_, angle):
    abs_, angle = rules.promote(rules.to_tensor(abs_), rules.to_tensor(angle))
    if not abs_.dtype.is_floating:
        abs_, angle = cast(abs_, "float32"), cast(angle, "float32")
    return complex_ops.complex(abs_ * math_trig.cos(angle), abs_ * math_trig.sin(angle))


# -- attention -------------------------------------------------------------------------------
@_nn("dot_product_attention")
def dot_product_attention(query, key, value, bias=None, mask=None, scale=None,
                          is_causal=False, flash_attention=None, attn_logits_soft_cap=None):
    if flash_attention:
        raise ValueError("Flash attention is not supported in tensorflow backend.")
    query, key, value = (rules.to_tensor(t) for t in (query, key, value))
    if query.shape.rank != 4:
        raise ValueError("`dot_product_attention` only supports 4D inputs. Received: "
                         f"query.shape={query.shape}, key.shape={key.shape}, "
                         f"value.shape={value.shape}.")
    dtype = rules.result_type(query.dtype.name, key.dtype.name, value.dtype.name)
    query, key, value = cast(query, dtype), cast(key, dtype), cast(value, dtype)
    heads, kv_heads = query.shape[2], key.shape[2]
    if heads is not None and kv_heads is not None and heads > kv_heads > 1:
        key = array_builders.repeat(key, heads // kv_heads, axis=2)
        value = array_builders.repeat(value, heads // kv_heads, axis=2)
    if (bias is None and attn_logits_soft_cap is None and not save_context.in_save_context()
            and dtype in _FUSED_DTYPES and key.shape[2] is not None
            and key.shape[2] == query.shape[2] and (key.shape[-1] is not None if scale is None
                                            else isinstance(scale, (int, float)))):
        scale = 1.0 / float(np.sqrt(key.shape[-1])) if scale is None else scale
        return _fused_attention(query, key, value, mask, scale, is_causal)
    logits_dtype = rules.result_type(dtype, "float32")
    logits = cast(einsum.einsum("BTNH,BSNH->BNTS", query, key), logits_dtype)
    if scale is None:
        scale = math.rsqrt(cast(array_core.shape(key)[-1], "float32"))
    logits = logits * cast(scale, logits_dtype)
    if attn_logits_soft_cap is not None:
        cap = _const(attn_logits_soft_cap, logits)
        logits = math.tanh(logits / cap) * cap
    if bias is not None:
        logits = logits + cast(rules.to_tensor(bias), logits_dtype)
    if mask is not None or is_causal:
        keep = array_fill.ones_like(logits, dtype="bool")
        if mask is not None:
            keep = comparison.logical_and(keep, rules.to_tensor(mask, "bool"))
        if is_causal:
            shape = array_core.shape(logits)
            causal = linalg_diag.band_part(array_fill.ones(shape[2:], dtype="bool"), -1, 0)
            keep = comparison.logical_and(keep, causal)
        large_negative = -0.7 * float(np.finfo(logits_dtype).max)
        logits = arithmetic.where(keep, logits, _const(large_negative, logits))
    probs = cast(nn_activation.softmax(logits, axis=-1), dtype)
    return einsum.einsum("BNTS,BSNH->BTNH", probs, value)


_FUSED_DTYPES = ("float16", "bfloat16", "float32", "float64")


def _fused_attention(query, key, value, mask, scale, is_causal):
    """The same numbers as one _ScaledDotProductAttention op (ops/attention.py): the
    probabilities are never a tensor."""
    keep = None if mask is None else rules.to_tensor(mask, "bool")
    if is_causal:
        lengths = array_slicing.concat([array_core.shape(query)[1:2],
                                        array_core.shape(key)[1:2]], 0)
        causal = linalg_diag.band_part(array_fill.ones(lengths, dtype="bool"), -1, 0)
        keep = causal if keep is None else comparison.logical_and(keep, causal)
    return attention.scaled_dot_product_attention(query, key, value, scale, keep)


docstrings.attach(globals(), nn_activation_docs.DOCS)
docstrings.attach(globals(), nn_docs.DOCS)
