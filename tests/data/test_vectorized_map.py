"""A parallel map runs its function on chunks of elements at once (vectorized_map.py): the
results must be exactly the per-element ones, and anything without a batching rule, or a chunk
that cannot run as a whole, must fall back to the per-element path."""

import numpy as np
import pytest

import ndflow as tf
from ndflow.core.nest import flatten
from ndflow.data.vectorized_map import vectorize


def _map_fn_of(ds):
    while not hasattr(ds, "_fn"):
        ds = ds._input
    return ds


def _records(n, sizes=None):
    out = []
    for i in range(n):
        size = 12 if sizes is None else sizes[i]
        ex = tf.train.Example(features=tf.train.Features(feature={
            "image": tf.train.Feature(bytes_list=tf.train.BytesList(
                value=[bytes((i * 7 + k) % 256 for k in range(size))])),
            "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[i])),
        }))
        out.append(ex.SerializeToString())
    return out


FEATURES = {"image": tf.io.FixedLenFeature([], tf.string),
            "label": tf.io.FixedLenFeature([], tf.int64)}


def _decode(record):
    f = tf.io.parse_single_example(record, FEATURES)
    x = tf.cast(tf.reshape(tf.io.decode_raw(f["image"], tf.uint8), [2, 3, 2]), tf.float32)
    y = tf.reverse(x, axis=[-2]) / 255.0 + tf.cast(f["label"], tf.float32)
    z = tf.transpose(y, [2, 0, 1])
    w = tf.concat([tf.reduce_sum(z, axis=1), tf.reduce_max(z, axis=-2)], axis=0)
    v = tf.stack([tf.expand_dims(w, 0), tf.expand_dims(w, 0) * 2.0], axis=1)
    s = tf.cast(tf.shape(x), tf.float32)
    u = tf.pad(tf.tile(tf.slice(x, [0, 1, 0], [2, 2, 1]), [1, 1, 2]), [[1, 0], [0, 0], [0, 1]])
    return {"v": tf.squeeze(v, axis=[0]), "s": s + 0.0 * w[0, 0],
            "u": u, "sl": x[..., ::2, 0] + x[1:, tf.newaxis, -1, :1],
            "hot": tf.one_hot(f["label"] % 3, 3),
            "g": tf.gather(tf.constant([10.0, 20.0, 30.0]), f["label"] % 3)}, f["label"]


def test_vectorized_map_gives_the_per_element_results():
    records = _records(100)
    ds = tf.data.Dataset.from_tensor_slices(records)
    parallel = list(ds.map(_decode, num_parallel_calls=2).as_numpy_iterator())
    sequential = list(ds.map(_decode).as_numpy_iterator())
    assert vectorize(_map_fn_of(ds.map(_decode, num_parallel_calls=2))._fn,
                     flatten(ds.element_spec)) is not None
    assert len(parallel) == len(sequential) == 100
    for (a, la), (b, lb) in zip(parallel, sequential):
        assert la == lb
        for key in a:
            assert a[key].shape == b[key].shape and a[key].dtype == b[key].dtype, key
            np.testing.assert_allclose(a[key], b[key], rtol=1e-6, err_msg=key)


def test_random_ops_draw_per_element_values():
    ds = tf.data.Dataset.from_tensor_slices(np.zeros((200, 4), np.float32))
    out = np.stack(list(ds.map(lambda x: x + tf.random.uniform([4]),
                               num_parallel_calls=2).as_numpy_iterator()))
    assert out.shape == (200, 4)
    assert len({tuple(r) for r in out.round(6)}) == 200  # no element repeats another's draw
    assert 0.0 <= out.min() and out.max() < 1.0


def test_a_chunk_of_different_shapes_runs_per_element():
    sizes = [12] * 40 + [6] + [12] * 40
    ds = tf.data.Dataset.from_tensor_slices(_records(81, sizes))

    def decode(record):
        return tf.io.decode_raw(tf.io.parse_single_example(record, FEATURES)["image"],
                                tf.uint8) + 1

    out = list(ds.map(decode, num_parallel_calls=2).as_numpy_iterator())
    assert [len(o) for o in out] == sizes
    np.testing.assert_array_equal(out[40], np.frombuffer(
        bytes((40 * 7 + k) % 256 for k in range(6)), np.uint8) + 1)


def test_errors_still_name_the_element():
    records = _records(70)
    records[66] = b"not a proto"
    ds = tf.data.Dataset.from_tensor_slices(records).map(
        lambda r: tf.io.parse_single_example(r, FEATURES)["label"] * 2, num_parallel_calls=2)
    got = []
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"element 66"):
        for v in ds.as_numpy_iterator():
            got.append(v)
    assert got == [2 * i for i in range(64)]  # the chunk before the bad one came out


def test_functions_without_a_batching_rule_stay_per_element():
    v = tf.Variable(3.0)
    ds = tf.data.Dataset.range(5)
    captured = ds.map(lambda x: tf.cast(x, tf.float32) * v, num_parallel_calls=2)
    assert vectorize(_map_fn_of(captured)._fn, flatten(ds.element_spec)) is None
    assert list(captured.as_numpy_iterator()) == [0.0, 3.0, 6.0, 9.0, 12.0]
    stateful = ds.map(lambda x: tf.py_function(lambda a: a * 2, [x], tf.int64),
                      num_parallel_calls=2)
    assert vectorize(_map_fn_of(stateful)._fn, flatten(ds.element_spec)) is None
    assert list(stateful.as_numpy_iterator()) == [0, 2, 4, 6, 8]
    constant = ds.map(lambda x: tf.constant(1.0), num_parallel_calls=2)
    assert list(constant.as_numpy_iterator()) == [1.0] * 5


def test_map_then_batch_runs_once_per_batch_with_the_unfused_results():
    records = _records(70)
    ds = tf.data.Dataset.from_tensor_slices(records)
    fused = list(ds.map(_decode).batch(32).as_numpy_iterator())
    assert [len(b[1]) for b in fused] == [32, 32, 6]
    per_element = list(ds.map(_decode).as_numpy_iterator())
    for i, (a, label) in enumerate(per_element):
        batch, row = fused[i // 32], i % 32
        assert batch[1][row] == label
        for key in a:
            np.testing.assert_allclose(batch[0][key][row], a[key], rtol=1e-6, err_msg=key)
    dropped = ds.map(_decode).batch(32, drop_remainder=True)
    assert [len(b[1]) for b in dropped.as_numpy_iterator()] == [32, 32]
    assert dropped.element_spec[1].shape.as_list() == [32]


def test_map_then_batch_keeps_tensorflows_errors():
    def decode(record):
        return tf.io.decode_raw(tf.io.parse_single_example(record, FEATURES)["image"],
                                tf.uint8)

    uneven = tf.data.Dataset.from_tensor_slices(_records(10, [12] * 5 + [6] + [12] * 4))
    with pytest.raises(tf.errors.InvalidArgumentError, match="Cannot batch tensors with "
                       "different shapes in component 0"):
        list(uneven.map(decode).batch(10))
    records = _records(10)
    records[7] = b"not a proto"
    bad = tf.data.Dataset.from_tensor_slices(records).map(decode).batch(4)
    got = []
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"element 7"):
        for b in bad:
            got.append(b)
    assert len(got) == 1
