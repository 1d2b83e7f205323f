"""What the ragged-tensor guide does, as TF 2.21 does it (expected values and texts printed by
TF 2.21 on the same inputs): tile, reverse, ==, map_fn with ragged results, embedding lookups
and string joins of ragged ids, dense-and-ragged concat, and the wrapped repr."""

import numpy as np
import pytest

import ndflow as tf

DIGITS = [[3, 1, 4, 1], [], [5, 9, 2], [6], []]


def test_tile_and_reverse():
    d = tf.ragged.constant(DIGITS)
    assert tf.tile(d, [1, 2]).to_list() == [[3, 1, 4, 1, 3, 1, 4, 1], [], [5, 9, 2, 5, 9, 2],
                                            [6, 6], []]
    assert tf.tile(tf.ragged.constant([[1, 2], [], [3]]), [2, 3]).to_list() == \
        [[1, 2, 1, 2, 1, 2], [], [3, 3, 3], [1, 2, 1, 2, 1, 2], [], [3, 3, 3]]
    r = tf.ragged.constant([[1, 2], [3], [4, 5, 6]])
    assert tf.reverse(r, [1]).to_list() == [[2, 1], [3], [6, 5, 4]]
    assert tf.reverse(r, [0]).to_list() == [[4, 5, 6], [3], [1, 2]]
    assert tf.reverse(r, [0, 1]).to_list() == [[6, 5, 4], [3], [2, 1]]

    @tf.function
    def make_palindrome(x, axis):
        return tf.concat([x, tf.reverse(x, [axis])], axis)
    assert make_palindrome(tf.ragged.constant([[1, 2], [3], [4, 5, 6]]), axis=1).to_list() \
        == [[1, 2, 2, 1], [3, 3], [4, 5, 6, 6, 5, 4]]


def test_equality_is_elementwise():
    r = tf.ragged.constant([[1, 2], [3]])
    assert (r == tf.ragged.constant([[1, 5], [3]])).to_list() == [[True, False], [True]]
    assert (r != r).to_list() == [[False, False], [False]]
    assert (r == None) is False and (r == [[1, 2]]) is False  # noqa: E711


def test_map_fn_with_ragged_results():
    d = tf.ragged.constant(DIGITS)
    assert tf.map_fn(tf.math.square, d).to_list() == [[9, 1, 16, 1], [], [25, 81, 4], [36], []]


def test_embedding_lookup_and_string_join_of_ragged():
    queries = tf.ragged.constant([["Who", "is"], ["Pause"]])
    table = tf.constant(np.arange(8.0).reshape(4, 2), tf.float32)
    ids = tf.ragged.constant([[1, 3], [0]])
    looked = tf.nn.embedding_lookup(table, ids)
    assert looked.to_list() == [[[2.0, 3.0], [6.0, 7.0]], [[0.0, 1.0]]]
    marker = tf.fill([queries.nrows(), 1], "#")     # an int64 tensor beside a Python int
    padded = tf.concat([marker, queries, marker], axis=1)
    bigrams = tf.strings.join([padded[:, :-1], padded[:, 1:]], separator="+")
    assert bigrams.to_list() == [[b"#+Who", b"Who+is", b"is+#"], [b"#+Pause", b"Pause+#"]]


def test_conversion_errors_and_repr_are_tfs():
    with pytest.raises(ValueError, match="Can't convert Python sequence with mixed types"):
        tf.ragged.constant([["one", "two"], [3, 4]])
    with pytest.raises(ValueError, match="non-rectangular"):
        tf.constant([[1, 2], [3]])
    sentences = tf.ragged.constant([["Let's", "build", "some", "ragged", "tensors", "!"],
                                    ["We", "can", "use", "tf.ragged.constant", "."]])
    assert repr(sentences) == (
        "<tf.RaggedTensor [[b\"Let's\", b'build', b'some', b'ragged', b'tensors', b'!'],\n"
        " [b'We', b'can', b'use', b'tf.ragged.constant', b'.']]>")
    assert repr(tf.ragged.constant([[1.0, 2.0], [3.0]])) == \
        "<tf.RaggedTensor [[1.0, 2.0], [3.0]]>"
