"""tf.io.parse_example / parse_single_example against what TensorFlow 2.21 returned for the
same serialized Examples (tests/fixtures/tfrecord/expected.json), and TF's error messages."""

import base64
import json
import os

import numpy as np
import pytest

import ndflow as tf

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures", "tfrecord")
with open(os.path.join(FIXTURES, "expected.json")) as _f:
    EXPECTED = json.load(_f)
EXAMPLES = [base64.b64decode(s) for s in EXPECTED["examples"]]
SPEC = {
    "image": tf.io.FixedLenFeature([], tf.string),
    "label": tf.io.FixedLenFeature([], tf.int64),
    "weights": tf.io.FixedLenFeature([2], tf.float32),
    "score": tf.io.FixedLenFeature([1], tf.float32, default_value=[-1.0]),
    "tags": tf.io.VarLenFeature(tf.string),
    "ids": tf.io.VarLenFeature(tf.int64),
    "seq": tf.io.FixedLenSequenceFeature([2], tf.float32, allow_missing=True),
    "missing": tf.io.FixedLenFeature([2, 1], tf.int64, default_value=[[4], [5]]),
}


def _values(t):
    a = t.numpy() if hasattr(t, "numpy") else t
    a = np.array(a, dtype=object) if isinstance(a, bytes) else np.asarray(a)
    if a.dtype == object:
        return [base64.b64encode(v).decode() for v in a.reshape(-1)]
    return a.reshape(-1).tolist()


def check(result, expected):
    assert sorted(result) == sorted(expected)
    for key, want in expected.items():
        got = result[key]
        if "indices" in want:
            assert isinstance(got, tf.SparseTensor), key
            assert got.indices.numpy().tolist() == want["indices"], key
            assert _values(got.values) == want["values"], key
            assert got.dense_shape.numpy().tolist() == want["dense_shape"], key
        else:
            assert got.dtype.name == want["dtype"], key
            assert list(got.shape) == want["shape"], key
            np.testing.assert_allclose(_values(got), want["values"], rtol=1e-6) \
                if got.dtype.is_floating else None
            if not got.dtype.is_floating:
                assert _values(got) == want["values"], key


def test_parse_example_batch_matches_tensorflow():
    check(tf.io.parse_example(EXAMPLES, SPEC), EXPECTED["parse_example"])


def test_parse_single_example_matches_tensorflow():
    check(tf.io.parse_single_example(EXAMPLES[0], SPEC), EXPECTED["parse_single_example"])


def test_in_tf_function_builds_parse_example_v2():
    @tf.function
    def parse(s):
        out = tf.io.parse_single_example(s, SPEC)
        return {k: tf.sparse.to_dense(v) if isinstance(v, tf.SparseTensor) else v
                for k, v in out.items()}
    out = parse(tf.constant(EXAMPLES[0]))
    assert out["label"].numpy() == 7
    assert out["tags"].numpy().tolist() == [b"cat", b"dog"]
    assert out["ids"].numpy().tolist() == [1, 2, 3]
    graph = parse.get_concrete_function(tf.TensorSpec([], tf.string)).graph
    assert "ParseExampleV2" in [op.type for op in graph.get_operations()]


def test_graph_shapes_as_tensorflow():
    with tf.Graph().as_default():
        s = tf.compat.v1.placeholder(tf.string, [None])
        out = tf.io.parse_example(s, SPEC)
        assert out["label"].shape.as_list() == [None]
        assert out["missing"].shape.as_list() == [None, 2, 1]
        assert out["seq"].shape.as_list() == [None, None, 2]
        assert out["tags"].indices.shape.as_list() == [None, 2]
        assert out["tags"].dense_shape.shape.as_list() == [2]


def test_sparse_to_dense():
    out = tf.io.parse_example(EXAMPLES, {"ids": tf.io.VarLenFeature(tf.int64)})["ids"]
    np.testing.assert_array_equal(tf.sparse.to_dense(out).numpy(),
                                  [[1, 2, 3], [9, 0, 0], [0, 0, 0]])
    np.testing.assert_array_equal(tf.sparse.to_dense(out, default_value=-1).numpy(),
                                  [[1, 2, 3], [9, -1, -1], [-1, -1, -1]])


@pytest.mark.parametrize("case", ["wrong_type", "wrong_size", "missing", "sparse_type"])
@pytest.mark.parametrize("mode", ["single", "batch"])
def test_errors_as_tensorflow(case, mode):
    err = EXPECTED["errors"][case]
    s = base64.b64decode(err["serialized"])
    spec = {"ids": tf.io.VarLenFeature(tf.float32)} if case == "sparse_type" else \
        {"label": tf.io.FixedLenFeature([], tf.int64)}
    kind, message = err[mode]
    with pytest.raises(getattr(tf.errors, kind)) as info:
        if mode == "single":
            tf.io.parse_single_example(s, spec)
        elif case == "sparse_type":
            tf.io.parse_example([s], spec)
        else:
            tf.io.parse_example([EXAMPLES[0], s], spec)
    assert message in str(info.value)


def test_stride_error_and_bad_configs():
    kind, message = EXPECTED["errors"]["stride"]["batch"]
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        tf.io.parse_example(EXAMPLES[:1], {
            "weights": tf.io.FixedLenSequenceFeature([3], tf.float32, allow_missing=True)})
    assert message in str(info.value)
    with pytest.raises(ValueError, match="requires allow_missing to be True"):
        tf.io.parse_example(EXAMPLES, {"w": tf.io.FixedLenSequenceFeature([], tf.float32)})
    with pytest.raises(ValueError, match="Missing shape for feature x"):
        tf.io.parse_example(EXAMPLES, {"x": tf.io.FixedLenFeature(None, tf.int64)})
    with pytest.raises(ValueError, match="cannot be None or falsy"):
        tf.io.parse_example(EXAMPLES, {})
    with pytest.raises(tf.errors.InvalidArgumentError, match="tensor with 3 values"):
        tf.io.parse_example(EXAMPLES, {"x": tf.io.FixedLenFeature([2], tf.int64, [1, 2, 3])})
    with pytest.raises(tf.errors.InvalidArgumentError, match="not in the list of allowed"):
        tf.io.parse_example(EXAMPLES, {"x": tf.io.FixedLenFeature([], tf.int32)})
    with pytest.raises(tf.errors.InvalidArgumentError, match="Could not parse example"):
        tf.io.parse_single_example(b"\x0a\xff\xff", {"x": tf.io.FixedLenFeature([], tf.int64)})


def test_example_protos_exported():
    ex = tf.train.Example(features=tf.train.Features(feature={
        "x": tf.train.Feature(float_list=tf.train.FloatList(value=[1.5, 2.5])),
        "s": tf.train.Feature(bytes_list=tf.train.BytesList(value=[b"a"])),
        "i": tf.train.Feature(int64_list=tf.train.Int64List(value=[3]))}))
    out = tf.io.parse_single_example(ex.SerializeToString(), {
        "x": tf.io.FixedLenFeature([2], tf.float32), "s": tf.io.FixedLenFeature([], tf.string),
        "i": tf.io.FixedLenFeature([], tf.int64)})
    assert out["x"].numpy().tolist() == [1.5, 2.5]
    assert out["s"].numpy() == b"a" and out["i"].numpy() == 3
    assert tf.train.Example.FromString(EXAMPLES[0]).features.feature["label"] \
        .int64_list.value[0] == 7
    assert tf.train.SequenceExample and tf.train.FeatureList and tf.train.FeatureLists


SEQUENCES = [base64.b64decode(s) for s in EXPECTED["sequence_examples"]]
SEQ_CONTEXT = {"opt": tf.io.FixedLenFeature([], tf.int64, default_value=-1)}
SEQ_FEATURES = {"tok": tf.io.FixedLenSequenceFeature([], tf.int64),
                "vec": tf.io.FixedLenSequenceFeature([2], tf.float32),
                "words": tf.io.VarLenFeature(tf.string),
                "miss": tf.io.FixedLenSequenceFeature([], tf.int64, allow_missing=True)}


def test_parse_single_sequence_example_matches_tensorflow():
    context, lists = tf.io.parse_single_sequence_example(
        SEQUENCES[0], {"len": tf.io.FixedLenFeature([], tf.int64), **SEQ_CONTEXT},
        SEQ_FEATURES)
    want_context, want_lists = EXPECTED["parse_single_sequence_example"]
    check(context, want_context)
    check(lists, want_lists)


def test_parse_sequence_example_matches_tensorflow():
    got = tf.io.parse_sequence_example(SEQUENCES, SEQ_CONTEXT, SEQ_FEATURES)
    for result, want in zip(got, EXPECTED["parse_sequence_example"]):
        check(result, want)


def test_sequence_errors_as_tensorflow():
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="Feature list 'w2' is required but could not be found"):
        tf.io.parse_single_sequence_example(
            SEQUENCES[1], None, {"w2": tf.io.FixedLenSequenceFeature([], tf.string)})
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"Key: vec, Index: 0.  Number of values != expected.  values size:"
                             r" 2 but output shape: \[3\]"):
        tf.io.parse_sequence_example(SEQUENCES, None, {
            "vec": tf.io.FixedLenSequenceFeature([3], tf.float32)})
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="Feature list: tok, Index: 0.  Data types don't match. Expected "
                             "type: float"):
        tf.io.parse_single_sequence_example(SEQUENCES[0], None, {
            "tok": tf.io.VarLenFeature(tf.float32)})
    with pytest.raises(ValueError, match="at least one should have values"):
        tf.io.parse_single_sequence_example(SEQUENCES[0])


def test_sparse_tensor_returned_from_function_and_map():
    spec = {"ids": tf.io.VarLenFeature(tf.int64)}
    out = tf.function(lambda s: tf.io.parse_single_example(s, spec))(tf.constant(EXAMPLES[0]))
    assert isinstance(out["ids"], tf.SparseTensor)
    assert out["ids"].values.numpy().tolist() == [1, 2, 3]
    assert out["ids"].dense_shape.numpy().tolist() == [3]
    ds = tf.data.Dataset.from_tensor_slices(EXAMPLES).map(
        lambda s: tf.io.parse_single_example(s, spec)["ids"])
    assert [sp.values.numpy().tolist() for sp in ds] == [[1, 2, 3], [9], []]
    built = tf.SparseTensor([[0, 1]], [5.0], [2, 3])
    assert built.shape.as_list() == [2, 3] and built.dtype == tf.float32
    np.testing.assert_array_equal(tf.sparse.to_dense(built).numpy(), [[0, 5, 0], [0, 0, 0]])


def test_example_names_in_messages():
    bad = base64.b64decode(EXPECTED["errors"]["wrong_type"]["serialized"])
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="Name: ex1, Key: label, Index: 1.  Data types don't match"):
        tf.io.parse_example([EXAMPLES[0], bad], {"label": tf.io.FixedLenFeature([], tf.int64)},
                            example_names=["ex0", "ex1"])
