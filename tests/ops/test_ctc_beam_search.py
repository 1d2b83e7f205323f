"""tf.nn.ctc_beam_search_decoder (v2, v1 with merge_repeated, compat.v1 ..._v2),
tf.nn.ctc_unique_labels and Keras' beam search ctc_decode against TensorFlow 2.21's outputs
on the same inputs (tests/fixtures/ctc_beam_search: ties, several beam widths and path
counts, float64), eagerly and in tf.function; TF's errors for bad input."""

from __future__ import annotations

import os

import numpy as np
import pytest

import ndflow as tf

V = np.load(os.path.join(os.path.dirname(__file__), "..", "fixtures", "ctc_beam_search",
                         "values.npz"))
CASES = sorted({k.split("/")[0] for k in V.files} - {"unique", "keras"})


def _decode(x, lengths, width, paths, merge):
    if merge == -1:
        return tf.nn.ctc_beam_search_decoder(x, lengths, beam_width=width, top_paths=paths)
    return tf.compat.v1.nn.ctc_beam_search_decoder(x, lengths, beam_width=width,
                                                   top_paths=paths, merge_repeated=bool(merge))


def _check(name, decoded, log_prob):
    width, paths, _ = V[f"{name}/params"]
    assert len(decoded) == paths
    for p, st in enumerate(decoded):
        np.testing.assert_array_equal(st.indices.numpy(), V[f"{name}/indices{p}"].reshape(-1, 2))
        np.testing.assert_array_equal(st.values.numpy(), V[f"{name}/values{p}"])
        np.testing.assert_array_equal(st.dense_shape.numpy(), V[f"{name}/shape{p}"])
        assert st.values.dtype == tf.int64 and st.indices.dtype == tf.int64
    want = V[f"{name}/log_prob"]
    assert log_prob.dtype.as_numpy_dtype == want.dtype
    np.testing.assert_allclose(log_prob.numpy(), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", CASES)
def test_decoder_equals_tensorflow_eagerly(name):
    width, paths, merge = (int(v) for v in V[f"{name}/params"])
    decoded, log_prob = _decode(V[f"{name}/inputs"], V[f"{name}/lengths"], width, paths, merge)
    _check(name, decoded, log_prob)


@pytest.mark.parametrize("name", ["b4_w10_top3", "ties_w10_top3_merge", "float64_w10_top3"])
def test_decoder_equals_tensorflow_in_a_function(name):
    width, paths, merge = (int(v) for v in V[f"{name}/params"])
    x = V[f"{name}/inputs"]

    @tf.function
    def run(x, lengths):
        return _decode(x, lengths, width, paths, merge)

    decoded, log_prob = run(tf.constant(x), tf.constant(V[f"{name}/lengths"]))
    _check(name, decoded, log_prob)
    concrete = run.get_concrete_function(tf.TensorSpec([None, x.shape[1], x.shape[2]],
                                                       tf.as_dtype(x.dtype)),
                                         tf.TensorSpec([None], tf.int32))
    shapes = [o.shape.as_list() for o in concrete.outputs]
    assert shapes == [[None, 2], [None], [2]] * paths + [[x.shape[1], paths]]


def test_v1_v2_names_and_not_differentiable():
    assert tf.compat.v1.nn.ctc_beam_search_decoder_v2 is tf.nn.ctc_beam_search_decoder
    x = tf.constant(V["b3_w3_top3/inputs"])
    with tf.GradientTape() as tape:
        tape.watch(x)
        _, log_prob = tf.nn.ctc_beam_search_decoder(x, V["b3_w3_top3/lengths"], beam_width=3)
    assert tape.gradient(log_prob, x) is None


def test_unique_labels_equal_tensorflow():
    unique, idx = tf.nn.ctc_unique_labels(V["unique/labels"])
    assert unique.dtype == tf.int64 and idx.dtype == tf.int32
    np.testing.assert_array_equal(unique.numpy(), V["unique/unique"])
    np.testing.assert_array_equal(idx.numpy(), V["unique/idx"])
    fn = tf.function(tf.compat.v1.nn.ctc_unique_labels)
    unique, idx = fn(tf.constant(V["unique/labels"], tf.int64))
    np.testing.assert_array_equal(unique.numpy(), V["unique/unique"])
    np.testing.assert_array_equal(idx.numpy(), V["unique/idx"])


@pytest.mark.parametrize("mask", [0, 2, -1])
def test_keras_ops_ctc_decode_beam_search(mask):
    dense, scores = tf.keras.ops.ctc_decode(V["keras/inputs"], V["keras/lengths"],
                                            strategy="beam_search", beam_width=4, top_paths=2,
                                            mask_index=mask)
    np.testing.assert_array_equal(np.asarray(dense), V[f"keras/decoded_mask{mask}"])
    np.testing.assert_allclose(np.asarray(scores), V[f"keras/scores_mask{mask}"], rtol=1e-5,
                               atol=1e-5)


def test_keras_backend_ctc_decode_beam_search():
    probs = tf.nn.softmax(V["keras/inputs"]).numpy()
    dense, log_prob = tf.keras.backend.ctc_decode(probs, V["keras/lengths"], greedy=False,
                                                  beam_width=4, top_paths=2)
    np.testing.assert_array_equal(np.stack([d.numpy() for d in dense]),
                                  V["keras/backend_decoded"])
    np.testing.assert_allclose(log_prob.numpy(), V["keras/backend_log_prob"], rtol=1e-5,
                               atol=1e-5)


X = V["b3_w3_top3/inputs"]                      # [8, 3, 6]


@pytest.mark.parametrize("args, error, message", [
    ((X, [9, 5, 3]), tf.errors.FailedPreconditionError, r"sequence_length\(0\) <= 8"),
    ((X, [8, 5]), tf.errors.FailedPreconditionError,
     r"len\(sequence_length\) != batch_size.  len\(sequence_length\):  2 batch_size: 3"),
    ((X[0], [8, 5, 3]), tf.errors.InvalidArgumentError, "inputs is not a 3-Tensor"),
    ((X, [[8, 5, 3]]), tf.errors.InvalidArgumentError, "sequence_length is not a vector"),
    ((X[:0], [0, 0, 0]), tf.errors.InvalidArgumentError, "inputs must not be empty"),
    ((X, [8, 5, 3], 2, 3), tf.errors.InvalidArgumentError,
     "requested more paths than the beam width."),
    ((X, [8, 0, 3], 3, 2), tf.errors.InvalidArgumentError,
     "Less leaves in the beam search than requested."),
])
def test_errors_as_tensorflow(args, error, message):
    x, lengths, *rest = args
    width, paths = rest or (3, 1)
    with pytest.raises(error, match=message) as info:
        tf.nn.ctc_beam_search_decoder(x, lengths, beam_width=width, top_paths=paths)
    assert "CTCBeamSearchDecoder" in str(info.value)

    # shapes unknown when traced: the kernel finds the same errors
    @tf.function(input_signature=[tf.TensorSpec(None, tf.float32),
                                  tf.TensorSpec(None, tf.int32)])
    def run(x, lengths):
        return tf.nn.ctc_beam_search_decoder(x, lengths, beam_width=width, top_paths=paths)

    with pytest.raises(error, match=message):
        run(tf.constant(x), tf.constant(lengths))


def test_graph_shape_errors():
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32, [None, 3, 6])
        with pytest.raises(ValueError, match="Dimensions must be equal, but are 3 and 2"):
            tf.nn.ctc_beam_search_decoder(x, tf.compat.v1.placeholder(tf.int32, [2]))
        with pytest.raises(ValueError, match="Shape must be rank 3 but is rank 2"):
            tf.nn.ctc_beam_search_decoder(x[0], tf.compat.v1.placeholder(tf.int32, [3]))
        with pytest.raises(ValueError, match="Shape must be rank 1 but is rank 2"):
            tf.nn.ctc_beam_search_decoder(x, tf.compat.v1.placeholder(tf.int32, [3, 1]))
        with pytest.raises(ValueError, match="beam_width"):
            tf.nn.ctc_beam_search_decoder(x, tf.compat.v1.placeholder(tf.int32, [3]),
                                          beam_width=0)
