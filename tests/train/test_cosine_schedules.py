"""Cosine learning-rate schedules: values equal TF 2.21 / Keras 3's at the same steps (the
fixture's generate.py), Keras' configs and serialization, TF1 functions in graphs and eagerly."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import ndflow as tf
from tests import fixture_modules

FIXTURE = json.loads((Path(__file__).parents[1] / "fixtures" / "cosine_schedules" /
                      "values.json").read_text())
K = tf.keras.optimizers.schedules
v1 = tf.compat.v1.train
CASES = fixture_modules.load("cosine_schedules").cases(tf)


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_match_tensorflow(name):
    got = [float(CASES[name](tf.constant(s))) for s in FIXTURE["steps"]]
    np.testing.assert_allclose(got, FIXTURE["values"][name], rtol=2e-6, atol=1e-7)


def test_configs_round_trip_as_keras():
    for cls in (K.CosineDecay, K.CosineDecayRestarts):
        want = FIXTURE["configs"][cls.__name__]
        schedule = cls(**want)
        assert schedule.get_config() == want
        again = K.deserialize(K.serialize(schedule))
        assert type(again) is cls and again.get_config() == want


def test_v1_decay_in_a_graph_follows_the_global_step():
    with tf.Graph().as_default():
        step = tf.compat.v1.train.get_or_create_global_step()
        lr = v1.cosine_decay_restarts(0.1, step, 10)
        bump = step.assign_add(5)
        with tf.compat.v1.Session() as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            seen = []
            for _ in range(4):
                seen.append(sess.run(lr))
                sess.run(bump)
    i = FIXTURE["steps"]
    want = [FIXTURE["values"]["restarts"][i.index(s)] for s in (0, 5, 10, 15)]
    np.testing.assert_allclose(seen, want, rtol=2e-6)


def test_noisy_linear_cosine_decay_centres_on_the_linear_one():
    noisy = [float(v1.noisy_linear_cosine_decay(0.1, 30, 100, initial_variance=0.01)())
             for _ in range(200)]
    plain = float(v1.linear_cosine_decay(0.1, 30, 100)())
    # noise N(0, 0.01 / 31^0.55) on the linear part, scaled by lr0 * cosine part
    cosine = 0.5 * (1 + np.cos(np.pi * 2 * 0.5 * 0.3))
    std = 0.1 * cosine * np.sqrt(0.01 / 31 ** 0.55)
    assert abs(np.mean(noisy) - plain) < 5 * std / np.sqrt(200)
    assert 0.7 * std < np.std(noisy) < 1.3 * std


def test_bad_decay_steps():
    with pytest.raises(ValueError, match="`decay_steps` must be > 0"):
        K.CosineDecay(0.1, 0)
    with pytest.raises(ValueError, match="`first_decay_steps` must be > 0"):
        K.CosineDecayRestarts(0.1, -1)
