"""NumPy float64 references for the convolution, pooling and resizing layers (written from
the definitions: windows over TF's SAME/VALID/causal paddings, transposed convolution as a
scatter of each input pixel times the kernel), the finite-difference gradient check and the
Keras 3 fixture shared by test_conv_layers.py and test_pooling_reshaping_layers.py."""

from __future__ import annotations

import json
import os
import re

import numpy as np
import pytest

import ndflow as tf

_FIXTURE_DIR = os.path.join(os.path.dirname(__file__), "..", "fixtures", "keras_conv_layers")
with open(os.path.join(_FIXTURE_DIR, "cases.json")) as _f:
    FIXTURE = json.load(_f)
ARRAYS = dict(np.load(os.path.join(_FIXTURE_DIR, "outputs.npz")))


def jsonable(value):
    """A config as JSON holds it (tuples -> lists), to compare with the fixture."""
    return json.loads(json.dumps(value))


def assert_config_equal(got, want, path="config") -> None:
    """Equal configs (JSON forms), float leaves to float32 precision (Keras keeps some
    regularizer factors as float32 values: 0.01 is 0.009999999776482582 there)."""
    got, want = jsonable(got), jsonable(want)
    if isinstance(want, dict) and isinstance(got, dict):
        assert sorted(got) == sorted(want), f"{path}: keys {sorted(got)} != {sorted(want)}"
        for key in want:
            assert_config_equal(got[key], want[key], f"{path}.{key}")
    elif isinstance(want, list) and isinstance(got, list):
        assert len(got) == len(want), f"{path}: {got} != {want}"
        for i, (g, w) in enumerate(zip(got, want)):
            assert_config_equal(g, w, f"{path}[{i}]")
    elif isinstance(want, float) and isinstance(got, (int, float)) and \
            not isinstance(got, bool):
        assert np.isclose(got, want, rtol=1e-7, atol=0), f"{path}: {got} != {want}"
    else:
        assert got == want and type(got) is type(want), f"{path}: {got!r} != {want!r}"


def normalize_sets(message: str) -> str:
    """Python set reprs with their items sorted (Keras prints sets in hash order)."""
    return re.sub(r"\{('[^{}]*')\}",
                  lambda m: "{" + ", ".join(sorted(m.group(1).split(", "))) + "}", message)


# -- the Keras 3 fixture -------------------------------------------------------------------


def fixture_layer(case: str):
    """The fixture's layer with the fixture's weights, its output on the fixture input, the
    fixture's case and the call's keyword arguments (a mask)."""
    spec = FIXTURE["cases"][case]
    layer = getattr(tf.keras.layers, spec["class"])(name=case, **spec["kwargs"])
    x = ARRAYS[f"{case}/x"]
    kwargs = {"mask": ARRAYS[f"{case}/mask"]} if f"{case}/mask" in ARRAYS else {}
    layer(x, **kwargs)
    layer.set_weights([ARRAYS[f"{case}/w{i}"] for i in range(len(spec["weight_shapes"]))])
    return layer, layer(x, **kwargs), spec, kwargs


def check_fixture_case(case: str) -> None:
    """Output, shapes, weights and config equal to Keras'; from_config(get_config()) makes
    the same layer."""
    layer, y, spec, kwargs = fixture_layer(case)
    np.testing.assert_allclose(y.numpy(), ARRAYS[f"{case}/y"], rtol=1e-5, atol=1e-5)
    assert list(y.shape) == spec["output_shape"]
    assert_config_equal(layer.get_config(), spec["config"])
    assert list(layer.compute_output_shape((None, *spec["input_shape"][1:]))) == \
        spec["compute_output_shape"]
    assert [w.shape.as_list() for w in layer.weights] == spec["weight_shapes"]
    assert [w.name.split("/")[-1].split(":")[0] for w in layer.weights] == spec["weight_names"]
    clone = type(layer).from_config(layer.get_config())
    assert_config_equal(clone.get_config(), spec["config"])
    x = ARRAYS[f"{case}/x"]
    clone(x, **kwargs)
    clone.set_weights(layer.get_weights())
    np.testing.assert_allclose(clone(x, **kwargs).numpy(), y.numpy(), rtol=1e-6)


def _strip_call_context(message: str) -> str:
    """The core of an error raised in `call`, without Keras' context around it (the fixture
    keeps the core: generate.py strips it the same way)."""
    if "Exception encountered when calling" in message:
        message = message.split("\n\n")[1].replace("\x1b[1m", "").replace("\x1b[0m", "")
    return message


def check_error(label: str, fn) -> None:
    """Keras' error type and message; an input-spec message (worded by the Layer base) from
    'is incompatible with the layer' on."""
    want = FIXTURE["errors"][label]
    with pytest.raises(Exception) as info:
        fn()
    assert type(info.value).__name__ == want["type"]
    got = normalize_sets(_strip_call_context(str(info.value)))
    message = normalize_sets(want["message"])
    marker = "is incompatible with the layer: "
    if marker in message:
        assert marker in got and got.split(marker)[1] == message.split(marker)[1]
    else:
        assert got == message


def check_unknown_batch(layer, shape, rng) -> None:
    """`layer` traced by tf.function for inputs (None, *shape): the values of eager calls on
    batches of 2 and 3, one trace, whose static shape is compute_output_shape's (the batch
    unknown, every other dim known)."""
    traced = []

    @tf.function(input_signature=[tf.TensorSpec([None, *shape], tf.float32)])
    def run(x):
        y = layer(x)
        traced.append(tuple(y.shape.as_list()))
        return y

    for batch in (2, 3):
        x = rng.normal(size=(batch, *shape)).astype(np.float32)
        np.testing.assert_allclose(run(x).numpy(), layer(x).numpy(), rtol=1e-5, atol=1e-6)
    assert traced == [tuple(layer.compute_output_shape((None, *shape)))]
    assert traced[0][0] is None and None not in traced[0][1:]


# -- layouts -----------------------------------------------------------------------------------


def to_last(x, data_format):
    return np.moveaxis(x, 1, -1) if data_format == "channels_first" else x


def from_last(y, data_format):
    return np.moveaxis(y, -1, 1) if data_format == "channels_first" else y


def _as_2d(x, kernel, strides, dilation):
    """1-D operands (B, W, C), (k, ...) as 2-D ones with a height of 1."""
    if x.ndim == 3:
        return x[:, None], kernel[None], (1, *strides), (1, *dilation)
    return x, kernel, tuple(strides), tuple(dilation)


def same_pads(n, k, s, d):
    """TF's SAME padding of one dim: (before, after), the extra one after."""
    eff = (k - 1) * d + 1
    out = -(-n // s)
    total = max((out - 1) * s + eff - n, 0)
    return total // 2, total - total // 2


# -- convolutions ------------------------------------------------------------------------------


def conv(x, kernel, strides=1, padding="valid", dilation=1, data_format="channels_last",
         groups=1):
    """Cross-correlation of (B, *spatial, C) with kernel (*k, C // groups, F)."""
    n = kernel.ndim - 2
    strides = (strides,) * n if np.isscalar(strides) else strides
    dilation = (dilation,) * n if np.isscalar(dilation) else dilation
    x = to_last(np.asarray(x, np.float64), data_format)
    one_d = x.ndim == 3
    x, kernel, strides, dilation = _as_2d(x, np.asarray(kernel, np.float64), strides,
                                          dilation)
    (kh, kw), (sh, sw), (dh, dw) = kernel.shape[:2], strides, dilation
    if padding == "same":
        pads = [same_pads(x.shape[1], kh, sh, dh), same_pads(x.shape[2], kw, sw, dw)]
    elif padding == "causal":
        pads = [(0, 0), ((kw - 1) * dw, 0)]
    else:
        pads = [(0, 0), (0, 0)]
    xp = np.pad(x, [(0, 0), *pads, (0, 0)])
    oh = (xp.shape[1] - (kh - 1) * dh - 1) // sh + 1
    ow = (xp.shape[2] - (kw - 1) * dw - 1) // sw + 1
    filters = kernel.shape[-1]
    cg, fg = x.shape[-1] // groups, filters // groups
    y = np.zeros((x.shape[0], oh, ow, filters))
    for i in range(kh):
        for j in range(kw):
            patch = xp[:, i * dh:i * dh + (oh - 1) * sh + 1:sh,
                       j * dw:j * dw + (ow - 1) * sw + 1:sw]
            for g in range(groups):
                y[..., g * fg:(g + 1) * fg] += (patch[..., g * cg:(g + 1) * cg] @
                                                kernel[i, j][:, g * fg:(g + 1) * fg])
    return from_last(y[:, 0] if one_d else y, data_format)


def depthwise(x, kernel, strides=1, padding="valid", dilation=1,
              data_format="channels_last"):
    """Channel c convolved with kernel[..., c, m] gives output channel c * M + m."""
    kh, kw, c, m = kernel.shape
    return conv(x, np.reshape(kernel, (kh, kw, 1, c * m)), strides, padding, dilation,
                data_format, groups=c)


def separable(x, depthwise_kernel, pointwise_kernel, strides=1, padding="valid", dilation=1,
              data_format="channels_last"):
    mid = depthwise(x, depthwise_kernel, strides, padding, dilation, data_format)
    return conv(mid, pointwise_kernel, data_format=data_format)


def transpose_size(n, k, s, padding, output_padding, d):
    """Keras' output size of a transposed convolution along one dim."""
    eff = (k - 1) * d + 1
    if padding == "valid":
        return (n - 1) * s + eff + (max(eff, s) - eff if output_padding is None
                                    else output_padding)
    return n * s if output_padding is None else (n - 1) * s + eff % 2 + output_padding


def conv_transpose(x, kernel, strides, padding="valid", output_padding=None, dilation=1,
                   data_format="channels_last"):
    """Each input pixel times the kernel (kh, kw, F, C), scattered at stride `strides` into
    the output, shifted by the padding TF's forward convolution of the output would use."""
    strides = (strides,) * 2 if np.isscalar(strides) else strides
    dilation = (dilation,) * 2 if np.isscalar(dilation) else dilation
    output_padding = ((output_padding,) * 2 if np.isscalar(output_padding)
                      or output_padding is None else output_padding)
    x = to_last(np.asarray(x, np.float64), data_format)
    kernel = np.asarray(kernel, np.float64)
    sizes = [transpose_size(x.shape[1 + a], kernel.shape[a], strides[a], padding,
                            output_padding[a], dilation[a]) for a in range(2)]
    before = []
    for a in range(2):
        eff = (kernel.shape[a] - 1) * dilation[a] + 1
        total = max((x.shape[1 + a] - 1) * strides[a] + eff - sizes[a], 0)
        before.append(total // 2 if padding == "same" else 0)
    y = np.zeros((x.shape[0], *sizes, kernel.shape[2]))
    for i in range(kernel.shape[0]):
        for j in range(kernel.shape[1]):
            rows = np.arange(x.shape[1]) * strides[0] + i * dilation[0] - before[0]
            cols = np.arange(x.shape[2]) * strides[1] + j * dilation[1] - before[1]
            r_ok = (rows >= 0) & (rows < sizes[0])
            c_ok = (cols >= 0) & (cols < sizes[1])
            contrib = x[:, r_ok][:, :, c_ok] @ kernel[i, j].T
            y[:, rows[r_ok][:, None], cols[c_ok][None, :]] += contrib
    return from_last(y, data_format)


# -- pooling and resizing ----------------------------------------------------------------------


def pool(x, pool_size, strides, padding, mode, data_format="channels_last"):
    """Max or mean over windows; SAME's padded cells are left out of both."""
    x = to_last(np.asarray(x, np.float64), data_format)
    one_d = x.ndim == 3
    if one_d:
        x, pool_size, strides = x[:, None], (1, *pool_size), (1, *strides)
    pads = ([same_pads(x.shape[1 + a], pool_size[a], strides[a], 1) for a in range(2)]
            if padding == "same" else [(0, 0), (0, 0)])
    xp = np.pad(x, [(0, 0), *pads, (0, 0)], constant_values=np.nan)
    oh = (xp.shape[1] - pool_size[0]) // strides[0] + 1
    ow = (xp.shape[2] - pool_size[1]) // strides[1] + 1
    y = np.zeros((x.shape[0], oh, ow, x.shape[-1]))
    reduce = np.nanmax if mode == "max" else np.nanmean
    for i in range(oh):
        for j in range(ow):
            window = xp[:, i * strides[0]:i * strides[0] + pool_size[0],
                        j * strides[1]:j * strides[1] + pool_size[1]]
            y[:, i, j] = reduce(window, axis=(1, 2))
    return from_last(y[:, 0] if one_d else y, data_format)


def bilinear_upsample(x, size, data_format="channels_last"):
    """TF's resize_bilinear with half-pixel centers to (H * size[0], W * size[1])."""
    y = to_last(np.asarray(x, np.float64), data_format)
    for axis, factor in zip((1, 2), size):
        n = y.shape[axis]
        src = (np.arange(n * factor) + 0.5) / factor - 0.5
        top = np.maximum(np.floor(src), 0).astype(int)
        bottom = np.minimum(np.ceil(src), n - 1).astype(int)
        lerp = (src - np.floor(src)).reshape([-1] + [1] * (y.ndim - axis - 1))
        lo, hi = np.take(y, top, axis=axis), np.take(y, bottom, axis=axis)
        y = lo + (hi - lo) * lerp
    return from_last(y, data_format)


# -- gradients ---------------------------------------------------------------------------------


def check_gradients(layer, x, rng, eps=1e-6, rtol=1e-6, atol=1e-8, directions=3):
    """The tape's gradients of sum(layer(x) * r) against central finite differences
    (float64): w.r.t. x element by element (samples are independent, so the perturbed
    inputs run as one batch: row i is x with element i moved by eps), w.r.t. each trainable
    weight along `directions` random directions v (<grad, v> against the difference quotient
    along v, which a wrong gradient entry fails for almost every v)."""
    x = np.asarray(x, np.float64)
    y0 = layer(x).numpy()
    r = rng.normal(size=y0.shape)
    xt = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(xt)
        loss = tf.reduce_sum(layer(xt) * r)
    grads = tape.gradient(loss, [xt] + list(layer.trainable_variables))

    def batched(sign):
        eye = np.eye(x.size).reshape((x.size,) + x.shape)
        rows = np.concatenate([x + sign * eps * eye[i] for i in range(x.size)])
        out = layer(rows).numpy().reshape((x.size, x.shape[0]) + y0.shape[1:])
        return (out * r).reshape(x.size, -1).sum(1)

    numeric_x = ((batched(1) - batched(-1)) / (2 * eps)).reshape(x.shape)
    np.testing.assert_allclose(grads[0].numpy(), numeric_x, rtol=rtol, atol=atol)
    for var, grad in zip(layer.trainable_variables, grads[1:]):
        value = var.numpy().copy()
        for _ in range(directions):
            v = rng.normal(size=value.shape)
            quotient = 0.0
            for sign in (1, -1):
                var.assign(value + sign * eps * v)
                quotient += sign * float(np.sum(layer(x).numpy() * r)) / (2 * eps)
            var.assign(value)
            np.testing.assert_allclose(np.sum(grad.numpy() * v), quotient, rtol=rtol,
                                       atol=atol, err_msg=var.name)
