"""Stateless random ops and tf.random.Generator: the same seed gives the same values (eagerly,
in tf.function and in Sessions), different seeds differ, values have the right law, and a
Generator's draws advance its state variable."""

import numpy as np
import pytest

import ndflow as tf


@pytest.mark.parametrize("draw", [
    lambda seed: tf.random.stateless_normal([500], seed),
    lambda seed: tf.random.stateless_uniform([500], seed, -2.0, 3.0),
    lambda seed: tf.random.stateless_truncated_normal([500], seed, 1.0, 2.0),
    lambda seed: tf.random.stateless_uniform([500], seed, 0, 7, tf.int32),
])
def test_same_seed_same_values_everywhere(draw):
    eager = draw([3, 4]).numpy()
    assert np.array_equal(eager, draw([3, 4]).numpy())
    assert not np.array_equal(eager, draw([3, 5]).numpy())
    assert not np.array_equal(eager, draw([4, 4]).numpy())
    assert np.array_equal(eager, tf.function(lambda: draw(tf.constant([3, 4], tf.int64)))())
    with tf.Graph().as_default():
        out = draw([3, 4])
        with tf.compat.v1.Session() as sess:
            assert np.array_equal(eager, sess.run(out)) and np.array_equal(eager, sess.run(out))


def test_stateless_values_follow_their_law():
    n = tf.random.stateless_normal([20000], [1, 2], mean=1.0, stddev=2.0).numpy()
    assert abs(n.mean() - 1.0) < 0.05 and abs(n.std() - 2.0) < 0.05
    t = tf.random.stateless_truncated_normal([20000], [1, 2]).numpy()
    assert np.abs(t).max() <= 2.0 and abs(t.std() - 0.88) < 0.03
    u = tf.random.stateless_uniform([20000], [1, 2], 0, 10, tf.int64).numpy()
    assert u.dtype == np.int64 and set(np.unique(u)) == set(range(10))


def test_generator_draws_advance_its_state_and_replay_from_the_seed():
    g = tf.random.Generator.from_seed(42)
    first, second = g.normal([4]).numpy(), g.normal([4]).numpy()
    assert not np.array_equal(first, second)
    assert g.state.numpy()[0] == 2 and g.variables == (g.state,)
    assert np.array_equal(tf.random.Generator.from_seed(42).normal([4]).numpy(), first)
    g.reset_from_seed(42)
    assert np.array_equal(g.normal([4]).numpy(), first)


def test_generator_inside_tf_function_keeps_advancing():
    g = tf.random.Generator.from_seed(7)
    f = tf.function(lambda: g.uniform([3], 0.0, 1.0))
    a, b = f().numpy(), f().numpy()
    assert not np.array_equal(a, b) and g.state.numpy()[0] == 2
    assert np.all((0 <= a) & (a < 1))


def test_split_and_make_seeds_give_independent_streams():
    g = tf.random.Generator.from_seed(1)
    children = g.split(3)
    draws = [c.normal([8]).numpy() for c in children]
    assert all(not np.array_equal(draws[i], draws[j]) for i in range(3) for j in range(i))
    seeds = g.make_seeds(5)
    assert seeds.dtype is tf.int64 and seeds.shape.as_list() == [2, 5]
    assert tf.random.get_global_generator() is tf.random.get_global_generator()
    tf.random.set_global_generator(children[0])
    assert tf.random.get_global_generator() is children[0]


def test_bad_arguments():
    with pytest.raises(ValueError, match="Must specify maxval for integer dtype"):
        tf.random.stateless_uniform([2], [1, 2], dtype=tf.int32)
    with pytest.raises((ValueError, tf.errors.InvalidArgumentError), match="2"):
        tf.random.stateless_normal([2], [1, 2, 3])
    with pytest.raises(ValueError, match="Either `copy_from` or `state` must be given"):
        tf.random.Generator()
