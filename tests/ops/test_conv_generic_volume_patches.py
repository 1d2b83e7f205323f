"""tf.conv (Conv), tf.conv2d_backprop_input_v2 / tf.conv2d_backprop_filter_v2,
tf.extract_volume_patches and tf.ragged_fill_empty_rows(_grad).

TF 2.21's results (tests/fixtures/conv_generic_volume_patches: values, dtypes, shapes, static
shapes, error types, eagerly, in graphs and in tf.function; floats within TOLERANCES, the
rest exact); the deliberate differences from TF's eager CPU kernels (Conv's groups,
CHANNELS_FIRST and 3-D dilations as TF's XLA computes them; the V2 backprop ops, which TF has
no kernel for, as the V1 ops); float64 NumPy references on many random configurations;
finite-difference gradients; the adjoint identities of the backprop ops; the op registry's
flags against TF's.
"""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest

import ndflow as tf
from ndflow.core import errors
from ndflow.ops.op_def import lookup
from tests import fixture_modules

FIXTURE = "conv_generic_volume_patches"
CONFIGS = fixture_modules.load(FIXTURE)
TF_VALUES = json.loads((fixture_modules.FIXTURES / FIXTURE / "values.json").read_text())
CASES = CONFIGS.cases(tf)
DIFFERENCES = CONFIGS.differences(tf)
TF_OPS = json.loads((fixture_modules.FIXTURES / "tf_ops" / "tf_2_21_ops.json").read_text())["ops"]


def assert_matches(got, want, where=""):
    """`got` (a recorded result) is `want` (TF's): errors, static shapes, dtypes, shapes and
    integer / bool / string values exactly, floats within CONFIGS.TOLERANCES."""
    if isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), (where, got, want)
        for i, (g, w) in enumerate(zip(got, want)):
            assert_matches(g, w, f"{where}[{i}]")
        return
    if want is None or "error" in want or "static_shape" in want:
        assert got == want, where
        return
    assert isinstance(got, dict) and "error" not in got, (where, got)
    assert (got["dtype"], got["shape"]) == (want["dtype"], want["shape"]), where
    tol = CONFIGS.TOLERANCES.get(want["dtype"])
    if tol is None or not want["values"]:
        assert got["values"] == want["values"], where
        return
    g = np.array(got["values"], dtype=np.float64)
    w = np.array(want["values"], dtype=np.float64)
    rtol, atol = tol
    np.testing.assert_allclose(g, w, rtol=rtol, atol=atol * np.abs(w).max(), err_msg=where)


@pytest.mark.parametrize("name", sorted(CASES))
def test_results_match_tensorflow(name):
    assert_matches(CONFIGS.record(CASES[name]), TF_VALUES["cases"][name], name)


@pytest.mark.parametrize("name", sorted(DIFFERENCES))
def test_deliberate_differences(name):
    """Where TF's eager CPU kernels refuse (recorded: an error) ndflow computes what TF's XLA
    kernel or the V1 op computes; the ExtractVolumePatches shape keeps its rank 5."""
    fn, expected = DIFFERENCES[name]
    tf_result = TF_VALUES["differences"][name]
    want = TF_VALUES["cases"][expected] if isinstance(expected, str) else expected
    assert tf_result != want   # the difference is real
    if isinstance(expected, str):
        assert tf_result["error"] in ("UnimplementedError", "InvalidArgumentError",
                                      "NotFoundError")
    else:
        assert tf_result == {"static_shape": [2, None, None, 24]}
    assert_matches(CONFIGS.record(fn), want, name)


def test_op_flags_are_tensorflows():
    for name in ("Conv", "Conv2DBackpropInputV2", "Conv2DBackpropFilterV2",
                 "ExtractVolumePatches", "RaggedFillEmptyRows", "RaggedFillEmptyRowsGrad"):
        op, want = lookup(name), TF_OPS[name]
        kind = ("function" if op.gradient() else "not_differentiable" if op.not_differentiable
                else "undefined" if op.gradient_undefined else "unmarked")
        assert (op.is_stateful, op.is_commutative, kind) == (
            want["is_stateful"], want["is_commutative"], want["gradient"]), name


def test_public_names_and_raw_ops():
    for name in ("conv", "conv2d_backprop_input_v2", "conv2d_backprop_filter_v2",
                 "extract_volume_patches", "ragged_fill_empty_rows",
                 "ragged_fill_empty_rows_grad"):
        assert getattr(tf.compat.v1, name) is getattr(tf, name)
    x = np.arange(24, dtype=np.float32).reshape(1, 2, 3, 4, 1)
    a = tf.raw_ops.ExtractVolumePatches(input=x, ksizes=[1, 1, 2, 2, 1],
                                        strides=[1, 1, 1, 1, 1], padding="VALID")
    np.testing.assert_array_equal(
        a.numpy(), tf.extract_volume_patches(x, [1, 1, 2, 2, 1], [1] * 5, "VALID").numpy())
    out = tf.raw_ops.RaggedFillEmptyRows(value_rowids=[1], values=[2.0], nrows=2,
                                         default_value=0.0)
    assert type(out).__name__ == "RaggedFillEmptyRows"
    assert out._fields == ("output_value_rowids", "output_values", "empty_row_indicator",
                           "reverse_index_map")
    assert tf.ragged_fill_empty_rows([1], [2.0], 2, 0.0)._fields == out._fields
    assert tf.ragged_fill_empty_rows_grad([0], [1.0, 2.0])._fields == ("d_values",
                                                                       "d_default_value")
    y = tf.raw_ops.Conv(input=x[0], filter=np.ones((2, 2, 1, 3), np.float32), strides=[1] * 4,
                        padding="VALID", batch_dims=1)
    assert y.shape == (2, 2, 3, 3)


# -- NumPy references ------------------------------------------------------------------------


def np_conv(x, w, strides, padding, explicit=(), data_format="CHANNELS_LAST", dilations=(),
            batch_dims=1, groups=1):
    """Float64 N-D grouped convolution, TF's padding arithmetic."""
    rank = x.ndim - batch_dims + 1
    n = rank - 2
    xb = x.reshape((-1,) + x.shape[batch_dims:]).astype(np.float64)
    first = data_format == "CHANNELS_FIRST"
    order = list(range(2, rank)) if first else list(range(1, rank - 1))
    if first:
        xb = np.moveaxis(xb, 1, -1)
    dilations = list(dilations) or [1] * rank
    s = [strides[d] for d in order]
    dl = [dilations[d] for d in order]
    k = w.shape[:n]
    pads, out = [], []
    for i, d in enumerate(order):
        size, eff = xb.shape[1 + i], (k[i] - 1) * dl[i] + 1
        if padding == "SAME":
            o = -(-size // s[i])
            total = max(0, (o - 1) * s[i] + eff - size)
            pads.append((total // 2, total - total // 2))
        elif padding == "VALID":
            pads.append((0, 0))
        else:
            pads.append((explicit[2 * d], explicit[2 * d + 1]))
        out.append((size + sum(pads[-1]) - eff) // s[i] + 1)
    xp = np.pad(xb, [(0, 0)] + pads + [(0, 0)])
    cin, o_all = w.shape[n], w.shape[-1]
    og = o_all // groups
    y = np.zeros([xb.shape[0]] + out + [o_all])
    for kk in np.ndindex(*k):
        sl = tuple(slice(kk[i] * dl[i], kk[i] * dl[i] + (out[i] - 1) * s[i] + 1, s[i])
                   for i in range(n))
        patch = xp[(slice(None),) + sl + (slice(None),)]
        for g in range(groups):
            y[..., g * og:(g + 1) * og] += (patch[..., g * cin:(g + 1) * cin]
                                            @ w[kk][:, g * og:(g + 1) * og].astype(np.float64))
    if first:
        y = np.moveaxis(y, -1, 1)
    return y.reshape(x.shape[:batch_dims] + y.shape[1:])


def _conv_configs():
    rng = np.random.default_rng(40)
    for i in range(40):
        n = 2 if i % 3 else 3
        groups = int(rng.choice([1, 1, 2, 3]))
        cin_g = int(rng.integers(1, 3))
        out = groups * int(rng.integers(1, 3))
        first = bool(i % 4 == 1)
        batch_dims = int(rng.choice([0, 1, 1, 2]))
        padding = str(rng.choice(["SAME", "VALID", "EXPLICIT"] if n == 2 else ["SAME", "VALID"]))
        k = [int(v) for v in rng.integers(1, 4, n)]
        spatial = [int(v) for v in rng.integers(4, 8, n)]
        s = [int(v) for v in rng.integers(1, 3, n)]
        d = [int(v) for v in rng.integers(1, 3, n)]
        d = [dd if (kk - 1) * dd < size else 1 for kk, dd, size in zip(k, d, spatial)]
        rank = n + 2
        sp = list(range(2, rank)) if first else list(range(1, rank - 1))
        strides, dilations = [1] * rank, [1] * rank
        explicit = [0] * (2 * rank) if padding == "EXPLICIT" else []
        for j, dim in enumerate(sp):
            strides[dim], dilations[dim] = s[j], d[j]
            if explicit:
                explicit[2 * dim:2 * dim + 2] = [int(v) for v in rng.integers(0, 3, 2)]
        batch = [int(v) for v in rng.integers(1, 3, batch_dims)]
        shape = batch + ([groups * cin_g] + spatial if first else spatial + [groups * cin_g])
        x = rng.standard_normal(shape)
        w = rng.standard_normal(k + [cin_g, out])
        yield i, x, w, dict(strides=strides, padding=padding, explicit=explicit,
                            data_format="CHANNELS_FIRST" if first else "CHANNELS_LAST",
                            dilations=dilations, batch_dims=batch_dims, groups=groups)


@pytest.mark.parametrize("x,w,kw", [pytest.param(x, w, kw, id=f"{i}-{kw['padding']}-g"
                                                  f"{kw['groups']}-bd{kw['batch_dims']}")
                                     for i, x, w, kw in _conv_configs()])
def test_conv_matches_numpy_float64(x, w, kw):
    want = np_conv(x, w, **kw)
    args = dict(kw)
    args["explicit_paddings"] = args.pop("explicit")
    got = tf.conv(x, w, **args)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-12)
    graph = tf.function(lambda a, b: tf.conv(a, b, **args),
                        input_signature=[tf.TensorSpec(None, tf.float64)] * 2)(x, w)
    np.testing.assert_allclose(graph.numpy(), want, rtol=1e-12, atol=1e-12)


def test_conv_int32_is_exact():
    rng = np.random.default_rng(41)
    x = rng.integers(-1000, 1000, (2, 6, 5, 4)).astype(np.int32)
    w = rng.integers(-1000, 1000, (3, 2, 2, 6)).astype(np.int32)
    got = tf.conv(x, w, [1, 2, 1, 1], "SAME", groups=2, dilations=[1, 1, 2, 1])
    want = np_conv(x, w, [1, 2, 1, 1], "SAME", dilations=[1, 1, 2, 1], groups=2)
    assert got.dtype == tf.int32
    np.testing.assert_array_equal(got.numpy(), want.astype(np.int64))


def test_conv_has_no_gradient_in_graphs_either():
    with tf.Graph().as_default():
        x = tf.compat.v1.placeholder(tf.float32, [1, 3, 3, 1])
        y = tf.conv(x, np.ones((2, 2, 1, 1), np.float32), [1, 1, 1, 1], "SAME")
        with pytest.raises(LookupError, match="Conv"):
            tf.gradients(y, x)
        z = tf.conv2d_backprop_input_v2(x, np.ones((2, 2, 1, 1), np.float32), y, [1] * 4,
                                        "SAME")
        with pytest.raises(LookupError, match="Conv2DBackpropInputV2"):
            tf.gradients(z, y)


def test_conv_errors_name_the_problem():
    x = np.zeros((2, 5, 6, 3), np.float32)
    w = np.zeros((3, 3, 3, 4), np.float32)
    with pytest.raises(errors.InvalidArgumentError, match="Input depth must be equal to "
                                                          "filter depth: 3 vs 2"):
        tf.conv(x, w[:, :, :2], [1] * 4, "SAME")
    with pytest.raises(errors.InvalidArgumentError, match="does not match with groups "
                                                          r"parameter \(2\)"):
        tf.conv(x, w, [1] * 4, "SAME", groups=2)
    with pytest.raises(errors.InvalidArgumentError, match="Computed output size would be "
                                                          "negative: -3"):
        tf.conv(x, np.zeros((9, 3, 3, 4), np.float32), [1] * 4, "VALID")
    with pytest.raises(errors.InvalidArgumentError, match="Explicit padding not supported "
                                                          "for 3D"):
        tf.conv(np.zeros((1, 3, 3, 3, 1), np.float32), np.zeros((1, 1, 1, 1, 1), np.float32),
                [1] * 5, "EXPLICIT", explicit_paddings=[0] * 10)
    with pytest.raises(errors.InvalidArgumentError, match="rank must be the same as filter"):
        tf.conv(x, np.zeros((1, 3, 3, 3, 4), np.float32), [1] * 4, "SAME")
    with tf.Graph().as_default(), pytest.raises(ValueError, match="Number of groups should "
                                                                  "divide output depth"):
        tf.conv(tf.compat.v1.placeholder(tf.float32, [2, 5, 6, 4]),
                np.zeros((3, 3, 2, 3), np.float32), [1] * 4, "SAME", groups=2)


def test_backprop_v2_are_the_adjoints_of_conv2d():
    """<conv2d(x, w), dy> = <x, backprop_input(dy)> = <w, backprop_filter(dy)>, float64, for
    every padding, dilations, groups and both layouts."""
    rng = np.random.default_rng(42)
    for padding, fmt, groups, s, d in itertools.product(
            ["SAME", "VALID", "EXPLICIT"], ["NHWC", "NCHW"], [1, 2], [1, 2], [1, 2]):
        cin, cout = 2 * groups, 2 * groups
        x = rng.standard_normal((2, 7, 6, cin) if fmt == "NHWC" else (2, cin, 7, 6))
        w = rng.standard_normal((3, 2, cin // groups, cout))
        strides = [1, s, s, 1] if fmt == "NHWC" else [1, 1, s, s]
        dilations = [1, d, 1, 1] if fmt == "NHWC" else [1, 1, d, 1]
        explicit = []
        if padding == "EXPLICIT":
            explicit = [0, 0, 1, 2, 0, 1, 0, 0] if fmt == "NHWC" else [0, 0, 0, 0, 1, 2, 0, 1]
        kw = dict(strides=strides, padding=padding, explicit_paddings=explicit,
                  data_format=fmt, dilations=dilations)
        y = tf.nn.conv2d(x, w, strides, padding if not explicit else
                         [list(explicit[2 * i:2 * i + 2]) for i in range(4)],
                         data_format=fmt, dilations=dilations).numpy()
        dy = rng.standard_normal(y.shape)
        dx = tf.conv2d_backprop_input_v2(x, w, dy, **kw).numpy()
        dw = tf.conv2d_backprop_filter_v2(x, w, dy, **kw).numpy()
        assert dx.shape == x.shape and dw.shape == w.shape
        np.testing.assert_allclose((x * dx).sum(), (y * dy).sum(), rtol=1e-11)
        np.testing.assert_allclose((w * dw).sum(), (y * dy).sum(), rtol=1e-11)


def test_backprop_v2_read_only_the_shapes_and_check_out_backprop():
    rng = np.random.default_rng(43)
    x, w = rng.standard_normal((1, 5, 5, 2)), rng.standard_normal((3, 3, 2, 2))
    dy = rng.standard_normal((1, 5, 5, 2))
    a = tf.conv2d_backprop_input_v2(x, w, dy, [1] * 4, "SAME")
    b = tf.conv2d_backprop_input_v2(np.full_like(x, np.nan), w, dy, [1] * 4, "SAME")
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    c = tf.conv2d_backprop_filter_v2(x, np.full_like(w, np.nan), dy, [1] * 4, "SAME")
    np.testing.assert_array_equal(
        c.numpy(), tf.compat.v1.nn.conv2d_backprop_filter(x, w.shape, dy, [1] * 4,
                                                          "SAME").numpy())
    for fn in (tf.conv2d_backprop_input_v2, tf.conv2d_backprop_filter_v2):
        with pytest.raises(errors.InvalidArgumentError, match="Size of out_backprop doesn't "
                                                              "match computed"):
            fn(x, w, dy[:, :3], [1] * 4, "SAME")


def np_volume_patches(x, k, s, padding):
    b, planes, rows, cols, depth = x.shape
    sizes = (planes, rows, cols)
    out, before = [], []
    for n, kk, ss in zip(sizes, k, s):
        if padding == "SAME":   # (TF's Eigen kernel: truncated, negative where the stride
            o = -(-n // ss)     # passes the end)
            before.append(int(((o - 1) * ss + kk - n) / 2))
        else:
            o = (n - kk) // ss + 1
            before.append(0)
        out.append(o)
    y = np.zeros([b] + out + [k[0], k[1], k[2], depth], x.dtype)
    for o in np.ndindex(*out):
        for kk in np.ndindex(*k):
            pos = [o[i] * s[i] + kk[i] - before[i] for i in range(3)]
            if all(0 <= p < n for p, n in zip(pos, sizes)):
                y[(slice(None),) + o + kk] = x[:, pos[0], pos[1], pos[2]]
    return y.reshape([b] + out + [-1])


@pytest.mark.parametrize("seed", range(12))
def test_volume_patches_match_numpy(seed):
    rng = np.random.default_rng(50 + seed)
    x = rng.standard_normal([int(v) for v in rng.integers(1, 7, 5)])
    k = [int(v) for v in rng.integers(1, 4, 3)]
    s = [int(v) for v in rng.integers(1, 4, 3)]
    padding = "SAME" if seed % 2 else "VALID"
    if padding == "VALID" and any(kk > n for kk, n in zip(k, x.shape[1:4])):
        k = [min(kk, n) for kk, n in zip(k, x.shape[1:4])]
    got = tf.extract_volume_patches(x, [1] + k + [1], [1] + s + [1], padding)
    np.testing.assert_array_equal(got.numpy(), np_volume_patches(x, k, s, padding))
    with tf.Graph().as_default():
        y = tf.extract_volume_patches(tf.constant(x), [1] + k + [1], [1] + s + [1], padding)
        assert y.shape.as_list() == list(got.shape)


@pytest.mark.parametrize("padding,k,s", [("SAME", [2, 3, 2], [1, 2, 2]),
                                         ("VALID", [2, 2, 3], [2, 1, 1]),
                                         ("SAME", [3, 1, 4], [3, 3, 1]),
                                         ("SAME", [1, 1, 2], [3, 4, 4])])
def test_volume_patches_gradient_matches_finite_differences(padding, k, s):
    rng = np.random.default_rng(60)
    x = rng.standard_normal((2, 3, 4, 5, 2))
    weights = rng.standard_normal(
        tf.extract_volume_patches(x, [1] + k + [1], [1] + s + [1], padding).shape)

    def f(v):
        return tf.reduce_sum(tf.extract_volume_patches(v, [1] + k + [1], [1] + s + [1],
                                                       padding) ** 2 * weights)
    v = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(v)
        loss = f(v)
    got = tape.gradient(loss, v).numpy()
    eps, want = 1e-6, np.zeros_like(x)
    for i in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[i] = eps
        want[i] = (f(tf.constant(x + step)).numpy() - f(tf.constant(x - step)).numpy()) / (2 * eps)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)


def test_volume_patches_gradient_with_unknown_shapes():
    x = np.random.default_rng(61).standard_normal((2, 3, 4, 5, 2))

    @tf.function(input_signature=[tf.TensorSpec([None, None, None, None, 2], tf.float64)])
    def g(v):
        return tf.gradients(tf.reduce_sum(tf.extract_volume_patches(
            v, [1, 2, 2, 2, 1], [1, 1, 2, 1, 1], "SAME")), v)[0]
    # each voxel's gradient: the number of patches holding it
    ones = np.ones_like(x)
    want = np_volume_patches(ones, [2, 2, 2], [1, 2, 1], "SAME")
    assert g(x).numpy().sum() == want.sum()
    with tf.GradientTape() as tape:
        v = tf.constant(x)
        tape.watch(v)
        y = tf.extract_volume_patches(v, [1, 2, 2, 2, 1], [1, 1, 2, 1, 1], "SAME")
    np.testing.assert_array_equal(g(x).numpy(), tape.gradient(y, v).numpy())


def np_ragged_fill(rowids, values, nrows, default):
    rows = [[] for _ in range(nrows)]
    for i, (r, v) in enumerate(zip(rowids, values)):
        rows[r].append((i, v))
    out_ids, out_vals, reverse = [], [], [0] * len(values)
    for r, entries in enumerate(rows):
        if not entries:
            out_ids.append(r)
            out_vals.append(default)
        for i, v in entries:
            reverse[i] = len(out_vals)
            out_ids.append(r)
            out_vals.append(v)
    return out_ids, out_vals, [not e for e in rows], reverse


@pytest.mark.parametrize("seed", range(8))
def test_ragged_fill_empty_rows_matches_numpy(seed):
    rng = np.random.default_rng(70 + seed)
    nrows, n = int(rng.integers(1, 40)), int(rng.integers(0, 60))
    rowids = rng.integers(0, nrows, n)
    if seed % 2:
        rowids = np.sort(rowids)
    values = rng.standard_normal(n)
    out = tf.ragged_fill_empty_rows(rowids, values, nrows, 0.5)
    want = np_ragged_fill(rowids.tolist(), values.tolist(), nrows, 0.5)
    for got, w in zip(out, want):
        np.testing.assert_array_equal(got.numpy(), w)
    # the gradient: each value's output gradient, the default's the sum at the filled rows
    weights = rng.standard_normal(len(want[1]))
    v, d = tf.constant(values), tf.constant(0.5, tf.float64)
    with tf.GradientTape() as tape:
        tape.watch([v, d])
        loss = tf.reduce_sum(tf.ragged_fill_empty_rows(rowids, v, nrows, d).output_values
                             * weights)
    dv, dd = tape.gradient(loss, [v, d])
    np.testing.assert_array_equal(dv.numpy(), weights[want[3]])
    filled = np.ones(len(weights), bool)
    filled[want[3]] = False
    np.testing.assert_allclose(dd.numpy(), weights[filled].sum(), rtol=1e-12)

    def loss_at(vals, dflt):   # finite differences of the same loss
        out = tf.ragged_fill_empty_rows(rowids, vals, nrows, tf.constant(dflt, tf.float64))
        return float(tf.reduce_sum(out.output_values * weights).numpy())
    eps = 1e-4
    fd = (loss_at(values, 0.5 + eps) - loss_at(values, 0.5 - eps)) / (2 * eps)
    np.testing.assert_allclose(dd.numpy(), fd, rtol=1e-8, atol=1e-9)
    for i in range(min(n, 5)):
        step = np.zeros(n)
        step[i] = eps
        fd = (loss_at(values + step, 0.5) - loss_at(values - step, 0.5)) / (2 * eps)
        np.testing.assert_allclose(dv.numpy()[i], fd, rtol=1e-8, atol=1e-9)


def test_ragged_fill_empty_rows_errors_name_the_row():
    with pytest.raises(errors.InvalidArgumentError, match=r"indices\(2, 0\) is invalid: 4 >= 4"):
        tf.ragged_fill_empty_rows([0, 3, 4], [1.0, 2.0, 3.0], 4, 0.0)
    with pytest.raises(errors.InvalidArgumentError, match=r"indices\(1, 0\) is invalid: -2 >= 4"):
        tf.ragged_fill_empty_rows([0, -2, 9], [1.0, 2.0, 3.0], 4, 0.0)
    with pytest.raises(errors.InvalidArgumentError, match=r"reverse index must be in \[0, 2\) "
                                                          r"but got 2"):
        tf.ragged_fill_empty_rows_grad([0, 2], [1.0, 2.0])


def test_ragged_fill_empty_rows_in_graphs():
    with tf.Graph().as_default():
        out = tf.ragged_fill_empty_rows(tf.constant([2, 2, 0], tf.int64),
                                        tf.constant(["a", "b", "c"]), tf.constant(4, tf.int64),
                                        tf.constant("-"))
        assert [o.shape.as_list() for o in out] == [[None], [None], [None], [3]]
        with tf.compat.v1.Session() as sess:
            ids, vals, empty, rev = sess.run(list(out))
    np.testing.assert_array_equal(ids, [0, 1, 2, 2, 3])
    assert list(vals) == [b"c", b"-", b"a", b"b", b"-"]
    np.testing.assert_array_equal(empty, [False, True, False, True])
    np.testing.assert_array_equal(rev, [2, 3, 0])
