"""TF1's RNN API (`tf.compat.v1.nn.rnn_cell`, `dynamic_rnn`, `static_rnn`,
`bidirectional_dynamic_rnn`) against TensorFlow 2.21 (tests/fixtures/tf_rnn_v1, generated
by the script beside it on the graphs of its configs.py): variable names and shapes exactly,
outputs, final states and gradients within float32 rounding, TensorFlow's sizes and errors.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import ndflow as tf
from tests import fixture_modules

v1 = tf.compat.v1
rc = v1.nn.rnn_cell
FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "tf_rnn_v1"
META = json.loads((FIXTURE / "rnn_v1.json").read_text())
ARRAYS = np.load(FIXTURE / "rnn_v1.npz")
_configs = fixture_modules.load("tf_rnn_v1")
RNN_CASES = _configs.CASES


def _build(name):
    x, results = RNN_CASES[name](v1, rc)
    variables = v1.trainable_variables()
    cs = [ARRAYS[f"{name}/c{i}"] for i in range(len(results))]
    loss = tf.add_n([tf.reduce_sum(r * c) for r, c in zip(results, cs)])
    grads = tf.gradients(loss, variables + [x])
    return x, results, variables, grads


@pytest.mark.parametrize("name", list(RNN_CASES))
def test_graph_matches_tensorflow(name):
    meta = META["cases"][name]
    with tf.Graph().as_default():
        x, results, variables, grads = _build(name)
        assert [[v.name, v.shape.as_list()] for v in variables] == meta["variables"]
        assert [r.shape.as_list() for r in results] == meta["static_shapes"]
        with v1.Session() as s:
            for i, v in enumerate(variables):
                v.load(ARRAYS[f"{name}/w{i}"], s)
            res, gr = s.run([results, grads], {x: ARRAYS[f"{name}/x"]})
    for i, r in enumerate(res):
        np.testing.assert_allclose(r, ARRAYS[f"{name}/r{i}"], rtol=1e-5, atol=1e-6,
                                   err_msg=f"result {i}")
    for i, g in enumerate(gr):
        np.testing.assert_allclose(g, ARRAYS[f"{name}/g{i}"], rtol=1e-5, atol=1e-5,
                                   err_msg=f"gradient {i}")


def _describe(s):
    if isinstance(s, tuple):
        return [type(s).__name__] + [_describe(e) for e in s]
    return int(s)


def test_sizes_match_tensorflow():
    got = {k: {"state_size": _describe(c.state_size), "output_size": _describe(c.output_size)}
           for k, c in _configs.sized_cells(rc).items()}
    assert got == META["sizes"]


def test_zero_state_shapes_and_dtype():
    with tf.Graph().as_default():
        z = rc.MultiRNNCell([rc.BasicLSTMCell(3), rc.GRUCell(2)]).zero_state(4, tf.float64)
        assert isinstance(z[0], rc.LSTMStateTuple)
        assert [t.shape.as_list() for t in tf.nest.flatten(z)] == [[4, 3], [4, 3], [4, 2]]
        assert z[0].dtype == tf.float64
        b = v1.placeholder(tf.int32, [])
        z = rc.BasicRNNCell(5).zero_state(b, tf.float32)
        assert z.shape.as_list() == [None, 5]
        with v1.Session() as s:
            assert s.run(z, {b: 2}).shape == (2, 5)


@pytest.mark.parametrize("case", sorted(META["errors"]))
def test_bad_input_raises_as_tensorflow(case):
    kind, message = META["errors"][case]
    with tf.Graph().as_default():
        with pytest.raises(Exception) as info:
            _configs.error_calls(v1, rc)[case]()
    assert type(info.value).__name__ == kind
    # Messages that print a tensor name the ops TensorFlow built: compare up to the tensor.
    prefix = message.split("Tensor(")[0].split("=Tensor")[0]
    assert str(info.value).startswith(prefix), (str(info.value), message)


def test_scope_reuse_shares_variables_and_static_bidirectional():
    with tf.Graph().as_default():
        x = v1.placeholder(tf.float32, [2, 3, 4])
        with v1.variable_scope("model"):
            out1, _ = v1.nn.dynamic_rnn(rc.GRUCell(3), x, dtype=tf.float32)
        with v1.variable_scope("model", reuse=True):
            out2, _ = v1.nn.dynamic_rnn(rc.GRUCell(3), x, dtype=tf.float32)
        assert len(v1.trainable_variables()) == 4
        steps = tf.unstack(x, axis=1)
        outs, st_fw, st_bw = v1.nn.static_bidirectional_rnn(
            rc.BasicRNNCell(2), rc.BasicRNNCell(2), steps, dtype=tf.float32,
            sequence_length=[3, 1])
        names = [v.name for v in v1.trainable_variables()[4:]]
        assert names == ["bidirectional_rnn/fw/basic_rnn_cell/kernel:0",
                         "bidirectional_rnn/fw/basic_rnn_cell/bias:0",
                         "bidirectional_rnn/bw/basic_rnn_cell/kernel:0",
                         "bidirectional_rnn/bw/basic_rnn_cell/bias:0"]
        with v1.Session() as s:
            s.run(v1.global_variables_initializer())
            xv = np.random.RandomState(0).uniform(-1, 1, [2, 3, 4]).astype(np.float32)
            a, b, o, fw, bw = s.run([out1, out2, outs, st_fw, st_bw], {x: xv})
    np.testing.assert_array_equal(a, b)
    assert len(o) == 3 and o[0].shape == (2, 4)
    np.testing.assert_array_equal(o[1][1], 0)  # past the second sequence's length
    np.testing.assert_allclose(o[2][0, :2], fw[0])
    np.testing.assert_allclose(o[0][:, 2:], bw)  # the backward pass ends at step 0


def test_dropout_wrapper_drops_and_scales():
    with tf.Graph().as_default():
        x = tf.ones([200, 5, 50])
        cell = rc.DropoutWrapper(rc.ResidualWrapper(_Identity(50)), input_keep_prob=0.5,
                                 output_keep_prob=1.0, seed=3)
        out, _ = v1.nn.dynamic_rnn(cell, x, dtype=tf.float32)
        with v1.Session() as s:
            o = s.run(out)
    # identity cell + residual: output = 2 * dropped input; kept values are 2 / 0.5 = 4
    assert set(np.unique(o)) <= {0.0, 4.0}
    assert 0.4 < (o == 0).mean() < 0.6


class _Identity(rc.RNNCell):
    def __init__(self, n):
        super().__init__()
        self._n = n

    state_size = property(lambda self: self._n)
    output_size = property(lambda self: self._n)

    def call(self, inputs, state):
        return inputs, state


def test_training_step_in_tf_function():
    cell = rc.BasicLSTMCell(4)
    dense = tf.Variable(np.random.RandomState(1).uniform(-1, 1, [4, 1]).astype(np.float32))
    x = tf.constant(np.random.RandomState(2).uniform(-1, 1, [3, 5, 2]).astype(np.float32))
    opt = tf.keras.optimizers.SGD(0.5)

    @tf.function
    def step():
        with tf.GradientTape() as tape:
            out, state = v1.nn.dynamic_rnn(cell, x, sequence_length=[5, 3, 2],
                                           dtype=tf.float32)
            loss = tf.reduce_mean(tf.square(tf.matmul(state.h, dense) - 1.0))
        variables = cell.trainable_variables + [dense]
        grads = tape.gradient(loss, variables)
        opt.apply_gradients(zip(grads, variables))
        return loss

    losses = [float(step()) for _ in range(5)]
    assert [v.name for v in cell.trainable_variables] == ["rnn/basic_lstm_cell/kernel:0",
                                                          "rnn/basic_lstm_cell/bias:0"]
    assert losses[-1] < losses[0]


def test_cells_called_eagerly():
    cell = rc.GRUCell(3)
    x = tf.ones([2, 4])
    out, state = cell(x, cell.zero_state(2, tf.float32))
    out2, _ = cell(x, state)
    assert out.shape == (2, 3) and len(cell.trainable_variables) == 4
    assert not np.allclose(out.numpy(), out2.numpy())


def test_eager_variables_named_as_tensorflow():
    cell = rc.BasicLSTMCell(3)
    out, state = v1.nn.dynamic_rnn(cell, tf.ones([2, 4, 5]), sequence_length=[4, 2],
                                   dtype=tf.float32)
    assert [v.name for v in cell.trainable_variables] == ["rnn/basic_lstm_cell/kernel:0",
                                                          "rnn/basic_lstm_cell/bias:0"]
    assert out.shape == (2, 4, 3) and state.h.shape == (2, 3)
    np.testing.assert_array_equal(out.numpy()[1, 2:], 0)
    np.testing.assert_array_equal(out.numpy()[1, 1], state.h.numpy()[1])


class _TF1StyleCell(rc.RNNCell):
    """A cell written as TF1 programs write them: get_variable in its own __call__."""

    state_size = property(lambda self: 3)
    output_size = property(lambda self: 3)

    def __call__(self, inputs, state, scope=None):
        with v1.variable_scope(scope or "my_cell"):
            w = v1.get_variable("w", [inputs.shape[1] + 3, 3])
            out = tf.tanh(tf.matmul(tf.concat([inputs, state], 1), w))
        return out, out


def test_user_cell_with_get_variable_in_dynamic_rnn():
    with tf.Graph().as_default():
        x = v1.placeholder(tf.float32, [2, 5, 4])
        with v1.variable_scope("enc", initializer=v1.constant_initializer(0.1)):
            out, st = v1.nn.dynamic_rnn(_TF1StyleCell(), x, dtype=tf.float32)
        assert [v.name for v in v1.global_variables()] == ["enc/rnn/my_cell/w:0"]
        grad = tf.gradients(tf.reduce_sum(st), v1.trainable_variables())[0]
        with v1.Session() as s:
            s.run(v1.global_variables_initializer())
            o, g = s.run([out, grad], {x: np.ones([2, 5, 4])})
    h = np.zeros([2, 3])
    for _ in range(5):
        h = np.tanh(np.concatenate([np.ones([2, 4]), h], 1) @ np.full([7, 3], 0.1))
    np.testing.assert_allclose(o[:, -1], h, rtol=1e-6)
    assert np.abs(g).sum() > 0


def test_sequence_length_of_another_batch_fails_at_run_time():
    with tf.Graph().as_default():
        x = v1.placeholder(tf.float32, [3, 4, 2])
        sl = v1.placeholder(tf.int32, [None])
        out, _ = v1.nn.dynamic_rnn(rc.BasicRNNCell(2), x, sequence_length=sl, dtype=tf.float32)
        with v1.Session() as s:
            s.run(v1.global_variables_initializer())
            with pytest.raises(tf.errors.InvalidArgumentError, match="Expected shape for Tensor"):
                s.run(out, {x: np.ones([3, 4, 2]), sl: [1, 2]})


def test_concatenated_states_equal_tuple_states_in_float64():
    xv = np.random.RandomState(0).uniform(-1, 1, [3, 4, 2])
    with tf.Graph().as_default():
        x = tf.constant(xv)
        results = []
        for name, is_tuple in (("tuple", True), ("concat", False)):
            with v1.variable_scope(name, initializer=v1.constant_initializer(0.05)):
                cell = rc.MultiRNNCell([rc.LSTMCell(3, num_proj=2, state_is_tuple=is_tuple),
                                        rc.GRUCell(2)], state_is_tuple=is_tuple)
                results.append(v1.nn.dynamic_rnn(cell, x, dtype=tf.float64))
        assert results[0][0].dtype == tf.float64
        with v1.Session() as s:
            s.run(v1.global_variables_initializer())
            (o1, s1), (o2, s2) = s.run(results)
    np.testing.assert_array_equal(o1, o2)
    np.testing.assert_array_equal(np.concatenate([s1[0].c, s1[0].h, s1[1]], 1), s2)


def test_variational_dropout_keeps_one_mask_over_time():
    with tf.Graph().as_default():
        cell = rc.DropoutWrapper(rc.BasicLSTMCell(8), input_keep_prob=0.7, state_keep_prob=0.5,
                                 output_keep_prob=0.5, variational_recurrent=True,
                                 input_size=2, dtype=tf.float32, seed=1)
        out, _ = v1.nn.dynamic_rnn(cell, tf.ones([3, 6, 2]), dtype=tf.float32)
        grads = tf.gradients(tf.reduce_sum(out), v1.trainable_variables())
        with v1.Session() as s:
            s.run(v1.global_variables_initializer())
            o, _ = s.run([out, grads])
    dropped = o == 0
    assert dropped.any() and not dropped.all()
    assert (dropped == dropped[:, :1]).all() and (dropped == dropped[:1]).all()


DROPOUT = fixture_modules.load("tf_rnn_v1_dropout")
DROPOUT_MASKS = np.load(fixture_modules.FIXTURES / "tf_rnn_v1_dropout" / "masks.npz")


@pytest.mark.parametrize("case", sorted(DROPOUT.CASES))
def test_seeded_dropout_wrapper_draws_tensorflows_masks(case):
    # TF1's DropoutWrapper seeds each tensor's dropout with an md5 of its seed and role (as
    # TF 2's wrapper does): with a graph seed, the outputs and states equal TensorFlow's
    with tf.Graph().as_default():
        results = DROPOUT.build(tf, rc, DROPOUT.CASES[case])
        with v1.Session() as s:
            got = s.run(results)
    for i, g in enumerate(got):
        np.testing.assert_allclose(g, DROPOUT_MASKS[f"{case}_{i}"], rtol=1e-6)
