"""`Dataset.window`, `group_by_window`, `bucket_by_sequence_length` and
`tf.data.experimental.group_by_reducer`: ndflow gets TensorFlow 2.21's element_specs,
cardinalities and elements (tests/fixtures/tf_data_grouping, recorded by TF) and its errors."""

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

import ndflow as tf

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "tf_data_grouping"
_spec = importlib.util.spec_from_file_location("tf_data_grouping", FIXTURES / "pipelines.py")
pipelines = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(pipelines)
EXPECTED = json.loads((FIXTURES / "expected.json").read_text())["pipelines"]
D = tf.data.Dataset


@pytest.mark.parametrize("name", sorted(pipelines.PIPELINES))
def test_pipeline_matches_tensorflow(name):
    got = pipelines.describe(tf, pipelines.PIPELINES[name](tf))
    want = EXPECTED[name]
    assert got["spec"] == want["spec"]
    assert got["cardinality"] == want["cardinality"]
    assert got["values"] == want["values"]


def test_window_elements_are_datasets_with_tensorflows_spec_and_repr():
    ds = D.range(5).window(2)
    assert repr(ds.element_spec) == ("DatasetSpec(TensorSpec(shape=(), dtype=tf.int64, "
                                     "name=None), TensorShape([]))")
    first = next(iter(ds))
    assert isinstance(first, tf.data.Dataset)
    assert repr(first) == "<_VariantDataset element_spec=TensorSpec(shape=(), " \
        "dtype=tf.int64, name=None)>"
    assert int(first.cardinality()) == 2
    assert [list(w.as_numpy_iterator()) for w in ds] == [[0, 1], [2, 3], [4]]
    # every pass re-reads the input
    assert [list(w.as_numpy_iterator()) for w in ds] == [[0, 1], [2, 3], [4]]
    assert tf.data.DatasetSpec(tf.TensorSpec([], tf.int64)) == ds.element_spec


def test_window_arguments_may_be_tensors():
    ds = D.range(6).window(tf.constant(3, tf.int64), tf.constant(3, tf.int64),
                           drop_remainder=tf.constant(True))
    assert [list(w.as_numpy_iterator()) for w in ds] == [[0, 1, 2], [3, 4, 5]]


@pytest.mark.parametrize("args,what", [((0,), "size"), ((-1,), "size"), ((2, 0), "shift"),
                                       ((2, 1, 0), "stride")])
def test_window_rejects_non_positive_arguments(args, what):
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=f"Window {what} must be greater than zero"):
        D.range(3).window(*args)


def test_as_numpy_iterator_of_windows_is_tensorflows_type_error():
    with pytest.raises(TypeError, match="not supported for datasets that produce values"):
        D.range(3).window(2).as_numpy_iterator()


def test_group_by_window_argument_errors():
    with pytest.raises(ValueError, match="Either the `window_size` argument or the "
                                         "`window_size_func` argument must be specified"):
        D.range(4).group_by_window(lambda v: v, lambda k, w: w)
    with pytest.raises(ValueError, match="Either the `window_size`"):
        D.range(4).group_by_window(lambda v: v, lambda k, w: w, 2, lambda k: k)
    with pytest.raises(ValueError, match="requested dtype int64 for Tensor with dtype int32"):
        D.range(4).group_by_window(lambda v: tf.cast(v, tf.int32), lambda k, w: w, 2)
    with pytest.raises(ValueError, match=r"Invalid `key_func`. `key_func` must return a single "
                                         r"`tf.int64` scalar tensor but its return type is "
                                         r"TensorSpec\(shape=\(2,\)"):
        D.range(4).group_by_window(lambda v: tf.stack([v, v]), lambda k, w: w, 2)
    with pytest.raises(TypeError, match="Invalid `reduce_func`. `reduce_func` must return a "
                                        "single `tf.data.Dataset` object"):
        D.range(4).group_by_window(lambda v: v, lambda k, w: 3, 2)
    with pytest.raises(ValueError, match="Invalid `window_size_func`"):
        D.range(4).group_by_window(lambda v: v, lambda k, w: w,
                                   window_size_func=lambda k: tf.stack([k, k]))


def test_group_by_window_zero_window_size_fails_while_iterating():
    ds = D.range(4).group_by_window(lambda v: v, lambda k, w: w, window_size_func=lambda k: k - k)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="Window size must be greater than zero, but got 0"):
        list(ds)


def test_group_by_window_key_func_error_names_the_transformation_and_element():
    ds = D.from_tensor_slices(np.array([1., 2., 0.], np.float32)).group_by_window(
        lambda v: tf.cast(tf.debugging.check_numerics(1 / v, "inf key"), tf.int64),
        lambda k, w: w, 5)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"GroupByWindowDataset transformation \(element 2\).*inf key"):
        list(ds)


def test_bucket_by_sequence_length_errors():
    ds = pipelines._ragged(tf)
    with pytest.raises(ValueError, match=r"`len\(bucket_batch_sizes\)` must equal "
                                         r"`len\(bucket_boundaries\) \+ 1` but "
                                         r"`len\(bucket_batch_sizes\)=2`"):
        ds.bucket_by_sequence_length(lambda x: tf.shape(x)[0], [3, 6], [2, 2])
    over = ds.bucket_by_sequence_length(lambda x: tf.shape(x)[0], [3, 6], [2, 2, 2],
                                        pad_to_bucket_boundary=True)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="When pad_to_bucket_boundary=True, elements must have length "
                             r"< max\(bucket_boundaries\)"):
        list(over)


def test_group_by_reducer_errors():
    with pytest.raises(ValueError, match="Invalid `key_func`. Expected `key_func` to return a "
                                         "scalar tf.int64 tensor"):
        D.range(4).apply(tf.data.experimental.group_by_reducer(
            lambda v: tf.cast(v, tf.int32), pipelines._sum_reducer(tf)))
    bad = tf.data.experimental.Reducer(lambda k: np.int64(0),
                                       lambda s, x: tf.cast(s + x, tf.float32), lambda s: s)
    with pytest.raises(TypeError, match="Invalid `reducer`. The element types for the new "
                                        "state"):
        D.range(4).apply(tf.data.experimental.group_by_reducer(lambda v: v % 2, bad))
