"""A string-processing program in TensorFlow's style: clean text lines with tf.strings inside
a tf.function, split them into words, build a vocabulary with tf.unique (first-occurrence
order) and word counts, pick out and sum the numbers with regex_full_match + to_number, and
format a report with reduce_join and as_string — checked against the same steps in Python."""

import re

import numpy as np

import ndflow as tf

LINES = ["The quick brown fox.", "the lazy dog!", "Price: 12.50 USD", "Qty: 3 and 4"]


@tf.function
def clean(line):
    line = tf.strings.lower(line)
    line = tf.strings.regex_replace(line, r"[^a-z0-9. ]", "")
    line = tf.strings.regex_replace(line, r"\.$", "")
    return tf.strings.strip(line)


def _python_reference():
    words = []
    for line in LINES:
        text = re.sub(r"[^a-z0-9. ]", "", line.lower())
        words += re.sub(r"\.$", "", text).strip().split()
    vocab = list(dict.fromkeys(words))
    counts = [words.count(w) for w in vocab]
    numbers = [float(w) for w in words if re.fullmatch(r"\d+(\.\d+)?", w)]
    return words, vocab, counts, sum(numbers)


def test_text_pipeline_matches_python():
    words = tf.concat([tf.strings.split(clean(tf.constant(line))) for line in LINES], axis=0)
    vocab, idx, counts = tf.unique_with_counts(words)
    is_number = tf.strings.regex_full_match(words, r"\d+(\.\d+)?")
    total = tf.reduce_sum(tf.strings.to_number(tf.boolean_mask(words, is_number)))
    report = tf.strings.reduce_join(
        tf.strings.join([vocab, tf.strings.as_string(counts)], separator="="), separator=",")

    want_words, want_vocab, want_counts, want_total = _python_reference()
    assert [w.decode() for w in words.numpy()] == want_words
    assert [w.decode() for w in vocab.numpy()] == want_vocab
    assert counts.numpy().tolist() == want_counts
    np.testing.assert_array_equal(vocab.numpy()[idx.numpy()], words.numpy())
    assert float(total) == want_total == 19.5
    assert report.numpy().decode() == ",".join(f"{w}={c}" for w, c in
                                               zip(want_vocab, want_counts))
