"""tf.keras.preprocessing.text (Tokenizer and helpers) against Keras' results on the same
texts (tests/fixtures/keras_utils_data/tokenizer, generate.py)."""

import json
import os

import numpy as np
import pytest

import ndflow as tf

HERE = os.path.join(os.path.dirname(__file__), "..", "fixtures", "keras_utils_data",
                    "tokenizer")
T = tf.keras.preprocessing.text
TEXTS = ["The cat sat on the mat.", "The dog ate my homework!", "Cat, dog & cat?"]


def _fixture(name):
    with open(os.path.join(HERE, name)) as f:
        return f.read()


def test_results_equal_keras():
    want = json.loads(_fixture("expected.json"))
    tok = T.Tokenizer(num_words=6, oov_token="<unk>")
    tok.fit_on_texts(TEXTS)
    assert tok.word_index == want["word_index"]
    assert list(tok.word_index) == list(json.loads(json.loads(_fixture(
        "keras_tokenizer.json"))["config"]["word_index"]))  # ties ranked as Keras
    assert tok.texts_to_sequences(TEXTS + ["a new cat"]) == want["seqs"]
    assert tok.sequences_to_texts([[1, 2, 3, 9]]) == want["texts"]
    assert T.text_to_word_sequence("Hello, World!  Yes\tno") == want["words"]
    assert T.hashing_trick("the cat the", 10, hash_function="md5") == want["md5"]
    for mode in ("binary", "count", "freq", "tfidf"):
        np.testing.assert_allclose(tok.texts_to_matrix(TEXTS, mode=mode), want[mode],
                                   atol=1e-6)
    plain = T.Tokenizer()
    plain.fit_on_texts(TEXTS)
    assert plain.texts_to_sequences(["cat zebra dog"]) == want["plain_seqs"]
    char = T.Tokenizer(char_level=True)
    char.fit_on_texts(["abca"])
    assert char.word_index == want["char"]


def test_json_both_ways():
    keras_made = T.tokenizer_from_json(_fixture("keras_tokenizer.json"))
    assert keras_made.texts_to_sequences(["the cat"]) == [[2, 3]]
    again = T.tokenizer_from_json(keras_made.to_json())
    assert again.word_index == keras_made.word_index and again.num_words == 6
    assert again.index_word[3] == "cat"


def test_errors():
    with pytest.raises(ValueError, match="Specify a dimension"):
        T.Tokenizer().texts_to_matrix(["a"])
    with pytest.raises(TypeError, match="Unrecognized keyword arguments"):
        T.Tokenizer(vocabulary=3)
    tok = T.Tokenizer(num_words=3)
    with pytest.raises(ValueError, match="Fit the Tokenizer on some data before using tfidf"):
        tok.sequences_to_matrix([[1]], mode="tfidf")
