"""tf.raw_ops: op functions by op name, keyword arguments only (TensorFlow's rule and
message), outputs as TensorFlow's (a tensor, a list, a namedtuple, None for no outputs)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import ndflow as tf

RNG = np.random.default_rng(3)
TF_OPS = json.loads((Path(__file__).parents[1] / "fixtures" / "tf_ops" /
                     "tf_2_21_ops.json").read_text())["ops"]


def test_values_match_numpy():
    a, b = RNG.normal(size=(3, 4)), RNG.normal(size=(3, 5))
    np.testing.assert_allclose(tf.raw_ops.AddV2(x=a, y=a).numpy(), 2 * a)
    np.testing.assert_allclose(tf.raw_ops.MatMul(a=a, b=b, transpose_a=True).numpy(), a.T @ b)
    np.testing.assert_array_equal(
        tf.raw_ops.ConcatV2(values=[a, a], axis=1).numpy(), np.concatenate([a, a], 1))
    parts = tf.raw_ops.Split(axis=1, value=a, num_split=2)   # TF's name for split_dim
    assert [p.shape.as_list() for p in parts] == [[3, 2], [3, 2]]
    assert tf.raw_ops.Cast(x=[1, 2], DstT=tf.float16).dtype == tf.float16


def test_several_outputs_are_a_namedtuple():
    out = tf.raw_ops.Unique(x=[4, 2, 4, 1])
    assert type(out).__name__ == "Unique" and out._fields == ("y", "idx")
    np.testing.assert_array_equal(out.y.numpy(), [4, 2, 1])
    np.testing.assert_array_equal(out.idx.numpy(), [0, 1, 0, 2])


def test_positional_arguments_are_tensorflows_type_error():
    with pytest.raises(TypeError, match=r"^add_v2 only takes keyword args \(possible keys: "
                       r"\['x', 'y', 'name'\]\)\. Please pass these args as kwargs instead\.$"):
        tf.raw_ops.AddV2(1.0, 2.0)
    with pytest.raises(TypeError, match="unexpected keyword argument 'T'"):
        tf.raw_ops.AddV2(x=1.0, y=2.0, T=tf.float32)  # inferred attrs are not arguments


def test_no_outputs_none_eagerly_operation_in_graphs():
    assert tf.raw_ops.NoOp() is None
    with tf.Graph().as_default():
        op = tf.raw_ops.NoOp(name="nothing")
        assert op.type == "NoOp" and op.name == "nothing"


def test_in_tf_function_and_compat_v1():
    assert tf.compat.v1.raw_ops is tf.raw_ops

    @tf.function
    def f(x):
        return tf.raw_ops.Relu(features=x)

    np.testing.assert_array_equal(f(tf.constant([-1.0, 2.0])).numpy(), [0.0, 2.0])


def test_lists_only_tensorflows_ops():
    names = dir(tf.raw_ops)
    assert len(names) > 400 and "AddV2" in names
    assert all(TF_OPS.get(n) is not None for n in names), \
        [n for n in names if TF_OPS.get(n) is None]
    with pytest.raises(AttributeError):
        tf.raw_ops._FusedConv2D  # noqa: B018 - ndflow-internal
    with pytest.raises(AttributeError):
        tf.raw_ops.NoSuchOp  # noqa: B018


SIGNATURES = json.loads((Path(__file__).parents[1] / "fixtures" / "tf_raw_ops" /
                         "signatures.json").read_text())


def test_parameters_are_tensorflows():
    """Every raw op takes TensorFlow's keyword names (its api_def renames included)."""
    import inspect
    wrong = {}
    for name in dir(tf.raw_ops):
        ours = list(inspect.signature(getattr(tf.raw_ops, name)).parameters)
        if set(ours) != set(SIGNATURES[name]):
            wrong[name] = (ours, SIGNATURES[name])
    assert not wrong, wrong
    with pytest.raises(TypeError, match="unexpected keyword argument 'reduction_indices'"):
        tf.raw_ops.Sum(input=[1, 2], reduction_indices=0)
    assert int(tf.raw_ops.Sum(input=[1, 2], axis=0)) == 3
