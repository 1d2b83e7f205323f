"""tf.strings functions with ragged results or inputs (split, bytes_split, unicode_decode,
unicode_encode, ngrams), as TensorFlow 2.21 returns them; checked against Python."""

from __future__ import annotations

import sys

import ndflow as tf

LINES = ["the cat sat", "", "on  the mat "]


def test_split_rows_like_python():
    got = tf.strings.split(LINES)
    assert isinstance(got, tf.RaggedTensor) and got.row_splits.dtype is tf.int64
    assert got.to_list() == [[w.encode() for w in line.split()] for line in LINES]
    assert tf.strings.split(["a,b,,c"], sep=",", maxsplit=1).to_list() == [[b"a", b"b,,c"]]
    nested = tf.strings.split([["a b"], ["c"]])
    assert nested.ragged_rank == 2 and nested.to_list() == [[[b"a", b"b"]], [[b"c"]]]
    of_ragged = tf.strings.split(tf.ragged.constant([["a b", "c"], []]))
    assert of_ragged.to_list() == [[[b"a", b"b"], [b"c"]], []]
    assert tf.strings.split("a b").numpy().tolist() == [b"a", b"b"]  # a scalar: dense


def test_split_then_pad_in_a_function():
    @tf.function
    def tokens(lines):
        return tf.strings.split(lines).to_tensor(default_value="<pad>")

    got = tokens(tf.constant(["a b", "c"]))
    assert got.numpy().tolist() == [[b"a", b"b"], [b"c", b"<pad>"]]


def test_bytes_and_unicode():
    assert tf.strings.bytes_split(["ab", "c"]).to_list() == [[b"a", b"b"], [b"c"]]
    words = ["abc", "\u00e9t\u00e9"]
    codes = tf.strings.unicode_decode(words, "UTF-8")
    assert codes.to_list() == [[ord(c) for c in w] for w in words]
    assert tf.strings.unicode_encode(codes, "UTF-8").numpy().tolist() == \
        [w.encode() for w in words]
    assert tf.strings.unicode_encode([[97, 98], [99, 100]], "UTF-8").numpy().tolist() == \
        [b"ab", b"cd"]


def test_ngrams_of_ragged_rows():
    rows = tf.ragged.constant([["a", "b", "c"], ["d"]])
    assert tf.strings.ngrams(rows, 2).to_list() == [[b"a b", b"b c"], []]
    assert tf.strings.ngrams(tf.strings.split(["x y z"]), 2, separator="_").to_list() == \
        [[b"x_y", b"y_z"]]


def test_print_and_format_ragged_as_tensorflow(capsys):
    rt = tf.ragged.constant([[1, 2], [], [3]])
    got = tf.strings.format("r={} d={}", [rt, tf.constant([1, 2])])
    assert got.numpy() == b"r=[[1, 2], [], [3]] d=[1 2]"
    long_rows = tf.ragged.constant([[1] * 10] * 10)
    assert tf.strings.format("{}", long_rows).numpy().decode() == (
        "[" + ", ".join(["[1, 1, 1, ..., 1, 1, 1]"] * 3 + ["..."] +
                        ["[1, 1, 1, ..., 1, 1, 1]"] * 3) + "]")
    tf.print("x", tf.ragged.constant([["it's"], []]), output_stream=sys.stdout)

    @tf.function
    def show(x):
        tf.print(x, output_stream=sys.stdout)

    show(tf.ragged.constant([[[1, 2], [3]], [[4]]]))
    assert capsys.readouterr().out == "x [['it\\'s'], []]\n[[[1, 2], [3]], [[4]]]\n"
