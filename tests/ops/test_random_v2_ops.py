"""TF's key-and-counter random ops (StatelessRandom*V2, StatelessRandomGetKeyCounterAlg,
StatelessRandomGetAlg, RngReadAndSkip, RngSkip): TF 2.21's values and errors
(tests/fixtures/random_v2_ops), and a SavedModel TF wrote with stateless draws and a
Generator, whose V2 ops ndflow runs to TF's outputs."""

from __future__ import annotations

import json

import numpy as np
import pytest

import ndflow as tf
from tests import fixture_modules

HERE = fixture_modules.FIXTURES / "random_v2_ops"
CASES_MODULE = fixture_modules.load("random_v2_ops", "cases")
TF_VALUES = json.loads((HERE / "values.json").read_text())
CASES = CASES_MODULE.cases(tf)


@pytest.mark.parametrize("name", sorted(CASES))
def test_results_match_tensorflow(name):
    assert CASES_MODULE.record(CASES[name]) == TF_VALUES[name]


def test_tensorflow_fixture_covers_every_case():
    assert sorted(TF_VALUES) == sorted(CASES)


def test_v2_draws_equal_the_seeded_ops_through_get_key_counter():
    """TF's stateless_* = its V2 op on StatelessRandomGetKeyCounter's key and counter."""
    seed = tf.constant([17, -3], tf.int64)
    key, counter, alg = tf.raw_ops.StatelessRandomGetKeyCounterAlg(seed=seed)
    v2 = tf.raw_ops.StatelessRandomNormalV2(shape=[6], key=key, counter=counter, alg=alg)
    np.testing.assert_array_equal(v2.numpy(), tf.random.stateless_normal([6], seed).numpy())


def test_tensorflows_saved_model_with_random_draws_runs():
    want = json.loads((HERE / "saved_model_outputs.json").read_text())
    loaded = tf.saved_model.load(str(HERE / "saved_model"))
    got = loaded.stateless(tf.constant([3, 4], tf.int64))
    for k, v in want["stateless"].items():
        np.testing.assert_array_equal(got[k].numpy(), np.array(v, got[k].numpy().dtype))
    for step in want["generator"]:
        out = loaded.generator()
        for k, v in step.items():
            np.testing.assert_array_equal(out[k].numpy(), np.array(v, out[k].numpy().dtype))


def test_static_shapes_in_a_graph():
    with tf.Graph().as_default():
        key = tf.constant([1], tf.uint64)
        counter = tf.constant([0, 0], tf.uint64)
        out = tf.raw_ops.StatelessRandomUniformV2(shape=[2, 3], key=key, counter=counter,
                                                  alg=1)
        k, c, a = tf.raw_ops.StatelessRandomGetKeyCounterAlg(seed=[1, 2])
        assert out.shape.as_list() == [2, 3]
        assert (k.shape.as_list(), c.shape.as_list(), a.shape.as_list()) == ([1], [2], [])
