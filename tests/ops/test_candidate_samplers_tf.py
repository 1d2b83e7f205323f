"""The candidate samplers draw TensorFlow's candidates: each case of
tests/fixtures/tf_candidate_sampling (TensorFlow 2.21, generate.py beside it) called three
times in a row with the same op seed after tf.random.set_seed(1) (one kernel: its Philox
stream and the learned unigram counts carry on) gives TF's sampled classes exactly and its
float32 expected counts; compute_accidental_hits lists TF's hits in TF's order; bad input
gets TF's errors."""

import os

import numpy as np
import pytest

import ndflow as tf
from tests.fixtures.tf_candidate_sampling import sampler_cases

HERE = os.path.join(os.path.dirname(__file__), "..", "fixtures", "tf_candidate_sampling")
FIXTURE = np.load(os.path.join(HERE, "cases.npz"))
CASES = {name: (fn, {k: os.path.join(HERE, "vocab.csv") if v == "VOCAB" else v
                      for k, v in kwargs.items()})
         for name, (fn, kwargs) in sampler_cases.CASES.items()}
TRUE = sampler_cases.TRUE


@pytest.mark.parametrize("case", sorted(CASES))
def test_seeded_calls_give_tensorflows_candidates(case):
    fn, kwargs = CASES[case]
    tf.random.set_seed(1)
    for call in range(3):
        sampled, true_expected, sampled_expected = getattr(tf.random, fn)(
            TRUE, num_true=2, seed=7, **kwargs)
        key = f"{case}/{call}"
        np.testing.assert_array_equal(sampled.numpy(), FIXTURE[f"{key}/sampled"])
        assert true_expected.dtype == tf.float32 and sampled_expected.dtype == tf.float32
        np.testing.assert_allclose(true_expected.numpy(), FIXTURE[f"{key}/true_expected"],
                                   rtol=2e-7, atol=0)
        np.testing.assert_allclose(sampled_expected.numpy(),
                                   FIXTURE[f"{key}/sampled_expected"], rtol=2e-7, atol=0)


def test_a_traced_function_draws_the_same_stream_as_eager_calls():
    tf.random.set_seed(1)

    @tf.function
    def draw(t):
        return tf.random.log_uniform_candidate_sampler(t, 2, 20, True, 100, seed=7)[0]
    for call in range(3):
        np.testing.assert_array_equal(draw(tf.constant(TRUE)).numpy(),
                                      FIXTURE[f"log_uniform_unique/{call}/sampled"])


def test_accidental_hits_in_tensorflows_order():
    indices, ids, weights = tf.nn.compute_accidental_hits(
        TRUE, np.array([4, 2, 9, 2, 77, 3], np.int64), num_true=2)
    np.testing.assert_array_equal(indices.numpy(), FIXTURE["hits/indices"])
    np.testing.assert_array_equal(ids.numpy(), FIXTURE["hits/ids"])
    np.testing.assert_array_equal(weights.numpy(), FIXTURE["hits/weights"])


@pytest.mark.parametrize("call, message", [
    (lambda: tf.random.uniform_candidate_sampler(TRUE, 2, 5, True, 10),
     r"`true_candidate` out of range \[0, 10\), received 29"),
    (lambda: tf.random.uniform_candidate_sampler(TRUE[:, :1], 2, 5, True, 100),
     "true_classes must have num_true columns, expected: 1 was: 2"),
    (lambda: tf.random.log_uniform_candidate_sampler(TRUE, 2, 40, True, 30),
     "Sampler's range is too small"),
    (lambda: tf.random.fixed_unigram_candidate_sampler(TRUE, 2, 5, True, 30),
     "Must provide either vocab_file or unigrams"),
    (lambda: tf.random.fixed_unigram_candidate_sampler(TRUE, 2, 5, True, 31,
                                                       unigrams=[1.0] * 30),
     "range is 31 must be equal to weights size  30"),
])
def test_bad_input_gets_tensorflows_errors(call, message):
    with pytest.raises(tf.errors.InvalidArgumentError, match=message):
        call()


def test_a_missing_vocabulary_file_is_not_found(tmp_path):
    with pytest.raises(tf.errors.NotFoundError, match="missing.csv"):
        tf.random.fixed_unigram_candidate_sampler(TRUE, 2, 5, True, 30,
                                                  vocab_file=str(tmp_path / "missing.csv"))
