"""String ops in graphs: static shape inference against the computed shapes, Sessions with
every pass on (constant folding leaves string ops in place; CSE, remapper) against eager
values, and no gradients through strings. Values against TensorFlow 2.21 are
in tests/test_strings.py."""

from __future__ import annotations

import numpy as np
import pytest

import ndflow as tf
from tests.ops.harness import pipeline_session_config

v1 = tf.compat.v1
WORDS = [["Hello World", "  ab  "], ["\u00dcn\u00ef", "x,y"]]

# name -> (function of one 2x2 string tensor, whether its output shape is static)
STRING_CASES = {
    "join": lambda s: tf.strings.join([s, "-", s]),
    "length": lambda s: tf.strings.length(s, unit="UTF8_CHAR"),
    "lower": tf.strings.lower,
    "upper": tf.strings.upper,
    "strip": tf.strings.strip,
    "regex_full_match": lambda s: tf.strings.regex_full_match(s, r".*o.*"),
    "regex_replace": lambda s: tf.strings.regex_replace(s, r"(\w)(\w)", r"\2\1"),
    "regex_replace_first": lambda s: tf.strings.regex_replace(s, "[a-z]", "_", False),
    "substr": lambda s: tf.strings.substr(s, 1, 2),
    "reduce_join": lambda s: tf.strings.reduce_join(s, axis=1, separator="|"),
    "reduce_join_keepdims": lambda s: tf.strings.reduce_join(s, axis=0, keepdims=True),
    "as_string": lambda s: tf.strings.as_string(tf.strings.length(s), width=3, fill="0"),
    "hash_fast": lambda s: tf.strings.to_hash_bucket_fast(s, 1000),
    "hash_strong": lambda s: tf.strings.to_hash_bucket_strong(s, 1000, [1, 2]),
    "equal": lambda s: tf.equal(s, "x,y"),
    "transpose_gather": lambda s: tf.gather(tf.transpose(s), [1]),
    "concat_reshape": lambda s: tf.reshape(tf.concat([s, s], 0), [2, 4]),
    "where": lambda s: tf.where(tf.strings.length(s) > 4, s, "short"),
    "pad_reverse": lambda s: tf.reverse(tf.pad(s, [[0, 1], [1, 0]]), [0]),
    "base64": lambda s: tf.io.decode_base64(tf.io.encode_base64(s)),
    "segment_join": lambda s: tf.strings.unsorted_segment_join(s, [1, 1], 3, separator="+"),
    "ngrams": lambda s: tf.strings.ngrams(s, (1, 2), pad_values="#"),
    "decode_csv": lambda s: tf.io.decode_csv(tf.strings.join([tf.strings.as_string(
        tf.strings.length(s)), s], separator="|"), [[0], ["?"]], "|", False)[0],
}


def _eager(fn):
    return np.asarray(fn(tf.constant(WORDS)).numpy())


@pytest.mark.parametrize("name", sorted(STRING_CASES))
def test_static_shapes_match_the_computed_ones(name):
    want = _eager(STRING_CASES[name]).shape
    with tf.Graph().as_default():
        known = STRING_CASES[name](v1.placeholder(tf.string, [2, 2]))
        unknown = STRING_CASES[name](v1.placeholder(tf.string, [None, None]))
    assert known.shape.as_list() == list(want)
    assert unknown.shape.is_compatible_with(want)


@pytest.mark.parametrize("constants", [True, False], ids=["constant_inputs", "fed"])
@pytest.mark.parametrize("name", sorted(STRING_CASES))
def test_pass_pipeline_keeps_string_values(name, constants):
    want = _eager(STRING_CASES[name])
    with tf.Graph().as_default():
        src = tf.constant(WORDS) if constants else v1.placeholder(tf.string, [2, 2])
        out = tf.identity(STRING_CASES[name](src))
        with v1.Session(config=pipeline_session_config(False)) as sess:
            got = sess.run(out, {} if constants else {src: WORDS})
    assert np.asarray(got).tolist() == want.tolist()


def test_no_gradient_flows_through_strings():
    with tf.Graph().as_default():
        x = v1.placeholder(tf.float32, [2])
        s = tf.strings.as_string(x)
        y = tf.strings.to_number(s) * x
        assert tf.gradients(tf.strings.to_number(s), [x]) == [None]
        with v1.Session() as sess:
            g = sess.run(tf.gradients(y, [x])[0], {x: [1.5, 2.0]})
    np.testing.assert_allclose(g, [1.5, 2.0])  # only the direct path to x
    x = tf.constant([1.0, 2.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        z = tf.strings.to_number(tf.strings.as_string(x))
    assert tape.gradient(z, x) is None


def test_regexes_match_characters_of_utf8_text():
    """RE2 runs on UTF-8 text: a class such as [^ a-z¿] holds whole characters (the NMT
    tutorial's standardization keeps '¿' and drops 'í' whole); a string that is not UTF-8 is
    matched byte by byte. Expected values from TensorFlow 2.21."""
    text = tf.strings.lower(tf.constant("¿Todavía está en casa?"))
    out = tf.strings.regex_replace(text, "[^ a-z.?!,¿]", "")
    assert out.numpy().decode() == "¿todava est en casa?"
    assert tf.strings.regex_replace(tf.constant("añb"), "a.b", "X").numpy() == b"X"
    assert tf.strings.regex_full_match(tf.constant("é"), ".").numpy()
    assert tf.strings.regex_replace(tf.constant([b"\xffab"]), "a", "X").numpy().tolist() == \
        [b"\xffXb"]
    assert tf.strings.regex_replace(tf.constant("aaa"), "a*", "-").numpy() == b"-"
