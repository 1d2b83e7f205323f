"""Activations, losses and batch normalization, table-driven (harness.py).

Convolutions and pooling live in test_nn_conv_ops.py and test_nn_pool_ops.py.
"""

import numpy as np
import pytest
import torch

import ndflow as tf
from ndflow.autodiff.gradients import gradients
from ndflow.autodiff.tape import GradientTape
from ndflow.autodiff.vjp import vjp
from ndflow.core import dtypes
from ndflow.core.errors import InvalidArgumentError
from ndflow.core.graph import Graph
from ndflow.core.tensor import EagerTensor
from ndflow.kernels import nn_loss as nn_loss_kernels
from ndflow.kernels import xent_numba
from ndflow.ops import nn_activation, nn_loss, nn_norm
from ndflow.ops.apply import apply_op
from ndflow.ops.array_core import placeholder
from ndflow.runtime.plan import Plan
from ndflow.runtime.state import RuntimeContext
from tests.ops import nn_reference as ref
from tests.ops.harness import OpCase, check_forward, check_gradients

rng = np.random.default_rng(3)
SELU_ALPHA, SELU_SCALE = 1.6732632423543772, 1.0507009873554805


def _r(*shape, lo=-2.0, hi=2.0):
    x = rng.uniform(lo, hi, shape)
    x[np.abs(x) < 0.05] = 0.3   # keep finite differences away from kinks at 0
    return x


def _raw(op_def_, *inputs, **attrs):
    return apply_op(op_def_, list(inputs), attrs).outputs


def _onehot(idx, n):
    return np.eye(n)[idx]


def _sparse_ref(f, lab):
    lsm = ref.log_softmax(f)
    return [-lsm[np.arange(len(lab)), lab], np.exp(lsm) - _onehot(lab, f.shape[1])]


def _elu(x):
    return np.where(x > 0, x, np.expm1(np.minimum(x, 0)))


def _relu6_in(*shape):
    x = rng.uniform(-2.0, 8.0, shape)
    x[np.abs(x) < 0.05] = 0.3
    x[np.abs(x - 6) < 0.05] = 5.5
    return x


LABELS = rng.integers(0, 5, 4)

CASES = [
    OpCase("relu", tf.nn.relu, [_r(3, 4)], lambda x: np.maximum(x, 0)),
    OpCase("relu_grad", lambda g, x: _raw(nn_activation.ReluGrad, g, x)[0], [_r(3, 4), _r(3, 4)],
           lambda g, x: g * (x > 0)),
    OpCase("relu6", tf.nn.relu6, [_relu6_in(3, 4)], lambda x: np.clip(x, 0, 6)),
    OpCase("relu6_grad", lambda g, x: _raw(nn_activation.Relu6Grad, g, x)[0],
           [_r(3, 4), _relu6_in(3, 4)],
           lambda g, x: g * ((x > 0) & (x < 6))),
    OpCase("elu", tf.nn.elu, [_r(3, 4)], _elu),
    OpCase("elu_grad", lambda g, y: _raw(nn_activation.EluGrad, g, y)[0],
           [_r(3, 4), _elu(_r(3, 4))],
           lambda g, y: np.where(y < 0, g * (y + 1), g)),
    OpCase("selu", tf.nn.selu, [_r(3, 4)], lambda x: SELU_SCALE * np.where(
        x > 0, x, SELU_ALPHA * np.expm1(np.minimum(x, 0)))),
    OpCase("selu_grad", lambda g, y: _raw(nn_activation.SeluGrad, g, y)[0],
           [_r(3, 4), _r(3, 4, lo=-1.5)],
           lambda g, y: np.where(y < 0, g * (y + SELU_ALPHA * SELU_SCALE), g * SELU_SCALE)),
    OpCase("leaky_relu", lambda x: tf.nn.leaky_relu(x, alpha=0.1), [_r(3, 4)],
           lambda x: np.where(x > 0, x, 0.1 * x)),
    OpCase("leaky_relu_grad", lambda g, x: _raw(nn_activation.LeakyReluGrad, g, x, alpha=0.3)[0],
           [_r(3, 4), _r(3, 4)], lambda g, x: np.where(x > 0, g, 0.3 * g)),
    OpCase("softplus", tf.nn.softplus, [_r(3, 4)], lambda x: np.log1p(np.exp(x))),
    OpCase("softplus_grad", lambda g, x: _raw(nn_activation.SoftplusGrad, g, x)[0],
           [_r(3, 4), _r(3, 4)],
           lambda g, x: g / (1 + np.exp(-x))),
    OpCase("softmax", tf.nn.softmax, [_r(3, 5)], ref.softmax),
    OpCase("softmax_axis0", lambda x: tf.nn.softmax(x, axis=0), [_r(3, 4, 2)],
           lambda x: ref.softmax(x, 0)),
    OpCase("log_softmax", tf.nn.log_softmax, [_r(3, 5)], ref.log_softmax),
    OpCase("log_softmax_axis1", lambda x: tf.nn.log_softmax(x, axis=1), [_r(2, 4, 3)],
           lambda x: ref.log_softmax(x, 1)),
    OpCase("softmax_xent_raw",
           lambda f, lab: _raw(nn_loss.SoftmaxCrossEntropyWithLogits, f, lab),
           [_r(4, 5), ref.softmax(_r(4, 5))],
           lambda f, lab: [-(lab * ref.log_softmax(f)).sum(1), ref.softmax(f) - lab],
           grad=(0,)),   # TF's gradient ignores backprop's dependence on labels
    OpCase("softmax_xent", lambda lab, f: tf.nn.softmax_cross_entropy_with_logits(lab, f),
           [ref.softmax(_r(4, 5)), _r(4, 5)],
           lambda lab, f: -(lab * ref.log_softmax(f)).sum(1)),
    OpCase("softmax_xent_rank3_axis1",
           lambda lab, f: tf.nn.softmax_cross_entropy_with_logits(lab, f, axis=1),
           [ref.softmax(_r(2, 3, 4), 1), _r(2, 3, 4)],
           lambda lab, f: -(lab * ref.log_softmax(f, 1)).sum(1)),
    OpCase("sparse_xent_raw",
           lambda f, lab: _raw(nn_loss.SparseSoftmaxCrossEntropyWithLogits, f, lab),
           [_r(4, 5), LABELS.astype(np.int64)], _sparse_ref),
    OpCase("sparse_xent", lambda lab, f: tf.nn.sparse_softmax_cross_entropy_with_logits(lab, f),
           [LABELS.astype(np.int32), _r(4, 5)], lambda lab, f: _sparse_ref(f, lab)[0]),
    OpCase("sparse_xent_rank3",
           lambda lab, f: tf.nn.sparse_softmax_cross_entropy_with_logits(lab, f),
           [LABELS.reshape(2, 2).astype(np.int32), _r(2, 2, 5)],
           lambda lab, f: _sparse_ref(f.reshape(4, 5), lab.reshape(4))[0].reshape(2, 2)),
    OpCase("l2_loss", tf.nn.l2_loss, [_r(3, 4)], lambda x: np.sum(x * x) / 2, rtol=1e-5),
    OpCase("bias_add_relu_chain", lambda x, b: tf.nn.relu(tf.nn.bias_add(x, b)),
           [_r(2, 3), _r(3)], lambda x, b: np.maximum(x + b, 0)),
]

_X = _r(2, 3, 4, 3)
_SCALE, _OFFSET = rng.uniform(0.5, 1.5, 3), _r(3)
_MEAN, _VAR = _r(3), rng.uniform(0.5, 1.5, 3)


def _fbn_train(x, s, o, data_format="NHWC"):
    y, m, v = tf.compat.v1.nn.fused_batch_norm(x, s, o, epsilon=0.01, data_format=data_format)
    return [y, m, v]


def _fbn_train_ref(x, s, o, data_format="NHWC"):
    y, m, _, unbiased = ref.batch_norm_train(x, s, o, 0.01, data_format)
    return [y, m, unbiased]


def _fbn_input_grads(dy, x, s, is_training):
    """(dx, dscale) of fused_batch_norm's y for output gradient dy (a FusedBatchNormGradV3)."""
    def bn(x_, s_):
        m, v = (None, None) if is_training else (tf.cast(_MEAN, s_.dtype), tf.cast(_VAR, s_.dtype))
        return [tf.compat.v1.nn.fused_batch_norm(x_, s_, tf.zeros_like(s_), m, v, epsilon=0.01,
                                       is_training=is_training)[0]]
    return vjp(bn, [x, s], [dy])


CASES += [  # batch normalization
    # FusedBatchNormV3 keeps scale/offset/statistics in float for half/bfloat16 x (U != T), so
    # the harness's "cast every input" low-precision run does not apply; see the bf16 test.
    OpCase("fused_bn_train", _fbn_train, [_X, _SCALE, _OFFSET], _fbn_train_ref,
           rtol=1e-4, atol=1e-4, low_precision=False, grad=False),
    # TF's FusedBatchNormV3 gradient covers y only (batch statistics are not differentiated).
    OpCase("fused_bn_train_y", lambda x, s, o: _fbn_train(x, s, o)[0], [_X, _SCALE, _OFFSET],
           lambda x, s, o: _fbn_train_ref(x, s, o)[0], rtol=1e-4, atol=1e-4,
           low_precision=False),
    OpCase("fused_bn_train_nchw", lambda x, s, o: _fbn_train(x, s, o, "NCHW")[0],
           [_X.transpose(0, 3, 1, 2), _SCALE, _OFFSET],
           lambda x, s, o: _fbn_train_ref(x, s, o, "NCHW")[0], rtol=1e-4, atol=1e-4,
           low_precision=False),
    OpCase("fused_bn_inference",
           lambda x, s, o, m, v: tf.compat.v1.nn.fused_batch_norm(x, s, o, m, v, epsilon=0.01,
                                                     is_training=False)[0],
           [_X, _SCALE, _OFFSET, _MEAN, _VAR],
           lambda x, s, o, m, v: ref.batch_norm(x, s, o, m, v, 0.01), rtol=1e-4, atol=1e-4,
           grad=(0, 1, 2), low_precision=False),
    OpCase("fused_bn_raw_outputs",
           lambda x, s, o: _raw(nn_norm.FusedBatchNormV3, x, s, o, np.zeros(0), np.zeros(0),
                                epsilon=0.01)[3:5],
           [_X, _SCALE, _OFFSET],
           lambda x, s, o: list(ref.batch_norm_train(x, s, o, 0.01)[1:3]), grad=False,
           rtol=1e-4, atol=1e-4, low_precision=False),
    # Second order: the (dx, dscale) of FusedBatchNormV3 is a FusedBatchNormGradV3 node, which
    # the harness differentiates again (TF's _FusedBatchNormGradGradV3).
    OpCase("fused_bn_grad_train", lambda dy, x, s: _fbn_input_grads(dy, x, s, True),
           [_r(2, 3, 4, 3), _X, _SCALE], lambda dy, x, s: list(ref.batch_norm_grad(dy, x, s, 0.01)),
           rtol=1e-4, atol=1e-4, low_precision=False, grad_tol=1e-4),
    OpCase("fused_bn_grad_inference", lambda dy, x, s: _fbn_input_grads(dy, x, s, False),
           [_r(2, 3, 4, 3), _X, _SCALE],
           lambda dy, x, s: list(ref.batch_norm_grad(dy, x, s, 0.01, _MEAN, _VAR)),
           rtol=1e-4, atol=1e-4, low_precision=False, grad_tol=1e-4),
    OpCase("batch_normalization",
           lambda x, m, v, o, s: tf.nn.batch_normalization(x, m, v, o, s, 0.01),
           [_X, _MEAN, _VAR, _OFFSET, _SCALE],
           lambda x, m, v, o, s: ref.batch_norm(x, s, o, m, v, 0.01), rtol=1e-4, atol=1e-4),
    OpCase("moments", lambda x: list(tf.nn.moments(x, [0, 1, 2])), [_X],
           lambda x: [x.mean((0, 1, 2)), x.var((0, 1, 2))], rtol=1e-4, atol=1e-4),
    OpCase("moments_keepdims", lambda x: list(tf.nn.moments(x, [1], keepdims=True)), [_X],
           lambda x: [x.mean(1, keepdims=True), x.var(1, keepdims=True)], rtol=1e-4,
           atol=1e-4),
]


def test_fused_bn_exponential_avg_factor():
    x, s, o = (tf.constant(a) for a in (_X, _SCALE, _OFFSET))
    m0, v0 = tf.constant(_MEAN), tf.constant(_VAR)
    _, m, v = tf.compat.v1.nn.fused_batch_norm(x, s, o, m0, v0, epsilon=0.01,
                                               exponential_avg_factor=0.25)
    _, bm, _, unbiased = ref.batch_norm_train(_X, _SCALE, _OFFSET, 0.01)
    np.testing.assert_allclose(m.numpy(), 0.75 * _MEAN + 0.25 * bm, rtol=1e-6)
    np.testing.assert_allclose(v.numpy(), 0.75 * _VAR + 0.25 * unbiased, rtol=1e-6)


def test_fused_bn_bfloat16_with_float_statistics():
    xt = EagerTensor(torch.from_numpy(_X.astype(np.float32)).to(torch.bfloat16),
                     dtypes.bfloat16)
    y, m, v = tf.compat.v1.nn.fused_batch_norm(xt, tf.constant(_SCALE.astype(np.float32)),
                                  tf.constant(_OFFSET.astype(np.float32)), epsilon=0.01)
    assert y.dtype is dtypes.bfloat16 and m.dtype is dtypes.float32
    np.testing.assert_allclose(y.numpy().astype(np.float64), _fbn_train_ref(
        _X, _SCALE, _OFFSET)[0], atol=5e-2, rtol=5e-2)


def test_backward_graph_op_types():
    g = Graph()
    with g.as_default():
        x = placeholder(dtypes.float32, [4, 6])
        lab = placeholder(dtypes.int32, [4])
        loss = tf.nn.sparse_softmax_cross_entropy_with_logits(lab, tf.nn.relu(x))
        gradients([loss], [x])
        bn_x = placeholder(dtypes.float32, [2, 3, 3, 4])
        y, _, _ = tf.compat.v1.nn.fused_batch_norm(bn_x, np.ones(4, np.float32),
                                                   np.zeros(4, np.float32))
        gradients([y], [bn_x])
    types = {op.type for op in g.get_operations() if op.name.startswith("gradients")}
    assert {"ReluGrad", "FusedBatchNormGradV3"} <= types
    assert "SparseSoftmaxCrossEntropyWithLogits" in {op.type for op in g.get_operations()}


def test_relu_second_order():
    x = tf.constant(np.array([-1.0, 2.0, 3.0]))
    with GradientTape() as outer:
        outer.watch(x)
        with GradientTape() as inner:
            inner.watch(x)
            y = tf.nn.relu(x) * x
        dy = inner.gradient(y, x)
    d2 = outer.gradient(dy, x)
    np.testing.assert_allclose(d2.numpy(), [0.0, 2.0, 2.0])


@pytest.mark.parametrize("rows, classes", [(64, 10), (3, 1), (40, 1000), (130, 1000),
                                          (40000, 2), (9001, 10), (5000, 16), (700, 100),
                                          (100, 1024), (2000, 40)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("label_dtype", [np.int32, np.int64])
def test_sparse_xent_one_pass_and_aten_paths_match_float64(rows, classes, dtype, label_dtype):
    # small batches run in one numba pass (kernels/xent_numba.py), large float32 ones of fewer
    # than 16 classes in chunks of rows on ATen's threads, of 64 and more in vectors (with and
    # without a tail of c % 16), the rest on ATen's kernels; logits of large magnitude check
    # the max subtraction
    gen = np.random.default_rng(rows)
    f = (gen.normal(size=(rows, classes)) * 30).astype(dtype)
    lab = gen.integers(0, classes, rows).astype(label_dtype)
    numba_path = rows * classes <= xent_numba.MAX_ELEMENTS or (
        dtype == np.float32 and not xent_numba.SHORT_ROWS <= classes < xent_numba.LONG_ROWS)
    assert xent_numba.applies(torch.from_numpy(f), torch.from_numpy(lab)) is numba_path
    loss, backprop = _raw(nn_loss.SparseSoftmaxCrossEntropyWithLogits, f, lab)
    want_loss, want_backprop = _sparse_ref(f.astype(np.float64), lab)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(loss.numpy(), want_loss, rtol=tol, atol=tol)
    np.testing.assert_allclose(backprop.numpy(), want_backprop, rtol=tol, atol=tol)
    assert loss.dtype == backprop.dtype == tf.as_dtype(dtype)


def test_sparse_xent_vector_rows_keep_nans():
    """A NaN logit makes its row's loss and gradient NaN, as ATen's (and TF's) kernels do,
    in the vector pass (kernels/xent_numba.py) too; the other rows are untouched."""
    f = np.random.default_rng(3).normal(size=(700, 100)).astype(np.float32)
    f[3, 7] = np.nan
    f[5, 99] = np.nan                      # in the tail of c % 16
    lab = np.zeros(700, np.int32)
    assert xent_numba.applies(torch.from_numpy(f), torch.from_numpy(lab))
    loss, backprop = _raw(nn_loss.SparseSoftmaxCrossEntropyWithLogits, f, lab)
    for r in (3, 5):
        assert np.isnan(loss.numpy()[r]) and np.all(np.isnan(backprop.numpy()[r]))
    ok = np.ones(700, bool)
    ok[[3, 5]] = False
    want_loss, want_backprop = _sparse_ref(f[ok].astype(np.float64), lab[ok])
    np.testing.assert_allclose(loss.numpy()[ok], want_loss, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(backprop.numpy()[ok], want_backprop, rtol=1e-5, atol=1e-5)


def test_sparse_xent_label_out_of_range_eager():
    with pytest.raises(InvalidArgumentError, match=r"Received a label value of 10 which is "
                       r"outside the valid range of \[0, 10\)\.  Label values: 1 2 10"):
        tf.nn.sparse_softmax_cross_entropy_with_logits(
            tf.constant(np.array([1, 2, 10], np.int32)), tf.constant(np.zeros((3, 10),
                                                                              np.float32)))
    with pytest.raises(InvalidArgumentError, match="Received a label value of -1"):
        tf.nn.sparse_softmax_cross_entropy_with_logits(
            tf.constant(np.array([1, -1, 2], np.int64)), tf.constant(np.zeros((3, 10),
                                                                              np.float32)))


@pytest.mark.parametrize("classes", [10, 100])
@pytest.mark.parametrize("bad", [-1, "classes", 2**32 + 1, -(2**32) + 3])
def test_sparse_xent_label_out_of_range_in_the_parallel_pass(bad, classes):
    # > 65536 float32 logits: the chunked passes (short rows, vector rows); an int64 label's
    # high word counts too
    rows = 6554
    bad = classes if bad == "classes" else bad
    labels = np.random.default_rng(7).integers(0, classes, rows).astype(np.int64)
    labels[5000] = bad
    logits = np.zeros((rows, classes), np.float32)
    assert xent_numba.applies(torch.from_numpy(logits), torch.from_numpy(labels))
    with pytest.raises(InvalidArgumentError, match=f"Received a label value of {bad} which is "
                       rf"outside the valid range of \[0, {classes}\)"):
        tf.nn.sparse_softmax_cross_entropy_with_logits(tf.constant(labels),
                                                       tf.constant(logits))


def test_sparse_xent_label_out_of_range_graph_names_node():
    g = Graph()
    with g.as_default():
        lab = placeholder(dtypes.int32, [3])
        loss = tf.nn.sparse_softmax_cross_entropy_with_logits(
            lab, tf.constant(np.zeros((3, 10), np.float32)))
    plan = Plan(g, [lab], [loss], [], RuntimeContext())
    with pytest.raises(InvalidArgumentError, match=r"(?s)Received a label value of 10 which "
                       r"is outside the valid range of \[0, 10\).*SparseSoftmaxCrossEntropy"):
        plan.run([torch.tensor([1, 2, 10], dtype=torch.int32)])


@pytest.mark.parametrize("label_dtype", [np.int32, np.int64])
def test_sparse_xent_gpu_form_gives_nan_rows_for_labels_out_of_range(label_dtype):
    # TensorFlow's GPU kernel raises nothing for a label outside [0, classes): that row of the
    # loss and of the gradient is NaN, the others as usual (the form ndflow runs on a GPU,
    # checked here on CPU tensors; tests/runtime/test_gpu.py runs it on a GPU)
    gen = np.random.default_rng(5)
    f = gen.normal(size=(5, 7))
    lab = np.array([3, -1, 6, 7, 0], label_dtype)
    loss, backprop = nn_loss_kernels.sparse_xent_nan_rows(torch.tensor(f), torch.tensor(lab))
    good = np.array([0, 2, 4])
    want_loss, want_backprop = _sparse_ref(f[good], lab[good])
    np.testing.assert_allclose(loss.numpy()[good], want_loss, rtol=1e-12)
    np.testing.assert_allclose(backprop.numpy()[good], want_backprop, rtol=1e-12)
    assert np.isnan(loss.numpy()[[1, 3]]).all() and np.isnan(backprop.numpy()[[1, 3]]).all()
    # no classes: every row NaN; no rows: empty outputs
    loss, backprop = nn_loss_kernels.sparse_xent_nan_rows(torch.zeros(3, 0), torch.tensor(lab[:3]))
    assert np.isnan(loss.numpy()).all() and loss.shape == (3,) and backprop.shape == (3, 0)
    loss, backprop = nn_loss_kernels.sparse_xent_nan_rows(torch.zeros(0, 4),
                                                          torch.tensor(lab[:0]))
    assert loss.shape == (0,) and backprop.shape == (0, 4)


def test_sparse_xent_rank_mismatch():
    with pytest.raises(ValueError, match=r"Rank mismatch: Rank of labels \(received 2\) should "
                       r"equal rank of logits minus 1 \(received 2\)"):
        tf.nn.sparse_softmax_cross_entropy_with_logits(
            tf.constant(np.zeros((3, 1), np.int32)), tf.constant(np.zeros((3, 10), np.float32)))


def test_softmax_xent_v1_stops_label_gradient():
    g = Graph()
    with g.as_default():
        lab = placeholder(dtypes.float32, [2, 3])
        logits = placeholder(dtypes.float32, [2, 3])
        loss = tf.compat.v1.nn.softmax_cross_entropy_with_logits(labels=lab, logits=logits)
        gl, gx = gradients([loss], [lab, logits])
    assert gl is None and gx is not None


def test_leaky_relu_int_input_is_cast_to_float():
    y = tf.nn.leaky_relu(tf.constant(np.array([-2, 3], np.int32)))
    assert y.dtype is dtypes.float32
    np.testing.assert_allclose(y.numpy(), [-0.4, 3.0], rtol=1e-6)


def test_activation_dtype_errors():
    # TF: the kernel lookup's InvalidArgumentError eagerly, the graph builder's TypeError
    with pytest.raises(tf.errors.InvalidArgumentError, match="Value for attr 'T' of int32 is "
                       "not in the list of allowed values: half, bfloat16, float, double"):
        tf.nn.softmax(tf.constant(np.array([1, 2], np.int32)))
    with tf.Graph().as_default(), pytest.raises(
            TypeError, match="DataType int32 not in list of allowed values"):
        tf.nn.softmax(tf.constant(np.array([1, 2], np.int32)))


SIGMOID_XENT = OpCase(
    "sigmoid_xent", lambda z, x: tf.nn.sigmoid_cross_entropy_with_logits(labels=z, logits=x),
    [rng.uniform(0, 1, (3, 4)), _r(3, 4)],
    lambda z, x: np.maximum(x, 0) - x * z + np.log1p(np.exp(-np.abs(x))))


def test_sigmoid_xent():
    check_forward(SIGMOID_XENT)
    check_gradients(SIGMOID_XENT)


def test_dropout_statistics_and_scaling():
    x = tf.constant(np.ones((200, 50), np.float32))
    y = tf.nn.dropout(x, rate=0.25, seed=3).numpy()
    assert set(np.unique(y)) <= {0.0, np.float32(1 / 0.75)}
    assert abs((y == 0).mean() - 0.25) < 0.03


def test_dropout_noise_shape_broadcasts_mask():
    x = tf.constant(np.ones((4, 30), np.float32))
    y = tf.nn.dropout(x, 0.5, noise_shape=[1, 30], seed=1).numpy()
    assert (y == y[0]).all()


def test_dropout_rate_zero_and_errors():
    x = tf.constant(np.ones((3,), np.float32))
    assert tf.nn.dropout(x, 0.0) is x
    with pytest.raises(ValueError, match=r"`rate` must be a scalar tensor or a float in the "
                       r"range \[0, 1\)"):
        tf.nn.dropout(x, 1.0)
    with pytest.raises(ValueError, match="must be a floating point tensor"):
        tf.nn.dropout(tf.constant(np.ones(3, np.int32)), 0.5)
    with pytest.raises(ValueError, match="cannot specify both"):
        tf.compat.v1.nn.dropout(x, keep_prob=0.5, rate=0.5)


def test_dropout_v1_keep_prob_graph_and_gradient():
    g = Graph()
    with g.as_default():
        x = placeholder(dtypes.float32, [64, 16])
        y = tf.compat.v1.nn.dropout(x, keep_prob=0.8, seed=5)
        assert y.shape.as_list() == [64, 16]
        (dx,) = gradients([y], [x])
    xv = rng.uniform(1, 2, (64, 16)).astype(np.float32)
    yv, dxv = Plan(g, [x], [y, dx], [], RuntimeContext()).run([torch.from_numpy(xv)])
    yv, dxv = yv.numpy(), dxv.numpy()
    kept = yv != 0
    np.testing.assert_allclose(yv[kept], xv[kept] / 0.8, rtol=1e-6)
    np.testing.assert_allclose(dxv, kept / 0.8, rtol=1e-6)
    assert {"RandomUniform", "GreaterEqual", "SelectV2"} <= {op.type for op in
                                                             g.get_operations()}


def test_v1_nn_names_are_the_tf1_functions():
    """tf.compat.v1.nn holds TF1's signatures; tf.nn TF2's (same values where they overlap)."""
    x = tf.constant(_r(2, 5))
    np.testing.assert_allclose(tf.compat.v1.nn.softmax(x, dim=0).numpy(),
                               tf.nn.softmax(x, axis=0).numpy(), rtol=1e-6)
    np.testing.assert_allclose(tf.compat.v1.nn.log_softmax(x, dim=0).numpy(),
                               tf.nn.log_softmax(x, axis=0).numpy(), rtol=1e-6)
    with pytest.raises(TypeError):
        tf.nn.softmax(x, dim=0)  # TF2 has no `dim`
    assert tf.compat.v1.nn.relu is tf.nn.relu  # identical in TensorFlow too
    assert tf.compat.v1.nn.conv2d is not tf.nn.conv2d
    with pytest.raises(ValueError, match="Cannot specify both 'dim' and 'axis'"):
        tf.compat.v1.nn.softmax_cross_entropy_with_logits_v2(x, x, axis=0, dim=0)
