"""`tf.random.categorical` and `tf.random.stateless_categorical` draw TensorFlow's values for
the same seeds (TF's CPU Multinomial: kernels/multinomial.py), eagerly, in Sessions, with
masked (-inf) logits, float64 logits and int32 output, against a TF 2.21 fixture
(tests/fixtures/tf_categorical, generator and cases beside it); their frequencies follow the
probabilities; bad input is TF's error."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

import ndflow as tf
from ndflow.core.errors import InvalidArgumentError

FIXTURE = Path(__file__).parent.parent / "fixtures" / "tf_categorical"


def _cases():
    spec = importlib.util.spec_from_file_location("categorical_cases", FIXTURE / "cases.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_draws_are_tensorflows():
    want = json.loads((FIXTURE / "categorical.json").read_text())["draws"]
    got = _cases().run(tf)
    assert sorted(got) == sorted(want)
    for key in want:
        assert got[key] == want[key], key


def test_frequencies_follow_the_probabilities():
    p = np.array([0.1, 0.2, 0.3, 0.4])
    draws = tf.random.stateless_categorical(tf.constant(np.log(p)[None]), 40000,
                                            seed=[1, 2]).numpy()
    freq = np.bincount(draws[0], minlength=4) / draws.size
    np.testing.assert_allclose(freq, p, atol=0.01)


def test_bad_input():
    with pytest.raises(InvalidArgumentError, match="logits should be a matrix"):
        tf.random.categorical(tf.zeros([3]), 2)
    with pytest.raises(InvalidArgumentError, match="num_samples should be non-negative"):
        tf.random.stateless_categorical(tf.zeros([1, 3]), -1, seed=[1, 2])
    with pytest.raises(ValueError, match="Argument `dtype` got invalid value"):
        tf.random.stateless_categorical(tf.zeros([1, 3]), 2, seed=[1, 2], dtype=tf.float32)
    assert tf.random.categorical(tf.zeros([2, 3]), 0).shape == (2, 0)
