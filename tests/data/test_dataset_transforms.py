"""tf.data transformations: values vs NumPy/Python, TensorFlow 2.21's specs, cardinalities,
orders and errors (checked with the TF oracle); the shuffle's buffer semantics and seeds here
(its exact TF orders: test_dataset_shuffle_like_tf.py)."""

import gc
import os
import threading
import time

import numpy as np
import pytest

import ndflow as tf

D = tf.data.Dataset


def spec(shape, dtype):
    return tf.TensorSpec(shape, dtype)


def values(ds):
    return [v.tolist() if isinstance(v, np.ndarray) else v for v in ds.as_numpy_iterator()]


def test_map_is_traced_once_and_keeps_structure():
    traces = []

    def f(x):
        traces.append(1)  # Python side effect: runs only while tracing
        return x * 2, {"a": tf.cast(x, tf.float32)}
    ds = D.range(5).map(f)
    assert ds.element_spec == (spec([], tf.int64), {"a": spec([], tf.float32)})
    assert [(a, d["a"]) for a, d in ds.as_numpy_iterator()] == [(i * 2, float(i))
                                                               for i in range(5)]
    list(ds)
    assert len(traces) == 1
    assert D.range(3).map(lambda x: [x, x]).element_spec == (spec([], tf.int64),) * 2


def test_map_autograph_and_unpacking():
    def f(x, y):
        if x > 1:
            return x + y
        return x - y
    ds = D.from_tensor_slices(([0, 1, 2, 3], [10, 10, 10, 10])).map(f)
    assert values(ds) == [-10, -9, 12, 13]


def test_parallel_map_preserves_order_and_overlaps():
    x = np.random.default_rng(0).normal(size=(64, 16)).astype(np.float32)
    want = np.tanh(x) * 2
    par = D.from_tensor_slices(x).map(lambda v: tf.tanh(v) * 2,
                                      num_parallel_calls=tf.data.AUTOTUNE)
    np.testing.assert_allclose(np.stack(list(par.as_numpy_iterator())), want, rtol=1e-6)
    unordered = D.range(50).map(lambda v: v + 1, num_parallel_calls=4, deterministic=False)
    assert sorted(values(unordered)) == list(range(1, 51))
    threads = set()

    def record(v):
        threads.add(threading.get_ident())
        time.sleep(0.002)
        return v
    spread = D.range(16).map(lambda v: tf.py_function(record, [v], tf.int64),
                             num_parallel_calls=4)
    assert values(spread) == list(range(16))
    assert len(threads) > 1


def test_map_errors_name_the_transformation_and_element():
    bad = D.range(3).map(lambda x: tf.debugging.check_numerics(
        tf.cast(x, tf.float32) / tf.cast(x, tf.float32), "bad"))
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"MapDataset transformation \(element 0\): bad : Tensor had NaN"):
        list(bad)

    def boom(v):
        if v == 2:
            raise ValueError("boom")
        return v
    raising = D.range(4).map(lambda x: tf.py_function(boom, [x], tf.int64),
                             num_parallel_calls=2)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"ParallelMapDatasetV2 transformation \(element 2\).*boom"):
        list(raising)
    with pytest.raises(TypeError, match="AddV2"):
        D.range(3).map(lambda x: x + "a")


def test_filter_and_reduce():
    assert values(D.range(10).filter(lambda x: x % 3 == 0)) == [0, 3, 6, 9]
    with pytest.raises(ValueError, match="`predicate` must return a `tf.bool` scalar tensor, "
                                         "but its return type is"):
        D.range(3).filter(lambda x: x)
    assert int(D.range(5).reduce(np.int64(0), lambda s, x: s + x)) == 10
    total, count = D.from_tensor_slices([1.5, 2.5]).reduce(
        (np.float32(0), np.int32(0)), lambda s, x: (s[0] + x, s[1] + 1))
    assert float(total) == 4.0 and int(count) == 2


def test_batch_specs_values_and_cardinality():
    assert D.range(10).batch(3).element_spec == spec([None], tf.int64)
    assert D.range(10).batch(3, drop_remainder=True).element_spec == spec([3], tf.int64)
    assert values(D.range(7).batch(3)) == [[0, 1, 2], [3, 4, 5], [6]]
    assert values(D.range(7).batch(3, drop_remainder=True)) == [[0, 1, 2], [3, 4, 5]]
    assert int(D.range(10).batch(3).cardinality()) == 4
    assert int(D.range(10).batch(3, True).cardinality()) == 3
    x = np.arange(20, dtype=np.float32).reshape(10, 2)
    bulk = [b for b in D.from_tensor_slices(x).batch(4).as_numpy_iterator()]
    one_by_one = [b for b in D.from_tensor_slices(x).map(lambda v: v).batch(4)
                  .as_numpy_iterator()]
    for a, b, start in zip(bulk, one_by_one, range(0, 10, 4)):
        np.testing.assert_array_equal(a, x[start:start + 4])
        np.testing.assert_array_equal(b, x[start:start + 4])
    d = D.from_tensor_slices({"a": [1, 2, 3], "b": [[1.0], [2.0], [3.0]]}).batch(2)
    assert d.element_spec == {"a": spec([None], tf.int32), "b": spec([None, 1], tf.float32)}
    with pytest.raises(tf.errors.InvalidArgumentError, match="Batch size must be greater"):
        D.range(3).batch(0)


def test_batch_of_different_shapes_is_tensorflows_error():
    ragged = D.from_generator(lambda: iter([np.zeros(2), np.zeros(3)]),
                              output_signature=spec([None], tf.float64))
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"Cannot batch tensors with different shapes in component 0\. "
                             r"First element had shape \[2\] and element 1 had shape \[3\]\."):
        list(ragged.batch(2))


def test_padded_batch_and_unbatch():
    gen = D.from_generator(lambda: iter([[1], [2, 3], [4, 5, 6]]),
                           output_signature=spec([None], tf.int32))
    pb = gen.padded_batch(2)
    assert pb.element_spec == spec([None, None], tf.int32)
    assert values(pb) == [[[1, 0], [2, 3]], [[4, 5, 6]]]
    pairs = D.from_tensor_slices(([[1, 2], [3, 4], [5, 6]], ["a", "b", "c"])).map(
        lambda x, s: (x[:tf.cast(x[0] % 3, tf.int32)], s))
    pb2 = pairs.padded_batch(2, padded_shapes=([4], []), padding_values=(-1, "z"))
    assert pb2.element_spec == (spec([None, 4], tf.int32), spec([None], tf.string))
    got = list(pb2.as_numpy_iterator())
    assert got[0][0].tolist() == [[1, -1, -1, -1], [-1, -1, -1, -1]]
    assert got[1][0].tolist() == [[5, 6, -1, -1]] and got[1][1].tolist() == [b"c"]
    with pytest.raises(ValueError, match=r"The padded shape \(2,\) is not compatible with the "
                                         r"shape \(3,\)"):
        D.from_tensor_slices([[1, 2, 3]]).padded_batch(1, padded_shapes=[2])
    ub = D.range(6).batch(4).unbatch()
    assert values(ub) == list(range(6)) and int(ub.cardinality()) == -2
    with pytest.raises(ValueError, match="Cannot unbatch an input with scalar components."):
        D.range(3).unbatch()


def test_shuffle_buffer_semantics_and_seeds():
    assert values(D.range(10).shuffle(1)) == list(range(10))
    for seed in range(20):  # TF's buffer: output i comes from the first i + buffer inputs
        out = values(D.range(30).shuffle(4, seed=seed))
        assert sorted(out) == list(range(30))
        assert all(v < i + 4 for i, v in enumerate(out))
    fixed = D.range(20).shuffle(20, seed=5, reshuffle_each_iteration=False)
    assert values(fixed) == values(fixed)
    again = D.range(20).shuffle(20, seed=5, reshuffle_each_iteration=False)
    assert values(again) == values(fixed)  # same seed, same order (also across runs)
    reshuffled = D.range(20).shuffle(20, seed=5)
    assert values(reshuffled) != values(reshuffled)
    assert int(D.range(10).shuffle(4, seed=1).cardinality()) == 10
    with pytest.raises(tf.errors.InvalidArgumentError, match="buffer_size must be greater"):
        D.range(3).shuffle(0)
    x = np.arange(10)
    batches = [b for b in D.from_tensor_slices((x, x * 2)).shuffle(10, seed=3).batch(4)
               .as_numpy_iterator()]
    firsts = np.concatenate([b[0] for b in batches])
    assert sorted(firsts.tolist()) == list(range(10))
    np.testing.assert_array_equal(np.concatenate([b[1] for b in batches]), firsts * 2)


def test_repeat_take_skip_enumerate_cardinality():
    assert values(D.range(3).repeat(2)) == [0, 1, 2, 0, 1, 2]
    assert values(D.range(3).repeat().take(7)) == [0, 1, 2, 0, 1, 2, 0]
    assert values(D.range(10).repeat(2).batch(4)) == [[0, 1, 2, 3], [4, 5, 6, 7],
                                                      [8, 9, 0, 1], [2, 3, 4, 5], [6, 7, 8, 9]]
    assert values(D.range(7).skip(2).take(3)) == [2, 3, 4]
    assert values(D.range(3).repeat(0)) == []
    assert list(D.range(3).enumerate(start=2).as_numpy_iterator()) == [(2, 0), (3, 1), (4, 2)]
    cards = [D.range(3).repeat(), D.range(10).filter(lambda x: x > 3), D.range(10).take(3),
             D.range(10).skip(30), D.range(3).take(-1), D.range(5).skip(-1),
             D.range(5).repeat().take(4), D.range(5).repeat().skip(4),
             D.range(10).filter(lambda x: x > 3).take(0), D.range(0).repeat(),
             D.range(3).repeat(0)]
    assert [int(d.cardinality()) for d in cards] == [-1, -2, 3, 0, 3, 0, 4, -1, -2, 0, 0]
    assert values(D.range(0).repeat()) == []


def test_interleave_and_flat_map_order():
    inter = D.range(1, 4).interleave(lambda x: D.from_tensors(x).repeat(3), cycle_length=2,
                                     block_length=2)
    assert values(inter) == [1, 1, 2, 2, 1, 2, 3, 3, 3]  # TensorFlow's order
    assert values(D.range(3).flat_map(lambda x: D.range(x))) == [0, 0, 1]


def test_cache_in_memory_and_in_a_file(tmp_path):
    calls = []

    def count(v):
        calls.append(1)
        return v
    cached = D.range(4).map(lambda x: tf.py_function(count, [x], tf.int64)).cache()
    assert values(cached) == values(cached) == [0, 1, 2, 3]
    assert len(calls) == 4
    path = str(tmp_path / "c")
    fc = D.from_tensor_slices((["a", "bb"], [[1.0, 2.0], [3.0, 4.0]])).cache(path)
    first = list(fc.as_numpy_iterator())
    assert os.path.exists(path + ".index") and not os.path.exists(path + "_0.lockfile")
    reread = D.from_tensor_slices((["x", "y"], [[0.0, 0.0], [0.0, 0.0]])).cache(path)
    second = list(reread.as_numpy_iterator())  # another run: read from the file
    assert [s for s, _ in second] == [b"a", b"bb"]
    np.testing.assert_array_equal(np.stack([v for _, v in second]),
                                  np.stack([v for _, v in first]))
    with open(path + ".data-00000-of-00001", "r+b") as f:
        f.write(b"\xff")
    with pytest.raises(tf.errors.DataLossError):
        list(reread)


FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures", "tf_data_cache")


def test_file_cache_is_tensorflows_format(tmp_path):
    """Reads the cache TensorFlow 2.21 wrote (generate.py beside it) instead of the input,
    and writes the same keys, dtypes and values for the same pipeline."""
    def pipeline():
        return D.range(12).map(lambda x: (x * 3, tf.strings.as_string(x),
                                          tf.fill([2], tf.cast(x, tf.float32) / 4)))
    from_tf = list(D.range(0).map(lambda x: (x, tf.strings.as_string(x),
                                             tf.fill([2], tf.cast(x, tf.float32))))
                   .cache(os.path.join(FIXTURES, "cache")).as_numpy_iterator())
    want = list(pipeline().as_numpy_iterator())
    assert len(from_tf) == 12
    for (a, b, c), (x, y, z) in zip(from_tf, want):
        assert a == x and b == y
        np.testing.assert_array_equal(c, z)
    prefix = str(tmp_path / "mine")
    assert len(list(pipeline().cache(prefix))) == 12
    ours = tf.train.load_checkpoint(prefix)
    theirs = tf.train.load_checkpoint(os.path.join(FIXTURES, "cache"))
    assert ours.get_variable_to_dtype_map() == theirs.get_variable_to_dtype_map()
    assert "     11_2" in ours.get_variable_to_shape_map()
    for key in theirs.get_variable_to_shape_map():
        np.testing.assert_array_equal(ours.get_tensor(key), theirs.get_tensor(key))


def test_file_cache_partial_pass_and_concurrent_writer(tmp_path):
    prefix = str(tmp_path / "c")
    it = iter(D.range(5).cache(prefix))
    next(it)
    assert os.path.exists(prefix + "_0.lockfile")
    with pytest.raises(tf.errors.AlreadyExistsError, match="concurrent caching iterator"):
        next(iter(D.range(5).cache(prefix)))
    del it  # a partial pass caches nothing and releases the lock
    gc.collect()
    assert not os.path.exists(prefix + "_0.lockfile") and not os.path.exists(prefix + ".index")
    assert [int(v) for v in D.range(5).cache(prefix)] == list(range(5))
    assert os.path.exists(prefix + ".index")
    with pytest.raises(tf.errors.InvalidArgumentError, match="holds int64 tensors"):
        list(D.range(5).map(lambda x: tf.cast(x, tf.float32)).cache(prefix))


def test_prefetch_runs_ahead_on_a_thread():
    produced = []

    def produce(v):
        produced.append(int(v))
        return v
    ds = D.range(20).map(lambda x: tf.py_function(produce, [x], tf.int64)).prefetch(4)
    it = iter(ds)
    assert int(next(it)) == 0
    deadline = time.time() + 5
    while len(produced) < 5 and time.time() < deadline:
        time.sleep(0.01)
    assert len(produced) >= 5  # elements prepared before they were asked for
    assert [int(v) for v in it] == list(range(1, 20))
    with pytest.raises(tf.errors.InvalidArgumentError, match="Cannot batch"):
        list(D.from_generator(lambda: iter([[1], [1, 2]]), output_signature=spec(
            [None], tf.int32)).batch(2).prefetch(tf.data.AUTOTUNE))


def test_as_numpy_iterator_and_apply():
    assert D.range(3).apply(lambda d: d.map(lambda x: x + 1)).cardinality().numpy() == 3
    with pytest.raises(TypeError, match="must return a `tf.data.Dataset`"):
        D.range(3).apply(lambda d: 1)


def test_shard_take_while_unique_scan_single_element():
    assert values(D.range(10).shard(3, 1)) == [1, 4, 7]
    assert int(D.range(10).shard(3, 1).cardinality()) == 3
    with pytest.raises(tf.errors.InvalidArgumentError, match="Index must be between 0 and 1"):
        D.range(3).shard(2, 2)
    assert values(D.range(10).take_while(lambda x: x < 4)) == [0, 1, 2, 3]
    assert int(D.range(10).take_while(lambda x: x < 4).cardinality()) == -2
    assert values(D.from_tensor_slices([1, 2, 1, 3, 2]).unique()) == [1, 2, 3]
    scanned = D.range(5).scan(tf.constant(0, tf.int64), lambda s, x: (s + x, s * 10))
    assert values(scanned) == [0, 0, 10, 30, 60] and int(scanned.cardinality()) == 5
    assert int(D.range(1).get_single_element()) == 0
    with pytest.raises(tf.errors.InvalidArgumentError, match="more than one element"):
        D.range(2).get_single_element()


def test_choose_sample_counter_random_list_files(tmp_path):
    choice = D.from_tensor_slices(np.array([0, 1, 1, 0], np.int64))
    chosen = D.choose_from_datasets([D.from_tensors("a").repeat(), D.from_tensors("b").repeat()],
                                    choice)
    assert values(chosen) == [b"a", b"b", b"b", b"a"]
    sampled = D.sample_from_datasets([D.range(3), D.range(10, 13)], seed=1)
    assert sorted(values(sampled)) == [0, 1, 2, 10, 11, 12]
    assert values(sampled) == values(D.sample_from_datasets([D.range(3), D.range(10, 13)],
                                                            seed=1))
    assert int(sampled.cardinality()) == -2
    assert values(D.counter(start=3, step=2).take(3)) == [3, 5, 7]
    assert int(D.counter().cardinality()) == -1
    assert len(set(values(D.random(seed=4).take(5)))) == 5
    for name in ("b.txt", "a.txt", "c.csv"):
        (tmp_path / name).write_text("x")
    listed = D.list_files(str(tmp_path / "*.txt"), shuffle=False)
    assert [os.path.basename(v) for v in values(listed)] == [b"a.txt", b"b.txt"]
    with pytest.raises(tf.errors.InvalidArgumentError, match="no files matched"):
        D.list_files(str(tmp_path / "*.none"))


def test_experimental_namespace():
    exp = tf.data.experimental
    with pytest.raises(tf.errors.FailedPreconditionError,
                       match="expected to contain 3 elements but contained at least 4"):
        list(D.range(5).apply(exp.assert_cardinality(3)))
    with pytest.raises(tf.errors.FailedPreconditionError, match="contained only 5 elements"):
        list(D.range(5).apply(exp.assert_cardinality(6)))
    assert int(D.range(5).filter(lambda x: True).apply(exp.assert_cardinality(5))
               .cardinality()) == 5
    listed = exp.from_list([(1, "a"), (2, "b")])
    assert list(listed.as_numpy_iterator()) == [(1, b"a"), (2, b"b")]
    assert values(D.range(5).apply(exp.map_and_batch(lambda x: x * 2, 2))) == [[0, 2], [4, 6],
                                                                               [8]]
    choice = D.from_tensor_slices(np.array([0, 0, 0, 1], np.int64))
    # the experimental endpoint keeps going past an empty dataset (stop_on_empty=False)
    assert values(exp.choose_from_datasets([D.range(2), D.range(10, 13)], choice)) == [0, 1, 10]
    assert values(D.range(3).apply(exp.enumerate_dataset(1))) == [(1, 0), (2, 1), (3, 2)]


def test_map_and_batch_parallelism_arguments():
    # TF 2.21: map_and_batch(f, 4, num_parallel_batches=2, num_parallel_calls=2) raises
    # ValueError("`map_and_batch` allows only one of `num_parallel_batches` and
    # `num_parallel_calls` to be set, but `num_parallel_batches` was set to 2 and
    # `num_parallel_calls` as set to 2."); with num_parallel_batches alone it maps
    # range(10) * 2 into [[0, 2, 4, 6], [8, 10, 12, 14], [16, 18]]
    exp = tf.data.experimental
    with pytest.raises(ValueError, match=r"^`map_and_batch` allows only one of "
                       r"`num_parallel_batches` and `num_parallel_calls` to be set, but "
                       r"`num_parallel_batches` was set to 2 and `num_parallel_calls` as set "
                       r"to 2\.$"):
        exp.map_and_batch(lambda x: x, 4, num_parallel_batches=2, num_parallel_calls=2)
    batched = D.range(10).apply(exp.map_and_batch(lambda x: x * 2, 4, num_parallel_batches=2))
    assert values(batched) == [[0, 2, 4, 6], [8, 10, 12, 14], [16, 18]]
