"""Datasets built inside `tf.function`s (and TF1 graphs) from graph tensors, and
`Dataset.reduce` in graphs: ndflow returns what TensorFlow 2.21 returned for the cases of
tests/fixtures/tf_data_graph (recorded by TF), and each run reads that run's tensors."""

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

import ndflow as tf

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "tf_data_graph"
_spec = importlib.util.spec_from_file_location("tf_data_graph", FIXTURES / "cases.py")
cases = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cases)
EXPECTED = json.loads((FIXTURES / "expected.json").read_text())["cases"]


@pytest.mark.parametrize("name", sorted(cases.CASES))
def test_case_matches_tensorflow(name):
    assert cases.describe(tf, cases.CASES[name](tf)) == EXPECTED[name]


def test_the_graph_holds_dataset_ops_fed_by_the_functions_tensors():
    @tf.function
    def f(x):
        return tf.data.Dataset.from_tensor_slices(x).reduce(tf.constant(0.), lambda s, v: s + v)
    graph = f.get_concrete_function(tf.TensorSpec([None], tf.float32)).graph
    ops = {op.type: op for op in graph.get_operations()}
    assert "_GraphInputDataset" in ops and "_DatasetReduce" in ops
    assert ops["_GraphInputDataset"].inputs[0].op.type == "Placeholder"
    values = np.random.default_rng(0).normal(size=50).astype(np.float32)
    np.testing.assert_allclose(f(tf.constant(values)).numpy(), values.sum(), rtol=1e-5)


def test_reduce_runs_when_the_graph_runs_not_while_tracing():
    state = {"n": 0}

    def gen():
        state["n"] += 1
        yield from range(state["n"])
    ds = tf.data.Dataset.from_generator(gen, output_signature=tf.TensorSpec([], tf.int64))

    @tf.function
    def count():
        return ds.reduce(np.int64(0), lambda s, v: s + 1)
    assert [int(count()) for _ in range(3)] == [1, 2, 3]


def test_reduce_passes_a_tuple_element_as_one_argument_as_tensorflow():
    ds = tf.data.Dataset.from_tensor_slices(([1., 2.], [10., 20.]))
    assert float(ds.reduce(tf.constant(0.), lambda s, e: s + e[0] + e[1])) == 33.0
    with pytest.raises(TypeError, match="missing 1 required positional argument"):
        ds.reduce(tf.constant(0.), lambda s, a, b: s + a + b)


def test_tf1_placeholder_fed_to_an_initializable_iterator():
    graph = tf.Graph()
    with graph.as_default():
        x = tf.compat.v1.placeholder(tf.float32, [None])
        ds = tf.data.Dataset.from_tensor_slices(x).batch(2)
        assert ds.element_spec.shape.as_list() == [None]
        it = tf.compat.v1.data.make_initializable_iterator(ds)
        nxt = it.get_next()
        with tf.compat.v1.Session() as sess:
            sess.run(it.initializer, feed_dict={x: [1., 2., 3.]})
            assert sess.run(nxt).tolist() == [1., 2.]
            assert sess.run(nxt).tolist() == [3.]
            with pytest.raises(tf.errors.OutOfRangeError):
                sess.run(nxt)
            sess.run(it.initializer, feed_dict={x: [7., 8.]})
            assert sess.run(nxt).tolist() == [7., 8.]
        with pytest.raises(ValueError, match="one-shot iterator"):
            tf.compat.v1.data.make_one_shot_iterator(ds)


def test_a_graph_dataset_escaping_its_graph_is_a_clear_error():
    kept = []

    @tf.function
    def f(x):
        kept.append(tf.data.Dataset.from_tensor_slices(x))
        return x
    f(tf.constant([1, 2]))
    with pytest.raises(tf.errors.FailedPreconditionError, match="graph that built it"):
        list(kept[0])


def test_element_spec_of_graph_sources():
    specs = {}

    @tf.function
    def f(x, n):
        specs["slices"] = tf.data.Dataset.from_tensor_slices((x, [x[0], x[1]])).element_spec
        specs["tensors"] = tf.data.Dataset.from_tensors({"x": x}).element_spec
        specs["range"] = tf.data.Dataset.range(n, output_type=tf.int32).element_spec
        return x
    f(tf.constant([1., 2.]), tf.constant(3))
    assert specs["slices"] == (tf.TensorSpec([], tf.float32), tf.TensorSpec([], tf.float32))
    assert specs["tensors"] == {"x": tf.TensorSpec([2], tf.float32)}
    assert specs["range"] == tf.TensorSpec([], tf.int32)

    @tf.function
    def scalar(x):
        return tf.data.Dataset.from_tensor_slices(x)
    with pytest.raises(ValueError, match="Unbatching a tensor is only supported for rank >= 1"):
        scalar(tf.constant(1.))


def test_tf1_file_names_fed_to_file_datasets(tmp_path):
    """TF's classic TF1 pattern: a placeholder of file names, fed at iterator initialization
    (results as TensorFlow 2.21 gives them)."""
    records, texts = [], []
    for i in range(3):
        records.append(str(tmp_path / f"f{i}.tfrecord"))
        with tf.io.TFRecordWriter(records[-1]) as w:
            for j in range(i + 1):
                w.write(f"r{i}{j}".encode())
        texts.append(tmp_path / f"t{i}.txt")
        texts[-1].write_text(f"line{i}a\nline{i}b\n")
    graph = tf.Graph()
    with graph.as_default():
        names = tf.compat.v1.placeholder(tf.string, [None])
        ds = tf.data.TFRecordDataset(names).map(lambda r: tf.strings.length(r)).batch(2)
        it = tf.compat.v1.data.make_initializable_iterator(ds)
        lines = tf.data.Dataset.from_tensor_slices(names).interleave(
            lambda f: tf.data.TextLineDataset(f), cycle_length=2)
        it2 = tf.compat.v1.data.make_initializable_iterator(lines)
        nxt, nxt2 = it.get_next(), it2.get_next()

        def drain(sess, t):
            out = []
            with pytest.raises(tf.errors.OutOfRangeError):
                while True:
                    out.append(sess.run(t))
            return out
        with tf.compat.v1.Session() as sess:
            sess.run(it.initializer, {names: records[:2]})
            assert [b.tolist() for b in drain(sess, nxt)] == [[3, 3], [3]]
            sess.run(it.initializer, {names: records[2:]})
            assert sess.run(nxt).tolist() == [3, 3]
            sess.run(it2.initializer, {names: [str(t) for t in texts]})
            assert drain(sess, nxt2) == [b"line0a", b"line1a", b"line0b", b"line1b",
                                         b"line2a", b"line2b"]

    @tf.function
    def count(files):
        return tf.data.TFRecordDataset(files).reduce(tf.constant(0, tf.int64),
                                                     lambda n, r: n + 1)
    assert int(count(tf.constant(records))) == 6
    assert int(count(tf.constant(records[:1]))) == 1


def test_a_python_for_over_a_dataset_without_autograph_stops_with_tensorflows_error():
    @tf.function(autograph=False)
    def f():
        s = tf.constant(0, tf.int64)
        for v in tf.data.Dataset.range(3):
            s += v
        return s
    with pytest.raises(ValueError, match="idiom is only supported when AutoGraph is enabled"):
        f()
