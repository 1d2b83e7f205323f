"""tf.keras.layers.SimpleRNN/LSTM/GRU, their cells, RNN, StackedRNNCells and Bidirectional:
values against NumPy float64 step-by-step references (eagerly and in tf.function with unknown
batch and time dims; masks, go_backwards, initial states, return_state), gradients against
finite differences of the reference, Keras 3's outputs, masks and configs for fixed weights
(tests/fixtures/keras_rnn_layers), config round trips, the default initializers, dropout,
and Keras' errors."""

from __future__ import annotations

import json
import os
import re

import numpy as np
import pytest

import ndflow as tf
from ndflow.ops.init_orthogonal import Orthogonal
from tests.keras.layer_checks import numeric_grad

layers = tf.keras.layers
FIXTURE = os.path.join(os.path.dirname(__file__), "..", "fixtures", "keras_rnn_layers")
with open(os.path.join(FIXTURE, "cases.json")) as _f:
    META = json.load(_f)
with np.load(os.path.join(FIXTURE, "arrays.npz")) as _z:
    ARRAYS = dict(_z)
CASES = sorted(META["cases"])
CASES.remove("_cells")

# -- NumPy float64 references ------------------------------------------------------------------


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


ACT = {"tanh": np.tanh, "sigmoid": _sigmoid, "relu": lambda x: np.maximum(x, 0.0),
       "hard_sigmoid": lambda x: np.clip(x / 6.0 + 0.5, 0.0, 1.0), "linear": lambda x: x}


def np_simple(w, act="tanh"):
    k, rk = w[0], w[1]
    b = w[2] if len(w) > 2 else 0.0

    def step(x, states):
        h = ACT[act](x @ k + b + states[0] @ rk)
        return h, [h]
    return step


def np_lstm(w, act="tanh", rec="sigmoid"):
    k, rk = w[0], w[1]
    b = w[2] if len(w) > 2 else 0.0

    def step(x, states):
        h, c = states
        i, f, g, o = np.split(x @ k + h @ rk + b, 4, axis=1)
        c = ACT[rec](f) * c + ACT[rec](i) * ACT[act](g)
        h = ACT[rec](o) * ACT[act](c)
        return h, [h, c]
    return step


def np_gru(w, reset_after=True, act="tanh", rec="sigmoid"):
    k, rk = w[0], w[1]
    u = rk.shape[0]
    if len(w) > 2:
        b_in, b_rec = (w[2][0], w[2][1]) if reset_after else (w[2], np.zeros(3 * u))
    else:
        b_in = b_rec = np.zeros(3 * u)

    def step(x, states):
        h = states[0]
        xz, xr, xh = np.split(x @ k + b_in, 3, axis=1)
        if reset_after:
            rz, rr, rh = np.split(h @ rk + b_rec, 3, axis=1)
            z, r = ACT[rec](xz + rz), ACT[rec](xr + rr)
            hh = ACT[act](xh + r * rh)
        else:
            z = ACT[rec](xz + h @ rk[:, :u])
            r = ACT[rec](xr + h @ rk[:, u:2 * u])
            hh = ACT[act](xh + (r * h) @ rk[:, 2 * u:])
        h = z * h + (1 - z) * hh
        return h, [h]
    return step


def np_rnn(step, x, states, mask=None, go_backwards=False, zero_output_for_mask=False):
    """(outputs (batch, time, units) in processing order, last output, final states)."""
    order = range(x.shape[1])[::-1] if go_backwards else range(x.shape[1])
    outputs, prev = [], None
    for t in order:
        out, new = step(x[:, t], states)
        if mask is not None:
            m = mask[:, t][:, None]
            fallback = np.zeros_like(out) if zero_output_for_mask or prev is None else prev
            out = np.where(m, out, fallback)
            new = [np.where(m, n, s) for n, s in zip(new, states)]
        states, prev = new, out
        outputs.append(out)
    return np.stack(outputs, 1), prev, states


def reference_step(layer, weights):
    """The NumPy step of a SimpleRNN/LSTM/GRU layer (or cell) with these weights."""
    cell = getattr(layer, "cell", layer)
    act = tf.keras.activations.serialize(cell.activation)
    if isinstance(cell, layers.LSTMCell):
        return np_lstm(weights, act, tf.keras.activations.serialize(cell.recurrent_activation))
    if isinstance(cell, layers.GRUCell):
        return np_gru(weights, cell.reset_after, act,
                      tf.keras.activations.serialize(cell.recurrent_activation))
    return np_simple(weights, act)


def n_states(layer) -> int:
    return 2 if isinstance(layer, layers.LSTM) else 1


def random_layer(cls, units=3, features=2, scale=0.8, seed=0, **kwargs):
    """A float64 layer built for `features` inputs with random weights."""
    layer = cls(units, dtype="float64", **kwargs)
    layer.build((None, None, features))
    rng = np.random.default_rng(seed)
    layer.set_weights([rng.uniform(-scale, scale, w.shape.as_list()) for w in layer.weights])
    return layer


MASK = np.array([[True, True, False, True, False], [False, True, True, True, True],
                 [True, True, True, True, True]])

# -- values against the references -------------------------------------------------------------

VARIANTS = [
    (layers.SimpleRNN, {}),
    (layers.LSTM, {}),
    (layers.LSTM, {"activation": "relu", "recurrent_activation": "hard_sigmoid"}),
    (layers.GRU, {}),
    (layers.GRU, {"reset_after": False}),
    (layers.GRU, {"use_bias": False}),
]


def _ids(v):
    return f"{v[0].__name__}-{'-'.join(f'{k}={x}' for k, x in v[1].items()) or 'default'}"


def _call_options():
    return [(False, False, None), (True, True, None), (True, False, MASK),
            (False, True, MASK)]


@pytest.mark.parametrize("variant", VARIANTS, ids=_ids)
def test_values_eager_match_reference(variant):
    cls, kwargs = variant
    rng = np.random.default_rng(1)
    x = rng.normal(size=(3, 5, 2))
    for go_backwards, with_state, mask in _call_options():
        layer = random_layer(cls, go_backwards=go_backwards, return_sequences=True,
                             return_state=True, **kwargs)
        weights = layer.get_weights()
        init = [rng.normal(size=(3, 3)) for _ in range(n_states(layer))] if with_state \
            else [np.zeros((3, 3))] * n_states(layer)
        seq, last, states = np_rnn(reference_step(layer, weights), x, init, mask, go_backwards)
        out = layer(tf.constant(x), mask=None if mask is None else tf.constant(mask),
                    initial_state=[tf.constant(s) for s in init] if with_state else None)
        assert isinstance(out, tuple) and len(out) == 1 + n_states(layer)
        np.testing.assert_allclose(out[0].numpy(), seq, rtol=1e-12, atol=1e-12)
        for got, want in zip(out[1:], states):
            np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(states[0], last)  # the last output is the first state
        last_only = random_layer(cls, go_backwards=go_backwards, **kwargs)
        last_only.set_weights(weights)
        got = last_only(tf.constant(x), mask=None if mask is None else tf.constant(mask),
                        initial_state=[tf.constant(s) for s in init] if with_state else None)
        np.testing.assert_allclose(got.numpy(), last, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("cls", [layers.SimpleRNN, layers.LSTM, layers.GRU],
                         ids=lambda c: c.__name__)
def test_tf_function_unknown_batch_and_time(cls):
    layer = random_layer(cls, return_sequences=True, return_state=True, go_backwards=True)
    weights = layer.get_weights()
    spec = [tf.TensorSpec([None, None, 2], tf.float64), tf.TensorSpec([None, None], tf.bool)]

    @tf.function(input_signature=spec)
    def run(x, mask):
        out = layer(x, mask=mask)
        assert out[0].shape.as_list() == [None, None, 3]
        assert all(s.shape.as_list() == [None, 3] for s in out[1:])
        return out

    rng = np.random.default_rng(2)
    for batch, steps in ((3, 5), (2, 7)):
        x = rng.normal(size=(batch, steps, 2))
        mask = rng.uniform(size=(batch, steps)) > 0.3
        init = [np.zeros((batch, 3))] * n_states(layer)
        seq, _, states = np_rnn(reference_step(layer, weights), x, init, mask, True)
        out = run(tf.constant(x), tf.constant(mask))
        np.testing.assert_allclose(out[0].numpy(), seq, rtol=1e-12, atol=1e-12)
        for got, want in zip(out[1:], states):
            np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-12)
    ops = {op.type for op in run.get_concrete_function().graph.get_operations()}
    assert ops & {"While", "StatelessWhile"}


def test_unroll_in_graph_is_a_python_loop_and_needs_static_time():
    layer = random_layer(layers.LSTM, unroll=True, return_sequences=True)
    x = np.random.default_rng(3).normal(size=(2, 4, 2))
    want = np_rnn(reference_step(layer, layer.get_weights()), x, [np.zeros((2, 3))] * 2)[0]

    @tf.function(input_signature=[tf.TensorSpec([None, 4, 2], tf.float64)])
    def run(x):
        return layer(x)

    np.testing.assert_allclose(run(tf.constant(x)).numpy(), want, rtol=1e-12)
    ops = {op.type for op in run.get_concrete_function().graph.get_operations()}
    assert not ops & {"While", "StatelessWhile"}

    @tf.function(input_signature=[tf.TensorSpec([None, None, 2], tf.float64)])
    def unknown_time(x):
        return layer(x)

    with pytest.raises(ValueError, match="Cannot unroll a RNN if the time dimension is "
                                         "undefined"):
        unknown_time(tf.constant(x))


def test_cells_called_directly():
    rng = np.random.default_rng(4)
    x, h, c = rng.normal(size=(2, 3)), rng.normal(size=(2, 4)), rng.normal(size=(2, 4))
    for cell, states in ((layers.SimpleRNNCell(4, dtype="float64"), [h]),
                         (layers.LSTMCell(4, dtype="float64"), [h, c]),
                         (layers.GRUCell(4, dtype="float64"), [h]),
                         (layers.GRUCell(4, reset_after=False, dtype="float64"), [h])):
        out, new = cell(tf.constant(x), [tf.constant(s) for s in states])
        want_out, want_new = reference_step(cell, cell.get_weights())(x, states)
        np.testing.assert_allclose(out.numpy(), want_out, rtol=1e-12)
        assert len(new) == len(want_new)
        for got, want in zip(new, want_new):
            np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)
    single, single_state = layers.GRUCell(2)(tf.ones([1, 3]), tf.zeros([1, 2]))
    assert isinstance(single_state, tf.Tensor)  # a bare state in, a bare state out


def test_generic_rnn_and_stacked_cells_match_reference():
    rng = np.random.default_rng(5)
    x = rng.normal(size=(2, 4, 3))
    cells = layers.StackedRNNCells([layers.SimpleRNNCell(3, dtype="float64"),
                                    layers.LSTMCell(2, dtype="float64")], dtype="float64")
    rnn = layers.RNN(cells, return_sequences=True, return_state=True, dtype="float64")
    rnn.build((None, None, 3))
    w = [rng.uniform(-0.8, 0.8, v.shape.as_list()) for v in rnn.weights]
    rnn.set_weights(w)
    first, second = np_simple(w[:3]), np_lstm(w[3:])

    def step(xt, states):
        h1, new1 = first(xt, [states[0]])
        h2, new2 = second(h1, states[1:])
        return h2, new1 + new2

    seq, _, states = np_rnn(step, x, [np.zeros((2, 3)), np.zeros((2, 2)), np.zeros((2, 2))],
                            MASK[:2, :4])
    out = rnn(tf.constant(x), mask=tf.constant(MASK[:2, :4]))
    np.testing.assert_allclose(out[0].numpy(), seq, rtol=1e-12)
    np.testing.assert_allclose(out[1][0].numpy(), states[0], rtol=1e-12)
    np.testing.assert_allclose(out[2][0].numpy(), states[1], rtol=1e-12)
    np.testing.assert_allclose(out[2][1].numpy(), states[2], rtol=1e-12)


def test_zero_output_for_mask():
    layer = layers.RNN(layers.GRUCell(3, dtype="float64"), return_sequences=True,
                       zero_output_for_mask=True, dtype="float64")
    x = np.random.default_rng(6).normal(size=(3, 5, 2))
    out = layer(tf.constant(x), mask=tf.constant(MASK)).numpy()
    seq = np_rnn(np_gru(layer.get_weights()), x, [np.zeros((3, 3))], MASK,
                 zero_output_for_mask=True)[0]
    np.testing.assert_allclose(out, seq, rtol=1e-12)
    assert np.all(out[~MASK] == 0)


# -- gradients ---------------------------------------------------------------------------------

@pytest.mark.parametrize("graph", [False, True], ids=["eager", "tf_function"])
@pytest.mark.parametrize("cls,kwargs", [(layers.SimpleRNN, {}), (layers.LSTM, {}),
                                        (layers.GRU, {}), (layers.GRU, {"reset_after": False})],
                         ids=["SimpleRNN", "LSTM", "GRU", "GRU-reset_before"])
def test_gradients_match_finite_differences(cls, kwargs, graph):
    layer = random_layer(cls, units=2, features=2, return_sequences=True, return_state=True,
                         go_backwards=True, **kwargs)
    rng = np.random.default_rng(7)
    x = rng.normal(size=(2, 3, 2))
    mask = np.array([[True, False, True], [True, True, False]])
    r_seq, r_state = rng.normal(size=(2, 3, 2)), rng.normal(size=(2, 2))
    weights = layer.get_weights()

    def loss_np(x, weights):
        seq, _, states = np_rnn(reference_step(layer, weights), x,
                                [np.zeros((2, 2))] * n_states(layer), mask, True)
        return float(np.sum(seq * r_seq) + np.sum(states[-1] * r_state))

    def loss_and_grads(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            out = layer(x, mask=tf.constant(mask))
            loss = tf.reduce_sum(out[0] * r_seq) + tf.reduce_sum(out[-1] * r_state)
        return loss, tape.gradient(loss, [x] + layer.trainable_weights)

    run = tf.function(loss_and_grads) if graph else loss_and_grads
    loss, grads = run(tf.constant(x))
    np.testing.assert_allclose(float(loss), loss_np(x, weights), rtol=1e-12)
    np.testing.assert_allclose(grads[0].numpy(), numeric_grad(lambda v: loss_np(v, weights), x),
                               rtol=1e-6, atol=1e-8)
    for i, g in enumerate(grads[1:]):
        def f(v, i=i):
            ws = list(weights)
            ws[i] = v
            return loss_np(x, ws)
        np.testing.assert_allclose(tf.convert_to_tensor(g).numpy(), numeric_grad(f, weights[i]),
                                   rtol=1e-6, atol=1e-8)


def test_bidirectional_gradients_in_tf_function():
    layer = layers.Bidirectional(random_layer(layers.GRU, units=2, return_sequences=True))
    layer.build((None, None, 2))
    x = np.random.default_rng(8).normal(size=(2, 3, 2))

    @tf.function
    def grads(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            loss = tf.reduce_sum(tf.sin(layer(x)))
        return tape.gradient(loss, [x] + layer.trainable_weights)

    got = grads(tf.constant(x))
    assert len(got) == 7
    fw, bw = layer.forward_layer.get_weights(), layer.backward_layer.get_weights()

    def loss_np(v):
        f = np_rnn(np_gru(fw), v, [np.zeros((2, 2))])[0]
        b = np_rnn(np_gru(bw), v, [np.zeros((2, 2))], go_backwards=True)[0][:, ::-1]
        return float(np.sum(np.sin(np.concatenate([f, b], -1))))
    np.testing.assert_allclose(got[0].numpy(), numeric_grad(loss_np, x), rtol=1e-6, atol=1e-7)


# -- Keras 3 fixture ---------------------------------------------------------------------------

def make(spec):
    kwargs = dict(spec["kwargs"])
    for key in ("cell", "layer"):
        if key in kwargs:
            kwargs[key] = make(kwargs[key])
    if "cells" in kwargs:
        kwargs["cell"] = [make(c) for c in kwargs.pop("cells")]
    return getattr(layers, spec["cls"])(**kwargs)


def without_names(obj):
    """A config with the layer names dropped (Keras' and ndflow's name counters differ)."""
    if isinstance(obj, dict):
        return {k: without_names(v) for k, v in obj.items() if k != "name"}
    if isinstance(obj, list):
        return [without_names(v) for v in obj]
    return obj


def _short_path(path: str) -> str:
    """A weight's path without Keras' _<n> name counters."""
    return "/".join(re.sub(r"_\d+$", "", p) for p in path.split("/"))


def _replay(name):
    meta = META["cases"][name]
    layer = make(meta["spec"])
    layer.build(tuple(meta["shape"]))
    n_weights = len(meta["weight_paths"])
    layer.set_weights([ARRAYS[f"{name}/w{i}"] for i in range(n_weights)])
    kwargs = {}
    if f"{name}/mask" in ARRAYS:
        kwargs["mask"] = tf.constant(ARRAYS[f"{name}/mask"])
    if meta["n_states"]:
        kwargs["initial_state"] = [tf.constant(ARRAYS[f"{name}/s{i}"])
                                   for i in range(meta["n_states"])]
    return layer, meta, kwargs


@pytest.mark.parametrize("name", CASES)
def test_keras_fixture(name):
    layer, meta, kwargs = _replay(name)
    assert [_short_path(w.path) for w in layer.weights] == \
        [_short_path(p) for p in meta["weight_paths"]]
    out = layer(tf.constant(ARRAYS[f"{name}/x"]), **kwargs)
    outs = list(out) if isinstance(out, tuple) else [out]
    assert len(outs) == meta["n_outputs"]
    for i, y in enumerate(outs):
        got = np.stack([t.numpy() for t in y]) if isinstance(y, list) else y.numpy()
        np.testing.assert_allclose(got, ARRAYS[f"{name}/y{i}"], rtol=1e-5, atol=1e-6,
                                   err_msg=f"{name} output {i}")
        mask = None if isinstance(y, list) else getattr(y, "_keras_mask", None)
        assert (mask is not None) == meta["has_mask"][i], f"{name} output {i} mask"
        if mask is not None:
            np.testing.assert_array_equal(mask.numpy(), ARRAYS[f"{name}/ymask{i}"])
    config = json.loads(json.dumps(layer.get_config()))
    assert without_names(config) == without_names(meta["config"])
    shape = json.loads(json.dumps(layer.compute_output_shape(tuple(meta["shape"]))))
    assert shape == meta["output_shape"]


@pytest.mark.parametrize("name", ["gru_seq_mask", "rnn_stacked",
                                  "bidirectional_simple_none_state"])
def test_keras_fixture_in_tf_function(name):
    layer, meta, kwargs = _replay(name)
    x = ARRAYS[f"{name}/x"]
    mask = kwargs.pop("mask", None)
    init = kwargs.pop("initial_state", None)

    @tf.function(input_signature=[tf.TensorSpec([None, None, x.shape[-1]], tf.float32)])
    def run(x):
        return layer(x, mask=mask, initial_state=init)

    out = run(tf.constant(x))
    outs = list(out) if isinstance(out, tuple) else [out]
    for i, y in enumerate(outs):
        got = np.stack([t.numpy() for t in y]) if isinstance(y, list) else y.numpy()
        np.testing.assert_allclose(got, ARRAYS[f"{name}/y{i}"], rtol=1e-5, atol=1e-6)


def test_cell_configs_match_keras():
    for cls_name, want in META["cases"]["_cells"].items():
        config = json.loads(json.dumps(getattr(layers, cls_name)(3).get_config()))
        assert without_names(config) == without_names(want), cls_name


@pytest.mark.parametrize("name", ["simple_rnn_seq", "lstm_seq_state_backwards_mask",
                                  "gru_reset_before_state", "rnn_lstm_cell_zero_output",
                                  "rnn_stacked", "bidirectional_lstm_concat",
                                  "bidirectional_simple_none_state"])
def test_config_round_trip(name):
    layer, meta, kwargs = _replay(name)
    config = layer.get_config()
    clone = type(layer).from_config(config)
    assert clone.get_config() == config
    again = layers.deserialize(json.loads(json.dumps(layers.serialize(layer))))
    assert type(again) is type(layer) and again.built
    assert without_names(json.loads(json.dumps(again.get_config()))) == \
        without_names(json.loads(json.dumps(config)))
    assert [w.shape.as_list() for w in again.weights] == [w.shape.as_list()
                                                          for w in layer.weights]
    again.set_weights(layer.get_weights())
    x = tf.constant(ARRAYS[f"{name}/x"])
    a, b = layer(x, **kwargs), again(x, **kwargs)
    for u, v in zip(tf.nest.flatten(a), tf.nest.flatten(b)):
        np.testing.assert_array_equal(u.numpy(), v.numpy())


# -- masks from tensors ------------------------------------------------------------------------

def test_mask_travels_on_the_input_tensor():
    layer = random_layer(layers.LSTM, return_sequences=True)
    x = tf.constant(np.random.default_rng(9).normal(size=(3, 5, 2)))
    want = layer(x, mask=tf.constant(MASK))
    x._keras_mask = tf.constant(MASK)
    got = layer(x)
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    np.testing.assert_array_equal(got._keras_mask.numpy(), MASK)
    last = random_layer(layers.GRU)(x)
    assert getattr(last, "_keras_mask", None) is None


def test_embedding_mask_zero_into_lstm():
    if not hasattr(layers, "Embedding"):
        pytest.skip("Embedding not in this tree")
    ids = np.array([[3, 1, 0, 0], [2, 4, 4, 0]])
    emb = layers.Embedding(5, 2, mask_zero=True, dtype="float64")
    lstm = random_layer(layers.LSTM, return_sequences=True)
    out = lstm(emb(tf.constant(ids)))
    np.testing.assert_array_equal(out._keras_mask.numpy(), ids != 0)
    vectors = emb.get_weights()[0][ids]
    want = np_rnn(reference_step(lstm, lstm.get_weights()), vectors, [np.zeros((2, 3))] * 2,
                  ids != 0)[0]
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-12)


# -- dropout -----------------------------------------------------------------------------------

def _identity_rnn(**kwargs):
    """A linear SimpleRNN whose output is its (dropped-out) input."""
    layer = layers.SimpleRNN(4, activation=None, return_sequences=True, dtype="float64",
                             **kwargs)
    layer.build((None, None, 4))
    layer.set_weights([np.eye(4), np.zeros((4, 4)), np.zeros(4)])
    return layer


@pytest.mark.parametrize("graph", [False, True], ids=["eager", "tf_function"])
def test_dropout_mask_is_the_same_at_every_step(graph):
    layer = _identity_rnn(dropout=0.5, seed=3)
    x = np.random.default_rng(10).uniform(1, 2, size=(8, 6, 4))

    def run(x, training):
        return layer(x, training=training)

    fn = tf.function(run) if graph else run
    np.testing.assert_allclose(fn(tf.constant(x), False).numpy(), x)
    ratio = fn(tf.constant(x), True).numpy() / x
    np.testing.assert_allclose(ratio, ratio[:, :1, :].repeat(6, axis=1))
    assert set(np.round(np.unique(ratio), 12)) == {0.0, 2.0}
    assert layer.cell._dropout_mask is None  # reset after the call


def test_recurrent_dropout_uses_per_gate_masks_and_trains():
    layer = random_layer(layers.LSTM, dropout=0.3, recurrent_dropout=0.4, seed=1)
    assert layer.cell.implementation == 1
    x = tf.constant(np.random.default_rng(11).normal(size=(4, 5, 2)))
    inference = layer(x).numpy()
    want = np_rnn(reference_step(layer, layer.get_weights()), x.numpy(),
                  [np.zeros((4, 3))] * 2)[1]
    np.testing.assert_allclose(inference, want, rtol=1e-12)
    with tf.GradientTape() as tape:
        out = layer(x, training=True)
        loss = tf.reduce_sum(out)
    assert not np.allclose(out.numpy(), inference)
    grads = tape.gradient(loss, layer.trainable_weights)
    assert all(np.all(np.isfinite(g.numpy())) for g in grads)
    assert layer.cell._recurrent_dropout_mask is None


# -- default initializers ----------------------------------------------------------------------

def test_default_initializers():
    lstm = layers.LSTM(8)
    lstm.build((None, None, 64))
    kernel, recurrent, bias = (w.numpy() for w in lstm.weights)
    assert kernel.dtype == np.float32 and kernel.shape == (64, 32)
    limit = np.sqrt(6.0 / (64 + 32))  # glorot_uniform
    assert np.abs(kernel).max() <= np.float32(limit)   # the bound as float32 (it rounds up)
    assert abs(kernel.var() / (limit ** 2 / 3) - 1) < 0.15
    np.testing.assert_allclose(recurrent @ recurrent.T, np.eye(8), atol=1e-5)  # orthogonal rows
    np.testing.assert_array_equal(bias, np.r_[np.zeros(8), np.ones(8), np.zeros(16)])
    no_forget = layers.LSTM(2, unit_forget_bias=False, bias_initializer="ones")
    no_forget.build((None, None, 3))
    np.testing.assert_array_equal(no_forget.weights[2].numpy(), np.ones(8))
    gru = layers.GRU(5)
    gru.build((None, None, 3))
    assert gru.weights[2].shape.as_list() == [2, 15]
    assert not gru.weights[2].numpy().any()
    rec = gru.weights[1].numpy()
    np.testing.assert_allclose(rec @ rec.T, np.eye(5), atol=1e-5)
    gru_before = layers.GRU(5, reset_after=False)
    gru_before.build((None, None, 3))
    assert gru_before.weights[2].shape.as_list() == [15]
    simple = layers.SimpleRNN(6)
    simple.build((None, None, 3))
    rec = simple.weights[1].numpy()
    np.testing.assert_allclose(rec.T @ rec, np.eye(6), atol=1e-5)
    assert [w.path.split("/")[-1] for w in simple.weights] == ["kernel", "recurrent_kernel",
                                                               "bias"]


def test_orthogonal_initializer():
    tall = Orthogonal(gain=2.0, seed=1)((6, 2), dtype="float64").numpy()
    np.testing.assert_allclose(tall.T @ tall, 4 * np.eye(2), atol=1e-12)
    conv = Orthogonal()((3, 2, 4)).numpy().reshape(6, 4)
    np.testing.assert_allclose(conv.T @ conv, np.eye(4), atol=1e-5)
    square = Orthogonal()((64, 64), dtype="float64").numpy()
    np.testing.assert_allclose(square @ square.T, np.eye(64), atol=1e-12)
    # Haar-distributed: entries about N(0, 1/64), not a fixed or sign-biased matrix
    assert abs(square.mean()) < 0.01
    assert abs(np.mean(square > 0) - 0.5) < 0.05
    assert not np.allclose(square, Orthogonal()((64, 64), dtype="float64").numpy())
    with pytest.raises(ValueError, match="at least two-dimensional"):
        Orthogonal()((3,))
    assert tf.keras.initializers.serialize(Orthogonal()) == {
        "module": "keras.initializers", "class_name": "Orthogonal",
        "config": {"seed": None, "gain": 1.0}, "registered_name": None}


# -- errors ------------------------------------------------------------------------------------

ERRORS = META["errors"]


def _keras_error(key, fn):
    kind, message = ERRORS[key]
    with pytest.raises(getattr(__builtins__, kind, None) or ValueError) as info:
        fn()
    return message, str(info.value)


@pytest.mark.parametrize("key,fn", [
    ("rank2_lstm", lambda: layers.LSTM(3)(np.zeros((2, 3), np.float32))),
    ("rank4_gru", lambda: layers.GRU(3)(np.zeros((2, 3, 4, 5), np.float32))),
    ("rank2_simple_rnn", lambda: layers.SimpleRNN(3)(np.zeros((2, 3), np.float32)))])
def test_bad_rank(key, fn):
    want, got = _keras_error(key, fn)
    assert got.split("incompatible with the layer: ")[1] == \
        want.split("incompatible with the layer: ")[1]


@pytest.mark.parametrize("key,fn", [
    ("units0", lambda: layers.LSTMCell(0)),
    ("merge_mode", lambda: layers.Bidirectional(layers.LSTM(2), merge_mode="x")),
    ("bidi_not_layer", lambda: layers.Bidirectional("lstm")),
    ("use_cudnn", lambda: layers.GRU(2, use_cudnn="yes")),
    ("unknown_kwarg", lambda: layers.LSTM(2, time_major=False))])
def test_bad_arguments(key, fn):
    want, got = _keras_error(key, fn)
    assert got == want


@pytest.mark.parametrize("cls", [layers.SimpleRNN, layers.LSTM, layers.GRU])
def test_stateful_layer_carries_its_state_across_calls(cls):
    """Two calls on the halves of a sequence == one call on the whole; reset_state restarts."""
    x = np.random.default_rng(3).normal(size=(2, 6, 3)).astype(np.float32)
    stateful = cls(4, stateful=True, return_sequences=True)
    whole = cls(4, return_sequences=True)
    first = stateful(x[:, :3])
    whole(x)
    whole.set_weights(stateful.get_weights())
    second = stateful(x[:, 3:])
    want = whole(x).numpy()
    np.testing.assert_allclose(np.concatenate([first, second], 1), want, rtol=1e-5, atol=1e-6)
    assert len(stateful.weights) == len(whole.weights)  # the states are not weights
    assert all(v.path.endswith("/rnn_state") and not v.trainable for v in stateful.states)
    stateful.reset_state()
    np.testing.assert_allclose(stateful(x[:, :3]).numpy(), first.numpy(), rtol=1e-6)


def test_stateful_rnn_in_a_model_and_its_errors():
    x = np.random.default_rng(4).normal(size=(2, 3, 2)).astype(np.float32)
    inp = tf.keras.Input(batch_shape=(2, 3, 2))
    lstm = layers.LSTM(4, stateful=True)
    model = tf.keras.Model(inp, lstm(inp))
    a, b = model.predict(x, verbose=0), model.predict(x, verbose=0)
    assert np.abs(a - b).max() > 1e-3  # the second call starts from the first one's state
    lstm.reset_state()
    np.testing.assert_allclose(model.predict(x, verbose=0), a, rtol=1e-6)
    with pytest.raises(ValueError, match="batch size of the input sequences must be the same"):
        lstm(np.zeros((3, 3, 2), np.float32))
    with pytest.raises(ValueError, match="batch size must be static"):
        layers.GRU(2, stateful=True)(tf.keras.Input((3, 2)))
    bidi = layers.Bidirectional(layers.SimpleRNN(2, stateful=True))
    bidi(x)
    assert len(bidi.states) == 2
    bidi.reset_state()
    assert all(not v.numpy().any() for v in bidi.states)
    with pytest.raises(AttributeError, match="Layer must be stateful"):
        layers.Bidirectional(layers.SimpleRNN(2)).reset_state()


def test_unbuilt_features():
    with pytest.raises(ValueError, match="expects inputs of shape"):
        layers.RNN(layers.SimpleRNNCell(2))(tf.zeros([2, 3]))
    with pytest.raises(ValueError, match="state_size"):
        layers.RNN(layers.Dense(2))


def test_orthogonal_initializer_is_a_keras_initializer():
    init = tf.keras.initializers.get("orthogonal")
    assert isinstance(init, tf.keras.initializers.Orthogonal)
    q = init((6, 4)).numpy()
    np.testing.assert_allclose(q.T @ q, np.eye(4), atol=1e-5)
    wide = tf.keras.initializers.Orthogonal(gain=2.0)((3, 5)).numpy()
    np.testing.assert_allclose(wide @ wide.T, 4 * np.eye(3), atol=1e-4)
    assert tf.keras.initializers.deserialize(tf.keras.initializers.serialize(init)).gain == 1.0
    with pytest.raises(ValueError, match="at least two-dimensional"):
        init((4,))
