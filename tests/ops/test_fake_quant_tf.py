"""tf.quantization.fake_quant_with_min_max_args / vars / vars_per_channel against
TensorFlow 2.21 (tests/fixtures/tf_fake_quant, generate.py beside it): outputs bit for bit
(TF's nudged range and float32 steps: 4, 5, 6, 8 and 16 bits, narrow ranges, a positive
min, a zero range, per channel in 2-D and 4-D), the gradients w.r.t. the inputs, min and
max, and TF's errors."""

import os

import numpy as np
import pytest

import ndflow as tf
from tests.fixtures.tf_fake_quant.fq_cases import CASES, inputs

EXPECTED = np.load(os.path.join(os.path.dirname(__file__), "..", "fixtures", "tf_fake_quant",
                                "expected.npz"))
FUNCTIONS = {"args": tf.quantization.fake_quant_with_min_max_args,
             "vars": tf.quantization.fake_quant_with_min_max_vars,
             "per_channel": tf.quantization.fake_quant_with_min_max_vars_per_channel}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("traced", [False, True])
def test_outputs_and_gradients_equal_tensorflow(case, traced):
    kind, kwargs = CASES[case]
    data = inputs()
    args = {k: data[v] if isinstance(v, str) else v for k, v in kwargs.items()}
    x = tf.constant(args.pop("x"))
    watched = [x]
    if kind != "args":
        args["min"] = tf.constant(args["min"], tf.float32)
        args["max"] = tf.constant(args["max"], tf.float32)
        watched += [args["min"], args["max"]]
    weights = np.random.RandomState(1).uniform(0.5, 1.5, x.shape).astype(np.float32)

    def run(*tensors):
        with tf.GradientTape() as tape:
            tape.watch(list(tensors))
            kw = dict(args)
            if kind != "args":
                kw["min"], kw["max"] = tensors[1], tensors[2]
            y = FUNCTIONS[kind](tensors[0], **kw)
            loss = tf.reduce_sum(y * weights)
        return [y] + tape.gradient(loss, list(tensors))
    got = (tf.function(run) if traced else run)(*watched)
    np.testing.assert_array_equal(got[0].numpy(), EXPECTED[f"{case}/y"])
    for name, g in zip(("x", "min", "max"), got[1:]):
        np.testing.assert_allclose(g.numpy(), EXPECTED[f"{case}/grad_{name}"], rtol=1e-6,
                                   atol=1e-5)


@pytest.mark.parametrize("name, call", [
    ("min_not_below_max", lambda x: tf.quantization.fake_quant_with_min_max_args(x, 1.0, 1.0)),
    ("bits", lambda x: tf.quantization.fake_quant_with_min_max_args(x, num_bits=17)),
])
def test_bad_arguments(name, call):
    with pytest.raises(tf.errors.InvalidArgumentError) as e:
        call(inputs()["x"])
    assert str(EXPECTED[f"error/{name}"]) in str(e.value)
