"""tf.compat.v1.nn.raw_rnn and static_state_saving_rnn against TensorFlow 2.21
(tests/fixtures/tf_raw_rnn: the same graph, generate.py beside it): a raw_rnn whose loop_fn
sets the initial state, emits a tuple structure of its own (the output and its row sums),
keeps a loop state and stops each entry at its sequence length; a static_state_saving_rnn
that starts from a state saver's variables and saves its final state (a second run starts
where the first ended). Outputs, final states and the loop state equal TF's, the variables
have TF's names; gradients through raw_rnn's loop match finite differences; bad arguments
get TF's errors."""

import os

import numpy as np
import pytest

import ndflow as tf
from tests.fixtures.tf_raw_rnn import raw_rnn_cases as cases

v1 = tf.compat.v1
EXPECTED = np.load(os.path.join(os.path.dirname(__file__), "..", "fixtures", "tf_raw_rnn",
                                "expected.npz"))


def test_raw_rnn_and_state_saving_rnn_equal_tensorflow():
    g = tf.Graph()
    with g.as_default():
        fetches, init, cells, _, (x, seq) = cases.build(tf, v1.nn.rnn_cell)
        kernel, bias = cases.weights()
        sets = [v.assign(kernel if "kernel" in v.name else bias)
                for c in cells for v in c.variables]
        names = sorted(v.name for v in g.get_collection("variables"))
    assert names == list(EXPECTED["variable_names"])
    with v1.Session(graph=g) as sess:
        sess.run(init)
        sess.run(sets)
        for run in range(2):
            got = sess.run(fetches, {x: cases.inputs(), seq: cases.SEQ})
            for k, v in got.items():
                np.testing.assert_allclose(v, EXPECTED[f"{run}/{k}"], rtol=1e-5, atol=1e-6,
                                           err_msg=f"run {run}: {k}")
    # entries past their length emit zeros
    assert not got["outputs"][cases.SEQ[1]:, 1].any()


def test_gradients_through_raw_rnn_match_finite_differences():
    g = tf.Graph()
    with g.as_default():
        v1.set_random_seed(5)   # the cell's initial weights: one fixed draw
        x = tf.constant(np.random.RandomState(3).randn(4, 2, 3))
        ta = tf.TensorArray(tf.float64, size=4).unstack(x)
        cell = v1.nn.rnn_cell.BasicRNNCell(5, dtype=tf.float64)

        def loop_fn(time, cell_output, cell_state, loop_state):
            state = cell.zero_state(2, tf.float64) if cell_output is None else cell_state
            done = time >= 4
            nxt = tf.cond(done, lambda: tf.zeros([2, 3], tf.float64), lambda: ta.read(time))
            return tf.fill([2], done), nxt, state, cell_output, None

        out_ta, final, _ = v1.nn.raw_rnn(cell, loop_fn)
        loss = tf.reduce_sum(out_ta.stack() ** 2) + tf.reduce_sum(final)
        with v1.Session(graph=g) as sess:
            sess.run(v1.global_variables_initializer())
            err = v1.test.compute_gradient_error(x, [4, 2, 3], loss, [])
    assert err < 1e-5   # central differences in float64; a wrong gradient is off by O(1)


def test_bad_arguments():
    cell = v1.nn.rnn_cell.BasicRNNCell(3)
    with pytest.raises(TypeError, match="loop_fn"):
        v1.nn.raw_rnn(cell, "not callable")
    with pytest.raises(ValueError, match="should be the same type as `cell.state_size`"):
        v1.nn.static_state_saving_rnn(v1.nn.rnn_cell.LSTMCell(3), [tf.zeros([2, 2])],
                                      object(), "one_name")
