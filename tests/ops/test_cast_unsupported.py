"""Casts TensorFlow has no kernel for (to and from strings) build like any Cast, as TF's op
takes any type, and fail when run with TF's UnimplementedError and message, eagerly, in a
tf.function and in a TF1 Session; a cast to the same type is the identity. Expected errors:
TF 2.21's, in tests/fixtures/cast_unsupported (generate.py)."""

from __future__ import annotations

import json
import os
import re

import numpy as np
import pytest

import ndflow as tf

with open(os.path.join(os.path.dirname(__file__), "..", "fixtures", "cast_unsupported",
                       "expected.json")) as _f:
    EXPECTED = json.load(_f)


def _kernel_message(text: str) -> str:
    """As generate.py reads TF's: the last line but for the node line, less ` [Op:...]`."""
    text = text.split("}} ", 1)[-1].split(" [Op:")[0]
    return [line for line in text.split("\n") if line and not line.startswith("\t [[")][-1]


def _run(src, dst, value, mode):
    x = tf.constant(value, dtype=src)
    if mode == "eager":
        return tf.cast(x, dst)
    if mode == "function":
        return tf.function(lambda t: tf.cast(t, dst))(x)
    with tf.Graph().as_default():
        y = tf.cast(tf.constant(value, dtype=src), dst)
        assert y.dtype == tf.as_dtype(dst)      # the graph builds, as TF's
        with tf.compat.v1.Session() as sess:
            return sess.run(y)


@pytest.mark.parametrize("mode", ["eager", "function", "session"])
@pytest.mark.parametrize("case", EXPECTED["cases"], ids=lambda c: f"{c['src']}-{c['dst']}")
def test_unsupported_cast_fails_as_tensorflow(case, mode):
    kind, message = case["errors"][mode]
    with pytest.raises(tf.errors.OpError) as info:
        _run(case["src"], case["dst"], case["value"], mode)
    assert type(info.value).__name__ == kind
    assert _kernel_message(info.value.message) == message
    if mode == "eager":
        assert "[Op:Cast]" in info.value.message
    if mode == "function":   # TF 2.21 for a lambda: its name is no tag TF's errors parse
        assert re.fullmatch(r"\{\{function_node (__inference_<lambda>_\d+)\}\} .*"
                            r"\n\t \[\[\{\{node Cast\}\}\]\] \[Op:\1\]",
                            info.value.message, re.DOTALL)


def test_cast_to_the_same_type_is_the_identity():
    out = tf.raw_ops.Cast(x=tf.constant(["a", "b"]), DstT=tf.string)
    assert [s.decode() for s in out.numpy()] == EXPECTED["string_to_string"]


def test_a_function_casting_a_constant_string_fails_when_run():
    @tf.function
    def f():
        return tf.cast(tf.constant("1.5"), tf.float32) + 1.0

    with pytest.raises(tf.errors.UnimplementedError, match="Cast string to float"):
        f()
    np.testing.assert_equal(tf.cast(tf.constant([1.5]), tf.int32).numpy(), [1])
