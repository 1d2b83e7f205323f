"""tf.random.Generator's algorithms (Philox, auto-select, and ThreeFry, which TF's CPU and GPU
kernels refuse) and Generator.binomial (StatefulRandomBinomial): TF 2.21's values, states
and errors (tests/fixtures/random_generator_extra)."""

from __future__ import annotations

import json

import pytest

import ndflow as tf
from tests import fixture_modules

CASES_MODULE = fixture_modules.load("random_generator_extra", "cases")
TF_VALUES = json.loads((fixture_modules.FIXTURES / "random_generator_extra" /
                        "values.json").read_text())
CASES = CASES_MODULE.cases(tf)


@pytest.mark.parametrize("name", sorted(CASES))
def test_results_match_tensorflow(name):
    assert CASES_MODULE.record(CASES[name]) == TF_VALUES[name]


def test_tensorflow_fixture_covers_every_case():
    assert sorted(TF_VALUES) == sorted(CASES)


def test_binomial_in_a_graph_advances_the_state_per_run():
    with tf.Graph().as_default():
        g = tf.random.Generator.from_state([0, 0, 123], alg="philox")
        draw = g.binomial([4], counts=10.0, probs=0.5)
        with tf.compat.v1.Session() as sess:
            sess.run(g.state.initializer)
            first, second = sess.run(draw), sess.run(draw)
            state = sess.run(g.state)
    eager = tf.random.Generator.from_state([0, 0, 123], alg="philox")
    assert first.tolist() == eager.binomial([4], 10.0, 0.5).numpy().tolist()
    assert second.tolist() == eager.binomial([4], 10.0, 0.5).numpy().tolist()
    assert state.tolist() == eager.state.numpy().tolist()
